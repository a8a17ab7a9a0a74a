//! The distributed level (mid IR): every value has its own [`Layout`] — a distribution over the
//! tiles of any rank, an element order and a dtype — and data moves only through explicit
//! [`MidOp::Redistribute`]s. This page is the IR's specification.
//!
//! # Programs, values and handles
//!
//! A [`MidProgram`] is an [`Arena`] of [`MidNode`]s; every node holds one op and defines one
//! value (SSA), named by its [`MidId`] and printed `%n`. Operands precede their users. Each node
//! records its value's shape, layout and a label: the graph op it comes from (`fc1`,
//! `k.heads`, …), which names its kernel calls, exchanges and profile rows.
//!
//! # Ops
//!
//! Compute ops are *shard-local*: every tile holding a block of the result computes it from
//! operand shards on the same tile, so their operands must already be laid out for them (the
//! verifier checks it by comparing resolved blocks, not descriptions). The planner inserts
//! `Redistribute`s to make that so.
//!
//! | op | operands → result | shard rule on every result tile `t` |
//! |---|---|---|
//! | `Input { tensor, view }` | → | the host writes graph input `tensor` read through `view` |
//! | `Weight { tensor, view }` | → | the host converts store tensor `tensor` (rounded to the dtype) through `view` |
//! | `Redistribute { x, view }` | x → | result element `i` is `x[view(i)]`: any distributions, orders, tiles (same dtype) |
//! | `MatMul { a, b }` | `[.., M, K]` × `[.., K, N]` → `[.., M, N]` | `t` holds `a` rows × all K in `Panels`, `b` all K × its columns in `Cwei`; result `RowMajor{16}` f16; FP8×FP8 or f16×f16 |
//! | `BiasAdd { x, bias }` | `[.., N]`, `[N]` → | `bias` on `t` covers `t`'s columns (f16, row-major); x row-major with a row of a multiple of 4 |
//! | `Add { a, b }` | same shapes → | `a` and `b` have the result's layout; or, a result in `Cwei` (rank 2, blocks of 16 columns): its distribution in dense rows (`add_cwei_f16`) |
//! | `AddBias { a, b, bias }` | `[.., N]` twice, `[N]` → | `a` and `b` as `Add`'s, `bias` as `BiasAdd`'s: `(a + b) + bias`, two f16 roundings (only from [`rewrite::fuse_bias_adds`]) |
//! | `Gelu { x }` | → | x has the result's layout (result f16 or FP8) |
//! | `Softmax { x, scale }` | → | last dimension whole; row-major; result `RowMajor{4}` |
//! | `SoftmaxPart { x, scale }` | `[.., K]` → `[.., K + 4]` | x and the result have the same blocks of the leading dimensions, the last whole; x row-major (row % 4 == 0); result `RowMajor{4}` |
//! | `AttentionCombine { parts, stats }` | `[.., C, R, D]`, `[.., R, C, 2]` → `[.., R, D]` | the result's blocks of the leading dimensions and rows, C and D whole, on the same tiles; parts `RowMajor` aligned to 8s (16: the products' rows), result `RowMajor{8}`, stats dense |
//! | `SumParts { x, bias }` | `[.., C, D]` (and `[D]`) → `[.., D]` | x has the result's blocks with C whole inserted before the last dimension, on the same tiles; x and the result `RowMajor{8}` f16; a bias as `BiasAdd`'s, added to the rounded sums (only from [`rewrite::fuse_bias_adds`]) |
//! | `LayerNorm { x, gamma, beta, eps }` | → | last dimension whole, dense rows; gamma and beta f32 on `t` |
//! | `Cast { x }` | → | x has the result's distribution and order (f32 → f16, f16 → FP8) |
//! | `Output { x, tensor, view }` | x → | the host reads graph output `tensor` (its shape) through `view` |
//!
//! # Invariants (checked by [`verify::verify`])
//!
//! Operands precede users; shapes agree with the op; every layout is valid for its shape; the
//! shard rules above hold on every tile; `Redistribute` keeps the dtype; nothing but an
//! `Output` is unused.

pub mod dump;
pub mod failure;
pub mod rewrite;
pub mod verify;

use crate::graph::arena::{Arena, Handle};
use crate::graph::DType;
use crate::layout::{Layout, View};

