//! Definitions and invocations: `.macro` headers and bodies, `.rept`/`.irp`/`.irpc`, binding
//! a macro's arguments to its parameters, `.exitm`.

use super::args::{first_word, parse_params, split_args};
use super::{
    BodyLine, Collecting, Expander, Expansion, Frame, Line, MacroDef, Passes, RepeatKind,
    MAX_DEPTH, MAX_REPT,
};
use crate::asm::error::make;
use crate::asm::lexer::Pos;
use std::rc::Rc;

fn is_repeat_start(word: &str) -> bool {
    matches!(word, ".rept" | ".irp" | ".irpc")
}

impl Expander<'_> {
    pub(super) fn start_macro(&mut self, rest: &str, pos: Pos) {
        let def = match first_word(rest) {
            None => {
                self.errors.push(make::MacroDefinition(
                    self.loc(pos),
                    "`.macro` needs a name",
                ));
                None
            }
            Some((s, e)) => {
                let name = rest[s..e].to_string();
                let params_text = rest[e..].trim_start();
                let params_text = params_text.strip_prefix(',').unwrap_or(params_text);
                match parse_params(params_text) {
                    Ok(params) => Some(MacroDef {
                        name,
                        params,
                        body: Rc::new(Vec::new()),
                        at: pos,
                    }),
                    Err(message) => {
                        self.errors.push(make::MacroDefinition(
                            self.loc(pos),
                            format!("`.macro {name}`: {message}"),
                        ));
                        None
                    }
                }
            }
        };
        self.collecting = Some(Collecting::Macro {
            def,
            depth: 1,
            body: Vec::new(),
            at: pos,
        });
    }

    pub(super) fn start_repeat(&mut self, word: &str, rest: &str, pos: Pos, rest_pos: Pos) {
        let kind = if word == ".rept" {
            match self.number(rest, rest_pos, pos, ".rept") {
                None => None,
                Some(n) if n < 0 => {
                    self.errors.push(make::BadDirective(
                        self.loc(pos),
                        format!("`.rept` count {n} is negative"),
                    ));
                    None
                }
                Some(n) if n > MAX_REPT => {
                    self.errors.push(make::ExpansionLimit(
                        self.loc(pos),
                        format!("`.rept` count {n} is above the limit of {MAX_REPT}"),
                    ));
                    None
                }
                Some(n) => Some(RepeatKind::Rept(n as u64)),
            }
        } else {
            self.irp_values(word, rest, pos)
        };
        self.collecting = Some(Collecting::Repeat {
            kind,
            word: word.to_string(),
            depth: 1,
            body: Vec::new(),
            at: pos,
        });
    }

    pub(super) fn irp_values(&mut self, word: &str, rest: &str, pos: Pos) -> Option<RepeatKind> {
        let Some((s, e)) = first_word(rest) else {
            self.errors.push(make::BadDirective(
                self.loc(pos),
                format!("`{word}` needs a parameter name"),
            ));
            return None;
        };
        let name = rest[s..e].to_string();
        let list = rest[e..].trim_start();
        let list = list.strip_prefix(',').unwrap_or(list);
        let mut values: Vec<String> = if word == ".irpc" {
            let list = list.trim();
            let list = list
                .strip_prefix('"')
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or(list);
            list.chars().map(String::from).collect()
        } else {
            match split_args(list, &|_| false, &|_| false) {
                Ok(args) => args.into_iter().map(|a| a.value).collect(),
                Err(message) => {
                    self.errors.push(make::BadDirective(
                        self.loc(pos),
                        format!("`{word}`: {message}"),
                    ));
                    return None;
                }
            }
        };
        if values.is_empty() {
            values.push(String::new());
        }
        Some(RepeatKind::Irp { name, values })
    }

    pub(super) fn collect(&mut self, line: Line) {
        let word = first_word(&line.text).map_or("", |(s, e)| &line.text[s..e]);
        // The body being collected, whether `word` opens a nested block of its kind, and the
        // word that closes one.
        let (depth, body, opens, end) = match self.collecting.as_mut() {
            Some(Collecting::Macro { depth, body, .. }) => (depth, body, word == ".macro", ".endm"),
            Some(Collecting::Repeat { depth, body, .. }) => {
                (depth, body, is_repeat_start(word), ".endr")
            }
            None => return,
        };
        if opens {
            *depth += 1;
        } else if word == end {
            *depth -= 1;
        }
        if *depth != 0 {
            body.push(BodyLine {
                line: line.line,
                text: line.text,
            });
            return;
        }
        match self.collecting.take() {
            Some(Collecting::Macro {
                def: Some(mut def),
                body,
                ..
            }) => {
                let key = def.name.to_ascii_lowercase();
                if let Some(previous) = self.macros.get(&key) {
                    let message = format!(
                        "macro `{}` is already defined at line {} (`.purgem` it first)",
                        def.name, previous.at.line
                    );
                    self.errors
                        .push(make::MacroDefinition(self.loc(def.at), message));
                } else {
                    def.body = Rc::new(body);
                    self.macros.insert(key, def);
                }
            }
            Some(Collecting::Repeat {
                kind: Some(kind),
                word,
                body,
                at,
                ..
            }) => self.repeat(kind, &word, body, at),
            Some(Collecting::Macro { def: None, .. })
            | Some(Collecting::Repeat { kind: None, .. })
            | None => {}
        }
    }

    /// Pushes a frame, with a new context; false (and an error) past the depth bound.
    pub(super) fn push(&mut self, mut frame: Frame, what: String, at: Pos) -> bool {
        if self.stack.len() > MAX_DEPTH {
            self.errors.push(make::ExpansionLimit(
                self.loc(at),
                format!("expansions nest more than {MAX_DEPTH} deep here (a macro that invokes itself without end?)"),
            ));
            return false;
        }
        self.out.expansions.push(Expansion { what, at });
        frame.ctx = self.out.expansions.len() as u32;
        frame.cond_depth = self.conds.depth();
        self.stack.push(frame);
        true
    }

    pub(super) fn repeat(&mut self, kind: RepeatKind, word: &str, body: Vec<BodyLine>, at: Pos) {
        let (passes, bindings) = match kind {
            RepeatKind::Rept(0) => return,
            RepeatKind::Rept(n) => (Passes::Times(n), Vec::new()),
            RepeatKind::Irp { name, values } => {
                let first = values.first().cloned().unwrap_or_default();
                let bindings = vec![(name.clone(), first)];
                (
                    Passes::Values {
                        name,
                        values,
                        next: 0,
                    },
                    bindings,
                )
            }
        };
        let frame = Frame {
            body: Rc::new(body),
            next: 0,
            passes,
            bindings,
            number: None,
            ctx: 0,
            is_file: false,
            is_macro: false,
            cond_depth: 0,
        };
        self.push(frame, format!("`{word}` at"), at);
    }

    pub(super) fn invoke(&mut self, def: MacroDef, rest: &str, pos: Pos) {
        let bindings = match bind(&def, rest) {
            Ok(bindings) => bindings,
            Err(message) => {
                self.errors.push(make::MacroArgument(
                    self.loc(pos),
                    format!("macro `{}`: {message}", def.name),
                ));
                return;
            }
        };
        let number = self.macros_run;
        self.macros_run += 1;
        let frame = Frame {
            body: def.body.clone(),
            next: 0,
            passes: Passes::Times(1),
            bindings,
            number: Some(number),
            ctx: 0,
            is_file: false,
            is_macro: true,
            cond_depth: 0,
        };
        self.push(frame, format!("macro `{}` invoked at", def.name), pos);
    }

    pub(super) fn exit_macro(&mut self, pos: Pos) {
        let Some(index) = self.stack.iter().rposition(|f| f.is_macro) else {
            self.errors.push(make::MacroDefinition(
                self.loc(pos),
                "`.exitm` outside a macro",
            ));
            return;
        };
        let depth = self.stack[index].cond_depth;
        self.stack.truncate(index);
        self.conds.truncate(depth);
    }
}

