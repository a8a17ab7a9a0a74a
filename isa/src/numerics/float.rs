//! The f16 and f32 arithmetic rules of the tile model, as pure functions (f16 values travel as `u16` bit patterns).
//!
//! Everything here is deterministic across hosts: rounding is done with integer code or with
//! IEEE-mandated correctly rounded host operations (`+ - * /`, `sqrt`, `as` casts), special
//! functions come from the pure-Rust `libm` crate (never the platform libm), and every NaN
//! result is replaced by a canonical NaN so that host NaN-payload rules cannot leak into
//! simulated register values.

use super::fp8::F16_CANONICAL_NAN;
use super::rounding::{decompose_f32, decompose_f64, round_to_target, Rounded, F16_TARGET};

/// The NaN that every f32-producing operation of the model returns (quiet, positive, no payload).
pub const F32_CANONICAL_NAN: u32 = 0x7fc0_0000;

/// The all-ones "true" of f16 comparisons (`TFPU_FP16_TRUE`).
pub const F16_TRUE: u16 = 0xffff;
/// The all-ones "true" of f32 comparisons (`TFPU_FP32_TRUE`).
pub const F32_TRUE: u32 = 0xffff_ffff;

/// True for any f16 NaN pattern (exponent all ones, fraction non-zero).
pub fn f16_is_nan(h: u16) -> bool {
    h & 0x7c00 == 0x7c00 && h & 0x03ff != 0
}

/// Replaces any NaN by the canonical f32 NaN.
fn canonical_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(F32_CANONICAL_NAN)
    } else {
        x
    }
}

/// f16 → f32, exact. A NaN keeps its payload but is made quiet (the hardware quietens
/// signalling NaNs, isa.md §8).
#[inline]
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exponent_field = ((h >> 10) & 0x1f) as u32;
    let fraction = (h & 0x3ff) as u32;
    match exponent_field {
        0 => {
            // Subnormal or zero: fraction × 2^-24 is exact in f32 (it is a normal f32 or 0).
            let magnitude = fraction as f32 * f32::from_bits(0x3380_0000);
            f32::from_bits(sign | magnitude.to_bits())
        }
        0x1f if fraction == 0 => f32::from_bits(sign | 0x7f80_0000),
        0x1f => f32::from_bits(sign | 0x7fc0_0000 | (fraction << 13)),
        _ => f32::from_bits(sign | ((exponent_field + 127 - 15) << 23) | (fraction << 13)),
    }
}

/// Packs a rounding outcome as f16 bits; overflow is ±infinity, underflow keeps the sign.
fn pack_f16(negative: bool, rounded: Rounded) -> u16 {
    let sign = if negative { 0x8000 } else { 0 };
    match rounded {
        Rounded::Zero => sign,
        Rounded::Finite {
            exponent_field,
            mantissa_field,
        } => sign | ((exponent_field << 10) | mantissa_field) as u16,
        Rounded::Overflow => sign | 0x7c00,
    }
}

/// f32 → f16, round to nearest even (the `$FP_CTL.RND` default; stochastic rounding is not
/// modelled here). Overflow → ±inf; NaN → [`F16_CANONICAL_NAN`]; signed zeros are kept.
#[inline]
pub fn f32_to_f16(x: f32) -> u16 {
    // Fast path, the same rounding in integer form: |x| in [2^-14, 2^16) is an f16 normal
    // number or (from 65520 up) overflows to inf. Re-biasing the f32 exponent (127 → 15) and
    // dropping 13 fraction bits with round-to-nearest-even gives the f16 bits; a carry out of
    // the fraction moves to the next binade, and from 65520 on it reaches 0x7c00 = inf.
    let bits = x.to_bits();
    let magnitude = bits & 0x7fff_ffff;
    if (0x3880_0000..0x4780_0000).contains(&magnitude) {
        let sign = (bits >> 16) as u16 & 0x8000;
        let rebased = magnitude - 0x3800_0000;
        return sign | ((rebased + 0x0fff + ((rebased >> 13) & 1)) >> 13) as u16;
    }
    if magnitude == 0 {
        // ±0 (common: AMP results of zero inputs) keeps its sign, as the general path does.
        return (bits >> 16) as u16;
    }
    f32_to_f16_general(x)
}

