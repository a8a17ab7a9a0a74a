//! Clamps (aux): `f16v2clamp`, `f16v4clamp`, `f32clamp`, `f32v2clamp` — every lane of the first
//! source clamped to the limits of the second, min(max(x, lo), hi) ([`crate::numerics::f16_clamp`]).
//!
//! Operand shapes \[C\] (LLVM-TD-W): the limits are one register for the f16 forms (lo in
//! bits \[15:0\], hi in \[31:16\]) and a pair for the f32 forms (lo in the low register, hi in
//! the high one), whatever the width of the clamped value. Which half or register is the lower
//! limit \[I\]: PopLibs builds them that way (`HALF_MINUS_6_0 | HALF_6_0 << 16`, and
//! `FLOAT_CLAMP_0` = −12, `FLOAT_CLAMP_1` = 12 in the GeLU codelets).

use super::regs::{halves, halves4, join_halves, join_halves4, singles, Pending};
use super::state::ContextState;
use crate::inst::Inst;
use crate::numerics::{f16_clamp, f32_clamp};

/// `f16v2clamp $aD, $aX, $aLimits`.
pub(super) fn f16v2(x: u32, limits: u32) -> u32 {
    let [lo, hi] = halves(limits);
    let x = halves(x);
    join_halves([f16_clamp(x[0], lo, hi), f16_clamp(x[1], lo, hi)])
}

/// `f16v4clamp $aD:D+1, $aX:X+1, $aLimits`.
pub(super) fn f16v4(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let [lo, hi] = halves(ctx.read_a(inst.reg(2)));
    let x = halves4(ctx.read_a64(inst.reg(1)));
    out.write_a64(inst.reg(0), join_halves4(x.map(|h| f16_clamp(h, lo, hi))));
}

/// `f32clamp $aD, $aX, $aLimits:Limits+1`.
pub(super) fn f32(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let [lo, hi] = singles(ctx.read_a64(inst.reg(2)));
    let x = f32::from_bits(ctx.read_a(inst.reg(1)));
    out.write_a(inst.reg(0), f32_clamp(x, lo, hi).to_bits());
}

/// `f32v2clamp $aD:D+1, $aX:X+1, $aLimits:Limits+1`.
pub(super) fn f32v2(x: u64, limits: u64) -> u64 {
    let [lo, hi] = singles(limits);
    let x = singles(x);
    f32_clamp(x[0], lo, hi).to_bits() as u64 | (f32_clamp(x[1], lo, hi).to_bits() as u64) << 32
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::*;
    use crate::numerics::{f16_to_f32, F16_CANONICAL_NAN, F32_CANONICAL_NAN};
    use crate::semantics::test_env::*;
    use proptest::prelude::*;

    /// The specification on decoded values: NaN anywhere → NaN; else the value itself if it
    /// lies in [lo, hi], the nearer limit otherwise (hi when lo > hi, min being applied last);
    /// a zero result takes the sign the max/min rules give (+0 from max with a zero limit).
    fn reference(x: f64, lo: f64, hi: f64) -> f64 {
        if x.is_nan() || lo.is_nan() || hi.is_nan() {
            return f64::NAN;
        }
        let raised = if x < lo || (x == lo && x.is_sign_negative()) {
            lo
        } else {
            x
        };
        if raised > hi || (raised == hi && raised.is_sign_positive()) {
            hi
        } else {
            raised
        }
    }

    fn h(x: f32) -> u16 {
        crate::numerics::f32_to_f16(x)
    }

    /// Every f16 pattern, in all four lanes of `f16v4clamp` and both of `f16v2clamp`, against
    /// limit pairs that include signed zeros, infinities, NaN and an inverted pair.
    #[test]
    fn f16_clamps_of_every_pattern() {
        let limits = [
            (h(-6.0), h(6.0)),
            (0x0000, 0x3c00),
            (0x8000, 0x0000),
            (0xfc00, 0x7c00),
            (h(1.0), h(-1.0)),
            (0x0001, 0x03ff),
            (0x7e00, 0x3c00),
        ];
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (lo, hi) in limits {
            let (l, u) = (f16_to_f32(lo) as f64, f16_to_f32(hi) as f64);
            ctx.a[4] = lo as u32 | (hi as u32) << 16;
            for x in (0..=u16::MAX).step_by(4) {
                let lanes = [x, x + 1, x + 2, x + 3];
                ctx.write_a64(
                    2,
                    lanes
                        .iter()
                        .enumerate()
                        .fold(0, |w, (i, &v)| w | (v as u64) << (16 * i)),
                );
                ok(&mut ctx, &mut env, one(F16v4clamp, &[0, 2, 4]));
                let got = ctx.read_a64(0);
                ctx.a[6] = x as u32 | (x as u32 + 1) << 16;
                ok(&mut ctx, &mut env, one(F16v2clamp, &[1, 6, 4]));
                let got2 = ctx.a[1];
                for (lane, &v) in lanes.iter().enumerate() {
                    let want = reference(f16_to_f32(v) as f64, l, u);
                    let bits = ((got >> (16 * lane)) & 0xffff) as u16;
                    let expected = if want.is_nan() {
                        F16_CANONICAL_NAN
                    } else {
                        h(want as f32)
                    };
                    assert_eq!(bits, expected, "{v:#06x} in [{lo:#06x}, {hi:#06x}]");
                    if lane < 2 {
                        assert_eq!(
                            ((got2 >> (16 * lane)) & 0xffff) as u16,
                            expected,
                            "v2 {v:#06x}"
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn f32_clamps_match_the_reference(
            x in any::<u32>(), y in any::<u32>(), lo in -100.0f32..100.0, hi in -100.0f32..100.0, nan in 0u8..8
        ) {
            let (mut ctx, mut env) = (worker(), TestEnv::new());
            // Mostly ordinary values, sometimes a NaN limit.
            let lo = if nan == 0 { f32::NAN } else { lo };
            let (x, y) = (f32::from_bits(x) / 1.0e30, f32::from_bits(y));
            ctx.a[1] = x.to_bits();
            ctx.write_a64(2, x.to_bits() as u64 | (y.to_bits() as u64) << 32);
            ctx.write_a64(4, lo.to_bits() as u64 | (hi.to_bits() as u64) << 32);
            ok(&mut ctx, &mut env, one(F32clamp, &[0, 1, 4]));
            ok(&mut ctx, &mut env, one(F32v2clamp, &[6, 2, 4]));
            for (got, v) in [(ctx.a[0], x), (ctx.a[6], x), (ctx.a[7], y)] {
                let want = reference(v as f64, lo as f64, hi as f64);
                let expected = if want.is_nan() { F32_CANONICAL_NAN } else { (want as f32).to_bits() };
                prop_assert_eq!(got, expected, "{} in [{}, {}]", v, lo, hi);
            }
        }
    }
}
