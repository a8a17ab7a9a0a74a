//! Graph → distributed level: gives every graph value a layout on a grid and makes the
//! redistributions, reorders and casts explicit. The choice of grid (and so of every shard) is
//! the planner's; this pass applies the layout rules for each op kind:
//!
//! - a LayerNorm works on row segments (its input is fed by the host that way);
//! - a matmul reads its left operand as row blocks in AMP panels (inserting a gather and/or a
//!   reorder as needed) and its weights as column blocks in `$CWEI` order; its result is column
//!   blocks on the same tiles, with a row stride rounded up to 32 columns;
//! - element-wise ops keep their operand's layout; a residual `add` of a host input reads the
//!   input in the other operand's layout (the host writes it there too);
//! - outputs are read by the host from wherever they are.
//! Unsupported patterns are reported with the op and what was expected.

use super::{
    split_granular, Distribution, Format, Grid, Layout, MidOp, MidProgram, MidValue, Order, ValueId,
};
use crate::graph::{DType, Graph, Op, ValueHandle};
use std::collections::HashMap;

/// Why a graph cannot be distributed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-DIST-{code:03} node %{node} `{label}`: {reason}")]
pub struct DistError {
    pub code: u32,
    pub node: usize,
    pub label: String,
    pub reason: String,
}

fn format_of(dtype: DType) -> Format {
    match dtype {
        DType::F32 => Format::F32,
        DType::F16 => Format::F16,
        DType::Fp8 { format, scale } => Format::Fp8 { format, scale },
    }
}

/// Columns of a matmul result per grid column: whole 32-column K-blocks, so the result can be
/// gathered as panels for the next matmul.
pub fn matmul_columns(n: u32, tn: u32) -> Vec<std::ops::Range<u32>> {
    split_granular(n, tn, 32)
}

/// Row stride (in elements) of a column-block value: the widest block rounded up to 32.
pub fn block_stride(cols: &[std::ops::Range<u32>]) -> u32 {
    cols.iter()
        .map(|c| (c.end - c.start).div_ceil(32) * 32)
        .max()
        .unwrap_or(32)
        .max(32)
}

struct Lowering<'g> {
    graph: &'g Graph,
    program: MidProgram,
    /// Graph value → its mid value (in its producer's layout).
    values: HashMap<usize, ValueId>,
    /// Host inputs already requested in a layout: (tensor, layout) → value.
    inputs: Vec<(String, Layout, ValueId)>,
}

