//! Register plumbing shared by the families: MRF writes, the aux pending-write buffer, the main
//! instruction's control-flow result, f16/byte lane packing and generic aux operand shapes.

use super::state::{AmpState, ContextState, AACC_COUNT};
use super::Effect;
use crate::inst::Inst;

/// First ARF register whose writes are discarded (`$a14`, `$a15` read 0).
const A_DISCARD: usize = 14;

/// Writes an MRF register. `$m15` discards the write. `$m12..$m14` are read-only for workers
/// and `$m14` for the supervisor: the bundle check in `execute` traps before any instruction
/// that names them as a destination runs, so they never reach this point.
#[inline]
pub(super) fn write_m(ctx: &mut ContextState, r: usize, value: u32) {
    if r < 12 || (r < 14 && ctx.kind.is_supervisor()) {
        ctx.m[r] = value;
    } else {
        debug_assert_eq!(r, 15, "write to read-only $m{r} escaped the bundle check");
    }
}

/// Where the next bundle comes from, and what the tile must do, after the main instruction.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flow {
    pub next_pc: u32,
    pub branch_taken: bool,
    pub effect: Effect,
}

impl Flow {
    pub fn fall_through(next_pc: u32) -> Flow {
        Flow {
            next_pc,
            branch_taken: false,
            effect: Effect::None,
        }
    }

    /// Takes a branch to a byte address (checked 4-byte aligned).
    pub fn branch(&mut self, target: u32) -> Result<(), super::Trap> {
        if target & 3 != 0 {
            return Err(super::TrapKind::MisalignedTarget { target }.into());
        }
        self.next_pc = target;
        self.branch_taken = true;
        Ok(())
    }
}

/// Everything an aux instruction writes, held back until the main instruction of the bundle has
/// executed: up to 4 ARF registers, up to 4 upper-space CSRs, and new accumulator / AMP state.
///
/// It is made for every bundle, so it is kept cheap: making one writes only the two counts and the
/// two `Option` tags (the register slots are filled as writes are queued, and the large accumulator
/// and AMP copies only by the instructions that change that state), and it is committed by
/// reference, never moved. Nothing is allocated.
pub(super) struct Pending {
    reg_count: u8,
    ucsr_count: u8,
    reg_index: [u8; 4],
    ucsr_index: [u8; 4],
    reg_value: [u32; 4],
    ucsr_value: [u32; 4],
    pub aacc: Option<[f32; AACC_COUNT]>,
    pub amp: Option<AmpState>,
}

impl Pending {
    #[inline(always)]
    pub fn new() -> Pending {
        Pending {
            reg_count: 0,
            ucsr_count: 0,
            reg_index: [0; 4],
            ucsr_index: [0; 4],
            reg_value: [0; 4],
            ucsr_value: [0; 4],
            aacc: None,
            amp: None,
        }
    }

    /// Queues an ARF write; writes to `$a14`/`$a15` are discarded here.
    #[inline]
    pub fn write_a(&mut self, r: usize, value: u32) {
        if r < A_DISCARD {
            let n = self.reg_count as usize;
            self.reg_index[n] = r as u8;
            self.reg_value[n] = value;
            self.reg_count += 1;
        }
    }

    /// Queues a pair write, low register = low 32 bits.
    #[inline]
    pub fn write_a64(&mut self, r: usize, value: u64) {
        self.write_a(r, value as u32);
        self.write_a(r + 1, (value >> 32) as u32);
    }

    /// Queues an upper-space CSR write.
    #[inline]
    pub fn write_ucsr(&mut self, index: u8, value: u32) {
        let n = self.ucsr_count as usize;
        self.ucsr_index[n] = index;
        self.ucsr_value[n] = value;
        self.ucsr_count += 1;
    }

