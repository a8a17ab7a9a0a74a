//! Macro expansion and conditional assembly with GNU as semantics, between scrubbing and parsing.
//!
//! Lines come from a stack of frames: the file, then each macro invocation and `.rept`/`.irp`/
//! `.irpc` expansion on top of the one it was found in. A line is handled here if it is a
//! conditional (`.if` family, `.else`, `.elseif`, `.endif`), a definition (`.macro`...`.endm`,
//! `.rept`...`.endr`), `.exitm`, `.purgem`, `.error`, `.warning`, or an invocation of a macro
//! (names are case-insensitive); any other line is lexed with the `#define`s in force and its
//! tokens go to the parser. Each expansion gets a context number that the tokens' positions
//! carry ([`Pos::ctx`]), so a message names the line in the body and the invocation
//! ([`Expanded::note`]). `.if` sees the symbols defined by `.set`/`.equ`/`=` and labels in the
//! lines above it. Everything is bounded: nesting depth, lines and bytes produced, line length
//! and `.rept` counts give a typed error, never a hang.

pub mod args;
pub mod cond;
mod define;
mod location;
mod symbols;
#[cfg(test)]
mod tests;

use super::error::{make, AsmError, AsmWarning, Loc};
use super::lexer::{lex_line, Defines, Pos, Tok, Token};
use super::source::{scrub, SrcLine};
use args::{first_word, leading_label, message_text, substitute, Param};
use cond::{Conditions, Test};
use std::collections::HashMap;
use std::rc::Rc;

/// Deepest nesting of macro invocations and repeats.
pub const MAX_DEPTH: usize = 64;
/// Most lines (and repeat passes) the expansions of one file may produce.
pub const MAX_WORK: u64 = 1 << 20;
/// Most bytes of text the expansions of one file may produce.
pub const MAX_BYTES: u64 = 64 << 20;
/// Longest line an expansion may produce, in bytes.
pub const MAX_LINE: usize = 1 << 16;
/// Largest `.rept` count.
pub const MAX_REPT: i64 = 1 << 20;

/// One macro invocation or repeat: what it was and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// "macro `foo` invoked" or "`.rept` at".
    pub what: String,
    /// The invocation (its `ctx` is the enclosing expansion).
    pub at: Pos,
}

/// The tokens of one file after expansion, the expansions their positions refer to, and the
/// warnings of `.warning`.
#[derive(Clone, Debug, Default)]
pub struct Expanded {
    /// Ends with `Eof`.
    pub tokens: Vec<Token>,
    /// Context `n` (in [`Pos::ctx`]) is `expansions[n - 1]`.
    pub expansions: Vec<Expansion>,
    pub warnings: Vec<AsmWarning>,
}

impl Expanded {
    /// ` (in macro `foo` invoked at line 30, in `.rept` at line 4)` for context `ctx`; empty for 0.
    pub fn note(&self, ctx: u32) -> String {
        let mut parts = Vec::new();
        let mut ctx = ctx as usize;
        while ctx != 0 && parts.len() <= MAX_DEPTH {
            let Some(e) = self.expansions.get(ctx - 1) else {
                break;
            };
            parts.push(format!("{} line {}", e.what, e.at.line));
            ctx = e.at.ctx as usize;
        }
        if parts.len() > 6 {
            // A deep recursion: the innermost three and the outermost two.
            let more = parts.len() - 5;
            let tail = parts.split_off(parts.len() - 2);
            parts.truncate(3);
            parts.push(format!("{more} more expansions"));
            parts.extend(tail);
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" (in {})", parts.join(", in "))
        }
    }

    /// Appends the note of its context to the message of every error from this file.
    pub fn annotate(&self, file: &str, errors: &mut [AsmError]) {
        for error in errors.iter_mut() {
            if error.loc().file == file && error.loc().ctx != 0 {
                let note = self.note(error.loc().ctx);
                error.append_to_message(&note);
            }
        }
    }
}

