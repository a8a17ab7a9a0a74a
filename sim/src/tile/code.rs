//! Pre-decoded code: every bundle of a tile's code ranges decoded once at load, so the hot loop
//! never decodes. Writes to code are refused by memory protection, which keeps this cache valid.

use tessera_isa::inst::emit::{decode_bundle, DecodeError};
use tessera_isa::inst::{Access, Bundle, OperandKind};
use tessera_isa::table::TimingClass;

/// One decoded bundle with the facts the scheduler needs.
#[derive(Clone, Copy, Debug)]
pub struct DecodedBundle {
    pub bundle: Bundle,
    pub size: u32,
    /// MRF registers the bundle reads (bit per register), for the supervisor's load-use stall.
    pub reads_m: u16,
    /// MRF registers a load in this bundle writes.
    pub load_writes_m: u16,
    /// The main instruction's timing class.
    pub timing: TimingClass,
}

/// A decode outcome for one word address.
#[derive(Clone, Debug)]
pub enum CodeSlot {
    /// Not code (data, or outside every code range).
    NotCode,
    Bundle(DecodedBundle),
    Invalid(DecodeError),
}

/// Decoded bundles for a tile, indexed by (address - base) / 4.
#[derive(Clone, Debug, Default)]
pub struct CodeCache {
    base: u32,
    slots: Vec<CodeSlot>,
}

impl CodeCache {
    pub fn new(base: u32, size: u32) -> CodeCache {
        CodeCache { base, slots: vec![CodeSlot::NotCode; (size / 4) as usize] }
    }

    /// Decodes every bundle starting in `[start, start + bytes.len())`, where `bytes` is the memory there.
    pub fn decode_range(&mut self, start: u32, bytes: &[u8]) {
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        for i in 0..words.len() {
            let slot = match decode_bundle(&words[i..]) {
                Ok((bundle, used)) => CodeSlot::Bundle(describe(bundle, used as u32 * 4)),
                Err(error) => CodeSlot::Invalid(error),
            };
            let index = ((start - self.base) / 4) as usize + i;
            if let Some(entry) = self.slots.get_mut(index) {
                *entry = slot;
            }
        }
    }

    #[inline]
    pub fn get(&self, pc: u32) -> &CodeSlot {
        static NOT_CODE: CodeSlot = CodeSlot::NotCode;
        if pc < self.base || pc % 4 != 0 {
            return &NOT_CODE;
        }
        self.slots.get(((pc - self.base) / 4) as usize).unwrap_or(&NOT_CODE)
    }
}

fn describe(bundle: Bundle, size: u32) -> DecodedBundle {
    let mut reads_m = 0u16;
    let mut load_writes_m = 0u16;
    let mut timing = TimingClass::Simple;
    for inst in [bundle.main, bundle.aux].into_iter().flatten() {
        let desc = inst.desc();
        if desc.pipe == tessera_isa::table::Pipe::Main {
            timing = desc.timing;
        }
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
            if desc.timing == TimingClass::Load && matches!(operand.access, Access::Write) && operand.kind != OperandKind::MRegPostInc {
                load_writes_m |= mask;
            }
        }
    }
    DecodedBundle { bundle, size, reads_m, load_writes_m, timing }
}
