//! The layout pass's walk over the statements: sections, labels, `.set`s, data and
//! instructions placed in order, with the directive facts (`.globl`, `.type`, `.size`) collected
//! for [`super::Layout`] to resolve.

use super::*;
use crate::asm::forms::{ldconst_words, LDCONST};
use crate::asm::parser::OperandValue;

pub(super) struct Builder<'a, 'e> {
    pub(super) layout: Layout<'a>,
    pub(super) code_sections: HashSet<String>,
    pub(super) defined_names: HashSet<(usize, String)>,
    pub(super) total_size: u64,
    pub(super) total_error_reported: bool,
    pub(super) errors: &'e mut Vec<AsmError>,
    pub(super) globls: Vec<(usize, String, Pos)>,
    pub(super) types: Vec<(usize, String, Pos, SymbolKind)>,
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

    pub(super) fn file(&mut self, file: usize, parsed: &'a ParsedFile) {
        let mut current: Option<usize> = None;
        let mut mode: Option<CodeContext> = None;
        // `.allow_optimizations` seen in this file: `rpt` bodies are aligned with a `nop`.
        let mut optimize = false;
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
                StmtKind::Inst(inst) if inst.mnemonic == LDCONST => {
                    let section = ensure(self, &mut current);
                    let value = inst.operands.get(1).and_then(|op| match &op.value {
                        OperandValue::Expr(expr) => self.constant(expr, file, "`ldconst`").ok(),
                        OperandValue::Reg(_) | OperandValue::Csr(_) => None,
                    });
                    let words = ldconst_words(value);
                    if let Some(context) = mode {
                        self.layout.sections[section].contexts.insert(context);
                    }
                    if let Some(offset) = self.reserve(section, 4 * words as u64, loc) {
                        self.layout.items.push(Item {
                            section,
                            offset,
                            file,
                            pos: stmt.pos,
                            context: mode,
                            kind: ItemKind::Ldconst { stmt: inst, words },
                        });
                    }
                }
                StmtKind::Inst(inst) => {
                    let section = ensure(self, &mut current);
                    let insts = std::slice::from_ref(inst);
                    if optimize {
                        self.align_repeat_body(section, file, stmt.pos, insts, loc.clone());
                    }
                    self.code(section, file, stmt.pos, mode, insts, loc);
                }
                StmtKind::Bundle(insts) => {
                    let section = ensure(self, &mut current);
                    if optimize {
                        self.align_repeat_body(section, file, stmt.pos, insts, loc.clone());
                    }
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
                    Directive::AllowOptimizations => optimize = true,
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
        if let Some(offset) = self.reserve(section, code_bytes(insts), loc) {
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

    /// Under `.allow_optimizations`: one `nop` before `insts` where they hold an `rpt` whose
    /// body (the address after them) would not be 8-byte aligned, or a two-word instruction
    /// (`sendpicp`) that would not be.
    fn align_repeat_body(
        &mut self,
        section: usize,
        file: usize,
        pos: Pos,
        insts: &[InstStmt],
        loc: Loc,
    ) {
        let s = &self.layout.sections[section];
        let body = s.size + code_bytes(insts);
        let repeat = insts.iter().any(|i| i.mnemonic == "rpt");
        let misaligned = if repeat {
            !body.is_multiple_of(8)
        } else {
            two_words(insts) && !s.size.is_multiple_of(8)
        };
        if !misaligned || !s.has_code || !s.size.is_multiple_of(4) {
            return;
        }
        self.pad(section, file, pos, (0, 1), loc);
    }

    /// Reserves `zeros` zero bytes then `nops` 4-byte `nop`s at the end of `section`.
    fn pad(&mut self, section: usize, file: usize, pos: Pos, (zeros, nops): (u32, u32), loc: Loc) {
        if let Some(offset) = self.reserve(section, u64::from(zeros) + 4 * u64::from(nops), loc) {
            self.layout.items.push(Item {
                section,
                offset,
                file,
                pos,
                context: None,
                kind: ItemKind::Pad { zeros, nops },
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
        self.pad(section, file, pos, (zeros as u32, nops as u32), loc);
    }

    pub(super) fn apply_globals_and_types(&mut self) {
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
                // As GNU as: the name becomes an undefined symbol with a type; nothing refers
                // to it, so a warning.
                None => {
                    let loc = self.loc(file, pos);
                    self.layout.warnings.push(AsmWarning {
                        loc,
                        message: format!(
                            "`.type` names `{name}`, which the program does not define: ignored"
                        ),
                    });
                }
            }
        }
    }

    pub(super) fn place(&mut self, options: &LayoutOptions) {
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

/// Whether `insts` is one two-word instruction (`sendpicp`: its rows have an inline word).
fn two_words(insts: &[InstStmt]) -> bool {
    match insts {
        [only] => crate::inst::rows_named(&only.mnemonic)
            .iter()
            .any(|row| row.words == 2),
        _ => false,
    }
}

/// The bytes `insts` take: 4 a word, 8 for a two-word instruction.
fn code_bytes(insts: &[InstStmt]) -> u64 {
    if two_words(insts) {
        8
    } else {
        4 * insts.len() as u64
    }
}
