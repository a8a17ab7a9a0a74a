//! Supervisor programs: every running tile's instructions for every step (see the module docs
//! of `emit` for their shape), generated once into a [`Sink`] — [`Counter`] sizes them before
//! placement, [`Texts`] prints them as assembly after it.

use super::{EmitError, Frame};
use crate::exchange::check::check;
use crate::exchange::emit::emit;
use crate::exchange::ExchangePhase;
use crate::target::Target;
use crate::tile::{Program, StepKind};
use std::collections::BTreeMap;
use tessera_isa::asm::format_inst;
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

/// Receives the generated program of every tile.
pub(super) trait Sink {
    fn inst(&mut self, tile: u32, inst: Inst, note: Option<&str>);
    fn comment(&mut self, tile: u32, text: &str);
    /// Whether the addresses are real (exchange code is checked only then: placeholder
    /// addresses make different words look alike).
    fn real_addresses(&self) -> bool;
}

/// Counts instructions per tile.
pub(super) struct Counter {
    counts: Vec<u32>,
}

impl Counter {
    pub fn new(tiles: usize) -> Counter {
        Counter { counts: vec![0; tiles] }
    }

    pub fn max_bytes(&self) -> u32 {
        self.counts.iter().max().copied().unwrap_or(0) * 4
    }
}

impl Sink for Counter {
    fn inst(&mut self, tile: u32, _: Inst, _: Option<&str>) {
        self.counts[tile as usize] += 1;
    }

    fn comment(&mut self, _: u32, _: &str) {}

    fn real_addresses(&self) -> bool {
        false
    }
}

/// Assembly text per running tile.
pub(super) struct Texts {
    texts: Vec<String>,
}

impl Texts {
    pub fn new(running: &[bool]) -> Texts {
        let header = format!("    .section .text.{ENTRY_LABEL}\n    .globl {ENTRY_LABEL}\n    .supervisor\n    .align 8\n{ENTRY_LABEL}:\n");
        Texts { texts: running.iter().map(|&r| if r { header.clone() } else { String::new() }).collect() }
    }

    pub fn text(&self, tile: u32) -> &str {
        self.texts.get(tile as usize).map(String::as_str).unwrap_or("")
    }
}

/// One line of text: no newlines, so a note cannot end the comment.
fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

impl Sink for Texts {
    fn inst(&mut self, tile: u32, inst: Inst, note: Option<&str>) {
        let text = &mut self.texts[tile as usize];
        let line = format_inst(&inst);
        match note {
            Some(note) => text.push_str(&format!("    {line:<32} // {}\n", clean(note))),
            None => text.push_str(&format!("    {line}\n")),
        }
    }

    fn comment(&mut self, tile: u32, text: &str) {
        self.texts[tile as usize].push_str(&format!("    // {}\n", clean(text)));
    }

    fn real_addresses(&self) -> bool {
        true
    }
}

/// `$mD = value`: one `setzi`, or `setzi` + `shl` + `or` for values past 20 bits.
fn set_register(sink: &mut impl Sink, tile: u32, register: u32, value: u32, note: Option<&str>) {
    if value <= MAX_SETZI {
        sink.inst(tile, Inst::new(Opcode::Setzi, &[register, value]), note);
    } else {
        sink.inst(tile, Inst::new(Opcode::Setzi, &[register, value >> 12]), note);
        sink.inst(tile, Inst::new(Opcode::ShlImm, &[register, register, 12]), None);
        sink.inst(tile, Inst::new(Opcode::OrImm, &[register, register, value & 0xfff]), None);
    }
}

