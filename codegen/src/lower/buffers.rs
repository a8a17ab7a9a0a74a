//! Buffers: one per tile and value, their memory needs (region, element slot, alignment) merged
//! from every kernel operand bound to them, and the kernel calls that bind them.

use super::steps::NO_STEP;
use super::{copies, Lower, LowerError, LowerFailure};
use crate::mid::MidId;
use crate::tile::{BufferCategory, BufferDecl, BufferId, KernelCall, RegionRequirement};
use std::sync::Arc;
use tessera_kernels::table::{KernelParams, OperandSpec, RegionNeed};
use tessera_kernels::Role;

impl Lower<'_> {
    pub(super) fn new_buffer(
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
            alias_offset: 0,
            contents,
        });
        self.uses[tile as usize].push((NO_STEP, 0));
        id
    }

    pub(super) fn touch(&mut self, tile: u32, buffer: BufferId, vstep: usize) {
        let u = &mut self.uses[tile as usize][buffer.0 as usize];
        u.0 = u.0.min(vstep);
        u.1 = u.1.max(vstep);
    }

    /// What `buffer` would need to also serve `spec`: `Some((region, slot))`, or `None` when
    /// the two conflict.
    pub(super) fn merged_needs(
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
    pub(super) fn require(
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
                LowerFailure::BufferConflict,
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

    /// A copy of `bytes` bytes (whole words) of `from` into `to` at `vstep`.
    pub(super) fn copy_into(
        &mut self,
        vstep: usize,
        tile: u32,
        from: BufferId,
        to: BufferId,
        bytes: u32,
    ) -> Result<(), LowerError> {
        let run = [crate::redist::Run {
            src: Some(0),
            dst: 0,
            bytes,
        }];
        for params in
            copies::copy_params(&run, 4).map_err(|e| self.fail(LowerFailure::CopyTable, e))?
        {
            self.call(vstep, tile, params, &[(from, 0), (to, 0)])?;
        }
        Ok(())
    }

    /// A copy of `buffer` (whole words) in a fresh buffer, made at `vstep`: for an operand whose
    /// memory needs (region, element slot) conflict with the buffer's other uses.
    pub(super) fn copy_of(
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
        self.copy_into(vstep, tile, buffer, copy, bytes)?;
        Ok(copy)
    }

    /// Adds a call of `params` on `tile` at `vstep`: data operands (inputs and outputs, in the
    /// kernel's order) bound to `data`; scratch and table operands get buffers of their own.
    pub(super) fn call(
        &mut self,
        vstep: usize,
        tile: u32,
        params: KernelParams,
        data: &[(BufferId, u32)],
    ) -> Result<(), LowerError> {
        let params = Arc::new(params);
        let spec = params
            .spec()
            .map_err(|e| self.fail(LowerFailure::KernelCall, e.to_string()))?;
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
                        LowerFailure::OperandCount,
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
                LowerFailure::OperandCount,
                format!(
                    "`{}` has fewer operands than the op binds",
                    params.id().name()
                ),
            ));
        }
        let call = KernelCall::new(params, bindings, Arc::from(label.as_str()))
            .map_err(|e| self.fail(LowerFailure::KernelCall, e.to_string()))?;
        self.calls.push((vstep, tile, call));
        let ops = self.step_ops.entry(vstep).or_default();
        if ops.last().map(String::as_str) != Some(label.as_str()) {
            ops.push(label);
        }
        Ok(())
    }

    pub(super) fn shard_of(&self, id: MidId, tile: u32) -> Result<BufferId, LowerError> {
        self.shard[id.index()].get(&tile).copied().ok_or_else(|| {
            self.fail(
                LowerFailure::NoShard,
                format!("%{} has no shard on tile {tile}", id.index()),
            )
        })
    }

    /// A fresh buffer for this node's shard on every tile of its layout.
    pub(super) fn fresh_shards(
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
    /// Element slots for a two-operand elementwise op's one-bundle-per-group loop (both
    /// operands and a fresh result in three different memory elements), where the lowering
    /// places by element slots (`LowerOptions::paced_copies`): the first of the orders in
    /// [`SLOT_ORDERS`] that every tile's operand buffers take (their slot unset or the same),
    /// each operand in a buffer of its own. `None` where no order fits.
    pub(super) fn distinct_slots(
        &self,
        operands: &[MidId; 2],
    ) -> Result<Option<[u8; 3]>, LowerError> {
        if !self.options.paced_copies {
            return Ok(None);
        }
        let tiles: Vec<u32> = self.layout(self.node).dist.all_tiles().collect();
        let mut taken: Vec<[Option<u8>; 2]> = Vec::with_capacity(tiles.len());
        for &t in &tiles {
            let [x, y] = [
                self.shard_of(operands[0], t)?,
                self.shard_of(operands[1], t)?,
            ];
            if x == y {
                return Ok(None);
            }
            let slot = |b: BufferId| self.program.tiles[t as usize].buffers[b.0 as usize].slot;
            taken.push([slot(x), slot(y)]);
        }
        Ok(SLOT_ORDERS.into_iter().find(|order| {
            taken.iter().all(|slots| {
                slots
                    .iter()
                    .zip(order)
                    .all(|(have, want)| have.is_none_or(|s| s == *want))
            })
        }))
    }

    pub(super) fn in_place(&self, x: MidId) -> bool {
        // A loop body must not overwrite a value from before it that later iterations read
        // again (the carried value is rewritten by the carry at the end of every iteration).
        let invariant = self.mid.looped.as_ref().is_some_and(|l| {
            l.contains(self.node.index()) && x.index() < l.first && x != l.carried_in
        });
        !invariant
            && self.readers[x.index()].len() == 1
            && self.layout(x).dist == self.layout(self.node).dist
            && self.shard[x.index()]
                .iter()
                .all(|(&t, &b)| !self.shared.contains(&(t, b)))
    }
}

/// The element slots tried for (first operand, second operand, result) of a one-bundle-per-
/// group elementwise loop, in order: the result of a sum in slot 2 leaves its bias add the
/// order (2, 0, 1).
const SLOT_ORDERS: [[u8; 3]; 6] = [
    [0, 1, 2],
    [2, 0, 1],
    [1, 2, 0],
    [0, 2, 1],
    [1, 0, 2],
    [2, 1, 0],
];
