//! The mid-level verifier: operands defined before use, shapes agree, and every op's operand
//! layouts are ones the op (and the kernels behind it) accept. Run after every pass in tests.

use super::{Distribution, Format, MidOp, MidProgram, Order};

/// Why a mid-level program is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-MID-{code:03} op %{op} ({name}): {reason}")]
pub struct MidVerifyError {
    pub code: u32,
    pub op: usize,
    pub name: &'static str,
    pub reason: String,
}

pub fn verify(program: &MidProgram) -> Result<(), MidVerifyError> {
    if program.ops.len() != program.values.len() {
        return Err(MidVerifyError {
            code: 1,
            op: 0,
            name: "program",
            reason: "ops and values differ in number".into(),
        });
    }
    let grid = &program.grid;
    if grid.rows.len() != grid.tm as usize {
        return Err(MidVerifyError {
            code: 2,
            op: 0,
            name: "program",
            reason: "grid row blocks do not match tm".into(),
        });
    }
    for (k, op) in program.ops.iter().enumerate() {
        let fail = |code: u32, reason: String| MidVerifyError {
            code,
            op: k,
            name: op.name(),
            reason,
        };
        for operand in op.operands() {
            if operand.0 as usize >= k {
                return Err(fail(
                    3,
                    format!("operand %{} is not defined before use", operand.0),
                ));
            }
        }
        let out = &program.values[k];
        let value = |id: super::ValueId| &program.values[id.0 as usize];
        let columns_ok = |d: &Distribution| match d {
            Distribution::Blocks { cols }
            | Distribution::WeightColumns { cols }
            | Distribution::VectorColumns { cols } => cols.len() == grid.tn as usize,
            _ => true,
        };
        if !columns_ok(&out.layout.distribution) {
            return Err(fail(4, "column blocks do not match tn".into()));
        }
        match op {
            MidOp::Input { .. } | MidOp::Weight { .. } => {}
            MidOp::LayerNorm { x, .. } => {
                let x = value(*x);
                if x.layout.distribution != Distribution::RowSegments
                    || out.layout.distribution != Distribution::RowSegments
                {
                    return Err(fail(10, "layernorm works on row segments".into()));
                }
                if (x.rows, x.cols) != (out.rows, out.cols) {
                    return Err(fail(11, "shape changes".into()));
                }
            }
            MidOp::Cast { x } | MidOp::Gelu { x } => {
                let x = value(*x);
                if x.layout.distribution != out.layout.distribution
                    || x.layout.order != out.layout.order
                    || (x.rows, x.cols) != (out.rows, out.cols)
                {
                    return Err(fail(12, "must keep distribution, order and shape".into()));
                }
            }
            MidOp::Gather { x } => {
                let x = value(*x);
                if out.layout.distribution != Distribution::RowBlocks {
                    return Err(fail(13, "a gather produces row blocks".into()));
                }
                match (&x.layout.distribution, x.layout.order, out.layout.order) {
                    (Distribution::RowSegments, Order::RowMajor { .. }, Order::RowMajor { .. }) => {
                    }
                    (Distribution::Blocks { cols }, Order::Panels, Order::Panels) => {
                        if cols.iter().any(|c| c.start % 32 != 0) {
                            return Err(fail(
                                14,
                                "gathering panels needs column blocks on 32-column boundaries"
                                    .into(),
                            ));
                        }
                    }
                    (d, o, p) => {
                        return Err(fail(15, format!("cannot gather {d:?} {o:?} into {p:?}")))
                    }
                }
                if x.layout.format != out.layout.format {
                    return Err(fail(16, "a gather does not convert".into()));
                }
            }
            MidOp::ToPanels { x } => {
                let x = value(*x);
                if !matches!(x.layout.order, Order::RowMajor { .. })
                    || out.layout.order != Order::Panels
                    || !matches!(x.layout.format, Format::Fp8 { .. })
                {
                    return Err(fail(17, "to_panels takes FP8 rows".into()));
                }
            }
            MidOp::MatMul { a, w } => {
                let (a, w) = (value(*a), value(*w));
                // Compare resolved geometry: any layout placing whole row blocks on every tile of
                // their grid row is as good as `RowBlocks` (e.g. one-column blocks when tn = 1).
                let as_row_blocks = super::MidValue {
                    layout: super::Layout {
                        distribution: Distribution::RowBlocks,
                        ..a.layout.clone()
                    },
                    ..a.clone()
                };
                if super::resolve(grid, a) != super::resolve(grid, &as_row_blocks)
                    || a.layout.order != Order::Panels
                {
                    return Err(fail(20, "a must be row blocks in panels".into()));
                }
                let Distribution::WeightColumns { cols } = &w.layout.distribution else {
                    return Err(fail(21, "w must be weight columns".into()));
                };
                if w.layout.order != Order::CweiBlocks
                    || !matches!(w.layout.format, Format::Fp8 { .. })
                    || !matches!(a.layout.format, Format::Fp8 { .. })
                {
                    return Err(fail(22, "FP8 operands in panels and $CWEI order".into()));
                }
                if a.cols != w.rows {
                    return Err(fail(
                        23,
                        format!("inner dimensions {} and {}", a.cols, w.rows),
                    ));
                }
                if out.layout.distribution != (Distribution::Blocks { cols: cols.clone() })
                    || out.layout.format != Format::F16
                {
                    return Err(fail(
                        24,
                        "the product is f16 blocks on the weight columns".into(),
                    ));
                }
            }
            MidOp::BiasAdd { x, bias } => {
                let (x, bias) = (value(*x), value(*bias));
                let (
                    Distribution::Blocks { cols },
                    Distribution::VectorColumns { cols: bias_cols },
                ) = (&x.layout.distribution, &bias.layout.distribution)
                else {
                    return Err(fail(
                        30,
                        "bias_add takes blocks and a column-split vector".into(),
                    ));
                };
                if cols != bias_cols || bias.cols != x.cols {
                    return Err(fail(
                        31,
                        "bias columns differ from the blocks' columns".into(),
                    ));
                }
            }
            MidOp::Add { a, b } => {
                let (a, b) = (value(*a), value(*b));
                if a.layout != b.layout || (a.rows, a.cols) != (b.rows, b.cols) {
                    return Err(fail(32, "add needs equal layouts".into()));
                }
            }
            MidOp::Output { x, .. } => {
                if value(*x).layout != out.layout {
                    return Err(fail(33, "output keeps its operand's layout".into()));
                }
            }
        }
    }
    Ok(())
}
