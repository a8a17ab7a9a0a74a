//! Supervisor programs: every running tile's instructions for every step (see the module docs
//! of `emit` for their shape), generated tile by tile (in parallel) into a [`Sink`] —
//! [`Counter`] sizes them before placement, [`Encoded`] encodes them after it (the object the
//! assembler would make of the text, without printing and re-assembling 1000+ programs), and
//! [`Text`] prints one as assembly for reports.

use super::{EmitError, Frame};
use crate::exchange::check::check;
use crate::exchange::emit::{emit, TileExchangeCode};
use crate::exchange::ExchangePhase;
use crate::target::Target;
use crate::tile::{Program, StepKind};
use rayon::prelude::*;
use std::collections::BTreeMap;
use tessera_isa::asm::format_inst;
use tessera_isa::asm::object::{CodeContext, Object, Section, Symbol, SymbolKind};
use tessera_isa::inst::emit::encode;
use tessera_isa::inst::{Inst, Opcode};
use tessera_isa::registers::{M_VERTEX_BASE, M_ZERO};
use tessera_kernels::{EntryKind, VertexWord};

/// `sync` zones (`TEXCH_SYNCZONE_LOCAL`, `TEXCH_SYNCZONE_INTERNAL`).
const SYNC_LOCAL: u32 = 2;
const SYNC_INTERNAL: u32 = 3;
/// Largest `delay` (a 19-bit immediate); longer waits are split.
/// Largest `setzi` immediate.
const MAX_SETZI: u32 = (1 << 20) - 1;
/// The label every supervisor program starts at.
pub const ENTRY_LABEL: &str = "tessera_supervisor";

/// Receives the generated program of one tile.
pub(super) trait Sink {
    /// Whether the sink keeps comments and notes (they are formatted only then).
    fn keeps_text(&self) -> bool;
    fn inst(&mut self, inst: Inst, note: Option<String>);
    fn comment(&mut self, text: String);
    /// Instructions so far.
    fn len(&self) -> u32;
}

/// Counts a tile's instructions.
#[derive(Default)]
pub(super) struct Counter {
    pub count: u32,
}

impl Sink for Counter {
    fn keeps_text(&self) -> bool {
        false
    }

    fn inst(&mut self, _: Inst, _: Option<String>) {
        self.count += 1;
    }

    fn comment(&mut self, _: String) {}

    fn len(&self) -> u32 {
        self.count
    }
}

/// A tile's program as assembly text.
pub(super) struct Text {
    pub text: String,
    instructions: u32,
}

impl Text {
    pub fn new() -> Text {
        Text { instructions: 0, text: format!("    .section .text.{ENTRY_LABEL}\n    .globl {ENTRY_LABEL}\n    .supervisor\n    .align 8\n{ENTRY_LABEL}:\n") }
    }
}

/// One line of text: no newlines, so a note cannot end the comment.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

impl Sink for Text {
    fn keeps_text(&self) -> bool {
        true
    }

    fn inst(&mut self, inst: Inst, note: Option<String>) {
        self.instructions += 1;
        let line = format_inst(&inst);
        match note {
            Some(note) => self
                .text
                .push_str(&format!("    {line:<32} // {}\n", clean(&note))),
            None => self.text.push_str(&format!("    {line}\n")),
        }
    }

    fn comment(&mut self, text: String) {
        self.text.push_str(&format!("    // {}\n", clean(&text)));
    }

    fn len(&self) -> u32 {
        self.instructions
    }
}

/// A tile's program encoded, with its comments and notes: two tiles have equal `Encoded`
/// programs exactly when their [`Text`]s are equal (so they can share one object), and
/// [`Encoded::object`] is what assembling the text makes.
#[derive(Default, PartialEq, Eq, Hash)]
pub(super) struct Encoded {
    words: Vec<u32>,
    /// (instruction index, cleaned note).
    notes: Vec<(usize, String)>,
    /// (instructions before it, cleaned text).
    comments: Vec<(usize, String)>,
    /// The first instruction that does not encode: (index, message).
    error: Option<(usize, String)>,
}

