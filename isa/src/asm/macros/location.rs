//! Where the emitted lines are, as conditions see it: GNU as evaluates `.if (. - LABEL) & 7`
//! (PopLibs' `RPT_ALIGNED_TO`, `ALIGNED_RPT_START`) while it reads, because every instruction
//! here has a fixed size and the difference of two places in one section is known then.
//!
//! Each emitted statement moves its section's offset: 4 bytes an instruction (8 a bundle of
//! two), `.align`, and the data directives with literal sizes. Anything whose size is not known
//! here (`ldconst`, which takes one or two words, a `.space` of a symbol, an unknown directive)
//! makes the rest of that section's offsets unknown, and conditions that need them an error.
//!
//! A condition is evaluated twice, with every section placed at two different made-up bases
//! ([`Placement`]); a value that differs between the two depends on where a section goes (`.`
//! alone, or a label of another section) and is an error, as in GNU as. The difference of two
//! places in one section is the same in both. The bases of the second placement are odd, so
//! even `. & 7` is refused: a section's base is aligned only as much as its `.align`s ask.

use crate::asm::lexer::{Punct, Tok};
use std::collections::HashMap;

/// A place in a section: the section's index and the offset in it.
pub(super) type Place = (usize, u64);

/// Section offsets and label places of the lines emitted so far.
#[derive(Debug)]
pub(super) struct Locations {
    /// Section names, in order of first use.
    names: Vec<String>,
    /// Offset in each section; `None` once something of unknown size went there.
    offsets: Vec<Option<u64>>,
    current: usize,
    labels: HashMap<String, Place>,
    /// The latest definition of each numeric local label (what `Nb` names).
    locals: HashMap<u32, Place>,
}

impl Default for Locations {
    fn default() -> Self {
        Locations {
            names: vec![".text".to_string()],
            offsets: vec![Some(0)],
            current: 0,
            labels: HashMap::new(),
            locals: HashMap::new(),
        }
    }
}

/// One of the two made-up section placements a condition is evaluated with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Placement {
    First,
    Second,
}

impl Placement {
    /// The made-up base of section `section`.
    pub(super) fn base(self, section: usize) -> i64 {
        let k = section as i64 + 1;
        match self {
            Placement::First => k << 40,
            Placement::Second => (k << 40) + 2 * k + 1,
        }
    }
}

impl Locations {
    /// `.` in the current section, if its offset is known.
    pub(super) fn dot(&self) -> Option<Place> {
        self.offsets[self.current].map(|offset| (self.current, offset))
    }

    pub(super) fn label(&self, name: &str) -> Option<Place> {
        self.labels.get(name).copied()
    }

    pub(super) fn local(&self, n: u32) -> Option<Place> {
        self.locals.get(&n).copied()
    }

    /// Takes in one emitted line's tokens (statements separated by `;`).
    pub(super) fn line(&mut self, toks: &[&Tok]) {
        for statement in toks.split(|t| **t == Tok::Punct(Punct::Semi)) {
            self.statement(statement);
        }
    }

    fn statement(&mut self, mut s: &[&Tok]) {
        loop {
            match s {
                [Tok::Ident(name), Tok::Punct(Punct::Colon), rest @ ..] if name != "." => {
                    if let Some(place) = self.dot() {
                        self.labels.insert(name.clone(), place);
                    } else {
                        self.labels.remove(name);
                    }
                    s = rest;
                }
                [Tok::Int(n), Tok::Punct(Punct::Colon), rest @ ..] => {
                    match (u32::try_from(*n), self.dot()) {
                        (Ok(n), Some(place)) => {
                            self.locals.insert(n, place);
                        }
                        (Ok(n), None) => {
                            self.locals.remove(&n);
                        }
                        (Err(_), _) => {}
                    }
                    s = rest;
                }
                [Tok::Punct(Punct::LBrace | Punct::RBrace), rest @ ..] => s = rest,
                _ => break,
            }
        }
        while let [rest @ .., Tok::Punct(Punct::RBrace)] = s {
            s = rest;
        }
        match s {
            [] => {}
            [Tok::Ident(word), rest @ ..] if word.starts_with('.') && word != "." => {
                self.directive(word, rest);
            }
            [Tok::Ident(_), Tok::Punct(Punct::Eq), ..] => {}
            [Tok::Ident(word), ..] if word == "ldconst" => self.unknown(),
            [Tok::Ident(_), ..] => self.advance(4),
            [_, ..] => self.unknown(),
        }
    }

    fn directive(&mut self, word: &str, args: &[&Tok]) {
        let count = || {
            if args.is_empty() {
                0
            } else {
                1 + args
                    .iter()
                    .filter(|t| ***t == Tok::Punct(Punct::Comma))
                    .count() as u64
            }
        };
        let literal = || match args {
            [Tok::Int(n)] => u64::try_from(*n).ok(),
            _ => None,
        };
        match word {
            ".section" => self.switch(section_name(args)),
            ".text" | ".data" => self.switch(word.to_string()),
            ".align" | ".balign" => match literal() {
                Some(n) if n.is_power_of_two() => self.align(n),
                Some(_) | None => self.unknown(),
            },
            ".p2align" => match literal() {
                Some(n) if n < 16 => self.align(1 << n),
                Some(_) | None => self.unknown(),
            },
            ".int" | ".word" | ".long" | ".float" => self.advance(4 * count()),
            ".short" | ".half" | ".hword" => self.advance(2 * count()),
            ".byte" => self.advance(count()),
            ".quad" => self.advance(8 * count()),
            ".space" | ".zero" | ".skip" => match literal() {
                Some(n) => self.advance(n),
                None => self.unknown(),
            },
            ".globl"
            | ".global"
            | ".type"
            | ".size"
            | ".worker"
            | ".supervisor"
            | ".equ"
            | ".set"
            | ".eqv"
            | ".equiv"
            | ".extern"
            | ".allow_optimizations" => {}
            _ => self.unknown(),
        }
    }

    fn switch(&mut self, name: String) {
        self.current = match self.names.iter().position(|n| *n == name) {
            Some(index) => index,
            None => {
                self.names.push(name);
                self.offsets.push(Some(0));
                self.names.len() - 1
            }
        };
    }

    fn advance(&mut self, bytes: u64) {
        let offset = &mut self.offsets[self.current];
        *offset = offset.and_then(|o| o.checked_add(bytes));
    }

    fn align(&mut self, to: u64) {
        let offset = &mut self.offsets[self.current];
        *offset = offset.map(|o| o.next_multiple_of(to));
    }

    fn unknown(&mut self) {
        self.offsets[self.current] = None;
    }
}

/// A `.section` name as the parser reads it: the tokens up to the comma (parentheses keep
/// theirs).
fn section_name(args: &[&Tok]) -> String {
    let mut name = String::new();
    let mut depth = 0usize;
    for tok in args {
        match tok {
            Tok::Punct(Punct::Comma) if depth == 0 => break,
            Tok::Ident(part) | Tok::Str(part) => name.push_str(part),
            Tok::Int(n) => name.push_str(&n.to_string()),
            Tok::Punct(p) => {
                if *p == Punct::LParen {
                    depth += 1;
                } else if *p == Punct::RParen {
                    depth = depth.saturating_sub(1);
                }
                name.push_str(p.text());
            }
            Tok::Reg(_)
            | Tok::Float(_)
            | Tok::Half(_)
            | Tok::Local { .. }
            | Tok::Newline
            | Tok::Eof => break,
        }
    }
    name
}
