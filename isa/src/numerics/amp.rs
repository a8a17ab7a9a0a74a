//! The one definition of the AMP's (accumulating matrix product) arithmetic, shared by the simulator and every kernel reference.
//!
//! Public facts: the FP8 AMP (`f8v8hihov4amp`) and the f16 AMP (`f16v4hihov4amp` etc.) take f16
//! partials and give f16 results, the accumulators are single precision inside, and the FP8
//! products are scaled by `2^$FP_ISCL`. The AMP's internal rounding points and summation order
//! are **not** public (isa.md §2.3, §9 item 4). Project assumption, fixed here:
//!
//! * a partial enters as f16 → f32 (exact): [`amp_partial_in`];
//! * each phase adds its lanes' products to the f32 accumulator one lane at a time, lane 0
//!   first; every product is exact and is rounded to f32 (a no-op for the supported inputs, see
//!   below), then each addition is one f32 round-to-nearest-even;
//! * a finished result leaves as f32 → f16 RNE: [`amp_result_out`].
//!
//! Real hardware very likely sums with a wider adder (IPU1 constants mention a 36-bit adder
//! output), so a kernel reference must compare against *this* model, not against the hardware.

use super::float::{f16_to_f32, f32_to_f16, F32_CANONICAL_NAN};
use super::fp8::{fp8_decode, Fp8Format};
use super::rounding::pow2_f64;

/// Makes the result's NaN (if any) the canonical one, so no host NaN payload leaks out.
fn canonical(acc: f32) -> f32 {
    if acc.is_nan() {
        f32::from_bits(F32_CANONICAL_NAN)
    } else {
        acc
    }
}

/// One phase of one output channel: acc + Σ_i 2^scale · x_i · w_i, lanes in ascending order.
/// Each product is exact (computed in f64, scaled by 2^scale exactly), rounded to f32, then added to acc with one f32 RNE rounding per lane.
///
/// `x_format` / `w_format` come from `$FP_INFMT` (ARF_FMT, CWEI_FMT), `scale` is `$FP_ISCL`.
/// An FP8 product has at most 8 significant bits and, for |scale| ≤ 64, lies well inside the
/// normal f32 range, so the f32 rounding of the product is exact in practice; the only
/// rounding is in the accumulation. A NaN code (0x80) in any lane, or a NaN / inf − inf in the
/// accumulator, gives the canonical f32 NaN.
///
/// The summation order and per-lane rounding are a project assumption (see the module doc).
pub fn amp_phase_fp8(
    acc: f32,
    x: [u8; 8],
    w: [u8; 8],
    x_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> f32 {
    // Clamping only matters for absurd scales, where the f32 result is 0 or inf either way.
    let scale_factor = pow2_f64(scale.clamp(-1000, 1000));
    let mut acc = acc;
    for (&x_code, &w_code) in x.iter().zip(w.iter()) {
        let product = fp8_decode(x_code, x_format) as f64 * fp8_decode(w_code, w_format) as f64;
        acc += (product * scale_factor) as f32;
    }
    canonical(acc)
}

/// One phase of the f16 AMP: acc + Σ_i x_i · w_i (lanes in ascending order, scale 0).
///
/// An f16 × f16 product has at most 22 significant bits and its exponent stays inside the f32
/// normal range, so it is exact in f32; each addition is one f32 RNE rounding. NaN operands
/// (and 0 × inf, inf − inf) give the canonical f32 NaN. Order and rounding are the same
/// project assumption as [`amp_phase_fp8`].
pub fn amp_phase_f16(acc: f32, x: [u16; 4], w: [u16; 4]) -> f32 {
    let mut acc = acc;
    for (&x_bits, &w_bits) in x.iter().zip(w.iter()) {
        acc += f16_to_f32(x_bits) * f16_to_f32(w_bits);
    }
    canonical(acc)
}

/// Partial in: f16 -> f32 exact.
pub fn amp_partial_in(partial: u16) -> f32 {
    f16_to_f32(partial)
}

/// Result out: f32 -> f16 RNE (overflow → ±inf, NaN → the canonical f16 NaN).
pub fn amp_result_out(acc: f32) -> u16 {
    f32_to_f16(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::fp8::FP8_NAN;

    #[test]
    fn fp8_phase_sums_in_lane_order() {
        // 0x40 is 1.0 in both formats (F143: exponent field 8 = bias; F152: 16 = bias).
        let ones = [0x40u8; 8];
        let w = [0x40u8; 8];
        let r = amp_phase_fp8(0.5, ones, w, Fp8Format::F143, Fp8Format::F152, 0);
        assert_eq!(r, 8.5);
        let r = amp_phase_fp8(0.0, ones, w, Fp8Format::F143, Fp8Format::F152, -3);
        assert_eq!(r, 1.0);
        // Order matters and is lane 0 first: 2^24 + 1 + 1 … loses each 1 (ties to even).
        let mut x = [0x40u8; 8];
        x[0] = 0x00;
        let r = amp_phase_fp8(16_777_216.0, x, w, Fp8Format::F143, Fp8Format::F152, 0);
        assert_eq!(r, 16_777_216.0);
    }

    #[test]
    fn nan_propagates() {
        let mut x = [0u8; 8];
        x[5] = FP8_NAN;
        let r = amp_phase_fp8(1.0, x, [0x40; 8], Fp8Format::F143, Fp8Format::F143, 0);
        assert_eq!(r.to_bits(), F32_CANONICAL_NAN);
        let r = amp_phase_f16(f32::NAN, [0; 4], [0; 4]);
        assert_eq!(r.to_bits(), F32_CANONICAL_NAN);
        // 0 × inf is NaN.
        let r = amp_phase_f16(0.0, [0x7c00, 0, 0, 0], [0, 0, 0, 0]);
        assert_eq!(r.to_bits(), F32_CANONICAL_NAN);
    }

    #[test]
    fn f16_phase_and_io() {
        let x = [0x3c00, 0x4000, 0x4200, 0x4400]; // 1, 2, 3, 4
        let w = [0x3c00; 4];
        assert_eq!(amp_phase_f16(amp_partial_in(0x3c00), x, w), 11.0);
        assert_eq!(amp_result_out(11.0), 0x4980);
        assert_eq!(amp_result_out(1e6), 0x7c00);
    }
}
