//! Lexer: turns source text into tokens, handling comments and object-like `#define` substitution.
//!
//! Comments are `//` and `#` to the end of the line and `/* ... */` (which may span lines). A line
//! whose first non-blank character is `#` is a preprocessor line: `#define NAME replacement`
//! defines an object-like macro substituted (whole tokens) on later lines; the directives of the
//! C preprocessor (`#include`, `#if`, ...) are errors; anything else (e.g. the `# 12 "file.S"`
//! line markers `cpp` writes) is a comment.

use super::error::{make, AsmError, Loc};
use std::collections::{HashMap, HashSet};

/// 1-based line and column (in characters) within one file, and the macro or `.rept`
/// expansion the text came from (`ctx`, 0 for text written in the file; see `macros`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
    pub ctx: u32,
}

impl Pos {
    /// A position in text written in the file itself.
    pub fn at(line: u32, col: u32) -> Pos {
        Pos { line, col, ctx: 0 }
    }
}

/// Punctuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    Comma,
    Semi,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Colon,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Shl,
    Shr,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Eq,
    At,
    /// Comparisons and logic of conditions: `==`, `!=` (or `<>`), `<`, `>`, `<=`, `>=`, `&&`, `||`, `!`.
    EqEq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    AndAnd,
    OrOr,
    Bang,
}

impl Punct {
    pub fn text(self) -> &'static str {
        match self {
            Punct::Comma => ",",
            Punct::Semi => ";",
            Punct::LBrace => "{",
            Punct::RBrace => "}",
            Punct::LParen => "(",
            Punct::RParen => ")",
            Punct::Colon => ":",
            Punct::Plus => "+",
            Punct::Minus => "-",
            Punct::Star => "*",
            Punct::Slash => "/",
            Punct::Percent => "%",
            Punct::Shl => "<<",
            Punct::Shr => ">>",
            Punct::Amp => "&",
            Punct::Pipe => "|",
            Punct::Caret => "^",
            Punct::Tilde => "~",
            Punct::Eq => "=",
            Punct::At => "@",
            Punct::EqEq => "==",
            Punct::Ne => "!=",
            Punct::Lt => "<",
            Punct::Gt => ">",
            Punct::Le => "<=",
            Punct::Ge => ">=",
            Punct::AndAnd => "&&",
            Punct::OrOr => "||",
            Punct::Bang => "!",
        }
    }
}

/// A token kind with its value.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Names: mnemonics, directives (with their `.`), symbols, and `.` itself.
    Ident(String),
    /// `$name`, without the `$`: a register, register alias or CSR name.
    Reg(String),
    /// An integer literal (values above `i64::MAX` wrap, as two's complement bits).
    Int(i64),
    /// A decimal floating-point literal (only meaningful to `.float`).
    Float(f64),
    /// A half literal, `1.0h` or `2h`: an integer expression with the f16 bits of the value.
    Half(f64),
    /// `1f` / `1b`: reference to the next / previous numeric local label.
    Local {
        n: u32,
        forward: bool,
    },
    /// A double-quoted string.
    Str(String),
    Punct(Punct),
    /// End of a line (statement separator).
    Newline,
    Eof,
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(name) => format!("`{name}`"),
            Tok::Reg(name) => format!("`${name}`"),
            Tok::Int(value) => format!("`{value}`"),
            Tok::Float(value) => format!("`{value}`"),
            Tok::Half(value) => format!("`{value}h`"),
            Tok::Local { n, forward } => format!("`{n}{}`", if *forward { 'f' } else { 'b' }),
            Tok::Str(text) => format!("string {text:?}"),
            Tok::Punct(p) => format!("`{}`", p.text()),
            Tok::Newline => "end of line".to_string(),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

/// C-preprocessor directives that are rejected (run `cpp` first).
const CPP_DIRECTIVES: &[&str] = &[
    "include",
    "include_next",
    "import",
    "if",
    "ifdef",
    "ifndef",
    "elif",
    "elifdef",
    "elifndef",
    "else",
    "endif",
    "undef",
    "error",
    "warning",
    "pragma",
    "line",
    "ident",
    "sccs",
    "assert",
    "unassert",
];

/// Upper bound on tokens produced by macro expansion in one file (guards against exponential macros).
const MAX_EXPANDED_TOKENS: usize = 1 << 20;

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '.'
}

fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

struct Lexer<'a> {
    file: &'a str,
    chars: Vec<char>,
    i: usize,
    line: u32,
    col: u32,
    /// Only blanks seen since the last newline.
    at_line_start: bool,
    /// Expansion context of every token (see [`Pos::ctx`]).
    ctx: u32,
    tokens: Vec<Token>,
    errors: &'a mut Vec<AsmError>,
    defines: &'a mut Defines,
    expanded: usize,
    expansion_overflow: bool,
}

/// Object-like `#define`s in force: name → replacement tokens.
pub type Defines = HashMap<String, Vec<Tok>>;

/// Lexes one file. Errors are appended to `errors`; the token list always ends with `Eof`.
pub fn lex(file: &str, text: &str, errors: &mut Vec<AsmError>) -> Vec<Token> {
    let mut defines = Defines::new();
    let mut lexer = Lexer::new(file, text, Pos::at(1, 1), errors, &mut defines);
    lexer.at_line_start = true;
    lexer.run();
    let pos = lexer.pos();
    lexer.tokens.push(Token { tok: Tok::Eof, pos });
    lexer.tokens
}

/// Lexes one line (no newline in `text`) that starts at `start`, with the `#define`s in force
/// (a `#define` line adds to them). Returns the tokens without an end-of-line token.
pub fn lex_line(
    file: &str,
    text: &str,
    start: Pos,
    defines: &mut Defines,
    errors: &mut Vec<AsmError>,
) -> Vec<Token> {
    let mut lexer = Lexer::new(file, text, start, errors, defines);
    lexer.at_line_start = true;
    lexer.run();
    lexer.tokens
}