/// [`f32_to_f16`] for every input, by the shared rounding routine.
#[inline(never)]
fn f32_to_f16_general(x: f32) -> u16 {
    if x.is_nan() {
        return F16_CANONICAL_NAN;
    }
    if x.is_infinite() {
        return if x < 0.0 { 0xfc00 } else { 0x7c00 };
    }
    let (negative, significand, exponent) = decompose_f32(x);
    pack_f16(negative, round_to_target(significand, exponent, F16_TARGET))
}

/// f64 → f16 with a single correct RNE rounding (used for the f16 special functions).
///
/// Written here rather than taken from `half::f16::from_f64`: half 2.x drops the low 32
/// fraction bits of the f64 before rounding, so it loses the sticky information and rounds a
/// value slightly above an f16 midpoint (e.g. 1 + 2^-11 + 2^-40) down instead of up.
pub fn f64_to_f16(x: f64) -> u16 {
    if x.is_nan() {
        return F16_CANONICAL_NAN;
    }
    if x.is_infinite() {
        return if x < 0.0 { 0xfc00 } else { 0x7c00 };
    }
    let (negative, significand, exponent) = decompose_f64(x);
    pack_f16(negative, round_to_target(significand, exponent, F16_TARGET))
}

/// f64 → f32 with one RNE rounding (Rust's `as` cast is specified to round to nearest even);
/// NaN → canonical NaN.
pub fn f64_to_f32(x: f64) -> f32 {
    canonical_f32(x as f32)
}

// f16 arithmetic is computed by widening both operands exactly to f32, doing the operation in
// f32 (one IEEE rounding), then rounding the f32 result to f16 (a second rounding). The double
// rounding is innocuous: for +, −, ×, ÷ and √ a result first rounded to a precision p' ≥ 2p + 2
// and then to precision p equals the result rounded directly to p (Figueroa, 1995). Here
// p = 11 and p' = 24 ≥ 24, and f32's much wider exponent range means the intermediate is never
// subnormal or overflowed where the f16 result is finite. (For × it is moot: an f16 × f16
// product has at most 22 significant bits and is exact in f32.) So these are the correctly
// rounded IEEE binary16 operations.

fn f16_binary(a: u16, b: u16, op: impl Fn(f32, f32) -> f32) -> u16 {
    f32_to_f16(op(f16_to_f32(a), f16_to_f32(b)))
}

/// a + b, correctly rounded to f16 (RNE). Any NaN result is canonical.
pub fn f16_add(a: u16, b: u16) -> u16 {
    f16_binary(a, b, |x, y| x + y)
}

/// a − b, correctly rounded to f16 (RNE).
pub fn f16_sub(a: u16, b: u16) -> u16 {
    f16_binary(a, b, |x, y| x - y)
}

/// a × b, correctly rounded to f16 (RNE).
pub fn f16_mul(a: u16, b: u16) -> u16 {
    f16_binary(a, b, |x, y| x * y)
}

/// Maximum. Project assumption: if either operand is NaN the result is the canonical NaN
/// (NaN-propagating, like IEEE 754-2019 `maximum`), and +0 is larger than −0. Otherwise the
/// result is one of the operands, bit for bit.
pub fn f16_max(a: u16, b: u16) -> u16 {
    if f16_is_nan(a) || f16_is_nan(b) {
        return F16_CANONICAL_NAN;
    }
    match f16_to_f32(a).partial_cmp(&f16_to_f32(b)) {
        Some(std::cmp::Ordering::Greater) => a,
        Some(std::cmp::Ordering::Less) => b,
        // Equal values: only ±0 can differ in bits; prefer +0 (sign bit clear).
        _ => a & b,
    }
}

