//! The GEMM kernels' bit-exact reference.
//!
//! Reference numerics (the documented AMP model, `tessera_isa::numerics::amp`), mirroring the
//! data flow: for every output (m, n) the running sum starts as the f16 partial (C0 or +0); for
//! each K-block in order it enters an f32 accumulator exactly (`amp_partial_in`), the four
//! phases in order add their lanes' products (`amp_phase_fp8` with the `$FP_INFMT` formats and
//! the `$FP_ISCL` scale, or `amp_phase_f16`), and the sum leaves rounded to f16
//! (`amp_result_out`) — because between K-blocks the partial sum lives in C as f16.

use super::abi::{
    A_JUMP_SHIFT, FLAG_PARTIALS, V_FLAGS, V_KBS, V_M, V_NBS, V_WORKERS, V_XSTEP, W_STRIDE,
};
use super::Precision;
use crate::case::{bytes, Case};
use crate::layout::{self, AMP_CHANNELS, PANEL_ROW_BYTES, WEIGHT_BLOCK_BYTES};
use tessera_isa::csr::index;
use tessera_isa::numerics::amp::amp_phase_channels;
use tessera_isa::numerics::{
    amp_partial_in, amp_phase_f16, amp_phase_fp8, amp_result_out, f16_to_f32, fp8_values,
    scale_from_field, Fp8Format, Fp8Phase,
};

