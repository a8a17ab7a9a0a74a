//! How a [`KernelParams`] becomes its kernel's case: the preconditions it is checked against
//! ([`KernelParams::check`]) and the kernel constructors the template is built with.

use super::{fp8_out, ElementOut, KernelParamError, KernelParams, LnParams};
use crate::case::{Case, Region};
use crate::elementwise::common::Fp8Out;
use crate::gemm::{GemmSpec, GEMM_F16, GEMM_FP8};
use crate::norm::layernorm::{Fp8Out as LnFp8, LnSpec, LAYERNORM_F16, LAYERNORM_FP8};
use crate::norm::layernorm_h::{LAYERNORM_H_F16, LAYERNORM_H_FP8};
use tessera_isa::numerics::Fp8Format;

impl KernelParams {
    /// Checks the kernel's preconditions (so building its template cannot fail).
    pub fn check(&self) -> Result<(), KernelParamError> {
        let fail = |reason: String| {
            Err(KernelParamError {
                kernel: self.id().name(),
                reason,
            })
        };
        match *self {
            KernelParams::Gemm(g) => {
                if g.m == 0 || g.k == 0 || g.n == 0 {
                    return fail(format!("empty GEMM {}x{}x{}", g.m, g.k, g.n));
                }
                if g.n.div_ceil(16) * 32 > crate::gemm::MAX_ROW_STRIDE_BYTES as u32 {
                    return fail(format!("{} columns exceed the row-stride field", g.n));
                }
                let block = if g.fp8 {
                    crate::layout::FP8_BLOCK
                } else {
                    crate::layout::F16_BLOCK
                };
                let spec = GemmSpec {
                    a_row_stride: (g.a_row_bytes > 0).then_some(g.a_row_bytes as usize),
                    ..GemmSpec::new(g.m as usize, g.k as usize, g.n as usize)
                };
                if !spec.a_rows_fit(block) {
                    return fail(format!(
                        "A in rows of {} bytes for K = {} (a multiple of 8 holding whole K-blocks of {block}, at most {})",
                        g.a_row_bytes,
                        g.k,
                        crate::gemm::MAX_ROW_STRIDE_BYTES
                    ));
                }
            }
            KernelParams::LayerNorm {
                rows,
                n,
                eps_bits,
                params,
                own,
                ..
            } => {
                let eps = f32::from_bits(eps_bits);
                if rows == 0
                    || n == 0
                    || (rows > 1 && n % 4 != 0)
                    || !(eps.is_finite() && eps >= 0.0)
                {
                    return fail(format!(
                        "{rows} rows of {n} (rows > 1 needs n % 4 == 0), eps {eps}"
                    ));
                }
                if let Some(w) = own {
                    if params != LnParams::F16 || n % 4 != 0 || w == 0 || w % 4 != 0 || w > n {
                        return fail(format!(
                            "a block of {w} of {n} columns (f16 parameters, both multiples of 4)"
                        ));
                    }
                }
            }
            KernelParams::Softmax {
                rows,
                cols,
                in_stride,
                scale_bits,
                segments,
            } => {
                let s = f32::from_bits(scale_bits);
                if !softmax_rows_ok(rows, cols, in_stride, s)
                    || segments == 0
                    || segments > 6
                    || segments as usize
                        != crate::elementwise::softmax_seg::segments(
                            cols as usize,
                            segments as usize,
                        )
                {
                    return fail(format!(
                        "{rows} rows of {cols}, stride {in_stride}, scale {s}, {segments} segments (1..=6, each with whole groups of 4)"
                    ));
                }
            }
            KernelParams::SoftmaxPart {
                rows,
                cols,
                in_stride,
                scale_bits,
                out,
            } => {
                let s = f32::from_bits(scale_bits);
                let panels = out == crate::elementwise::softmax_part::OutLayout::Panels;
                if !softmax_rows_ok(rows, cols, in_stride, s) || (panels && s != 1.0) {
                    return fail(format!(
                        "{rows} rows of {cols}, stride {in_stride}, scale {s}, {out:?} out (panels at scale 1 only)"
                    ));
                }
            }
            KernelParams::AttentionCombine(shape) => {
                if let Err(reason) = shape.check() {
                    return fail(reason);
                }
            }
            KernelParams::SumParts(shape) => {
                if let Err(reason) = shape.check() {
                    return fail(reason);
                }
            }
            KernelParams::BiasAdd { rows, cols, slots }
            | KernelParams::AddBias { rows, cols, slots } => {
                if let Some(reason) = slots.and_then(distinctness) {
                    return fail(reason);
                }
                if rows == 0 || cols == 0 || cols % 4 != 0 {
                    return fail(format!("{rows} rows of {cols} (needs cols % 4 == 0)"));
                }
            }
            KernelParams::AddCwei { rows } => {
                if rows == 0 || rows % crate::elementwise::add_cwei::ROW_MULTIPLE as u32 != 0 {
                    return fail(format!("{rows} rows of 16 (needs rows % 16 == 0)"));
                }
            }
            KernelParams::ResidualAdd { n, slots } => {
                if let Some(reason) = slots.and_then(distinctness) {
                    return fail(reason);
                }
                if n == 0 {
                    return fail("no elements".into());
                }
            }
            KernelParams::Gelu { n, .. } => {
                if n == 0 {
                    return fail("no elements".into());
                }
            }
            KernelParams::CopyRuns { .. }
            | KernelParams::Gather { .. }
            | KernelParams::Transpose4 { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => {
                // Their constructors check everything (tables, strides, overlaps, scales).
                if let Err(e) = self.build_checked() {
                    return fail(e);
                }
            }
        }
        Ok(())
    }

    /// The case of the table-driven kernels, whose constructors validate.
    pub(super) fn build_checked(&self) -> Result<Case, String> {
        match self {
            KernelParams::CopyRuns { slots, .. } => {
                let spec = self.copy_spec().expect("a copy");
                if crate::movement::copy_runs_on_supervisor(&spec) {
                    crate::movement::copy_runs_sup_case(&spec)
                } else {
                    crate::movement::copy_runs_case(&spec)
                }
            }
            .map_err(|e| e.to_string())
            .and_then(|mut case| {
                if let Some((src, dst)) = *slots {
                    if src == dst {
                        return Err(format!("src and dst in one element slot ({src})"));
                    }
                    // The constructor slots src and dst (0 and 1) only when it chose the paced
                    // loop; those slots become the caller's.
                    for buffer in &mut case.buffers {
                        match (buffer.name.as_str(), buffer.element_slot) {
                            ("src", Some(_)) => buffer.element_slot = Some(src),
                            ("dst", Some(_)) => buffer.element_slot = Some(dst),
                            _ => {}
                        }
                    }
                }
                Ok(case)
            }),
            KernelParams::Gather { .. } => self.gather_spec().map_or_else(
                || Err("not a gather".into()),
                |spec| crate::movement::gather_elements_case(&spec).map_err(|e| e.to_string()),
            ),
            KernelParams::Transpose4 { .. } => self.transpose4_spec().map_or_else(
                || Err("not a transpose".into()),
                |spec| crate::movement::transpose4_case(&spec).map_err(|e| e.to_string()),
            ),
            KernelParams::CastF32F16 { n } => {
                crate::convert::cast_f32_f16_case(crate::convert::CastF32F16Params {
                    n: *n,
                    placement: crate::convert::Placement::Anywhere {
                        input: Region::Standard,
                        output: Region::Standard,
                    },
                })
                .map_err(|e| e.to_string())
            }
            KernelParams::CastF16Fp8 { n, out } => {
                crate::convert::cast_f16_fp8_case(crate::convert::CastF16Fp8Params {
                    n: *n,
                    fp8: fp8_out(*out),
                    placement: crate::convert::Placement::Anywhere {
                        input: Region::Standard,
                        output: Region::Standard,
                    },
                })
                .map_err(|e| e.to_string())
            }
            KernelParams::Gemm(_)
            | KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::SumParts(_)
            | KernelParams::BiasAdd { .. }
            | KernelParams::AddBias { .. }
            | KernelParams::AddCwei { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. } => Ok(self.build()),
        }
    }

    pub(super) fn build(&self) -> Case {
        match *self {
            KernelParams::Gemm(g) => {
                let mut spec = GemmSpec::new(g.m as usize, g.k as usize, g.n as usize);
                spec.partials = false;
                spec.x_format = g.a_format;
                spec.w_format = g.b_format;
                spec.scale = g.scale;
                spec.a_region = Region::Standard;
                spec.a_row_stride = (g.a_row_bytes > 0).then_some(g.a_row_bytes as usize);
                // A template: the caller supplies the operands.
                spec.data = crate::gemm::Data::Zeros;
                if g.fp8 {
                    GEMM_FP8.make_case(&spec)
                } else {
                    GEMM_F16.make_case(&spec)
                }
            }
            KernelParams::LayerNorm {
                rows,
                n,
                eps_bits,
                params,
                out,
                own,
            } => {
                let (rows, n) = (rows as usize, n as usize);
                let fp8 = match out {
                    ElementOut::F16 => None,
                    ElementOut::Fp8(s) => Some(LnFp8 {
                        format: s.format,
                        scl: -(s.scale as i32),
                        nanoo: s.nanoo,
                    }),
                };
                let spec = LnSpec {
                    label: "compiled".into(),
                    rows,
                    n,
                    x: vec![0; rows * n],
                    gamma: vec![0.0; n],
                    beta: vec![0.0; n],
                    eps: f32::from_bits(eps_bits),
                    regions: [Region::Standard; 4],
                    // The deviation buffer saves the f32 normalising pass from recomputing
                    // x − mean; the f16 one takes none.
                    dev: params == LnParams::F32,
                    fp8,
                };
                // A block's case: the block at column 0 (a compiled call binds the block's x
                // to x at the block's offset).
                let block = own.map(|w| crate::norm::layernorm_h::ColBlock {
                    first: 0,
                    width: w as usize,
                });
                match (params, fp8.is_some(), block) {
                    (LnParams::F32, true, _) => LAYERNORM_FP8.make_case(spec),
                    (LnParams::F32, false, _) => LAYERNORM_F16.make_case(spec),
                    (LnParams::F16, true, None) => LAYERNORM_H_FP8.make_case(spec),
                    (LnParams::F16, false, None) => LAYERNORM_H_F16.make_case(spec),
                    (LnParams::F16, true, Some(b)) => {
                        crate::norm::layernorm_h::LAYERNORM_H_COLS_FP8.make_cols_case(spec, b)
                    }
                    (LnParams::F16, false, Some(b)) => {
                        crate::norm::layernorm_h::LAYERNORM_H_COLS_F16.make_cols_case(spec, b)
                    }
                }
            }
            KernelParams::Softmax {
                rows,
                cols,
                in_stride,
                scale_bits,
                segments,
            } => {
                if segments > 1 {
                    crate::elementwise::softmax_seg::compiler_case(
                        rows as usize,
                        cols as usize,
                        in_stride as usize,
                        segments as usize,
                        f32::from_bits(scale_bits),
                    )
                } else {
                    crate::elementwise::softmax_case(
                        rows as usize,
                        cols as usize,
                        in_stride as usize,
                        f32::from_bits(scale_bits),
                    )
                }
            }
            KernelParams::SoftmaxPart {
                rows,
                cols,
                in_stride,
                scale_bits,
                out,
            } => crate::elementwise::softmax_part::compiler_case(
                rows as usize,
                cols as usize,
                in_stride as usize,
                f32::from_bits(scale_bits),
                out,
            ),
            KernelParams::AttentionCombine(shape) => {
                crate::elementwise::attention_combine::compiler_case(shape)
            }
            KernelParams::SumParts(shape) => crate::elementwise::sum_parts::compiler_case(shape),
            KernelParams::BiasAdd { rows, cols, slots } => {
                crate::elementwise::bias_add_case(rows as usize, cols as usize, slots)
            }
            KernelParams::AddBias { rows, cols, slots } => {
                crate::elementwise::add_bias_case(rows as usize, cols as usize, slots)
            }
            KernelParams::AddCwei { rows } => {
                crate::elementwise::add_cwei::compiler_case(rows as usize)
            }
            KernelParams::ResidualAdd { n, slots } => crate::residual_add_case(n as usize, slots),
            KernelParams::Gelu { n, out } => match out {
                ElementOut::F16 => crate::elementwise::gelu_case(
                    n as usize,
                    crate::elementwise::GeluOutput::F16,
                    Fp8Out::new(Fp8Format::F143, 0, false),
                ),
                ElementOut::Fp8(s) => crate::elementwise::gelu_case(
                    n as usize,
                    crate::elementwise::GeluOutput::Fp8,
                    fp8_out(s),
                ),
            },
            KernelParams::CopyRuns { .. }
            | KernelParams::Gather { .. }
            | KernelParams::Transpose4 { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => match self.build_checked() {
                Ok(case) => case,
                // `check` ran the same constructor first, so this is unreachable; an empty
                // case would fail loudly at its first use rather than miscompute.
                Err(reason) => Case {
                    kernel: self.id().name().into(),
                    name: reason,
                    buffers: Vec::new(),
                    vertex: Vec::new(),
                    supervisor_csrs: Vec::new(),
                },
            },
        }
    }
}

/// The rows every softmax kernel takes: some rows of at least one value, a row stride of whole
/// groups of 4 covering the row, and a finite positive scale.
fn softmax_rows_ok(rows: u32, cols: u32, in_stride: u32, s: f32) -> bool {
    rows > 0
        && cols > 0
        && in_stride.is_multiple_of(4)
        && in_stride >= cols
        && s.is_finite()
        && s > 0.0
}

/// Why three element slots cannot serve a one-bundle-per-group loop (they must differ).
fn distinctness(slots: [u8; 3]) -> Option<String> {
    let [a, b, c] = slots;
    (a == b || a == c || b == c).then(|| format!("element slots {slots:?} are not all different"))
}
