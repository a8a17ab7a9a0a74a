//! Layout: sections, offsets and addresses, the symbol table and the predefined symbols.
//!
//! Pass 1 walks every file's statements, giving each instruction, bundle and datum an offset in
//! its section (sizes never depend on symbol values), and records labels, `.equ`s and the
//! `.globl`/`.type`/`.size`/`.worker`/`.supervisor` facts. Then sections are placed: in order of
//! first appearance, packed from the base, each aligned to its largest `.align` (at least 8 if it
//! holds code), unless a placement pins it. Expressions are evaluated afterwards against the
//! placed layout ([`Layout::eval`]).

use super::error::{make, AsmError, AsmWarning, Loc};
use super::expr::{eval, Env, Expr};
use super::lexer::Pos;
use super::object::{CodeContext, Symbol, SymbolKind};
use super::parser::{is_internal_name, Directive, InstStmt, ParsedFile, StmtKind};
use crate::csr::field;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Start of tile memory: the default base of the first section. [C-ipu1]
pub const DEFAULT_BASE: u32 = 0x4C000;

/// Symbols every program can use without defining them (the SDK header constants PopLibs
/// codelets refer to). A program's own definition of the same name takes precedence.
pub const PREDEFINED_SYMBOLS: &[(&str, i64)] = &[
    ("TEXCH_SYNCZONE_LOCAL", 2),
    ("TEXCH_SYNCZONE_INTERNAL", 3),
    ("TEXCH_SYNCZONE_GLOBAL", 3),
    // AMP flags: phase in bits [1:0], the engine select in bits [3:2] (0b00 E1, 0b01 E2, 0b11
    // E4 = all engines; semantics::amp). [A] project assumption.
    ("TAMP_F16V4_E1_P0", 0),
    ("TAMP_F16V4_E1_P1", 1),
    ("TAMP_F16V4_E1_P2", 2),
    ("TAMP_F16V4_E1_P3", 3),
    ("TAMP_F16V4_E2_P0", 4),
    ("TAMP_F16V4_E2_P1", 5),
    ("TAMP_F16V4_E2_P2", 6),
    ("TAMP_F16V4_E2_P3", 7),
    ("TAMP_F16V4_E4_P0", 12),
    ("TAMP_F16V4_E4_P1", 13),
    ("TAMP_F16V4_E4_P2", 14),
    ("TAMP_F16V4_E4_P3", 15),
    // f32 AMP flags: phase in bits [2:0], the engine select in bits [4:3] (semantics::amp). [A]
    ("TAMP_F32_E1_P0", 0),
    ("TAMP_F32_E1_P1", 1),
    ("TAMP_F32_E1_P2", 2),
    ("TAMP_F32_E1_P3", 3),
    ("TAMP_F32_E1_P4", 4),
    ("TAMP_F32_E1_P5", 5),
    ("TAMP_F32_E1_P6", 6),
    ("TAMP_F32_E1_P7", 7),
    ("TAMP_F32_E2_P0", 8),
    ("TAMP_F32_E2_P1", 9),
    ("TAMP_F32_E2_P2", 10),
    ("TAMP_F32_E2_P3", 11),
    ("TAMP_F32_E2_P4", 12),
    ("TAMP_F32_E2_P5", 13),
    ("TAMP_F32_E2_P6", 14),
    ("TAMP_F32_E2_P7", 15),
    ("TAMP_F32_E4_P0", 0x18),
    ("TAMP_F32_E4_P1", 0x19),
    ("TAMP_F32_E4_P2", 0x1a),
    ("TAMP_F32_E4_P3", 0x1b),
    ("TAMP_F32_E4_P4", 0x1c),
    ("TAMP_F32_E4_P5", 0x1d),
    ("TAMP_F32_E4_P6", 0x1e),
    ("TAMP_F32_E4_P7", 0x1f),
    // SLIC flags: 0b11 = the 1x4 kernel, bit 2 = the $CWEI phase of the weights (semantics::slic). [A]
    ("TSLIC_F16V4_1x4_W0", 3),
    ("TSLIC_F16V4_1x4_W1", 7),
    // The 4x4 transpose through AACC (semantics::stacc). [A]
    ("TISTACC_P0", 0x10),
    ("TISTACC_P1", 0x11),
    ("TSTACC_P0", 0x10),
    ("TSTACC_P1", 0x11),
    (
        "CSR_W_WSR__CTXTID_M1__MASK",
        field::WSR_CTXTID_M1_MASK as i64,
    ),
    (
        "CSR_W_FP_CLR__ZAACC__SHIFT",
        field::FP_CLR_ZAACC.trailing_zeros() as i64,
    ),
    (
        "CSR_W_FP_CTL__NANOO__SHIFT",
        field::FP_CTL_NANOO.trailing_zeros() as i64,
    ),
    ("TMEM_REGION0_BASE_ADDR", DEFAULT_BASE as i64),
    // The FP8 input-format CSR's index ([`crate::csr`]'s `$FP_INFMT`; osmarks/ipu-stack's
    // kernels name it so and put `$FP_ISCL` two past it) and `$FP_ICTL.ESR`, the bit of
    // `$FP_CTL` it passes on. [I]
    ("CSR_S_FP_INFMT__INDEX", 49),
    (
        "CSR_S_FP_ICTL__ESR__SHIFT",
        field::FP_CTL_ESR.trailing_zeros() as i64,
    ),
];