/// The reference: C (M × Np f16 bits), from the spec of the kernel (see the module docs).
///
/// It computes what [`reference_gemm_by_definition`] computes, output by output, but runs the
/// 16 channels of a column block together on decoded operands
/// ([`tessera_isa::numerics::amp::amp_phase_channels`]: per channel the same operations in the
/// same order as `amp_phase_fp8` / `amp_phase_f16`); FP8 scales off the f32 fast path use the
/// definition itself. A test compares the two on random GEMMs.
#[allow(clippy::too_many_arguments)]
pub fn reference_gemm(
    precision: Precision,
    m: usize,
    kbs: usize,
    nbs: usize,
    panels: &[u8],
    blocks: &[u8],
    partials: Option<&[u16]>,
    x_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> Vec<u16> {
    let fast = match precision {
        Precision::Fp8 => Fp8Phase::new([0; 8], x_format, w_format, scale)
            .scaled_lanes()
            .is_some(),
        Precision::F16 => true,
    };
    if !fast {
        return reference_gemm_by_definition(
            precision, m, kbs, nbs, panels, blocks, partials, x_format, w_format, scale,
        );
    }
    let word = |bytes: &[u8], at: usize| -> [u8; 8] {
        bytes[at..at + 8]
            .try_into()
            .expect("an 8-byte range is 8 bytes")
    };
    // Lane i of an 8-byte word as the AMP multiplies it: FP8 byte i (x scaled by 2^scale,
    // weights unscaled) or f16 half i.
    let w_values = fp8_values(w_format);
    let x_lanes = |x: [u8; 8]| -> [f32; 8] {
        match precision {
            Precision::Fp8 => *Fp8Phase::new(x, x_format, w_format, scale)
                .scaled_lanes()
                .expect("the scale takes the fast path (checked above)"),
            Precision::F16 => {
                let h = halves(x);
                std::array::from_fn(|i| if i < 4 { f16_to_f32(h[i]) } else { 0.0 })
            }
        }
    };
    let w_lane = |w: [u8; 8], i: usize| -> f32 {
        match precision {
            Precision::Fp8 => w_values[w[i] as usize],
            Precision::F16 => {
                if i < 4 {
                    f16_to_f32(halves(w)[i])
                } else {
                    0.0
                }
            }
        }
    };
    // Weights of (nb, kb, phase), lane-major: [lane][channel].
    let weights: Vec<[[f32; AMP_CHANNELS]; 8]> = (0..nbs * kbs * 4)
        .map(|index| {
            let (block, phase) = (index / 4, index % 4);
            let mut lanes = [[0.0f32; AMP_CHANNELS]; 8];
            for channel in 0..AMP_CHANNELS {
                let w = word(
                    blocks,
                    block * WEIGHT_BLOCK_BYTES + (4 * channel + phase) * 8,
                );
                for (i, lane) in lanes.iter_mut().enumerate() {
                    lane[channel] = w_lane(w, i);
                }
            }
            lanes
        })
        .collect();
    // Inputs of (kb, row, phase).
    let inputs: Vec<[f32; 8]> = (0..kbs * m * 4)
        .map(|index| {
            let (kb, row, phase) = (index / (4 * m), index / 4 % m, index % 4);
            x_lanes(word(panels, layout::panel_offset(kb, row, m) + 8 * phase))
        })
        .collect();
    let np = nbs * AMP_CHANNELS;
    let mut out = vec![0u16; m * np];
    for (row, out_row) in out.chunks_exact_mut(np.max(1)).enumerate().take(m) {
        for nb in 0..nbs {
            let mut sum = [0u16; AMP_CHANNELS];
            if let Some(c0) = partials {
                sum.copy_from_slice(&c0[row * np + nb * AMP_CHANNELS..][..AMP_CHANNELS]);
            }
            for kb in 0..kbs {
                let mut acc = sum.map(amp_partial_in);
                for phase in 0..4 {
                    let x = &inputs[(kb * m + row) * 4 + phase];
                    let w = &weights[(nb * kbs + kb) * 4 + phase];
                    match precision {
                        Precision::Fp8 => amp_phase_channels(&mut acc, x, w),
                        Precision::F16 => {
                            let x4: &[f32; 4] = x.first_chunk().expect("8 lanes begin with 4");
                            amp_phase_channels(&mut acc, x4, w)
                        }
                    }
                }
                sum = acc.map(amp_result_out);
            }
            out_row[nb * AMP_CHANNELS..][..AMP_CHANNELS].copy_from_slice(&sum);
        }
    }
    out
}

/// The reference as the definition states it, output by output (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn reference_gemm_by_definition(
    precision: Precision,
    m: usize,
    kbs: usize,
    nbs: usize,
    panels: &[u8],
    blocks: &[u8],
    partials: Option<&[u16]>,
    x_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> Vec<u16> {
    let np = nbs * AMP_CHANNELS;
    let mut out = vec![0u16; m * np];
    for row in 0..m {
        for col in 0..np {
            let (nb, channel) = (col / AMP_CHANNELS, col % AMP_CHANNELS);
            let mut sum = partials.map_or(0x0000, |c0| c0[row * np + col]);
            for kb in 0..kbs {
                let mut acc = amp_partial_in(sum);
                for phase in 0..4 {
                    let x_at = layout::panel_offset(kb, row, m) + 8 * phase;
                    let w_at = (nb * kbs + kb) * WEIGHT_BLOCK_BYTES + (4 * channel + phase) * 8;
                    let x: [u8; 8] = panels[x_at..x_at + 8]
                        .try_into()
                        .expect("an 8-byte range is 8 bytes");
                    let w: [u8; 8] = blocks[w_at..w_at + 8]
                        .try_into()
                        .expect("an 8-byte range is 8 bytes");
                    acc = match precision {
                        Precision::Fp8 => amp_phase_fp8(acc, x, w, x_format, w_format, scale),
                        Precision::F16 => amp_phase_f16(acc, halves(x), halves(w)),
                    };
                }
                sum = amp_result_out(acc);
            }
            out[row * np + col] = sum;
        }
    }
    out
}

fn halves(v: [u8; 8]) -> [u16; 4] {
    std::array::from_fn(|i| u16::from_le_bytes([v[2 * i], v[2 * i + 1]]))
}

/// The expected output bytes of a case: C, from its vertex words, buffers and CSRs.
pub(super) fn case_reference(precision: Precision, case: &Case) -> Vec<Vec<u8>> {
    let (m, kbs, nbs) = (
        case.word(V_M) as usize,
        case.word(V_KBS) as usize,
        case.word(V_NBS) as usize,
    );
    let partials =
        (case.word(V_FLAGS) & FLAG_PARTIALS != 0).then(|| bytes::to_u16(&case.buffer("c0").bytes));
    let csr = |i: u8| {
        case.supervisor_csrs
            .iter()
            .find(|&&(index, _)| index == i)
            .map_or(0, |&(_, v)| v)
    };
    let infmt = csr(index::FP_INFMT);
    // A's block (row, kb) at row·RA + kb·8·XSTEP (the ABI), gathered into panels.
    let ra = ((case.word(V_WORKERS + W_STRIDE) >> A_JUMP_SHIFT & 0x3ff) as usize + 3) * 8;
    let kstep = 8 * case.word(V_XSTEP) as usize;
    let a = &case.buffer("a").bytes;
    let mut panels = vec![0u8; kbs * m * PANEL_ROW_BYTES];
    for kb in 0..kbs {
        for row in 0..m {
            let from = row * ra + kb * kstep;
            panels[layout::panel_offset(kb, row, m)..][..PANEL_ROW_BYTES]
                .copy_from_slice(&a[from..from + PANEL_ROW_BYTES]);
        }
    }
    let c = reference_gemm(
        precision,
        m,
        kbs,
        nbs,
        &panels,
        &case.buffer("b").bytes,
        partials.as_deref(),
        Fp8Format::from_format_bit(infmt >> 1 & 1),
        Fp8Format::from_format_bit(infmt & 1),
        scale_from_field(csr(index::FP_ISCL)),
    );
    vec![bytes::from_u16(&c)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_isa::numerics::{fp8_decode, FP8_NAN};
    use Fp8Format::F143;

    fn one_value_gemm(
        precision: Precision,
        x: &[u8],
        w: &[u8],
        k: usize,
        partial: Option<u16>,
        scale: i32,
    ) -> u16 {
        let blocks = layout::weights_to_cwei_blocks(w, k, 1, precision.element_bytes());
        let panels = match precision {
            Precision::Fp8 => layout::fp8_to_panels(x, 1, k, 1),
            Precision::F16 => layout::f16_to_panels(&bytes::to_u16(x), 1, k, 1),
        };
        let partials = partial.map(|p| {
            let mut row = vec![0u16; 16];
            row[0] = p;
            row
        });
        let kbs = layout::k_blocks(k, precision.block());
        let c = reference_gemm(
            precision,
            1,
            kbs,
            1,
            &panels,
            &blocks,
            partials.as_deref(),
            F143,
            F143,
            scale,
        );
        assert_eq!(c.len(), 16);
        c[0]
    }

    #[test]
    fn fp8_single_product_and_padding() {
        // 0x40 = 1.0 and 0x48 = 2.0 in F143.
        assert_eq!(fp8_decode(0x48, F143), 2.0);
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40], &[0x48], 1, None, 0),
            0x4000
        );
        // The scale multiplies every product: 32 ones at 2^-4 = 2.0.
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40; 32], &[0x40; 32], 32, None, -4),
            0x4000
        );
        // The padded columns of C keep the partial (zero weights).
        let blocks = layout::weights_to_cwei_blocks(&[0x40], 1, 1, 1);
        let panels = layout::fp8_to_panels(&[0x40], 1, 1, 1);
        let c0: Vec<u16> = (0..16).map(|i| 0x3c00 + i).collect();
        let c = reference_gemm(
            Precision::Fp8,
            1,
            1,
            1,
            &panels,
            &blocks,
            Some(&c0),
            F143,
            F143,
            0,
        );
        assert_eq!(c[0], 0x4000); // 1 + 1
        assert_eq!(&c[1..], &c0[1..]);
    }

    #[test]
    fn each_k_block_rounds_to_f16() {
        // Partial 2048 (f16 ulp 2 there); two K-blocks each add 1.0: 2049 rounds to 2048 (ties to
        // even) after each block, so the result is 2048, not 2050.
        let mut x = vec![0u8; 64];
        let mut w = vec![0u8; 64];
        x[0] = 0x40;
        w[0] = 0x40;
        x[40] = 0x40;
        w[40] = 0x40;
        assert_eq!(
            one_value_gemm(Precision::Fp8, &x, &w, 64, Some(0x6800), 0),
            0x6800
        );
        // The same sum inside one K-block stays in f32: 2048 + 1 + 1 = 2050 (0x6801).
        x[40] = 0;
        w[40] = 0;
        x[9] = 0x40;
        w[9] = 0x40;
        assert_eq!(
            one_value_gemm(Precision::Fp8, &x, &w, 64, Some(0x6800), 0),
            0x6801
        );
    }

    #[test]
    fn f16_products_nan_and_overflow() {
        let x = bytes::from_u16(&[0x4000, 0x4200]); // 2, 3
        let w = bytes::from_u16(&[0x4400, 0xc000]); // 4, -2
        assert_eq!(
            one_value_gemm(Precision::F16, &x, &w, 2, Some(0x3c00), 0),
            0x4200
        ); // 1 + 2*4 + 3*(-2) = 3
        let nan_x = bytes::from_u16(&[0x7e00, 0]);
        assert_eq!(
            one_value_gemm(Precision::F16, &nan_x, &w, 2, None, 0),
            0x7e00
        );
        let big = bytes::from_u16(&[0x7bff, 0x7bff]);
        assert_eq!(
            one_value_gemm(
                Precision::F16,
                &big,
                &bytes::from_u16(&[0x4000, 0x4000]),
                2,
                None,
                0
            ),
            0x7c00
        );
        // An FP8 NaN code anywhere in the row makes the output NaN.
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40, FP8_NAN], &[0x40, 0x40], 2, None, 0),
            0x7e00
        );
    }

    /// Random bytes for every operand (so NaN codes, infinities, subnormals and f16 NaN
    /// payloads occur), both precisions, both formats each, scales on and off the f32 fast
    /// path, with and without partials: the channel-parallel reference gives the definition's
    /// bits.
    mod fast_path {
        use super::super::{reference_gemm, reference_gemm_by_definition};
        use super::*;
        use proptest::prelude::*;

        fn format() -> impl Strategy<Value = Fp8Format> {
            prop::sample::select(vec![Fp8Format::F143, Fp8Format::F152])
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
            #[test]
            fn equals_the_definition(
                fp8 in any::<bool>(),
                m in 1usize..6,
                kbs in 1usize..4,
                nbs in 1usize..3,
                seed in any::<u64>(),
                with_partials in any::<bool>(),
                x_format in format(),
                w_format in format(),
                scale in prop_oneof![4 => -20i32..=20, 1 => -200i32..=200],
            ) {
                let precision = if fp8 { Precision::Fp8 } else { Precision::F16 };
                let mut rng = tessera_isa::rng::Rng::new(seed);
                let mut bytes = |n: usize| -> Vec<u8> {
                    (0..n).map(|_| rng.next_u64() as u8).collect()
                };
                let panels = bytes(kbs * m * 32);
                let blocks = bytes(nbs * kbs * WEIGHT_BLOCK_BYTES);
                let partials: Option<Vec<u16>> = with_partials.then(|| {
                    bytes(2 * m * nbs * AMP_CHANNELS)
                        .chunks_exact(2)
                        .map(|c| u16::from_le_bytes([c[0], c[1]]))
                        .collect()
                });
                let args = (m, kbs, nbs, &panels, &blocks, partials.as_deref());
                let fast = reference_gemm(
                    precision, args.0, args.1, args.2, args.3, args.4, args.5, x_format,
                    w_format, scale,
                );
                let definition = reference_gemm_by_definition(
                    precision, args.0, args.1, args.2, args.3, args.4, args.5, x_format,
                    w_format, scale,
                );
                prop_assert_eq!(fast, definition);
            }
        }
    }
}