impl Sink for Encoded {
    fn keeps_text(&self) -> bool {
        true
    }

    fn inst(&mut self, inst: Inst, note: Option<String>) {
        if let Some(note) = note {
            self.notes.push((self.words.len(), clean(&note)));
        }
        match encode(&inst) {
            Ok(word) => self.words.push(word),
            Err(error) => {
                if self.error.is_none() {
                    self.error = Some((
                        self.words.len(),
                        format!("`{}`: {error}", format_inst(&inst)),
                    ));
                }
                self.words.push(0);
            }
        }
    }

    fn comment(&mut self, text: String) {
        self.comments.push((self.words.len(), clean(&text)));
    }

    fn len(&self) -> u32 {
        self.words.len() as u32
    }
}

impl Encoded {
    /// The object of the program at `base` (8-aligned): what the assembler makes of the text —
    /// one supervisor code section `.text.ENTRY_LABEL` and the global entry label at its start.
    pub fn object(&self, base: u32) -> Result<Object, String> {
        if let Some((_, message)) = &self.error {
            return Err(message.clone());
        }
        debug_assert!(base.is_multiple_of(8));
        let bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let section = Section {
            name: format!(".text.{ENTRY_LABEL}"),
            address: base,
            bytes,
            has_code: true,
            context: Some(CodeContext::Supervisor),
            align: 8,
        };
        let symbol = Symbol {
            address: base,
            section: 0,
            global: true,
            kind: SymbolKind::NoType,
            size: None,
            context: Some(CodeContext::Supervisor),
        };
        Ok(Object {
            sections: vec![section],
            symbols: [(ENTRY_LABEL.to_string(), symbol)].into_iter().collect(),
            listing: Vec::new(),
        })
    }

    pub fn bytes(&self) -> u32 {
        4 * self.words.len() as u32
    }
}

/// `$mD = value`: one `setzi`, or `setzi` + `shl` + `or` for values past 20 bits.
fn set_register(sink: &mut impl Sink, register: u32, value: u32, note: Option<String>) {
    if value <= MAX_SETZI {
        sink.inst(Inst::new(Opcode::Setzi, &[register, value]), note);
    } else {
        sink.inst(Inst::new(Opcode::Setzi, &[register, value >> 12]), note);
        sink.inst(Inst::new(Opcode::ShlImm, &[register, register, 12]), None);
        sink.inst(
            Inst::new(Opcode::OrImm, &[register, register, value & 0xfff]),
            None,
        );
    }
}

/// The exchange code of every exchange step (`None` for compute steps), resolved with
/// `addresses` and, when `check` is set, checked. The first failing step's error comes with its
/// step.
pub(super) fn exchange_code(
    target: &Target,
    program: &Program,
    frame: &Frame,
    addresses: &[Vec<u32>],
    check_code: bool,
) -> Vec<Option<Result<Vec<TileExchangeCode>, EmitError>>> {
    program
        .steps
        .par_iter()
        .enumerate()
        .map(|(step, kind)| {
            let StepKind::Exchange { phase, .. } = kind else {
                return None;
            };
            let resolved = ExchangePhase {
                transfers: program.resolve_phase(*phase, addresses),
            };
            let fail = |error| EmitError::Exchange {
                step,
                phase: *phase,
                error,
            };
            let code = emit(target, &resolved, &frame.schedules[*phase]).map_err(fail);
            Some(code.and_then(|code| {
                if check_code {
                    check(target, &resolved, &code).map_err(fail)?;
                }
                Ok(code)
            }))
        })
        .collect()
}

/// Why a tile's program stopped.
pub(super) enum Stop {
    /// At this step, with this error.
    Error(usize, EmitError),
    /// At an exchange step whose code failed (that error is reported for the phase).
    Exchange,
}

