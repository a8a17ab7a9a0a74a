//! Distributed level → tile level: per tile, the buffers of every shard, the kernel calls of
//! every compute op ([`calls::compute_calls`]), and for every redistribution its planned
//! movement ([`crate::redist`]) as copy calls ([`copies`]) and exchange transfers; host inputs,
//! weights and outputs as host pieces and buffer contents ([`host`]).
//!
//! # Steps
//!
//! The program alternates compute steps and exchange phases, `C0 X0 C1 X1 …`, and every op is
//! placed as early as its operands allow: a compute op runs in the compute step where its last
//! operand becomes ready (after the calls already there on the same tile, so a tile's calls
//! stay in dependency order); a redistribution whose source is ready in `Cs` does its
//! source-side copies in `Cs`, its transfers in `Xs` and its destination-side copies in
//! `Cs+1` (all in `Cs` when no byte crosses tiles). Steps with nothing in them are dropped.
//! Inputs and weights are ready in `C0`.
//!
//! # Buffers
//!
//! A value has one buffer per tile holding a block (the padded shard). In-place results reuse
//! their operand's buffer when the operand has no other reader and shares its buffer with no
//! other value; a redistribution that leaves a tile's bytes where they are reuses the source
//! buffer. A buffer's region, element slot and alignment are the union of what every kernel
//! operand bound to it needs (a conflict is an error naming both).

pub mod calls;
pub mod copies;
pub mod host;

use crate::graph::weights::WeightStore;
use crate::layout::{Layout, ShardMap};
use crate::mid::{MidId, MidOp, MidProgram};
use crate::redist::segments::zero_padding;
use crate::redist::{plan_movement_with, Buf, Movement, Side};
use crate::tile::{
    BufferCategory, BufferDecl, BufferId, HostPiecePlan, HostTensorPlan, KernelCall, Program,
    RegionRequirement, StepKind, SymbolicTransfer,
};
use calls::{compute_calls, ComputeKind};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use tessera_kernels::table::{KernelParams, OperandSpec, RegionNeed};
use tessera_kernels::Role;

/// Why lowering failed: the op and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-LOWER-{code:03} %{node} {op} `{label}`: {reason}")]
pub struct LowerError {
    pub code: u32,
    pub node: usize,
    pub op: &'static str,
    pub label: String,
    pub reason: String,
}

/// The lowered program and what each step holds (for reports and the profile).
#[derive(Clone, Debug)]
pub struct Lowered {
    pub program: Program,
    /// Per program step: the labels of the ops with work in it, in op order.
    pub step_ops: Vec<Vec<String>>,
}

const NO_STEP: usize = usize::MAX;

struct Lower<'a> {
    mid: &'a MidProgram,
    store: &'a WeightStore,
    program: Program,
    /// Per value: its buffer on every tile holding a block.
    shard: Vec<HashMap<u32, BufferId>>,
    /// Per value: the compute step it is ready in.
    ready: Vec<usize>,
    readers: Vec<Vec<MidId>>,
    /// Per tile: (first, last) virtual step each buffer is used in.
    uses: Vec<Vec<(usize, usize)>>,
    /// Buffers several values refer to (never written in place).
    shared: HashSet<(u32, BufferId)>,
    /// (virtual step, tile, call) in order of creation.
    calls: Vec<(usize, u32, KernelCall)>,
    /// Per exchange phase (after compute step s): its transfers.
    transfers: BTreeMap<usize, Vec<SymbolicTransfer>>,
    /// Per virtual step: op labels.
    step_ops: BTreeMap<usize, Vec<String>>,
    node: MidId,
    /// Every redistribution's planned movement (made up front, in parallel).
    movements: Vec<Option<Movement>>,
    /// Per redistribution: the compute step its result is needed in (as late as its readers
    /// allow, so large destination buffers — a head's keys broadcast to every query tile — are
    /// not live long before they are used).
    late: Vec<usize>,
}

fn compute_vstep(step: usize) -> usize {
    2 * step
}

fn exchange_vstep(step: usize) -> usize {
    2 * step + 1
}