/// Largest section the assembler builds (tile memory is far smaller).
pub const MAX_SECTION_SIZE: u64 = 16 << 20;
/// Largest total of all sections.
pub const MAX_TOTAL_SIZE: u64 = 64 << 20;
/// Largest `.align`.
pub const MAX_ALIGN: i64 = 1 << 16;
/// Alignment of sections that hold code: `rpt` bodies must be 8-byte aligned
/// ([`crate::inst::REPEAT_BODY_ALIGN`]), so a section keeps its code's addresses mod 8.
pub const CODE_ALIGN: u32 = crate::inst::REPEAT_BODY_ALIGN;

/// Where sections go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutOptions {
    /// Address of the first packed section.
    pub base: u32,
    /// Sections pinned at an address: `(section name, address)`.
    pub placements: Vec<(String, u32)>,
}

impl Default for LayoutOptions {
    fn default() -> LayoutOptions {
        LayoutOptions {
            base: DEFAULT_BASE,
            placements: Vec::new(),
        }
    }
}

impl LayoutOptions {
    pub fn at(base: u32) -> LayoutOptions {
        LayoutOptions {
            base,
            placements: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct SectionLayout {
    pub name: String,
    pub size: u64,
    pub align: u32,
    pub has_code: bool,
    pub address: u32,
    /// Where the section first appears (for layout errors).
    pub loc: Loc,
    /// Modes seen in the section (`.worker`/`.supervisor` directives and code marked by them).
    pub contexts: HashSet<CodeContext>,
    size_error_reported: bool,
}

impl SectionLayout {
    pub fn context(&self) -> Option<CodeContext> {
        (self.contexts.len() == 1).then(|| *self.contexts.iter().next().expect("one context"))
    }
}

#[derive(Clone, Debug)]
pub(crate) enum ItemKind<'a> {
    /// One instruction, or the instructions of a bundle as written.
    Code(&'a [InstStmt]),
    /// The pseudo-instruction `ldconst` (`forms::LDCONST`), in `words` words (1 or 2).
    Ldconst {
        stmt: &'a InstStmt,
        words: u32,
    },
    /// Little-endian values of `width` bytes each.
    Data {
        width: u8,
        values: &'a [Expr],
    },
    Bytes(Vec<u8>),
    /// Alignment padding: `zeros` zero bytes, then `nops` nop words.
    Pad {
        zeros: u32,
        nops: u32,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct Item<'a> {
    pub section: usize,
    pub offset: u32,
    pub file: usize,
    pub pos: Pos,
    pub context: Option<CodeContext>,
    pub kind: ItemKind<'a>,
}

#[derive(Clone, Debug)]
enum SymDef<'a> {
    Label {
        section: usize,
        offset: u32,
    },
    Equ {
        value: &'a Expr,
        dot: Option<(usize, u32)>,
    },
}

#[derive(Clone, Debug)]
struct SymEntry<'a> {
    name: String,
    file: usize,
    def: SymDef<'a>,
    loc: Loc,
    global: bool,
    kind: SymbolKind,
    size: Option<u32>,
    context: Option<CodeContext>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SymbolTable<'a> {
    entries: Vec<SymEntry<'a>>,
    local: HashMap<(usize, String), usize>,
    global: HashMap<String, usize>,
}

impl SymbolTable<'_> {
    /// A name as seen from a file: its own symbols, then global ones.
    fn lookup(&self, file: usize, name: &str) -> Option<usize> {
        self.local
            .get(&(file, name.to_string()))
            .or_else(|| self.global.get(name))
            .copied()
    }
}

struct PendingSize<'a> {
    file: usize,
    name: String,
    name_pos: Pos,
    size: &'a Expr,
    dot: Option<(usize, u32)>,
}

