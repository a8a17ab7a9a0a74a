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
//!
//! # Modules
//!
//! - [`calls`], [`copies`], [`host`]: the kernel call of every compute op, the copy tables of
//!   local moves, the host pieces and weight shards;
//! - `nodes`: one mid op at a time (host inputs, weights and outputs; compute ops);
//! - `redistribute`: a redistribution's planned movement as copy calls and transfers;
//! - `buffers`: buffers, their memory needs, and kernel calls bound to them;
//! - `steps`: virtual steps, when each redistribution runs, and the real steps and
//!   liveness they become.

mod block_transposes;
mod buffers;
pub mod calls;
pub mod copies;
mod copy_estimates;
pub mod host;
mod in_consumer;
mod nodes;
mod periods;
mod rebalance;
mod redistribute;
mod steps;
mod zero_tails;

use crate::graph::weights::WeightStore;
use crate::layout::{Layout, ShardMap};
use crate::mid::{MidId, MidOp, MidProgram};
use crate::redist::{plan_movement_with, Movement, Side};
use crate::tile::{BufferId, KernelCall, Program, StepKind, SymbolicTransfer};
use std::collections::{BTreeMap, HashMap, HashSet};
use steps::late_steps;

/// What failed, one variant per kind of failure; its code (`E-LOWER-0nn`) follows from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LowerFailure {
    /// A tile of the layout is outside the machine.
    TileOutside,
    /// A value's layout has no shard map.
    ShardMap,
    /// A value has no shard on a tile that needs it.
    NoShard,
    /// A buffer cannot also meet a call's region, slot or alignment.
    BufferConflict,
    /// A kernel call's parameters are refused, or its call cannot be built.
    KernelCall,
    /// The op binds more or fewer buffers than the kernel takes.
    OperandCount,
    /// An input's pieces cannot be placed.
    InputPieces,
    /// A weight the program reads is not in the store.
    MissingWeight,
    /// A weight's shards cannot be cut.
    WeightShards,
    /// An output's pieces cannot be read back.
    OutputPieces,
    /// A loop's per-iteration weights do not stack.
    LayeredWeights,
    /// A compute op's kernel call cannot be derived from its layouts.
    ComputeCall,
    /// A redistribution's staging or send buffer is missing on a tile.
    ExchangeBuffer,
    /// A copy's runs make no copy kernel call.
    CopyTable,
    /// A tile copies from two buffers without room for one table.
    CopyRoom,
    /// A redistribution has no planned movement.
    NoMovement,
    /// A loop's work runs past the loop's last step.
    LoopOverrun,
}

impl LowerFailure {
    /// The code printed as `E-LOWER-0nn`.
    pub fn code(self) -> u32 {
        match self {
            LowerFailure::TileOutside => 1,
            LowerFailure::ShardMap => 2,
            LowerFailure::NoShard => 3,
            LowerFailure::BufferConflict => 10,
            LowerFailure::KernelCall => 12,
            LowerFailure::OperandCount => 13,
            LowerFailure::InputPieces => 20,
            LowerFailure::MissingWeight => 21,
            LowerFailure::WeightShards => 22,
            LowerFailure::OutputPieces => 23,
            LowerFailure::LayeredWeights => 24,
            LowerFailure::ComputeCall => 30,
            LowerFailure::ExchangeBuffer => 40,
            LowerFailure::CopyTable => 41,
            LowerFailure::CopyRoom => 42,
            LowerFailure::NoMovement => 43,
            LowerFailure::LoopOverrun => 50,
        }
    }
}

/// Why lowering failed: the kind of failure, the op and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-LOWER-{:03} %{node} {op} `{label}`: {reason}", failure.code())]
pub struct LowerError {
    pub failure: LowerFailure,
    pub node: usize,
    pub op: &'static str,
    pub label: String,
    pub reason: String,
    /// The layout error behind a failure to resolve a layout, kept whole (not flattened into
    /// `reason`).
    #[source]
    pub layout: Option<crate::layout::LayoutError>,
}

impl LowerError {
    /// The failure's code (`E-LOWER-0nn`).
    pub fn code(&self) -> u32 {
        self.failure.code()
    }
}

