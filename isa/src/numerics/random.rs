//! The worker PRNG and the arithmetic of the random instructions (`urand32`, `urand64`,
//! `f16v2grand`, `f32v2grand`, `f16v4rmask`, `f32v2rmask`) and of the uniform conversions
//! `f16v4sufromui` / `f32v2sufromui`. This is the one place the PRNG model is stated.
//!
//! * State: 128 bits per worker context in `$PRNG_0_0`, `$PRNG_0_1`, `$PRNG_1_0`, `$PRNG_1_1`
//!   (upper CSRs 3..6, kept across exit and launch) \[C\] isa.md §3, ASM-DOC `$PRNG_*.md`. The
//!   generator reads them as two 64-bit words, s0 = `$PRNG_0_1`:`$PRNG_0_0` and
//!   s1 = `$PRNG_1_1`:`$PRNG_1_0` (high:low) **\[A\]**; `$PRNG_SEED` writes them as
//!   `semantics::csr_access` says \[C\].
//! * Generator: xoroshiro128aox, the generator Graphcore published as the IPU's (J. Hanlon,
//!   "A fast hardware pseudorandom number generator based on xoroshiro128", IEEE Transactions
//!   on Computers 2022, arXiv 2203.04058) \[S\]: out = (s0 ⊕ s1) ⊕ (rotl(s0 ∧ s1, 1) ∨
//!   rotl(s0 ∧ s1, 2)); then s0 = rotl(s0, 55) ⊕ sx ⊕ (sx ≪ 14), s1 = rotl(sx, 36) with
//!   sx = s0 ⊕ s1. Which CSR word is which half of the paper's state is **\[A\]**, as is the use
//!   of exactly one step per draw below.
//! * Draws **\[A\]**: `urand64` takes one step (all 64 bits, lane 0 = bits \[31:0\]); `urand32`
//!   one step, its low 32 bits; `f32v2grand` and `f16v2grand` one step per lane; `f16v4rmask`
//!   one step, lane i using bits \[16i+15:16i\]; `f32v2rmask` one step, lanes 0 and 1 using bits
//!   \[15:0\] and \[31:16\]. A mask instruction steps even when its probability field makes the
//!   draw unnecessary.
//! * Gaussian **\[A\]** (the ASM-DOC says only "Gaussian distribution"): a lane is the
//!   Irwin–Hall sum of the four 16-bit words of one step, centred and scaled to unit variance,
//!   (Σ − 2·65535) / √(4·(65536² − 1)/12), computed in f64 and rounded once (RNE) to the lane's
//!   format.
//! * Mask (ASM-DOC `f16v4rmask.md`, `f32v2rmask.md` \[C\] for the three cases): with p the low
//!   17 bits of the probability operand, bit 16 set keeps every lane, p = 0 zeroes every lane,
//!   otherwise lane i is kept when its 16 random bits r satisfy r < p\[15:0\] (probability
//!   p/65536 **\[A\]** for the comparison) and otherwise becomes +0.
//! * `sufromui` \[I\] from ASM-DOC's properties (symmetric, unbiased, in \[−½, ½\], never 0,
//!   smallest magnitude 2^−17 for f16 and 2^−33 for f32): u ↦ (2u + 1 − 2^n) / 2^(n+1) for an
//!   n-bit u, rounded once (RNE) to the result format **\[A\]**.

use super::float::{f64_to_f16, f64_to_f32};

/// The PRNG state as the generator reads it: `[s0, s1]`.
pub type PrngState = [u64; 2];

/// The state from the four CSR words `$PRNG_0_0`, `$PRNG_0_1`, `$PRNG_1_0`, `$PRNG_1_1`.
pub fn prng_from_words(words: [u32; 4]) -> PrngState {
    [
        words[0] as u64 | (words[1] as u64) << 32,
        words[2] as u64 | (words[3] as u64) << 32,
    ]
}

/// The four CSR words of a state (inverse of [`prng_from_words`]).
pub fn prng_to_words(state: PrngState) -> [u32; 4] {
    [
        state[0] as u32,
        (state[0] >> 32) as u32,
        state[1] as u32,
        (state[1] >> 32) as u32,
    ]
}

