//! Integer (MRF) instructions: immediates, moves, wrapping arithmetic, logic, shifts, compares and `atom`.
//!
//! Rules (row summaries of the instruction table): add, sub and mul wrap; shift amounts are
//! taken `& 31`; `shr` is logical and `shrs` arithmetic; `min`, `max` and `cmpslt` are signed,
//! `cmpult` unsigned; compares give 1 or 0. Immediates arrive from the decoder already
//! sign-extended (simm16) or zero-extended (zimm16), so one operation serves both forms.
//! `abs` of a signed word wraps (|−2^31| = −2^31) \[A\]; `popc` counts set bits \[C\];
//! `movnz $mD, $mC, $mS` copies `$mS` into `$mD` when `$mC` ≠ 0 and leaves `$mD` alone
//! otherwise \[I\] (the operand order of the public `movz` and of LLVM's `select` lowering in
//! the CodeGen tests; PopLibs' `select_bool.S` relies on it).

use super::regs::write_m;
use super::state::ContextState;
use crate::inst::Inst;

/// `$mD = zimm20` (`setzi`).
#[inline]
pub(super) fn setzi(inst: &Inst, ctx: &mut ContextState) {
    write_m(ctx, inst.reg(0), inst.imm(1));
}

/// `$mD = f($mS)` (`mov`, `swap16`).
#[inline]
pub(super) fn unary(inst: &Inst, ctx: &mut ContextState, f: impl Fn(u32) -> u32) {
    let value = f(ctx.read_m(inst.reg(1)));
    write_m(ctx, inst.reg(0), value);
}

/// `$mD = f($mA, $mB)`.
#[inline]
pub(super) fn reg_reg(inst: &Inst, ctx: &mut ContextState, f: impl Fn(u32, u32) -> u32) {
    let value = f(ctx.read_m(inst.reg(1)), ctx.read_m(inst.reg(2)));
    write_m(ctx, inst.reg(0), value);
}

/// `$mD = f($mA, imm)`, with the immediate as the decoder gives it (sign- or zero-extended).
#[inline]
pub(super) fn reg_imm(inst: &Inst, ctx: &mut ContextState, f: impl Fn(u32, u32) -> u32) {
    let value = f(ctx.read_m(inst.reg(1)), inst.imm(2));
    write_m(ctx, inst.reg(0), value);
}

/// `$mD = f(imm, $mS)` (the immediate written first: the public `sub $mD, simm16, $mS`, which
/// PopLibs uses as `sub $x, 32, $x` for 32 − x \[I\]).
#[inline]
pub(super) fn imm_reg(inst: &Inst, ctx: &mut ContextState, f: impl Fn(u32, u32) -> u32) {
    let value = f(inst.imm(1), ctx.read_m(inst.reg(2)));
    write_m(ctx, inst.reg(0), value);
}

/// `atom $mD, $aS`: the ARF bits, unconverted (a main-pipeline read of the ARF, so it sees the
/// registers as they were before the bundle).
#[inline]
pub(super) fn atom(inst: &Inst, ctx: &mut ContextState) {
    let value = ctx.read_a(inst.reg(1));
    write_m(ctx, inst.reg(0), value);
}

/// `movnz $mD, $mC, $mS`.
#[inline]
pub(super) fn movnz(inst: &Inst, ctx: &mut ContextState) {
    if ctx.read_m(inst.reg(1)) != 0 {
        let value = ctx.read_m(inst.reg(2));
        write_m(ctx, inst.reg(0), value);
    }
}

// ---- the operations ----

pub(super) fn abs(a: u32) -> u32 {
    (a as i32).wrapping_abs() as u32
}

pub(super) fn popc(a: u32) -> u32 {
    a.count_ones()
}

pub(super) fn shl(a: u32, b: u32) -> u32 {
    a << (b & 31)
}

pub(super) fn shr(a: u32, b: u32) -> u32 {
    a >> (b & 31)
}

pub(super) fn shrs(a: u32, b: u32) -> u32 {
    ((a as i32) >> (b & 31)) as u32
}

pub(super) fn min_signed(a: u32, b: u32) -> u32 {
    (a as i32).min(b as i32) as u32
}

pub(super) fn max_signed(a: u32, b: u32) -> u32 {
    (a as i32).max(b as i32) as u32
}

pub(super) fn cmpeq(a: u32, b: u32) -> u32 {
    (a == b) as u32
}

pub(super) fn cmpne(a: u32, b: u32) -> u32 {
    (a != b) as u32
}

pub(super) fn cmpslt(a: u32, b: u32) -> u32 {
    ((a as i32) < (b as i32)) as u32
}

