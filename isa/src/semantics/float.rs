//! Lane-wise f16/f32 arithmetic, compares and transcendentals (aux): adapters that lift the
//! scalar functions of [`crate::numerics`] to register shapes.
//!
//! All rounding, NaN and compare-mask rules live in `numerics`; this file only places lanes.
//! A 32-bit register holds one f32 or two f16 (lane 0 = bits \[15:0\]); a pair holds two f32
//! (low register first) or four f16 (lane i = bits \[16i+15:16i\]).

use super::regs::{halves, halves4, join_halves, join_halves4, join_singles, singles};

/// 2 x f16 in one register.
pub(super) fn f16x2(op: impl Fn(u16, u16) -> u16) -> impl Fn(u32, u32) -> u32 {
    move |a, b| {
        let (a, b) = (halves(a), halves(b));
        join_halves([op(a[0], b[0]), op(a[1], b[1])])
    }
}

/// 4 x f16 in a pair.
pub(super) fn f16x4(op: impl Fn(u16, u16) -> u16) -> impl Fn(u64, u64) -> u64 {
    move |a, b| {
        let (a, b) = (halves4(a), halves4(b));
        join_halves4([
            op(a[0], b[0]),
            op(a[1], b[1]),
            op(a[2], b[2]),
            op(a[3], b[3]),
        ])
    }
}

/// One f32 with an f32 result.
pub(super) fn f32x1(op: impl Fn(f32, f32) -> f32) -> impl Fn(u32, u32) -> u32 {
    move |a, b| op(f32::from_bits(a), f32::from_bits(b)).to_bits()
}

/// One f32 compare (the mask comes from `numerics`).
pub(super) fn f32cmp(op: impl Fn(f32, f32) -> u32) -> impl Fn(u32, u32) -> u32 {
    move |a, b| op(f32::from_bits(a), f32::from_bits(b))
}

/// 2 x f32 in a pair.
pub(super) fn f32x2(op: impl Fn(f32, f32) -> f32) -> impl Fn(u64, u64) -> u64 {
    move |a, b| {
        let (a, b) = (singles(a), singles(b));
        join_singles([op(a[0], b[0]), op(a[1], b[1])])
    }
}

/// Unary f32.
pub(super) fn f32u(op: impl Fn(f32) -> f32) -> impl Fn(u32) -> u32 {
    move |a| op(f32::from_bits(a)).to_bits()
}

