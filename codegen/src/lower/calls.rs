//! The kernel calls of every compute op, written once: [`compute_calls`] turns an op kind and
//! the layouts of its result and operands into the typed call every tile makes (all tiles of a
//! value have the same padded block, so the same params) and how many of them (one per entry
//! of the leading dimensions a matmul loops over). The planner costs strategies with it and the
//! lowering emits it, so the two cannot disagree.

use crate::graph::DType;
use crate::layout::{Layout, Order, ShardMap};
use tessera_isa::numerics::Fp8Format;
use tessera_kernels::elementwise::softmax_part;
use tessera_kernels::table::{ElementOut, Fp8Setting, GemmParams, KernelParams, LnParams};

/// A compute op as the kernels see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ComputeKind {
    MatMul {
        fp8: bool,
    },
    /// `slots`: the element slots of x, bias and out for the one-bundle-per-group loop.
    BiasAdd {
        slots: Option<[u8; 3]>,
    },
    /// `slots`: the element slots of a, b and out for the one-bundle-per-group loop.
    Add {
        slots: Option<[u8; 3]>,
    },
    /// `(a + b) + bias`; `slots`: the element slots of a, b and out for the two-bundle-per-group
    /// loops.
    AddBias {
        slots: Option<[u8; 3]>,
    },
    Gelu,
    Softmax {
        scale: f32,
    },
    SoftmaxPart {
        scale: f32,
    },
    AttentionCombine,
    SumParts,
    LayerNorm {
        eps: f32,
    },
    Cast,
}

fn map(layout: &Layout) -> Result<ShardMap, String> {
    layout.shard_map().map_err(|e| e.to_string())
}

/// The blocks per row and the padded row width of an operand `[.., C, D]` whose C blocks of a
/// row an op reduces to the result's row `[.., D]` (`attention_combine`, `sum_parts`): both rows
/// padded alike, to a multiple of `multiple` elements.
fn blocks_beside_rows(
    op: &str,
    blocks: &ShardMap,
    out: &ShardMap,
    multiple: u32,
) -> Result<(u32, u32), String> {
    let padded = blocks.padded();
    let count = padded[padded.len().saturating_sub(2)];
    let width = blocks.row_elements();
    if width != out.row_elements() || !width.is_multiple_of(multiple) {
        return Err(format!(
            "{op}: blocks of {width} values padded, output rows of {}: both must be the same \
             multiple of {multiple}",
            out.row_elements()
        ));
    }
    Ok((count, width))
}

/// Elements of a buffer (the padded box).
fn elements(m: &ShardMap) -> u32 {
    m.bytes() / m.element_bytes()
}

/// Rows of a buffer: the product of all padded dimensions but the last.
fn rows_of(m: &ShardMap) -> u32 {
    let p = m.padded();
    p[..p.len() - 1].iter().product::<u32>().max(1)
}

fn fp8_setting(dtype: DType) -> Option<Fp8Setting> {
    match dtype {
        DType::Fp8 { format, scale } => Some(Fp8Setting {
            format,
            scale,
            nanoo: false,
        }),
        DType::F16 | DType::F32 => None,
    }
}

fn element_out(dtype: DType) -> ElementOut {
    match fp8_setting(dtype) {
        Some(s) => ElementOut::Fp8(s),
        None => ElementOut::F16,
    }
}

/// The segments a tile's softmax cuts its rows into (1: whole rows per worker, `softmax_f16`):
/// the count whose estimate is least, so that six workers share few rows evenly.
fn softmax_segments(rows: u32, cols: u32) -> u32 {
    use tessera_kernels::elementwise::{softmax_seg, Softmax};
    use tessera_kernels::Kernel;
    let whole = Softmax.estimate_cycles(&tessera_kernels::elementwise::softmax_case(
        rows as usize,
        cols as usize,
        4 * cols.div_ceil(4) as usize,
        1.0,
    ));
    (2..=6usize)
        .map(|n| softmax_seg::segments(cols as usize, n))
        .filter(|&n| n > 1)
        .map(|n| {
            (
                softmax_seg::estimate_call(rows as usize, cols as usize, n),
                n as u32,
            )
        })
        .filter(|&(cycles, _)| cycles < whole)
        .min()
        .map_or(1, |(_, n)| n)
}

/// Columns of a product's panel, the AMP's output channels.
const PANEL_COLUMNS: u32 = 16;

/// For a product whose result is in panels (`[..][nb][m][16 columns]`, the rows of each column
/// block together): its column blocks per leading entry, one `gemm_*` call each (the same A,
/// block `nb` of B's `$CWEI` blocks, panel `nb` of the result). `None` for a product in rows
/// and for other kinds.
pub fn column_panels(kind: &ComputeKind, out: &Layout) -> Option<u32> {
    let ComputeKind::MatMul { .. } = kind else {
        return None;
    };
    if out.order != Order::Panels {
        return None;
    }
    let om = map(out).ok()?;
    Some(om.padded()[om.rank() - 1].div_ceil(PANEL_COLUMNS).max(1))
}

