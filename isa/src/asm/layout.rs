//! Layout: sections, offsets and addresses, the symbol table and the predefined symbols.
//!
//! Pass 1 walks every file's statements, giving each instruction, bundle and datum an offset in
//! its section (sizes never depend on symbol values), and records labels, `.equ`s and the
//! `.globl`/`.type`/`.size`/`.worker`/`.supervisor` facts. Then sections are placed: in order of
//! first appearance, packed from the base, each aligned to its largest `.align` (at least 8 if it
//! holds code), unless a placement pins it. Expressions are evaluated afterwards against the
//! placed layout ([`Layout::eval`]).

use super::error::{make, AsmError, Loc};
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
    // AMP flags: phase in bits [1:0], 0b11 in bits [3:2] = all engines. [A] project assumption.
    ("TAMP_F16V4_E4_P0", 12),
    ("TAMP_F16V4_E4_P1", 13),
    ("TAMP_F16V4_E4_P2", 14),
    ("TAMP_F16V4_E4_P3", 15),
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
                errors.push(make::BadDirective(
                    loc,
                    format!("`.size` names undefined symbol `{}`", pending.name),
                ));
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

struct Builder<'a, 'e> {
    layout: Layout<'a>,
    code_sections: HashSet<String>,
    defined_names: HashSet<(usize, String)>,
    total_size: u64,
    total_error_reported: bool,
    errors: &'e mut Vec<AsmError>,
    globls: Vec<(usize, String, Pos)>,
    types: Vec<(usize, String, Pos, SymbolKind)>,
}

fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

