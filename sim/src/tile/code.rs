//! Pre-decoded code: every bundle of a tile's code ranges decoded once at load, so the hot loop
//! never decodes. Writes to code are refused by memory protection, which keeps this cache valid.
//!
//! Decoded ranges are reference-counted: a chip whose tiles load the same code blob decodes it
//! once and shares the result ([`CodeCache::insert_shared`]), so a 1472-tile chip holds one copy.

use std::sync::Arc;
use tessera_isa::inst::emit::{decode_bundle, DecodeError};
use tessera_isa::inst::{Access, Bundle, OperandKind};
use tessera_isa::semantics::PreparedBundle;
use tessera_isa::table::TimingClass;

/// One decoded bundle, prepared for execution, with the facts the scheduler needs.
#[derive(Clone, Copy, Debug)]
pub struct DecodedBundle {
    /// The bundle and its size, with its checks worked out (`tessera_isa::semantics::step_prepared`).
    pub prepared: PreparedBundle,
    /// MRF registers the bundle reads (bit per register), for the supervisor's load-use stall.
    pub reads_m: u16,
    /// MRF registers a load in this bundle writes (ready `load_use` cycles after the issue).
    pub load_writes_m: u16,
    /// MRF registers the bundle writes other than a load's destinations (ready at once, such
    /// as a load's post-incremented address register).
    pub writes_m: u16,
    /// The main instruction's timing class.
    pub timing: TimingClass,
    /// The aux instruction is of timing class `Divide` (`f32div`).
    pub divide: bool,
}

/// A decode outcome for one word address.
#[derive(Clone, Debug)]
pub enum CodeSlot {
    /// Not code (data, or outside every code range).
    NotCode,
    Bundle(DecodedBundle),
    Invalid(DecodeError),
}

/// Decoded words of one code range, one slot per word from the range start.
pub type DecodedRange = Arc<[CodeSlot]>;

#[derive(Clone, Debug)]
struct CodeRange {
    start: u32,
    end: u32,
    slots: DecodedRange,
}

/// Decoded bundles of a tile's code ranges. A later range shadows an earlier one where they
/// overlap (as re-decoding memory would).
#[derive(Clone, Debug, Default)]
pub struct CodeCache {
    base: u32,
    /// Most recently added first.
    ranges: Vec<CodeRange>,
}

/// Decodes every word of `bytes` (the memory at some address) as the start of a bundle.
pub fn decode_words(bytes: &[u8]) -> DecodedRange {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (0..words.len())
        .map(|i| match decode_bundle(&words[i..]) {
            Ok((bundle, used)) => CodeSlot::Bundle(describe(bundle, used as u32 * 4)),
            Err(error) => CodeSlot::Invalid(error),
        })
        .collect()
}

impl CodeCache {
    /// An empty cache for SRAM starting at `base` (`_size` is kept for compatibility).
    pub fn new(base: u32, _size: u32) -> CodeCache {
        CodeCache {
            base,
            ranges: Vec::new(),
        }
    }

    /// Decodes every bundle starting in `[start, start + bytes.len())`, where `bytes` is the memory there.
    pub fn decode_range(&mut self, start: u32, bytes: &[u8]) {
        self.insert_shared(start, decode_words(bytes));
    }

    /// Adds an already decoded range at `start` (from [`decode_words`] of the bytes there).
    pub fn insert_shared(&mut self, start: u32, slots: DecodedRange) {
        if start < self.base || slots.is_empty() {
            return;
        }
        let end = start.saturating_add((slots.len() as u32).saturating_mul(4));
        self.ranges.insert(0, CodeRange { start, end, slots });
    }

    #[inline]
    pub fn get(&self, pc: u32) -> &CodeSlot {
        static NOT_CODE: CodeSlot = CodeSlot::NotCode;
        if !pc.is_multiple_of(4) {
            return &NOT_CODE;
        }
        for range in &self.ranges {
            if pc >= range.start && pc < range.end {
                return range
                    .slots
                    .get(((pc - range.start) / 4) as usize)
                    .unwrap_or(&NOT_CODE);
            }
        }
        &NOT_CODE
    }
}

fn describe(bundle: Bundle, size: u32) -> DecodedBundle {
    let mut reads_m = 0u16;
    let mut load_writes_m = 0u16;
    let mut writes_m = 0u16;
    let mut timing = TimingClass::Simple;
    let mut divide = false;
    for inst in [bundle.main, bundle.aux].into_iter().flatten() {
        let desc = inst.desc();
        if desc.pipe == tessera_isa::table::Pipe::Main {
            timing = desc.timing;
        }
        divide |= desc.timing == TimingClass::Divide;
        for (operand, &value) in desc.operands.iter().zip(inst.operands.iter()) {
            if operand.kind.register_file() != Some(tessera_isa::registers::RegisterFile::M) {
                continue;
            }
            let width = operand.kind.register_width() as u32;
            let mask = (((1u32 << width) - 1) << value) as u16;
            match operand.access {
                Access::Read | Access::ReadWrite => reads_m |= mask,
                Access::Write | Access::Constant => {}
            }
            let written = matches!(operand.access, Access::Write | Access::ReadWrite);
            if desc.timing == TimingClass::Load
                && matches!(operand.access, Access::Write)
                && operand.kind != OperandKind::MRegPostInc
            {
                load_writes_m |= mask;
            } else if written {
                writes_m |= mask;
            }
        }
    }
    DecodedBundle {
        prepared: PreparedBundle::new(bundle, size),
        reads_m,
        load_writes_m,
        writes_m: writes_m & !load_writes_m,
        timing,
        divide,
    }
}

impl DecodedBundle {
    pub fn bundle(&self) -> &Bundle {
        self.prepared.bundle()
    }

    /// Size in bytes.
    pub fn size(&self) -> u32 {
        self.prepared.size()
    }
}
