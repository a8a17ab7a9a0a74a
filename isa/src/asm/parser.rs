//! Parser: turns tokens into statements (labels, instructions, bundles, directives).
//!
//! Operands are parsed by syntax only (register file, width, post-increment, CSR name or
//! expression); choosing the instruction row is the driver's job. Numeric local labels are
//! resolved here: `1:` gets a unique internal name and `1f`/`1b` refer to it.
#![expect(
    clippy::wildcard_enum_match_arm,
    reason = "each construct accepts the tokens it allows and rejects every other with one message"
)]

use super::error::{make, AsmError, Loc};
use super::expr::{BinaryOp, Expr, UnaryOp};
use super::lexer::{Pos, Punct, Tok, Token};
use super::object::{CodeContext, SymbolKind};
use crate::csr::csr_by_name;
use crate::registers::{parse_register, RegisterFile, A_ZEROS_LOW};
use std::collections::HashMap;

/// Deepest nesting of parentheses and unary operators in one expression.
const MAX_EXPR_DEPTH: u32 = 128;
/// Most binary operators in one expression.
const MAX_EXPR_OPERATORS: u32 = 1024;

pub use super::stmt::*;

struct Parser<'a> {
    file: &'a str,
    toks: &'a [Token],
    i: usize,
    errors: &'a mut Vec<AsmError>,
    /// Definitions so far of each numeric local label.
    local_counts: HashMap<u32, u32>,
    expr_ops: u32,
    /// Definitions so far of each symbol by `.set`/`.equ`/`=` (see [`set_version_name`]).
    set_versions: HashMap<String, u32>,
}

type PResult<T> = Result<T, AsmError>;

/// Parses one file's tokens (which must end with `Eof`). Errors are appended to `errors`.
pub fn parse(file: &str, toks: &[Token], errors: &mut Vec<AsmError>) -> ParsedFile {
    let eof = [Token {
        tok: Tok::Eof,
        pos: Pos::at(1, 1),
    }];
    let toks = if toks.last().map(|t| &t.tok) == Some(&Tok::Eof) {
        toks
    } else {
        &eof[..]
    };
    let mut parser = Parser {
        file,
        toks,
        i: 0,
        errors,
        local_counts: HashMap::new(),
        expr_ops: 0,
        set_versions: HashMap::new(),
    };
    let mut stmts = Vec::new();
    loop {
        match parser.peek() {
            Tok::Newline | Tok::Punct(Punct::Semi) => parser.advance(),
            Tok::Eof => break,
            _ => {
                if let Err(error) = parser.statement(&mut stmts) {
                    parser.errors.push(error);
                    parser.recover();
                }
            }
        }
    }
    ParsedFile {
        name: file.to_string(),
        stmts,
    }
}