pub(super) fn cmpult(a: u32, b: u32) -> u32 {
    (a < b) as u32
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::semantics::test_env::*;
    use crate::semantics::{ContextState, TrapKind};

    fn rr(op: Opcode, a: u32, b: u32) -> u32 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = a;
        ctx.m[2] = b;
        ok(&mut ctx, &mut env, one(op, &[0, 1, 2]));
        ctx.m[0]
    }

    fn ri(op: Opcode, a: u32, imm: i32) -> u32 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = a;
        ok(&mut ctx, &mut env, one(op, &[0, 1, imm as u32]));
        ctx.m[0]
    }

    #[test]
    fn arithmetic_wraps() {
        assert_eq!(rr(Add, 0xffff_ffff, 2), 1);
        assert_eq!(rr(Sub, 0, 1), 0xffff_ffff);
        assert_eq!(rr(Mul, 0x1_0000, 0x1_0000), 0);
        assert_eq!(rr(Mul, 0xffff_ffff, 3), 0xffff_fffd);
        assert_eq!(ri(AddImm, 5, -1), 4);
        assert_eq!(ri(AddImm, 0x7fff_ffff, 1), 0x8000_0000);
        assert_eq!(ri(SubImm, 5, -3), 8);
        assert_eq!(ri(MulImm, 7, -2), (-14i32) as u32);
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[2] = 5;
        ok(&mut ctx, &mut env, one(SubImmRev, &[0, 32, 2]));
        assert_eq!(ctx.m[0], 27, "sub $m0, 32, $m2 is 32 - $m2");
        ok(&mut ctx, &mut env, one(SubImmRev, &[0, (-1i32) as u32, 2]));
        assert_eq!(ctx.m[0], (-6i32) as u32);
    }

    #[test]
    fn logic() {
        assert_eq!(rr(And, 0xf0f0, 0xff00), 0xf000);
        assert_eq!(rr(Or, 0xf0f0, 0xff00), 0xfff0);
        assert_eq!(rr(Andc, 0xf0f0, 0xff00), 0x00f0);
        assert_eq!(rr(Xor, 0xf0f0, 0xff00), 0x0ff0);
        assert_eq!(ri(AndImmZ, 0xffff_ffff, 0xff00), 0xff00);
        assert_eq!(ri(AndImm, 0xffff_ffff, 0xf0f), 0xf0f);
        assert_eq!(ri(OrImm, 0x1_0000, 0x00ff), 0x1_00ff);
        assert_eq!(ri(AndcImm, 0xffff_ffff, 0xff00), 0xffff_00ff);
    }

    #[test]
    fn shifts_use_the_amount_mod_32() {
        assert_eq!(rr(Shl, 1, 33), 2);
        assert_eq!(rr(Shl, 1, 32), 1);
        assert_eq!(rr(Shr, 0x8000_0000, 31), 1);
        assert_eq!(rr(Shr, 0x8000_0000, 36), 0x0800_0000);
        assert_eq!(rr(Shrs, 0x8000_0000, 4), 0xf800_0000);
        assert_eq!(rr(Shrs, 0x4000_0000, 4), 0x0400_0000);
        assert_eq!(ri(ShlImm, 3, 35), 24);
        assert_eq!(ri(ShrImm, 0xf000_0000, 28), 0xf);
        assert_eq!(ri(ShrsImm, 0xf000_0000, 28), 0xffff_ffff);
    }

    #[test]
    fn min_max_and_compares() {
        assert_eq!(rr(Min, 0xffff_ffff, 1), 0xffff_ffff);
        assert_eq!(rr(Max, 0xffff_ffff, 1), 1);
        assert_eq!(ri(MinImm, 3, -5), (-5i32) as u32);
        assert_eq!(ri(MaxImm, 0x8000_0000, -5), (-5i32) as u32);
        // The zimm16 forms: the immediate is not sign-extended.
        assert_eq!(ri(MinImmZ, 0x1_0000, 0xffff), 0xffff);
        assert_eq!(ri(MinImmZ, 0xffff_ffff, 0xffff), 0xffff_ffff);
        assert_eq!(ri(AddImmZ, 0x10, 0x8000), 0x8010);
        assert_eq!(rr(Cmpeq, 7, 7), 1);
        assert_eq!(rr(Cmpne, 7, 7), 0);
        assert_eq!(rr(Cmpslt, 0xffff_ffff, 0), 1);
        assert_eq!(rr(Cmpult, 0xffff_ffff, 0), 0);
        assert_eq!(rr(Cmpult, 0, 1), 1);
        assert_eq!(ri(CmpeqImm, 0xffff_ffff, -1), 1);
        assert_eq!(ri(CmpneImm, 0xffff_ffff, -1), 0);
        assert_eq!(ri(CmpsltImm, 0xffff_fff0, -1), 1);
        assert_eq!(ri(CmpultImm, 0xffff_fff0, 0xffff), 0);
        assert_eq!(ri(CmpultImm, 0xfffe, 0xffff), 1);
    }

    #[test]
    fn abs_popc_and_movnz() {
        let un = |op: Opcode, a: u32| {
            let (mut ctx, mut env) = (worker(), TestEnv::new());
            ctx.m[1] = a;
            ok(&mut ctx, &mut env, one(op, &[0, 1]));
            ctx.m[0]
        };
        assert_eq!(un(Abs, (-5i32) as u32), 5);
        assert_eq!(un(Abs, 7), 7);
        assert_eq!(un(Abs, 0x8000_0000), 0x8000_0000);
        for a in [0u32, 1, 0x8000_0000, 0xffff_ffff, 0x1234_5678] {
            let bits = (0..32).filter(|i| (a >> i) & 1 == 1).count() as u32;
            assert_eq!(un(Popc, a), bits, "{a:#x}");
        }
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[0] = 11;
        ctx.m[2] = 22;
        ok(&mut ctx, &mut env, one(Movnz, &[0, 1, 2]));
        assert_eq!(ctx.m[0], 11, "condition 0: unchanged");
        ctx.m[1] = 0x8000_0000;
        ok(&mut ctx, &mut env, one(Movnz, &[0, 1, 2]));
        assert_eq!(ctx.m[0], 22, "any non-zero condition copies");
    }

    #[test]
    fn setzi_mov_and_nop() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ok(&mut ctx, &mut env, one(Setzi, &[3, 0xf_ffff]));
        ok(&mut ctx, &mut env, one(Mov, &[4, 3]));
        assert_eq!((ctx.m[3], ctx.m[4]), (0xf_ffff, 0xf_ffff));
        let before = ctx.clone();
        let outcome = ok(&mut ctx, &mut env, one(Nop, &[]));
        assert_eq!(outcome.next_pc, before.pc + 4);
        assert_eq!(ctx.pc, before.pc + 4);
        assert_eq!(ctx.m, before.m);
    }

    #[test]
    fn mzero_reads_zero_and_discards_writes() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = 9;
        ok(&mut ctx, &mut env, one(Setzi, &[15, 5]));
        assert_eq!(ctx.read_m(15), 0);
        ok(&mut ctx, &mut env, one(Add, &[0, 15, 1]));
        assert_eq!(ctx.m[0], 9);
    }

    #[test]
    fn the_supervisor_may_set_its_vertex_and_worker_base() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        ok(&mut sup, &mut env, one(Setzi, &[13, 0x5_0000]));
        ok(&mut sup, &mut env, one(Setzi, &[12, 0x6_0000]));
        assert_eq!((sup.m[13], sup.m[12]), (0x5_0000, 0x6_0000));
        assert_eq!(
            traps(&mut sup, &mut env, one(Setzi, &[14, 1])),
            TrapKind::ReadOnlyRegister { register: "$m14" }
        );
    }

    #[test]
    fn read_only_mrf_registers_trap_and_read_their_values() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.launch(CODE, 0x5_0000, 0x6_0000, 0);
        for (r, name) in [(12, "$m12"), (13, "$m13"), (14, "$m14")] {
            assert_eq!(
                traps(&mut ctx, &mut env, one(Setzi, &[r, 1])),
                TrapKind::ReadOnlyRegister { register: name }
            );
        }
        ok(&mut ctx, &mut env, one(Mov, &[0, 13]));
        ok(&mut ctx, &mut env, one(Mov, &[1, 12]));
        ok(&mut ctx, &mut env, one(Mov, &[2, 14]));
        assert_eq!(&ctx.m[..3], &[0x5_0000, 0x6_0000, 0]);
    }

    #[test]
    fn atom_copies_arf_bits_and_is_worker_only() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[3] = 0xbf80_0000;
        ok(&mut ctx, &mut env, one(Atom, &[0, 3]));
        assert_eq!(ctx.m[0], 0xbf80_0000);
        let mut sup: ContextState = supervisor();
        assert!(matches!(
            traps(&mut sup, &mut env, one(Atom, &[0, 3])),
            TrapKind::WrongContext { .. }
        ));
        // Integer instructions run in both contexts.
        ok(&mut sup, &mut env, one(AddImm, &[0, 15, 3]));
        assert_eq!(sup.m[0], 3);
    }
}
