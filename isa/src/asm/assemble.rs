//! Driver and encoding: lex, parse, lay out, then choose each instruction's row and encode it.
//!
//! Row choice is by syntax only: the rows with the mnemonic are tried in table order and the
//! first whose operand kinds match the written operands (register file, width, post-increment,
//! CSR name, or expression) wins; failing that, the shorthands of `forms.rs` are tried in
//! order. Immediates are range-checked against the chosen row's field.

use super::error::{make, AsmError, AsmErrors, AsmWarning, Loc};
use super::expr::{ConstEnv, Expr};
use super::forms::{forms_for, ldconst_expansion, FORMS, LDCONST};
use super::layout::{layout, ItemKind, Layout, LayoutOptions, PREDEFINED_SYMBOLS};
use super::lexer::lex;
use super::macros::expand;
use super::object::{CodeContext, ListingLine, Object, Section};
use super::parser::{
    parse, Broadcast, Directive, InstStmt, Operand, OperandValue, ParsedFile, RegMark, RegOperand,
    StmtKind,
};
use super::print::{format_bundle, format_inst, kind_syntax};
use crate::csr::CsrSpace;
use crate::inst::emit::encode_bundle;
use crate::inst::{
    Bundle, Inst, InstDesc, OperandDesc, OperandKind, INSTRUCTIONS, INSTRUCTION_ALIGN,
    MAX_OPERANDS, REPEAT_BODY_ALIGN,
};
use crate::table::{CoIssue, Contexts, Pipe, TimingClass};

/// Assembles source files (`(file name, text)`, in order) into a placed object.
///
/// Returns every diagnostic found, sorted by file, line and column.
pub fn assemble<N: AsRef<str>, T: AsRef<str>>(
    sources: &[(N, T)],
    options: &LayoutOptions,
) -> Result<Object, AsmErrors> {
    assemble_with_warnings(sources, options).0
}

/// [`assemble`], also returning the warnings (`.warning`, `rpt` bodies that would trap) in order.
pub fn assemble_with_warnings<N: AsRef<str>, T: AsRef<str>>(
    sources: &[(N, T)],
    options: &LayoutOptions,
) -> (Result<Object, AsmErrors>, Vec<AsmWarning>) {
    let mut errors = Vec::new();
    let mut expansions = Vec::new();
    let mut warnings = Vec::new();
    let files: Vec<ParsedFile> = sources
        .iter()
        .map(|(name, text)| {
            let mut expanded = expand(name.as_ref(), text.as_ref(), &mut errors);
            warnings.append(&mut expanded.warnings);
            let parsed = parse(name.as_ref(), &expanded.tokens, &mut errors);
            expanded.tokens = Vec::new();
            expansions.push(expanded);
            parsed
        })
        .collect();
    let mut layout = layout(&files, options, &mut errors);
    let (sections, listing) = encode_sections(&layout, &mut errors, &mut warnings);
    let symbols = layout.object_symbols(&mut errors);
    warnings.append(&mut layout.warnings);
    explain_undefined(&files, &mut errors);
    for ((name, _), expanded) in sources.iter().zip(&expansions) {
        expanded.annotate(name.as_ref(), &mut errors);
    }
    if errors.is_empty() {
        let object = Object {
            sections,
            symbols,
            listing,
        };
        return (Ok(object), warnings);
    }
    let order = |loc: &Loc| {
        sources
            .iter()
            .position(|(name, _)| name.as_ref() == loc.file)
            .unwrap_or(usize::MAX)
    };
    errors.sort_by_key(|e| (order(e.loc()), e.loc().line, e.loc().col));
    (Err(AsmErrors(errors)), warnings)
}

/// Linking several files: an undefined symbol that another file defines without `.globl` says so.
fn explain_undefined(files: &[ParsedFile], errors: &mut [AsmError]) {
    for error in errors.iter_mut() {
        let AsmError::UndefinedSymbol { loc, message } = error else {
            continue;
        };
        let Some(name) = message
            .strip_prefix("undefined symbol `")
            .and_then(|rest| rest.strip_suffix('`'))
        else {
            continue;
        };
        let definer = files.iter().find(|file| {
            file.name != loc.file
                && file.stmts.iter().any(|stmt| match &stmt.kind {
                    StmtKind::Label(label) => label == name,
                    StmtKind::Directive(Directive::Equ { name: defined, .. }) => defined == name,
                    StmtKind::Inst(_) | StmtKind::Bundle(_) | StmtKind::Directive(_) => false,
                })
        });
        if let Some(file) = definer {
            let note = format!(" ({} defines it, but not as `.globl`)", file.name);
            message.push_str(&note);
        }
    }
}

