//! Loads and stores of the main pipeline: scaled-offset forms and post-incrementing step forms.
//!
//! Operands are `[data, $mBase, $mDelta, offset-or-stride]` in every row.
//! * Offset forms: EA = base + delta + offset × size, with the offset an unsigned immediate
//!   (zimm12) or an MRF register's value; the scale is the access size. \[C\]
//! * Step forms: EA = base + delta; afterwards delta += stride × size, with the stride a signed
//!   simm8 or an MRF register's value as i32. \[C\]
//! * `stm32 $mS, $mBase, $mOffset`: EA = base + 4 × offset, no delta \[C\] (ASM-DOC `stm32.md`).
//! * Address arithmetic wraps at 32 bits; the environment checks range and natural alignment
//!   (and that 16-byte accesses go to interleaved memory).
//! * `ldd16a32`, `ldd16a64`, `ldd16b16 $aD, $mAddr++, $mBase, $mDelta@` (ASM-DOC \[C\]): a data
//!   load at base + delta (the delta register's low 16 bits, unsigned) and a 16-bit load at
//!   `$mAddr`, which becomes the new delta; then `$mAddr` += 2. That the data address uses the
//!   delta from *before* the instruction is \[I\]: PopLibs' sparse codelets load the first delta
//!   with `ldz16step` before the loop and each `ldd16*` fetches the next one. Project choice
//!   \[A\]: `$mAddr` = `$mDelta` (two writes to one register) traps `InvalidOperation`.
//! * Project choice \[A\]: an MRF load step whose destination is also its post-incremented delta
//!   register traps `InvalidOperation` (the two writes would race; the ISA text is not public).

use super::regs::write_m;
use super::state::ContextState;
use super::{ExecEnv, Trap, TrapKind};
use crate::inst::Inst;

/// How the effective address is formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// base + delta + zimm × size.
    Imm,
    /// base + delta + $mOff × size.
    Reg,
    /// base + delta; delta += simm × size.
    StepImm,
    /// base + delta; delta += $mStride × size.
    StepReg,
}

/// Which register file a 32-bit (or narrower) access uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum File {
    M,
    A,
}

/// Effective address and, for step forms, the delta register's new value.
#[inline]
fn address(inst: &Inst, ctx: &ContextState, mode: Mode, size: u32) -> (u32, Option<u32>) {
    let base = ctx.read_m(inst.reg(1));
    let delta = ctx.read_m(inst.reg(2));
    let ea = base.wrapping_add(delta);
    match mode {
        Mode::Imm => (ea.wrapping_add(inst.imm(3).wrapping_mul(size)), None),
        Mode::Reg => (
            ea.wrapping_add(ctx.read_m(inst.reg(3)).wrapping_mul(size)),
            None,
        ),
        Mode::StepImm => (
            ea,
            Some(delta.wrapping_add((inst.simm(3).wrapping_mul(size as i32)) as u32)),
        ),
        Mode::StepReg => {
            let stride = ctx.read_m(inst.reg(3)) as i32;
            (
                ea,
                Some(delta.wrapping_add(stride.wrapping_mul(size as i32) as u32)),
            )
        }
    }
}

#[inline]
fn post_increment(inst: &Inst, ctx: &mut ContextState, new_delta: Option<u32>) {
    if let Some(delta) = new_delta {
        write_m(ctx, inst.reg(2), delta);
    }
}

/// A load of N ≤ 4 bytes into one 32-bit register, `widen` placing the bytes (extension or broadcast).
#[inline]
pub(super) fn load32<E: ExecEnv, const N: usize>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    mode: Mode,
    file: File,
    widen: impl Fn([u8; N]) -> u32,
) -> Result<(), Trap> {
    let (ea, new_delta) = address(inst, ctx, mode, N as u32);
    if file == File::M && new_delta.is_some() && inst.reg(0) == inst.reg(2) && inst.reg(0) != 15 {
        return Err(TrapKind::InvalidOperation {
            what: "load destination is also the post-incremented delta register",
        }
        .into());
    }
    let mut bytes = [0u8; N];
    env.load(ea, &mut bytes)?;
    let value = widen(bytes);
    match file {
        File::M => write_m(ctx, inst.reg(0), value),
        File::A => ctx.write_a(inst.reg(0), value),
    }
    post_increment(inst, ctx, new_delta);
    Ok(())
}