/// Minimum, with the same NaN rule as [`f16_max`]; −0 is smaller than +0.
pub fn f16_min(a: u16, b: u16) -> u16 {
    if f16_is_nan(a) || f16_is_nan(b) {
        return F16_CANONICAL_NAN;
    }
    match f16_to_f32(a).partial_cmp(&f16_to_f32(b)) {
        Some(std::cmp::Ordering::Less) => a,
        Some(std::cmp::Ordering::Greater) => b,
        // Equal values: only ±0 can differ in bits; prefer −0 (sign bit set).
        _ => a | b,
    }
}

fn f16_mask(condition: bool) -> u16 {
    if condition {
        F16_TRUE
    } else {
        0
    }
}

fn f32_mask(condition: bool) -> u32 {
    if condition {
        F32_TRUE
    } else {
        0
    }
}

// Comparisons follow IEEE 754 quiet predicates: an unordered pair (any NaN) is false for every
// predicate except "not equal", and +0 == −0. True is all ones, false is zero (isa.md §3.3).

/// a == b (f16) → 0xffff / 0.
pub fn f16_cmpeq(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) == f16_to_f32(b))
}
/// a != b (f16); true when either is NaN.
pub fn f16_cmpne(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) != f16_to_f32(b))
}
/// a < b (f16).
pub fn f16_cmplt(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) < f16_to_f32(b))
}
/// a <= b (f16).
pub fn f16_cmple(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) <= f16_to_f32(b))
}
/// a > b (f16).
pub fn f16_cmpgt(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) > f16_to_f32(b))
}
/// a >= b (f16).
pub fn f16_cmpge(a: u16, b: u16) -> u16 {
    f16_mask(f16_to_f32(a) >= f16_to_f32(b))
}

/// a == b (f32) → 0xffff_ffff / 0.
pub fn f32_cmpeq(a: f32, b: f32) -> u32 {
    f32_mask(a == b)
}
/// a != b (f32); true when either is NaN.
pub fn f32_cmpne(a: f32, b: f32) -> u32 {
    f32_mask(a != b)
}
/// a < b (f32).
pub fn f32_cmplt(a: f32, b: f32) -> u32 {
    f32_mask(a < b)
}
/// a <= b (f32).
pub fn f32_cmple(a: f32, b: f32) -> u32 {
    f32_mask(a <= b)
}
/// a > b (f32).
pub fn f32_cmpgt(a: f32, b: f32) -> u32 {
    f32_mask(a > b)
}
/// a >= b (f32).
pub fn f32_cmpge(a: f32, b: f32) -> u32 {
    f32_mask(a >= b)
}

/// a + b in f32 (IEEE RNE); NaN → canonical NaN.
pub fn f32_add(a: f32, b: f32) -> f32 {
    canonical_f32(a + b)
}
/// a − b in f32 (IEEE RNE); NaN → canonical NaN.
pub fn f32_sub(a: f32, b: f32) -> f32 {
    canonical_f32(a - b)
}
/// a × b in f32 (IEEE RNE); NaN → canonical NaN.
pub fn f32_mul(a: f32, b: f32) -> f32 {
    canonical_f32(a * b)
}

/// Maximum with the rule of [`f16_max`]: NaN in → canonical NaN out; +0 > −0.
pub fn f32_max(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return f32::from_bits(F32_CANONICAL_NAN);
    }
    if a == b {
        // Only ±0 can compare equal with different bits; prefer +0.
        return f32::from_bits(a.to_bits() & b.to_bits());
    }
    if a > b {
        a
    } else {
        b
    }
}

/// Minimum with the rule of [`f16_min`]: NaN in → canonical NaN out; −0 < +0.
pub fn f32_min(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return f32::from_bits(F32_CANONICAL_NAN);
    }
    if a == b {
        return f32::from_bits(a.to_bits() | b.to_bits());
    }
    if a < b {
        a
    } else {
        b
    }
}