/// Unary 2 x f16.
pub(super) fn f16x2u(op: impl Fn(u16) -> u16) -> impl Fn(u32) -> u32 {
    move |a| {
        let a = halves(a);
        join_halves([op(a[0]), op(a[1])])
    }
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::numerics as nx;
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    fn h(x: f32) -> u16 {
        nx::f32_to_f16(x)
    }

    fn aux2(op: Opcode, a: u32, b: u32) -> u32 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[1] = a;
        ctx.a[2] = b;
        ok(&mut ctx, &mut env, one(op, &[0, 1, 2]));
        ctx.a[0]
    }

    fn aux4(op: Opcode, a: u64, b: u64) -> u64 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.write_a64(2, a);
        ctx.write_a64(4, b);
        ok(&mut ctx, &mut env, one(op, &[0, 2, 4]));
        ctx.read_a64(0)
    }

    fn v2(lo: f32, hi: f32) -> u32 {
        h(lo) as u32 | (h(hi) as u32) << 16
    }

    fn v4(l: [f32; 4]) -> u64 {
        v2(l[0], l[1]) as u64 | (v2(l[2], l[3]) as u64) << 32
    }

    fn f2(lo: f32, hi: f32) -> u64 {
        lo.to_bits() as u64 | (hi.to_bits() as u64) << 32
    }

    #[test]
    fn f16_lanes() {
        assert_eq!(aux2(F16v2add, v2(1.0, 2.0), v2(0.5, -2.0)), v2(1.5, 0.0));
        assert_eq!(aux2(F16v2sub, v2(1.0, 2.0), v2(0.5, -2.0)), v2(0.5, 4.0));
        assert_eq!(aux2(F16v2mul, v2(3.0, 2.0), v2(0.5, -2.0)), v2(1.5, -4.0));
        assert_eq!(aux2(F16v2max, v2(3.0, 2.0), v2(0.5, 5.0)), v2(3.0, 5.0));
        assert_eq!(aux2(F16v2min, v2(3.0, 2.0), v2(0.5, 5.0)), v2(0.5, 2.0));
        assert_eq!(aux2(F16v2cmplt, v2(1.0, 2.0), v2(2.0, 1.0)), 0x0000_ffff);
        assert_eq!(aux2(F16v2cmpge, v2(1.0, 2.0), v2(2.0, 1.0)), 0xffff_0000);
        assert_eq!(aux2(F16v2cmpeq, v2(1.0, 2.0), v2(1.0, 1.0)), 0x0000_ffff);
        assert_eq!(aux2(F16v2cmpne, v2(1.0, 2.0), v2(1.0, 1.0)), 0xffff_0000);
        assert_eq!(aux2(F16v2cmple, v2(1.0, 2.0), v2(1.0, 1.0)), 0x0000_ffff);
        assert_eq!(aux2(F16v2cmpgt, v2(1.0, 2.0), v2(1.0, 1.0)), 0xffff_0000);
        // Rounding comes from numerics: 2048 + 1 is a tie and rounds to even.
        assert_eq!(
            aux2(F16v2add, v2(2048.0, 0.0), v2(1.0, 0.0)),
            v2(2048.0, 0.0)
        );
        let a = [1.0, -2.0, 3.0, 65504.0];
        let b = [0.25, 0.5, -3.0, 65504.0];
        assert_eq!(
            aux4(F16v4add, v4(a), v4(b)),
            v4([1.25, -1.5, 0.0, f32::INFINITY])
        );
        assert_eq!(aux4(F16v4sub, v4(a), v4(b)), v4([0.75, -2.5, 6.0, 0.0]));
        assert_eq!(
            aux4(F16v4mul, v4(a), v4(b)),
            v4([0.25, -1.0, -9.0, f32::INFINITY])
        );
        assert_eq!(aux4(F16v4max, v4(a), v4(b)), v4([1.0, 0.5, 3.0, 65504.0]));
        assert_eq!(
            aux4(F16v4min, v4(a), v4(b)),
            v4([0.25, -2.0, -3.0, 65504.0])
        );
        assert_eq!(aux4(F16v4cmpeq, v4(a), v4(b)), 0xffff_0000_0000_0000);
        assert_eq!(aux4(F16v4cmpne, v4(a), v4(b)), 0x0000_ffff_ffff_ffff);
        assert_eq!(aux4(F16v4cmplt, v4(a), v4(b)), 0x0000_0000_ffff_0000);
        assert_eq!(aux4(F16v4cmple, v4(a), v4(b)), 0xffff_0000_ffff_0000);
        assert_eq!(aux4(F16v4cmpgt, v4(a), v4(b)), 0x0000_ffff_0000_ffff);
        assert_eq!(aux4(F16v4cmpge, v4(a), v4(b)), 0xffff_ffff_0000_ffff);
    }

    #[test]
    fn f32_scalars_and_pairs() {
        let b = |x: f32| x.to_bits();
        assert_eq!(aux2(F32add, b(1.5), b(2.25)), b(3.75));
        assert_eq!(aux2(F32sub, b(1.5), b(2.25)), b(-0.75));
        assert_eq!(aux2(F32mul, b(1.5), b(-2.0)), b(-3.0));
        assert_eq!(aux2(F32max, b(1.5), b(-2.0)), b(1.5));
        assert_eq!(aux2(F32min, b(1.5), b(-2.0)), b(-2.0));
        assert_eq!(aux2(F32cmpeq, b(1.5), b(1.5)), 0xffff_ffff);
        assert_eq!(aux2(F32cmplt, b(1.5), b(1.5)), 0);
        assert_eq!(aux2(F32div, b(1.0), b(3.0)), b(1.0 / 3.0));
        assert_eq!(aux2(F32div, b(-1.0), b(0.0)), b(f32::NEG_INFINITY));
        assert_eq!(aux2(F32div, b(0.0), b(0.0)), nx::F32_CANONICAL_NAN);
        assert_eq!(
            aux2(F32add, b(f32::INFINITY), b(f32::NEG_INFINITY)),
            nx::F32_CANONICAL_NAN
        );
        assert_eq!(aux4(F32v2add, f2(1.0, 2.0), f2(3.0, 4.0)), f2(4.0, 6.0));
        assert_eq!(aux4(F32v2sub, f2(1.0, 2.0), f2(3.0, 4.0)), f2(-2.0, -2.0));
        assert_eq!(aux4(F32v2mul, f2(1.0, 2.0), f2(3.0, 4.0)), f2(3.0, 8.0));
        assert_eq!(aux4(F32v2max, f2(1.0, 5.0), f2(3.0, 4.0)), f2(3.0, 5.0));
        assert_eq!(aux4(F32v2min, f2(1.0, 5.0), f2(3.0, 4.0)), f2(1.0, 4.0));
    }

    #[test]
    fn transcendentals_come_from_numerics() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for x in [-3.5f32, -0.0, 0.1, 1.0, 7.25, 100.0] {
            ctx.a[1] = x.to_bits();
            ctx.a[2] = v2(x, -x);
            for (op, f) in [
                (F32exp, nx::f32_exp as fn(f32) -> f32),
                (F32tanh, nx::f32_tanh),
                (F32oorx, nx::f32_oorx),
                (F32sqrt, nx::f32_sqrt),
                (F32oox, nx::f32_oox),
                (F32sigm, nx::f32_sigm),
                (F32ln, nx::f32_ln),
            ] {
                ok(&mut ctx, &mut env, one(op, &[0, 1]));
                assert_eq!(ctx.a[0], f(x).to_bits(), "{op:?}({x})");
            }
            ok(&mut ctx, &mut env, one(F16v2exp, &[0, 2]));
            assert_eq!(
                ctx.a[0],
                nx::f16_exp(h(x)) as u32 | (nx::f16_exp(h(-x)) as u32) << 16
            );
            ok(&mut ctx, &mut env, one(F16v2tanh, &[0, 2]));
            assert_eq!(
                ctx.a[0],
                nx::f16_tanh(h(x)) as u32 | (nx::f16_tanh(h(-x)) as u32) << 16
            );
            for (op, f) in [
                (F16v2sigm, nx::f16_sigm as fn(u16) -> u16),
                (F16v2ln, nx::f16_ln),
            ] {
                ok(&mut ctx, &mut env, one(op, &[0, 2]));
                assert_eq!(ctx.a[0], f(h(x)) as u32 | (f(h(-x)) as u32) << 16, "{op:?}");
            }
        }
    }

    #[test]
    fn sigmoid_and_ln_values() {
        assert_eq!(nx::f32_sigm(0.0), 0.5);
        assert_eq!(nx::f32_sigm(f32::INFINITY), 1.0);
        assert_eq!(nx::f32_sigm(f32::NEG_INFINITY), 0.0);
        for x in [0.1f32, 1.0, 3.5, 20.0] {
            let (p, q) = (nx::f32_sigm(x) as f64, nx::f32_sigm(-x) as f64);
            assert!((p + q - 1.0).abs() < 1e-7, "{x}");
        }
        assert_eq!(nx::f32_ln(1.0), 0.0);
        assert_eq!(nx::f32_ln(0.0), f32::NEG_INFINITY);
        assert_eq!(nx::f32_ln(-1.0).to_bits(), nx::F32_CANONICAL_NAN);
        // The f32 nearest e is below it: ln = 1 − 3.04e-8, which rounds to 1 − 2^-24.
        assert_eq!(nx::f32_ln(std::f32::consts::E), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(nx::f16_sigm(0), h(0.5));
        assert_eq!(nx::f16_ln(h(1.0)), 0);
        assert_eq!(nx::f16_ln(0x8000), 0xfc00, "ln of -0 is -inf");
    }

    #[test]
    fn absadd_clears_both_signs_then_adds() {
        let b = |x: f32| x.to_bits();
        assert_eq!(aux2(F32absadd, b(-1.5), b(2.25)), b(3.75));
        assert_eq!(aux2(F32absadd, b(-0.0), b(-0.0)), b(0.0));
        assert_eq!(aux2(F32absadd, b(-f32::NAN), b(1.0)), nx::F32_CANONICAL_NAN);
        assert_eq!(
            aux4(F32v2absadd, f2(-1.0, 2.0), f2(-3.0, -4.0)),
            f2(4.0, 6.0)
        );
        assert_eq!(
            aux2(F16v2absadd, v2(-1.0, 2.0), v2(0.5, -2.0)),
            v2(1.5, 4.0)
        );
        assert_eq!(
            aux4(
                F16v4absadd,
                v4([-1.0, 2.0, -65504.0, 0.25]),
                v4([1.0, -2.0, -65504.0, 0.25])
            ),
            v4([2.0, 4.0, f32::INFINITY, 0.5])
        );
    }

    #[test]
    fn moves_zero_registers_and_context() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[3] = 0x1234;
        ok(&mut ctx, &mut env, one(MovA, &[4, 3]));
        ok(&mut ctx, &mut env, one(SetziA, &[5, 0xf_ffff]));
        assert_eq!((ctx.a[4], ctx.a[5]), (0x1234, 0xf_ffff));
        // $azero reads 0 and writes to it are discarded.
        ok(&mut ctx, &mut env, one(SetziA, &[15, 9]));
        ok(&mut ctx, &mut env, one(F32add, &[6, 15, 14]));
        assert_eq!((ctx.read_a(15), ctx.a[6]), (0, 0));
        let before = ctx.clone();
        ok(&mut ctx, &mut env, one(Fnop, &[]));
        assert_eq!(ctx.a, before.a);
        assert!(matches!(
            traps(&mut supervisor(), &mut env, one(Fnop, &[])),
            TrapKind::WrongContext { .. }
        ));
    }
}