impl Lower<'_> {
    fn fail(&self, code: u32, reason: impl Into<String>) -> LowerError {
        let node = &self.mid.nodes[self.node];
        LowerError {
            code,
            node: self.node.index(),
            op: node.op.name(),
            label: node.label.clone(),
            reason: reason.into(),
        }
    }

    fn label(&self) -> &str {
        &self.mid.nodes[self.node].label
    }

    fn new_buffer(
        &mut self,
        tile: u32,
        name: &str,
        bytes: u32,
        category: BufferCategory,
        contents: Option<Arc<Vec<u8>>>,
    ) -> BufferId {
        let id = self.program.tiles[tile as usize].add_buffer(BufferDecl {
            name: name.to_string(),
            bytes: bytes.max(8).div_ceil(8) * 8,
            align: 8,
            region: RegionRequirement::Any,
            slot: None,
            category,
            live: (0, 0),
            alias_of: None,
            contents,
        });
        self.uses[tile as usize].push((NO_STEP, 0));
        id
    }

    fn touch(&mut self, tile: u32, buffer: BufferId, vstep: usize) {
        let u = &mut self.uses[tile as usize][buffer.0 as usize];
        u.0 = u.0.min(vstep);
        u.1 = u.1.max(vstep);
    }

    /// What `buffer` would need to also serve `spec`: `Some((region, slot))`, or `None` when
    /// the two conflict.
    fn merged_needs(
        &self,
        tile: u32,
        buffer: BufferId,
        spec: &OperandSpec,
    ) -> Option<(RegionRequirement, Option<u8>)> {
        let decl = &self.program.tiles[tile as usize].buffers[buffer.0 as usize];
        let need = match spec.region {
            RegionNeed::Any => RegionRequirement::Any,
            RegionNeed::Standard => RegionRequirement::Standard,
            RegionNeed::Interleaved => RegionRequirement::Interleaved,
        };
        let region = match (decl.region, need) {
            (a, RegionRequirement::Any) => a,
            (RegionRequirement::Any, b) => b,
            (a, b) if a == b => a,
            _ => return None,
        };
        let slot = match (decl.slot, spec.slot) {
            (a, None) => a,
            (None, b) => b,
            (Some(a), Some(b)) if a == b => Some(a),
            _ => return None,
        };
        Some((region, slot))
    }

    /// Merges an operand's needs into the buffer it is bound to.
    fn require(
        &mut self,
        tile: u32,
        buffer: BufferId,
        spec: &OperandSpec,
    ) -> Result<(), LowerError> {
        let Some((region, slot)) = self.merged_needs(tile, buffer, spec) else {
            let name = self.program.tiles[tile as usize].buffers[buffer.0 as usize]
                .name
                .clone();
            return Err(self.fail(
                10,
                format!(
                    "buffer `{name}` on tile {tile} cannot also be `{}` of a call",
                    spec.name
                ),
            ));
        };
        let decl = &mut self.program.tiles[tile as usize].buffers[buffer.0 as usize];
        decl.region = region;
        decl.slot = slot;
        decl.align = decl.align.max(spec.align);
        Ok(())
    }

    /// A copy of `buffer` (whole words) in a fresh buffer, made at `vstep`: for an operand whose
    /// memory needs (region, element slot) conflict with the buffer's other uses.
    fn copy_of(
        &mut self,
        vstep: usize,
        tile: u32,
        buffer: BufferId,
    ) -> Result<BufferId, LowerError> {
        let (name, bytes, category) = {
            let decl = &self.program.tiles[tile as usize].buffers[buffer.0 as usize];
            (
                format!("{}.copy", decl.name),
                decl.bytes,
                decl.category.clone(),
            )
        };
        let copy = self.new_buffer(tile, &name, bytes, category, None);
        let run = [crate::redist::Run {
            src: Some(0),
            dst: 0,
            bytes,
        }];
        for params in copies::copy_params(&run, 4).map_err(|e| self.fail(41, e))? {
            self.call(vstep, tile, params, &[(buffer, 0), (copy, 0)])?;
        }
        Ok(copy)
    }

    /// Adds a call of `params` on `tile` at `vstep`: data operands (inputs and outputs, in the
    /// kernel's order) bound to `data`; scratch and table operands get buffers of their own.
    fn call(
        &mut self,
        vstep: usize,
        tile: u32,
        params: KernelParams,
        data: &[(BufferId, u32)],
    ) -> Result<(), LowerError> {
        let params = Arc::new(params);
        let spec = params.spec().map_err(|e| self.fail(12, e.to_string()))?;
        let mut bindings = Vec::with_capacity(spec.operands.len());
        let mut next = data.iter();
        let label = self.label().to_string();
        for operand in &spec.operands {
            let binding = if let Some(constant) = &operand.constant {
                let id = self.new_buffer(
                    tile,
                    &format!("{label}.{}", operand.name),
                    operand.bytes,
                    BufferCategory::Constants,
                    Some(constant.clone()),
                );
                (id, 0)
            } else if operand.role == Role::Scratch {
                let id = self.new_buffer(
                    tile,
                    &format!("{label}.{}", operand.name),
                    operand.bytes,
                    BufferCategory::Scratch,
                    None,
                );
                (id, 0)
            } else {
                let (b, offset) = *next.next().ok_or_else(|| {
                    self.fail(
                        13,
                        format!(
                            "`{}` has more operands than the op binds",
                            params.id().name()
                        ),
                    )
                })?;
                if self.merged_needs(tile, b, operand).is_none()
                    && operand.role == Role::Input
                    && offset == 0
                {
                    (self.copy_of(vstep, tile, b)?, 0)
                } else {
                    (b, offset)
                }
            };
            self.require(tile, binding.0, operand)?;
            self.touch(tile, binding.0, vstep);
            bindings.push(binding);
        }
        if next.next().is_some() {
            return Err(self.fail(
                13,
                format!(
                    "`{}` has fewer operands than the op binds",
                    params.id().name()
                ),
            ));
        }
        let call = KernelCall::new(params, bindings, Arc::from(label.as_str()))
            .map_err(|e| self.fail(12, e.to_string()))?;
        self.calls.push((vstep, tile, call));
        let ops = self.step_ops.entry(vstep).or_default();
        if ops.last().map(String::as_str) != Some(label.as_str()) {
            ops.push(label);
        }
        Ok(())
    }

    fn layout(&self, id: MidId) -> &Layout {
        &self.mid.nodes[id].layout
    }

    fn map(&self, id: MidId) -> Result<ShardMap, LowerError> {
        self.layout(id)
            .shard_map()
            .map_err(|e| self.fail(2, e.to_string()))
    }

    fn shard_of(&self, id: MidId, tile: u32) -> Result<BufferId, LowerError> {
        self.shard[id.index()]
            .get(&tile)
            .copied()
            .ok_or_else(|| self.fail(3, format!("%{} has no shard on tile {tile}", id.index())))
    }

    /// A fresh buffer for this node's shard on every tile of its layout.
    fn fresh_shards(
        &mut self,
        category: impl Fn(&str) -> BufferCategory,
    ) -> Result<(), LowerError> {
        let id = self.node;
        let bytes = self.map(id)?.buffer_bytes();
        let tiles: Vec<u32> = self.layout(id).dist.all_tiles().collect();
        let label = self.label().to_string();
        for t in tiles {
            let b = self.new_buffer(t, &label, bytes, category(&label), None);
            self.shard[id.index()].insert(t, b);
        }
        Ok(())
    }

    /// Whether this node may write its result over operand `x`'s buffers.
    fn in_place(&self, x: MidId) -> bool {
        self.readers[x.index()].len() == 1
            && self.layout(x).dist == self.layout(self.node).dist
            && self.shard[x.index()]
                .iter()
                .all(|(&t, &b)| !self.shared.contains(&(t, b)))
    }

    fn lower_node(&mut self) -> Result<(), LowerError> {
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
                let pieces = host::input_pieces(&layout, view).map_err(|e| self.fail(20, e))?;
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
                let data = self.store.get(tensor).ok_or_else(|| {
                    self.fail(21, format!("weight `{tensor}` is not in the store"))
                })?;
                let layout = node.layout.clone();
                let blocks = host::weight_shards(tensor, data, view, &layout)
                    .map_err(|e| self.fail(22, e.to_string()))?;
                let bytes = self.map(id)?.buffer_bytes();
                for (block, contents) in blocks.into_iter().enumerate() {
                    for &t in layout.dist.tiles_of(block) {
                        let b = self.new_buffer(
                            t,
                            tensor,
                            bytes,
                            BufferCategory::Weights(tensor.clone()),
                            Some(contents.clone()),
                        );
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
                    .ok_or_else(|| self.fail(43, "no planned movement"))?;
                self.lower_movement(x, &movement, dm.buffer_bytes(), dm.element_bytes())?;
            }
            MidOp::MatMul { a, b, precision } => {
                let kind = ComputeKind::MatMul {
                    fp8: *precision == crate::mid::AmpPrecision::Fp8,
                };
                self.compute(kind, &[*a, *b], None)?;
            }
            MidOp::BiasAdd { x, bias } => {
                let reuse = self.in_place(*x).then_some(*x);
                self.compute(ComputeKind::BiasAdd, &[*x, *bias], reuse)?;
            }
            MidOp::Add { a, b } => {
                let (a, b) = (*a, *b);
                let reuse = if self.in_place(a) {
                    Some(a)
                } else if self.in_place(b) {
                    Some(b)
                } else {
                    None
                };
                self.compute(ComputeKind::Add, &[a, b], reuse)?;
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
                self.compute(ComputeKind::LayerNorm { eps: *eps }, &[x, g, b], None)?;
            }
            MidOp::Output { x, tensor, view } => {
                let x = *x;
                let layout = self.layout(x).clone();
                let pieces = host::output_pieces(&layout, view).map_err(|e| self.fail(23, e))?;
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
    fn compute(
        &mut self,
        kind: ComputeKind,
        operands: &[MidId],
        reuse: Option<MidId>,
    ) -> Result<(), LowerError> {
        let id = self.node;
        let out_layout = self.layout(id).clone();
        let layouts: Vec<&Layout> = operands.iter().map(|&o| self.layout(o)).collect();
        let (params, calls) =
            compute_calls(&kind, &out_layout, &layouts).map_err(|e| self.fail(30, e))?;
        let step = operands
            .iter()
            .map(|o| self.ready[o.index()])
            .max()
            .unwrap_or(0);
        match reuse {
            Some(x) => {
                let shards = self.shard[x.index()].clone();
                self.shard[id.index()] = shards;
            }
            None => self.fresh_shards(|name| BufferCategory::Tensor(name.to_string()))?,
        }
        // Byte strides of one leading-dimension slice (matmuls loop over them).
        let slice = |m: &ShardMap| m.bytes() / calls.max(1);
        let mut strides: Vec<u32> = Vec::with_capacity(operands.len() + 1);
        for &o in operands {
            strides.push(slice(&self.map(o)?));
        }
        strides.push(slice(&self.map(id)?));
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
                    .map(|(&b, &s)| (b, if calls > 1 { k * s } else { 0 }))
                    .collect();
                self.call(compute_vstep(step), t, params.clone(), &data)?;
            }
        }
        self.ready[id.index()] = step;
        Ok(())
    }

    /// A redistribution of `x` into this node, as planned by `movement`.
    fn lower_movement(
        &mut self,
        x: MidId,
        movement: &Movement,
        dest_bytes: u32,
        element: u32,
    ) -> Result<(), LowerError> {
        let id = self.node;
        let label = self.label().to_string();
        let exchange = movement.has_exchange();
        let after = self.late[id.index()];
        let step = if exchange { after - 1 } else { after };
        if std::env::var_os("TESSERA_TIMING").is_some() {
            let deliveries: usize = movement.moves.iter().map(|m| m.deliveries.len()).sum();
            let runs: usize = movement
                .after
                .iter()
                .chain(&movement.before)
                .map(|c| c.runs.len())
                .sum();
            eprintln!(
                "  {label}: {} moves, {deliveries} deliveries, {} copies with {runs} runs, {} aliases",
                movement.moves.len(),
                movement.before.len() + movement.after.len(),
                movement.aliases.len()
            );
        }
        // Destination buffers (or the source's, where the bytes stay put).
        let dest_tiles: Vec<u32> = self.layout(id).dist.all_tiles().collect();
        for t in dest_tiles {
            let b = if movement.aliases.contains(&t) {
                let b = self.shard_of(x, t)?;
                self.shared.insert((t, b));
                b
            } else {
                self.new_buffer(
                    t,
                    &label,
                    dest_bytes,
                    BufferCategory::Tensor(label.clone()),
                    None,
                )
            };
            self.shard[id.index()].insert(t, b);
        }
        // Tiles copying both from their own source block and from staging get room behind the
        // staged covers for the source block's bytes (whole words), so one table reads both.
        let mut both: HashMap<u32, (u32, u32, u32)> = HashMap::new();
        {
            let mut from: BTreeMap<u32, (bool, bool, u32, u32)> = BTreeMap::new();
            for c in &movement.after {
                let e = from.entry(c.tile).or_insert((false, false, u32::MAX, 0));
                match c.from {
                    Buf::Source => {
                        e.0 = true;
                        for r in &c.runs {
                            if let Some(s) = r.src {
                                e.2 = e.2.min(s / 4 * 4);
                                e.3 = e.3.max((s + r.bytes).div_ceil(4) * 4);
                            }
                        }
                    }
                    Buf::Staging => e.1 = true,
                    Buf::Dest | Buf::Send => {}
                }
            }
            for (t, (local, staged, lo, hi)) in from {
                if local && staged && lo < hi {
                    let base = movement
                        .staging_bytes
                        .get(&t)
                        .copied()
                        .unwrap_or(0)
                        .div_ceil(8)
                        * 8;
                    both.insert(t, (base, lo, hi));
                }
            }
        }
        let mut staging: HashMap<u32, BufferId> = HashMap::new();
        for (&t, &bytes) in &movement.staging_bytes {
            let bytes = match both.get(&t) {
                Some(&(base, lo, hi)) => base + (hi - lo),
                None => bytes,
            };
            let b = self.new_buffer(
                t,
                &format!("{label}.staging"),
                bytes,
                BufferCategory::Exchange(label.clone()),
                None,
            );
            staging.insert(t, b);
        }
        let mut send: HashMap<u32, BufferId> = HashMap::new();
        for (&t, &bytes) in &movement.send_bytes {
            let b = self.new_buffer(
                t,
                &format!("{label}.send"),
                bytes,
                BufferCategory::Exchange(label.clone()),
                None,
            );
            send.insert(t, b);
        }
        let buffer = |me: &Self, tile: u32, buf: Buf| -> Result<BufferId, LowerError> {
            match buf {
                Buf::Source => me.shard_of(x, tile),
                Buf::Dest => me.shard_of(id, tile),
                Buf::Staging => staging
                    .get(&tile)
                    .copied()
                    .ok_or_else(|| me.fail(40, format!("no staging buffer on tile {tile}"))),
                Buf::Send => send
                    .get(&tile)
                    .copied()
                    .ok_or_else(|| me.fail(40, format!("no send buffer on tile {tile}"))),
            }
        };
        for copy in &movement.before {
            let (from, to) = (
                buffer(self, copy.tile, copy.from)?,
                buffer(self, copy.tile, copy.to)?,
            );
            for params in copies::copy_params(&copy.runs, element).map_err(|e| self.fail(41, e))? {
                self.call(
                    compute_vstep(step),
                    copy.tile,
                    params,
                    &[(from, 0), (to, 0)],
                )?;
            }
        }
        if exchange {
            let v = exchange_vstep(step);
            let mut list = Vec::with_capacity(movement.moves.len());
            for m in &movement.moves {
                let source = buffer(self, m.sender, m.from)?;
                self.touch(m.sender, source, v);
                let mut deliveries = Vec::with_capacity(m.deliveries.len());
                for &(tile, buf, offset) in &m.deliveries {
                    let b = buffer(self, tile, buf)?;
                    self.touch(tile, b, v);
                    deliveries.push((tile, b, offset));
                }
                list.push(SymbolicTransfer {
                    sender: m.sender,
                    source: (source, m.offset),
                    words: m.words,
                    deliveries,
                    label: format!("{label} from tile {}", m.sender),
                });
            }
            self.transfers.entry(step).or_default().extend(list);
            let ops = self.step_ops.entry(v).or_default();
            if ops.last() != Some(&label) {
                ops.push(label.clone());
            }
        }
        // Destination-side copies: one source buffer per tile. When a tile copies both from
        // its own source block and from staging, the source block's bytes are first copied
        // (whole words) behind the staged covers so one table reads everything.
        let mut by_tile: BTreeMap<u32, Vec<&crate::redist::LocalCopy>> = BTreeMap::new();
        for c in &movement.after {
            by_tile.entry(c.tile).or_default().push(c);
        }
        for (tile, list) in by_tile {
            let dest = buffer(self, tile, Buf::Dest)?;
            let sources: Vec<Buf> = list
                .iter()
                .map(|c| c.from)
                .filter(|b| *b != Buf::Dest)
                .collect();
            if sources.len() <= 1 {
                let from = match sources.first() {
                    Some(&b) => buffer(self, tile, b)?,
                    None => dest,
                };
                let runs: Vec<crate::redist::Run> = {
                    let mut all: Vec<crate::redist::Run> =
                        list.iter().flat_map(|c| c.runs.iter().copied()).collect();
                    all.sort_by_key(|r| r.dst);
                    all
                };
                for params in copies::copy_params(&runs, element).map_err(|e| self.fail(41, e))? {
                    self.call(compute_vstep(after), tile, params, &[(from, 0), (dest, 0)])?;
                }
                continue;
            }
            // Source and staging: the source block's bytes go behind the staged covers first.
            let &(base, lo, hi) = both.get(&tile).ok_or_else(|| {
                self.fail(
                    42,
                    format!("tile {tile} copies from two buffers without room"),
                )
            })?;
            let bigger = buffer(self, tile, Buf::Staging)?;
            let src = self.shard_of(x, tile)?;
            let pre = vec![crate::redist::Run {
                src: Some(lo),
                dst: base,
                bytes: hi - lo,
            }];
            for params in copies::copy_params(&pre, 4).map_err(|e| self.fail(41, e))? {
                self.call(compute_vstep(after), tile, params, &[(src, 0), (bigger, 0)])?;
            }
            let mut runs: Vec<crate::redist::Run> = Vec::new();
            for c in &list {
                for r in &c.runs {
                    runs.push(match c.from {
                        Buf::Source => crate::redist::Run {
                            src: r.src.map(|s| base + (s - lo)),
                            ..*r
                        },
                        Buf::Staging | Buf::Dest | Buf::Send => *r,
                    });
                }
            }
            runs.sort_by_key(|r| r.dst);
            for params in copies::copy_params(&runs, element).map_err(|e| self.fail(41, e))? {
                self.call(
                    compute_vstep(after),
                    tile,
                    params,
                    &[(bigger, 0), (dest, 0)],
                )?;
            }
        }
        self.ready[id.index()] = after;
        Ok(())
    }

    fn finish(mut self) -> Lowered {
        // The virtual steps in use, in order.
        let mut used: Vec<usize> = self.calls.iter().map(|c| c.0).collect();
        used.extend(
            self.transfers
                .iter()
                .filter(|(_, t)| !t.is_empty())
                .map(|(&s, _)| exchange_vstep(s)),
        );
        used.sort_unstable();
        used.dedup();
        if used.is_empty() {
            used.push(0);
        }
        let index: HashMap<usize, usize> = used.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut step_ops = Vec::with_capacity(used.len());
        for &v in &used {
            let ops = self.step_ops.remove(&v).unwrap_or_default();
            let label = ops.join(", ");
            if v % 2 == 0 {
                self.program.compute_step(&label);
            } else {
                let transfers = self.transfers.remove(&(v / 2)).unwrap_or_default();
                self.program
                    .exchange_step(&format!("exchange: {label}"), transfers);
            }
            step_ops.push(ops);
        }
        for (v, tile, call) in std::mem::take(&mut self.calls) {
            let step = index[&v];
            self.program.tiles[tile as usize].calls[step].push(call);
        }
        let last = used.len() - 1;
        // Map virtual uses to real steps: the first used step at or after, the last at or before.
        let first_at = |v: usize| used.partition_point(|&u| u < v).min(last);
        let last_at = |v: usize| used.partition_point(|&u| u <= v).saturating_sub(1);
        for (tile, uses) in self.program.tiles.iter_mut().zip(&self.uses) {
            for (buffer, &(first, end)) in tile.buffers.iter_mut().zip(uses) {
                let (mut a, b) = if first == NO_STEP {
                    (0, 0)
                } else {
                    (
                        first_at(first),
                        if end >= usize::MAX - 1 {
                            last
                        } else {
                            last_at(end)
                        },
                    )
                };
                if buffer.contents.is_some() {
                    a = 0;
                }
                buffer.live = (a.min(b), b.max(a));
            }
        }
        for input in &self.program.inputs {
            for piece in &input.pieces {
                let buffer =
                    &mut self.program.tiles[piece.tile as usize].buffers[piece.buffer.0 as usize];
                buffer.live.0 = 0;
            }
        }
        Lowered {
            program: self.program,
            step_ops,
        }
    }
}