/// Generates the program of running tile `tile` into `sink`, with buffer `addresses` and the
/// exchange code of [`exchange_code`].
pub(super) fn generate_tile(
    program: &Program,
    frame: &Frame,
    exchange: &[Option<Result<Vec<TileExchangeCode>, EmitError>>],
    tile: u32,
    sink: &mut impl Sink,
) -> Result<(), Stop> {
    // CSRs written so far and their values; the index of the next call.
    let mut csrs: BTreeMap<u8, u32> = BTreeMap::new();
    let mut call_index = 0usize;
    let text = sink.keeps_text();
    let words = layered_words(program, frame, tile);
    let mut body_start = 0u32;
    for (step, kind) in program.steps.iter().enumerate() {
        if let Some(l) = program.looped.as_ref().filter(|l| l.first == step) {
            loop_entry(sink, frame, l.count, text);
            body_start = frame.program_base + 4 * sink.len();
        }
        let loop_end = program.looped.as_ref().filter(|l| l.last == step);
        // Every iteration starts with no CSR set: the body resets what it set before it loops,
        // and the step before the loop does the same. (Before the sync: after it, tiles must
        // run the same instructions up to an exchange's first.)
        let clear_csrs =
            loop_end.is_some() || program.looped.as_ref().is_some_and(|l| l.first == step + 1);
        match kind {
            StepKind::Compute { label } => {
                if text {
                    sink.comment(format!("step {step}: compute `{label}`"));
                }
                for call in &program.tiles[tile as usize].calls[step] {
                    let (entry, entry_kind) =
                        frame.kernels.entry(call.kernel()).ok_or_else(|| {
                            Stop::Error(
                                step,
                                EmitError::UnknownKernel {
                                    tile,
                                    step,
                                    kernel: call.name().to_string(),
                                },
                            )
                        })?;
                    let vertex = frame.vertex.record(tile, call_index);
                    call_index += 1;
                    if text {
                        sink.comment(format!(
                            "{} `{}`: {}",
                            call.name(),
                            call.label,
                            call.spec.description
                        ));
                    }
                    let wanted: BTreeMap<u8, u32> = call.spec.csrs.iter().copied().collect();
                    let resets: Vec<u8> = csrs
                        .keys()
                        .filter(|index| !wanted.contains_key(index))
                        .copied()
                        .collect();
                    for index in resets {
                        csrs.remove(&index);
                        sink.inst(
                            Inst::new(Opcode::Setzi, &[0, 0]),
                            text.then(|| "reset a CSR an earlier call set".to_string()),
                        );
                        sink.inst(Inst::new(Opcode::Put, &[index as u32, 0]), None);
                    }
                    for (&index, &value) in &wanted {
                        csrs.insert(index, value);
                        set_register(sink, 0, value, None);
                        sink.inst(Inst::new(Opcode::Put, &[index as u32, 0]), None);
                    }
                    match entry_kind {
                        EntryKind::Worker => {
                            // `runall` takes the record's absolute address (isa.md §1).
                            set_register(sink, 0, entry, text.then(|| call.name().to_string()));
                            set_register(sink, 1, vertex, text.then(|| "vertex".to_string()));
                            sink.inst(Inst::new(Opcode::Runall, &[0, 1, 0]), None);
                            sink.inst(Inst::new(Opcode::Sync, &[SYNC_LOCAL]), None);
                        }
                        EntryKind::Supervisor => {
                            set_register(
                                sink,
                                M_VERTEX_BASE as u32,
                                vertex,
                                text.then(|| "vertex".to_string()),
                            );
                            sink.inst(
                                Inst::new(Opcode::Call, &[10, entry]),
                                text.then(|| call.name().to_string()),
                            );
                        }
                    }
                }
                if clear_csrs {
                    reset_csrs(sink, &mut csrs);
                }
                if loop_end.is_some() {
                    loop_advance(sink, frame, &words, text);
                }
                sink.inst(Inst::new(Opcode::Sync, &[SYNC_INTERNAL]), None);
            }
            StepKind::Exchange { phase, label } => {
                let Some(Ok(code)) = &exchange[step] else {
                    return Err(Stop::Exchange);
                };
                if text {
                    sink.comment(format!(
                        "step {step}: exchange `{label}` (phase {phase}, {} cycles)",
                        frame.schedules[*phase].length
                    ));
                }
                for inst in code
                    .get(tile as usize)
                    .map(|c| c.instructions.as_slice())
                    .unwrap_or(&[])
                {
                    sink.inst(*inst, None);
                }
                if loop_end.is_some() {
                    reset_csrs(sink, &mut csrs);
                    loop_advance(sink, frame, &words, text);
                }
                sink.inst(Inst::new(Opcode::Sync, &[SYNC_INTERNAL]), None);
            }
        }
        if loop_end.is_some() {
            // `$m0` is the count of iterations left before this one (`loop_advance`): the
            // same on every tile, so every tile takes the same path out of the sync.
            sink.inst(
                Inst::new(Opcode::Brnz, &[0, body_start]),
                text.then(|| "next iteration".to_string()),
            );
        }
    }
    if let Some(l) = &program.looped {
        loop_rewind(sink, &words, l.count, text);
    }
    sink.inst(
        Inst::new(Opcode::Br, &[tessera_isa::registers::M_ZERO as u32]),
        text.then(|| "return to the host".to_string()),
    );
    Ok(())
}