/// The lowered program and what each step holds (for reports and the profile).
/// Choices of the lowering that placement may refuse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LowerOptions {
    /// Copies from an exchange's staging buffer into a product's panels put the two in
    /// different memory elements (element slots), so `copy_runs` may load and store in one
    /// bundle: half the cycles of its long runs, for a placement with less freedom. The
    /// same holds on the sending side: a product's output (slot C) copied into a send
    /// buffer puts the send buffer in the paced source slot.
    pub paced_copies: bool,
    /// Exchanges that stage nothing on their senders join the earliest phase already in use
    /// once their source is ready (`steps::join_earlier_phases`): fewer phases and syncs, for
    /// destination buffers that live longer.
    pub early_exchanges: bool,
    /// A tile's copies from its own source block run in the step the source is ready in where
    /// that shortens the program (`rebalance`), and a whole block that a copy would move to one
    /// place in its destination is written there by its producer (`in_consumer`): both make
    /// destination buffers live from the producer's step (one So400m layer at batch 4, its
    /// weights gathered, then does not place).
    pub own_blocks_early: bool,
}

/// The element slot of a paced copy's source (no kernel uses it).
pub const PACED_SOURCE_SLOT: u8 = 3;

#[derive(Clone, Debug)]
pub struct Lowered {
    pub program: Program,
    /// Per program step: the labels of the ops with work in it, in op order.
    pub step_ops: Vec<Vec<String>>,
}

struct Lower<'a> {
    options: LowerOptions,
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
    /// Per node: the first compute step its work may use (after a loop's body for the nodes
    /// after it; see `steps::late_steps`).
    floors: Vec<usize>,
    /// A loop's body: its first and last compute step.
    body: Option<(usize, usize)>,
    /// Layered weight buffers (tile, buffer) → stride: one slice per loop iteration.
    layered: HashMap<(u32, BufferId), u32>,
    /// Copies from a tile's own source block that may run earlier (`rebalance`).
    movable: Vec<rebalance::MovableCopy>,
    /// Copies that may go, their source placed inside their destination (`in_consumer`).
    in_consumer: Vec<in_consumer::InConsumer>,
}

impl Lower<'_> {
    fn fail(&self, failure: LowerFailure, reason: impl Into<String>) -> LowerError {
        let node = &self.mid.nodes[self.node];
        LowerError {
            failure,
            node: self.node.index(),
            op: node.op.name(),
            label: node.label.clone(),
            reason: reason.into(),
            layout: None,
        }
    }

    /// [`Lower::fail`] for a layout that cannot be resolved: what was being resolved, and the
    /// layout's own error as the source.
    fn fail_layout(
        &self,
        failure: LowerFailure,
        what: &str,
        source: crate::layout::LayoutError,
    ) -> LowerError {
        LowerError {
            layout: Some(source),
            ..self.fail(failure, what)
        }
    }

    fn label(&self) -> &str {
        &self.mid.nodes[self.node].label
    }

    fn layout(&self, id: MidId) -> &Layout {
        &self.mid.nodes[id].layout
    }

    fn map(&self, id: MidId) -> Result<ShardMap, LowerError> {
        self.layout(id)
            .shard_map()
            .map_err(|e| self.fail_layout(LowerFailure::ShardMap, "the value's shard map", e))
    }
}

/// Lowers a verified distributed-level program for a machine of `tiles` tiles.
pub fn lower(mid: &MidProgram, store: &WeightStore, tiles: u32) -> Result<Lowered, LowerError> {
    lower_with(mid, store, tiles, LowerOptions::default())
}

/// [`lower`] with explicit choices.
pub fn lower_with(
    mid: &MidProgram,
    store: &WeightStore,
    tiles: u32,
    options: LowerOptions,
) -> Result<Lowered, LowerError> {
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
            let fail = |what: &str, source| LowerError {
                failure: LowerFailure::ShardMap,
                node: id.index(),
                op: node.op.name(),
                label: node.label.clone(),
                reason: what.to_string(),
                layout: Some(source),
            };
            let sm = mid.nodes[*x]
                .layout
                .shard_map()
                .map_err(|e| fail("the operand's shard map", e))?;
            let dm = node
                .layout
                .shard_map()
                .map_err(|e| fail("the result's shard map", e))?;
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
    let schedule = late_steps(mid, &movements, options.early_exchanges);
    let mut lowering = Lower {
        options,
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
        late: schedule.late,
        floors: schedule.floors,
        body: schedule.body,
        layered: HashMap::new(),
        movable: Vec::new(),
        in_consumer: Vec::new(),
    };
    for (id, node) in mid.nodes.iter() {
        lowering.node = id;
        for t in node.layout.dist.all_tiles() {
            if t >= tiles {
                return Err(lowering.fail(
                    LowerFailure::TileOutside,
                    format!("tile {t} is outside the {tiles}-tile machine"),
                ));
            }
        }
        lowering.lower_node()?;
        if mid.looped.as_ref().is_some_and(|l| l.carry == id) {
            lowering.carry()?;
        }
    }
    let candidates = std::mem::take(&mut lowering.in_consumer);
    let dropped = if lowering.options.own_blocks_early {
        lowering.place_in_consumers(&candidates)
    } else {
        HashSet::new()
    };
    let movable = std::mem::take(&mut lowering.movable);
    if lowering.options.own_blocks_early {
        lowering.rebalance_copies(&movable, &dropped);
    }
    let lowered = lowering.finish(&dropped);
    Ok(lowered)
}

