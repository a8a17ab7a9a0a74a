//! [`GraphBuilder`]: builds a graph one op at a time, checking every op as it is added.
//!
//! Each method takes a label (free text shown in dumps and errors, e.g. `fc1`) or, for inputs,
//! weights and outputs, the tensor name, and returns the new value's handle or a
//! [`GraphError`] naming the op, the operand and the shapes or dtypes involved. A failed call
//! adds nothing, so the builder stays usable.
//!
//! ```
//! use tessera_codegen::graph::{DType, GraphBuilder};
//! let mut b = GraphBuilder::new();
//! let x = b.input("x", DType::F16, [729, 1152]).unwrap();
//! let w = b.weight("fc1.weight", DType::F16, [1000, 4304]).unwrap();
//! let err = b.matmul("fc1", x, w).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "E-GRAPH-003: matmul `fc1`: inner dimensions differ: a is [729, 1152], b is [1000, 4304]"
//! );
//! ```

use std::collections::HashMap;

use super::op::{Graph, Node, Op, Region, RegionHandle, ValueHandle};
use super::types::{DType, Shape, TensorType};
use super::typing::{check_declared_type, check_name, infer, GraphError, Site};
use super::verify::{verify, VerifyError};

/// Builds a [`Graph`]. See the [module docs](self).
#[derive(Debug, Default)]
pub struct GraphBuilder {
    graph: Graph,
    /// (kind, name) → the node that owns the name, for inputs, weights and outputs.
    names: HashMap<(&'static str, String), ValueHandle>,
}

impl GraphBuilder {
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// The graph built so far.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The type of a value built so far.
    pub fn ty(&self, h: ValueHandle) -> Option<&TensorType> {
        self.graph.ty(h)
    }

    /// Verifies and returns the graph. Fails if, for example, a value is dead (no output
    /// depends on it) or there is no output.
    pub fn finish(self) -> Result<Graph, VerifyError> {
        verify(&self.graph)?;
        Ok(self.graph)
    }

    /// Returns the graph without verifying it (for tests of the verifier).
    pub fn finish_unverified(self) -> Graph {
        self.graph
    }

    fn claim_name(&self, kind: &'static str, site: &Site, name: &str) -> Result<(), GraphError> {
        check_name(site, name)?;
        if let Some(&previous) = self.names.get(&(kind, name.to_string())) {
            return Err(GraphError::DuplicateName {
                site: site.clone(),
                kind,
                name: name.to_string(),
                previous,
            });
        }
        Ok(())
    }

    fn declared(
        &mut self,
        kind: &'static str,
        op: Op,
        name: &str,
        dtype: DType,
        shape: Shape,
    ) -> Result<ValueHandle, GraphError> {
        let site = Site::new(op.mnemonic(), name);
        self.claim_name(kind, &site, name)?;
        let ty = TensorType { dtype, shape };
        check_declared_type(&site, &ty)?;
        let h = self.graph.nodes.append(Node {
            op,
            ty,
            label: name.to_string(),
        });
        self.names.insert((kind, name.to_string()), h);
        Ok(h)
    }

    fn push(&mut self, op: Op, label: &str) -> Result<ValueHandle, GraphError> {
        let ty = infer(&self.graph, &op, label)?;
        Ok(self.graph.nodes.append(Node {
            op,
            ty,
            label: label.to_string(),
        }))
    }

    /// A graph input (in a region body: a parameter; the first is the carried value).
    pub fn input(
        &mut self,
        name: &str,
        dtype: DType,
        shape: impl Into<Shape>,
    ) -> Result<ValueHandle, GraphError> {
        self.declared(
            "input",
            Op::Input {
                name: name.to_string(),
            },
            name,
            dtype,
            shape.into(),
        )
    }

    /// A weight whose host data is the store tensor `name` (relative to the repeat's prefix in
    /// a region body), stored on the tiles as `dtype`.
    pub fn weight(
        &mut self,
        name: &str,
        dtype: DType,
        shape: impl Into<Shape>,
    ) -> Result<ValueHandle, GraphError> {
        self.declared(
            "weight",
            Op::Weight {
                name: name.to_string(),
            },
            name,
            dtype,
            shape.into(),
        )
    }