/// The vertex words of `tile`'s calls in the loop body that hold a layered buffer's address,
/// with the stride each moves by per iteration: `(word address, stride)`.
fn layered_words(program: &Program, frame: &Frame, tile: u32) -> Vec<(u32, u32)> {
    let (Some(l), Some(tile_program)) = (&program.looped, program.tiles.get(tile as usize)) else {
        return Vec::new();
    };
    let mut words = Vec::new();
    for (index, (step, call)) in tile_program.calls_by_step().enumerate() {
        if !(l.first..=l.last).contains(&step) {
            continue;
        }
        let record = frame.vertex.record(tile, index);
        for (w, word) in call.spec.vertex.iter().enumerate() {
            let VertexWord::Address { buffer, .. } = *word else {
                continue;
            };
            if let Some(stride) = call
                .bindings
                .get(buffer)
                .and_then(|&(id, _)| l.stride(tile, id))
            {
                words.push((record + 4 * w as u32, stride));
            }
        }
    }
    words
}

/// Every CSR set so far back to 0, its start value.
fn reset_csrs(sink: &mut impl Sink, csrs: &mut BTreeMap<u8, u32>) {
    for (index, _) in std::mem::take(csrs) {
        sink.inst(Inst::new(Opcode::Setzi, &[0, 0]), None);
        sink.inst(Inst::new(Opcode::Put, &[index as u32, 0]), None);
    }
}

/// `$mzero`'s number, as an operand.
const Z: u32 = M_ZERO as u32;

/// Before a loop's first step: its counter = the iterations after the first.
fn loop_entry(sink: &mut impl Sink, frame: &Frame, count: u32, text: bool) {
    if text {
        sink.comment(format!("loop: {count} iterations"));
    }
    set_register(sink, 0, count - 1, None);
    set_register(
        sink,
        1,
        frame.vertex.loop_counter(),
        text.then(|| "loop counter".into()),
    );
    sink.inst(Inst::new(Opcode::St32M, &[0, 1, Z, 0]), None);
}