/// A handle to a mid-level node, which is also the value it defines.
pub type MidId = Handle<MidNode>;

/// The AMP precision of a matmul.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AmpPrecision {
    Fp8,
    F16,
}

/// One mid-level op.
#[derive(Clone, Debug, PartialEq)]
pub enum MidOp {
    Input {
        tensor: String,
        view: View,
    },
    Weight {
        tensor: String,
        view: View,
    },
    Redistribute {
        x: MidId,
        view: View,
    },
    MatMul {
        a: MidId,
        b: MidId,
        precision: AmpPrecision,
    },
    BiasAdd {
        x: MidId,
        bias: MidId,
    },
    Add {
        a: MidId,
        b: MidId,
    },
    /// `(a + b) + bias`: an `Add` whose only reader was a `BiasAdd` ([`rewrite::fuse_bias_adds`]).
    AddBias {
        a: MidId,
        b: MidId,
        bias: MidId,
    },
    Gelu {
        x: MidId,
    },
    Softmax {
        x: MidId,
        scale: f32,
    },
    SoftmaxPart {
        x: MidId,
        scale: f32,
    },
    AttentionCombine {
        parts: MidId,
        stats: MidId,
    },
    SumParts {
        x: MidId,
        /// A bias added to the rounded sums ([`rewrite::fuse_bias_adds`]).
        bias: Option<MidId>,
    },
    LayerNorm {
        x: MidId,
        gamma: MidId,
        beta: MidId,
        eps: f32,
    },
    Cast {
        x: MidId,
    },
    Output {
        x: MidId,
        tensor: String,
        view: View,
    },
}

impl MidOp {
    pub fn name(&self) -> &'static str {
        match self {
            MidOp::Input { .. } => "input",
            MidOp::Weight { .. } => "weight",
            MidOp::Redistribute { .. } => "redistribute",
            MidOp::MatMul { .. } => "matmul",
            MidOp::BiasAdd { .. } => "bias_add",
            MidOp::Add { .. } => "add",
            MidOp::AddBias { .. } => "add_bias",
            MidOp::Gelu { .. } => "gelu",
            MidOp::Softmax { .. } => "softmax",
            MidOp::SoftmaxPart { .. } => "softmax_part",
            MidOp::AttentionCombine { .. } => "attention_combine",
            MidOp::SumParts { .. } => "sum_parts",
            MidOp::LayerNorm { .. } => "layernorm",
            MidOp::Cast { .. } => "cast",
            MidOp::Output { .. } => "output",
        }
    }

    pub fn operands(&self) -> Vec<MidId> {
        match self {
            MidOp::Input { .. } | MidOp::Weight { .. } => vec![],
            MidOp::Redistribute { x, .. }
            | MidOp::Gelu { x }
            | MidOp::Softmax { x, .. }
            | MidOp::SoftmaxPart { x, .. }
            | MidOp::SumParts { x, bias: None }
            | MidOp::Cast { x }
            | MidOp::Output { x, .. } => vec![*x],
            MidOp::SumParts {
                x,
                bias: Some(bias),
            } => vec![*x, *bias],
            MidOp::AttentionCombine { parts, stats } => vec![*parts, *stats],
            MidOp::MatMul { a, b, .. } | MidOp::Add { a, b } => vec![*a, *b],
            MidOp::BiasAdd { x, bias } => vec![*x, *bias],
            MidOp::AddBias { a, b, bias } => vec![*a, *b, *bias],
            MidOp::LayerNorm { x, gamma, beta, .. } => vec![*x, *gamma, *beta],
        }
    }

    /// Rewrites every operand with `f`.
    pub fn map_operands(&mut self, mut f: impl FnMut(MidId) -> MidId) {
        match self {
            MidOp::Input { .. } | MidOp::Weight { .. } => {}
            MidOp::Redistribute { x, .. }
            | MidOp::Gelu { x }
            | MidOp::Softmax { x, .. }
            | MidOp::SoftmaxPart { x, .. }
            | MidOp::Cast { x }
            | MidOp::Output { x, .. } => *x = f(*x),
            MidOp::SumParts { x, bias } => {
                *x = f(*x);
                if let Some(bias) = bias {
                    *bias = f(*bias);
                }
            }
            MidOp::AttentionCombine { parts, stats } => {
                *parts = f(*parts);
                *stats = f(*stats);
            }
            MidOp::MatMul { a, b, .. } | MidOp::Add { a, b } => {
                *a = f(*a);
                *b = f(*b);
            }
            MidOp::BiasAdd { x, bias } => {
                *x = f(*x);
                *bias = f(*bias);
            }
            MidOp::AddBias { a, b, bias } => {
                *a = f(*a);
                *b = f(*b);
                *bias = f(*bias);
            }
            MidOp::LayerNorm { x, gamma, beta, .. } => {
                *x = f(*x);
                *gamma = f(*gamma);
                *beta = f(*beta);
            }
        }
    }

    /// Whether the op runs kernels on tiles (not host I/O and not data movement).
    pub fn is_compute(&self) -> bool {
        match self {
            MidOp::Input { .. }
            | MidOp::Weight { .. }
            | MidOp::Redistribute { .. }
            | MidOp::Output { .. } => false,
            MidOp::MatMul { .. }
            | MidOp::BiasAdd { .. }
            | MidOp::Add { .. }
            | MidOp::AddBias { .. }
            | MidOp::Gelu { .. }
            | MidOp::Softmax { .. }
            | MidOp::SoftmaxPart { .. }
            | MidOp::AttentionCombine { .. }
            | MidOp::SumParts { .. }
            | MidOp::LayerNorm { .. }
            | MidOp::Cast { .. } => true,
        }
    }
}