/// Parses one whole expression (for conditions and counts); `toks` need no `Eof`.
pub fn parse_expression(file: &str, toks: &[Token]) -> Result<Expr, AsmError> {
    let end = toks.last().map_or(Pos::at(1, 1), |t| Pos {
        col: t.pos.col + 1,
        ..t.pos
    });
    let mut all = toks.to_vec();
    all.push(Token {
        tok: Tok::Eof,
        pos: end,
    });
    let mut errors = Vec::new();
    let mut parser = Parser {
        file,
        toks: &all,
        i: 0,
        errors: &mut errors,
        local_counts: HashMap::new(),
        expr_ops: 0,
        set_versions: HashMap::new(),
    };
    let expr = parser.expr()?;
    if *parser.peek() != Tok::Eof {
        return Err(parser.unexpected("the end of the expression"));
    }
    Ok(expr)
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].tok
    }

    fn peek_at(&self, ahead: usize) -> &Tok {
        &self.toks[(self.i + ahead).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        self.toks[self.i.min(self.toks.len() - 1)].pos
    }

    fn advance(&mut self) {
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
    }

    fn loc(&self, pos: Pos) -> Loc {
        Loc::at(self.file, pos)
    }

    fn at_statement_end(&self) -> bool {
        matches!(
            self.peek(),
            Tok::Newline | Tok::Eof | Tok::Punct(Punct::Semi)
        )
    }

    /// Skips the rest of a broken statement.
    fn recover(&mut self) {
        while !self.at_statement_end() {
            self.advance();
        }
    }

    fn unexpected(&self, what: &str) -> AsmError {
        make::Syntax(
            self.loc(self.pos()),
            format!("expected {what}, found {}", self.peek().describe()),
        )
    }

    fn expect_punct(&mut self, punct: Punct, what: &str) -> PResult<()> {
        if *self.peek() == Tok::Punct(punct) {
            self.advance();
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_end(&mut self, after: &str) -> PResult<()> {
        if self.at_statement_end() {
            Ok(())
        } else {
            Err(make::Syntax(
                self.loc(self.pos()),
                format!("unexpected {} after {after}", self.peek().describe()),
            ))
        }
    }

    fn statement(&mut self, stmts: &mut Vec<Stmt>) -> PResult<()> {
        let pos = self.pos();
        let colon_next = *self.peek_at(1) == Tok::Punct(Punct::Colon);
        match self.peek().clone() {
            Tok::Ident(name) if colon_next && name != "." => {
                self.advance();
                self.advance();
                stmts.push(Stmt {
                    pos,
                    kind: StmtKind::Label(name),
                });
                Ok(())
            }
            Tok::Int(n) if colon_next => {
                let n = u32::try_from(n)
                    .map_err(|_| make::Syntax(self.loc(pos), "local label number is too large"))?;
                self.advance();
                self.advance();
                let count = self.local_counts.entry(n).or_insert(0);
                let name = local_label_name(n, *count);
                *count += 1;
                stmts.push(Stmt {
                    pos,
                    kind: StmtKind::Label(name),
                });
                Ok(())
            }
            Tok::Ident(name) if name != "." && *self.peek_at(1) == Tok::Punct(Punct::Eq) => {
                self.advance();
                self.advance();
                let directive = self.set(name)?;
                stmts.push(Stmt {
                    pos,
                    kind: StmtKind::Directive(directive),
                });
                self.expect_end("the value")
            }
            Tok::Punct(Punct::LBrace) => {
                let insts = self.bundle()?;
                match insts.len() {
                    0 => Err(make::BadBundle(self.loc(pos), "empty bundle `{ }`")),
                    1 => {
                        let inst = insts.into_iter().next().expect("one instruction");
                        stmts.push(Stmt {
                            pos,
                            kind: StmtKind::Inst(inst),
                        });
                        self.expect_end("`}`")
                    }
                    _ => {
                        stmts.push(Stmt {
                            pos,
                            kind: StmtKind::Bundle(insts),
                        });
                        self.expect_end("`}`")
                    }
                }
            }
            Tok::Ident(name) if name.starts_with('.') && name != "." => {
                self.advance();
                let directive = self.directive(&name, pos)?;
                stmts.push(Stmt {
                    pos,
                    kind: StmtKind::Directive(directive),
                });
                self.expect_end(&format!("`{name}` arguments"))
            }
            Tok::Ident(_) => {
                let inst = self.instruction()?;
                stmts.push(Stmt {
                    pos,
                    kind: StmtKind::Inst(inst),
                });
                self.expect_end("the operands")
            }
            _ => Err(self.unexpected("a label, directive or instruction")),
        }
    }

    /// `{ inst ; inst }`, possibly over several lines; returns the instructions in written order.
    fn bundle(&mut self) -> PResult<Vec<InstStmt>> {
        let open = self.pos();
        self.advance();
        let mut insts = Vec::new();
        let mut too_many_reported = false;
        loop {
            match self.peek().clone() {
                Tok::Newline | Tok::Punct(Punct::Semi) => self.advance(),
                Tok::Punct(Punct::RBrace) => {
                    self.advance();
                    return Ok(insts);
                }
                Tok::Eof => {
                    return Err(make::Syntax(
                        self.loc(open),
                        "unterminated bundle: `{` has no matching `}`",
                    ))
                }
                Tok::Ident(name)
                    if !name.starts_with('.') && *self.peek_at(1) != Tok::Punct(Punct::Colon) =>
                {
                    let pos = self.pos();
                    let parsed = self.instruction().and_then(|inst| {
                        if matches!(
                            self.peek(),
                            Tok::Newline | Tok::Punct(Punct::Semi | Punct::RBrace)
                        ) {
                            Ok(inst)
                        } else {
                            Err(make::Syntax(
                                self.loc(self.pos()),
                                format!("unexpected {} after the operands", self.peek().describe()),
                            ))
                        }
                    });
                    match parsed {
                        Ok(inst) if insts.len() < 2 => insts.push(inst),
                        Ok(_) => {
                            if !too_many_reported {
                                self.errors.push(make::BadBundle(
                                    self.loc(pos),
                                    "a bundle holds at most two instructions (one main, one aux)",
                                ));
                                too_many_reported = true;
                            }
                        }
                        Err(error) => {
                            self.errors.push(error);
                            self.skip_in_bundle();
                        }
                    }
                }
                _ => {
                    self.errors.push(make::Syntax(
                        self.loc(self.pos()),
                        format!(
                            "only instructions may appear inside `{{ }}`, found {}",
                            self.peek().describe()
                        ),
                    ));
                    self.advance();
                    self.skip_in_bundle();
                }
            }
        }
    }

    fn skip_in_bundle(&mut self) {
        while !matches!(
            self.peek(),
            Tok::Newline | Tok::Eof | Tok::Punct(Punct::Semi | Punct::RBrace)
        ) {
            self.advance();
        }
    }

    fn instruction(&mut self) -> PResult<InstStmt> {
        let pos = self.pos();
        let mnemonic = match self.peek() {
            Tok::Ident(name) => name.clone(),
            _ => return Err(self.unexpected("an instruction")),
        };
        self.advance();
        let mut operands = Vec::new();
        if !matches!(
            self.peek(),
            Tok::Newline | Tok::Eof | Tok::Punct(Punct::Semi | Punct::RBrace)
        ) {
            loop {
                operands.push(self.operand()?);
                if *self.peek() == Tok::Punct(Punct::Comma) {
                    self.advance();
                } else {
                    break;
                }
            }
        }
        Ok(InstStmt {
            mnemonic,
            pos,
            operands,
        })
    }

    fn operand(&mut self) -> PResult<Operand> {
        let pos = self.pos();
        let value = match self.peek().clone() {
            Tok::Reg(name) => {
                self.advance();
                self.register(&name, pos)?
            }
            _ => OperandValue::Expr(self.expr()?),
        };
        Ok(Operand { pos, value })
    }

    fn register(&mut self, name: &str, pos: Pos) -> PResult<OperandValue> {
        let bad = |message: String| make::BadRegister(Loc::at(self.file, pos), message);
        let (file, first, mut width) = if name == "azeros" {
            (RegisterFile::A, A_ZEROS_LOW, 2)
        } else if let Some((file, index)) = parse_register(name) {
            (file, index, 1)
        } else if let Some(csr) = csr_by_name(&format!("${name}")) {
            return Ok(OperandValue::Csr(csr));
        } else {
            return Err(bad(format!("unknown register or CSR `${name}`")));
        };
        let mut broadcast = None;
        if width == 1 && *self.peek() == Tok::Punct(Punct::Colon) {
            if let Tok::Ident(mode) = self.peek_at(1) {
                let kind = match mode.as_str() {
                    "B" => Some(Broadcast::Word),
                    "BL" => Some(Broadcast::Low),
                    "BU" => Some(Broadcast::High),
                    _ => None,
                };
                if let Some(kind) = kind {
                    if file == RegisterFile::M {
                        return Err(bad(format!(
                            "`${name}:{mode}`: only ARF registers can be broadcast"
                        )));
                    }
                    self.advance();
                    self.advance();
                    broadcast = Some(kind);
                }
            }
            if let Tok::Int(last) = *self.peek_at(1) {
                self.advance();
                self.advance();
                let written = format!("${name}:{last}");
                let prefix = file.prefix();
                if last == first as i64 + 1 {
                    if first % 2 != 0 {
                        return Err(bad(format!(
                            "{written} is not an aligned pair (pairs start at an even register)"
                        )));
                    }
                    width = 2;
                } else if last == first as i64 + 3 {
                    if file == RegisterFile::M {
                        return Err(bad(format!("{written}: the MRF has no register quads")));
                    }
                    if first % 4 != 0 {
                        return Err(bad(format!(
                            "{written} is not an aligned quad (quads start at a multiple of 4)"
                        )));
                    }
                    width = 4;
                } else if file == RegisterFile::M {
                    return Err(bad(format!("{written} is not a register pair ($mN:N+1)")));
                } else {
                    return Err(bad(format!(
                        "{written} is not a register pair (${prefix}N:N+1) or quad (${prefix}N:N+3)"
                    )));
                }
            }
        }
        let mark = match (self.peek(), self.peek_at(1)) {
            (Tok::Punct(Punct::Plus), Tok::Punct(Punct::Eq)) => Some((RegMark::PostInc, 2)),
            (Tok::Punct(Punct::Plus), Tok::Punct(Punct::Plus)) => Some((RegMark::Increment, 2)),
            (Tok::Punct(Punct::At), _) => Some((RegMark::Delta, 1)),
            _ => None,
        };
        let mark = match mark {
            Some((mark, tokens)) => {
                for _ in 0..tokens {
                    self.advance();
                }
                if file == RegisterFile::A {
                    return Err(bad(format!(
                        "`${name}{}`: only MRF registers can be post-incremented or loaded as a delta",
                        mark.suffix()
                    )));
                }
                if mark != RegMark::PostInc && width != 1 {
                    return Err(bad(format!(
                        "`{}` after `${name}`: it applies to a single MRF register, not a pair",
                        mark.suffix()
                    )));
                }
                mark
            }
            None => RegMark::Plain,
        };
        Ok(OperandValue::Reg(RegOperand {
            file,
            first,
            width,
            mark,
            broadcast,
        }))
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Pos)> {
        match self.peek().clone() {
            Tok::Ident(name) if name != "." => {
                let pos = self.pos();
                self.advance();
                Ok((name, pos))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn expr_list(&mut self) -> PResult<Vec<Expr>> {
        let mut values = Vec::new();
        if self.at_statement_end() {
            return Ok(values);
        }
        loop {
            values.push(self.expr()?);
            if *self.peek() == Tok::Punct(Punct::Comma) {
                self.advance();
            } else {
                return Ok(values);
            }
        }
    }

    fn directive(&mut self, name: &str, pos: Pos) -> PResult<Directive> {
        let bad = |message: String| make::BadDirective(Loc::at(self.file, pos), message);
        Ok(match name {
            ".section" => {
                let mut section = match self.peek().clone() {
                    Tok::Ident(section) if section != "." => section,
                    Tok::Str(section) if !section.is_empty() => section,
                    _ => return Err(self.unexpected("a section name after `.section`")),
                };
                self.advance();
                // As GNU as, an unquoted name runs to the comma before the flags (or the end of
                // the statement): `.section .text.foo(bar)` and a stray `)` belong to the name.
                // Inside parentheses a comma belongs to the name too.
                let mut depth = 0usize;
                loop {
                    match self.peek().clone() {
                        Tok::Newline | Tok::Eof | Tok::Punct(Punct::Semi | Punct::RBrace) => break,
                        Tok::Punct(Punct::Comma) if depth == 0 => break,
                        Tok::Ident(part) => section.push_str(&part),
                        Tok::Int(n) => section.push_str(&n.to_string()),
                        Tok::Punct(p) => {
                            if p == Punct::LParen {
                                depth += 1;
                            } else if p == Punct::RParen {
                                depth = depth.saturating_sub(1);
                            }
                            section.push_str(p.text());
                        }
                        _ => return Err(self.unexpected("the rest of the section name or `,`")),
                    }
                    self.advance();
                }
                // Flags, type and entry size (`, "ax", @progbits`) are accepted and ignored.
                if *self.peek() == Tok::Punct(Punct::Comma) {
                    self.recover();
                }
                Directive::Section(section)
            }
            ".text" => Directive::Section(".text".to_string()),
            ".data" => Directive::Section(".data".to_string()),
            ".globl" | ".global" => {
                let mut names = vec![self.ident("a symbol name")?];
                while *self.peek() == Tok::Punct(Punct::Comma) {
                    self.advance();
                    // `.globl SYM, @function`, as PopLibs writes it for ipu21 and Graphcore's
                    // assembler takes: a symbol type in the list says nothing more than the
                    // `.type` directive beside it, so it is checked and ignored.
                    if matches!(self.peek(), Tok::Punct(Punct::At | Punct::Percent)) {
                        self.advance();
                        let (kind, _) = self.ident("`function`, `object` or `notype`")?;
                        if !matches!(kind.as_str(), "function" | "object" | "notype") {
                            return Err(bad(format!(
                                "`@{kind}` in `.globl`: expected `@function`, `@object` or `@notype`"
                            )));
                        }
                        continue;
                    }
                    names.push(self.ident("a symbol name")?);
                }
                Directive::Globl(names)
            }
            ".type" => {
                let (symbol, name_pos) = self.ident("a symbol name after `.type`")?;
                if *self.peek() == Tok::Punct(Punct::Comma) {
                    self.advance();
                }
                let kind_name = match self.peek().clone() {
                    Tok::Punct(Punct::At | Punct::Percent) => {
                        self.advance();
                        self.ident("`function` or `object`")?.0
                    }
                    Tok::Str(text) => {
                        self.advance();
                        text
                    }
                    _ => return Err(self.unexpected("`@function` or `@object`")),
                };
                let kind = match kind_name.as_str() {
                    "function" => SymbolKind::Function,
                    "object" => SymbolKind::Object,
                    "notype" => SymbolKind::NoType,
                    other => {
                        return Err(bad(format!(
                            "unknown symbol type `{other}` (use @function, @object or @notype)"
                        )))
                    }
                };
                Directive::Type {
                    name: symbol,
                    name_pos,
                    kind,
                }
            }
            ".size" => {
                let (symbol, name_pos) = self.ident("a symbol name after `.size`")?;
                self.expect_punct(Punct::Comma, "`,` after the symbol")?;
                Directive::Size {
                    name: symbol,
                    name_pos,
                    size: self.expr()?,
                }
            }
            ".align" | ".balign" => Directive::Align(self.expr()?),
            // GNU's power-of-two form (as osmarks/ipu-stack's kernels write it): 2^N bytes.
            ".p2align" => {
                let power = self.expr()?;
                let pos = power.pos();
                Directive::Align(Expr::Binary {
                    op: BinaryOp::Shl,
                    left: Box::new(Expr::Num(1, pos)),
                    right: Box::new(power),
                    pos,
                })
            }
            ".int" | ".word" | ".long" => Directive::Data {
                width: 4,
                values: self.expr_list()?,
            },
            ".short" | ".half" | ".hword" => Directive::Data {
                width: 2,
                values: self.expr_list()?,
            },
            ".byte" => Directive::Data {
                width: 1,
                values: self.expr_list()?,
            },
            ".quad" => Directive::Data {
                width: 8,
                values: self.expr_list()?,
            },
            ".float" => {
                let mut values = Vec::new();
                if !self.at_statement_end() {
                    loop {
                        values.push(self.float()?);
                        if *self.peek() == Tok::Punct(Punct::Comma) {
                            self.advance();
                        } else {
                            break;
                        }
                    }
                }
                Directive::Float(values)
            }
            ".space" => {
                let size = self.expr()?;
                let fill = if *self.peek() == Tok::Punct(Punct::Comma) {
                    self.advance();
                    Some(self.expr()?)
                } else {
                    None
                };
                Directive::Space { size, fill }
            }
            ".zero" => Directive::Space {
                size: self.expr()?,
                fill: None,
            },
            ".equ" | ".set" | ".eqv" => {
                let (symbol, _) = self.ident("a symbol name")?;
                self.expect_punct(Punct::Comma, "`,` after the symbol")?;
                self.set(symbol)?
            }
            ".equiv" => {
                // Never redefined: a second definition of the name is a duplicate symbol.
                let (symbol, _) = self.ident("a symbol name")?;
                self.expect_punct(Punct::Comma, "`,` after the symbol")?;
                let value = self.expr()?;
                let name = match self.set_versions.get(&symbol) {
                    Some(&k) => set_version_name(&symbol, k.saturating_sub(1)),
                    None => symbol,
                };
                Directive::Equ { name, value }
            }
            ".extern" => {
                // Names defined (as `.globl`) in another file; a use of one that is not is an
                // undefined symbol, so there is nothing to record.
                self.ident("a symbol name")?;
                while *self.peek() == Tok::Punct(Punct::Comma) {
                    self.advance();
                    self.ident("a symbol name")?;
                }
                Directive::Ignored
            }
            ".worker" => Directive::Context(CodeContext::Worker),
            ".supervisor" => Directive::Context(CodeContext::Supervisor),
            ".allow_optimizations" => Directive::AllowOptimizations,
            _ => {
                return Err(make::UnknownDirective(
                    self.loc(pos),
                    format!("unknown directive `{name}`"),
                ))
            }
        })
    }

    /// The value of `.set NAME, value` (or `.equ`, `NAME = value`): a new definition of NAME.
    fn set(&mut self, symbol: String) -> PResult<Directive> {
        let value = self.expr()?;
        let count = self.set_versions.entry(symbol.clone()).or_insert(0);
        let name = set_version_name(&symbol, *count);
        *count = count.saturating_add(1);
        Ok(Directive::Equ { name, value })
    }

    fn float(&mut self) -> PResult<f32> {
        let mut negative = false;
        while let Tok::Punct(sign @ (Punct::Minus | Punct::Plus)) = *self.peek() {
            negative ^= sign == Punct::Minus;
            self.advance();
        }
        let magnitude = match self.peek().clone() {
            Tok::Float(value) => value as f32,
            Tok::Int(value) => value as f32,
            Tok::Ident(name)
                if name.eq_ignore_ascii_case("inf") || name.eq_ignore_ascii_case("infinity") =>
            {
                f32::INFINITY
            }
            Tok::Ident(name) if name.eq_ignore_ascii_case("nan") => f32::NAN,
            _ => return Err(self.unexpected("a floating-point number")),
        };
        self.advance();
        Ok(if negative { -magnitude } else { magnitude })
    }

    /// A half literal (`1.0h`, `-0.5h`) as the 16 bits of the f16 nearest to `value` (RNE).
    fn half(&self, value: f64, pos: Pos) -> PResult<Expr> {
        let bits = half::f16::from_f64(value);
        if bits.is_infinite() {
            return Err(make::OutOfRange(
                self.loc(pos),
                format!("half literal {value} is beyond the largest half (65504)"),
            ));
        }
        Ok(Expr::Num(i64::from(bits.to_bits()), pos))
    }

    /// Parses an expression (C precedence).
    pub fn expr(&mut self) -> PResult<Expr> {
        self.expr_ops = 0;
        self.binary(1, 0)
    }

    fn binary_op(&self) -> Option<BinaryOp> {
        Some(match self.peek() {
            Tok::Punct(Punct::Star) => BinaryOp::Mul,
            Tok::Punct(Punct::Slash) => BinaryOp::Div,
            Tok::Punct(Punct::Percent) => BinaryOp::Rem,
            Tok::Punct(Punct::Plus) => BinaryOp::Add,
            Tok::Punct(Punct::Minus) => BinaryOp::Sub,
            Tok::Punct(Punct::Shl) => BinaryOp::Shl,
            Tok::Punct(Punct::Shr) => BinaryOp::Shr,
            Tok::Punct(Punct::Amp) => BinaryOp::And,
            Tok::Punct(Punct::Caret) => BinaryOp::Xor,
            Tok::Punct(Punct::Pipe) => BinaryOp::Or,
            Tok::Punct(Punct::EqEq) => BinaryOp::Eq,
            Tok::Punct(Punct::Ne) => BinaryOp::Ne,
            Tok::Punct(Punct::Lt) => BinaryOp::Lt,
            Tok::Punct(Punct::Gt) => BinaryOp::Gt,
            Tok::Punct(Punct::Le) => BinaryOp::Le,
            Tok::Punct(Punct::Ge) => BinaryOp::Ge,
            Tok::Punct(Punct::AndAnd) => BinaryOp::LogicalAnd,
            Tok::Punct(Punct::OrOr) => BinaryOp::LogicalOr,
            _ => return None,
        })
    }

    fn binary(&mut self, min_precedence: u8, depth: u32) -> PResult<Expr> {
        let mut left = self.unary(depth)?;
        while let Some(op) = self.binary_op() {
            if op.precedence() < min_precedence {
                break;
            }
            self.expr_ops += 1;
            if self.expr_ops > MAX_EXPR_OPERATORS {
                return Err(make::BadExpression(
                    self.loc(self.pos()),
                    "expression is too long",
                ));
            }
            let pos = self.pos();
            self.advance();
            let right = self.binary(op.precedence() + 1, depth + 1)?;
            left = Expr::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
                pos,
            };
        }
        Ok(left)
    }

    fn unary(&mut self, depth: u32) -> PResult<Expr> {
        if depth > MAX_EXPR_DEPTH {
            return Err(make::BadExpression(
                self.loc(self.pos()),
                "expression is nested too deeply",
            ));
        }
        let pos = self.pos();
        let op = match self.peek() {
            Tok::Punct(Punct::Minus) => Some(UnaryOp::Neg),
            Tok::Punct(Punct::Tilde) => Some(UnaryOp::Not),
            Tok::Punct(Punct::Plus) => Some(UnaryOp::Plus),
            Tok::Punct(Punct::Bang) => Some(UnaryOp::LogicalNot),
            _ => None,
        };
        if let Some(op) = op {
            self.advance();
            if let (UnaryOp::Neg, Tok::Half(value)) = (op, self.peek().clone()) {
                // `-1.0h` is the half -1.0, not the negated bits of 1.0h.
                let expr = self.half(-value, pos)?;
                self.advance();
                return Ok(expr);
            }
            let operand = self.unary(depth + 1)?;
            return Ok(Expr::Unary {
                op,
                operand: Box::new(operand),
                pos,
            });
        }
        self.primary(depth)
    }

    fn primary(&mut self, depth: u32) -> PResult<Expr> {
        let pos = self.pos();
        let expr = match self.peek().clone() {
            Tok::Int(value) => Expr::Num(value, pos),
            Tok::Ident(name) if name == "." => Expr::Dot(pos),
            Tok::Ident(name) => {
                let name = match self.set_versions.get(&name) {
                    Some(&k) if k >= 2 => set_version_name(&name, k - 1),
                    Some(_) | None => name,
                };
                Expr::Sym { name, pos }
            }
            Tok::Local { n, forward } => {
                let count = self.local_counts.get(&n).copied().unwrap_or(0);
                let name = if forward {
                    local_label_name(n, count)
                } else if count == 0 {
                    return Err(make::UndefinedSymbol(
                        self.loc(pos),
                        format!("local label `{n}b` has no preceding `{n}:`"),
                    ));
                } else {
                    local_label_name(n, count - 1)
                };
                Expr::Local {
                    n,
                    forward,
                    name,
                    pos,
                }
            }
            Tok::Punct(Punct::LParen) => {
                self.advance();
                let inner = self.binary(1, depth + 1)?;
                self.expect_punct(Punct::RParen, "`)`")?;
                return Ok(inner);
            }
            Tok::Half(value) => self.half(value, pos)?,
            Tok::Float(_) => {
                return Err(make::Syntax(
                    self.loc(pos),
                    "floating-point numbers are only allowed in `.float`",
                ))
            }
            _ => return Err(self.unexpected("an expression")),
        };
        self.advance();
        Ok(expr)
    }
}