/// f32 ÷ (IEEE RNE, one rounding); x/0 → ±inf, 0/0 and inf/inf → canonical NaN.
pub fn f32_div(a: f32, b: f32) -> f32 {
    canonical_f32(a / b)
}

// Clamp ("min of maximum", ASM-DOC `f32clamp.md` / `f16v2clamp.md`): max with the lower limit,
// then min with the upper, each with the NaN and signed-zero rules of `max`/`min`. So a NaN
// input or limit gives the canonical NaN, and with lo > hi the result is hi. [assumption]

/// min(max(x, lo), hi) (f16).
pub fn f16_clamp(x: u16, lo: u16, hi: u16) -> u16 {
    f16_min(f16_max(x, lo), hi)
}

/// min(max(x, lo), hi) (f32).
pub fn f32_clamp(x: f32, lo: f32, hi: f32) -> f32 {
    f32_min(f32_max(x, lo), hi)
}

// Addition of absolute values (`*absadd`): |a| + |b| with the sign bits cleared first (so
// |NaN| stays NaN and gives the canonical NaN), rounded once as `add`.

/// |a| + |b| (f16, RNE).
pub fn f16_absadd(a: u16, b: u16) -> u16 {
    f16_add(a & 0x7fff, b & 0x7fff)
}

/// |a| + |b| (f32, RNE).
pub fn f32_absadd(a: f32, b: f32) -> f32 {
    f32_add(a.abs(), b.abs())
}

// Special functions. The hardware's algorithms and accuracy are not public. Project
// assumption: the result is the function evaluated in f64 by the pure-Rust `libm` crate
// (deterministic on every host; < 1 f64 ulp of error) and rounded once to the destination
// format. That is within one destination ulp of the true value, and is the correctly rounded
// result except when the true value lies within ~2^-29 relative of a rounding midpoint.

/// e^x (f32).
pub fn f32_exp(x: f32) -> f32 {
    f64_to_f32(libm::exp(x as f64))
}

/// tanh(x) (f32).
pub fn f32_tanh(x: f32) -> f32 {
    f64_to_f32(libm::tanh(x as f64))
}

/// √x (f32), the IEEE correctly rounded square root. √−0 = −0; negative → canonical NaN.
pub fn f32_sqrt(x: f32) -> f32 {
    canonical_f32(x.sqrt())
}

/// 1/√x (f32): `1 / sqrt(x)` in f64 (each step IEEE-rounded), then rounded to f32.
/// +0 → +inf, −0 → −inf (as IEEE `rSqrt`), negative → canonical NaN, +inf → +0.
pub fn f32_oorx(x: f32) -> f32 {
    f64_to_f32(1.0 / (x as f64).sqrt())
}

/// 1/x (f32), correctly rounded (a single IEEE division). ±0 → ±inf, ±inf → ±0.
pub fn f32_oox(x: f32) -> f32 {
    canonical_f32(1.0 / x)
}

/// The logistic function 1 / (1 + e^−x) (f32).
pub fn f32_sigm(x: f32) -> f32 {
    f64_to_f32(sigmoid(x as f64))
}

/// ln x (f32): ln 0 = −inf, ln of a negative number → canonical NaN, ln +inf = +inf.
pub fn f32_ln(x: f32) -> f32 {
    f64_to_f32(libm::log(x as f64))
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + libm::exp(-x))
}

/// The logistic function for an f16, evaluated in f64 and rounded once to f16.
pub fn f16_sigm(h: u16) -> u16 {
    f64_to_f16(sigmoid(f16_to_f32(h) as f64))
}

/// ln x for an f16, evaluated in f64 and rounded once to f16.
pub fn f16_ln(h: u16) -> u16 {
    f64_to_f16(libm::log(f16_to_f32(h) as f64))
}

