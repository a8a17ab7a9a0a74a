//! What the parser produces: statements (labels, instructions, bundles, directives) with their
//! operands as written, and the internal names it gives numeric local labels and `.set`
//! versions. The parser ([`super::parser`]) builds them; layout and assembly read them.

use super::expr::Expr;
use super::lexer::Pos;
use super::object::{CodeContext, SymbolKind};
use crate::csr::CsrDesc;
use crate::registers::RegisterFile;

/// Internal name of the `k`-th definition of numeric local label `n` in a file.
pub fn local_label_name(n: u32, k: u32) -> String {
    format!("{n}\u{2}{k}")
}

/// Internal name of the `k`-th definition (`k` ≥ 1) of a symbol by `.set`/`.equ`/`=`.
///
/// A symbol may be redefined: each definition is a symbol of its own, and a use refers to the
/// definition in force at that point of the file (before the first, to the first, so that
/// forward references to a symbol set once work). The first definition keeps the name.
pub fn set_version_name(name: &str, k: u32) -> String {
    if k == 0 {
        name.to_string()
    } else {
        format!("{name}\u{2}set{k}")
    }
}

/// Whether a symbol name is an internal one (numeric local label), not for the symbol table.
pub fn is_internal_name(name: &str) -> bool {
    name.contains('\u{2}')
}

/// A register operand as written: `$m1`, `$a0:1`, `$a4:7`, `$azeros`, `$m2+=`, `$m4:5+=`,
/// `$a2:BL`, `$m3++`, `$m5@`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegOperand {
    pub file: RegisterFile,
    /// First register of the group.
    pub first: u8,
    /// 1, 2 (pair) or 4 (quad).
    pub width: u8,
    /// What follows an MRF register: nothing, `+=`, `++` or `@`.
    pub mark: RegMark,
    /// `:B`, `:BL` or `:BU` after a single ARF register.
    pub broadcast: Option<Broadcast>,
}

/// The suffix of an MRF register operand that says how the instruction updates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegMark {
    /// No suffix.
    Plain,
    /// `+=`: post-incremented by a stride operand (`*step`, `*pace`).
    PostInc,
    /// `++`: post-incremented by the access size (the `ldd16*` delta pointer).
    Increment,
    /// `@`: read as an address delta and replaced by a loaded one (the `ldd16*` delta).
    Delta,
}

impl RegMark {
    pub fn suffix(self) -> &'static str {
        match self {
            RegMark::Plain => "",
            RegMark::PostInc => "+=",
            RegMark::Increment => "++",
            RegMark::Delta => "@",
        }
    }
}

/// The broadcast suffix of an ARF source (isa.md §3.3, bits \[19:18\] of the ARF binary ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broadcast {
    /// `:B`: the register's word in both f32 lanes.
    Word,
    /// `:BL`: the register's low half in every f16 lane.
    Low,
    /// `:BU`: the register's high half in every f16 lane.
    High,
}

impl Broadcast {
    pub fn suffix(self) -> &'static str {
        match self {
            Broadcast::Word => ":B",
            Broadcast::Low => ":BL",
            Broadcast::High => ":BU",
        }
    }
}

#[derive(Clone, Debug)]
pub enum OperandValue {
    Reg(RegOperand),
    /// `$NAME` naming a CSR of `csr.rs`.
    Csr(&'static CsrDesc),
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Operand {
    pub pos: Pos,
    pub value: OperandValue,
}

/// One instruction as written.
#[derive(Clone, Debug)]
pub struct InstStmt {
    pub mnemonic: String,
    pub pos: Pos,
    pub operands: Vec<Operand>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Directive {
    /// `.section NAME`, `.text`, `.data`.
    Section(String),
    /// `.globl`/`.global`.
    Globl(Vec<(String, Pos)>),
    /// `.type SYM, @function`.
    Type {
        name: String,
        name_pos: Pos,
        kind: SymbolKind,
    },
    /// `.size SYM, expr`.
    Size {
        name: String,
        name_pos: Pos,
        size: Expr,
    },
    /// `.align N` (bytes).
    Align(Expr),
    /// `.byte`/`.short`/`.int`/`.quad` and synonyms: `width` bytes per value.
    Data { width: u8, values: Vec<Expr> },
    /// `.float` (f32 values).
    Float(Vec<f32>),
    /// `.space N[, fill]`, `.zero N`.
    Space { size: Expr, fill: Option<Expr> },
    /// `.equ NAME, expr` / `.set NAME, expr`.
    Equ { name: String, value: Expr },
    /// `.worker` / `.supervisor`.
    Context(CodeContext),
    /// Accepted and ignored (`.extern`).
    Ignored,
    /// `.allow_optimizations`: from here to the end of the file, an `rpt` whose body would
    /// start off an 8-byte boundary gets one `nop` before it, so the body is aligned (the SDK's
    /// assembler must do as much: osmarks/ipu-stack's `gemm_f16_amp.S` runs on a C600 with such
    /// an `rpt` after this directive) \[I\].
    AllowOptimizations,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Label(String),
    Inst(InstStmt),
    /// Two instructions issued together, in the order written.
    Bundle(Vec<InstStmt>),
    Directive(Directive),
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub pos: Pos,
    pub kind: StmtKind,
}

/// The statements of one source file.
#[derive(Clone, Debug)]
pub struct ParsedFile {
    pub name: String,
    pub stmts: Vec<Stmt>,
}