/// Generates every running tile's program with buffer `addresses`.
pub(super) fn generate(target: &Target, program: &Program, frame: &Frame, addresses: &[Vec<u32>], sink: &mut impl Sink) -> Result<(), EmitError> {
    let running: Vec<u32> = program.tiles.iter().filter(|t| frame.running[t.tile as usize]).map(|t| t.tile).collect();
    // Per tile: CSRs written so far and their values; the index of the next call.
    let mut csrs: Vec<BTreeMap<u8, u32>> = vec![BTreeMap::new(); program.tiles.len()];
    let mut call_index = vec![0usize; program.tiles.len()];
    for (step, kind) in program.steps.iter().enumerate() {
        match kind {
            StepKind::Compute { label } => {
                for &tile in &running {
                    sink.comment(tile, &format!("step {step}: compute `{label}`"));
                    for call in &program.tiles[tile as usize].calls[step] {
                        let (entry, entry_kind) = frame.kernels.entry(call.kernel).ok_or_else(|| EmitError::UnknownKernel { tile, step, kernel: call.kernel.to_string() })?;
                        let vertex = frame.vertex.record(tile, call_index[tile as usize]);
                        call_index[tile as usize] += 1;
                        sink.comment(tile, &format!("{}: {}", call.kernel, call.case.name));
                        let set = &mut csrs[tile as usize];
                        let wanted: BTreeMap<u8, u32> = call.case.supervisor_csrs.iter().copied().collect();
                        let resets: Vec<u8> = set.keys().filter(|index| !wanted.contains_key(index)).copied().collect();
                        for index in resets {
                            set.remove(&index);
                            sink.inst(tile, Inst::new(Opcode::Setzi, &[0, 0]), Some("reset a CSR an earlier call set"));
                            sink.inst(tile, Inst::new(Opcode::Put, &[index as u32, 0]), None);
                        }
                        for (&index, &value) in &wanted {
                            set.insert(index, value);
                            set_register(sink, tile, 0, value, None);
                            sink.inst(tile, Inst::new(Opcode::Put, &[index as u32, 0]), None);
                        }
                        match entry_kind {
                            EntryKind::Worker => {
                                let offset = vertex.checked_sub(TMEM_REGION0_BASE_ADDR).ok_or_else(|| EmitError::Vertex {
                                    tile,
                                    step,
                                    kernel: call.kernel.to_string(),
                                    word: 0,
                                    reason: format!("record at {vertex:#x} is below TMEM_REGION0_BASE_ADDR"),
                                })?;
                                set_register(sink, tile, 0, entry, Some(call.kernel));
                                set_register(sink, tile, 1, offset, Some(&format!("vertex {vertex:#x} - TMEM_REGION0_BASE_ADDR")));
                                sink.inst(tile, Inst::new(Opcode::Runall, &[0, 1, 0]), None);
                                sink.inst(tile, Inst::new(Opcode::Sync, &[SYNC_LOCAL]), None);
                            }
                            EntryKind::Supervisor => {
                                set_register(sink, tile, M_VERTEX_BASE as u32, vertex, Some("vertex"));
                                sink.inst(tile, Inst::new(Opcode::Call, &[10, entry]), Some(call.kernel));
                            }
                        }
                    }
                    sink.inst(tile, Inst::new(Opcode::Sync, &[SYNC_INTERNAL]), None);
                }
            }
            StepKind::Exchange { phase, label } => {
                let resolved = ExchangePhase { transfers: program.resolve_phase(*phase, addresses) };
                let fail = |error| EmitError::Exchange { step, phase: *phase, error };
                let code = emit(target, &resolved, &frame.schedules[*phase]).map_err(fail)?;
                if sink.real_addresses() {
                    check(target, &resolved, &code).map_err(fail)?;
                }
                for &tile in &running {
                    sink.comment(tile, &format!("step {step}: exchange `{label}` (phase {phase}, {} cycles)", frame.schedules[*phase].length));
                    for inst in code.get(tile as usize).map(|c| c.instructions.as_slice()).unwrap_or(&[]) {
                        if inst.opcode == Opcode::Delay && inst.imm(0) > MAX_DELAY {
                            let mut left = inst.imm(0);
                            while left > 0 {
                                let part = left.min(MAX_DELAY);
                                sink.inst(tile, Inst::new(Opcode::Delay, &[part]), None);
                                left -= part;
                            }
                        } else {
                            sink.inst(tile, *inst, None);
                        }
                    }
                    sink.inst(tile, Inst::new(Opcode::Sync, &[SYNC_INTERNAL]), None);
                }
            }
        }
    }
    for &tile in &running {
        sink.inst(tile, Inst::new(Opcode::Br, &[tessera_isa::registers::M_ZERO as u32]), Some("return to the host"));
    }
    Ok(())
}