/// e^x for an f16, evaluated in f64 and rounded once to f16.
pub fn f16_exp(h: u16) -> u16 {
    f64_to_f16(libm::exp(f16_to_f32(h) as f64))
}

/// tanh(x) for an f16, evaluated in f64 and rounded once to f16.
pub fn f16_tanh(h: u16) -> u16 {
    f64_to_f16(libm::tanh(f16_to_f32(h) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path of [`f32_to_f16`] against the general rounding: both signs, every
    /// exponent, the upper 10 fraction bits 0, 1, 0x155, 0x200, 0x3fe or 0x3ff (binade edges
    /// and the carry into the next binade), and every pattern of the 13 rounded-off bits.
    #[test]
    fn f32_to_f16_fast_path_matches_the_general_rounding() {
        for sign in [0u32, 1] {
            for exponent in 0..=255u32 {
                for top in [0u32, 1, 0x155, 0x200, 0x3fe, 0x3ff] {
                    for low in 0..0x2000u32 {
                        let bits = sign << 31 | exponent << 23 | top << 13 | low;
                        let x = f32::from_bits(bits);
                        assert_eq!(f32_to_f16(x), f32_to_f16_general(x), "{bits:#010x}");
                    }
                }
            }
        }
    }

    /// Every f32 (4.3 billion): run with
    /// `cargo test --release -p tessera-isa --lib f32_to_f16_every_input -- --ignored`.
    #[test]
    #[ignore]
    fn f32_to_f16_every_input_matches_the_general_rounding() {
        for bits in 0..=u32::MAX {
            let x = f32::from_bits(bits);
            assert_eq!(f32_to_f16(x), f32_to_f16_general(x), "{bits:#010x}");
        }
    }

    #[test]
    fn f16_to_f32_matches_half_for_every_non_nan_pattern() {
        for h in 0..=u16::MAX {
            let ours = f16_to_f32(h);
            let theirs = half::f16::from_bits(h).to_f32();
            if f16_is_nan(h) {
                assert!(ours.is_nan() && theirs.is_nan());
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{h:#06x}");
            }
        }
    }

    #[test]
    fn f16_round_trips_through_f32_and_f64() {
        for h in 0..=u16::MAX {
            let expected = if f16_is_nan(h) { F16_CANONICAL_NAN } else { h };
            assert_eq!(f32_to_f16(f16_to_f32(h)), expected, "{h:#06x}");
            assert_eq!(f64_to_f16(f16_to_f32(h) as f64), expected, "{h:#06x}");
        }
    }

    #[test]
    fn f64_to_f16_keeps_sticky_bits() {
        // 1 + 2^-11 is the midpoint of 1.0 and 1.0 + 2^-10: tie → even (1.0).
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00);
        // Anything above the midpoint, even only in the low f64 bits, rounds up.
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3c01);
        // Largest finite, the overflow tie (65520 → inf) and the smallest subnormal's tie.
        assert_eq!(f64_to_f16(65519.99), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0x0000);
        assert_eq!(f64_to_f16(-(2f64.powi(-25) + 2f64.powi(-60))), 0x8001);
        assert_eq!(f64_to_f16(-1e-30), 0x8000);
    }

    #[test]
    fn f32_to_f16_agrees_with_half_on_a_sweep() {
        // half's f32 → f16 keeps all f32 bits and rounds RNE, so it is a fair cross-check.
        let mut bits = 0u32;
        while bits < 0xff80_0000 {
            let x = f32::from_bits(bits);
            if !x.is_nan() {
                assert_eq!(f32_to_f16(x), half::f16::from_f32(x).to_bits(), "{x:e}");
            }
            bits = bits.wrapping_add(0x1357);
        }
    }

    #[test]
    fn max_min_and_compares() {
        let one = 0x3c00;
        let two = 0x4000;
        let nan = 0x7e55;
        assert_eq!(f16_max(one, two), two);
        assert_eq!(f16_min(one, two), one);
        assert_eq!(f16_max(one, nan), F16_CANONICAL_NAN);
        assert_eq!(f16_min(nan, one), F16_CANONICAL_NAN);
        assert_eq!(f16_max(0x8000, 0x0000), 0x0000);
        assert_eq!(f16_min(0x0000, 0x8000), 0x8000);
        assert_eq!(f16_cmpeq(0x8000, 0x0000), F16_TRUE);
        assert_eq!(f16_cmpeq(nan, nan), 0);
        assert_eq!(f16_cmpne(nan, nan), F16_TRUE);
        assert_eq!(f16_cmplt(nan, one), 0);
        assert_eq!(f16_cmpge(nan, one), 0);
        assert_eq!(f16_cmplt(one, two), F16_TRUE);
        assert_eq!(f16_cmpgt(one, two), 0);
        assert_eq!(f16_cmple(one, one), F16_TRUE);
        assert_eq!(f32_cmpne(f32::NAN, 1.0), F32_TRUE);
        assert_eq!(f32_cmple(f32::NAN, 1.0), 0);
        assert_eq!(f32_cmpgt(2.0, 1.0), F32_TRUE);
        assert_eq!(f32_max(-0.0, 0.0).to_bits(), 0);
        assert_eq!(f32_min(0.0, -0.0).to_bits(), 0x8000_0000);
        assert_eq!(f32_max(f32::NAN, 1.0).to_bits(), F32_CANONICAL_NAN);
        assert_eq!(f32_min(1.0, 3.0), 1.0);
    }

    #[test]
    fn f16_arithmetic_specials() {
        assert_eq!(f16_add(0x7c00, 0xfc00), F16_CANONICAL_NAN);
        assert_eq!(f16_mul(0x7c00, 0x0000), F16_CANONICAL_NAN);
        assert_eq!(f16_add(0x7bff, 0x7bff), 0x7c00);
        assert_eq!(f16_sub(0x3c00, 0x3c00), 0x0000);
        assert_eq!(f16_add(0x8000, 0x8000), 0x8000);
        // Subnormal × 1 stays exact.
        assert_eq!(f16_mul(0x0001, 0x3c00), 0x0001);
        // 1 + 2^-11 (the f16 half-ulp): tie → 1.0.
        assert_eq!(f16_add(0x3c00, 0x1000), 0x3c00);
    }

    #[test]
    fn special_functions() {
        assert_eq!(f32_exp(0.0), 1.0);
        assert_eq!(f32_exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(f32_exp(1.0), std::f32::consts::E);
        assert_eq!(f32_exp(f32::NAN).to_bits(), F32_CANONICAL_NAN);
        assert_eq!(f32_tanh(0.0), 0.0);
        assert_eq!(f32_tanh(20.0), 1.0);
        assert_eq!(f32_sqrt(4.0), 2.0);
        assert_eq!(f32_sqrt(-1.0).to_bits(), F32_CANONICAL_NAN);
        assert_eq!(f32_oorx(4.0), 0.5);
        assert_eq!(f32_oorx(0.0), f32::INFINITY);
        assert_eq!(f32_oorx(-0.0), f32::NEG_INFINITY);
        assert_eq!(f32_oorx(-1.0).to_bits(), F32_CANONICAL_NAN);
        assert_eq!(f32_oox(4.0), 0.25);
        assert_eq!(f32_oox(-0.0), f32::NEG_INFINITY);
        assert_eq!(f16_exp(0x0000), 0x3c00);
        assert_eq!(f16_exp(0x3c00), 0x4170); // e ≈ 2.71875 in f16
        assert_eq!(f16_exp(0x4c00), 0x7c00); // e^16 overflows f16
        assert_eq!(f16_tanh(0x0000), 0x0000);
        assert_eq!(f16_tanh(0x8000), 0x8000);
        assert_eq!(f16_tanh(0x4900), 0x3c00); // tanh(10) rounds to 1.0
        assert_eq!(f16_exp(0x7e00), F16_CANONICAL_NAN);
    }
}