/// Expands one file. Errors are appended to `errors`.
pub fn expand(file: &str, text: &str, errors: &mut Vec<AsmError>) -> Expanded {
    let lines = scrub(file, text, errors);
    let mut expander = Expander {
        file,
        errors,
        out: Expanded::default(),
        defines: Defines::new(),
        macros: HashMap::new(),
        stack: vec![Frame::file(lines)],
        conds: Conditions::default(),
        collecting: None,
        values: HashMap::new(),
        locations: location::Locations::default(),
        macros_run: 0,
        work: 0,
        bytes: 0,
        aborted: false,
    };
    expander.run();
    let end = Pos::at(text.lines().count() as u32 + 1, 1);
    expander.out.tokens.push(Token {
        tok: Tok::Eof,
        pos: end,
    });
    expander.out
}

#[derive(Clone, Debug)]
struct BodyLine {
    line: u32,
    text: String,
}

#[derive(Clone, Debug)]
struct MacroDef {
    name: String,
    params: Vec<Param>,
    body: Rc<Vec<BodyLine>>,
    at: Pos,
}

#[derive(Clone, Debug)]
enum Passes {
    Times(u64),
    Values {
        name: String,
        values: Vec<String>,
        next: usize,
    },
}

#[derive(Clone, Debug)]
struct Frame {
    body: Rc<Vec<BodyLine>>,
    next: usize,
    passes: Passes,
    bindings: Vec<(String, String)>,
    /// `\@` in a macro body.
    number: Option<u64>,
    ctx: u32,
    /// The file itself: no substitution, `#` lines are the preprocessor's.
    is_file: bool,
    is_macro: bool,
    /// Open conditionals when the frame started.
    cond_depth: usize,
}

impl Frame {
    fn file(lines: Vec<SrcLine>) -> Frame {
        let body = lines
            .into_iter()
            .map(|l| BodyLine {
                line: l.line,
                text: l.text,
            })
            .collect();
        Frame {
            body: Rc::new(body),
            next: 0,
            passes: Passes::Times(1),
            bindings: Vec::new(),
            number: None,
            ctx: 0,
            is_file: true,
            is_macro: false,
            cond_depth: 0,
        }
    }
}

/// A line to handle: its text after substitution, where it was written, its context.
struct Line {
    text: String,
    line: u32,
    ctx: u32,
    from_file: bool,
}

impl Line {
    fn pos_at(&self, byte: usize) -> Pos {
        let col = self.text.get(..byte).map_or(1, |t| t.chars().count() + 1);
        Pos {
            line: self.line,
            col: col as u32,
            ctx: self.ctx,
        }
    }
}

enum RepeatKind {
    Rept(u64),
    Irp { name: String, values: Vec<String> },
}

enum Collecting {
    /// `def` is None when the header was bad (the body is still skipped).
    Macro {
        def: Option<MacroDef>,
        depth: u32,
        body: Vec<BodyLine>,
        at: Pos,
    },
    Repeat {
        kind: Option<RepeatKind>,
        word: String,
        depth: u32,
        body: Vec<BodyLine>,
        at: Pos,
    },
}

struct Expander<'a> {
    file: &'a str,
    errors: &'a mut Vec<AsmError>,
    out: Expanded,
    defines: Defines,
    /// By lower-case name.
    macros: HashMap<String, MacroDef>,
    stack: Vec<Frame>,
    conds: Conditions,
    collecting: Option<Collecting>,
    /// Symbols defined so far: their value if it was a constant then.
    values: HashMap<String, Option<i64>>,
    /// Section offsets and label places of the lines emitted so far.
    locations: location::Locations,
    macros_run: u64,
    work: u64,
    bytes: u64,
    aborted: bool,
}

/// Directives that are handled here when they start a line (besides the `.if` family).
const STAGE_DIRECTIVES: &[&str] = &[
    ".macro", ".endm", ".exitm", ".purgem", ".rept", ".irp", ".irpc", ".endr", ".else", ".elseif",
    ".endif", ".error", ".err", ".warning",
];

