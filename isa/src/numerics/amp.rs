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
use super::fp8::{fp8_values, Fp8Format};
use super::rounding::{pow2_f32, pow2_f64};

/// Makes the result's NaN (if any) the canonical one, so no host NaN payload leaks out.
#[inline]
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
/// This is [`Fp8Phase::apply`]; to apply one input vector to many weight vectors (the 16
/// channels of an AMP call), prepare the [`Fp8Phase`] once.
#[inline]
pub fn amp_phase_fp8(
    acc: f32,
    x: [u8; 8],
    w: [u8; 8],
    x_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> f32 {
    Fp8Phase::new(x, x_format, w_format, scale).apply(acc, w)
}

/// Scales for which f32 arithmetic gives every scaled FP8 product exactly (the fast path of
/// [`Fp8Phase`]). Nonzero FP8 magnitudes lie in [2^-17, 2^16) (F152: 2^-17 ..= 57344, F143:
/// 2^-10 ..= 240) with at most 4 significant bits, so a product x · w has at most 8 bits and
/// lies in [2^-34, 2^32). For a scale in this range:
/// * 2^scale and x · 2^scale ∈ [2^-109, 2^112) are normal f32 numbers, so exact;
/// * (x · 2^scale) · w = x · w · 2^scale ∈ [2^-126, 2^128) is normal with ≤ 8 bits, so exact.
///
/// So the two f32 multiplications give exactly the value that the definition computes in f64
/// and rounds to f32 (a no-op), with the same sign (also of zeros) and the same NaN-ness.
/// Scales outside the range take the f64 path of the definition.
const FAST_SCALES: std::ops::RangeInclusive<i32> = -92..=96;

/// One FP8 AMP input vector prepared for many weight vectors: the 8 x codes are decoded (and
/// scaled by 2^scale) once and the weight format's value table is chosen once.
/// [`Fp8Phase::apply`] gives bit for bit the documented [`amp_phase_fp8`] result.
#[derive(Clone, Copy, Debug)]
pub struct Fp8Phase {
    /// x_i · 2^scale on the fast path (exact, see [`FAST_SCALES`]); x_i on the f64 path.
    x: [f32; 8],
    w_values: &'static [f32; 256],
    /// `Some(2^scale)` (scale clamped to ±1000) when scale is outside [`FAST_SCALES`].
    f64_scale: Option<f64>,
}

impl Fp8Phase {
    #[inline]
    pub fn new(x: [u8; 8], x_format: Fp8Format, w_format: Fp8Format, scale: i32) -> Self {
        let x_values = fp8_values(x_format);
        let w_values = fp8_values(w_format);
        if FAST_SCALES.contains(&scale) {
            let factor = pow2_f32(scale);
            Fp8Phase {
                x: x.map(|code| x_values[code as usize] * factor),
                w_values,
                f64_scale: None,
            }
        } else {
            // Clamping only matters for absurd scales, where the f32 result is 0 or inf either way.
            let factor = pow2_f64(scale.clamp(-1000, 1000));
            Fp8Phase {
                x: x.map(|code| x_values[code as usize]),
                w_values,
                f64_scale: Some(factor),
            }
        }
    }

    /// The input lanes as [`Fp8Phase::apply`] multiplies them, x_i · 2^scale, when the scale
    /// takes the f32 path (see [`FAST_SCALES`]); `None` when it takes the f64 path. With the
    /// decoded weights these are the operands of [`amp_phase_channels`].
    #[inline]
    pub fn scaled_lanes(&self) -> Option<&[f32; 8]> {
        match self.f64_scale {
            None => Some(&self.x),
            Some(_) => None,
        }
    }

    /// [`amp_phase_fp8`] of this input with the weight codes `w`.
    #[inline]
    pub fn apply(&self, acc: f32, w: [u8; 8]) -> f32 {
        let mut acc = acc;
        match self.f64_scale {
            None => {
                for (&x, &w_code) in self.x.iter().zip(&w) {
                    acc += x * self.w_values[w_code as usize];
                }
            }
            Some(factor) => {
                for (&x, &w_code) in self.x.iter().zip(&w) {
                    let product = x as f64 * self.w_values[w_code as usize] as f64;
                    acc += (product * factor) as f32;
                }
            }
        }
        canonical(acc)
    }
}

/// One phase of the f16 AMP: acc + Σ_i x_i · w_i (lanes in ascending order, scale 0).
///
/// An f16 × f16 product has at most 22 significant bits and its exponent stays inside the f32
/// normal range, so it is exact in f32; each addition is one f32 RNE rounding. NaN operands
/// (and 0 × inf, inf − inf) give the canonical f32 NaN. Order and rounding are the same
/// project assumption as [`amp_phase_fp8`]. This is [`F16Phase::apply`].
#[inline]
pub fn amp_phase_f16(acc: f32, x: [u16; 4], w: [u16; 4]) -> f32 {
    F16Phase::new(x).apply(acc, w)
}

/// One f16 AMP input vector, decoded once for many weight vectors. [`F16Phase::apply`] gives
/// bit for bit the documented [`amp_phase_f16`] result.
#[derive(Clone, Copy, Debug)]
pub struct F16Phase {
    x: [f32; 4],
}

impl F16Phase {
    #[inline]
    pub fn new(x: [u16; 4]) -> Self {
        F16Phase {
            x: x.map(f16_to_f32),
        }
    }

    /// [`amp_phase_f16`] of this input with the weights `w` (f16 bits).
    #[inline]
    pub fn apply(&self, acc: f32, w: [u16; 4]) -> f32 {
        let mut acc = acc;
        for (&x, &w_bits) in self.x.iter().zip(&w) {
            acc += x * f16_to_f32(w_bits);
        }
        canonical(acc)
    }
}

/// One phase of one channel of the f32 AMP (`f32sisoamp`, `f32sisov2amp`): acc + x · w, the
/// product rounded to f32, then the sum (each RNE), then the canonical NaN. The same project
/// assumption as the f16 and FP8 phases (module doc), with one lane.
#[inline]
pub fn amp_phase_f32(acc: f32, x: f32, w: f32) -> f32 {
    canonical(acc + x * w)
}

/// Output channels of one `*hihov4amp` call: [`amp_phase_channels`] runs a phase of all of them.
pub const CALL_CHANNELS: usize = 16;

/// One phase of every channel of an AMP call at once: for each channel m, `acc[m]` plus
/// `x[i] · w[i][m]` over the lanes i < L in ascending order (`w` holds at least L lanes), each product and each sum one f32
/// RNE rounding, then the canonical NaN. Per channel this is exactly [`Fp8Phase::apply`] (with
/// `x` from [`Fp8Phase::scaled_lanes`] and `w[i][m]` the value of the weight code, unscaled)
/// or [`F16Phase::apply`] (`x` and `w` the f16 values): the same operations on the same values
/// in the same order. The weights are lane-major so that the loop over channels is
/// data-parallel (the compiler keeps several channels in one vector register; IEEE arithmetic
/// is the same lane by lane, and nothing is fused or reordered).
#[inline]
pub fn amp_phase_channels<const L: usize>(
    acc: &mut [f32; CALL_CHANNELS],
    x: &[f32; L],
    w: &[[f32; CALL_CHANNELS]],
) {
    for (&xi, wi) in x.iter().zip(w) {
        for (a, &wm) in acc.iter_mut().zip(wi) {
            *a += xi * wm;
        }
    }
    for a in acc.iter_mut() {
        *a = canonical(*a);
    }
}

/// Partial in: f16 -> f32 exact.
#[inline]
pub fn amp_partial_in(partial: u16) -> f32 {
    f16_to_f32(partial)
}

/// Result out: f32 -> f16 RNE (overflow → ±inf, NaN → the canonical f16 NaN).
#[inline]
pub fn amp_result_out(acc: f32) -> u16 {
    f32_to_f16(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::fp8::{fp8_decode, FP8_NAN};
    use proptest::prelude::*;

    /// The definition as first written (f64 products, decoding per lane), kept verbatim as the
    /// reference for the fast path of [`amp_phase_fp8`].
    fn reference_phase_fp8(
        acc: f32,
        x: [u8; 8],
        w: [u8; 8],
        x_format: Fp8Format,
        w_format: Fp8Format,
        scale: i32,
    ) -> f32 {
        let scale_factor = pow2_f64(scale.clamp(-1000, 1000));
        let mut acc = acc;
        for (&x_code, &w_code) in x.iter().zip(w.iter()) {
            let product = fp8_decode(x_code, x_format) as f64 * fp8_decode(w_code, w_format) as f64;
            acc += (product * scale_factor) as f32;
        }
        canonical(acc)
    }

    /// [`amp_phase_f16`] as first written.
    fn reference_phase_f16(acc: f32, x: [u16; 4], w: [u16; 4]) -> f32 {
        let mut acc = acc;
        for (&x_bits, &w_bits) in x.iter().zip(w.iter()) {
            acc += f16_to_f32(x_bits) * f16_to_f32(w_bits);
        }
        canonical(acc)
    }

    const FORMATS: [Fp8Format; 2] = [Fp8Format::F143, Fp8Format::F152];

    /// Accumulators: ±0, ±the tiniest subnormal, ordinary values, a value where a unit
    /// product is lost to rounding, ±the largest finite, −inf and NaN.
    fn accumulators() -> Vec<f32> {
        vec![
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            1.0,
            -0.75,
            16_777_216.0,
            f32::MAX,
            -f32::MAX,
            f32::NEG_INFINITY,
            f32::NAN,
        ]
    }

    /// The −32..=31 of the `$FP_ISCL` field, then scales at the edges of [`FAST_SCALES`], of
    /// the f32 range and of the f64 clamp.
    fn scales() -> Vec<i32> {
        let mut scales: Vec<i32> = (-32..=31).collect();
        scales.extend([
            i32::MIN,
            -1001,
            -1000,
            -200,
            -150,
            -149,
            -127,
            -126,
            -93,
            -92,
            96,
            97,
            127,
            128,
            1000,
            1001,
            i32::MAX,
        ]);
        scales
    }

    /// Every pair of codes at every scale of `scales()`, as a single product (in a lane that
    /// moves with the codes, zero codes elsewhere) added to every accumulator of
    /// `accumulators()`.
    fn check_every_single_product(x_format: Fp8Format, w_format: Fp8Format) {
        let accs = accumulators();
        for scale in scales() {
            for x_code in 0..=255u8 {
                for w_code in 0..=255u8 {
                    let lane = ((x_code ^ w_code.rotate_left(3)) & 7) as usize;
                    let (mut x, mut w) = ([0u8; 8], [0u8; 8]);
                    x[lane] = x_code;
                    w[lane] = w_code;
                    let phase = Fp8Phase::new(x, x_format, w_format, scale);
                    for &acc in &accs {
                        let fast = phase.apply(acc, w);
                        let reference = reference_phase_fp8(acc, x, w, x_format, w_format, scale);
                        assert_eq!(
                            fast.to_bits(),
                            reference.to_bits(),
                            "{x_format:?}×{w_format:?} scale {scale} x {x_code:#04x} w {w_code:#04x} \
                             acc {acc:e}: {fast:e} vs {reference:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn fp8_phase_matches_the_reference_on_every_single_product_f143_f143() {
        check_every_single_product(Fp8Format::F143, Fp8Format::F143);
    }

    #[test]
    fn fp8_phase_matches_the_reference_on_every_single_product_f143_f152() {
        check_every_single_product(Fp8Format::F143, Fp8Format::F152);
    }

    #[test]
    fn fp8_phase_matches_the_reference_on_every_single_product_f152_f143() {
        check_every_single_product(Fp8Format::F152, Fp8Format::F143);
    }

    #[test]
    fn fp8_phase_matches_the_reference_on_every_single_product_f152_f152() {
        check_every_single_product(Fp8Format::F152, Fp8Format::F152);
    }

    /// f16 edge values: zeros, subnormals, the normal boundaries, 1, the largest finite,
    /// infinities and NaNs (with payloads), each with both signs.
    fn f16_edges() -> Vec<u16> {
        let positive = [
            0x0000, 0x0001, 0x0002, 0x0155, 0x03ff, 0x0400, 0x0401, 0x1400, 0x3555, 0x3bff, 0x3c00,
            0x3c01, 0x4248, 0x5bff, 0x7bfe, 0x7bff, 0x7c00, 0x7c01, 0x7e00, 0x7fff,
        ];
        positive.iter().flat_map(|&h| [h, h | 0x8000]).collect()
    }

    /// Every f16 x against every edge weight, as a single product in a moving lane, added to
    /// every accumulator; then every 4-lane combination of edge values in lanes 0 and 3.
    #[test]
    fn f16_phase_matches_the_reference_on_edge_values() {
        let (accs, edges) = (accumulators(), f16_edges());
        for x_bits in 0..=u16::MAX {
            let lane = (x_bits & 3) as usize;
            let mut x = [0u16; 4];
            x[lane] = x_bits;
            let phase = F16Phase::new(x);
            for &w_bits in &edges {
                let mut w = [0u16; 4];
                w[lane] = w_bits;
                for &acc in &accs {
                    let (fast, reference) = (phase.apply(acc, w), reference_phase_f16(acc, x, w));
                    assert_eq!(
                        fast.to_bits(),
                        reference.to_bits(),
                        "x {x_bits:#06x} w {w_bits:#06x} acc {acc:e}"
                    );
                }
            }
        }
        for &a in &edges {
            for &b in &edges {
                for &c in &edges {
                    let (x, w) = ([a, 0x3c00, 0x3c00, b], [c, a, b, c]);
                    for &acc in &accs {
                        let (fast, reference) =
                            (amp_phase_f16(acc, x, w), reference_phase_f16(acc, x, w));
                        assert_eq!(
                            fast.to_bits(),
                            reference.to_bits(),
                            "x {x:04x?} w {w:04x?} acc {acc:e}"
                        );
                    }
                }
            }
        }
    }

    fn any_accumulator() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            prop::sample::select(accumulators()),
            (-1000i32..1000).prop_map(|v| v as f32 / 8.0),
        ]
    }

    fn any_scale() -> impl Strategy<Value = i32> {
        prop_oneof![4 => -32i32..=31, 1 => -100i32..=100, 1 => any::<i32>()]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        /// Random 8-lane phases, and one prepared input against 16 weight vectors (one AMP
        /// call's channels) chained as the pipeline chains them.
        #[test]
        fn fp8_phase_matches_the_reference_on_random_phases(
            x in prop::array::uniform8(any::<u8>()),
            w in prop::collection::vec(prop::array::uniform8(any::<u8>()), 16),
            x_format in prop::sample::select(FORMATS.to_vec()),
            w_format in prop::sample::select(FORMATS.to_vec()),
            scale in any_scale(),
            acc in any_accumulator(),
        ) {
            let phase = Fp8Phase::new(x, x_format, w_format, scale);
            let (mut fast, mut reference) = (acc, acc);
            for w in &w {
                prop_assert_eq!(
                    amp_phase_fp8(acc, x, *w, x_format, w_format, scale).to_bits(),
                    reference_phase_fp8(acc, x, *w, x_format, w_format, scale).to_bits()
                );
                fast = phase.apply(fast, *w);
                reference = reference_phase_fp8(reference, x, *w, x_format, w_format, scale);
                prop_assert_eq!(fast.to_bits(), reference.to_bits());
            }
        }

        #[test]
        fn f16_phase_matches_the_reference_on_random_phases(
            x in prop::array::uniform4(any::<u16>()),
            w in prop::collection::vec(prop::array::uniform4(any::<u16>()), 16),
            acc in any_accumulator(),
        ) {
            let phase = F16Phase::new(x);
            let (mut fast, mut reference) = (acc, acc);
            for w in &w {
                prop_assert_eq!(amp_phase_f16(acc, x, *w).to_bits(), reference_phase_f16(acc, x, *w).to_bits());
                fast = phase.apply(fast, *w);
                reference = reference_phase_f16(reference, x, *w);
                prop_assert_eq!(fast.to_bits(), reference.to_bits());
            }
        }

        /// Random f16 lanes of moderate magnitude, so that sums often round.
        #[test]
        fn f16_phase_matches_the_reference_on_moderate_values(
            x in prop::array::uniform4(0x3000u16..0x5000),
            w in prop::array::uniform4(0x3000u16..0x5000),
            signs in any::<u8>(),
            acc in any_accumulator(),
        ) {
            let x: [u16; 4] = std::array::from_fn(|i| x[i] | (((signs >> i) & 1) as u16) << 15);
            let w: [u16; 4] = std::array::from_fn(|i| w[i] | (((signs >> (4 + i)) & 1) as u16) << 15);
            prop_assert_eq!(amp_phase_f16(acc, x, w).to_bits(), reference_phase_f16(acc, x, w).to_bits());
        }
    }

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