/// Assembles one anonymous file (`<input>`) at the default base.
pub fn assemble_str(text: &str) -> Result<Object, AsmErrors> {
    assemble(&[("<input>", text)], &LayoutOptions::default())
}

/// Parses a single instruction or bundle whose operands are constants (numbers, predefined
/// symbols); labels and `.` are not available.
pub fn parse_bundle(text: &str) -> Result<Bundle, AsmErrors> {
    const FILE: &str = "<input>";
    let mut errors = Vec::new();
    let tokens = lex(FILE, text, &mut errors);
    let parsed = parse(FILE, &tokens, &mut errors);
    if !errors.is_empty() {
        return Err(AsmErrors(errors));
    }
    let loc = |pos: super::lexer::Pos| Loc::at(FILE, pos);
    let insts = match parsed.stmts.as_slice() {
        [stmt] => match &stmt.kind {
            StmtKind::Inst(inst) => std::slice::from_ref(inst),
            StmtKind::Bundle(insts) => insts.as_slice(),
            StmtKind::Label(_) | StmtKind::Directive(_) => {
                return Err(
                    make::Syntax(loc(stmt.pos), "expected one instruction or bundle").into(),
                )
            }
        },
        [] => {
            return Err(make::Syntax(
                Loc::new(FILE, 1, 1),
                "expected one instruction or bundle, found nothing",
            )
            .into())
        }
        [_, second, ..] => {
            return Err(make::Syntax(
                loc(second.pos),
                "expected one instruction or bundle, found more",
            )
            .into())
        }
    };
    let env = ConstEnv {
        file: FILE,
        symbols: PREDEFINED_SYMBOLS,
    };
    let eval = |expr: &Expr| super::expr::eval(expr, &env);
    build_bundle(insts, &eval, &loc, None).map_err(AsmErrors)
}

/// The word and text of the main-pipeline `nop` row, used for code padding.
fn nop_word() -> Option<(u32, String)> {
    let row = INSTRUCTIONS
        .iter()
        .find(|r| r.mnemonic == "nop" && r.operands.is_empty() && r.pipe == Pipe::Main)?;
    let inst = Inst::new(row.opcode, &[]);
    Some((crate::inst::emit::encode(&inst).ok()?, format_inst(&inst)))
}