/// Lowers a verified distributed-level program for a machine of `tiles` tiles.
pub fn lower(mid: &MidProgram, store: &WeightStore, tiles: u32) -> Result<Lowered, LowerError> {
    use rayon::prelude::*;
    let movements: Vec<Option<Movement>> = mid
        .nodes
        .iter()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|(id, node)| {
            let MidOp::Redistribute { x, view } = &node.op else {
                return Ok(None);
            };
            let fail = |reason: String| LowerError {
                code: 2,
                node: id.index(),
                op: node.op.name(),
                label: node.label.clone(),
                reason,
            };
            let sm = mid.nodes[*x]
                .layout
                .shard_map()
                .map_err(|e| fail(e.to_string()))?;
            let dm = node.layout.shard_map().map_err(|e| fail(e.to_string()))?;
            Ok(Some(plan_movement_with(
                &Side {
                    dist: &mid.nodes[*x].layout.dist,
                    map: &sm,
                },
                &Side {
                    dist: &node.layout.dist,
                    map: &dm,
                },
                view,
                mid.route_policy,
            )))
        })
        .collect::<Result<_, LowerError>>()?;
    let late = late_steps(mid, &movements);
    let mut lowering = Lower {
        mid,
        store,
        program: Program::new(tiles),
        shard: vec![HashMap::new(); mid.nodes.len()],
        ready: vec![0; mid.nodes.len()],
        readers: mid.readers(),
        uses: vec![Vec::new(); tiles as usize],
        shared: HashSet::new(),
        calls: Vec::new(),
        transfers: BTreeMap::new(),
        step_ops: BTreeMap::new(),
        node: MidId::from_index(0),
        movements,
        late,
    };
    for (id, node) in mid.nodes.iter() {
        lowering.node = id;
        for t in node.layout.dist.all_tiles() {
            if t >= tiles {
                return Err(
                    lowering.fail(1, format!("tile {t} is outside the {tiles}-tile machine"))
                );
            }
        }
        lowering.lower_node()?;
    }
    let lowered = lowering.finish();
    Ok(lowered)
}