/// `ld64`: an ARF pair, low register = low address.
#[inline]
pub(super) fn load64<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    mode: Mode,
) -> Result<(), Trap> {
    let (ea, new_delta) = address(inst, ctx, mode, 8);
    let mut bytes = [0u8; 8];
    env.load(ea, &mut bytes)?;
    ctx.write_a64(inst.reg(0), u64::from_le_bytes(bytes));
    post_increment(inst, ctx, new_delta);
    Ok(())
}

/// `ld128`: an ARF quad, register i = bytes [4i, 4i+4) (interleaved memory only; the env checks).
#[inline]
pub(super) fn load128<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    mode: Mode,
) -> Result<(), Trap> {
    let (ea, new_delta) = address(inst, ctx, mode, 16);
    let mut bytes = [0u8; 16];
    env.load(ea, &mut bytes)?;
    let d = inst.reg(0);
    for (i, word) in bytes.chunks_exact(4).enumerate() {
        ctx.write_a(
            d + i,
            u32::from_le_bytes([word[0], word[1], word[2], word[3]]),
        );
    }
    post_increment(inst, ctx, new_delta);
    Ok(())
}

/// The shared part of `ldd16*` (operands `[data, $mAddr++, $mBase, $mDelta@]`): loads and
/// returns the N data bytes, loads the new delta and steps the delta pointer.
#[inline]
pub(super) fn ldd16<E: ExecEnv, const N: usize>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<[u8; N], Trap> {
    let (pointer, base, delta) = (inst.reg(1), inst.reg(2), inst.reg(3));
    if pointer == delta && pointer != 15 {
        return Err(TrapKind::InvalidOperation {
            what: "ldd16 delta pointer is also its delta register",
        }
        .into());
    }
    let address = ctx.read_m(pointer);
    let ea = ctx.read_m(base).wrapping_add(ctx.read_m(delta) & 0xffff);
    let mut data = [0u8; N];
    env.load(ea, &mut data)?;
    let mut next = [0u8; 2];
    env.load(address, &mut next)?;
    write_m(ctx, delta, u32::from(u16::from_le_bytes(next)));
    write_m(ctx, pointer, address.wrapping_add(2));
    Ok(data)
}

/// `stm32 $mS, $mBase, $mOffset`.
#[inline]
pub(super) fn stm32<E: ExecEnv>(inst: &Inst, ctx: &ContextState, env: &mut E) -> Result<(), Trap> {
    let base = ctx.read_m(inst.reg(1));
    let ea = base.wrapping_add(ctx.read_m(inst.reg(2)).wrapping_mul(4));
    env.store(ea, &ctx.read_m(inst.reg(0)).to_le_bytes())
}

/// `st32`: one MRF or ARF register.
#[inline]
pub(super) fn store32<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    mode: Mode,
    file: File,
) -> Result<(), Trap> {
    let (ea, new_delta) = address(inst, ctx, mode, 4);
    let value = match file {
        File::M => ctx.read_m(inst.reg(0)),
        File::A => ctx.read_a(inst.reg(0)),
    };
    env.store(ea, &value.to_le_bytes())?;
    post_increment(inst, ctx, new_delta);
    Ok(())
}

/// `st64`: an ARF pair.
#[inline]
pub(super) fn store64<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    mode: Mode,
) -> Result<(), Trap> {
    let (ea, new_delta) = address(inst, ctx, mode, 8);
    env.store(ea, &ctx.read_a64(inst.reg(0)).to_le_bytes())?;
    post_increment(inst, ctx, new_delta);
    Ok(())
}

// ---- byte placement for the narrow loads ----