/// At the end of a loop's last step, before its sync: every layered vertex word moves on by its
/// stride (the next iteration's slice), and `$m0` = the counter, which is decremented in memory.
fn loop_advance(sink: &mut impl Sink, frame: &Frame, words: &[(u32, u32)], text: bool) {
    if text {
        sink.comment(format!(
            "loop: {} vertex words to the next iteration's slices",
            words.len()
        ));
    }
    for &(address, stride) in words {
        step_word(sink, address, stride, Opcode::Add);
    }
    set_register(
        sink,
        1,
        frame.vertex.loop_counter(),
        text.then(|| "loop counter".into()),
    );
    sink.inst(Inst::new(Opcode::Ld32M, &[0, 1, Z, 0]), None);
    sink.inst(Inst::new(Opcode::SubImm, &[2, 0, 1]), None);
    sink.inst(Inst::new(Opcode::St32M, &[2, 1, Z, 0]), None);
}

/// After the loop (at the program's end): the layered vertex words back at iteration 0's slices,
/// so the image runs again as it ran the first time.
fn loop_rewind(sink: &mut impl Sink, words: &[(u32, u32)], count: u32, text: bool) {
    if text && !words.is_empty() {
        sink.comment("loop: vertex words back to the first iteration's slices".into());
    }
    for &(address, stride) in words {
        step_word(sink, address, stride.wrapping_mul(count), Opcode::Sub);
    }
}

/// The word at `address` = word `op` `by`.
fn step_word(sink: &mut impl Sink, address: u32, by: u32, op: Opcode) {
    set_register(sink, 1, address, None);
    sink.inst(Inst::new(Opcode::Ld32M, &[0, 1, Z, 0]), None);
    set_register(sink, 2, by, None);
    sink.inst(Inst::new(op, &[0, 0, 2]), None);
    sink.inst(Inst::new(Opcode::St32M, &[0, 1, Z, 0]), None);
}

/// Generates every running tile's program with buffer `addresses` (tiles in parallel), into a
/// sink per tile made by `make`. Exchange code is checked when `check_code` is set (placeholder
/// addresses make different words look alike). Fails with the error of the earliest step
/// (and, within a step, of the lowest tile), as generating step by step would. Also returns the
/// exchange code, for [`generate_tile`] with another sink.
#[allow(clippy::type_complexity)]
pub(super) fn generate<S: Sink + Send>(
    target: &Target,
    program: &Program,
    frame: &Frame,
    addresses: &[Vec<u32>],
    check_code: bool,
    make: impl Fn() -> S + Sync,
) -> Result<
    (
        Vec<(u32, S)>,
        Vec<Option<Result<Vec<TileExchangeCode>, EmitError>>>,
    ),
    EmitError,
> {
    let running = frame.running_tiles(program);
    let mut exchange = exchange_code(target, program, frame, addresses, check_code);
    let tiles: Vec<(u32, S, Result<(), Stop>)> = running
        .par_iter()
        .map(|&tile| {
            let mut sink = make();
            let result = generate_tile(program, frame, &exchange, tile, &mut sink);
            (tile, sink, result)
        })
        .collect();
    let phase_error = exchange
        .iter()
        .position(|code| matches!(code, Some(Err(_))));
    let tile_error = tiles
        .iter()
        .enumerate()
        .filter_map(|(i, (_, _, result))| match result {
            Err(Stop::Error(step, _)) => Some((*step, i)),
            _ => None,
        })
        .min();
    match (phase_error, tile_error) {
        (Some(step), tile) if tile.is_none_or(|(tile_step, _)| step <= tile_step) => {
            let Some(Err(error)) = exchange.swap_remove(step) else {
                unreachable!("`phase_error` is the position of an `Err` in `exchange`")
            };
            Err(error)
        }
        (_, Some((_, i))) => {
            let Some((_, _, Err(Stop::Error(_, error)))) = tiles.into_iter().nth(i) else {
                unreachable!("`tile_error` is the index of a `Stop::Error` in `tiles`")
            };
            Err(error)
        }
        _ => Ok((
            tiles
                .into_iter()
                .map(|(tile, sink, _)| (tile, sink))
                .collect(),
            exchange,
        )),
    }
}
