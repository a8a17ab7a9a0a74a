//! The graph's data structures: [`Op`], [`Node`], [`Region`] and [`Graph`].
//!
//! See the [module documentation](super) for the semantics of every op.

use super::arena::{Arena, Handle};
use super::types::{DType, Shape, TensorType};

/// A handle to a node, which is also the value the node defines.
pub type ValueHandle = Handle<Node>;
/// A handle to a region (the body of a [`Op::Repeat`]).
pub type RegionHandle = Handle<Region>;

/// A pattern for every compute op: every [`Op`] but `Input`, `Weight`, `Repeat` and `Output`
/// ([`kernel_op!`] and [`view_op!`]). Matches that treat all compute ops alike use it in place
/// of `_`, so a new op is classed here once and every match that must tell it apart still fails
/// to compile.
macro_rules! compute_op {
    () => {
        $crate::graph::op::kernel_op!() | $crate::graph::op::view_op!()
    };
}
pub(crate) use compute_op;

/// A pattern for the compute ops that run a kernel (data is computed).
macro_rules! kernel_op {
    () => {
        $crate::graph::Op::MatMul { .. }
            | $crate::graph::Op::BatchedMatMul { .. }
            | $crate::graph::Op::Add { .. }
            | $crate::graph::Op::BiasAdd { .. }
            | $crate::graph::Op::LayerNorm { .. }
            | $crate::graph::Op::Gelu { .. }
            | $crate::graph::Op::Softmax { .. }
            | $crate::graph::Op::SoftmaxPart { .. }
            | $crate::graph::Op::AttentionCombine { .. }
            | $crate::graph::Op::SumParts { .. }
            | $crate::graph::Op::Cast { .. }
    };
}
pub(crate) use kernel_op;

/// A pattern for the compute ops that are views (no data moves: a new shape or order over the
/// same elements).
macro_rules! view_op {
    () => {
        $crate::graph::Op::Reshape { .. }
            | $crate::graph::Op::Transpose { .. }
            | $crate::graph::Op::Slice { .. }
            | $crate::graph::Op::Pad { .. }
            | $crate::graph::Op::SplitHeads { .. }
            | $crate::graph::Op::MergeHeads { .. }
            | $crate::graph::Op::Broadcast { .. }
    };
}
pub(crate) use view_op;

/// One operation. Every op defines exactly one value (SSA); operands are values defined
/// earlier in the same graph.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A graph input (or, in a region body, a region parameter), fed by the host.
    Input { name: String },
    /// A constant tensor whose host data lives in a
    /// [`WeightStore`](super::weights::WeightStore) under `name` (as f32). The node's type says
    /// how the compiler stores it on the tiles (f32, f16, or FP8 with a scale).
    Weight { name: String },
    /// `[M, K] × [K, N] → [M, N]`.
    MatMul { a: ValueHandle, b: ValueHandle },
    /// `[B, M, K] × [B, K, N] → [B, M, N]`: B independent matmuls.
    BatchedMatMul { a: ValueHandle, b: ValueHandle },
    /// Element-wise `a + b`, same shape and dtype.
    Add { a: ValueHandle, b: ValueHandle },
    /// `x[..., n] + bias[n]`, the bias broadcast over every leading index.
    BiasAdd { x: ValueHandle, bias: ValueHandle },
    /// Layer normalisation over the last dimension, then `× gamma + beta`.
    LayerNorm {
        x: ValueHandle,
        gamma: ValueHandle,
        beta: ValueHandle,
        eps: f32,
    },
    /// GELU, tanh approximation.
    Gelu { x: ValueHandle },
    /// `softmax(scale · x)` over the last dimension.
    Softmax { x: ValueHandle, scale: f32 },
    /// One key block of a softmax split along its last dimension: per row the exponentials
    /// relative to its scaled maximum, zeros to whole AMP K-blocks, the maximum and the sum of
    /// the exponentials (`[..., K] → [..., softmax_part_width(K)]`; see the module
    /// documentation).
    SoftmaxPart { x: ValueHandle, scale: f32 },
    /// The key blocks of an attention combined: `parts [..., C, R, D]` (block j's exponentials
    /// times its values, a block's R rows together as its product writes them) and
    /// `stats [..., C, R, 2]` (each block's rows' (max, sum) from `SoftmaxPart`, likewise
    /// together as each block's part writes them) → `[..., R, D]`.
    AttentionCombine {
        parts: ValueHandle,
        stats: ValueHandle,
    },
    /// The parts of every row summed column by column: `x [..., C, D]` → `[..., D]`, f16, each
    /// column's sum in f32 in order and rounded once (the K-chunks of a product split along K).
    SumParts { x: ValueHandle },
    /// Conversion to another dtype.
    Cast { x: ValueHandle, to: DType },
    /// Same elements in the same row-major order, new shape.
    Reshape { x: ValueHandle, shape: Shape },
    /// Permutes dimensions: result dimension `i` is operand dimension `perm[i]`.
    Transpose { x: ValueHandle, perm: Vec<usize> },
    /// The half-open range `start..end` of dimension `axis` (e.g. Q, K or V out of a fused
    /// QKV projection).
    Slice {
        x: ValueHandle,
        axis: usize,
        start: usize,
        end: usize,
    },
    /// `x` with zeros appended along dimension `axis` to length `len` (≥ x's; e.g. a key
    /// block's values to whole AMP K-blocks, as its exponentials are).
    Pad {
        x: ValueHandle,
        axis: usize,
        len: usize,
    },
    /// `[B·T, H·D] → [B·H, T, D]` with `heads` = H and `batch` = B.
    SplitHeads {
        x: ValueHandle,
        heads: usize,
        batch: usize,
    },
    /// `[B·H, T, D] → [B·T, H·D]` with `heads` = H (the inverse of `SplitHeads`).
    MergeHeads { x: ValueHandle, heads: usize },
    /// `x` repeated to `shape` (numpy broadcasting, right-aligned: each dimension of `x` is 1 or
    /// equals the result's; missing leading dimensions are added).
    Broadcast { x: ValueHandle, shape: Shape },
    /// Applies region `region` `count` times. `args[0]` is the loop-carried value; the other
    /// args are passed unchanged to every iteration. In iteration `i` (from 0), a body weight
    /// `name` stands for the store tensor `weight_prefix.replace("{i}", i) + name`.
    Repeat {
        region: RegionHandle,
        count: u32,
        args: Vec<ValueHandle>,
        weight_prefix: String,
    },
    /// Marks `x` as the graph output `name`. Its value is `x`; it cannot be an operand.
    Output { x: ValueHandle, name: String },
}

