//! What conditions see: emitted lines (lexed with the `#define`s), the symbols they define,
//! and the evaluation of `.if` conditions and `.rept` counts.

use super::args::two_strings;
use super::cond::Test;
use super::location::{Locations, Place, Placement};
use super::{Expander, Line};
use crate::asm::error::{make, AsmError, Loc};
use crate::asm::expr::{eval, Env};
use crate::asm::layout::PREDEFINED_SYMBOLS;
use crate::asm::lexer::{lex_line, Pos, Punct, Tok, Token};
use crate::asm::parser::parse_expression;
use std::collections::HashMap;

impl Expander<'_> {
    /// Lexes a line and hands its tokens to the parser.
    pub(super) fn emit(&mut self, line: &Line) {
        let start = Pos {
            line: line.line,
            col: 1,
            ctx: line.ctx,
        };
        let tokens = lex_line(self.file, &line.text, start, &mut self.defines, self.errors);
        self.track(&tokens);
        self.out.tokens.extend(tokens);
        let end = line.pos_at(line.text.len());
        self.out.tokens.push(Token {
            tok: Tok::Newline,
            pos: end,
        });
    }

    /// Records the symbols a line defines, for later conditions.
    pub(super) fn track(&mut self, tokens: &[Token]) {
        let toks: Vec<&Tok> = tokens.iter().map(|t| &t.tok).collect();
        self.locations.line(&toks);
        let (name, value) = match toks.as_slice() {
            [Tok::Ident(directive), Tok::Ident(name), Tok::Punct(Punct::Comma), ..]
                if matches!(directive.as_str(), ".set" | ".equ" | ".equiv" | ".eqv") =>
            {
                (name.clone(), &tokens[3..])
            }
            [Tok::Ident(name), Tok::Punct(Punct::Eq), ..] if name != "." => {
                (name.clone(), &tokens[2..])
            }
            [Tok::Ident(name), Tok::Punct(Punct::Colon), ..] if name != "." => {
                self.values.insert(name.clone(), None);
                return;
            }
            _ => return,
        };
        let value = parse_expression(self.file, value)
            .ok()
            .and_then(|expr| eval(&expr, &self.env(Placement::First)).ok());
        self.values.insert(name, value);
    }

    fn env(&self, placement: Placement) -> StageEnv<'_> {
        StageEnv {
            file: self.file,
            values: &self.values,
            locations: &self.locations,
            placement,
        }
    }

    /// Evaluates the expression of a condition or count; reports errors (and returns None).
    pub(super) fn number(
        &mut self,
        text: &str,
        at: Pos,
        directive: Pos,
        what: &str,
    ) -> Option<i64> {
        let tokens = lex_line(self.file, text, at, &mut self.defines, self.errors);
        if tokens.is_empty() {
            self.errors.push(make::Conditional(
                self.loc(directive),
                format!("`{what}` needs an expression"),
            ));
            return None;
        }
        // Numeric local labels name the places `Locations` keeps (`Nb`: the latest `N:`).
        let tokens: Vec<Token> = tokens
            .into_iter()
            .map(|token| match token.tok {
                Tok::Local { n, forward } => Token {
                    tok: Tok::Ident(local_name(n, forward)),
                    pos: token.pos,
                },
                Tok::Ident(_)
                | Tok::Reg(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Half(_)
                | Tok::Str(_)
                | Tok::Punct(_)
                | Tok::Newline
                | Tok::Eof => token,
            })
            .collect();
        let result = parse_expression(self.file, &tokens).and_then(|e| {
            let first = eval(&e, &self.env(Placement::First))?;
            let second = eval(&e, &self.env(Placement::Second))?;
            if first == second {
                Ok(first)
            } else {
                Err(make::BadExpression(
                    self.loc(at),
                    format!(
                        "`{what}` depends on where a section is placed: it needs `.` and labels \
                         only as differences of places in one section"
                    ),
                ))
            }
        });
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.errors.push(error);
                None
            }
        }
    }

    pub(super) fn open(&mut self, test: Test, word: &str, rest: &str, pos: Pos, rest_pos: Pos) {
        if !self.conds.active() {
            self.conds.open(pos, || false);
            return;
        }
        let value = match test {
            Test::Blank(blank) => rest.trim().is_empty() == blank,
            Test::Same(same) => match two_strings(rest) {
                Ok((a, b)) => (a == b) == same,
                Err(message) => {
                    self.errors.push(make::Conditional(
                        self.loc(pos),
                        format!("`{word}`: {message}"),
                    ));
                    false
                }
            },
            Test::Defined(defined) => {
                let tokens = lex_line(self.file, rest, rest_pos, &mut self.defines, self.errors);
                match tokens.as_slice() {
                    [Token {
                        tok: Tok::Ident(name),
                        ..
                    }] => {
                        let known = self.values.contains_key(name)
                            || PREDEFINED_SYMBOLS.iter().any(|(n, _)| n == name);
                        known == defined
                    }
                    _ => {
                        self.errors.push(make::Conditional(
                            self.loc(pos),
                            format!("`{word}` needs one symbol name"),
                        ));
                        false
                    }
                }
            }
            Test::NonZero
            | Test::Zero
            | Test::Less
            | Test::LessEq
            | Test::Greater
            | Test::GreaterEq => self
                .number(rest, rest_pos, pos, word)
                .is_some_and(|v| test.holds(v)),
        };
        self.conds.open(pos, || value);
    }
}

/// The name a numeric local label reference stands for in a condition.
fn local_name(n: u32, forward: bool) -> String {
    format!("{n}\u{3}{}", if forward { 'f' } else { 'b' })
}

/// Symbols as conditions see them: constants defined above, the predefined ones, and labels
/// and `.` as places in a section (module `location`).
struct StageEnv<'a> {
    file: &'a str,
    values: &'a HashMap<String, Option<i64>>,
    locations: &'a Locations,
    placement: Placement,
}

impl StageEnv<'_> {
    fn place(&self, (section, offset): Place) -> i64 {
        self.placement.base(section) + offset as i64
    }
}

impl Env for StageEnv<'_> {
    fn file(&self) -> &str {
        self.file
    }

    fn symbol(&self, name: &str, loc: Loc) -> Result<i64, AsmError> {
        if let Some((n, direction)) = name.split_once('\u{3}') {
            let place = n
                .parse::<u32>()
                .ok()
                .filter(|_| direction == "b")
                .and_then(|n| self.locations.local(n));
            return match place {
                Some(place) => Ok(self.place(place)),
                None => Err(make::UndefinedSymbol(
                    loc,
                    format!(
                        "local label `{n}{direction}` has no known place here (conditions see only \
                         the `{n}:` above them, in code of known size)"
                    ),
                )),
            };
        }
        if let Some(place) = self.locations.label(name) {
            return Ok(self.place(place));
        }
        match self.values.get(name) {
            Some(Some(value)) => Ok(*value),
            Some(None) => Err(make::BadExpression(
                loc,
                format!("`{name}` is not a constant here (conditions and counts need constants defined above them)"),
            )),
            None => PREDEFINED_SYMBOLS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    make::UndefinedSymbol(
                        loc,
                        format!("undefined symbol `{name}` (conditions and counts see only symbols defined above them)"),
                    )
                }),
        }
    }

    fn dot(&self, loc: Loc) -> Result<i64, AsmError> {
        match self.locations.dot() {
            Some(place) => Ok(self.place(place)),
            None => Err(make::BadExpression(
                loc,
                "`.` has no value here: something of unknown size (`ldconst`, a `.space` of a symbol) precedes it in its section",
            )),
        }
    }
}
