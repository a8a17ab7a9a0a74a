//! The single round-to-nearest-even routine behind every narrowing conversion (f32/f64 → f16, f16 → FP8, FP8 → f16).
//!
//! Every conversion in this module is phrased the same way: the source value is an exact
//! `significand × 2^exponent` with an integer significand, and it is rounded *once* to a target
//! binary format. Keeping one routine means the overflow boundary, the subnormal handling and the
//! tie rule are decided in exactly one place, with integer arithmetic only (no host floating
//! point, so the result cannot depend on the host's FPU or flags).

/// A binary floating-point target format with a hidden leading bit and gradual underflow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TargetFormat {
    /// Number of stored fraction bits (the hidden bit is not counted).
    pub mantissa_bits: u32,
    /// Exponent bias: a normal code with exponent field `e` has scale `2^(e - bias)`.
    pub bias: i32,
    /// Largest exponent field that still encodes finite numbers (all mantissas finite).
    /// For IEEE formats this is `all-ones - 1`; for the FNUZ FP8 formats it is all-ones.
    pub max_exponent_field: u32,
}

/// IEEE binary16.
pub(crate) const F16_TARGET: TargetFormat = TargetFormat {
    mantissa_bits: 10,
    bias: 15,
    max_exponent_field: 30,
};

/// Outcome of rounding a non-negative magnitude to a target format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rounded {
    /// The value rounded to zero (sign handling is the caller's business).
    Zero,
    /// A finite, non-zero code, given by its fields.
    Finite {
        exponent_field: u32,
        mantissa_field: u32,
    },
    /// The value, rounded with an unbounded exponent range, is larger than the largest finite
    /// value. With ties-to-even this includes the exact midpoint between max and the next
    /// power of two (that midpoint rounds to the even neighbour, the power of two).
    Overflow,
}

/// Rounds the exact magnitude `significand × 2^exponent` to `target`, nearest, ties to even.
///
/// The rule is the IEEE 754 one: first round as if the exponent range were unbounded above
/// (but with the target's subnormal spacing below), then call it overflow if the rounded value
/// does not fit. This is what decides that e.g. 248 (midway between F143's 240 and the
/// unrepresentable 256) overflows while 247.9 becomes 240.
pub(crate) fn round_to_target(significand: u64, exponent: i32, target: TargetFormat) -> Rounded {
    if significand == 0 {
        return Rounded::Zero;
    }
    let p = target.mantissa_bits as i64;
    let min_normal_exponent = 1 - target.bias as i64;
    // Position of the leading one, so the value lies in [2^x, 2^(x+1)).
    let leading_bit = 63 - significand.leading_zeros() as i64;
    let value_exponent = leading_bit + exponent as i64;
    // The weight of the last kept bit: normal numbers keep p bits after the leading one;
    // below the normal range the spacing is fixed at the smallest subnormal.
    let quantum_exponent = value_exponent.max(min_normal_exponent) - p;
    let shift = quantum_exponent - exponent as i64;

    // `kept` counts units of 2^quantum_exponent; it is at most 2^(p+1) after rounding.
    let kept: u64 = if shift <= 0 {
        // Exact: shift ≥ -p because quantum_exponent ≥ value_exponent - p.
        significand << (-shift)
    } else if shift >= 128 {
        // significand < 2^64, so the value is below 2^-64 units: rounds to zero.
        0
    } else {
        let wide = significand as u128;
        let truncated = wide >> shift;
        let remainder = wide & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let round_up = remainder > half || (remainder == half && truncated & 1 == 1);
        (truncated + round_up as u128) as u64
    };
    if kept == 0 {
        return Rounded::Zero;
    }

    let hidden_bit = 1u64 << p;
    let (kept, quantum_exponent) = if kept >= hidden_bit << 1 {
        // Rounding carried into a new binade (e.g. 1.111|1 → 10.000): renormalise.
        (kept >> 1, quantum_exponent + 1)
    } else {
        (kept, quantum_exponent)
    };
    if kept < hidden_bit {
        // Only possible in the subnormal range, where quantum_exponent = min_normal - p.
        return Rounded::Finite {
            exponent_field: 0,
            mantissa_field: kept as u32,
        };
    }
    let exponent_field = quantum_exponent + p + target.bias as i64;
    if exponent_field > target.max_exponent_field as i64 {
        return Rounded::Overflow;
    }
    Rounded::Finite {
        exponent_field: exponent_field as u32,
        mantissa_field: (kept - hidden_bit) as u32,
    }
}