/// Everything pass 1 and placement produce.
pub(crate) struct Layout<'a> {
    pub files: Vec<&'a str>,
    pub sections: Vec<SectionLayout>,
    pub items: Vec<Item<'a>>,
    symbols: SymbolTable<'a>,
    sizes: Vec<PendingSize<'a>>,
    /// `.type`/`.size` of names the program does not define (GNU as accepts them).
    pub warnings: Vec<AsmWarning>,
}

/// Expression environment over the layout. Without `placed` sections, labels and `.` are not
/// constants (pass 1); with them, they are addresses.
struct LayoutEnv<'x, 'a> {
    symbols: &'x SymbolTable<'a>,
    sections: Option<&'x [SectionLayout]>,
    files: &'x [&'a str],
    file: usize,
    dot: Option<(usize, u32)>,
    stack: &'x RefCell<Vec<usize>>,
    /// `.equ` values already evaluated in this evaluation: a chain of definitions that each
    /// use the previous one twice is then linear, not exponential, in its length.
    known: &'x RefCell<HashMap<usize, i64>>,
    /// What needs a constant (for the error message in pass 1).
    purpose: &'x str,
    /// In pass 1: every name each file defines, to tell "defined later" from "undefined".
    later: Option<&'x HashSet<(usize, String)>>,
}

impl LayoutEnv<'_, '_> {
    fn address(&self, section: usize, offset: u32) -> Option<i64> {
        self.sections
            .and_then(|s| s.get(section))
            .map(|s| s.address as i64 + offset as i64)
    }
}

impl Env for LayoutEnv<'_, '_> {
    fn file(&self) -> &str {
        self.files.get(self.file).copied().unwrap_or("<input>")
    }

    fn symbol(&self, name: &str, loc: Loc) -> Result<i64, AsmError> {
        let Some(index) = self.symbols.lookup(self.file, name) else {
            if self
                .later
                .is_some_and(|later| later.contains(&(self.file, name.to_string())))
            {
                return Err(make::BadExpression(
                    loc,
                    format!(
                        "{} must be a constant known at this point, but `{name}` is defined later",
                        self.purpose
                    ),
                ));
            }
            return PREDEFINED_SYMBOLS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| *v)
                .ok_or_else(|| make::UndefinedSymbol(loc, format!("undefined symbol `{name}`")));
        };
        let entry = &self.symbols.entries[index];
        match &entry.def {
            SymDef::Label { section, offset } => self.address(*section, *offset).ok_or_else(|| {
                make::BadExpression(
                    loc,
                    format!(
                        "{} must be a constant, but `{name}` is a label",
                        self.purpose
                    ),
                )
            }),
            SymDef::Equ { value, dot } => {
                if let Some(&v) = self.known.borrow().get(&index) {
                    return Ok(v);
                }
                if self.stack.borrow().contains(&index) {
                    return Err(make::BadExpression(
                        loc,
                        format!("`{name}` is defined in terms of itself"),
                    ));
                }
                if self.stack.borrow().len() >= 64 {
                    return Err(make::BadExpression(
                        loc,
                        format!("definition of `{name}` is nested too deeply"),
                    ));
                }
                self.stack.borrow_mut().push(index);
                let inner = LayoutEnv {
                    file: entry.file,
                    dot: *dot,
                    ..*self
                };
                let result = eval(value, &inner);
                self.stack.borrow_mut().pop();
                if let Ok(v) = result {
                    self.known.borrow_mut().insert(index, v);
                }
                result
            }
        }
    }

    fn dot(&self, loc: Loc) -> Result<i64, AsmError> {
        match self.dot {
            None => Err(make::BadExpression(loc, "`.` is used outside any section")),
            Some((section, offset)) => self.address(section, offset).ok_or_else(|| {
                make::BadExpression(
                    loc,
                    format!("{} must be a constant, but uses `.`", self.purpose),
                )
            }),
        }
    }
}

impl<'a> Layout<'a> {
    /// Evaluates an expression of `file` at `dot` (section, offset) against the placed layout.
    pub fn eval(
        &self,
        expr: &Expr,
        file: usize,
        dot: Option<(usize, u32)>,
    ) -> Result<i64, AsmError> {
        let stack = RefCell::new(Vec::new());
        let known = RefCell::new(HashMap::new());
        let env = LayoutEnv {
            symbols: &self.symbols,
            sections: Some(&self.sections),
            files: &self.files,
            file,
            dot,
            stack: &stack,
            known: &known,
            purpose: "the value",
            later: None,
        };
        eval(expr, &env)
    }