fn encode_sections(
    layout: &Layout<'_>,
    errors: &mut Vec<AsmError>,
    warnings: &mut Vec<AsmWarning>,
) -> (Vec<Section>, Vec<ListingLine>) {
    let mut bytes: Vec<Vec<u8>> = layout
        .sections
        .iter()
        .map(|s| vec![0u8; s.size as usize])
        .collect();
    let mut listing = Vec::new();
    let nop = nop_word();
    for item in &layout.items {
        let section = &layout.sections[item.section];
        let address = section.address.wrapping_add(item.offset);
        let out = &mut bytes[item.section];
        let start = item.offset as usize;
        let loc = layout.loc(item.file, item.pos);
        let dot = Some((item.section, item.offset));
        match &item.kind {
            ItemKind::Bytes(data) => out[start..start + data.len()].copy_from_slice(data),
            ItemKind::Pad { zeros, nops } => {
                let (word, text) = nop.clone().unwrap_or((0, String::new()));
                for k in 0..*nops as usize {
                    let at = start + *zeros as usize + 4 * k;
                    out[at..at + 4].copy_from_slice(&word.to_le_bytes());
                    listing.push(ListingLine {
                        address: address.wrapping_add(*zeros + 4 * k as u32),
                        words: vec![word],
                        text: text.clone(),
                        file: layout
                            .files
                            .get(item.file)
                            .copied()
                            .unwrap_or("<input>")
                            .to_string(),
                        line: item.pos.line,
                    });
                }
            }
            ItemKind::Data { width, values } => {
                let width = *width as usize;
                for (k, value) in values.iter().enumerate() {
                    let dot = Some((item.section, item.offset + (k * width) as u32));
                    let value = match layout.eval(value, item.file, dot) {
                        Ok(value) => value,
                        Err(error) => {
                            errors.push(error);
                            continue;
                        }
                    };
                    if width < 8 {
                        let bits = 8 * width as u32;
                        let (lo, hi) = (-(1i64 << (bits - 1)), (1i64 << bits) - 1);
                        if !(lo..=hi).contains(&value) {
                            let at = layout.loc(item.file, values[k].pos());
                            let directive = match width {
                                1 => ".byte",
                                2 => ".short",
                                _ => ".int",
                            };
                            errors.push(make::OutOfRange(
                                at,
                                format!(
                                    "value {value} does not fit in `{directive}` ({lo}..={hi})"
                                ),
                            ));
                            continue;
                        }
                    }
                    let at = start + k * width;
                    out[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
                }
            }
            ItemKind::Ldconst { stmt, words } => {
                let eval = |expr: &Expr| layout.eval(expr, item.file, dot);
                let loc_of = |pos: super::lexer::Pos| layout.loc(item.file, pos);
                let value = match stmt.operands.get(1).map(|op| &op.value) {
                    Some(OperandValue::Expr(expr)) => match eval(expr) {
                        Ok(value) => value,
                        Err(error) => {
                            errors.push(error);
                            continue;
                        }
                    },
                    Some(OperandValue::Reg(_) | OperandValue::Csr(_)) | None => 0,
                };
                let expansion = match ldconst_expansion(stmt, value, *words) {
                    Ok(expansion) => expansion,
                    Err(message) => {
                        errors.push(make::OperandMismatch(loc.clone(), message));
                        continue;
                    }
                };
                for (k, part) in expansion.iter().enumerate() {
                    let bundle = match build_bundle(
                        std::slice::from_ref(part),
                        &eval,
                        &loc_of,
                        item.context,
                    ) {
                        Ok(bundle) => bundle,
                        Err(mut found) => {
                            errors.append(&mut found);
                            break;
                        }
                    };
                    let word = match encode_bundle(&bundle) {
                        Ok(words) => words[0],
                        Err(error) => {
                            errors.push(make::Encoding(loc.clone(), error.to_string()));
                            break;
                        }
                    };
                    let at = start + 4 * k;
                    out[at..at + 4].copy_from_slice(&word.to_le_bytes());
                    listing.push(ListingLine {
                        address: address.wrapping_add(4 * k as u32),
                        words: vec![word],
                        text: format_bundle(&bundle),
                        file: layout
                            .files
                            .get(item.file)
                            .copied()
                            .unwrap_or("<input>")
                            .to_string(),
                        line: item.pos.line,
                    });
                }
            }
            ItemKind::Code(insts) => {
                let eval = |expr: &Expr| layout.eval(expr, item.file, dot);
                let loc_of = |pos: super::lexer::Pos| layout.loc(item.file, pos);
                let bundle = match build_bundle(insts, &eval, &loc_of, item.context) {
                    Ok(bundle) => bundle,
                    Err(mut found) => {
                        errors.append(&mut found);
                        continue;
                    }
                };
                let mut ok = true;
                if !address.is_multiple_of(INSTRUCTION_ALIGN) {
                    errors.push(make::Misaligned(
                        loc.clone(),
                        format!(
                            "instruction at {address:#x} is not {INSTRUCTION_ALIGN}-byte aligned"
                        ),
                    ));
                    ok = false;
                } else if bundle.size() == 8 && bundle.aux.is_none() && !address.is_multiple_of(8) {
                    let mnemonic = bundle.main.map_or("", |m| m.desc().mnemonic);
                    errors.push(make::Misaligned(
                        loc.clone(),
                        format!(
                            "`{mnemonic}` at {address:#x} is not 8-byte aligned: its two words must be (`.balign 8` or `.allow_optimizations` before it)"
                        ),
                    ));
                    ok = false;
                } else if let Some(warning) = repeat_body_warning(&bundle, address, &loc) {
                    warnings.push(warning);
                }
                let words = match encode_bundle(&bundle) {
                    Ok(words) => words,
                    Err(error) => {
                        errors.push(make::Encoding(loc.clone(), error.to_string()));
                        continue;
                    }
                };
                for (k, word) in words.iter().enumerate() {
                    out[start + 4 * k..start + 4 * k + 4].copy_from_slice(&word.to_le_bytes());
                }
                if ok {
                    listing.push(ListingLine {
                        address,
                        words,
                        text: format_bundle(&bundle),
                        file: layout
                            .files
                            .get(item.file)
                            .copied()
                            .unwrap_or("<input>")
                            .to_string(),
                        line: item.pos.line,
                    });
                }
            }
        }
    }
    let sections = layout
        .sections
        .iter()
        .zip(bytes)
        .map(|(s, bytes)| Section {
            name: s.name.clone(),
            address: s.address,
            bytes,
            has_code: s.has_code,
            context: s.context(),
            align: s.align,
        })
        .collect();
    (sections, listing)
}

/// An `rpt` whose body (the address after the `rpt` bundle) breaks [`REPEAT_BODY_ALIGN`]: a
/// warning, since the `rpt` traps (`MisalignedRepeatBody`) only if it runs.
fn repeat_body_warning(bundle: &Bundle, address: u32, loc: &Loc) -> Option<AsmWarning> {
    let main = bundle.main?;
    if main.desc().timing != TimingClass::Repeat {
        return None;
    }
    let body = address.wrapping_add(bundle.size());
    if body.is_multiple_of(REPEAT_BODY_ALIGN) {
        return None;
    }
    let fix = if bundle.aux.is_some() {
        "issue the `rpt` alone"
    } else {
        "bundle the `rpt` with an aux instruction such as `fnop`"
    };
    Some(AsmWarning {
        loc: loc.clone(),
        message: format!(
            "the body of this `rpt` starts at {body:#x}, which is not {REPEAT_BODY_ALIGN}-byte aligned: it traps when it runs ({fix}, or move it by 4 bytes)"
        ),
    })
}

fn context_error(desc: &InstDesc, context: CodeContext, loc: Loc) -> Option<AsmError> {
    let supervisor = context == CodeContext::Supervisor;
    if desc.contexts.allows(supervisor) {
        return None;
    }
    let (only, marked) = match desc.contexts {
        Contexts::Worker => ("worker", "`.supervisor`"),
        Contexts::Supervisor | Contexts::Both => ("supervisor", "`.worker`"),
    };
    Some(make::WrongContext(
        loc,
        format!(
            "`{}` is a {only}-only instruction, but this code is marked {marked}",
            desc.mnemonic
        ),
    ))
}

/// Resolves and checks the instructions of one statement (one instruction, or a bundle) and
/// orders a pair main first.
fn build_bundle(
    insts: &[InstStmt],
    eval: &dyn Fn(&Expr) -> Result<i64, AsmError>,
    loc: &dyn Fn(super::lexer::Pos) -> Loc,
    context: Option<CodeContext>,
) -> Result<Bundle, Vec<AsmError>> {
    let mut errors = Vec::new();
    let mut resolved = Vec::new();
    for stmt in insts {
        if stmt.mnemonic == LDCONST {
            errors.push(make::BadBundle(
                loc(stmt.pos),
                "`ldconst` stands for one or two instructions of its own and cannot share a bundle",
            ));
            continue;
        }
        match resolve(stmt, eval, loc) {
            Ok(inst) => {
                if let Some(error) =
                    context.and_then(|c| context_error(inst.desc(), c, loc(stmt.pos)))
                {
                    errors.push(error);
                }
                resolved.push((inst, stmt));
            }
            Err(error) => errors.push(error),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    match resolved.as_slice() {
        [(only, _)] => Ok(Bundle::single(*only)),
        [(a, a_stmt), (b, b_stmt)] => {
            let (da, db) = (a.desc(), b.desc());
            for (desc, stmt) in [(da, a_stmt), (db, b_stmt)] {
                if desc.co_issue == CoIssue::Solo {
                    errors.push(make::BadBundle(
                        loc(stmt.pos),
                        format!("`{}` must issue alone: it cannot be bundled", desc.mnemonic),
                    ));
                }
            }
            if da.pipe == db.pipe {
                let pipe = if da.pipe == Pipe::Main { "main" } else { "aux" };
                errors.push(make::BadBundle(
                    loc(a_stmt.pos),
                    format!(
                        "`{}` and `{}` are both {pipe}-pipeline instructions: a bundle pairs one main and one aux instruction",
                        da.mnemonic, db.mnemonic
                    ),
                ));
            }
            if !errors.is_empty() {
                return Err(errors);
            }
            let (main, aux) = if da.pipe == Pipe::Main {
                (*a, *b)
            } else {
                (*b, *a)
            };
            Ok(Bundle {
                main: Some(main),
                aux: Some(aux),
            })
        }
        _ => Err(vec![make::BadBundle(
            loc(insts.first().map(|s| s.pos).unwrap_or_default()),
            "a bundle holds one or two instructions",
        )]),
    }
}

/// Whether a written operand has the syntax of an operand kind.
pub fn operand_matches(kind: OperandKind, value: &OperandValue) -> bool {
    match value {
        OperandValue::Reg(reg) => {
            kind.register_file() == Some(reg.file)
                && kind.register_width() == reg.width
                && reg.mark == kind_mark(kind)
                && reg.broadcast == kind_broadcast(kind)
        }
        OperandValue::Csr(csr) => matches!(
            (kind, csr.space),
            (OperandKind::LowerCsr, CsrSpace::Lower) | (OperandKind::UpperCsr, CsrSpace::Upper)
        ),
        OperandValue::Expr(_) => !kind.is_register(),
    }
}

/// The MRF suffix an operand kind is written with.
fn kind_mark(kind: OperandKind) -> RegMark {
    match kind {
        OperandKind::MRegPostInc | OperandKind::MPairPostInc => RegMark::PostInc,
        OperandKind::MRegIncrement => RegMark::Increment,
        OperandKind::MRegDelta => RegMark::Delta,
        OperandKind::MReg
        | OperandKind::AReg
        | OperandKind::MPair
        | OperandKind::APair
        | OperandKind::AQuad
        | OperandKind::ABroadcast
        | OperandKind::ABroadcastLo
        | OperandKind::ABroadcastHi
        | OperandKind::Unsigned
        | OperandKind::Signed
        | OperandKind::Target
        | OperandKind::LowerCsr
        | OperandKind::UpperCsr
        | OperandKind::WordAddress => RegMark::Plain,
    }
}

/// The broadcast suffix an operand kind is written with.
fn kind_broadcast(kind: OperandKind) -> Option<Broadcast> {
    match kind {
        OperandKind::ABroadcast => Some(Broadcast::Word),
        OperandKind::ABroadcastLo => Some(Broadcast::Low),
        OperandKind::ABroadcastHi => Some(Broadcast::High),
        OperandKind::MReg
        | OperandKind::AReg
        | OperandKind::MPair
        | OperandKind::APair
        | OperandKind::AQuad
        | OperandKind::MRegPostInc
        | OperandKind::MPairPostInc
        | OperandKind::MRegIncrement
        | OperandKind::MRegDelta
        | OperandKind::Unsigned
        | OperandKind::Signed
        | OperandKind::Target
        | OperandKind::LowerCsr
        | OperandKind::UpperCsr
        | OperandKind::WordAddress => None,
    }
}

fn written_syntax(value: &OperandValue) -> String {
    match value {
        OperandValue::Reg(RegOperand {
            file,
            width,
            mark,
            broadcast,
            ..
        }) => {
            let p = file.prefix();
            let group = match width {
                1 => format!("${p}N"),
                2 => format!("${p}N:N+1"),
                _ => format!("${p}N:N+3"),
            };
            if let Some(broadcast) = broadcast {
                group + broadcast.suffix()
            } else {
                group + mark.suffix()
            }
        }
        OperandValue::Csr(csr) => match csr.space {
            CsrSpace::Lower => format!("{} (a lower-space CSR: get/put)", csr.name),
            CsrSpace::Upper => format!("{} (an upper-space CSR: uget/uput)", csr.name),
        },
        OperandValue::Expr(_) => "imm".to_string(),
    }
}

/// "`ld32step` expects: $mN|$aN, $mN, $mN+=, imm|$mN" built from the rows of a mnemonic.
pub fn expects_message(mnemonic: &str) -> String {
    let rows: Vec<&InstDesc> = INSTRUCTIONS
        .iter()
        .filter(|r| r.mnemonic == mnemonic)
        .collect();
    let mut arities: Vec<usize> = Vec::new();
    for row in &rows {
        if !arities.contains(&row.operands.len()) {
            arities.push(row.operands.len());
        }
    }
    let forms: Vec<String> = arities
        .iter()
        .map(|&arity| {
            if arity == 0 {
                return "no operands".to_string();
            }
            (0..arity)
                .map(|i| {
                    let mut alternatives: Vec<&str> = Vec::new();
                    for row in rows.iter().filter(|r| r.operands.len() == arity) {
                        let syntax = kind_syntax(row.operands[i].kind);
                        if !alternatives.contains(&syntax) {
                            alternatives.push(syntax);
                        }
                    }
                    alternatives.join("|")
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let mut message = format!("`{mnemonic}` expects: {}", forms.join(" or "));
    for form in forms_for(mnemonic).filter(|form| form.listed) {
        let target = form.target_mnemonic(mnemonic);
        if INSTRUCTIONS
            .iter()
            .any(|row| row.mnemonic == target && (form.row)(row))
        {
            let written = form.written.replace("{op}", mnemonic);
            message.push_str(&format!("; or the shorthand `{written}`"));
        }
    }
    message
}

/// The rows of `mnemonic` that `accept` allows and whose operand kinds match `operands`, in
/// table order.
fn matching_rows<'a>(
    mnemonic: &'a str,
    operands: &'a [Operand],
    accept: fn(&InstDesc) -> bool,
) -> impl Iterator<Item = &'static InstDesc> + 'a {
    crate::inst::rows_named(mnemonic)
        .iter()
        .copied()
        .filter(move |row| {
            accept(row)
                && row.operands.len() == operands.len()
                && row
                    .operands
                    .iter()
                    .zip(operands)
                    .all(|(desc, op)| operand_matches(desc.kind, &op.value))
        })
}

/// Chooses the row of an instruction statement and computes its operand values.
///
/// The candidates are the rows that take the operands as written, else those of the first form
/// of `forms.rs` that rewrites them into operands some row takes. Of several candidates (rows of
/// one shape that differ in an immediate field, such as `or` with a zero-extended `zimm12` and
/// with a zero-tailed one, `0xfff00000`-style), the first whose immediates all fit is chosen;
/// if none fits, the first candidate's range error is reported.
fn resolve(
    stmt: &InstStmt,
    eval: &dyn Fn(&Expr) -> Result<i64, AsmError>,
    loc: &dyn Fn(super::lexer::Pos) -> Loc,
) -> Result<Inst, AsmError> {
    let known = !crate::inst::rows_named(&stmt.mnemonic).is_empty()
        || FORMS
            .iter()
            .any(|f| f.mnemonic == Some(stmt.mnemonic.as_str()));
    if !known {
        return Err(make::UnknownMnemonic(
            loc(stmt.pos),
            format!("unknown instruction `{}`", stmt.mnemonic),
        ));
    }
    let mut candidates: Vec<(&InstDesc, std::borrow::Cow<[Operand]>)> =
        matching_rows(&stmt.mnemonic, &stmt.operands, |_| true)
            .map(|row| (row, std::borrow::Cow::Borrowed(stmt.operands.as_slice())))
            .collect();
    if candidates.is_empty() {
        for form in forms_for(&stmt.mnemonic) {
            let Some(operands) = (form.rewrite)(&stmt.operands) else {
                continue;
            };
            let rows: Vec<&InstDesc> =
                matching_rows(form.target_mnemonic(&stmt.mnemonic), &operands, form.row).collect();
            if !rows.is_empty() {
                candidates.extend(
                    rows.into_iter()
                        .map(|row| (row, std::borrow::Cow::Owned(operands.clone()))),
                );
                break;
            }
        }
    }
    if candidates.is_empty() {
        let got: Vec<String> = stmt
            .operands
            .iter()
            .map(|op| written_syntax(&op.value))
            .collect();
        let got = if got.is_empty() {
            "no operands".to_string()
        } else {
            got.join(", ")
        };
        return Err(make::OperandMismatch(
            loc(stmt.pos),
            format!("{}; got: {got}", expects_message(&stmt.mnemonic)),
        ));
    }
    let mut first_range_error = None;
    for (row, operands) in &candidates {
        match operand_values(row, operands, eval, loc)? {
            Ok(values) => {
                return Ok(Inst {
                    opcode: row.opcode,
                    operands: values,
                })
            }
            Err(range) => {
                first_range_error.get_or_insert(range);
            }
        }
    }
    Err(first_range_error.expect("at least one candidate row was tried"))
}

/// The operand values of `operands` for `row`: the outer error is an expression that cannot
/// be evaluated, the inner one an immediate out of the row's range.
fn operand_values(
    row: &InstDesc,
    operands: &[Operand],
    eval: &dyn Fn(&Expr) -> Result<i64, AsmError>,
    loc: &dyn Fn(super::lexer::Pos) -> Loc,
) -> Result<Result<[u32; MAX_OPERANDS], AsmError>, AsmError> {
    let mut values = [0u32; MAX_OPERANDS];
    for (index, (desc, op)) in row.operands.iter().zip(operands.iter()).enumerate() {
        values[index] = match &op.value {
            OperandValue::Reg(reg) => reg.first as u32,
            OperandValue::Csr(csr) => csr.index as u32,
            OperandValue::Expr(expr) => {
                let value = eval(expr)?;
                match check_immediate(row, index, desc, value) {
                    Ok(value) => value,
                    Err(message) => return Ok(Err(make::OutOfRange(loc(op.pos), message))),
                }
            }
        };
    }
    Ok(Ok(values))
}

/// Addresses echo in hex (negative ones in decimal).
fn show_address(value: i64) -> String {
    if value >= 0 {
        format!("{value:#x}")
    } else {
        value.to_string()
    }
}

/// Range-checks an expression value against operand `index` of a row; returns the operand value.
pub fn check_immediate(
    row: &InstDesc,
    index: usize,
    desc: &OperandDesc,
    value: i64,
) -> Result<u32, String> {
    let width = desc.field.width();
    let shift = desc.field.shift as u32;
    let what = format!("operand {} of `{}`", index + 1, row.mnemonic);
    if desc.kind.is_signed() {
        let (lo, hi) = (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1);
        if (lo..=hi).contains(&value) {
            Ok(value as i32 as u32)
        } else {
            Err(format!(
                "immediate {value} is out of range for {what} (signed {width}-bit: {lo}..={hi})"
            ))
        }
    } else if desc.kind.is_address() {
        let align = (1i64 << shift).max(4);
        let max = ((1i64 << width) - 1) << shift;
        let noun = if desc.kind == OperandKind::Target {
            "branch target"
        } else {
            "word address"
        };
        if value % align != 0 {
            Err(format!(
                "{noun} {} is not {align}-byte aligned",
                show_address(value)
            ))
        } else if !(0..=max).contains(&value) {
            Err(format!(
                "{noun} {} is out of range for {what} (0..={max:#x})",
                show_address(value)
            ))
        } else {
            Ok(value as u32)
        }
    } else {
        let max = ((1i64 << width) - 1) << shift;
        let align = 1i64 << shift;
        // A field that holds the top bits of a 32-bit word (`immz12`) takes the value as a
        // 32-bit word, as GNU as does for 32-bit operands: `or $m0, $mzero, ~0xffffff` is
        // 0xff000000.
        let value = if width + shift == 32 && (-(1i64 << 31)..0).contains(&value) {
            value + (1i64 << 32)
        } else {
            value
        };
        let noun = if matches!(desc.kind, OperandKind::LowerCsr | OperandKind::UpperCsr) {
            "CSR index"
        } else {
            "immediate"
        };
        if !(0..=max).contains(&value) {
            Err(format!(
                "{noun} {value} is out of range for {what} (unsigned {width}-bit: 0..={max})"
            ))
        } else if value % align != 0 {
            Err(format!("{noun} {value} must be a multiple of {align}"))
        } else {
            Ok(value as u32)
        }
    }
}