impl Op {
    /// The op's name in dumps and error messages.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Op::Input { .. } => "input",
            Op::Weight { .. } => "weight",
            Op::MatMul { .. } => "matmul",
            Op::BatchedMatMul { .. } => "batched_matmul",
            Op::Add { .. } => "add",
            Op::BiasAdd { .. } => "bias_add",
            Op::LayerNorm { .. } => "layernorm",
            Op::Gelu { .. } => "gelu",
            Op::Softmax { .. } => "softmax",
            Op::SoftmaxPart { .. } => "softmax_part",
            Op::AttentionCombine { .. } => "attention_combine",
            Op::SumParts { .. } => "sum_parts",
            Op::Cast { .. } => "cast",
            Op::Reshape { .. } => "reshape",
            Op::Transpose { .. } => "transpose",
            Op::Slice { .. } => "slice",
            Op::Pad { .. } => "pad",
            Op::SplitHeads { .. } => "split_heads",
            Op::MergeHeads { .. } => "merge_heads",
            Op::Broadcast { .. } => "broadcast",
            Op::Repeat { .. } => "repeat",
            Op::Output { .. } => "output",
        }
    }

    /// Operands with their names (as used in error messages), in order.
    pub fn operands(&self) -> Vec<(&'static str, ValueHandle)> {
        match self {
            Op::Input { .. } | Op::Weight { .. } => vec![],
            Op::MatMul { a, b } | Op::BatchedMatMul { a, b } | Op::Add { a, b } => {
                vec![("a", *a), ("b", *b)]
            }
            Op::BiasAdd { x, bias } => vec![("x", *x), ("bias", *bias)],
            Op::AttentionCombine { parts, stats } => vec![("parts", *parts), ("stats", *stats)],
            Op::LayerNorm { x, gamma, beta, .. } => {
                vec![("x", *x), ("gamma", *gamma), ("beta", *beta)]
            }
            Op::Gelu { x }
            | Op::Softmax { x, .. }
            | Op::SoftmaxPart { x, .. }
            | Op::SumParts { x }
            | Op::Cast { x, .. }
            | Op::Reshape { x, .. }
            | Op::Transpose { x, .. }
            | Op::Slice { x, .. }
            | Op::Pad { x, .. }
            | Op::SplitHeads { x, .. }
            | Op::MergeHeads { x, .. }
            | Op::Broadcast { x, .. }
            | Op::Output { x, .. } => vec![("x", *x)],
            Op::Repeat { args, .. } => args
                .iter()
                .enumerate()
                .map(|(i, a)| (repeat_arg_name(i), *a))
                .collect(),
        }
    }

    /// Rewrites every operand handle with `f` (for passes that renumber or replace values).
    pub fn map_operands(&mut self, mut f: impl FnMut(ValueHandle) -> ValueHandle) {
        match self {
            Op::Input { .. } | Op::Weight { .. } => {}
            Op::MatMul { a, b } | Op::BatchedMatMul { a, b } | Op::Add { a, b } => {
                *a = f(*a);
                *b = f(*b);
            }
            Op::BiasAdd { x, bias } => {
                *x = f(*x);
                *bias = f(*bias);
            }
            Op::AttentionCombine { parts, stats } => {
                *parts = f(*parts);
                *stats = f(*stats);
            }
            Op::LayerNorm { x, gamma, beta, .. } => {
                *x = f(*x);
                *gamma = f(*gamma);
                *beta = f(*beta);
            }
            Op::Gelu { x }
            | Op::Softmax { x, .. }
            | Op::SoftmaxPart { x, .. }
            | Op::SumParts { x }
            | Op::Cast { x, .. }
            | Op::Reshape { x, .. }
            | Op::Transpose { x, .. }
            | Op::Slice { x, .. }
            | Op::Pad { x, .. }
            | Op::SplitHeads { x, .. }
            | Op::MergeHeads { x, .. }
            | Op::Broadcast { x, .. }
            | Op::Output { x, .. } => *x = f(*x),
            Op::Repeat { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
        }
    }

    /// The tensor name of an input, weight or output; `None` for other ops.
    pub fn tensor_name(&self) -> Option<&str> {
        match self {
            Op::Input { name } | Op::Weight { name } | Op::Output { name, .. } => Some(name),
            compute_op!() | Op::Repeat { .. } => None,
        }
    }
}