impl Lowering<'_> {
    fn fail(&self, node: usize, code: u32, reason: impl Into<String>) -> DistError {
        let label = self
            .graph
            .nodes
            .iter()
            .nth(node)
            .map(|(_, n)| n.label.clone())
            .unwrap_or_default();
        DistError {
            code,
            node,
            label,
            reason: reason.into(),
        }
    }

    fn shape(&self, handle: ValueHandle) -> (u32, u32) {
        let dims = &self.graph.nodes[handle].ty.shape.0;
        match dims.len() {
            1 => (1, dims[0] as u32),
            _ => (dims[0] as u32, dims[1] as u32),
        }
    }

    fn input_in(&mut self, tensor: &str, rows: u32, cols: u32, layout: Layout) -> ValueId {
        if let Some((_, _, id)) = self
            .inputs
            .iter()
            .find(|(t, l, _)| t == tensor && *l == layout)
        {
            return *id;
        }
        let id = self.program.push(
            MidOp::Input {
                tensor: tensor.into(),
            },
            MidValue {
                name: tensor.into(),
                rows,
                cols,
                layout: layout.clone(),
            },
        );
        self.inputs.push((tensor.into(), layout, id));
        id
    }

    fn weight(&mut self, node: usize, layout: Layout) -> Result<ValueId, DistError> {
        let (_, n) = self.graph.nodes.iter().nth(node).unwrap();
        let Op::Weight { name } = &n.op else {
            return Err(self.fail(node, 2, "expected a weight"));
        };
        let (rows, cols) = self.shape(crate::graph::arena::Handle::from_index(node as u32));
        Ok(self.program.push(
            MidOp::Weight {
                tensor: name.clone(),
            },
            MidValue {
                name: name.clone(),
                rows,
                cols,
                layout,
            },
        ))
    }

    /// The mid value of graph value `handle`, moved to row blocks in panels (for a matmul).
    fn as_panels(&mut self, node: usize, handle: ValueHandle) -> Result<ValueId, DistError> {
        let id = *self
            .values
            .get(&handle.index())
            .ok_or_else(|| self.fail(node, 3, "operand not lowered"))?;
        let value = self.program.value(id).clone();
        match (&value.layout.distribution, value.layout.order) {
            (Distribution::RowSegments, Order::RowMajor { stride }) => {
                let gathered = MidValue {
                    name: format!("{}.gathered", value.name),
                    layout: Layout {
                        distribution: Distribution::RowBlocks,
                        order: Order::RowMajor { stride },
                        format: value.layout.format,
                    },
                    ..value.clone()
                };
                let g = self.program.push(MidOp::Gather { x: id }, gathered.clone());
                let panels = MidValue {
                    name: format!("{}.panels", value.name),
                    layout: Layout {
                        order: Order::Panels,
                        ..gathered.layout.clone()
                    },
                    ..gathered
                };
                Ok(self.program.push(MidOp::ToPanels { x: g }, panels))
            }
            (Distribution::Blocks { .. }, Order::RowMajor { .. }) => {
                let panels = MidValue {
                    name: format!("{}.panels", value.name),
                    layout: Layout {
                        order: Order::Panels,
                        ..value.layout.clone()
                    },
                    ..value.clone()
                };
                let p = self.program.push(MidOp::ToPanels { x: id }, panels.clone());
                let gathered = MidValue {
                    name: format!("{}.gathered", value.name),
                    layout: Layout {
                        distribution: Distribution::RowBlocks,
                        ..panels.layout.clone()
                    },
                    ..panels
                };
                Ok(self.program.push(MidOp::Gather { x: p }, gathered))
            }
            (d, o) => Err(self.fail(
                node,
                4,
                format!("cannot bring a {d:?} {o:?} value to row-block panels"),
            )),
        }
    }

    fn lower_node(&mut self, node: usize) -> Result<(), DistError> {
        let handle: ValueHandle = crate::graph::arena::Handle::from_index(node as u32);
        let n = &self.graph.nodes[handle];
        let (rows, cols) = self.shape(handle);
        let format = format_of(n.ty.dtype);
        let grid = self.program.grid.clone();
        let result = match &n.op {
            // Inputs and weights are materialised by their consumers, in the layout each needs.
            Op::Input { .. } | Op::Weight { .. } => return Ok(()),
            Op::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            } => {
                let Op::Input { name } = &self.graph.nodes[*x].op else {
                    return Err(self.fail(node, 10, "layernorm of a computed value is not supported yet (its input must be a host input)"));
                };
                let layout = Layout {
                    distribution: Distribution::RowSegments,
                    order: Order::RowMajor { stride: cols },
                    format: Format::F16,
                };
                let x = self.input_in(&name.clone(), rows, cols, layout.clone());
                let vector = Layout {
                    distribution: Distribution::Replicated,
                    order: Order::Vector,
                    format: Format::F32,
                };
                let gamma = self.weight(gamma.index(), vector.clone())?;
                let beta = self.weight(beta.index(), vector)?;
                self.program.push(
                    MidOp::LayerNorm {
                        x,
                        gamma,
                        beta,
                        eps: *eps,
                    },
                    MidValue {
                        name: n.label.clone(),
                        rows,
                        cols,
                        layout: Layout { format, ..layout },
                    },
                )
            }
            Op::Cast { x, .. } => {
                let id = self.values[&x.index()];
                let layout = Layout {
                    format,
                    ..self.program.value(id).layout.clone()
                };
                self.program.push(
                    MidOp::Cast { x: id },
                    MidValue {
                        name: n.label.clone(),
                        rows,
                        cols,
                        layout,
                    },
                )
            }
            Op::MatMul { a, b } => {
                let a = self.as_panels(node, *a)?;
                let columns = matmul_columns(cols, grid.tn);
                let w_format = format_of(self.graph.nodes[*b].ty.dtype);
                let w = self.weight(
                    b.index(),
                    Layout {
                        distribution: Distribution::WeightColumns {
                            cols: columns.clone(),
                        },
                        order: Order::CweiBlocks,
                        format: w_format,
                    },
                )?;
                let stride = block_stride(&columns);
                self.program.push(
                    MidOp::MatMul { a, w },
                    MidValue {
                        name: n.label.clone(),
                        rows,
                        cols,
                        layout: Layout {
                            distribution: Distribution::Blocks { cols: columns },
                            order: Order::RowMajor { stride },
                            format,
                        },
                    },
                )
            }
            Op::BiasAdd { x, bias } => {
                let x = self.values[&x.index()];
                let value = self.program.value(x).clone();
                let Distribution::Blocks { cols: columns } = &value.layout.distribution else {
                    return Err(self.fail(
                        node,
                        11,
                        "bias_add on a value that is not in column blocks",
                    ));
                };
                let bias = self.weight(
                    bias.index(),
                    Layout {
                        distribution: Distribution::VectorColumns {
                            cols: columns.clone(),
                        },
                        order: Order::Vector,
                        format: Format::F16,
                    },
                )?;
                self.program.push(
                    MidOp::BiasAdd { x, bias },
                    MidValue {
                        name: n.label.clone(),
                        ..value
                    },
                )
            }
            Op::Gelu { x } => {
                let x = self.values[&x.index()];
                let value = self.program.value(x).clone();
                self.program.push(
                    MidOp::Gelu { x },
                    MidValue {
                        name: n.label.clone(),
                        ..value
                    },
                )
            }
            Op::Add { a, b } => {
                let (input, other) = match (&self.graph.nodes[*a].op, &self.graph.nodes[*b].op) {
                    (Op::Input { name }, _) => (name.clone(), *b),
                    (_, Op::Input { name }) => (name.clone(), *a),
                    _ => return Err(self.fail(node, 12, "add of two computed values needs a redistribution that is not supported yet")),
                };
                let other = self.values[&other.index()];
                let value = self.program.value(other).clone();
                let x = self.input_in(&input, rows, cols, value.layout.clone());
                self.program.push(
                    MidOp::Add { a: x, b: other },
                    MidValue {
                        name: n.label.clone(),
                        ..value
                    },
                )
            }
            Op::Output { x, name } => {
                let x = self.values[&x.index()];
                let value = self.program.value(x).clone();
                self.program.push(
                    MidOp::Output {
                        x,
                        tensor: name.clone(),
                    },
                    MidValue {
                        name: name.clone(),
                        ..value
                    },
                )
            }
            other => {
                return Err(self.fail(
                    node,
                    13,
                    format!("op {other:?} is not supported by the distributed lowering yet"),
                ))
            }
        };
        self.values.insert(node, result);
        Ok(())
    }
}

/// Distributes a (verified) graph on `grid`.
pub fn distribute(graph: &Graph, grid: Grid) -> Result<MidProgram, DistError> {
    let mut lowering = Lowering {
        graph,
        program: MidProgram::new(grid),
        values: HashMap::new(),
        inputs: Vec::new(),
    };
    for node in 0..graph.nodes.len() {
        lowering.lower_node(node)?;
    }
    Ok(lowering.program)
}