/// The parameter values of an invocation, in definition order.
pub(super) fn bind(def: &MacroDef, rest: &str) -> Result<Vec<(String, String)>, String> {
    let params = &def.params;
    let is_param = |name: &str| params.iter().any(|p| p.name == name);
    let vararg_at = |k: usize| params.get(k).is_some_and(|p| p.vararg);
    let args = split_args(rest, &is_param, &vararg_at)?;
    let mut given: Vec<Option<String>> = vec![None; params.len()];
    let mut next = 0;
    for arg in args {
        let index = match &arg.name {
            Some(name) => {
                let index = params.iter().position(|p| &p.name == name).unwrap_or(0);
                if given[index].is_some() {
                    return Err(format!("parameter `{name}` is given twice"));
                }
                index
            }
            None => {
                while next < params.len() && given[next].is_some() {
                    next += 1;
                }
                if next >= params.len() {
                    if arg.value.is_empty() {
                        continue;
                    }
                    return Err(format!(
                        "too many arguments (it takes {}): `{}`",
                        params.len(),
                        arg.value
                    ));
                }
                next
            }
        };
        given[index] = Some(arg.value);
    }
    let mut out = Vec::with_capacity(params.len());
    for (param, value) in params.iter().zip(given) {
        let value = match value.filter(|v| !v.trim().is_empty()) {
            Some(value) => value,
            None => param.default.clone().unwrap_or_default(),
        };
        if param.required && value.trim().is_empty() {
            return Err(format!(
                "missing value for required parameter `{}`",
                param.name
            ));
        }
        out.push((param.name.clone(), value));
    }
    Ok(out)
}