/// Operand names of a repeat's arguments: `args[0]`, `args[1]`, …
fn repeat_arg_name(i: usize) -> &'static str {
    const NAMES: [&str; 8] = [
        "args[0]", "args[1]", "args[2]", "args[3]", "args[4]", "args[5]", "args[6]", "args[7]",
    ];
    NAMES.get(i).copied().unwrap_or("args[…]")
}

/// The store name of body weight `name` in iteration `iteration` of a repeat.
pub fn repeat_weight_name(weight_prefix: &str, iteration: u32, name: &str) -> String {
    format!(
        "{}{}",
        weight_prefix.replace("{i}", &iteration.to_string()),
        name
    )
}

/// A node: an op, the type of the value it defines, and a label for dumps and errors (the
/// tensor name for inputs, weights and outputs; free text such as `fc1` otherwise, possibly
/// empty).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub op: Op,
    pub ty: TensorType,
    pub label: String,
}

/// A sub-graph used as the body of [`Op::Repeat`]. Its `Input` nodes, in order, are its
/// parameters (the first is the loop-carried value); its single `Output` is the next value of
/// the carried parameter and must have the same type. Its weight names are relative: the
/// repeat adds a per-iteration prefix.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub name: String,
    pub body: Graph,
}

impl Region {
    /// The parameters (the body's inputs), in order.
    pub fn params(&self) -> Vec<ValueHandle> {
        self.body.inputs().map(|(h, _)| h).collect()
    }
}

/// A graph: nodes in definition order (every operand precedes its user) and the regions its
/// repeats use.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub nodes: Arena<Node>,
    pub regions: Arena<Region>,
    /// A repeat kept as a loop ([`crate::graph::inline::inline_repeats_as_loop`]): which nodes
    /// are its body. `None` in graphs as built and after [`crate::graph::inline_repeats`].
    pub looped: Option<GraphLoop>,
}

/// A repeat inlined once and kept as a loop: nodes `first..end` are its body (iteration 0's
/// copy, labels prefixed `{name}0.`), run `count` times. Iteration 0 reads `carried_in` (a node
/// before the body); every later iteration reads the previous iteration's `carried_out`, and
/// the nodes after the body read the last one's. Every other value the body reads from before
/// it is the same in every iteration. A body weight whose store name differs per iteration is
/// listed in `weights`: iteration 0's name → every iteration's, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphLoop {
    pub name: String,
    pub count: u32,
    pub first: usize,
    pub end: usize,
    pub carried_in: ValueHandle,
    pub carried_out: ValueHandle,
    pub weights: std::collections::BTreeMap<String, Vec<String>>,
}

impl GraphLoop {
    /// Whether node index `index` is in the body.
    pub fn contains(&self, index: usize) -> bool {
        (self.first..self.end).contains(&index)
    }
}

impl Graph {
    pub fn new() -> Graph {
        Graph::default()
    }

    pub fn node(&self, h: ValueHandle) -> Option<&Node> {
        self.nodes.get(h)
    }