impl<'a> Builder<'a, '_> {
    fn loc(&self, file: usize, pos: Pos) -> Loc {
        self.layout.loc(file, pos)
    }

    fn section_index(&mut self, name: &str, loc: Loc) -> usize {
        if let Some(index) = self.layout.sections.iter().position(|s| s.name == name) {
            return index;
        }
        let has_code = self.code_sections.contains(name);
        self.layout.sections.push(SectionLayout {
            name: name.to_string(),
            size: 0,
            align: if has_code { CODE_ALIGN } else { 1 },
            has_code,
            address: 0,
            loc,
            contexts: HashSet::new(),
            size_error_reported: false,
        });
        self.layout.sections.len() - 1
    }

    /// Grows a section; returns the offset of the new bytes, or None if the section is too large.
    fn reserve(&mut self, section: usize, bytes: u64, loc: Loc) -> Option<u32> {
        if self.total_size + bytes > MAX_TOTAL_SIZE {
            if !self.total_error_reported {
                self.total_error_reported = true;
                self.errors.push(make::Layout(
                    loc,
                    format!("the sections hold more than {MAX_TOTAL_SIZE} bytes in total"),
                ));
            }
            return None;
        }
        let s = &mut self.layout.sections[section];
        let offset = s.size;
        if offset + bytes > MAX_SECTION_SIZE {
            if !s.size_error_reported {
                s.size_error_reported = true;
                let name = s.name.clone();
                self.errors.push(make::Layout(
                    loc,
                    format!("section `{name}` is larger than {MAX_SECTION_SIZE} bytes"),
                ));
            }
            return None;
        }
        s.size = offset + bytes;
        self.total_size += bytes;
        Some(offset as u32)
    }

    /// Evaluates a pass-1 constant (only numbers, predefined symbols and earlier `.equ`s).
    fn constant(&self, expr: &Expr, file: usize, purpose: &str) -> Result<i64, AsmError> {
        let stack = RefCell::new(Vec::new());
        let known = RefCell::new(HashMap::new());
        let env = LayoutEnv {
            symbols: &self.layout.symbols,
            sections: None,
            files: &self.layout.files,
            file,
            dot: None,
            stack: &stack,
            known: &known,
            purpose,
            later: Some(&self.defined_names),
        };
        eval(expr, &env)
    }

    fn define(
        &mut self,
        file: usize,
        name: &str,
        def: SymDef<'a>,
        loc: Loc,
        context: Option<CodeContext>,
    ) {
        let key = (file, name.to_string());
        if let Some(&previous) = self.layout.symbols.local.get(&key) {
            let message = if is_internal_name(name) {
                "local label defined twice".to_string()
            } else {
                format!(
                    "symbol `{name}` is already defined at {}",
                    self.layout.symbols.entries[previous].loc
                )
            };
            self.errors.push(make::DuplicateSymbol(loc, message));
            return;
        }
        let entry = SymEntry {
            name: name.to_string(),
            file,
            def,
            loc,
            global: false,
            kind: SymbolKind::NoType,
            size: None,
            context,
        };
        self.layout.symbols.entries.push(entry);
        self.layout
            .symbols
            .local
            .insert(key, self.layout.symbols.entries.len() - 1);
    }

    fn file(&mut self, file: usize, parsed: &'a ParsedFile) {
        let mut current: Option<usize> = None;
        let mut mode: Option<CodeContext> = None;
        for stmt in &parsed.stmts {
            let loc = self.loc(file, stmt.pos);
            let ensure = |builder: &mut Self, current: &mut Option<usize>| -> usize {
                match *current {
                    Some(section) => section,
                    None => {
                        let section = builder.section_index(".text", loc.clone());
                        *current = Some(section);
                        section
                    }
                }
            };
            match &stmt.kind {
                StmtKind::Label(name) => {
                    let section = ensure(self, &mut current);
                    let offset = self.layout.sections[section].size.min(u32::MAX as u64) as u32;
                    // Only code labels record which context the code is for.
                    let context = if self.layout.sections[section].has_code {
                        mode
                    } else {
                        None
                    };
                    self.define(file, name, SymDef::Label { section, offset }, loc, context);
                }
                StmtKind::Inst(inst) => {
                    let section = ensure(self, &mut current);
                    self.code(
                        section,
                        file,
                        stmt.pos,
                        mode,
                        std::slice::from_ref(inst),
                        loc,
                    );
                }
                StmtKind::Bundle(insts) => {
                    let section = ensure(self, &mut current);
                    self.code(section, file, stmt.pos, mode, insts, loc);
                }
                StmtKind::Directive(directive) => match directive {
                    Directive::Section(name) => current = Some(self.section_index(name, loc)),
                    Directive::Context(context) => {
                        mode = Some(*context);
                        if let Some(section) = current {
                            self.layout.sections[section].contexts.insert(*context);
                        }
                    }
                    Directive::Globl(names) => {
                        for (name, pos) in names {
                            self.globls.push((file, name.clone(), *pos));
                        }
                    }
                    Directive::Type {
                        name,
                        name_pos,
                        kind,
                    } => self.types.push((file, name.clone(), *name_pos, *kind)),
                    Directive::Size {
                        name,
                        name_pos,
                        size,
                    } => {
                        let dot = current
                            .map(|s| (s, self.layout.sections[s].size.min(u32::MAX as u64) as u32));
                        self.layout.sizes.push(PendingSize {
                            file,
                            name: name.clone(),
                            name_pos: *name_pos,
                            size,
                            dot,
                        });
                    }
                    Directive::Equ { name, value } => {
                        let dot = current
                            .map(|s| (s, self.layout.sections[s].size.min(u32::MAX as u64) as u32));
                        self.define(file, name, SymDef::Equ { value, dot }, loc, mode);
                    }
                    Directive::Align(expr) => {
                        let section = ensure(self, &mut current);
                        self.align(section, file, stmt.pos, expr, loc);
                    }
                    Directive::Data { width, values } => {
                        let section = ensure(self, &mut current);
                        if let Some(offset) =
                            self.reserve(section, *width as u64 * values.len() as u64, loc)
                        {
                            let kind = ItemKind::Data {
                                width: *width,
                                values,
                            };
                            self.layout.items.push(Item {
                                section,
                                offset,
                                file,
                                pos: stmt.pos,
                                context: mode,
                                kind,
                            });
                        }
                    }
                    Directive::Float(values) => {
                        let section = ensure(self, &mut current);
                        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                        self.bytes(section, file, stmt.pos, mode, bytes, loc);
                    }
                    Directive::Space { size, fill } => {
                        let section = ensure(self, &mut current);
                        let size = match self.constant(size, file, "the size of `.space`") {
                            Ok(size) if (0..=MAX_SECTION_SIZE as i64).contains(&size) => {
                                size as usize
                            }
                            Ok(size) => {
                                self.errors.push(make::BadDirective(
                                    loc,
                                    format!(
                                        "`.space` size {size} is not in 0..={MAX_SECTION_SIZE}"
                                    ),
                                ));
                                continue;
                            }
                            Err(error) => {
                                self.errors.push(error);
                                continue;
                            }
                        };
                        let fill = match fill
                            .as_ref()
                            .map(|f| self.constant(f, file, "the fill value of `.space`"))
                        {
                            None => 0,
                            Some(Ok(fill)) if (-128..=255).contains(&fill) => fill as u8,
                            Some(Ok(fill)) => {
                                self.errors.push(make::OutOfRange(
                                    loc.clone(),
                                    format!("fill value {fill} does not fit in a byte"),
                                ));
                                0
                            }
                            Some(Err(error)) => {
                                self.errors.push(error);
                                0
                            }
                        };
                        self.bytes(section, file, stmt.pos, mode, vec![fill; size], loc);
                    }
                    Directive::Ignored => {}
                },
            }
        }
    }

    fn bytes(
        &mut self,
        section: usize,
        file: usize,
        pos: Pos,
        context: Option<CodeContext>,
        bytes: Vec<u8>,
        loc: Loc,
    ) {
        if let Some(offset) = self.reserve(section, bytes.len() as u64, loc) {
            self.layout.items.push(Item {
                section,
                offset,
                file,
                pos,
                context,
                kind: ItemKind::Bytes(bytes),
            });
        }
    }

    fn code(
        &mut self,
        section: usize,
        file: usize,
        pos: Pos,
        context: Option<CodeContext>,
        insts: &'a [InstStmt],
        loc: Loc,
    ) {
        if let Some(context) = context {
            self.layout.sections[section].contexts.insert(context);
        }
        if let Some(offset) = self.reserve(section, 4 * insts.len() as u64, loc) {
            self.layout.items.push(Item {
                section,
                offset,
                file,
                pos,
                context,
                kind: ItemKind::Code(insts),
            });
        }
    }

    fn align(&mut self, section: usize, file: usize, pos: Pos, expr: &Expr, loc: Loc) {
        let align = match self.constant(expr, file, "the alignment of `.align`") {
            Ok(align) => align,
            Err(error) => {
                self.errors.push(error);
                return;
            }
        };
        if !(1..=MAX_ALIGN).contains(&align) || align & (align - 1) != 0 {
            self.errors.push(make::BadDirective(
                loc,
                format!(
                    "`.align {align}`: the alignment must be a power of two from 1 to {MAX_ALIGN}"
                ),
            ));
            return;
        }
        let has_code = self.layout.sections[section].has_code;
        if has_code && align < 4 {
            self.errors.push(make::BadDirective(
                loc,
                format!("`.align {align}` in a section with code: code is padded with 4-byte `nop`s, so the alignment must be at least 4"),
            ));
            return;
        }
        let s = &mut self.layout.sections[section];
        s.align = s.align.max(align as u32);
        let offset = s.size;
        let (zeros, nops) = if has_code {
            let zeros = (4 - offset % 4) % 4;
            let start = offset + zeros;
            (zeros, (align_up(start, align as u64) - start) / 4)
        } else {
            (align_up(offset, align as u64) - offset, 0)
        };
        if zeros + 4 * nops == 0 {
            return;
        }
        if let Some(offset) = self.reserve(section, zeros + 4 * nops, loc) {
            let kind = ItemKind::Pad {
                zeros: zeros as u32,
                nops: nops as u32,
            };
            self.layout.items.push(Item {
                section,
                offset,
                file,
                pos,
                context: None,
                kind,
            });
        }
    }

    fn apply_globals_and_types(&mut self) {
        for (file, name, pos) in std::mem::take(&mut self.globls) {
            let Some(&index) = self.layout.symbols.local.get(&(file, name.clone())) else {
                continue; // An external reference: nothing to export.
            };
            match self.layout.symbols.global.get(&name) {
                Some(&other) if other != index => {
                    let message = format!(
                        "global symbol `{name}` is also defined at {}",
                        self.layout.symbols.entries[other].loc
                    );
                    self.errors
                        .push(make::DuplicateSymbol(self.loc(file, pos), message));
                }
                _ => {
                    self.layout.symbols.entries[index].global = true;
                    self.layout.symbols.global.insert(name, index);
                }
            }
        }
        for (file, name, pos, kind) in std::mem::take(&mut self.types) {
            match self.layout.symbols.lookup(file, &name) {
                Some(index) => self.layout.symbols.entries[index].kind = kind,
                None => self.errors.push(make::BadDirective(
                    self.loc(file, pos),
                    format!("`.type` names undefined symbol `{name}`"),
                )),
            }
        }
    }

    fn place(&mut self, options: &LayoutOptions) {
        let options_loc = Loc::new("<layout options>", 1, 1);
        let mut pins: HashMap<usize, u32> = HashMap::new();
        for (name, address) in &options.placements {
            match self.layout.sections.iter().position(|s| &s.name == name) {
                None => self.errors.push(make::Layout(
                    options_loc.clone(),
                    format!("placement names unknown section `{name}`"),
                )),
                Some(index) => {
                    if pins.insert(index, *address).is_some() {
                        self.errors.push(make::Layout(
                            options_loc.clone(),
                            format!("section `{name}` is placed twice"),
                        ));
                    }
                }
            }
        }
        let mut cursor = options.base as u64;
        for (index, s) in self.layout.sections.iter_mut().enumerate() {
            let address = match pins.get(&index) {
                Some(&pinned) => {
                    if pinned % s.align != 0 {
                        self.errors.push(make::Layout(
                            options_loc.clone(),
                            format!("section `{}` is placed at {pinned:#x}, which is not {}-byte aligned", s.name, s.align),
                        ));
                    }
                    pinned as u64
                }
                None => {
                    let address = align_up(cursor, s.align as u64);
                    cursor = address + s.size;
                    address
                }
            };
            if address + s.size > 1 << 32 {
                self.errors.push(make::Layout(
                    s.loc.clone(),
                    format!(
                        "section `{}` does not fit below 4 GiB (at {address:#x})",
                        s.name
                    ),
                ));
                s.address = 0;
            } else {
                s.address = address as u32;
            }
        }
        let sections = &self.layout.sections;
        for (i, a) in sections.iter().enumerate() {
            for b in &sections[i + 1..] {
                if a.size == 0 || b.size == 0 {
                    continue;
                }
                let (a_end, b_end) = (a.address as u64 + a.size, b.address as u64 + b.size);
                if (a.address as u64) < b_end && (b.address as u64) < a_end {
                    self.errors.push(make::Layout(
                        b.loc.clone(),
                        format!(
                            "sections `{}` ({:#x}..{a_end:#x}) and `{}` ({:#x}..{b_end:#x}) overlap",
                            a.name, a.address, b.name, b.address
                        ),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
