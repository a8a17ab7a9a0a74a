//! Broadcast first sources (aux): `f16v2*`/`f16v4*` with `$aS:BL` or `$aS:BU` (the low or high
//! half of one register stands for every f16 lane of the first source) and `f32v2*` with
//! `$aS:B` (one register's word stands for both f32 lanes), for add, sub, mul and the compares.
//!
//! \[C\] isa.md §3.3 (ASM-DOC `f16v4add.md`, `f32v2cmpgt.md`: "`$aSrc0:BL` / `$aSrc0:BU`",
//! "`$aSrc0:B`") and LLVM-TD-W (the `_aaal`, `_aaau` and `_aaat` records, bits \[19:18\] = 10
//! for BL and B, 11 for BU). The lane operation is the plain row's; only the first source
//! changes.

use super::regs::{halves, halves4, join_halves, join_halves4, Pending};
use super::state::ContextState;
use crate::inst::Inst;

/// The half `high` picks of `$aS`.
fn half(ctx: &ContextState, r: usize, high: bool) -> u16 {
    halves(ctx.read_a(r))[high as usize]
}

/// `op $aD, $aS:BL|BU, $aT`: lane i = op(the half, `$aT` lane i).
pub(super) fn f16x2(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    high: bool,
    op: impl Fn(u16, u16) -> u16,
) {
    let a = half(ctx, inst.reg(1), high);
    let b = halves(ctx.read_a(inst.reg(2)));
    out.write_a(inst.reg(0), join_halves(b.map(|lane| op(a, lane))));
}

/// `op $aD:D+1, $aS:BL|BU, $aT:T+1`: lane i = op(the half, `$aT` lane i).
pub(super) fn f16x4(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    high: bool,
    op: impl Fn(u16, u16) -> u16,
) {
    let a = half(ctx, inst.reg(1), high);
    let b = halves4(ctx.read_a64(inst.reg(2)));
    out.write_a64(inst.reg(0), join_halves4(b.map(|lane| op(a, lane))));
}

/// `op $aD:D+1, $aS:B, $aT:T+1`: lane i = op(`$aS`, `$aT` lane i), on 32-bit patterns.
pub(super) fn f32x2(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    op: impl Fn(u32, u32) -> u32,
) {
    let a = ctx.read_a(inst.reg(1));
    let b = ctx.read_a64(inst.reg(2));
    let (lo, hi) = (op(a, b as u32), op(a, (b >> 32) as u32));
    out.write_a64(inst.reg(0), lo as u64 | (hi as u64) << 32);
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::inst::OperandKind;
    use crate::semantics::test_env::*;
    use crate::table::Basis;
    use proptest::prelude::*;

    /// Every broadcast row with the plain row it is the broadcast form of.
    fn pairs() -> Vec<(Opcode, Opcode)> {
        let plain = |mnemonic: &str| {
            Opcode::all()
                .find(|op| {
                    let d = op.desc();
                    d.mnemonic == mnemonic
                        && d.operands.iter().all(|o| o.kind.register_file().is_some())
                        && d.operands.len() == 3
                        && d.encoding_basis == Basis::Confirmed
                        && d.value & 0x000c_0000 == 0
                })
                .unwrap_or_else(|| panic!("no plain row for {mnemonic}"))
        };
        Opcode::all()
            .filter(|op| op.desc().operands.iter().any(|o| o.kind.is_broadcast()))
            .map(|op| (op, plain(op.desc().mnemonic)))
            .collect()
    }

    // The specification: the broadcast form computes what the plain form computes when the
    // first source is the broadcast register written out in full.
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn a_broadcast_source_is_the_plain_source_with_the_lane_repeated(
            s in any::<u32>(), t in any::<u64>()
        ) {
            for (broadcast, plain) in pairs() {
                let desc = broadcast.desc();
                let kind = desc.operands[1].kind;
                let lane = if kind == OperandKind::ABroadcastLo {
                    (s & 0xffff) * 0x1_0001
                } else if kind == OperandKind::ABroadcastHi {
                    (s >> 16) * 0x1_0001
                } else {
                    s
                };
                let repeated = lane as u64 * 0x1_0000_0001;
                let mut ctx = worker();
                ctx.a[3] = s;
                ctx.write_a64(4, t);
                ok(&mut ctx, &mut TestEnv::new(), one(broadcast, &[0, 3, 4]));
                let got = ctx.read_a64(0);
                let mut reference = worker();
                reference.write_a64(2, repeated);
                reference.write_a64(4, t);
                ok(&mut reference, &mut TestEnv::new(), one(plain, &[0, 2, 4]));
                let want = reference.read_a64(0);
                if desc.mnemonic.starts_with("f16v2") {
                    prop_assert_eq!(got as u32, want as u32, "{:?}", broadcast);
                } else {
                    prop_assert_eq!(got, want, "{:?}", broadcast);
                }
            }
        }
    }

    #[test]
    fn every_lane_op_has_both_halves_and_f32_has_a_word_broadcast() {
        let pairs = pairs();
        assert_eq!(pairs.len(), 9 * 2 + 9 * 2 + 9);
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        // f16v4mul $a0:1, $a3:BU, $a4:5 with $a3 = {1.0, 2.0}: every lane doubled.
        ctx.a[3] = 0x4000_3c00;
        ctx.write_a64(4, 0x4400_4200_4000_3c00); // 1, 2, 3, 4
        ok(&mut ctx, &mut env, one(F16v4mulBu, &[0, 3, 4]));
        assert_eq!(ctx.read_a64(0), 0x4800_4600_4400_4000); // 2, 4, 6, 8
        ok(&mut ctx, &mut env, one(F16v4mulBl, &[0, 3, 4]));
        assert_eq!(ctx.read_a64(0), 0x4400_4200_4000_3c00);
        ctx.a[3] = 2.0f32.to_bits();
        ctx.write_a64(4, (3.0f32.to_bits() as u64) << 32 | 1.0f32.to_bits() as u64);
        ok(&mut ctx, &mut env, one(F32v2cmpgtB, &[0, 3, 4]));
        assert_eq!(ctx.read_a64(0), 0x0000_0000_ffff_ffff);
    }
}
