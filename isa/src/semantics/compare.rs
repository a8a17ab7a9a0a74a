//! Floating-point compares (aux): the lane shapes of `f32v2cmp*` (the scalar f32 and the f16
//! shapes are `float::f32cmp`, `float::f16x2`, `float::f16x4`), and the tests of every compare
//! row against a reference written from the specification.
//!
//! Specification (isa.md §3.3, the numerics module doc): IEEE 754 quiet predicates, so any NaN
//! operand makes every predicate false except "not equal", and +0 == −0; a true lane is all
//! ones (0xffff for f16, 0xffff_ffff for f32, PopLibs' `TFPU_FP16_TRUE`/`TFPU_FP32_TRUE`), a
//! false one zero.

use super::regs::singles;

/// 2 x f32 compares in a pair: each lane's mask in its own register.
pub(super) fn f32x2(op: impl Fn(f32, f32) -> u32) -> impl Fn(u64, u64) -> u64 {
    move |a, b| {
        let (a, b) = (singles(a), singles(b));
        op(a[0], b[0]) as u64 | (op(a[1], b[1]) as u64) << 32
    }
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::semantics::state::ContextState;
    use crate::semantics::test_env::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    /// A binary16 value decoded by hand from its fields; `None` for NaN.
    fn f16_value(h: u16) -> Option<f64> {
        let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
        let exponent = ((h >> 10) & 0x1f) as i32;
        let fraction = (h & 0x3ff) as f64;
        match exponent {
            0 => Some(sign * fraction * 2f64.powi(-24)),
            31 if fraction == 0.0 => Some(sign * f64::INFINITY),
            31 => None,
            e => Some(sign * (1024.0 + fraction) * 2f64.powi(e - 25)),
        }
    }

    /// A binary32 value decoded by hand from its fields; `None` for NaN.
    fn f32_value(bits: u32) -> Option<f64> {
        let sign = if bits >> 31 != 0 { -1.0 } else { 1.0 };
        let exponent = ((bits >> 23) & 0xff) as i32;
        let fraction = (bits & 0x7f_ffff) as f64;
        match exponent {
            0 => Some(sign * fraction * 2f64.powi(-149)),
            255 if fraction == 0.0 => Some(sign * f64::INFINITY),
            255 => None,
            e => Some(sign * (8_388_608.0 + fraction) * 2f64.powi(e - 150)),
        }
    }

    /// The predicate a compare row names, on an ordering (`None` = unordered).
    fn predicate(op: Opcode, order: Option<Ordering>) -> bool {
        let name = op.desc().mnemonic;
        let relation = &name[name.len() - 2..];
        match (relation, order) {
            ("ne", None) => true,
            (_, None) => false,
            ("eq", Some(o)) => o == Ordering::Equal,
            ("ne", Some(o)) => o != Ordering::Equal,
            ("lt", Some(o)) => o == Ordering::Less,
            ("le", Some(o)) => o != Ordering::Greater,
            ("gt", Some(o)) => o == Ordering::Greater,
            ("ge", Some(o)) => o != Ordering::Less,
            (other, _) => panic!("{name}: not a compare ({other})"),
        }
    }

    fn order(a: Option<f64>, b: Option<f64>) -> Option<Ordering> {
        a?.partial_cmp(&b?)
    }

    const F16V4: [Opcode; 6] = [
        F16v4cmpeq, F16v4cmpne, F16v4cmplt, F16v4cmple, F16v4cmpgt, F16v4cmpge,
    ];
    const F16V2: [Opcode; 6] = [
        F16v2cmpeq, F16v2cmpne, F16v2cmplt, F16v2cmple, F16v2cmpgt, F16v2cmpge,
    ];
    const F32: [Opcode; 6] = [F32cmpeq, F32cmpne, F32cmplt, F32cmple, F32cmpgt, F32cmpge];
    const F32V2: [Opcode; 6] = [
        F32v2cmpeq, F32v2cmpne, F32v2cmplt, F32v2cmple, F32v2cmpgt, F32v2cmpge,
    ];

    /// Second operands for the exhaustive runs: both zeros, the smallest subnormals, one,
    /// the largest finite values, both infinities, quiet and signalling NaNs of both signs,
    /// and a spread of ordinary values.
    const F16_PARTNERS: [u16; 24] = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x7bff, 0xfbff,
        0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x4248, 0xc248, 0x1234, 0x5678, 0x8abc,
        0xdef0, 0x3555,
    ];

    fn run(ctx: &mut ContextState, env: &mut TestEnv, op: Opcode) {
        ok(ctx, env, one(op, &[0, 2, 4]));
    }

    /// Every f16 pattern against every partner, in every lane of `f16v4cmp*` (each lane sees a
    /// different partner), and in both lanes of `f16v2cmp*`.
    #[test]
    fn f16_compares_of_every_pattern() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for a in 0..=u16::MAX {
            let x = f16_value(a);
            for chunk in F16_PARTNERS.chunks(4) {
                let lanes = |v: [u16; 4]| {
                    v.iter()
                        .enumerate()
                        .fold(0u64, |w, (i, &h)| w | (h as u64) << (16 * i))
                };
                ctx.write_a64(2, lanes([a; 4]));
                ctx.write_a64(4, lanes([chunk[0], chunk[1], chunk[2], chunk[3]]));
                for op in F16V4 {
                    run(&mut ctx, &mut env, op);
                    let got = ctx.read_a64(0);
                    for (lane, &b) in chunk.iter().enumerate() {
                        let want = predicate(op, order(x, f16_value(b)));
                        let mask = (got >> (16 * lane)) & 0xffff;
                        assert_eq!(
                            mask,
                            if want { 0xffff } else { 0 },
                            "{op:?} {a:#06x} {b:#06x}"
                        );
                    }
                }
            }
            ctx.a[2] = a as u32 | (a as u32) << 16;
            ctx.a[4] = 0x7c00 | 0x8000 << 16;
            for op in F16V2 {
                run(&mut ctx, &mut env, op);
                for (lane, b) in [0x7c00u16, 0x8000].into_iter().enumerate() {
                    let want = predicate(op, order(x, f16_value(b)));
                    let mask = (ctx.a[0] >> (16 * lane)) & 0xffff;
                    assert_eq!(
                        mask,
                        if want { 0xffff } else { 0 },
                        "{op:?} {a:#06x} {b:#06x}"
                    );
                }
            }
        }
    }

    fn f32_bits() -> impl Strategy<Value = u32> {
        prop_oneof![
            any::<u32>(),
            prop::sample::select(vec![
                0u32,
                0x8000_0000,
                1,
                0x8000_0001,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                0xffc0_0001,
                0x7f80_0001,
                0x3f80_0000,
                0x7f7f_ffff,
            ]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn f32_compares_match_the_reference(
            a in f32_bits(), b in f32_bits(), c in f32_bits(), d in f32_bits(), same in any::<bool>()
        ) {
            // Equal operands are rare at random: make the second lane a copy half of the time.
            let d = if same { c } else { d };
            let (mut ctx, mut env) = (worker(), TestEnv::new());
            ctx.a[2] = a;
            ctx.a[4] = b;
            for op in F32 {
                run(&mut ctx, &mut env, op);
                let want = predicate(op, order(f32_value(a), f32_value(b)));
                prop_assert_eq!(ctx.a[0], if want { u32::MAX } else { 0 }, "{:?}", op);
            }
            ctx.write_a64(2, a as u64 | (c as u64) << 32);
            ctx.write_a64(4, b as u64 | (d as u64) << 32);
            for op in F32V2 {
                run(&mut ctx, &mut env, op);
                for (lane, (x, y)) in [(a, b), (c, d)].into_iter().enumerate() {
                    let want = predicate(op, order(f32_value(x), f32_value(y)));
                    prop_assert_eq!(ctx.a[lane], if want { u32::MAX } else { 0 }, "{:?}", op);
                }
            }
        }
    }
}
