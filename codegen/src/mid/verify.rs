//! The distributed-level verifier: the invariants of [`super`] — operands before users, shapes,
//! valid layouts, and the shard rule of every compute op checked on every tile by comparing
//! resolved blocks. Run after building a program and after every rewrite.

use super::{AmpPrecision, MidId, MidNode, MidOp, MidProgram};
use crate::graph::DType;
use crate::layout::{Distribution, Order};
use std::ops::Range;

pub use super::failure::{MidFailure, MidVerifyError};

/// The box of `dist`'s block on `tile`.
pub fn shard_box(dist: &Distribution, tile: u32) -> Option<Vec<Range<u32>>> {
    dist.block_on(tile).map(|b| dist.block_box(b))
}

struct Checker<'p> {
    program: &'p MidProgram,
    id: MidId,
}

impl Checker<'_> {
    fn node(&self) -> &MidNode {
        &self.program.nodes[self.id]
    }

    fn fail(&self, failure: MidFailure, reason: impl Into<String>) -> MidVerifyError {
        let node = self.node();
        MidVerifyError {
            failure,
            node: self.id.index(),
            op: node.op.name(),
            label: node.label.clone(),
            reason: reason.into(),
        }
    }

    /// Elements of one row of `x`'s shards (its shard map's row length).
    fn row_elements(&self, x: &MidNode) -> Result<u32, MidVerifyError> {
        x.layout
            .shard_map()
            .map(|m| m.row_elements())
            .map_err(|e| self.fail(MidFailure::ShardMap, e.to_string()))
    }

    fn operand(&self, id: MidId) -> &MidNode {
        &self.program.nodes[id]
    }

    /// `operand` has a block on every tile of the result, with the box `want(result box)`.
    fn covers(
        &self,
        failure: MidFailure,
        what: &str,
        operand: &Distribution,
        want: impl Fn(&[Range<u32>]) -> Vec<Range<u32>>,
    ) -> Result<(), MidVerifyError> {
        let out = &self.node().layout.dist;
        for tile in out.all_tiles() {
            let Some(b) = out.block_on(tile) else {
                continue;
            };
            let expected = want(&out.block_box(b));
            match shard_box(operand, tile) {
                Some(got) if got == expected => {}
                Some(got) => {
                    return Err(self.fail(
                        failure,
                        format!(
                            "on tile {tile} {what} has block {got:?}, the op needs {expected:?}"
                        ),
                    ))
                }
                None => {
                    return Err(self.fail(failure, format!("{what} has no block on tile {tile}")))
                }
            }
        }
        Ok(())
    }

    /// A softmax kernel's rows: `x` f16 row-major with rows of a multiple of 4 (`order` when
    /// not row-major, `types` otherwise), the result f16 in rows of 4s.
    /// `x` f16 rows of a multiple of 4 halves, the result f16 rows of 4s (or AMP panels, where
    /// `panels` allows them).
    fn softmax_rows(
        &self,
        (order, types): (MidFailure, MidFailure),
        x: &MidNode,
        panels: bool,
    ) -> Result<(), MidVerifyError> {
        let Order::RowMajor { align } = x.layout.order else {
            return Err(self.fail(order, "x must be row-major"));
        };
        let stride = self.row_elements(x)?;
        let node = self.node();
        let out_ok = node.layout.order == (Order::RowMajor { align: 4 })
            || (panels && node.layout.order == Order::Panels);
        if stride % 4 != 0 || !out_ok || x.dtype() != DType::F16 || node.dtype() != DType::F16 {
            return Err(self.fail(
                types,
                format!(
                    "f16 rows of a multiple of 4 in (align {align}), rows of 4s out{}",
                    if panels { " or AMP panels" } else { "" }
                ),
            ));
        }
        Ok(())
    }

    /// Whether `x` has the result's distribution and shape, in `order`.
    fn blocks_of_result(&self, x: &MidNode, order: Order) -> bool {
        let out = self.node();
        x.layout.dist == out.layout.dist && x.layout.order == order && x.shape == out.shape
    }

    fn same_layout(
        &self,
        failure: MidFailure,
        what: &str,
        x: &MidNode,
    ) -> Result<(), MidVerifyError> {
        if !self.blocks_of_result(x, self.node().layout.order) {
            return Err(self.fail(
                failure,
                format!("{what} must have the result's distribution, order and shape"),
            ));
        }
        Ok(())
    }

    /// An operand of a sum written as AMP weights (`Add` with a `Cwei` result): the result's
    /// distribution and shape, rank 2, in dense rows of one 16-column block.
    fn rows_into_cwei(
        &self,
        failure: MidFailure,
        what: &str,
        x: &MidNode,
    ) -> Result<(), MidVerifyError> {
        let out = self.node();
        let one_block = out.layout.dist.padded_box().last() == Some(&16);
        if !self.blocks_of_result(x, Order::DENSE) || out.shape.len() != 2 || !one_block {
            return Err(self.fail(
                failure,
                format!(
                    "{what} of a sum into $CWEI order must be dense rows with the result's \
                     distribution and shape, rank 2, in blocks of 16 columns"
                ),
            ));
        }
        Ok(())
    }

    /// The bias of `BiasAdd` and `AddBias`: f16 `[N]` for a row-major `x` with the result's
    /// layout, each tile's shard covering that tile's columns and as long as its rows.
    fn bias_rules(&self, x: &MidNode, bias: &MidNode) -> Result<(), MidVerifyError> {
        let node = self.node();
        let last = node.shape.len() - 1;
        if bias.dtype() != DType::F16 {
            return Err(self.fail(MidFailure::BiasType, "the bias is f16"));
        }
        let Order::RowMajor { .. } = x.layout.order else {
            return Err(self.fail(MidFailure::BiasXOrder, "x must be row-major"));
        };
        let row = self.row_elements(node)?;
        if row % 4 != 0 || bias.shape != [node.shape[last]] {
            return Err(self.fail(
                MidFailure::BiasRows,
                format!(
                    "rows of {row} elements (need a multiple of 4), bias {:?}",
                    bias.shape
                ),
            ));
        }
        self.covers(MidFailure::BiasCover, "bias", &bias.layout.dist, |o| {
            vec![o[last].clone()]
        })?;
        let bias_row = self.row_elements(bias)?;
        if bias_row != row || !matches!(bias.layout.order, Order::RowMajor { .. }) {
            return Err(self.fail(
                MidFailure::BiasShard,
                format!("the bias shard holds {bias_row} values, rows hold {row}"),
            ));
        }
        Ok(())
    }

    fn check(&self) -> Result<(), MidVerifyError> {
        let node = self.node();
        for operand in node.op.operands() {
            if operand.index() >= self.id.index() {
                return Err(self.fail(
                    MidFailure::OperandOrder,
                    format!("operand %{} is not defined before use", operand.index()),
                ));
            }
        }
        if node.layout.dist.shape() != node.shape.as_slice() {
            return Err(self.fail(
                MidFailure::LayoutShape,
                format!(
                    "the layout is for {:?}, the value is {:?}",
                    node.layout.dist.shape(),
                    node.shape
                ),
            ));
        }
        node.layout
            .shard_map()
            .map_err(|e| self.fail(MidFailure::ShardMap, e.to_string()))?;
        let rank = node.shape.len();
        let last = rank - 1;
        match &node.op {
            MidOp::Input { view, .. } | MidOp::Weight { view, .. } => {
                if view.shape() != node.shape.as_slice() {
                    return Err(self.fail(
                        MidFailure::ViewShape,
                        "the view does not produce the value's shape",
                    ));
                }
            }
            MidOp::Redistribute { x, view } => {
                let x = self.operand(*x);
                if view.source_shape() != x.shape.as_slice()
                    || view.shape() != node.shape.as_slice()
                {
                    return Err(self.fail(
                        MidFailure::RedistributeView,
                        format!(
                            "the view maps {:?} from {:?}, the operand is {:?}",
                            view.shape(),
                            view.source_shape(),
                            x.shape
                        ),
                    ));
                }
                if x.dtype() != node.dtype() {
                    return Err(self.fail(
                        MidFailure::RedistributeConverts,
                        "a redistribution does not convert",
                    ));
                }
            }
            MidOp::Output { x, view, .. } => {
                if view.source_shape() != self.operand(*x).shape.as_slice() {
                    return Err(self.fail(
                        MidFailure::OutputView,
                        "the output view does not read the operand's shape",
                    ));
                }
            }
            MidOp::MatMul { a, b, precision } => {
                let (a, b) = (self.operand(*a), self.operand(*b));
                if rank < 2 || a.shape.len() != rank || b.shape.len() != rank {
                    return Err(self.fail(
                        MidFailure::MatMulRank,
                        "operands and result must have the same rank ≥ 2",
                    ));
                }
                let (m, k, n) = (a.shape[rank - 2], a.shape[last], b.shape[last]);
                if b.shape[rank - 2] != k
                    || node.shape[rank - 2] != m
                    || node.shape[last] != n
                    || a.shape[..rank - 2] != node.shape[..rank - 2]
                    || b.shape[..rank - 2] != node.shape[..rank - 2]
                {
                    return Err(self.fail(
                        MidFailure::MatMulShapes,
                        format!("{:?} × {:?} → {:?}", a.shape, b.shape, node.shape),
                    ));
                }
                let dtypes_ok = match precision {
                    AmpPrecision::Fp8 => a.dtype().is_fp8() && b.dtype().is_fp8(),
                    AmpPrecision::F16 => a.dtype() == DType::F16 && b.dtype() == DType::F16,
                };
                if !dtypes_ok || node.dtype() != DType::F16 {
                    return Err(self.fail(
                        MidFailure::MatMulTypes,
                        format!(
                            "{precision:?} matmul of {} × {} → {}",
                            a.dtype(),
                            b.dtype(),
                            node.dtype()
                        ),
                    ));
                }
                // A in panels, or in rows of whole AMP K-blocks (no padding) that the pace
                // stride field reaches.
                let a_ok = match a.layout.order {
                    Order::Panels => true,
                    Order::RowMajor { align } => {
                        let bytes = a.dtype().size_bytes();
                        let padded = k.div_ceil(align.max(1)) * align.max(1);
                        padded == k
                            && (k as usize * bytes).is_multiple_of(32)
                            && k as usize * bytes <= tessera_kernels::gemm::MAX_ROW_STRIDE_BYTES
                    }
                    Order::Cwei => false,
                };
                // The result in rows, or in panels of 16 columns (one call per column block).
                let out_ok = matches!(
                    node.layout.order,
                    Order::RowMajor { align: 16 } | Order::Panels
                );
                if !a_ok || b.layout.order != Order::Cwei || !out_ok {
                    return Err(self.fail(
                        MidFailure::MatMulOrders,
                        "a in panels or in rows of whole K-blocks, b in $CWEI order, the result row-major in 16s or in panels",
                    ));
                }
                self.covers(MidFailure::MatMulA, "a", &a.layout.dist, |o| {
                    let mut want = o.to_vec();
                    want[last] = 0..k;
                    want
                })?;
                self.covers(MidFailure::MatMulB, "b", &b.layout.dist, |o| {
                    let mut want = o.to_vec();
                    want[rank - 2] = 0..k;
                    want
                })?;
                let (pa, pb, po) = (
                    a.layout.dist.padded_box(),
                    b.layout.dist.padded_box(),
                    node.layout.dist.padded_box(),
                );
                if pa[rank - 2] != po[rank - 2]
                    || pb[last] != po[last]
                    || pa[..rank - 2] != po[..rank - 2]
                    || pb[..rank - 2] != po[..rank - 2]
                {
                    return Err(self.fail(
                        MidFailure::MatMulPadding,
                        format!("padded blocks a {pa:?}, b {pb:?}, result {po:?} disagree"),
                    ));
                }
            }
            MidOp::BiasAdd { x, bias } => {
                let (x, bias) = (self.operand(*x), self.operand(*bias));
                self.same_layout(MidFailure::BiasAddLayout, "x", x)?;
                if x.dtype() != DType::F16 || node.dtype() != DType::F16 {
                    return Err(self.fail(MidFailure::BiasAddTypes, "bias_add works on f16"));
                }
                self.bias_rules(x, bias)?;
            }
            MidOp::AddBias { a, b, bias } => {
                let (a, b, bias) = (self.operand(*a), self.operand(*b), self.operand(*bias));
                self.same_layout(MidFailure::AddBiasA, "a", a)?;
                self.same_layout(MidFailure::AddBiasB, "b", b)?;
                if a.dtype() != DType::F16 || b.dtype() != DType::F16 || node.dtype() != DType::F16
                {
                    return Err(self.fail(MidFailure::AddBiasTypes, "add_bias works on f16"));
                }
                self.bias_rules(a, bias)?;
            }
            MidOp::Add { a, b } => {
                let (a, b) = (self.operand(*a), self.operand(*b));
                // Element by element in the result's order, or rows into `$CWEI` order.
                if node.layout.order == Order::Cwei && a.layout.order != Order::Cwei {
                    self.rows_into_cwei(MidFailure::AddA, "a", a)?;
                    self.rows_into_cwei(MidFailure::AddB, "b", b)?;
                } else {
                    self.same_layout(MidFailure::AddA, "a", a)?;
                    self.same_layout(MidFailure::AddB, "b", b)?;
                }
                if a.dtype() != DType::F16 || b.dtype() != DType::F16 || node.dtype() != DType::F16
                {
                    return Err(self.fail(MidFailure::AddTypes, "add works on f16"));
                }
            }
            MidOp::Gelu { x } => {
                let x = self.operand(*x);
                self.same_layout(MidFailure::GeluLayout, "x", x)?;
                if x.dtype() != DType::F16 || !(node.dtype() == DType::F16 || node.dtype().is_fp8())
                {
                    return Err(
                        self.fail(MidFailure::GeluTypes, "gelu takes f16 and gives f16 or FP8")
                    );
                }
            }
            MidOp::Softmax { x, scale } => {
                let x = self.operand(*x);
                if !(scale.is_finite() && *scale > 0.0) {
                    return Err(self.fail(
                        MidFailure::SoftmaxScale,
                        format!("scale {scale} (the kernel takes a finite scale > 0)"),
                    ));
                }
                if x.layout.dist != node.layout.dist || !x.layout.dist.is_whole(last) {
                    return Err(self.fail(
                        MidFailure::SoftmaxRows,
                        "softmax keeps the distribution and needs whole rows",
                    ));
                }
                self.softmax_rows(
                    (MidFailure::SoftmaxXOrder, MidFailure::SoftmaxTypes),
                    x,
                    false,
                )?;
            }
            MidOp::SoftmaxPart { x, scale } => {
                let x = self.operand(*x);
                if !(scale.is_finite() && *scale > 0.0) {
                    return Err(self.fail(
                        MidFailure::SoftmaxPartScale,
                        format!("scale {scale} (the kernel takes a finite scale > 0)"),
                    ));
                }
                let w = crate::graph::op::softmax_part_width(x.shape[last] as usize) as u32;
                let same = x.layout.dist.with_trailing(last, &[w]).ok();
                if node.shape[last] != w || same.as_ref() != Some(&node.layout.dist) {
                    return Err(self.fail(
                        MidFailure::SoftmaxPartWidth,
                        "softmax_part keeps the leading blocks and needs whole rows, as wide out as \
                         its exponentials in whole blocks of 16 and 4 more",
                    ));
                }
                self.softmax_rows(
                    (MidFailure::SoftmaxPartXOrder, MidFailure::SoftmaxPartTypes),
                    x,
                    *scale == 1.0,
                )?;
            }
            MidOp::AttentionCombine { parts, stats } => {
                let (p, s) = (self.operand(*parts), self.operand(*stats));
                let rank = node.shape.len();
                let ok = rank >= 2
                    && p.shape.len() == rank + 1
                    && s.shape.len() == rank + 1
                    && p.shape[rank - 1..] == node.shape[rank - 2..]
                    && s.shape[..rank] == p.shape[..rank]
                    && s.shape[rank] == 2;
                if !ok {
                    return Err(self.fail(
                        MidFailure::CombineShapes,
                        "parts [.., C, R, D] and stats [.., C, R, 2] for [.., R, D]",
                    ));
                }
                let c = p.shape[rank - 2];
                let wants = [
                    (
                        "parts",
                        p,
                        node.layout.dist.with_whole_dim(rank - 2, c).ok(),
                    ),
                    (
                        "stats",
                        s,
                        // A row's statistics whole on each of its column blocks.
                        node.layout
                            .dist
                            .with_trailing_replicated(last, &[2])
                            .and_then(|s| s.with_whole_dim(rank - 2, c))
                            .ok(),
                    ),
                ];
                for (what, x, want) in wants {
                    if want.as_ref() != Some(&x.layout.dist) {
                        return Err(self.fail(
                            MidFailure::CombineLayout,
                            format!("{what} must have the result's leading blocks and rows, whole blocks, on its tiles"),
                        ));
                    }
                }
                let rows_of_8s =
                    matches!(p.layout.order, Order::RowMajor { align } if align % 8 == 0);
                if !rows_of_8s
                    || node.layout.order != (Order::RowMajor { align: 8 })
                    || s.layout.order != Order::DENSE
                    || [p.dtype(), s.dtype(), node.dtype()] != [DType::F16; 3]
                {
                    return Err(self.fail(
                        MidFailure::CombineOrders,
                        "f16 parts and result in rows of 8s, dense f16 stats",
                    ));
                }
            }
            MidOp::SumParts { x, bias } => {
                if let Some(bias) = bias {
                    self.bias_rules(node, self.operand(*bias))?;
                }
                let x = self.operand(*x);
                let rank = node.shape.len();
                let ok = x.shape.len() == rank + 1 && x.shape[rank] == node.shape[last];
                if !ok {
                    return Err(self.fail(
                        MidFailure::SumPartsShapes,
                        "sum_parts takes [.., C, D] to [.., D]",
                    ));
                }
                let want = node.layout.dist.with_whole_dim(last, x.shape[last]).ok();
                if want.as_ref() != Some(&x.layout.dist) {
                    return Err(self.fail(
                        MidFailure::SumPartsLayout,
                        "sum_parts' parts must have the result's blocks with all parts, on its tiles",
                    ));
                }
                if x.layout.order != (Order::RowMajor { align: 8 })
                    || node.layout.order != (Order::RowMajor { align: 8 })
                    || [x.dtype(), node.dtype()] != [DType::F16; 2]
                {
                    return Err(self.fail(
                        MidFailure::SumPartsOrders,
                        "sum_parts reads and writes f16 in rows of 8s",
                    ));
                }
            }
            MidOp::LayerNorm { x, gamma, beta, .. } => {
                let x = self.operand(*x);
                let blocks = !node.layout.dist.is_whole(last);
                if blocks {
                    // A block of each row's columns: x holds the whole rows on its tiles; the
                    // blocks are even and of whole groups of 4; the parameters are f16.
                    let bounds = &node.layout.dist.bounds()[last];
                    let width = bounds[1] - bounds[0];
                    let even =
                        width.is_multiple_of(4) && bounds.windows(2).all(|w| w[1] - w[0] == width);
                    let want = node
                        .layout
                        .dist
                        .with_trailing_replicated(last, &[node.shape[last]])
                        .ok();
                    if want.as_ref() != Some(&x.layout.dist)
                        || x.shape != node.shape
                        || !even
                        || node.layout.order != Order::DENSE
                        || self.operand(*gamma).dtype() != DType::F16
                    {
                        return Err(self.fail(
                            MidFailure::LayerNormBlocks,
                            "a layernorm over blocks of columns reads its rows whole on its tiles, the blocks even, dense and of whole groups of 4, with f16 parameters",
                        ));
                    }
                } else {
                    self.same_layout(MidFailure::LayerNormLayout, "x", x)?;
                }
                if !x.layout.dist.is_whole(last) || x.layout.order != Order::DENSE {
                    return Err(self.fail(
                        MidFailure::LayerNormRows,
                        "layernorm needs whole dense rows",
                    ));
                }
                if x.dtype() != DType::F16 || !(node.dtype() == DType::F16 || node.dtype().is_fp8())
                {
                    return Err(self.fail(
                        MidFailure::LayerNormTypes,
                        "layernorm takes f16 and gives f16 or FP8",
                    ));
                }
                let param_dtype = self.operand(*gamma).dtype();
                for (what, p) in [("gamma", *gamma), ("beta", *beta)] {
                    let p = self.operand(p);
                    let readable = match p.dtype() {
                        DType::F32 => true,
                        DType::F16 => node.shape[last].is_multiple_of(4),
                        DType::Fp8 { .. } => false,
                    };
                    if !readable
                        || p.dtype() != param_dtype
                        || p.shape != [node.shape[last]]
                        || p.layout.order != Order::DENSE
                    {
                        return Err(self.fail(
                            MidFailure::LayerNormParams,
                            format!("{what} must be a dense vector of the row length, f32, or f16 where it is a multiple of 4, of the same type as gamma"),
                        ));
                    }
                    self.covers(MidFailure::LayerNormParamCover, what, &p.layout.dist, |o| {
                        vec![o[last].clone()]
                    })?;
                    let exact = self.row_elements(p)? == self.row_elements(node)?;
                    if blocks && !exact {
                        return Err(self.fail(
                            MidFailure::LayerNormBlockParams,
                            format!("{what} must hold the block's columns only"),
                        ));
                    }
                }
            }
            MidOp::Cast { x } => {
                let x = self.operand(*x);
                self.same_layout(MidFailure::CastLayout, "x", x)?;
                let ok = matches!(
                    (x.dtype(), node.dtype()),
                    (DType::F32, DType::F16) | (DType::F16, DType::Fp8 { .. })
                );
                if !ok {
                    return Err(self.fail(
                        MidFailure::CastTypes,
                        format!("no kernel casts {} to {}", x.dtype(), node.dtype()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Checks every node of `program`.
pub fn verify(program: &MidProgram) -> Result<(), MidVerifyError> {
    for (id, _) in program.nodes.iter() {
        Checker { program, id }.check()?;
    }
    let readers = program.readers();
    let carry = program.looped.as_ref().map(|l| l.carry);
    for (id, node) in program.nodes.iter() {
        if !matches!(node.op, MidOp::Output { .. })
            && readers[id.index()].is_empty()
            && carry != Some(id)
        {
            return Err(Checker { program, id }.fail(MidFailure::Unused, "the value is never used"));
        }
    }
    if let Some(l) = &program.looped {
        verify_loop(program, l)?;
    }
    Ok(())
}

/// A loop's body is a non-empty range after its carried value; its carry is in the body with
/// the carried value's shape and layout; nothing after the body reads the carried value (the
/// carry overwrites it: after the loop, body values hold their last iteration's).
fn verify_loop(program: &MidProgram, l: &super::MidLoop) -> Result<(), MidVerifyError> {
    let fail = |id: MidId, reason: String| Checker { program, id }.fail(MidFailure::Loop, reason);
    let carry = l.carry;
    if l.count == 0 || l.first >= l.end || l.end > program.nodes.len() {
        return Err(fail(
            carry,
            format!(
                "loop `{}`: body {}..{} of {} nodes, {} iterations",
                l.name,
                l.first,
                l.end,
                program.nodes.len(),
                l.count
            ),
        ));
    }
    if l.carried_in.index() >= l.first || !l.contains(carry.index()) {
        return Err(fail(
            carry,
            format!(
                "loop `{}`: the carried value %{} must precede the body {}..{} and the carry be in it",
                l.name,
                l.carried_in.index(),
                l.first,
                l.end
            ),
        ));
    }
    let (a, b) = (&program.nodes[l.carried_in], &program.nodes[carry]);
    if a.shape != b.shape || a.layout != b.layout {
        return Err(fail(
            carry,
            format!(
                "loop `{}`: the carry's shape and layout differ from the carried value's",
                l.name
            ),
        ));
    }
    for (id, node) in program.nodes.iter() {
        if id.index() >= l.end && node.op.operands().contains(&l.carried_in) {
            return Err(fail(
                id,
                format!(
                    "reads the carried value of loop `{}` after the loop",
                    l.name
                ),
            ));
        }
    }
    Ok(())
}
