//! One mid op at a time: host inputs and weights become buffers with host pieces or contents,
//! compute ops their kernel calls on every tile of the result, outputs host pieces.

use super::calls::{compute_calls, ComputeKind};
use super::steps::compute_vstep;
use super::{host, Lower, LowerError, LowerFailure};
use crate::layout::{Layout, Order, ShardMap};
use crate::mid::{MidId, MidOp};
use crate::redist::segments::zero_padding;
use crate::tile::{BufferCategory, BufferId, HostPiecePlan, HostTensorPlan};
use std::sync::Arc;

impl Lower<'_> {
    pub(super) fn lower_node(&mut self) -> Result<(), LowerError> {
        let id = self.node;
        let node = &self.mid.nodes[id];
        match &node.op {
            MidOp::Input { tensor, view } => {
                let layout = node.layout.clone();
                let map = self.map(id)?;
                let zero = zero_padding(layout.order);
                let tiles: Vec<u32> = layout.dist.all_tiles().collect();
                for t in tiles {
                    let contents = zero.then(|| Arc::new(vec![0u8; map.buffer_bytes() as usize]));
                    let b = self.new_buffer(
                        t,
                        tensor,
                        map.buffer_bytes(),
                        BufferCategory::Tensor(tensor.clone()),
                        contents,
                    );
                    self.shard[id.index()].insert(t, b);
                }
                let pieces = host::input_pieces(&layout, view)
                    .map_err(|e| self.fail(LowerFailure::InputPieces, e))?;
                let plan = HostTensorPlan {
                    name: tensor.clone(),
                    dtype: host::host_dtype(layout.dtype).into(),
                    shape: view.source_shape().iter().map(|&d| d as usize).collect(),
                    pieces: pieces
                        .into_iter()
                        .map(|(tile, _, offset, tensor_offset, bytes)| HostPiecePlan {
                            tile,
                            buffer: self.shard[id.index()][&tile],
                            offset,
                            tensor_offset,
                            bytes,
                        })
                        .collect(),
                };
                match self.program.inputs.iter_mut().find(|p| p.name == *tensor) {
                    Some(existing) => existing.pieces.extend(plan.pieces),
                    None => self.program.inputs.push(plan),
                }
                self.ready[id.index()] = 0;
            }
            MidOp::Weight { tensor, view } => {
                // A loop body's per-iteration weight: one slice per iteration in one buffer.
                let names: Vec<String> = match &self.mid.looped {
                    Some(l) if l.contains(id.index()) => l
                        .weights
                        .get(tensor)
                        .cloned()
                        .unwrap_or_else(|| vec![tensor.clone()]),
                    _ => vec![tensor.clone()],
                };
                let layout = node.layout.clone();
                let mut per_iteration = Vec::with_capacity(names.len());
                for name in &names {
                    let data = self.store.get(name).ok_or_else(|| {
                        self.fail(
                            LowerFailure::MissingWeight,
                            format!("weight `{name}` is not in the store"),
                        )
                    })?;
                    per_iteration.push(
                        host::weight_shards(name, data, view, &layout)
                            .map_err(|e| self.fail(LowerFailure::WeightShards, e.to_string()))?,
                    );
                }
                let bytes = self.map(id)?.buffer_bytes();
                let stride = bytes.max(8).div_ceil(8) * 8;
                let layered = names.len() > 1;
                let total = stride.checked_mul(names.len() as u32).ok_or_else(|| {
                    self.fail(
                        LowerFailure::LayeredWeights,
                        format!("{} slices of {stride} bytes overflow", names.len()),
                    )
                })?;
                for block in 0..per_iteration[0].len() {
                    let contents = if layered {
                        let mut all = Vec::with_capacity(total as usize);
                        for slices in &per_iteration {
                            let slice = slices.get(block).ok_or_else(|| {
                                self.fail(
                                    LowerFailure::LayeredWeights,
                                    "iterations have different block counts",
                                )
                            })?;
                            all.extend_from_slice(slice);
                            all.resize(all.len().next_multiple_of(stride as usize), 0);
                        }
                        Arc::new(all)
                    } else {
                        per_iteration[0][block].clone()
                    };
                    for &t in layout.dist.tiles_of(block) {
                        let b = self.new_buffer(
                            t,
                            tensor,
                            if layered { total } else { bytes },
                            BufferCategory::Weights(tensor.clone()),
                            Some(contents.clone()),
                        );
                        if layered {
                            self.layered.insert((t, b), stride);
                        }
                        self.shard[id.index()].insert(t, b);
                    }
                }
                self.ready[id.index()] = 0;
            }
            MidOp::Redistribute { x, .. } => {
                let x = *x;
                let dm = self.map(id)?;
                let movement = self.movements[id.index()]
                    .take()
                    .ok_or_else(|| self.fail(LowerFailure::NoMovement, "no planned movement"))?;
                self.lower_movement(x, &movement, dm.buffer_bytes(), dm.element_bytes())?;
            }
            MidOp::MatMul { a, b, precision } => {
                let kind = ComputeKind::MatMul {
                    fp8: *precision == crate::mid::AmpPrecision::Fp8,
                };
                self.compute(kind, &[*a, *b], None)?;
            }
            MidOp::BiasAdd { x, bias } => {
                let slots = self.distinct_slots(&[*x, *bias])?.filter(|&slots| {
                    self.pays(
                        &ComputeKind::BiasAdd { slots: Some(slots) },
                        &ComputeKind::BiasAdd { slots: None },
                        &[*x, *bias],
                    )
                });
                let reuse = (slots.is_none() && self.in_place(*x)).then_some(*x);
                self.compute(ComputeKind::BiasAdd { slots }, &[*x, *bias], reuse)?;
            }
            MidOp::Add { a, b } => {
                let (a, b) = (*a, *b);
                // A sum written as AMP weights transposes on the way: a buffer of its own.
                let (slots, reuse) =
                    if node.layout.order == Order::Cwei && self.layout(a).order != Order::Cwei {
                        (None, None)
                    } else {
                        let slots =
                            self.sum_slots([a, b], &[a, b], |slots| ComputeKind::Add { slots })?;
                        (slots, self.sum_reuse(slots, [a, b]))
                    };
                self.compute(ComputeKind::Add { slots }, &[a, b], reuse)?;
            }
            MidOp::AddBias { a, b, bias } => {
                let (a, b, bias) = (*a, *b, *bias);
                let slots = self.sum_slots([a, b], &[a, b, bias], |slots| {
                    ComputeKind::AddBias { slots }
                })?;
                let reuse = self.sum_reuse(slots, [a, b]);
                self.compute(ComputeKind::AddBias { slots }, &[a, b, bias], reuse)?;
            }
            MidOp::Gelu { x } => {
                let x = *x;
                let reuse =
                    (node.layout.dtype == self.layout(x).dtype && self.in_place(x)).then_some(x);
                self.compute(ComputeKind::Gelu, &[x], reuse)?;
            }
            MidOp::Softmax { x, scale } => {
                let x = *x;
                self.compute(ComputeKind::Softmax { scale: *scale }, &[x], None)?;
            }
            MidOp::SoftmaxPart { x, scale } => {
                let x = *x;
                self.compute(ComputeKind::SoftmaxPart { scale: *scale }, &[x], None)?;
            }
            MidOp::AttentionCombine { parts, stats } => {
                let (p, s) = (*parts, *stats);
                self.compute(ComputeKind::AttentionCombine, &[p, s], None)?;
            }
            MidOp::SumParts { x, bias } => {
                let operands: Vec<MidId> = std::iter::once(*x).chain(*bias).collect();
                self.compute(ComputeKind::SumParts, &operands, None)?;
            }
            MidOp::Cast { x } => {
                let x = *x;
                self.compute(ComputeKind::Cast, &[x], None)?;
            }
            MidOp::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            } => {
                let (x, g, b) = (*x, *gamma, *beta);
                let kind = ComputeKind::LayerNorm { eps: *eps };
                let last = node.layout.dist.rank() - 1;
                if node.layout.dist.is_whole(last) {
                    self.compute(kind, &[x, g, b], None)?;
                } else {
                    self.layernorm_blocks(kind, [x, g, b])?;
                }
            }
            MidOp::Output { x, tensor, view } => {
                let x = *x;
                let layout = self.layout(x).clone();
                let pieces = host::output_pieces(&layout, view)
                    .map_err(|e| self.fail(LowerFailure::OutputPieces, e))?;
                let mut plan_pieces = Vec::with_capacity(pieces.len());
                for (tile, _, offset, tensor_offset, bytes) in pieces {
                    let buffer = self.shard_of(x, tile)?;
                    self.touch(tile, buffer, usize::MAX - 1);
                    plan_pieces.push(HostPiecePlan {
                        tile,
                        buffer,
                        offset,
                        tensor_offset,
                        bytes,
                    });
                }
                self.program.outputs.push(HostTensorPlan {
                    name: tensor.clone(),
                    dtype: host::host_dtype(layout.dtype).into(),
                    shape: view.shape().iter().map(|&d| d as usize).collect(),
                    pieces: plan_pieces,
                });
            }
        }
        Ok(())
    }

    /// The calls of a compute op on every tile of its result; `reuse`: the operand whose
    /// buffers the result takes over.
    /// Whether the kernel's estimate of this node's call as `kind` is below its estimate as
    /// `instead` (a fresh buffer and element slots only where they save cycles).
    fn pays(&self, kind: &ComputeKind, instead: &ComputeKind, operands: &[MidId]) -> bool {
        let out = self.layout(self.node).clone();
        let layouts: Vec<&Layout> = operands.iter().map(|&o| self.layout(o)).collect();
        let cycles = |kind: &ComputeKind| {
            compute_calls(kind, &out, &layouts)
                .ok()
                .and_then(|(params, _)| params.estimate_cycles().ok())
        };
        matches!((cycles(kind), cycles(instead)), (Some(a), Some(b)) if a < b)
    }

    /// The element slots of a sum of `a` and `b` (`kind` with or without them) where its
    /// paced loop is possible and the kernel's estimate says it pays.
    fn sum_slots(
        &self,
        [a, b]: [MidId; 2],
        operands: &[MidId],
        kind: impl Fn(Option<[u8; 3]>) -> ComputeKind,
    ) -> Result<Option<[u8; 3]>, LowerError> {
        Ok(self
            .distinct_slots(&[a, b])?
            .filter(|&slots| self.pays(&kind(Some(slots)), &kind(None), operands)))
    }

    /// The operand of a sum whose buffers its result takes over: none with element slots (the
    /// result has a slot of its own), else `a` or `b` where they may be overwritten.
    fn sum_reuse(&self, slots: Option<[u8; 3]>, [a, b]: [MidId; 2]) -> Option<MidId> {
        if slots.is_some() {
            None
        } else if self.in_place(a) {
            Some(a)
        } else if self.in_place(b) {
            Some(b)
        } else {
            None
        }
    }

    /// A LayerNorm over blocks of columns (`layernorm_h_cols_*`): on every tile, the kernel's
    /// x is the whole rows and its block's x the same buffer from the block's first column.
    fn layernorm_blocks(
        &mut self,
        kind: ComputeKind,
        [x, gamma, beta]: [MidId; 3],
    ) -> Result<(), LowerError> {
        let id = self.node;
        let out_layout = self.layout(id).clone();
        let layouts: Vec<&Layout> = [x, gamma, beta].iter().map(|&o| self.layout(o)).collect();
        let (params, _) = compute_calls(&kind, &out_layout, &layouts)
            .map_err(|e| self.fail(LowerFailure::ComputeCall, e))?;
        let step = [x, gamma, beta]
            .iter()
            .map(|o| self.ready[o.index()])
            .max()
            .unwrap_or(0)
            .max(self.floors[id.index()]);
        self.fresh_shards(|name| BufferCategory::Tensor(name.to_string()))?;
        let last = out_layout.dist.rank() - 1;
        let tiles: Vec<u32> = out_layout.dist.all_tiles().collect();
        for t in tiles {
            let block = out_layout.dist.block_on(t).ok_or_else(|| {
                self.fail(
                    LowerFailure::ComputeCall,
                    format!("tile {t} holds no block"),
                )
            })?;
            let first = out_layout.dist.block_box(block)[last].start;
            let xb = self.shard_of(x, t)?;
            let data = [
                (xb, 0),
                (xb, 2 * first),
                (self.shard_of(gamma, t)?, 0),
                (self.shard_of(beta, t)?, 0),
                (self.shard_of(id, t)?, 0),
            ];
            self.call(compute_vstep(step), t, params.clone(), &data)?;
        }
        self.ready[id.index()] = step;
        Ok(())
    }

    pub(super) fn compute(
        &mut self,
        kind: ComputeKind,
        operands: &[MidId],
        reuse: Option<MidId>,
    ) -> Result<(), LowerError> {
        let id = self.node;
        let out_layout = self.layout(id).clone();
        let layouts: Vec<&Layout> = operands.iter().map(|&o| self.layout(o)).collect();
        let (params, calls) = compute_calls(&kind, &out_layout, &layouts)
            .map_err(|e| self.fail(LowerFailure::ComputeCall, e))?;
        let step = operands
            .iter()
            .map(|o| self.ready[o.index()])
            .max()
            .unwrap_or(0)
            .max(self.floors[id.index()]);
        match reuse {
            Some(x) => {
                let shards = self.shard[x.index()].clone();
                self.shard[id.index()] = shards;
            }
            None => self.fresh_shards(|name| BufferCategory::Tensor(name.to_string()))?,
        }
        // Byte strides of one leading-dimension slice (matmuls loop over them); a product in
        // panels makes one call per column block: the same A, the block's `$CWEI` blocks of B
        // and its panel of the result (`calls::column_panels`).
        let panels = super::calls::column_panels(&kind, &out_layout).unwrap_or(1);
        let slice = |m: &ShardMap| m.bytes() / calls.max(1);
        // Per buffer (operands, then the result): bytes per leading entry and per column block.
        let mut strides: Vec<(u32, u32)> = Vec::with_capacity(operands.len() + 1);
        for (i, &o) in operands.iter().enumerate() {
            let map = self.map(o)?;
            strides.push(match (panels, i) {
                (1, _) => (slice(&map), 0),
                (_, 0) => (map.bytes() / (calls / panels).max(1), 0),
                (_, _) => {
                    let lead = map.bytes() / (calls / panels).max(1);
                    (lead, lead / panels)
                }
            });
        }
        let result = slice(&self.map(id)?);
        strides.push((result * panels, result));
        let tiles: Vec<u32> = out_layout.dist.all_tiles().collect();
        for t in tiles {
            let mut buffers: Vec<BufferId> = Vec::with_capacity(operands.len() + 1);
            for &o in operands {
                buffers.push(self.shard_of(o, t)?);
            }
            buffers.push(self.shard_of(id, t)?);
            for k in 0..calls {
                let data: Vec<(BufferId, u32)> = buffers
                    .iter()
                    .zip(&strides)
                    .map(|(&b, &(outer, inner))| (b, (k / panels) * outer + (k % panels) * inner))
                    .collect();
                self.call(compute_vstep(step), t, params.clone(), &data)?;
            }
        }
        self.ready[id.index()] = step;
        Ok(())
    }
}
