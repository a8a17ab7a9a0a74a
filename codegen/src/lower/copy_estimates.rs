//! What the calls of a local copy cost, for choosing between cuts of it: the copy kernels'
//! estimates from their tables alone, without building (and keeping) a template per candidate.

use tessera_kernels::table::KernelParams;

/// The estimated cycles of `calls`, from their tables alone for the copy kernels (a template
/// per candidate call would be built and kept for the whole run: at So400m batch 4 that held
/// gigabytes), else their templates' estimates.
pub(super) fn estimated(calls: &[KernelParams]) -> u64 {
    use tessera_kernels::movement::{
        gather_elements_estimate, transpose4_estimate, GatherSpec, Transpose4Spec,
    };
    calls
        .iter()
        .map(|c| match c {
            KernelParams::Gather {
                words,
                outer,
                src_stride,
                dst_stride,
                element,
            } => gather_elements_estimate(&GatherSpec {
                words: words.to_vec(),
                outer: *outer,
                src_stride: *src_stride,
                dst_stride: *dst_stride,
                element: *element,
            }),
            KernelParams::Transpose4 {
                blocks,
                outer,
                src_stride,
                dst_stride,
                row,
                col,
            } => Some(transpose4_estimate(&Transpose4Spec {
                blocks: blocks.to_vec(),
                outer: *outer,
                src_stride: *src_stride,
                dst_stride: *dst_stride,
                row: *row,
                col: *col,
            })),
            KernelParams::Gemm(_)
            | KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::BiasAdd { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. }
            | KernelParams::CopyRuns { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => c.estimate_cycles().ok(),
        })
        .map(|e| e.unwrap_or(u64::MAX / 64))
        .sum()
}