    /// `[M, K] × [K, N] → [M, N]`.
    pub fn matmul(
        &mut self,
        label: &str,
        a: ValueHandle,
        b: ValueHandle,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::MatMul { a, b }, label)
    }

    /// `[B, M, K] × [B, K, N] → [B, M, N]`.
    pub fn batched_matmul(
        &mut self,
        label: &str,
        a: ValueHandle,
        b: ValueHandle,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::BatchedMatMul { a, b }, label)
    }

    /// `a + b`, same shape and dtype.
    pub fn add(
        &mut self,
        label: &str,
        a: ValueHandle,
        b: ValueHandle,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::Add { a, b }, label)
    }

    /// `x[..., n] + bias[n]`.
    pub fn bias_add(
        &mut self,
        label: &str,
        x: ValueHandle,
        bias: ValueHandle,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::BiasAdd { x, bias }, label)
    }

    /// Layer normalisation over the last dimension.
    pub fn layer_norm(
        &mut self,
        label: &str,
        x: ValueHandle,
        gamma: ValueHandle,
        beta: ValueHandle,
        eps: f32,
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            },
            label,
        )
    }

    /// GELU (tanh approximation).
    pub fn gelu(&mut self, label: &str, x: ValueHandle) -> Result<ValueHandle, GraphError> {
        self.push(Op::Gelu { x }, label)
    }

    /// `softmax(scale · x)` over the last dimension.
    pub fn softmax(
        &mut self,
        label: &str,
        x: ValueHandle,
        scale: f32,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::Softmax { x, scale }, label)
    }

    /// One key block of a softmax split along the last dimension: `[..., K] → [..., W]`
    /// ([`softmax_part_width`](super::op::softmax_part_width)), per row `(e_0 … e_{K−1}, 0 … 0,
    /// m, l, 0, 0)` with the exponentials padded to whole AMP K-blocks of 16 (see
    /// [`Op::SoftmaxPart`]).
    pub fn softmax_part(
        &mut self,
        label: &str,
        x: ValueHandle,
        scale: f32,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::SoftmaxPart { x, scale }, label)
    }

    /// The key blocks of an attention combined: `parts [..., C, R, D]`, `stats [..., C, R, 2]` →
    /// `[..., R, D]` (see [`Op::AttentionCombine`]).
    pub fn attention_combine(
        &mut self,
        label: &str,
        parts: ValueHandle,
        stats: ValueHandle,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::AttentionCombine { parts, stats }, label)
    }

    /// The parts of every row summed: `x [..., C, D]` → `[..., D]` (see [`Op::SumParts`]).
    pub fn sum_parts(&mut self, label: &str, x: ValueHandle) -> Result<ValueHandle, GraphError> {
        self.push(Op::SumParts { x }, label)
    }

    /// Converts `x` to `to`.
    pub fn cast(
        &mut self,
        label: &str,
        x: ValueHandle,
        to: DType,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::Cast { x, to }, label)
    }

    /// New shape, same elements.
    pub fn reshape(
        &mut self,
        label: &str,
        x: ValueHandle,
        shape: impl Into<Shape>,
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::Reshape {
                x,
                shape: shape.into(),
            },
            label,
        )
    }

    /// Result dimension `i` is `x`'s dimension `perm[i]`.
    pub fn transpose(
        &mut self,
        label: &str,
        x: ValueHandle,
        perm: &[usize],
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::Transpose {
                x,
                perm: perm.to_vec(),
            },
            label,
        )
    }

    /// The range `start..end` of dimension `axis`.
    pub fn slice(
        &mut self,
        label: &str,
        x: ValueHandle,
        axis: usize,
        start: usize,
        end: usize,
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::Slice {
                x,
                axis,
                start,
                end,
            },
            label,
        )
    }

    /// `x` with zeros appended along dimension `axis` to length `len` (≥ x's).
    pub fn pad(
        &mut self,
        label: &str,
        x: ValueHandle,
        axis: usize,
        len: usize,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::Pad { x, axis, len }, label)
    }

    /// `[B·T, H·D] → [B·H, T, D]`.
    pub fn split_heads(
        &mut self,
        label: &str,
        x: ValueHandle,
        heads: usize,
        batch: usize,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::SplitHeads { x, heads, batch }, label)
    }

    /// `[B·H, T, D] → [B·T, H·D]`.
    pub fn merge_heads(
        &mut self,
        label: &str,
        x: ValueHandle,
        heads: usize,
    ) -> Result<ValueHandle, GraphError> {
        self.push(Op::MergeHeads { x, heads }, label)
    }

    /// `x` broadcast to `shape` (numpy rules, right-aligned).
    pub fn broadcast(
        &mut self,
        label: &str,
        x: ValueHandle,
        shape: impl Into<Shape>,
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::Broadcast {
                x,
                shape: shape.into(),
            },
            label,
        )
    }

    /// Adds a region (a finished graph used as a repeat body). Its signature is checked when a
    /// repeat uses it.
    pub fn region(&mut self, name: &str, body: Graph) -> Result<RegionHandle, GraphError> {
        check_name(&Site::new("region", name), name)?;
        Ok(self.graph.regions.append(Region {
            name: name.to_string(),
            body,
        }))
    }

    /// Applies `region` `count` times to `args` (`args[0]` is carried from one iteration to
    /// the next). Body weight `n` in iteration `i` reads store tensor
    /// `weight_prefix.replace("{i}", i) + n`.
    pub fn repeat(
        &mut self,
        label: &str,
        region: RegionHandle,
        count: u32,
        weight_prefix: &str,
        args: &[ValueHandle],
    ) -> Result<ValueHandle, GraphError> {
        self.push(
            Op::Repeat {
                region,
                count,
                args: args.to_vec(),
                weight_prefix: weight_prefix.to_string(),
            },
            label,
        )
    }

    /// Marks `x` as the output `name`.
    pub fn output(&mut self, name: &str, x: ValueHandle) -> Result<ValueHandle, GraphError> {
        let site = Site::new("output", name);
        self.claim_name("output", &site, name)?;
        let h = self.push(
            Op::Output {
                x,
                name: name.to_string(),
            },
            name,
        )?;
        self.names.insert(("output", name.to_string()), h);
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::super::arena::Handle;
    use super::*;
    use tessera_isa::numerics::Fp8Format;

    fn msg<T: std::fmt::Debug>(r: Result<T, GraphError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn a_good_graph_builds_and_verifies() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        let w = b.weight("w", DType::F16, [64, 32]).unwrap();
        let y = b.matmul("fc", x, w).unwrap();
        assert_eq!(b.ty(y).unwrap().to_string(), "f16[16, 32]");
        b.output("y", y).unwrap();
        let g = b.finish().unwrap();
        assert_eq!(g.len(), 4);
    }

    #[test]
    fn sum_parts_reduces_the_parts_dimension_of_f16_only() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [3, 18, 16]).unwrap();
        let y = b.sum_parts("sum", x).unwrap();
        assert_eq!(b.ty(y).unwrap().to_string(), "f16[3, 16]");
        let f = b.input("f", DType::F32, [18, 16]).unwrap();
        assert!(msg(b.sum_parts("sum32", f)).contains("f16"));
        let v = b.input("v", DType::F16, [16]).unwrap();
        assert!(msg(b.sum_parts("sum1", v)).contains("[..., C, D]"));
        let many = b.input("many", DType::F16, [65, 4]).unwrap();
        assert!(msg(b.sum_parts("sum65", many)).contains("65 parts"));
    }

    #[test]
    fn e001_unknown_value() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 4]).unwrap();
        let bogus = Handle::from_index(7);
        assert_eq!(
            msg(b.add("sum", x, bogus)),
            "E-GRAPH-001: add `sum`: operand b is value [7], which is not defined in this graph (it has 1 values)"
        );
        // Nothing was added.
        assert_eq!(b.graph().len(), 1);
    }

    #[test]
    fn e002_rank() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 4, 4]).unwrap();
        let w = b.weight("w", DType::F16, [4, 4]).unwrap();
        assert_eq!(
            msg(b.matmul("fc1", x, w)),
            "E-GRAPH-002: matmul `fc1`: operand a must have rank 2, but it is [4, 4, 4]"
        );
        assert_eq!(
            msg(b.batched_matmul("scores", w, x)),
            "E-GRAPH-002: batched_matmul `scores`: operand a must have rank 3, but it is [4, 4]"
        );
        assert_eq!(
            msg(b.bias_add("b", x, w)),
            "E-GRAPH-002: bias_add `b`: operand bias must have rank 1, but it is [4, 4]"
        );
        assert_eq!(
            msg(b.split_heads("split", x, 2, 1)),
            "E-GRAPH-002: split_heads `split`: operand x must have rank 2, but it is [4, 4, 4]"
        );
        assert_eq!(
            msg(b.merge_heads("merge", w, 2)),
            "E-GRAPH-002: merge_heads `merge`: operand x must have rank 3, but it is [4, 4]"
        );
    }

    #[test]
    fn e003_inner_dimensions() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [729, 1152]).unwrap();
        let w = b.weight("fc1.weight", DType::F16, [1000, 4304]).unwrap();
        assert_eq!(
            msg(b.matmul("fc1", x, w)),
            "E-GRAPH-003: matmul `fc1`: inner dimensions differ: a is [729, 1152], b is [1000, 4304]"
        );
        let q = b.input("q", DType::F16, [16, 729, 72]).unwrap();
        let k = b.input("k", DType::F16, [16, 72, 729]).unwrap();
        assert_eq!(
            msg(b.batched_matmul("scores", q, q)),
            "E-GRAPH-003: batched_matmul `scores`: inner dimensions differ: a is [16, 729, 72], b is [16, 729, 72]"
        );
        assert!(b.batched_matmul("scores", q, k).is_ok());
    }

    #[test]
    fn e004_shape_mismatch() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        let y = b.input("y", DType::F16, [16, 32]).unwrap();
        assert_eq!(
            msg(b.add("residual", x, y)),
            "E-GRAPH-004: add `residual`: shapes differ: a is [16, 64], b is [16, 32]"
        );
        let bias = b.weight("bias", DType::F32, [63]).unwrap();
        assert_eq!(
            msg(b.bias_add("fc1.bias", x, bias)),
            "E-GRAPH-004: bias_add `fc1.bias`: the last dimensions differ: x is [16, 64], bias is [63]"
        );
        let gamma = b.weight("gamma", DType::F32, [64]).unwrap();
        assert_eq!(
            msg(b.layer_norm("ln1", x, gamma, bias, 1e-6)),
            "E-GRAPH-004: layernorm `ln1`: the last dimensions differ: x is [16, 64], beta is [63]"
        );
        assert_eq!(
            msg(b.layer_norm("ln1", x, bias, gamma, 1e-6)),
            "E-GRAPH-004: layernorm `ln1`: the last dimensions differ: x is [16, 64], gamma is [63]"
        );
        let q = b.input("q", DType::F16, [4, 16, 8]).unwrap();
        let k = b.input("k", DType::F16, [2, 8, 16]).unwrap();
        assert_eq!(
            msg(b.batched_matmul("scores", q, k)),
            "E-GRAPH-004: batched_matmul `scores`: batch dimensions differ: a is [4, 16, 8], b is [2, 8, 16]"
        );
    }

    #[test]
    fn e005_dtype() {
        let mut b = GraphBuilder::new();
        let x8 = b.input("x8", DType::f143(-4), [16, 64]).unwrap();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        let g = b.weight("g", DType::F32, [64]).unwrap();
        let g8 = b.weight("g8", DType::f143(0), [64]).unwrap();
        assert_eq!(
            msg(b.gelu("act", x8)),
            "E-GRAPH-005: gelu `act`: operand x is f143<-4>, expected f16 or f32"
        );
        assert_eq!(
            msg(b.softmax("probs", x8, 1.0)),
            "E-GRAPH-005: softmax `probs`: operand x is f143<-4>, expected f16 or f32"
        );
        assert_eq!(
            msg(b.layer_norm("ln", x8, g, g, 1e-6)),
            "E-GRAPH-005: layernorm `ln`: operand x is f143<-4>, expected f16 or f32"
        );
        assert_eq!(
            msg(b.layer_norm("ln", x, g8, g, 1e-6)),
            "E-GRAPH-005: layernorm `ln`: operand gamma is f143<0>, expected f16 or f32"
        );
        assert_eq!(
            msg(b.bias_add("bias", x, g8)),
            "E-GRAPH-005: bias_add `bias`: operand bias is f143<0>, expected f16 or f32"
        );
    }

    #[test]
    fn e006_dtype_combination() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        let x32 = b.input("x32", DType::F32, [16, 64]).unwrap();
        let w8 = b.weight("w8", DType::f143(-10), [64, 128]).unwrap();
        assert_eq!(
            msg(b.matmul("fc1", x, w8)),
            "E-GRAPH-006: matmul `fc1`: operand dtypes do not combine: a is f16, b is f143<-10> (matmuls take f32×f32, f16×f16 or FP8×FP8)"
        );
        assert_eq!(
            msg(b.add("residual", x, x32)),
            "E-GRAPH-006: add `residual`: operand dtypes do not combine: a is f16, b is f32 (add takes two f16 or two f32 operands)"
        );
        // FP8 × FP8 with different formats and scales is fine and gives f16.
        let a8 = b
            .cast(
                "x.fp8",
                x,
                DType::Fp8 {
                    format: Fp8Format::F152,
                    scale: 2,
                },
            )
            .unwrap();
        let y = b.matmul("fc1", a8, w8).unwrap();
        assert_eq!(b.ty(y).unwrap().dtype, DType::F16);
        // FP8 add is not allowed either.
        let c8 = b.cast("c", x, DType::f143(-4)).unwrap();
        assert!(msg(b.add("sum8", c8, c8)).starts_with("E-GRAPH-006: add `sum8`"));
    }

    #[test]
    fn e007_duplicate_names() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 4]).unwrap();
        assert_eq!(
            msg(b.input("x", DType::F16, [4, 4])),
            "E-GRAPH-007: input `x`: the input name `x` is already used by [0]"
        );
        let w = b.weight("w", DType::F16, [4, 4]).unwrap();
        assert_eq!(
            msg(b.weight("w", DType::F32, [4])),
            "E-GRAPH-007: weight `w`: the weight name `w` is already used by [1]"
        );
        // Kinds have separate name spaces: an output may share an input's name.
        let y = b.matmul("mm", x, w).unwrap();
        b.output("x", y).unwrap();
        assert_eq!(
            msg(b.output("x", y)),
            "E-GRAPH-007: output `x`: the output name `x` is already used by [3]"
        );
    }

    #[test]
    fn e008_attributes() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        let g = b.weight("g", DType::F32, [64]).unwrap();
        assert_eq!(
            msg(b.layer_norm("ln", x, g, g, -1.0)),
            "E-GRAPH-008: layernorm `ln`: eps = -1 is invalid: must be finite and ≥ 0"
        );
        assert_eq!(
            msg(b.softmax("sm", x, f32::NAN)),
            "E-GRAPH-008: softmax `sm`: scale = NaN is invalid: must be finite"
        );
        assert_eq!(
            msg(b.cast("c", x, DType::F16)),
            "E-GRAPH-008: cast `c`: to = f16 is invalid: x is already f16 (a cast must change the dtype)"
        );
        assert_eq!(
            msg(b.cast("c", x, DType::f143(-32))),
            "E-GRAPH-008: cast `c`: to = f143<-32> is invalid: FP8 scales must be in -31..=31"
        );
        assert_eq!(
            msg(b.input("y", DType::f152(40), [4])),
            "E-GRAPH-008: input `y`: dtype = f152<40> is invalid: FP8 scales must be in -31..=31"
        );
        assert_eq!(
            msg(b.transpose("t", x, &[0, 0])),
            "E-GRAPH-008: transpose `t`: perm = [0, 0] is invalid: not a permutation of the 2 dimensions of x ([16, 64])"
        );
        assert_eq!(
            msg(b.transpose("t", x, &[1, 0, 2])),
            "E-GRAPH-008: transpose `t`: perm = [1, 0, 2] is invalid: not a permutation of the 2 dimensions of x ([16, 64])"
        );
        assert_eq!(
            msg(b.split_heads("split", x, 5, 1)),
            "E-GRAPH-008: split_heads `split`: heads = 5 is invalid: the last dimension of x ([16, 64]) must be a positive multiple of it"
        );
        assert_eq!(
            msg(b.split_heads("split", x, 4, 3)),
            "E-GRAPH-008: split_heads `split`: batch = 3 is invalid: the first dimension of x ([16, 64]) must be a positive multiple of it"
        );
        assert_eq!(
            msg(b.split_heads("split", x, 0, 1)),
            "E-GRAPH-008: split_heads `split`: heads = 0 is invalid: the last dimension of x ([16, 64]) must be a positive multiple of it"
        );
        assert_eq!(
            msg(b.slice("q", x, 2, 0, 1)),
            "E-GRAPH-008: slice `q`: axis = 2 is invalid: x ([16, 64]) has rank 2"
        );
        assert_eq!(
            msg(b.slice("q", x, 1, 32, 65)),
            "E-GRAPH-008: slice `q`: range = 32..65 is invalid: not a non-empty range within dimension 1 of x ([16, 64], length 64)"
        );
        assert_eq!(
            msg(b.slice("q", x, 1, 32, 32)),
            "E-GRAPH-008: slice `q`: range = 32..32 is invalid: not a non-empty range within dimension 1 of x ([16, 64], length 64)"
        );
        let q = b.slice("q", x, 1, 16, 32).unwrap();
        assert_eq!(b.ty(q).unwrap().to_string(), "f16[16, 16]");
        let h = b.split_heads("split", x, 4, 2).unwrap();
        assert_eq!(b.ty(h).unwrap().to_string(), "f16[8, 8, 16]");
        assert_eq!(
            msg(b.merge_heads("merge", h, 3)),
            "E-GRAPH-008: merge_heads `merge`: heads = 3 is invalid: the first dimension of x ([8, 8, 16]) must be a positive multiple of it"
        );
        assert_eq!(
            msg(b.input("", DType::F16, [4])),
            "E-GRAPH-008: input: name = \"\" is invalid: names must not be empty"
        );
        let y = b.gelu("", x).unwrap();
        assert_eq!(
            msg(b.output("", y)),
            "E-GRAPH-008: output: name = \"\" is invalid: names must not be empty"
        );
    }

    #[test]
    fn e009_invalid_shapes() {
        let mut b = GraphBuilder::new();
        assert_eq!(
            msg(b.input("x", DType::F16, [16, 0])),
            "E-GRAPH-009: input `x`: shape [16, 0] is invalid: a dimension is 0 (the graph has no empty tensors)"
        );
        assert_eq!(
            msg(b.weight("w", DType::F16, Vec::new())),
            "E-GRAPH-009: weight `w`: shape [] is invalid: rank 0 (the graph has no scalars)"
        );
        let x = b.input("x", DType::F16, [16, 4]).unwrap();
        assert_eq!(
            msg(b.reshape("r", x, [0, 64])),
            "E-GRAPH-009: reshape `r`: shape [0, 64] is invalid: a dimension is 0 (the graph has no empty tensors)"
        );
    }

    #[test]
    fn e010_output_as_operand() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 4]).unwrap();
        let y = b.gelu("act", x).unwrap();
        let out = b.output("y", y).unwrap();
        assert_eq!(
            msg(b.add("again", out, x)),
            "E-GRAPH-010: add `again`: operand a is output `y` ([2]); an output cannot be an operand"
        );
    }

    #[test]
    fn e011_element_count() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [16, 64]).unwrap();
        assert_eq!(
            msg(b.reshape("r", x, [16, 63])),
            "E-GRAPH-011: reshape `r`: reshape changes the element count: x is [16, 64] (1024 elements), the new shape [16, 63] has 1008"
        );
        let r = b.reshape("r", x, [4, 4, 64]).unwrap();
        assert_eq!(b.ty(r).unwrap().to_string(), "f16[4, 4, 64]");
    }

    fn body(carried: [usize; 2], out_dtype: DType) -> Graph {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, carried).unwrap();
        let w = b.weight("w", DType::F16, [carried[1], carried[1]]).unwrap();
        let mut y = b.matmul("mm", x, w).unwrap();
        if out_dtype != DType::F16 {
            y = b.cast("c", y, out_dtype).unwrap();
        }
        b.output("y", y).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn e012_regions() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let x2 = b.input("x2", DType::F16, [4, 4]).unwrap();
        let good = b.region("layer", body([4, 8], DType::F16)).unwrap();
        let bad_out = b.region("bad", body([4, 8], DType::F32)).unwrap();
        let y = b.repeat("layers", good, 3, "layers.{i}.", &[x]).unwrap();
        assert_eq!(b.ty(y).unwrap().to_string(), "f16[4, 8]");
        assert_eq!(
            msg(b.repeat("layers", good, 3, "l{i}.", &[x2])),
            "E-GRAPH-012: repeat `layers`: region [0]: `layer`: argument 0 is f16[4, 4] but parameter 0 is f16[4, 8]"
        );
        assert_eq!(
            msg(b.repeat("layers", good, 3, "l{i}.", &[x, x])),
            "E-GRAPH-012: repeat `layers`: region [0]: `layer` takes 1 arguments, 2 given"
        );
        assert_eq!(
            msg(b.repeat("layers", bad_out, 3, "l{i}.", &[x])),
            "E-GRAPH-012: repeat `layers`: region [1]: `bad`: the output is f32[4, 8] but the carried parameter is f16[4, 8]"
        );
        assert_eq!(
            msg(b.repeat("layers", Handle::from_index(9), 3, "l{i}.", &[x])),
            "E-GRAPH-012: repeat `layers`: region [9]: not defined in this graph (it has 2 regions)"
        );
        assert_eq!(
            msg(b.repeat("layers", good, 0, "l{i}.", &[x])),
            "E-GRAPH-008: repeat `layers`: count = 0 is invalid: must be ≥ 1"
        );
        // A body without parameters.
        let mut nb = GraphBuilder::new();
        let w = nb.weight("w", DType::F16, [4, 8]).unwrap();
        nb.output("y", w).unwrap();
        let no_params = b.region("empty", nb.finish().unwrap()).unwrap();
        assert_eq!(
            msg(b.repeat("layers", no_params, 1, "", &[])),
            "E-GRAPH-012: repeat `layers`: region [2]: `empty` has no parameters (the first is the carried value)"
        );
        // A body with two outputs.
        let mut two = GraphBuilder::new();
        let x0 = two.input("x", DType::F16, [4, 8]).unwrap();
        two.output("a", x0).unwrap();
        two.output("b", x0).unwrap();
        let two = b.region("two", two.finish().unwrap()).unwrap();
        assert_eq!(
            msg(b.repeat("layers", two, 1, "", &[x])),
            "E-GRAPH-012: repeat `layers`: region [3]: `two` has 2 outputs, expected exactly 1"
        );
        assert_eq!(
            msg(b.region("", body([4, 8], DType::F16))),
            "E-GRAPH-008: region: name = \"\" is invalid: names must not be empty"
        );
    }
}
