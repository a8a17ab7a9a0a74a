//! Bitwise logic on the ARF (aux): `and`, `andc`, `or`, `not` on 32-bit registers and `and64`,
//! `andc64`, `or64`, `not64` on pairs, with the register, zero-extended (`zimm12`) and
//! zero-tailed (`immz12`, value bits \[31:20\]) immediate forms; and `xnor` on the MRF (main).
//!
//! Behaviour \[C\] (ASM-DOC `and.md`, `andc.md`, `or.md`, `not.md`, `*64.md`, `xnor.md`): plain
//! bitwise operations, no flags. `andc` is `a & !b`. The immediate arrives already widened by
//! the decoder (a zero-tailed immediate as `imm12 << 20`), so one operation serves every form.

/// `a & b`.
pub(super) fn and(a: u32, b: u32) -> u32 {
    a & b
}

/// `a & !b`.
pub(super) fn andc(a: u32, b: u32) -> u32 {
    a & !b
}

/// `a | b`.
pub(super) fn or(a: u32, b: u32) -> u32 {
    a | b
}

/// `!a`.
pub(super) fn not(a: u32) -> u32 {
    !a
}

/// `!(a ^ b)`.
pub(super) fn xnor(a: u32, b: u32) -> u32 {
    !(a ^ b)
}

/// `a & b` on a pair.
pub(super) fn and64(a: u64, b: u64) -> u64 {
    a & b
}

/// `a & !b` on a pair.
pub(super) fn andc64(a: u64, b: u64) -> u64 {
    a & !b
}

/// `a | b` on a pair.
pub(super) fn or64(a: u64, b: u64) -> u64 {
    a | b
}

/// `!a` on a pair.
pub(super) fn not64(a: u64) -> u64 {
    !a
}

#[cfg(test)]
mod tests {
    use crate::inst::emit::{decode, encode};
    use crate::inst::Opcode::{self, *};
    use crate::semantics::test_env::*;
    use proptest::prelude::*;

    /// The specification, bit by bit: result bit i is `bit(a_i, b_i)`.
    fn reference(bit: fn(bool, bool) -> bool, a: u64, b: u64, width: u32) -> u64 {
        (0..width).fold(0, |out, i| {
            let (x, y) = ((a >> i) & 1 == 1, (b >> i) & 1 == 1);
            out | (bit(x, y) as u64) << i
        })
    }

    const AND: fn(bool, bool) -> bool = |x, y| x && y;
    const ANDC: fn(bool, bool) -> bool = |x, y| x && !y;
    const OR: fn(bool, bool) -> bool = |x, y| x || y;
    const NOT: fn(bool, bool) -> bool = |x, _| !x;
    const XNOR: fn(bool, bool) -> bool = |x, y| x == y;

    fn aux32(op: Opcode, a: u32, b: u32) -> u32 {
        let mut ctx = worker();
        ctx.a[1] = a;
        ctx.a[2] = b;
        let operands: &[u32] = if op == NotA { &[0, 1] } else { &[0, 1, 2] };
        ok(&mut ctx, &mut TestEnv::new(), one(op, operands));
        ctx.a[0]
    }

    fn aux64(op: Opcode, a: u64, b: u64) -> u64 {
        let mut ctx = worker();
        ctx.write_a64(2, a);
        ctx.write_a64(4, b);
        let operands: &[u32] = if op == Not64 { &[0, 2] } else { &[0, 2, 4] };
        ok(&mut ctx, &mut TestEnv::new(), one(op, operands));
        ctx.read_a64(0)
    }

    /// `op $d, $s, imm` in either pipeline (the immediate is the operand value, already widened).
    fn with_imm(op: Opcode, a: u32, imm: u32) -> u32 {
        let mut ctx = worker();
        if op.desc().pipe == crate::table::Pipe::Aux {
            ctx.a[1] = a;
            ok(&mut ctx, &mut TestEnv::new(), one(op, &[0, 1, imm]));
            ctx.a[0]
        } else {
            ctx.m[1] = a;
            ok(&mut ctx, &mut TestEnv::new(), one(op, &[0, 1, imm]));
            ctx.m[0]
        }
    }

    proptest! {
        #[test]
        fn registers_match_the_bitwise_reference(a in any::<u64>(), b in any::<u64>()) {
            let (a32, b32) = (a as u32, b as u32);
            for (op, bit) in [(AndA, AND), (AndcA, ANDC), (OrA, OR), (NotA, NOT)] {
                prop_assert_eq!(aux32(op, a32, b32) as u64, reference(bit, a, b, 32), "{:?}", op);
            }
            for (op, bit) in [(And64, AND), (Andc64, ANDC), (Or64, OR), (Not64, NOT)] {
                prop_assert_eq!(aux64(op, a, b), reference(bit, a, b, 64), "{:?}", op);
            }
            let mut ctx = worker();
            ctx.m[1] = a32;
            ctx.m[2] = b32;
            ok(&mut ctx, &mut TestEnv::new(), one(Xnor, &[0, 1, 2]));
            prop_assert_eq!(ctx.m[0] as u64, reference(XNOR, a, b, 32));
        }

        #[test]
        fn immediates_are_zero_extended_or_zero_tailed(a in any::<u32>(), imm in 0u32..4096) {
            for (op, bit) in [(AndImmA, AND), (AndcImmA, ANDC), (OrImmA, OR)] {
                let expected = reference(bit, a as u64, imm as u64, 32);
                prop_assert_eq!(with_imm(op, a, imm) as u64, expected, "{:?}", op);
            }
            for (op, bit) in [(AndImmHiA, AND), (AndcImmHiA, ANDC), (OrImmHiA, OR), (OrImmHi, OR)] {
                let expected = reference(bit, a as u64, (imm as u64) << 20, 32);
                prop_assert_eq!(with_imm(op, a, imm << 20) as u64, expected, "{:?}", op);
            }
        }
    }

    #[test]
    fn zero_tailed_immediates_encode_their_top_twelve_bits() {
        let inst = i(OrImmHiA, &[0, 15, 0x3f80_0000]);
        let word = encode(&inst).unwrap();
        assert_eq!(word & 0xfff, 0x3f8);
        assert_eq!(decode(word).unwrap(), inst);
        assert!(encode(&i(OrImmHiA, &[0, 15, 0x3f80_0001])).is_err());
        // `or $a0, $azero, 0x3f800000` loads 1.0f.
        assert_eq!(with_imm(OrImmHiA, 0, 0x3f80_0000), 1.0f32.to_bits());
    }

    #[test]
    fn azero_reads_zero_and_azeros_discards() {
        let mut ctx = worker();
        ctx.write_a64(2, u64::MAX);
        ok(&mut ctx, &mut TestEnv::new(), one(Or64, &[0, 2, 14]));
        assert_eq!(ctx.read_a64(0), u64::MAX);
        ok(&mut ctx, &mut TestEnv::new(), one(Not64, &[14, 14]));
        assert_eq!((ctx.read_a(14), ctx.read_a(15)), (0, 0));
        ok(&mut ctx, &mut TestEnv::new(), one(NotA, &[1, 15]));
        assert_eq!(ctx.a[1], u32::MAX);
    }
}