    pub fn loc(&self, file: usize, pos: Pos) -> Loc {
        Loc::at(self.files.get(file).copied().unwrap_or("<input>"), pos)
    }

    /// The symbol table of the object (labels only), after evaluating `.size`s.
    pub fn object_symbols(&mut self, errors: &mut Vec<AsmError>) -> BTreeMap<String, Symbol> {
        let sizes = std::mem::take(&mut self.sizes);
        for pending in &sizes {
            let loc = self.loc(pending.file, pending.name_pos);
            let Some(index) = self.symbols.lookup(pending.file, &pending.name) else {
                // GNU as makes such a name an undefined symbol with a size, which nothing
                // refers to: harmless, so a warning here.
                self.warnings.push(AsmWarning {
                    loc,
                    message: format!(
                        "`.size` names `{}`, which the program does not define: ignored",
                        pending.name
                    ),
                });
                continue;
            };
            match self.eval(pending.size, pending.file, pending.dot) {
                Ok(size) => match u32::try_from(size) {
                    Ok(size) => self.symbols.entries[index].size = Some(size),
                    Err(_) => errors.push(make::OutOfRange(
                        loc,
                        format!("size {size} of `{}` is not in 0..=0xffffffff", pending.name),
                    )),
                },
                Err(error) => errors.push(error),
            }
        }
        let mut name_counts: HashMap<&str, usize> = HashMap::new();
        for entry in &self.symbols.entries {
            if matches!(entry.def, SymDef::Label { .. }) {
                *name_counts.entry(entry.name.as_str()).or_default() += 1;
            }
        }
        let mut out = BTreeMap::new();
        for entry in &self.symbols.entries {
            let SymDef::Label { section, offset } = entry.def else {
                continue;
            };
            if is_internal_name(&entry.name) {
                continue;
            }
            let key = if entry.global
                || name_counts.get(entry.name.as_str()).copied().unwrap_or(0) <= 1
            {
                entry.name.clone()
            } else {
                format!(
                    "{}:{}",
                    self.files.get(entry.file).copied().unwrap_or("<input>"),
                    entry.name
                )
            };
            let address = self
                .sections
                .get(section)
                .map(|s| s.address.wrapping_add(offset))
                .unwrap_or(0);
            out.insert(
                key,
                Symbol {
                    address,
                    section,
                    global: entry.global,
                    kind: entry.kind,
                    size: entry.size,
                    context: entry.context,
                },
            );
        }
        out
    }
}

/// Runs pass 1 over all files and places the sections. Errors are appended to `errors`.
pub(crate) fn layout<'a>(
    files: &'a [ParsedFile],
    options: &LayoutOptions,
    errors: &mut Vec<AsmError>,
) -> Layout<'a> {
    let mut builder = Builder {
        layout: Layout {
            files: files.iter().map(|f| f.name.as_str()).collect(),
            sections: Vec::new(),
            items: Vec::new(),
            symbols: SymbolTable::default(),
            sizes: Vec::new(),
            warnings: Vec::new(),
        },
        code_sections: code_sections(files),
        defined_names: defined_names(files),
        total_size: 0,
        total_error_reported: false,
        errors,
        globls: Vec::new(),
        types: Vec::new(),
    };
    for (file, parsed) in files.iter().enumerate() {
        builder.file(file, parsed);
    }
    builder.apply_globals_and_types();
    builder.place(options);
    builder.layout
}

/// Names of the sections that contain at least one instruction.
fn code_sections(files: &[ParsedFile]) -> HashSet<String> {
    let mut out = HashSet::new();
    for parsed in files {
        let mut current = ".text";
        for stmt in &parsed.stmts {
            match &stmt.kind {
                StmtKind::Directive(Directive::Section(name)) => current = name,
                StmtKind::Inst(_) | StmtKind::Bundle(_) => {
                    out.insert(current.to_string());
                }
                StmtKind::Label(_) | StmtKind::Directive(_) => {}
            }
        }
    }
    out
}

/// Every `(file, name)` a label or `.equ`/`.set` defines.
fn defined_names(files: &[ParsedFile]) -> HashSet<(usize, String)> {
    let mut out = HashSet::new();
    for (file, parsed) in files.iter().enumerate() {
        for stmt in &parsed.stmts {
            match &stmt.kind {
                StmtKind::Label(name) | StmtKind::Directive(Directive::Equ { name, .. }) => {
                    out.insert((file, name.clone()));
                }
                StmtKind::Inst(_) | StmtKind::Bundle(_) | StmtKind::Directive(_) => {}
            }
        }
    }
    out
}

mod build;
#[cfg(test)]
mod tests;

use build::Builder;