/// The compute step every value is ready in. Compute ops run in program order: an op joins the
/// step of the op before it unless an operand reaches it over the exchange, in which case it
/// starts the next step and that exchange runs in the phase just before (as late as its readers
/// allow). So a large destination — a head's keys or values broadcast to every query tile — is
/// live only from the phase before its reader, and two of them do not pile up in one step.
fn late_steps(mid: &MidProgram, movements: &[Option<Movement>]) -> Vec<usize> {
    let n = mid.nodes.len();
    let mut asap = vec![0usize; n];
    let exchanged = |id: MidId| {
        movements[id.index()]
            .as_ref()
            .is_some_and(|m| m.has_exchange())
    };
    let mut current = 0usize;
    for (id, node) in mid.nodes.iter() {
        let operands = node.op.operands();
        let ready = operands.iter().map(|o| asap[o.index()]).max().unwrap_or(0);
        // A redistribution waits for its exchange; a compute op starts a new step after an
        // exchanged operand (`MidOp::is_compute` is the one exhaustive classification).
        asap[id.index()] = if let MidOp::Redistribute { .. } = node.op {
            ready + usize::from(exchanged(id))
        } else if node.op.is_compute() {
            let new_step = operands
                .iter()
                .any(|&o| matches!(mid.nodes[o].op, MidOp::Redistribute { .. }) && exchanged(o));
            let step = ready.max(if new_step { current + 1 } else { current });
            current = step;
            step
        } else {
            ready
        };
    }
    let readers = mid.readers();
    let mut late = asap.clone();
    for (id, node) in mid.nodes.iter() {
        if matches!(node.op, MidOp::Redistribute { .. }) {
            if let Some(first) = readers[id.index()]
                .iter()
                .filter(|r| !matches!(mid.nodes[**r].op, MidOp::Output { .. }))
                .map(|r| asap[r.index()])
                .min()
            {
                late[id.index()] = first.max(asap[id.index()]);
            }
        }
    }
    late
}

/// The exchange steps of a program, for reports: (step, phase, label).
pub fn exchange_steps(program: &Program) -> Vec<(usize, usize, String)> {
    program
        .steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            StepKind::Exchange { phase, label } => Some((i, *phase, label.clone())),
            StepKind::Compute { .. } => None,
        })
        .collect()
}