    /// The accumulators as this instruction sees them so far (a copy is made on first use).
    #[inline]
    pub fn aacc<'a>(&'a mut self, ctx: &ContextState) -> &'a mut [f32; AACC_COUNT] {
        self.aacc.get_or_insert(ctx.aacc)
    }

    /// The AMP pipeline state as this instruction sees it so far (a copy is made on first use).
    #[inline]
    pub fn amp<'a>(&'a mut self, ctx: &ContextState) -> &'a mut AmpState {
        self.amp.get_or_insert(ctx.amp)
    }

    /// Bit r set for every queued ARF register r.
    #[inline]
    pub fn arf_mask(&self) -> u16 {
        let mut mask = 0;
        for &r in &self.reg_index[..self.reg_count as usize] {
            mask |= 1 << r;
        }
        mask
    }

    /// Applies every queued write to the context (by reference: the buffer is not moved).
    #[inline]
    pub fn commit(&self, ctx: &mut ContextState) {
        for i in 0..self.reg_count as usize {
            ctx.a[self.reg_index[i] as usize] = self.reg_value[i];
        }
        for i in 0..self.ucsr_count as usize {
            ctx.ucsr[self.ucsr_index[i] as usize] = self.ucsr_value[i];
        }
        if let Some(aacc) = &self.aacc {
            ctx.aacc = *aacc;
        }
        if let Some(amp) = &self.amp {
            ctx.amp = *amp;
        }
    }
}

// ---- lanes: lane 0 is always the least significant ----

/// The two f16 lanes of a 32-bit register: lane 0 = bits \[15:0\].
#[inline]
pub(super) fn halves(v: u32) -> [u16; 2] {
    [v as u16, (v >> 16) as u16]
}

#[inline]
pub(super) fn join_halves(h: [u16; 2]) -> u32 {
    h[0] as u32 | (h[1] as u32) << 16
}

/// The four f16 lanes of a pair: lane i = bits \[16i+15:16i\] of the 64-bit value.
#[inline]
pub(super) fn halves4(v: u64) -> [u16; 4] {
    [
        v as u16,
        (v >> 16) as u16,
        (v >> 32) as u16,
        (v >> 48) as u16,
    ]
}

#[inline]
pub(super) fn join_halves4(h: [u16; 4]) -> u64 {
    h[0] as u64 | (h[1] as u64) << 16 | (h[2] as u64) << 32 | (h[3] as u64) << 48
}

/// The two f32 lanes of a pair.
#[inline]
pub(super) fn singles(v: u64) -> [f32; 2] {
    [f32::from_bits(v as u32), f32::from_bits((v >> 32) as u32)]
}

#[inline]
pub(super) fn join_singles(s: [f32; 2]) -> u64 {
    s[0].to_bits() as u64 | (s[1].to_bits() as u64) << 32
}

/// The four registers of a quad, in register order.
#[inline]
pub(super) fn read_quad(ctx: &ContextState, r: usize) -> [u32; 4] {
    [
        ctx.read_a(r),
        ctx.read_a(r + 1),
        ctx.read_a(r + 2),
        ctx.read_a(r + 3),
    ]
}

// ---- generic aux operand shapes: operand 0 is the destination, 1 and 2 the sources ----

/// `$aD = f($aS)`.
#[inline]
pub(super) fn aux_unary(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    f: impl Fn(u32) -> u32,
) {
    out.write_a(inst.reg(0), f(ctx.read_a(inst.reg(1))));
}

/// `$aD = f($aA, $aB)`.
#[inline]
pub(super) fn aux_binary(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    f: impl Fn(u32, u32) -> u32,
) {
    out.write_a(
        inst.reg(0),
        f(ctx.read_a(inst.reg(1)), ctx.read_a(inst.reg(2))),
    );
}

/// `$aD:D+1 = f($aA:A+1, $aB:B+1)`.
#[inline]
pub(super) fn aux_binary64(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    f: impl Fn(u64, u64) -> u64,
) {
    out.write_a64(
        inst.reg(0),
        f(ctx.read_a64(inst.reg(1)), ctx.read_a64(inst.reg(2))),
    );
}

/// `$aD = f($aS, imm)`, the immediate as the decoder gives it.
#[inline]
pub(super) fn aux_reg_imm(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    f: impl Fn(u32, u32) -> u32,
) {
    out.write_a(inst.reg(0), f(ctx.read_a(inst.reg(1)), inst.imm(2)));
}

/// `$aD:D+1 = f($aS:S+1)`.
#[inline]
pub(super) fn aux_unary64(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    f: impl Fn(u64) -> u64,
) {
    out.write_a64(inst.reg(0), f(ctx.read_a64(inst.reg(1))));
}
