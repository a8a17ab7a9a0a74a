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
use tessera_isa::registers::M_VERTEX_BASE;
use tessera_isa::semantics::TMEM_REGION0_BASE_ADDR;
use tessera_kernels::EntryKind;

/// `sync` zones (`TEXCH_SYNCZONE_LOCAL`, `TEXCH_SYNCZONE_INTERNAL`).
const SYNC_LOCAL: u32 = 2;
const SYNC_INTERNAL: u32 = 3;
/// Largest `delay` (a 19-bit immediate); longer waits are split.
const MAX_DELAY: u32 = (1 << 19) - 1;
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
}

/// A tile's program as assembly text.
pub(super) struct Text {
    pub text: String,
}

impl Text {
    pub fn new() -> Text {
        Text { text: format!("    .section .text.{ENTRY_LABEL}\n    .globl {ENTRY_LABEL}\n    .supervisor\n    .align 8\n{ENTRY_LABEL}:\n") }
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
    for (step, kind) in program.steps.iter().enumerate() {
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
                            let offset = vertex.checked_sub(TMEM_REGION0_BASE_ADDR).ok_or_else(|| {
                                Stop::Error(
                                    step,
                                    EmitError::Vertex { tile, step, kernel: call.name().to_string(), word: 0, reason: format!("record at {vertex:#x} is below TMEM_REGION0_BASE_ADDR") },
                                )
                            })?;
                            set_register(sink, 0, entry, text.then(|| call.name().to_string()));
                            set_register(
                                sink,
                                1,
                                offset,
                                text.then(|| {
                                    format!("vertex {vertex:#x} - TMEM_REGION0_BASE_ADDR")
                                }),
                            );
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
                    if inst.opcode == Opcode::Delay && inst.imm(0) > MAX_DELAY {
                        let mut left = inst.imm(0);
                        while left > 0 {
                            let part = left.min(MAX_DELAY);
                            sink.inst(Inst::new(Opcode::Delay, &[part]), None);
                            left -= part;
                        }
                    } else {
                        sink.inst(*inst, None);
                    }
                }
                sink.inst(Inst::new(Opcode::Sync, &[SYNC_INTERNAL]), None);
            }
        }
    }
    sink.inst(
        Inst::new(Opcode::Br, &[tessera_isa::registers::M_ZERO as u32]),
        text.then(|| "return to the host".to_string()),
    );
    Ok(())
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