/// One xoroshiro128aox step: the 64-bit output, with the state advanced.
pub fn prng_next(state: &mut PrngState) -> u64 {
    let [s0, s1] = *state;
    let sx = s0 ^ s1;
    let sa = s0 & s1;
    let out = sx ^ (sa.rotate_left(1) | sa.rotate_left(2));
    state[0] = s0.rotate_left(55) ^ sx ^ (sx << 14);
    state[1] = sx.rotate_left(36);
    out
}

/// The four 16-bit words of a draw, lane 0 = bits \[15:0\].
pub fn draw_words(draw: u64) -> [u16; 4] {
    [
        draw as u16,
        (draw >> 16) as u16,
        (draw >> 32) as u16,
        (draw >> 48) as u16,
    ]
}

/// The Gaussian value of one draw (Irwin–Hall of its four 16-bit words), in f64.
pub fn gaussian_f64(draw: u64) -> f64 {
    let sum: u32 = draw_words(draw).iter().map(|&w| w as u32).sum();
    let mean = 2.0 * 65535.0;
    let sd = (4.0 * (65536.0f64 * 65536.0 - 1.0) / 12.0).sqrt();
    (sum as f64 - mean) / sd
}

/// `f32v2grand`'s lane value of one draw.
pub fn gaussian_f32(draw: u64) -> f32 {
    f64_to_f32(gaussian_f64(draw))
}

/// `f16v2grand`'s lane value of one draw (f16 bits).
pub fn gaussian_f16(draw: u64) -> u16 {
    f64_to_f16(gaussian_f64(draw))
}

/// What a mask instruction's probability operand asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaskRule {
    /// Bit 16 set: every lane is kept.
    KeepAll,
    /// Bits \[16:0\] zero: every lane is zeroed.
    ZeroAll,
    /// Lane kept when its random word is below this threshold (1..=65535).
    Below(u16),
}

/// The rule of a probability operand (only its low 17 bits matter).
pub fn mask_rule(probability: u32) -> MaskRule {
    if probability & 0x1_0000 != 0 {
        MaskRule::KeepAll
    } else if probability & 0xffff == 0 {
        MaskRule::ZeroAll
    } else {
        MaskRule::Below(probability as u16)
    }
}

/// Whether a lane with random word `r` is kept under `rule`.
pub fn mask_keeps(rule: MaskRule, r: u16) -> bool {
    match rule {
        MaskRule::KeepAll => true,
        MaskRule::ZeroAll => false,
        MaskRule::Below(threshold) => r < threshold,
    }
}

/// `f16v4sufromui` on one lane: u16 → f16 in (−½, ½), never 0.
pub fn f16_sufromui(u: u16) -> u16 {
    let centred = 2 * u as i64 + 1 - (1 << 16);
    f64_to_f16(centred as f64 / (1u64 << 17) as f64)
}