impl Lower<'_> {
    /// At the end of a loop's body (its last compute step, after everything in it), every
    /// tile's carry shard becomes the carried value's: a copy where the two are different
    /// buffers.
    fn carry(&mut self) -> Result<(), LowerError> {
        let (Some(l), Some((_, last))) = (&self.mid.looped, self.body) else {
            return Ok(());
        };
        let (carry, carried_in) = (l.carry, l.carried_in);
        let vstep = steps::compute_vstep(last);
        let used = self
            .calls
            .iter()
            .map(|c| c.0)
            .chain(
                self.transfers
                    .iter()
                    .filter(|(_, t)| !t.is_empty())
                    .map(|(&s, _)| steps::exchange_vstep(s)),
            )
            .max()
            .unwrap_or(0);
        if used > vstep {
            return Err(self.fail(
                LowerFailure::LoopOverrun,
                format!("the loop's work reaches virtual step {used}, past its last ({vstep})"),
            ));
        }
        let bytes = self.map(carried_in)?.buffer_bytes();
        let tiles: Vec<u32> = self.layout(carried_in).dist.all_tiles().collect();
        for t in tiles {
            let from = self.shard_of(carry, t)?;
            let to = self.shard_of(carried_in, t)?;
            if from != to {
                self.copy_into(vstep, t, from, to, bytes)?;
            } else {
                self.touch(t, to, vstep);
            }
        }
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of failure has its own code, and the message leads with it.
    #[test]
    fn failures_print_their_own_codes() {
        let all = [
            LowerFailure::TileOutside,
            LowerFailure::ShardMap,
            LowerFailure::NoShard,
            LowerFailure::BufferConflict,
            LowerFailure::KernelCall,
            LowerFailure::OperandCount,
            LowerFailure::InputPieces,
            LowerFailure::MissingWeight,
            LowerFailure::WeightShards,
            LowerFailure::OutputPieces,
            LowerFailure::LayeredWeights,
            LowerFailure::ComputeCall,
            LowerFailure::ExchangeBuffer,
            LowerFailure::CopyTable,
            LowerFailure::CopyRoom,
            LowerFailure::NoMovement,
            LowerFailure::LoopOverrun,
        ];
        let codes: std::collections::BTreeSet<u32> = all.iter().map(|f| f.code()).collect();
        assert_eq!(codes.len(), all.len());
        let e = LowerError {
            failure: LowerFailure::NoMovement,
            node: 7,
            op: "redistribute",
            label: "fc1.in".into(),
            reason: "no planned movement".into(),
            layout: None,
        };
        assert_eq!(e.code(), 43);
        assert_eq!(
            e.to_string(),
            "E-LOWER-043 %7 redistribute `fc1.in`: no planned movement"
        );
        // A layout failure keeps the layout's error as its source, out of its own text.
        let e = LowerError {
            failure: LowerFailure::ShardMap,
            reason: "the value's shard map".into(),
            layout: Some(crate::layout::LayoutError::TooLarge { bytes: 1 << 40 }),
            ..e
        };
        assert_eq!(
            e.to_string(),
            "E-LOWER-002 %7 redistribute `fc1.in`: the value's shard map"
        );
        let source = std::error::Error::source(&e).map(|s| s.to_string());
        assert_eq!(
            source.as_deref(),
            Some("E-LAYOUT-006 a shard of 1099511627776 bytes is too large")
        );
    }
}