impl Expander<'_> {
    fn loc(&self, pos: Pos) -> Loc {
        Loc::at(self.file, pos)
    }

    fn run(&mut self) {
        while let Some(line) = self.next_line() {
            self.line(line);
        }
        if self.aborted {
            return;
        }
        match self.collecting.take() {
            Some(Collecting::Macro { def, at, .. }) => {
                let name = def.map_or_else(String::new, |d| format!(" `{}`", d.name));
                self.errors.push(make::MacroDefinition(
                    self.loc(at),
                    format!("`.macro`{name} has no `.endm`"),
                ));
            }
            Some(Collecting::Repeat { word, at, .. }) => self.errors.push(make::MacroDefinition(
                self.loc(at),
                format!("`{word}` has no `.endr`"),
            )),
            None => {}
        }
        for at in self.conds.truncate(0) {
            self.errors.push(make::Conditional(
                self.loc(at),
                "this conditional has no `.endif`",
            ));
        }
    }

    /// Counts one unit of work; past the bound, stops the whole expansion with an error.
    fn charge(&mut self, pos: Pos) -> bool {
        self.work += 1;
        if self.work > MAX_WORK {
            self.errors.push(make::ExpansionLimit(
                self.loc(pos),
                format!("expansion produces more than {MAX_WORK} lines (a `.rept` or a recursive macro without end?)"),
            ));
            self.aborted = true;
            self.stack.clear();
            return false;
        }
        true
    }

    fn next_line(&mut self) -> Option<Line> {
        loop {
            let frame = self.stack.last_mut()?;
            if let Some(body_line) = frame.body.get(frame.next) {
                frame.next += 1;
                let (line, ctx, is_file) = (body_line.line, frame.ctx, frame.is_file);
                let text = if is_file {
                    body_line.text.clone()
                } else {
                    let substituted =
                        substitute(&body_line.text, &frame.bindings, frame.number, MAX_LINE);
                    let pos = Pos { line, col: 1, ctx };
                    if !self.charge(pos) {
                        return None;
                    }
                    match substituted {
                        Some(text) => {
                            self.bytes += text.len() as u64;
                            if self.bytes > MAX_BYTES {
                                self.errors.push(make::ExpansionLimit(
                                    self.loc(pos),
                                    format!(
                                        "expansion produces more than {MAX_BYTES} bytes of text"
                                    ),
                                ));
                                self.aborted = true;
                                self.stack.clear();
                                return None;
                            }
                            text
                        }
                        None => {
                            self.errors.push(make::ExpansionLimit(
                                self.loc(pos),
                                format!("the expanded line is longer than {MAX_LINE} bytes"),
                            ));
                            continue;
                        }
                    }
                };
                return Some(Line {
                    text,
                    line,
                    ctx,
                    from_file: is_file,
                });
            }
            let again = match &mut frame.passes {
                Passes::Times(n) if *n > 1 => {
                    *n -= 1;
                    true
                }
                Passes::Values { name, values, next } if *next + 1 < values.len() => {
                    *next += 1;
                    frame.bindings = vec![(name.clone(), values[*next].clone())];
                    true
                }
                Passes::Times(_) | Passes::Values { .. } => false,
            };
            if again {
                frame.next = 0;
                let ctx = frame.ctx as usize;
                let pos = ctx
                    .checked_sub(1)
                    .and_then(|k| self.out.expansions.get(k))
                    .map_or(Pos::at(1, 1), |e| e.at);
                if !self.charge(pos) {
                    return None;
                }
                continue;
            }
            let frame = self.stack.pop()?;
            if !frame.is_file {
                let what = if frame.is_macro { "macro" } else { "`.rept`" };
                for at in self.conds.truncate(frame.cond_depth) {
                    self.errors.push(make::Conditional(
                        self.loc(at),
                        format!("this conditional has no `.endif` before the end of its {what}"),
                    ));
                }
            }
        }
    }

    fn line(&mut self, line: Line) {
        if line.from_file && line.text.trim_start().starts_with('#') {
            let start = Pos::at(line.line, 1);
            lex_line(self.file, &line.text, start, &mut self.defines, self.errors);
            return;
        }
        if self.collecting.is_some() {
            self.collect(line);
            return;
        }
        let Some((start, end)) = first_word(&line.text) else {
            // A bundle's `{`, a stray character: the parser's business.
            if self.conds.active() && !line.text.trim().is_empty() {
                self.emit(&line);
            }
            return;
        };
        let word = line.text[start..end].to_string();
        if let Some(label_end) = leading_label(&line.text) {
            // `name: .rept ...` or `name: mymacro ...`: the label is a line of its own.
            let rest = &line.text[label_end..];
            if let Some((s, e)) = first_word(rest) {
                let after = &rest[s..e];
                if self.is_stage_word(after) && self.conds.active() {
                    let label = Line {
                        text: line.text[..label_end].to_string(),
                        ..line
                    };
                    let rest_text = " ".repeat(label_end) + rest;
                    self.emit(&label);
                    self.line(Line {
                        text: rest_text,
                        ..label
                    });
                    return;
                }
            }
        }
        let rest = line.text[end..].to_string();
        let pos = line.pos_at(start);
        let rest_pos = line.pos_at(end);
        if let Some(test) = Test::of(&word) {
            self.open(test, &word, &rest, pos, rest_pos);
            return;
        }
        match word.as_str() {
            ".else" => {
                let result = self.conds.otherwise();
                self.misplaced(result, pos);
                return;
            }
            ".elseif" => {
                let value = self.conds.elseif_needs_value()
                    && self
                        .number(&rest, rest_pos, pos, ".elseif")
                        .is_some_and(|v| v != 0);
                let result = self.conds.elseif(value);
                self.misplaced(result, pos);
                return;
            }
            ".endif" => {
                let result = self.conds.end();
                self.misplaced(result, pos);
                return;
            }
            _ => {}
        }
        if !self.conds.active() {
            return;
        }
        match word.as_str() {
            ".macro" => self.start_macro(&rest, pos),
            ".rept" | ".irp" | ".irpc" => self.start_repeat(&word, &rest, pos, rest_pos),
            ".endm" => self.errors.push(make::MacroDefinition(
                self.loc(pos),
                "`.endm` without `.macro`",
            )),
            ".endr" => self.errors.push(make::MacroDefinition(
                self.loc(pos),
                "`.endr` without `.rept`, `.irp` or `.irpc`",
            )),
            ".exitm" => self.exit_macro(pos),
            ".purgem" => {
                let name = rest.trim().to_ascii_lowercase();
                if self.macros.remove(&name).is_none() {
                    self.errors.push(make::MacroDefinition(
                        self.loc(pos),
                        format!("`.purgem`: no macro `{}` is defined", rest.trim()),
                    ));
                }
            }
            ".error" | ".err" => {
                let message = message_text(&rest)
                    .unwrap_or_else(|| format!("`{word}` directive in the source"));
                self.errors.push(make::UserError(self.loc(pos), message));
            }
            ".warning" => {
                let message = message_text(&rest)
                    .unwrap_or_else(|| "`.warning` directive in the source".into());
                self.out.warnings.push(AsmWarning {
                    loc: self.loc(pos),
                    message,
                });
            }
            _ => {
                if let Some(def) = self.macros.get(&word.to_ascii_lowercase()).cloned() {
                    self.invoke(def, &rest, pos);
                } else {
                    self.emit(&line);
                }
            }
        }
    }

    fn is_stage_word(&self, word: &str) -> bool {
        STAGE_DIRECTIVES.contains(&word)
            || Test::of(word).is_some()
            || self.macros.contains_key(&word.to_ascii_lowercase())
    }

    fn misplaced(&mut self, result: Result<(), cond::Misplaced>, pos: Pos) {
        if let Err(message) = result {
            self.errors.push(make::Conditional(self.loc(pos), message));
        }
    }
}