    /// The type of a value, if the handle is in range.
    pub fn ty(&self, h: ValueHandle) -> Option<&TensorType> {
        self.nodes.get(h).map(|n| &n.ty)
    }

    /// `(handle, name)` of every input, in order.
    pub fn inputs(&self) -> impl Iterator<Item = (ValueHandle, &str)> {
        self.nodes.iter().filter_map(|(h, n)| {
            let Op::Input { name } = &n.op else {
                return None;
            };
            Some((h, name.as_str()))
        })
    }

    /// `(handle, name)` of every weight node of this graph (not of its regions), in order.
    pub fn weights(&self) -> impl Iterator<Item = (ValueHandle, &str)> {
        self.nodes.iter().filter_map(|(h, n)| {
            let Op::Weight { name } = &n.op else {
                return None;
            };
            Some((h, name.as_str()))
        })
    }

    /// `(handle, name)` of every output, in order.
    pub fn outputs(&self) -> impl Iterator<Item = (ValueHandle, &str)> {
        self.nodes.iter().filter_map(|(h, n)| {
            let Op::Output { name, .. } = &n.op else {
                return None;
            };
            Some((h, name.as_str()))
        })
    }

    /// Every concrete store weight the graph reads, with its type: top-level weights under
    /// their names, and region weights once per iteration under their prefixed names
    /// (recursively), in graph order. A name appears once even if several iterations share it.
    pub fn expanded_weights(&self) -> Vec<(String, TensorType)> {
        let mut out: Vec<(String, TensorType)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.expand_weights_into("", &mut out, &mut seen);
        out
    }

    fn expand_weights_into(
        &self,
        prefix: &str,
        out: &mut Vec<(String, TensorType)>,
        seen: &mut std::collections::HashSet<String>,
    ) {
        for (_, node) in self.nodes.iter() {
            match &node.op {
                Op::Weight { name } => {
                    let full = format!("{prefix}{name}");
                    if seen.insert(full.clone()) {
                        out.push((full, node.ty.clone()));
                    }
                }
                Op::Repeat {
                    region,
                    count,
                    weight_prefix,
                    ..
                } => {
                    if let Some(r) = self.regions.get(*region) {
                        for i in 0..*count {
                            let p = format!("{prefix}{}", repeat_weight_name(weight_prefix, i, ""));
                            r.body.expand_weights_into(&p, out, seen);
                        }
                    }
                }
                Op::Input { .. } | Op::Output { .. } | compute_op!() => {}
            }
        }
    }

    /// Number of nodes of this graph, not counting region bodies.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// Columns of a [`SoftmaxPart`](Op::SoftmaxPart)'s exponentials for `k` scores: `k` rounded up
/// to whole AMP K-blocks of 16 f16 values (the columns past `k` are zero), so that a product
/// reads them as whole blocks.
pub fn softmax_part_exp_columns(k: usize) -> usize {
    k.div_ceil(16) * 16
}

/// The row width of a [`SoftmaxPart`](Op::SoftmaxPart) of `k` scores: the exponentials'
/// columns ([`softmax_part_exp_columns`]), then `(m, l, 0, 0)`.
pub fn softmax_part_width(k: usize) -> usize {
    softmax_part_exp_columns(k) + 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_and_mapping() {
        let h = |i| ValueHandle::from_index(i);
        let mut op = Op::LayerNorm {
            x: h(0),
            gamma: h(1),
            beta: h(2),
            eps: 1e-6,
        };
        assert_eq!(
            op.operands(),
            vec![("x", h(0)), ("gamma", h(1)), ("beta", h(2))]
        );
        op.map_operands(|v| ValueHandle::from_index(v.index() as u32 + 10));
        assert_eq!(
            op.operands(),
            vec![("x", h(10)), ("gamma", h(11)), ("beta", h(12))]
        );
        let rep = Op::Repeat {
            region: RegionHandle::from_index(0),
            count: 2,
            args: vec![h(3), h(4)],
            weight_prefix: "l{i}.".into(),
        };
        assert_eq!(rep.operands(), vec![("args[0]", h(3)), ("args[1]", h(4))]);
        assert_eq!(rep.mnemonic(), "repeat");
        assert_eq!(Op::Input { name: "x".into() }.tensor_name(), Some("x"));
        assert_eq!(Op::Gelu { x: h(0) }.tensor_name(), None);
        assert_eq!(
            repeat_weight_name("enc.layers.{i}.", 26, "mlp.fc1.weight"),
            "enc.layers.26.mlp.fc1.weight"
        );
        assert_eq!(repeat_weight_name("shared.", 3, "w"), "shared.w");
    }
}