/// The call every tile of `out` makes for `kind`, and how many times.
pub fn compute_calls(
    kind: &ComputeKind,
    out: &Layout,
    operands: &[&Layout],
) -> Result<(KernelParams, u32), String> {
    let om = map(out)?;
    let rank = om.rank();
    let last = rank - 1;
    let params = match *kind {
        ComputeKind::MatMul { fp8 } => {
            let [a, b] = operands else {
                return Err("a matmul has two operands".into());
            };
            let k = a.dist.shape()[last];
            let (a_format, a_scale) = match a.dtype {
                DType::Fp8 { format, scale } => (format, scale as i32),
                DType::F16 | DType::F32 => (Fp8Format::F143, 0),
            };
            let (b_format, b_scale) = match b.dtype {
                DType::Fp8 { format, scale } => (format, scale as i32),
                DType::F16 | DType::F32 => (Fp8Format::F143, 0),
            };
            // A in rows where its layout is row-major (the kernel reads them at their stride),
            // else in AMP-left panels.
            let am = map(a)?;
            let a_row_bytes = match am.order {
                Order::RowMajor { .. } => am.row_elements() * am.element_bytes(),
                Order::Panels => 0,
                Order::Cwei => return Err("a matmul's A is rows or panels, not $CWEI".into()),
            };
            // A result in panels: one call per column block ([`column_panels`]), each writing
            // its block's rows as one panel.
            let n = om.padded()[last];
            let panels = column_panels(kind, out).unwrap_or(1);
            let params = KernelParams::Gemm(GemmParams {
                fp8,
                m: om.padded()[rank - 2],
                k,
                n: n / panels,
                a_format,
                b_format,
                scale: if fp8 { a_scale + b_scale } else { 0 },
                a_row_bytes,
            });
            let calls = om.padded()[..rank - 2].iter().product::<u32>().max(1) * panels;
            return Ok((params, calls));
        }
        ComputeKind::BiasAdd { slots } => KernelParams::BiasAdd {
            rows: rows_of(&om),
            cols: om.row_elements(),
            slots,
        },
        ComputeKind::Add { slots } => match (om.order, operands.first().map(|l| l.order)) {
            // Element by element in one order.
            (order, Some(a)) if a == order => KernelParams::ResidualAdd {
                n: elements(&om),
                slots,
            },
            // Row-major blocks of 16 columns in, `$CWEI` out (`add_cwei_f16`).
            (Order::Cwei, _) => {
                let padded = om.padded();
                let dense_rows = |l: &Layout| {
                    map(l).is_ok_and(|m| {
                        matches!(m.order, Order::RowMajor { .. })
                            && m.padded() == padded
                            && m.row_elements() == padded[last]
                    })
                };
                if rank != 2
                    || padded[last] != tessera_kernels::elementwise::add_cwei::COLUMNS as u32
                    || slots.is_some()
                    || !operands.iter().all(|l| dense_rows(l))
                {
                    return Err(format!(
                        "an add into $CWEI order takes row-major blocks of [rows, 16] to a \
                         [rows, 16] block, not {padded:?} (rank {rank})"
                    ));
                }
                KernelParams::AddCwei { rows: padded[0] }
            }
            (Order::RowMajor { .. } | Order::Panels, _) => {
                return Err(format!(
                    "an add into {:?} order reads its operands in that order",
                    om.order
                ))
            }
        },
        ComputeKind::AddBias { slots } => KernelParams::AddBias {
            rows: rows_of(&om),
            cols: om.row_elements(),
            slots,
        },
        ComputeKind::Gelu => KernelParams::Gelu {
            n: elements(&om),
            out: element_out(out.dtype),
        },
        ComputeKind::Softmax { scale } => {
            let [x] = operands else {
                return Err("softmax has one operand".into());
            };
            let (rows, cols) = (rows_of(&om), out.dist.shape()[last]);
            KernelParams::Softmax {
                rows,
                cols,
                in_stride: map(x)?.row_elements(),
                scale_bits: scale.to_bits(),
                segments: softmax_segments(rows, cols),
            }
        }
        ComputeKind::SoftmaxPart { scale } => {
            let [x] = operands else {
                return Err("softmax_part has one operand".into());
            };
            let cols = x.dist.shape()[last];
            let in_stride = map(x)?.row_elements();
            // Panels pad the row to whole blocks of 16: the statistics block is written whole.
            let expected = match om.order {
                Order::Panels => softmax_part::out_row_halves(cols as usize).div_ceil(16) * 16,
                Order::RowMajor { .. } | Order::Cwei => softmax_part::out_row_halves(cols as usize),
            } as u32;
            if om.padded()[last] != expected {
                return Err(format!(
                    "softmax_part of {cols} scores writes rows of {expected} halves, not {}",
                    om.padded()[last]
                ));
            }
            match om.order {
                Order::RowMajor { .. } => KernelParams::SoftmaxPart {
                    rows: rows_of(&om),
                    cols,
                    in_stride,
                    scale_bits: scale.to_bits(),
                    out: softmax_part::OutLayout::Rows,
                },
                // Panels: one call per entry of the leading dimensions, as a matmul's.
                Order::Panels => {
                    let padded = om.padded();
                    let params = KernelParams::SoftmaxPart {
                        rows: padded[last - 1],
                        cols,
                        in_stride,
                        scale_bits: scale.to_bits(),
                        out: softmax_part::OutLayout::Panels,
                    };
                    let calls = padded[..last - 1].iter().product::<u32>().max(1);
                    return Ok((params, calls));
                }
                Order::Cwei => return Err("softmax_part writes rows or panels, not $CWEI".into()),
            }
        }
        ComputeKind::AttentionCombine => {
            let [parts, stats] = operands else {
                return Err("attention_combine has two operands".into());
            };
            // parts [.., C, R, D] and stats [.., C, R, 2] (a block's rows together), out
            // [.., R, D]: one call per entry of the leading dimensions.
            let (pm, sm) = (map(parts)?, map(stats)?);
            let (pp, op) = (pm.padded(), om.padded());
            let n = pp.len();
            let (blocks, rows, row) = (pp[n - 3], pp[n - 2], pm.row_elements());
            let width = om.row_elements();
            if op[op.len() - 2] != rows || !width.is_multiple_of(8) || width > row {
                return Err(format!(
                    "attention_combine: {rows} rows of parts {row} wide padded, output rows of \
                     {width} in {}: the same rows, the output a multiple of 8 no wider",
                    op[op.len() - 2]
                ));
            }
            let params = KernelParams::AttentionCombine(
                tessera_kernels::elementwise::attention_combine::Shape {
                    rows: rows as usize,
                    blocks: blocks as usize,
                    pairs: (width / 8) as usize,
                    part_stride: (rows * row) as usize,
                    row_stride: row as usize,
                    stats_row: sm.row_elements() as usize,
                    stats_block: (sm.padded()[n - 2] * sm.row_elements()) as usize,
                },
            );
            let calls = op[..op.len() - 2].iter().product::<u32>().max(1);
            return Ok((params, calls));
        }
        ComputeKind::SumParts => {
            // The parts, and a bias when a bias add was fused into the sum.
            let (x, bias) = match operands {
                [x] => (x, false),
                [x, _] => (x, true),
                _ => return Err("sum_parts has the parts and at most a bias".into()),
            };
            let (parts, width) = blocks_beside_rows("sum_parts", &map(x)?, &om, 4)?;
            KernelParams::SumParts(tessera_kernels::elementwise::sum_parts::Shape {
                rows: rows_of(&om) as usize,
                parts: parts as usize,
                groups: (width / 4) as usize,
                part_stride: width as usize,
                row_stride: (parts * width) as usize,
                bias,
            })
        }
        ComputeKind::LayerNorm { eps } => {
            let [_, gamma, _] = operands else {
                return Err("a layernorm has three operands".into());
            };
            // f16 gamma and beta (the planner admits them where the width is whole groups of
            // 4) pick the f16 affine steps.
            let params = if gamma.dtype == DType::F16 {
                LnParams::F16
            } else {
                LnParams::F32
            };
            // A result split by columns normalises its block of rows whole beside it.
            let own = (!out.dist.is_whole(last)).then(|| om.row_elements());
            KernelParams::LayerNorm {
                rows: rows_of(&om),
                n: out.dist.shape()[last],
                eps_bits: eps.to_bits(),
                params,
                out: element_out(out.dtype),
                own,
            }
        }
        ComputeKind::Cast => {
            let [x] = operands else {
                return Err("a cast has one operand".into());
            };
            match (x.dtype, fp8_setting(out.dtype)) {
                (DType::F32, None) => KernelParams::CastF32F16 { n: elements(&om) },
                (DType::F16, Some(s)) => KernelParams::CastF16Fp8 {
                    n: elements(&om),
                    out: s,
                },
                (from, _) => return Err(format!("no kernel casts {from} to {}", out.dtype)),
            }
        }
    };
    params.check().map_err(|e| e.to_string())?;
    Ok((params, 1))
}
