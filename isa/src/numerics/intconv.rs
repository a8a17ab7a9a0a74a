//! f32 and 32-bit integers: `f32toi32`, `f32toui32`, `f32fromi32`, `f32fromui32`, and rounding an
//! f32 to an integral value (`f32int`).
//!
//! * f32 → integer rounds as `$FP_CTL.RND` says (ASM-DOC `f32toi32.md`); the model has only the
//!   default, round to nearest even (see the module doc of `numerics`). Out-of-range values
//!   saturate to the type's minimum or maximum and NaN gives 0. **\[assumption\]** (PopLibs
//!   clamps before converting, `inlineAssemblerCast.hpp`, so it never depends on this.)
//! * integer → f32 rounds to nearest even when the integer has more than 24 significant bits.
//!   **\[assumption\]**
//! * `f32int $aD, $aS, mode`: mode 3 rounds toward zero **\[public\]** (PopLibs' `TFPU_ROUND_ZERO`);
//!   mode 2 toward −∞ **\[inferred\]** (poprand's `Uniform.S` uses it for the floor that
//!   `$FP_CTL.RND` cannot give); 0 to nearest even and 1 toward +∞ **\[assumption\]**. NaN →
//!   canonical NaN; ±0 and ±inf are kept; a result of zero keeps the input's sign.

use super::float::F32_CANONICAL_NAN;

/// The rounding of `f32int`'s immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegralRounding {
    NearestEven,
    TowardPositive,
    TowardNegative,
    TowardZero,
}

impl IntegralRounding {
    /// The mode an `f32int` immediate names; `None` for 4..15, which the model does not define.
    pub fn from_immediate(imm: u32) -> Option<IntegralRounding> {
        match imm {
            0 => Some(IntegralRounding::NearestEven),
            1 => Some(IntegralRounding::TowardPositive),
            2 => Some(IntegralRounding::TowardNegative),
            3 => Some(IntegralRounding::TowardZero),
            _ => None,
        }
    }
}

/// `x` rounded to an integral f32 in `mode` (exact: an integral value always fits).
pub fn f32_round_integral(x: f32, mode: IntegralRounding) -> f32 {
    if x.is_nan() {
        return f32::from_bits(F32_CANONICAL_NAN);
    }
    match mode {
        IntegralRounding::NearestEven => x.round_ties_even(),
        IntegralRounding::TowardPositive => x.ceil(),
        IntegralRounding::TowardNegative => x.floor(),
        IntegralRounding::TowardZero => x.trunc(),
    }
}

/// f32 → i32 (two's-complement bits), nearest even, saturating; NaN → 0.
pub fn f32_to_i32(x: f32) -> u32 {
    // `as` saturates and maps NaN to 0; the value is integral, so no second rounding happens.
    x.round_ties_even() as i32 as u32
}

/// f32 → u32, nearest even, saturating (negative values → 0); NaN → 0.
pub fn f32_to_u32(x: f32) -> u32 {
    x.round_ties_even() as u32
}

/// i32 (two's-complement bits) → f32, nearest even.
pub fn i32_to_f32(bits: u32) -> f32 {
    bits as i32 as f32
}

/// u32 → f32, nearest even.
pub fn u32_to_f32(value: u32) -> f32 {
    value as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-half-even on exact values, written out: the integer part below and above, the
    /// distance to each, ties to the even one.
    fn nearest_even_reference(x: f64) -> f64 {
        let below = x.floor();
        let (down, up) = (x - below, below + 1.0 - x);
        if down < up || (down == up && below % 2.0 == 0.0) {
            below
        } else {
            below + 1.0
        }
    }

    #[test]
    fn every_rounding_on_halves_signs_and_edges() {
        use IntegralRounding::*;
        let cases: [(f32, [f32; 4]); 8] = [
            (2.5, [2.0, 3.0, 2.0, 2.0]),
            (3.5, [4.0, 4.0, 3.0, 3.0]),
            (-2.5, [-2.0, -2.0, -3.0, -2.0]),
            (-0.3, [-0.0, -0.0, -1.0, -0.0]),
            (0.7, [1.0, 1.0, 0.0, 0.0]),
            (8388609.0, [8388609.0; 4]),
            (f32::INFINITY, [f32::INFINITY; 4]),
            (-0.0, [-0.0; 4]),
        ];
        for (x, expected) in cases {
            for (mode, want) in [NearestEven, TowardPositive, TowardNegative, TowardZero]
                .into_iter()
                .zip(expected)
            {
                let got = f32_round_integral(x, mode);
                assert_eq!(got.to_bits(), want.to_bits(), "{x} {mode:?}");
            }
        }
        let nan = f32_round_integral(f32::from_bits(0xffc0_0001), TowardZero);
        assert_eq!(nan.to_bits(), F32_CANONICAL_NAN);
        assert_eq!(IntegralRounding::from_immediate(4), None);
    }

    #[test]
    fn conversions_round_to_nearest_even_and_saturate() {
        for bits in (0..=u32::MAX).step_by(65_537) {
            let x = f32::from_bits(bits);
            if x.is_finite() && x.abs() < 2.0e9 {
                let want = nearest_even_reference(x as f64) as i64;
                assert_eq!(f32_to_i32(x) as i32 as i64, want, "{x}");
                assert_eq!(f32_to_u32(x) as i64, want.max(0), "{x}");
            }
        }
        assert_eq!(f32_to_i32(3.0e9), i32::MAX as u32);
        assert_eq!(f32_to_i32(-3.0e9), i32::MIN as u32);
        assert_eq!(f32_to_i32(f32::NAN), 0);
        assert_eq!(f32_to_u32(-1.0), 0);
        assert_eq!(f32_to_u32(5.0e9), u32::MAX);
        assert_eq!(f32_to_u32(f32::NEG_INFINITY), 0);
        // 2^24 + 1 is not an f32: it rounds to the even neighbour 2^24.
        assert_eq!(u32_to_f32(16_777_217), 16_777_216.0);
        assert_eq!(u32_to_f32(16_777_219), 16_777_220.0);
        assert_eq!(u32_to_f32(u32::MAX), 4_294_967_296.0);
        assert_eq!(i32_to_f32(-16_777_219i32 as u32), -16_777_220.0);
    }
}
