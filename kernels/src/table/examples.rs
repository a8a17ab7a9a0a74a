//! One representative call of every kernel the compiler calls, for tests of the back end.

use super::{ElementOut, Fp8Setting, GemmParams, KernelParams, LnParams};
use std::sync::Arc;
use tessera_isa::numerics::Fp8Format;

impl KernelParams {
    /// One representative call of every kernel the compiler calls (for tests of the back end).
    pub fn examples() -> Vec<KernelParams> {
        let fp8 = Fp8Setting {
            format: Fp8Format::F143,
            scale: -4,
            nanoo: false,
        };
        let gemm = |fp8: bool| {
            KernelParams::Gemm(GemmParams {
                fp8,
                m: 7,
                k: 80,
                n: 40,
                a_format: Fp8Format::F143,
                b_format: Fp8Format::F152,
                scale: -6,
                a_row_bytes: 0,
            })
        };
        vec![
            gemm(true),
            // A in rows (K = 96: three FP8 K-blocks in rows of 104 bytes).
            KernelParams::Gemm(GemmParams {
                fp8: true,
                m: 7,
                k: 96,
                n: 40,
                a_format: Fp8Format::F143,
                b_format: Fp8Format::F143,
                scale: -8,
                a_row_bytes: 104,
            }),
            KernelParams::Gelu {
                n: 100,
                out: ElementOut::Fp8(fp8),
            },
            KernelParams::ResidualAdd { n: 64, slots: None },
            KernelParams::AddCwei { rows: 48 },
            KernelParams::BiasAdd {
                rows: 3,
                cols: 24,
                slots: None,
            },
            gemm(false),
            KernelParams::Gelu {
                n: 72,
                out: ElementOut::F16,
            },
            KernelParams::Softmax {
                rows: 5,
                cols: 29,
                in_stride: 32,
                scale_bits: 0.125f32.to_bits(),
                segments: 1,
            },
            KernelParams::Softmax {
                rows: 2,
                cols: 29,
                in_stride: 32,
                scale_bits: 0.125f32.to_bits(),
                segments: 3,
            },
            KernelParams::LayerNorm {
                rows: 2,
                n: 64,
                eps_bits: 1e-6f32.to_bits(),
                params: LnParams::F32,
                out: ElementOut::F16,
                own: None,
            },
            KernelParams::LayerNorm {
                rows: 3,
                n: 32,
                eps_bits: 1e-5f32.to_bits(),
                params: LnParams::F32,
                out: ElementOut::Fp8(fp8),
                own: None,
            },
            KernelParams::LayerNorm {
                rows: 2,
                n: 64,
                eps_bits: 1e-6f32.to_bits(),
                params: LnParams::F16,
                out: ElementOut::F16,
                own: None,
            },
            KernelParams::LayerNorm {
                rows: 3,
                n: 32,
                eps_bits: 1e-5f32.to_bits(),
                params: LnParams::F16,
                out: ElementOut::Fp8(fp8),
                own: None,
            },
            KernelParams::CastF32F16 { n: 37 },
            KernelParams::CastF16Fp8 { n: 50, out: fp8 },
            KernelParams::CopyRuns {
                runs: Arc::new(vec![
                    crate::movement::Run::copy(0, 8, 32),
                    crate::movement::Run::zeros(0, 8),
                ]),
                outer: 3,
                src_stride: 64,
                dst_stride: 40,
                granule: crate::movement::Granule::Word8,
                slots: None,
            },
        ]
    }
}