/// `f32v2sufromui` on one lane: u32 → f32 in (−½, ½), never 0.
pub fn f32_sufromui(u: u32) -> f32 {
    let centred = 2 * u as i64 + 1 - (1i64 << 32);
    f64_to_f32(centred as f64 / (1u64 << 33) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numerics::f16_to_f32;
    use proptest::prelude::*;

    /// The generator written out again from the paper's C listing, on 32-bit halves, so that a
    /// slip in either version shows.
    fn reference_next(s: &mut [u32; 4]) -> (u32, u32) {
        #[expect(
            clippy::manual_rotate,
            reason = "the listing's own rotl, independent of rotate_left"
        )]
        fn rotl(x: u64, k: u32) -> u64 {
            (x << k) | (x >> (64 - k))
        }
        let s0 = (s[1] as u64) << 32 | s[0] as u64;
        let s1 = (s[3] as u64) << 32 | s[2] as u64;
        let sx = s0 ^ s1;
        let sa = s0 & s1;
        let res = sx ^ (rotl(sa, 1) | rotl(sa, 2));
        let n0 = rotl(s0, 55) ^ sx ^ (sx << 14);
        let n1 = rotl(sx, 36);
        *s = [n0 as u32, (n0 >> 32) as u32, n1 as u32, (n1 >> 32) as u32];
        (res as u32, (res >> 32) as u32)
    }

    proptest! {
        #[test]
        fn next_matches_the_published_step(words in any::<[u32; 4]>()) {
            let mut state = prng_from_words(words);
            let mut reference = words;
            for _ in 0..4 {
                let out = prng_next(&mut state);
                let (lo, hi) = reference_next(&mut reference);
                prop_assert_eq!(out, (hi as u64) << 32 | lo as u64);
                prop_assert_eq!(prng_to_words(state), reference);
            }
        }

        #[test]
        fn sufromui_is_symmetric_never_zero_and_in_range(u in any::<u16>(), v in any::<u32>()) {
            let h = f16_to_f32(f16_sufromui(u));
            prop_assert!(h != 0.0 && h.abs() <= 0.5);
            prop_assert_eq!(f16_to_f32(f16_sufromui(!u)), -h);
            let f = f32_sufromui(v);
            prop_assert!(f != 0.0 && f.abs() <= 0.5);
            prop_assert_eq!(f32_sufromui(!v), -f);
        }
    }

    #[test]
    fn sufromui_extremes_are_the_documented_magnitudes() {
        // ASM-DOC: the smallest magnitudes are 2^-17 (f16) and 2^-33 (f32).
        assert_eq!(f16_to_f32(f16_sufromui(0x7fff)), -(2f32.powi(-17)));
        assert_eq!(f16_to_f32(f16_sufromui(0x8000)), 2f32.powi(-17));
        assert_eq!(f32_sufromui(0x8000_0000), 2f32.powi(-33));
        assert_eq!(f32_sufromui(0x7fff_ffff), -(2f32.powi(-33)));
        // The largest: (2^16 - 1) / 2^17 rounds to 0.5 in f16; (2^32 - 1) / 2^33 to 0.5 in f32.
        assert_eq!(f16_to_f32(f16_sufromui(0xffff)), 0.5);
        assert_eq!(f32_sufromui(u32::MAX), 0.5);
        assert_eq!(f32_sufromui(0), -0.5);
    }

    #[test]
    fn a_zero_state_stays_zero_and_gives_zero() {
        let mut state = [0, 0];
        assert_eq!(prng_next(&mut state), 0);
        assert_eq!(state, [0, 0]);
    }

    #[test]
    fn mask_rules_follow_the_probability_field() {
        assert_eq!(mask_rule(0x1_0000), MaskRule::KeepAll);
        assert_eq!(mask_rule(0x1_1234), MaskRule::KeepAll);
        assert_eq!(mask_rule(0), MaskRule::ZeroAll);
        assert_eq!(mask_rule(0xfffe_0000), MaskRule::ZeroAll);
        assert_eq!(mask_rule(0x8000), MaskRule::Below(0x8000));
        assert!(mask_keeps(MaskRule::Below(0x8000), 0x7fff));
        assert!(!mask_keeps(MaskRule::Below(0x8000), 0x8000));
        assert!(mask_keeps(MaskRule::KeepAll, 0xffff));
        assert!(!mask_keeps(MaskRule::ZeroAll, 0));
    }

    #[test]
    fn gaussian_draws_are_centred_with_unit_variance() {
        // The extremes of the Irwin-Hall sum, and the moments over a stretch of the generator.
        let limit = 3.0f64.sqrt() * 2.0 * 65535.0 / (65536.0f64 * 65536.0 - 1.0).sqrt();
        assert!((gaussian_f64(u64::MAX) - limit).abs() < 1e-12);
        assert!((gaussian_f64(0) + limit).abs() < 1e-12);
        let mut state = prng_from_words([1, 2, 3, 4]);
        let n = 20_000;
        let (mut sum, mut squares) = (0.0, 0.0);
        for _ in 0..n {
            let g = gaussian_f64(prng_next(&mut state));
            sum += g;
            squares += g * g;
        }
        let mean = sum / n as f64;
        let variance = squares / n as f64 - mean * mean;
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!((variance - 1.0).abs() < 0.05, "variance {variance}");
    }
}