pub(super) fn word(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

pub(super) fn zext8(b: [u8; 1]) -> u32 {
    b[0] as u32
}

pub(super) fn sext8(b: [u8; 1]) -> u32 {
    b[0] as i8 as i32 as u32
}

pub(super) fn zext16(b: [u8; 2]) -> u32 {
    u16::from_le_bytes(b) as u32
}

pub(super) fn sext16(b: [u8; 2]) -> u32 {
    i16::from_le_bytes(b) as i32 as u32
}

/// `ldb16`: the half in both lanes.
pub(super) fn bcast16(b: [u8; 2]) -> u32 {
    u16::from_le_bytes(b) as u32 * 0x0001_0001
}

/// `ldb8`: the byte in all four bytes.
pub(super) fn bcast8(b: [u8; 1]) -> u32 {
    b[0] as u32 * 0x0101_0101
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::semantics::test_env::*;
    use crate::semantics::{ContextState, TrapKind};

    const BASE: u32 = 0x5_0000;
    const DELTA: u32 = 0x10;

    /// A worker with $m1 = base, $m2 = delta, $m3 = offset/stride.
    fn setup(base: u32, third: u32) -> (ContextState, TestEnv) {
        let mut ctx = worker();
        ctx.m[1] = base;
        ctx.m[2] = DELTA;
        ctx.m[3] = third;
        (ctx, TestEnv::new())
    }

    #[test]
    fn offset_loads_scale_the_offset_by_the_access_size() {
        // (opcode, offset, bytes at EA, expected register value, EA offset from base+delta, ARF?)
        type Case = (Opcode, u32, &'static [u8], u32, u32, bool);
        let cases: [Case; 10] = [
            (Ld32M, 3, &[0x11, 0x22, 0x33, 0x44], 0x4433_2211, 12, false),
            (Ld32A, 1, &[0x11, 0x22, 0x33, 0x44], 0x4433_2211, 4, true),
            (Ldz8, 3, &[0xf0], 0xf0, 3, false),
            (Lds8, 3, &[0xf0], 0xffff_fff0, 3, false),
            (Lds8, 5, &[0x70], 0x70, 5, false),
            (Ldz16, 3, &[0x01, 0x80], 0x8001, 6, false),
            (Lds16, 3, &[0x01, 0x80], 0xffff_8001, 6, false),
            (Lds16, 1, &[0x01, 0x70], 0x7001, 2, false),
            (Ldb16, 3, &[0xcd, 0xab], 0xabcd_abcd, 6, true),
            (Ldb8, 7, &[0x5a], 0x5a5a_5a5a, 7, true),
        ];
        for (op, offset, bytes, expected, ea_offset, arf) in cases {
            let (mut ctx, mut env) = setup(BASE, 0);
            env.write_bytes(BASE + DELTA + ea_offset, bytes);
            ok(&mut ctx, &mut env, one(op, &[0, 1, 2, offset]));
            let got = if arf { ctx.a[0] } else { ctx.m[0] };
            assert_eq!(got, expected, "{op:?}");
        }
    }

    #[test]
    fn register_offset_loads() {
        let cases = [
            (Ld32MReg, 4, 0x4433_2211, false, 2),
            (Ld32AReg, 4, 0x4433_2211, true, 2),
            (Ldz8Reg, 1, 0x11, false, 8),
            (Lds8Reg, 1, 0x11, false, 8),
            (Ldz16Reg, 2, 0x2211, false, 4),
            (Lds16Reg, 2, 0x2211, false, 4),
            (Ldb16Reg, 2, 0x2211_2211, true, 4),
            (Ldb8Reg, 1, 0x1111_1111, true, 8),
        ];
        for (op, size, expected, arf, offset) in cases {
            let (mut ctx, mut env) = setup(BASE, offset);
            env.write_bytes(BASE + DELTA + offset * size, &[0x11, 0x22, 0x33, 0x44]);
            // Register-offset rows: [dst, base, delta, offset register].
            ok(&mut ctx, &mut env, one(op, &[0, 1, 2, 3]));
            let got = if arf { ctx.a[0] } else { ctx.m[0] };
            assert_eq!(got, expected, "{op:?}");
        }
    }

    #[test]
    fn pairs_and_quads_take_the_low_address_into_the_low_register() {
        let (mut ctx, mut env) = setup(BASE, 1);
        env.write_u64(BASE + DELTA + 16, 0x1122_3344_5566_7788);
        ok(&mut ctx, &mut env, one(Ld64, &[2, 1, 2, 2]));
        assert_eq!((ctx.a[2], ctx.a[3]), (0x5566_7788, 0x1122_3344));
        ok(&mut ctx, &mut env, one(Ld64Reg, &[4, 1, 2, 3]));
        assert_eq!(ctx.read_a64(4), 0);
        // ld128 in interleaved memory.
        let (mut ctx, mut env) = setup(INTERLEAVED_BASE, 1);
        let bytes: Vec<u8> = (1..=16).collect();
        env.write_bytes(INTERLEAVED_BASE + DELTA + 16, &bytes);
        ok(&mut ctx, &mut env, one(Ld128, &[4, 1, 2, 1]));
        assert_eq!(
            &ctx.a[4..8],
            &[0x0403_0201, 0x0807_0605, 0x0c0b_0a09, 0x100f_0e0d]
        );
        ok(&mut ctx, &mut env, one(Ld128Reg, &[0, 1, 2, 3]));
        assert_eq!(&ctx.a[0..4], &ctx.a[4..8].to_vec()[..]);
        // ld128 outside interleaved memory is refused by the environment.
        let (mut ctx, mut env) = setup(BASE, 0);
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ld128, &[4, 1, 2, 0])),
            TrapKind::Memory(_)
        ));
        // The zero quad as destination discards $a14/$a15 but writes $a12/$a13.
        let (mut ctx, mut env) = setup(INTERLEAVED_BASE, 1);
        env.write_bytes(INTERLEAVED_BASE + DELTA, &bytes);
        ok(&mut ctx, &mut env, one(Ld128, &[12, 1, 2, 0]));
        assert_eq!(
            (ctx.read_a(14), ctx.read_a(15), ctx.a[12]),
            (0, 0, 0x0403_0201)
        );
    }

    #[test]
    fn stores() {
        let (mut ctx, mut env) = setup(BASE, 2);
        ctx.m[0] = 0xdead_beef;
        ctx.a[0] = 0x3f80_0000;
        ctx.write_a64(2, 0x0102_0304_0506_0708);
        ok(&mut ctx, &mut env, one(St32M, &[0, 1, 2, 1]));
        ok(&mut ctx, &mut env, one(St32A, &[0, 1, 2, 2]));
        ok(&mut ctx, &mut env, one(St64, &[2, 1, 2, 2]));
        assert_eq!(env.read_u32(BASE + DELTA + 4), 0xdead_beef);
        assert_eq!(env.read_u32(BASE + DELTA + 8), 0x3f80_0000);
        assert_eq!(env.read_u64(BASE + DELTA + 16), 0x0102_0304_0506_0708);
        ok(&mut ctx, &mut env, one(St32MReg, &[0, 1, 2, 3]));
        ok(&mut ctx, &mut env, one(St32AReg, &[0, 1, 2, 3]));
        assert_eq!(env.read_u32(BASE + DELTA + 8), 0x3f80_0000);
        ok(&mut ctx, &mut env, one(St64Reg, &[2, 1, 2, 3]));
        assert_eq!(env.read_u64(BASE + DELTA + 16), 0x0102_0304_0506_0708);
        // $azeros stores zeros.
        ok(&mut ctx, &mut env, one(St64, &[14, 1, 2, 2]));
        assert_eq!(env.read_u64(BASE + DELTA + 16), 0);
    }

    #[test]
    fn step_forms_use_base_plus_delta_then_advance_delta() {
        // (opcode, stride immediate, access size, ARF destination width in registers or 0 for MRF)
        let cases = [
            (Ld32StepM, 3, 4, 0),
            (Ld32StepA, -2, 4, 1),
            (Ld64Step, -1, 8, 2),
            (Ldz8Step, 5, 1, 0),
            (Ldz16Step, -3, 2, 0),
            (Lds16Step, 1, 2, 0),
            (Ldb16Step, 2, 2, 1),
        ];
        for (op, stride, size, _) in cases {
            let (mut ctx, mut env) = setup(BASE, 0);
            env.write_u64(BASE + DELTA, 0x8899_aabb_ccdd_eeff);
            ok(&mut ctx, &mut env, one(op, &[4, 1, 2, stride as u32]));
            assert_eq!(
                ctx.m[2],
                DELTA.wrapping_add((stride * size) as u32),
                "{op:?}"
            );
        }
        let (mut ctx, mut env) = setup(BASE, 0);
        env.write_u64(BASE + DELTA, 0x8899_aabb_ccdd_eeff);
        ok(&mut ctx, &mut env, one(Lds16Step, &[4, 1, 2, 1]));
        assert_eq!(ctx.m[4], 0xffff_eeff);
        ok(&mut ctx, &mut env, one(Ldz8Step, &[4, 1, 2, 2]));
        assert_eq!(ctx.m[4], 0xdd);
        ok(&mut ctx, &mut env, one(Ldb16Step, &[4, 1, 2, 1]));
        assert_eq!((ctx.a[4], ctx.m[2]), (0xaabb_aabb, DELTA + 6));
    }

    #[test]
    fn register_strides_are_signed() {
        let (mut ctx, mut env) = setup(INTERLEAVED_BASE, (-1i32) as u32);
        ctx.m[2] = 0x40;
        env.write_u64(INTERLEAVED_BASE + 0x40, 0x1111_2222_3333_4444);
        ok(&mut ctx, &mut env, one(Ld64StepReg, &[0, 1, 2, 3]));
        assert_eq!((ctx.read_a64(0), ctx.m[2]), (0x1111_2222_3333_4444, 0x38));
        ok(&mut ctx, &mut env, one(Ld32StepMReg, &[4, 1, 2, 3]));
        assert_eq!(ctx.m[2], 0x34);
        ok(&mut ctx, &mut env, one(Ld32StepAReg, &[4, 1, 2, 3]));
        assert_eq!(ctx.m[2], 0x30);
        ok(&mut ctx, &mut env, one(Ld128StepReg, &[4, 1, 2, 3]));
        assert_eq!(ctx.m[2], 0x20);
        ctx.m[3] = 2;
        ok(
            &mut ctx,
            &mut env,
            one(Ld128Step, &[4, 1, 2, (-2i32) as u32]),
        );
        assert_eq!(ctx.m[2], 0x00);
        // Store steps: the store goes to base + delta, then delta moves.
        ctx.m[2] = 0x40;
        ctx.m[5] = 0x1234_5678;
        ctx.a[6] = 0x9abc_def0;
        ctx.write_a64(0, 0x0f0e_0d0c_0b0a_0908);
        ok(
            &mut ctx,
            &mut env,
            one(St32StepM, &[5, 1, 2, (-1i32) as u32]),
        );
        assert_eq!(
            (env.read_u32(INTERLEAVED_BASE + 0x40), ctx.m[2]),
            (0x1234_5678, 0x3c)
        );
        ok(&mut ctx, &mut env, one(St32StepA, &[6, 1, 2, 1]));
        assert_eq!(
            (env.read_u32(INTERLEAVED_BASE + 0x3c), ctx.m[2]),
            (0x9abc_def0, 0x40)
        );
        ok(&mut ctx, &mut env, one(St64Step, &[0, 1, 2, 2]));
        assert_eq!(
            (env.read_u64(INTERLEAVED_BASE + 0x40), ctx.m[2]),
            (0x0f0e_0d0c_0b0a_0908, 0x50)
        );
        ctx.m[3] = (-4i32) as u32;
        ok(&mut ctx, &mut env, one(St32StepMReg, &[5, 1, 2, 3]));
        assert_eq!(
            (env.read_u32(INTERLEAVED_BASE + 0x50), ctx.m[2]),
            (0x1234_5678, 0x40)
        );
        ok(&mut ctx, &mut env, one(St32StepAReg, &[6, 1, 2, 3]));
        assert_eq!(
            (env.read_u32(INTERLEAVED_BASE + 0x40), ctx.m[2]),
            (0x9abc_def0, 0x30)
        );
        ok(&mut ctx, &mut env, one(St64StepReg, &[0, 1, 2, 3]));
        assert_eq!(
            (env.read_u64(INTERLEAVED_BASE + 0x30), ctx.m[2]),
            (0x0f0e_0d0c_0b0a_0908, 0x10)
        );
    }

    /// The 8- and 16-bit step loads with a register stride (PopLibs' `ldz16step $m, $mzero,
    /// $mptr+=, $mstride`): the stride counts elements, signed.
    #[test]
    fn narrow_step_loads_with_a_register_stride() {
        let (mut ctx, mut env) = setup(BASE, 3);
        env.write_bytes(BASE + DELTA, &[0xf1, 0xf2, 0, 0, 0, 0, 0x34, 0x92]);
        ok(&mut ctx, &mut env, one(Ldz16StepMReg, &[4, 1, 2, 3]));
        assert_eq!((ctx.m[4], ctx.m[2]), (0xf2f1, DELTA + 6));
        ok(&mut ctx, &mut env, one(Lds16StepMReg, &[4, 1, 2, 3]));
        assert_eq!((ctx.m[4], ctx.m[2]), (0xffff_9234, DELTA + 12));
        ctx.m[2] = DELTA + 6;
        ctx.m[3] = (-3i32) as u32;
        ok(&mut ctx, &mut env, one(Ldb16StepAReg, &[5, 1, 2, 3]));
        assert_eq!((ctx.a[5], ctx.m[2]), (0x9234_9234, DELTA));
        ok(&mut ctx, &mut env, one(Ldz8StepMReg, &[4, 1, 2, 3]));
        assert_eq!((ctx.m[4], ctx.m[2]), (0xf1, DELTA - 3));
        // A misaligned half faults before anything changes.
        ctx.m[2] = DELTA + 1;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ldz16StepMReg, &[4, 1, 2, 3])),
            TrapKind::Memory(_)
        ));
        assert_eq!(ctx.m[2], DELTA + 1);
    }

    #[test]
    fn stm32_scales_a_register_offset_and_has_no_delta() {
        let (mut ctx, mut env) = setup(BASE, 5);
        ctx.m[4] = 0xcafe_f00d;
        ok(&mut ctx, &mut env, one(Stm32, &[4, 1, 3]));
        assert_eq!(env.read_u32(BASE + 20), 0xcafe_f00d);
        ctx.m[3] = 1;
        ctx.m[1] = BASE + 2;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Stm32, &[4, 1, 3])),
            TrapKind::Memory(_)
        ));
    }

    #[test]
    fn faults_and_register_rules() {
        let (mut ctx, mut env) = setup(BASE, 0);
        ctx.m[2] = 2;
        // Misaligned and out-of-range accesses fault without changing anything.
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ld32M, &[0, 1, 2, 0])),
            TrapKind::Memory(_)
        ));
        assert!(matches!(
            traps(&mut ctx, &mut env, one(St64Step, &[0, 1, 2, 1])),
            TrapKind::Memory(_)
        ));
        ctx.m[1] = 0x1000;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ldz8, &[0, 1, 2, 0])),
            TrapKind::Memory(_)
        ));
        // A load step into its own delta register is refused.
        ctx.m[1] = BASE;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ld32StepM, &[2, 1, 2, 1])),
            TrapKind::InvalidOperation { .. }
        ));
        // A read-only delta register traps before the store happens.
        ctx.m[2] = 0;
        assert_eq!(
            traps(&mut ctx, &mut env, one(St32StepM, &[0, 1, 13, 1])),
            TrapKind::ReadOnlyRegister { register: "$m13" }
        );
        // $mzero as delta: reads 0, the increment is discarded.
        env.write_u32(BASE, 77);
        ok(&mut ctx, &mut env, one(Ld32StepM, &[0, 1, 15, 4]));
        assert_eq!((ctx.m[0], ctx.read_m(15)), (77, 0));
        // ARF loads are worker-only; MRF loads run on the supervisor too.
        let mut sup = supervisor();
        sup.m[1] = BASE;
        assert!(matches!(
            traps(&mut sup, &mut env, one(Ld64, &[0, 1, 15, 0])),
            TrapKind::WrongContext { .. }
        ));
        ok(&mut sup, &mut env, one(Ld32M, &[0, 1, 15, 0]));
        assert_eq!(sup.m[0], 77);
    }

    /// A sparse gather as PopLibs' `SparseDenseMatMulElementWise_*` writes it: the first delta
    /// loaded with `ldz16step`, then each `ldd16*` loads the element at the current delta and
    /// fetches the next one. The reference walks the delta list by hand.
    #[test]
    fn ldd16_gathers_along_a_delta_list() {
        let deltas: [u16; 6] = [0x18, 0x0, 0x40, 0x8, 0x30, 0x20];
        let list = 0x6_0000;
        for (op, size) in [(Ldd16a32, 4usize), (Ldd16a64, 8), (Ldd16b16, 2)] {
            let mut env = TestEnv::new();
            for (k, &d) in deltas.iter().enumerate() {
                env.write_bytes(list + 2 * k as u32, &d.to_le_bytes());
            }
            for k in 0..0x50u32 {
                env.write_bytes(BASE + k, &[(k as u8).wrapping_mul(37) ^ 0x5a]);
            }
            let mut ctx = worker();
            ctx.m[4] = list + 2; // the next delta
            ctx.m[2] = BASE;
            ctx.m[5] = u32::from(deltas[0]) | 0xabcd_0000; // only the low 16 bits count
            for k in 0..deltas.len() - 1 {
                ok(&mut ctx, &mut env, one(op, &[0, 4, 2, 5]));
                let ea = BASE + u32::from(deltas[k]);
                let data = env.read_bytes(ea, size).to_vec();
                let expected: u64 = match size {
                    2 => {
                        let h = u16::from_le_bytes([data[0], data[1]]) as u64;
                        h | h << 16
                    }
                    4 => u32::from_le_bytes(data[..4].try_into().unwrap()) as u64,
                    _ => u64::from_le_bytes(data[..8].try_into().unwrap()),
                };
                let got = if size == 8 {
                    ctx.read_a64(0)
                } else {
                    ctx.a[0] as u64
                };
                assert_eq!(got, expected, "{op:?} element {k}");
                assert_eq!(ctx.m[5], u32::from(deltas[k + 1]), "{op:?} delta {k}");
                assert_eq!(ctx.m[4], list + 4 + 2 * k as u32, "{op:?} pointer {k}");
            }
        }
    }

    #[test]
    fn ldd16_traps_on_a_shared_pointer_and_delta_and_on_misalignment() {
        let mut env = TestEnv::new();
        let mut ctx = worker();
        ctx.m[2] = BASE;
        ctx.m[4] = 0x6_0000;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ldd16a32, &[0, 4, 2, 4])),
            TrapKind::InvalidOperation { .. }
        ));
        ctx.m[5] = 2; // a 64-bit load at base + 2
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ldd16a64, &[0, 4, 2, 5])),
            TrapKind::Memory(_)
        ));
        ctx.m[5] = 0;
        ctx.m[4] = 0x6_0001; // an odd delta pointer
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ldd16b16, &[0, 4, 2, 5])),
            TrapKind::Memory(_)
        ));
    }
}