impl<'a> Lexer<'a> {
    fn new(
        file: &'a str,
        text: &str,
        start: Pos,
        errors: &'a mut Vec<AsmError>,
        defines: &'a mut Defines,
    ) -> Lexer<'a> {
        Lexer {
            file,
            chars: text.chars().collect(),
            i: 0,
            line: start.line,
            col: start.col,
            at_line_start: false,
            ctx: start.ctx,
            tokens: Vec::new(),
            errors,
            defines,
            expanded: 0,
            expansion_overflow: false,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
            ctx: self.ctx,
        }
    }

    fn loc(&self, pos: Pos) -> Loc {
        Loc::at(self.file, pos)
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn push(&mut self, tok: Tok, pos: Pos) {
        self.tokens.push(Token { tok, pos });
    }

    fn skip_to_eol(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let pos = self.pos();
            match c {
                '\n' => {
                    self.bump();
                    self.push(Tok::Newline, pos);
                    self.at_line_start = true;
                    continue;
                }
                ' ' | '\t' | '\r' | '\x0b' | '\x0c' => {
                    self.bump();
                    continue;
                }
                '#' => {
                    if self.at_line_start {
                        self.preprocessor_line();
                    } else {
                        self.skip_to_eol();
                    }
                    continue;
                }
                '/' if self.peek(1) == Some('/') => {
                    self.skip_to_eol();
                    continue;
                }
                '/' if self.peek(1) == Some('*') => {
                    self.block_comment();
                    continue;
                }
                _ => {}
            }
            self.at_line_start = false;
            if is_ident_start(c) {
                let name = self.take_while(is_ident_continue);
                self.push_ident(name, pos);
            } else if c.is_ascii_digit() {
                self.number(pos);
            } else if c == '$' {
                self.bump();
                let name = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
                if name.is_empty() {
                    self.errors.push(make::Syntax(
                        self.loc(pos),
                        "`$` must be followed by a register or CSR name",
                    ));
                } else {
                    self.push(Tok::Reg(name), pos);
                }
            } else if c == '"' {
                self.string(pos);
            } else if c == '\\' {
                self.bump();
                let name = self.take_while(|c| c.is_ascii_alphanumeric() || "_.$@()".contains(c));
                self.errors.push(make::Syntax(
                    self.loc(pos),
                    format!("`\\{name}` is not a parameter of the enclosing macro or `.irp` (or is outside any)"),
                ));
            } else {
                self.bump();
                let punct = match c {
                    ',' => Some(Punct::Comma),
                    ';' => Some(Punct::Semi),
                    '{' => Some(Punct::LBrace),
                    '}' => Some(Punct::RBrace),
                    '(' => Some(Punct::LParen),
                    ')' => Some(Punct::RParen),
                    ':' => Some(Punct::Colon),
                    '+' => Some(Punct::Plus),
                    '-' => Some(Punct::Minus),
                    '*' => Some(Punct::Star),
                    '/' => Some(Punct::Slash),
                    '%' => Some(Punct::Percent),
                    '&' if self.peek(0) == Some('&') => {
                        self.bump();
                        Some(Punct::AndAnd)
                    }
                    '|' if self.peek(0) == Some('|') => {
                        self.bump();
                        Some(Punct::OrOr)
                    }
                    '=' if self.peek(0) == Some('=') => {
                        self.bump();
                        Some(Punct::EqEq)
                    }
                    '!' if self.peek(0) == Some('=') => {
                        self.bump();
                        Some(Punct::Ne)
                    }
                    '<' if self.peek(0) == Some('>') => {
                        self.bump();
                        Some(Punct::Ne)
                    }
                    '<' if self.peek(0) == Some('=') => {
                        self.bump();
                        Some(Punct::Le)
                    }
                    '>' if self.peek(0) == Some('=') => {
                        self.bump();
                        Some(Punct::Ge)
                    }
                    '!' => Some(Punct::Bang),
                    '&' => Some(Punct::Amp),
                    '|' => Some(Punct::Pipe),
                    '^' => Some(Punct::Caret),
                    '~' => Some(Punct::Tilde),
                    '=' => Some(Punct::Eq),
                    '@' => Some(Punct::At),
                    '<' if self.peek(0) == Some('<') => {
                        self.bump();
                        Some(Punct::Shl)
                    }
                    '>' if self.peek(0) == Some('>') => {
                        self.bump();
                        Some(Punct::Shr)
                    }
                    '<' => Some(Punct::Lt),
                    '>' => Some(Punct::Gt),
                    _ => None,
                };
                match punct {
                    Some(p) => self.push(Tok::Punct(p), pos),
                    None => self.errors.push(make::Syntax(
                        self.loc(pos),
                        format!("unexpected character {c:?}"),
                    )),
                }
            }
        }
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek(0) {
            if !keep(c) {
                break;
            }
            out.push(c);
            self.bump();
        }
        out
    }

    fn block_comment(&mut self) {
        let pos = self.pos();
        self.bump();
        self.bump();
        let mut saw_newline = false;
        loop {
            match self.peek(0) {
                None => {
                    self.errors.push(make::UnterminatedComment(
                        self.loc(pos),
                        "unterminated comment: `/*` has no matching `*/`",
                    ));
                    return;
                }
                Some('*') if self.peek(1) == Some('/') => {
                    self.bump();
                    self.bump();
                    break;
                }
                Some(c) => {
                    saw_newline |= c == '\n';
                    self.bump();
                }
            }
        }
        // A comment spanning lines still ends the statement it interrupts.
        if saw_newline {
            self.push(Tok::Newline, pos);
            self.at_line_start = false;
        }
    }

    fn string(&mut self, pos: Pos) {
        self.bump();
        let mut text = String::new();
        loop {
            match self.peek(0) {
                None | Some('\n') => {
                    self.errors
                        .push(make::Syntax(self.loc(pos), "unterminated string"));
                    return;
                }
                Some('"') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    match self.bump() {
                        Some('n') => text.push('\n'),
                        Some('t') => text.push('\t'),
                        Some(c) if c != '\n' => text.push(c),
                        _ => {
                            self.errors
                                .push(make::Syntax(self.loc(pos), "unterminated string"));
                            return;
                        }
                    }
                }
                Some(c) => {
                    text.push(c);
                    self.bump();
                }
            }
        }
        self.push(Tok::Str(text), pos);
    }

    fn number(&mut self, pos: Pos) {
        let radix_prefix = |c: Option<char>| c.map(|c| c.to_ascii_lowercase());
        let (radix, skip) = match (self.peek(0), radix_prefix(self.peek(1)), self.peek(2)) {
            (Some('0'), Some('x'), Some(d)) if d.is_ascii_hexdigit() => (16, 2),
            (Some('0'), Some('b'), Some(d)) if d == '0' || d == '1' => (2, 2),
            _ => (10, 0),
        };
        for _ in 0..skip {
            self.bump();
        }
        let digits = self.take_while(|c| c.is_digit(radix));
        if radix == 10 {
            // Decimal float: digits '.' digits [e[+-]digits], or digits e[+-]digits.
            let has_fraction =
                self.peek(0) == Some('.') && self.peek(1).is_some_and(|c| c.is_ascii_digit());
            let has_exponent = |lx: &Self, at: usize| {
                matches!(lx.peek(at), Some('e' | 'E'))
                    && (lx.peek(at + 1).is_some_and(|c| c.is_ascii_digit())
                        || (matches!(lx.peek(at + 1), Some('+' | '-'))
                            && lx.peek(at + 2).is_some_and(|c| c.is_ascii_digit())))
            };
            if has_fraction || has_exponent(self, 0) {
                let mut text = digits;
                if has_fraction {
                    text.push('.');
                    self.bump();
                    text.push_str(&self.take_while(|c| c.is_ascii_digit()));
                }
                if has_exponent(self, 0) {
                    text.push('e');
                    self.bump();
                    if let Some(sign @ ('+' | '-')) = self.peek(0) {
                        text.push(sign);
                        self.bump();
                    }
                    text.push_str(&self.take_while(|c| c.is_ascii_digit()));
                }
                let half = self.half_suffix();
                self.finish_number(pos);
                match text.parse::<f64>() {
                    Ok(value) if half => self.push(Tok::Half(value), pos),
                    Ok(value) => self.push(Tok::Float(value), pos),
                    Err(_) => self
                        .errors
                        .push(make::Syntax(self.loc(pos), format!("bad number `{text}`"))),
                }
                return;
            }
            // Local label references: `1f`, `1b`.
            if let Some(dir @ ('f' | 'b')) = self.peek(0) {
                if !self.peek(1).is_some_and(is_ident_continue) {
                    self.bump();
                    match digits.parse::<u32>() {
                        Ok(n) => self.push(
                            Tok::Local {
                                n,
                                forward: dir == 'f',
                            },
                            pos,
                        ),
                        Err(_) => self.errors.push(make::Syntax(
                            self.loc(pos),
                            format!("local label number `{digits}` is too large"),
                        )),
                    }
                    return;
                }
            }
        }
        if radix == 10 && self.half_suffix() {
            match digits.parse::<f64>() {
                Ok(value) if self.finish_number(pos) => self.push(Tok::Half(value), pos),
                Ok(_) | Err(_) => {}
            }
            return;
        }
        if !self.finish_number(pos) {
            return;
        }
        match u64::from_str_radix(&digits, radix) {
            Ok(value) => self.push(Tok::Int(value as i64), pos),
            Err(_) => self.errors.push(make::Syntax(
                self.loc(pos),
                "integer literal does not fit in 64 bits",
            )),
        }
    }

    /// Takes the `h` of a half literal (`1.0h`) when nothing name-like follows it.
    fn half_suffix(&mut self) -> bool {
        let is_half = self.peek(0) == Some('h') && !self.peek(1).is_some_and(is_ident_continue);
        if is_half {
            self.bump();
        }
        is_half
    }

    /// Rejects letters glued to a number (`12ab`); returns whether the number is clean.
    fn finish_number(&mut self, pos: Pos) -> bool {
        if self.peek(0).is_some_and(is_ident_continue) {
            let junk = self.take_while(is_ident_continue);
            self.errors.push(make::Syntax(
                self.loc(pos),
                format!("bad number: unexpected `{junk}` after the digits"),
            ));
            return false;
        }
        true
    }

    /// Emits an identifier, expanding `#define`d names (never a macro inside its own expansion).
    fn push_ident(&mut self, name: String, pos: Pos) {
        let mut active = HashSet::new();
        self.expand(name, pos, &mut active);
    }

    fn expand(&mut self, name: String, pos: Pos, active: &mut HashSet<String>) {
        if self.expansion_overflow {
            return;
        }
        let replacement = match self.defines.get(&name) {
            Some(replacement) if !active.contains(&name) => replacement.clone(),
            _ => {
                self.push(Tok::Ident(name), pos);
                return;
            }
        };
        self.expanded += replacement.len();
        if self.expanded > MAX_EXPANDED_TOKENS {
            self.expansion_overflow = true;
            self.errors.push(make::Preprocessor(
                self.loc(pos),
                format!("expansion of `{name}` is too large"),
            ));
            return;
        }
        active.insert(name.clone());
        for tok in replacement {
            if let Tok::Ident(inner) = tok {
                self.expand(inner, pos, active);
            } else {
                self.push(tok, pos);
            }
        }
        active.remove(&name);
    }

    /// Handles a line starting with `#` (the cursor is on the `#`).
    fn preprocessor_line(&mut self) {
        let hash = self.pos();
        self.bump();
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.bump();
        }
        let word_pos = self.pos();
        let word = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if word == "define" {
            self.define(hash);
        } else if CPP_DIRECTIVES.contains(&word.as_str()) {
            self.errors.push(make::Preprocessor(
                self.loc(word_pos),
                format!(
                    "preprocessor directive #{word} is not supported: run the C preprocessor first"
                ),
            ));
            self.skip_to_eol();
        } else {
            self.skip_to_eol();
        }
    }

    fn define(&mut self, hash: Pos) {
        while matches!(self.peek(0), Some(' ' | '\t')) {
            self.bump();
        }
        let name_pos = self.pos();
        let name = if self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            self.take_while(|c| c.is_ascii_alphanumeric() || c == '_')
        } else {
            String::new()
        };
        if name.is_empty() {
            self.errors.push(make::Preprocessor(
                self.loc(hash),
                "#define needs a macro name",
            ));
            self.skip_to_eol();
            return;
        }
        if self.peek(0) == Some('(') {
            self.errors.push(make::Preprocessor(
                self.loc(name_pos),
                format!(
                    "function-like macro `{name}` is not supported: run the C preprocessor first"
                ),
            ));
            self.skip_to_eol();
            return;
        }
        // The replacement runs to the end of the line; `\` before a newline continues it.
        let start = self.pos();
        let mut text = String::new();
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                break;
            }
            if c == '\\'
                && (self.peek(1) == Some('\n')
                    || (self.peek(1) == Some('\r') && self.peek(2) == Some('\n')))
            {
                self.bump();
                if self.peek(0) == Some('\r') {
                    self.bump();
                }
                self.bump();
                text.push(' ');
                continue;
            }
            text.push(c);
            self.bump();
        }
        let mut sub_errors = Vec::new();
        let mut sub_defines = Defines::new();
        let mut sub = Lexer::new(self.file, &text, start, &mut sub_errors, &mut sub_defines);
        sub.run();
        let tokens: Vec<Tok> = sub
            .tokens
            .into_iter()
            .map(|t| t.tok)
            .filter(|t| *t != Tok::Newline)
            .collect();
        self.errors.extend(sub_errors);
        self.defines.insert(name, tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        let mut errors = Vec::new();
        let out = lex("t.S", text, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        out.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_and_locals() {
        assert_eq!(
            toks("0x1F 0b101 12 1f 2b 1.5 0b"),
            vec![
                Tok::Int(31),
                Tok::Int(5),
                Tok::Int(12),
                Tok::Local {
                    n: 1,
                    forward: true
                },
                Tok::Local {
                    n: 2,
                    forward: false
                },
                Tok::Float(1.5),
                Tok::Local {
                    n: 0,
                    forward: false
                },
                Tok::Eof
            ]
        );
    }

    #[test]
    fn defines_substitute_whole_tokens() {
        let out = toks("#define SRC $m1\n#define N (4*2)\nld32 SRC, N, SRCX\n");
        assert_eq!(
            out,
            vec![
                Tok::Newline,
                Tok::Newline,
                Tok::Ident("ld32".into()),
                Tok::Reg("m1".into()),
                Tok::Punct(Punct::Comma),
                Tok::Punct(Punct::LParen),
                Tok::Int(4),
                Tok::Punct(Punct::Star),
                Tok::Int(2),
                Tok::Punct(Punct::RParen),
                Tok::Punct(Punct::Comma),
                Tok::Ident("SRCX".into()),
                Tok::Newline,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn self_referential_define_terminates() {
        let out = toks("#define A A B\n#define B A\nA\n");
        assert!(out.contains(&Tok::Ident("A".into())));
    }

    #[test]
    fn rejects_cpp_directives() {
        let mut errors = Vec::new();
        lex("t.S", "  #include \"x.h\"\n# 1 \"t.S\"\n", &mut errors);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].to_string(), "t.S:1:4: error[E-ASM-003]: preprocessor directive #include is not supported: run the C preprocessor first");
    }
}