/// Decomposes a finite f64 into `(negative, significand, exponent)` with
/// `|x| = significand × 2^exponent` exactly. Zero gives significand 0.
pub(crate) fn decompose_f64(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let exponent_field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    if exponent_field == 0 {
        (negative, fraction, -1074)
    } else {
        (negative, fraction | (1u64 << 52), exponent_field - 1075)
    }
}

/// Decomposes a finite f32 the same way as [`decompose_f64`].
pub(crate) fn decompose_f32(x: f32) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 31 != 0;
    let exponent_field = ((bits >> 23) & 0xff) as i32;
    let fraction = (bits & 0x7f_ffff) as u64;
    if exponent_field == 0 {
        (negative, fraction, -149)
    } else {
        (negative, fraction | (1u64 << 23), exponent_field - 150)
    }
}

/// Exact `2^n` as an f64 for `n` in the normal range; out-of-range `n` is clamped, which callers
/// only use where the clamped factor gives the same final (rounded) result.
pub(crate) fn pow2_f64(n: i32) -> f64 {
    let n = n.clamp(-1022, 1023);
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// Exact `2^n` as an f32 for `n` in the normal range (-126..=127).
pub(crate) fn pow2_f32(n: i32) -> f32 {
    debug_assert!((-126..=127).contains(&n));
    f32::from_bits(((n + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F143_LIKE: TargetFormat = TargetFormat {
        mantissa_bits: 3,
        bias: 8,
        max_exponent_field: 15,
    };

    #[test]
    fn overflow_boundary_is_half_an_ulp_above_max() {
        // 240 = 15 × 2^4 fits; 247 = 247 × 2^0 rounds to 240; 248 is the tie → 256 → overflow.
        assert_eq!(
            round_to_target(240, 0, F143_LIKE),
            Rounded::Finite {
                exponent_field: 15,
                mantissa_field: 7
            }
        );
        assert_eq!(
            round_to_target(247, 0, F143_LIKE),
            Rounded::Finite {
                exponent_field: 15,
                mantissa_field: 7
            }
        );
        assert_eq!(round_to_target(248, 0, F143_LIKE), Rounded::Overflow);
    }

    #[test]
    fn subnormal_spacing_and_carry_into_normal() {
        // Smallest F143 subnormal is 2^-10; 2^-11 is the tie with zero → zero (even).
        assert_eq!(round_to_target(1, -11, F143_LIKE), Rounded::Zero);
        assert_eq!(
            round_to_target(3, -12, F143_LIKE),
            Rounded::Finite {
                exponent_field: 0,
                mantissa_field: 1
            }
        );
        // 7.5 × 2^-10 is a tie between subnormal 7 and normal 8 (min normal 2^-7) → 8 (even).
        assert_eq!(
            round_to_target(15, -11, F143_LIKE),
            Rounded::Finite {
                exponent_field: 1,
                mantissa_field: 0
            }
        );
    }

    #[test]
    fn huge_shifts_do_not_panic() {
        assert_eq!(round_to_target(u64::MAX, -2000, F16_TARGET), Rounded::Zero);
        assert_eq!(
            round_to_target(u64::MAX, 2000, F16_TARGET),
            Rounded::Overflow
        );
        // u64::MAX × 2^-88 ≈ 2^-24 (the smallest f16 subnormal), just below it: rounds up to it.
        assert_eq!(
            round_to_target(u64::MAX, -88, F16_TARGET),
            Rounded::Finite {
                exponent_field: 0,
                mantissa_field: 1
            }
        );
    }
}