/// A node: an op, its value's shape and layout, and the graph op it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct MidNode {
    pub op: MidOp,
    pub shape: Vec<u32>,
    pub layout: Layout,
    /// The graph op's label (`fc1`, `ln2`, `k.heads`, …); the profile names work after it.
    pub label: String,
}

impl MidNode {
    pub fn dtype(&self) -> DType {
        self.layout.dtype
    }
}

/// A distributed-level program.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MidProgram {
    pub nodes: Arena<MidNode>,
    /// How the lowering routes every `Redistribute` (as the planner costed them).
    pub route_policy: crate::redist::RoutePolicy,
    /// A loop over a range of nodes (see [`MidLoop`]).
    pub looped: Option<MidLoop>,
}

/// Nodes `first..end` run `count` times. Iteration 0 reads `carried_in` (a node before the
/// body) as it was computed; at the end of every iteration the value of `carry` (in
/// `carried_in`'s layout) becomes `carried_in`'s, which the next iteration and the nodes after
/// the body read — so after the loop, a body value holds its last iteration's. A body weight
/// whose tensor is in `weights` reads, in iteration `i`, the `i`-th listed tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct MidLoop {
    pub name: String,
    pub count: u32,
    pub first: usize,
    pub end: usize,
    pub carried_in: MidId,
    pub carry: MidId,
    pub weights: std::collections::BTreeMap<String, Vec<String>>,
}

impl MidLoop {
    /// Whether node index `index` is in the body.
    pub fn contains(&self, index: usize) -> bool {
        (self.first..self.end).contains(&index)
    }

    /// The loop after a pass kept some nodes and renumbered them (`renumber[old]`).
    pub fn renumbered(&self, renumber: &[Option<MidId>]) -> Option<MidLoop> {
        let kept_before = |end: usize| renumber[..end].iter().filter(|r| r.is_some()).count();
        Some(MidLoop {
            first: kept_before(self.first),
            end: kept_before(self.end),
            carried_in: renumber[self.carried_in.index()]?,
            carry: renumber[self.carry.index()]?,
            ..self.clone()
        })
    }
}

impl MidProgram {
    pub fn new() -> MidProgram {
        MidProgram::default()
    }

    pub fn push(&mut self, node: MidNode) -> MidId {
        self.nodes.append(node)
    }

    pub fn node(&self, id: MidId) -> &MidNode {
        &self.nodes[id]
    }

    /// For every value, the ops that read it (in program order).
    pub fn readers(&self) -> Vec<Vec<MidId>> {
        let mut readers = vec![Vec::new(); self.nodes.len()];
        for (id, node) in self.nodes.iter() {
            for operand in node.op.operands() {
                if let Some(list) = readers.get_mut(operand.index()) {
                    list.push(id);
                }
            }
        }
        readers
    }
}
