//! The planner's cost model: kernel cycles of a strategy from the kernels' own estimates (the
//! same typed calls the lowering makes), redistribution cycles from the planned movement
//! (exchange windows and words per tile, local copies), and the SRAM a strategy pins.

use crate::layout::{Layout, View};
use crate::lower::calls::{compute_calls, ComputeKind};
use crate::redist::movement::{copy_cycles, runs_word_aligned, transfer_cycles};
use crate::redist::movement::{plan_blocks, RoutePolicy};
use crate::redist::{Movement, Side};
use crate::target::Target;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Supervisor cycles around one kernel call (CSR writes, launch, local sync) beyond the
/// kernel's own estimate.
pub const CALL_OVERHEAD_CYCLES: u64 = 24;

/// Cycles of the kernel calls one tile makes for an op (every tile makes the same calls).
pub fn op_cycles(kind: &ComputeKind, out: &Layout, operands: &[&Layout]) -> Result<u64, String> {
    let (params, calls) = compute_calls(kind, out, operands)?;
    let one = params.estimate_cycles().map_err(|e| e.to_string())?;
    Ok((one + CALL_OVERHEAD_CYCLES) * calls as u64)
}

/// What a redistribution costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveCost {
    /// Estimated cycles: copies before, the exchange phase, copies after, and a sync per step.
    pub cycles: u64,
    /// Whether it needs an exchange phase.
    pub exchange: bool,
    /// Largest staging plus send buffer on a tile.
    pub buffer_bytes: u32,
    /// Largest number of receive windows on a tile (exchange-program size grows with it).
    pub windows: u32,
}

/// The cost of `movement` on `target`.
pub fn movement_cost(target: &Target, movement: &Movement) -> MoveCost {
    movement_cost_scaled(target, movement, 1.0)
}

/// [`movement_cost`] of a movement planned for a sample of the destination blocks: receivers and
/// copies are exact for the sampled blocks (the busiest of them stands for all), each sender's
/// load is scaled by `scale` (all blocks / sampled blocks).
pub fn movement_cost_scaled(target: &Target, movement: &Movement, scale: f64) -> MoveCost {
    let tiles = target.tiles as usize;
    let mut recv = vec![0u64; tiles];
    let mut sent = vec![0u64; tiles];
    let mut windows = vec![0u32; tiles];
    for m in &movement.moves {
        if let Some(s) = sent.get_mut(m.sender as usize) {
            *s += m.words.max(crate::exchange::schedule::MIN_WINDOW) as u64
                + m.words.div_ceil(64) as u64;
        }
        for d in &m.deliveries {
            if let Some(r) = recv.get_mut(d.0 as usize) {
                *r += transfer_cycles(m.words);
                windows[d.0 as usize] += 1;
            }
        }
    }
    let copies = |list: &[crate::redist::LocalCopy]| -> u64 {
        let mut per = vec![0u64; tiles];
        for c in list {
            let bytes: u64 = c.runs.iter().map(|r| r.bytes as u64).sum();
            if let Some(p) = per.get_mut(c.tile as usize) {
                *p += copy_cycles(c.runs.len(), bytes, runs_word_aligned(&c.runs))
                    + CALL_OVERHEAD_CYCLES;
            }
        }
        per.into_iter().max().unwrap_or(0)
    };
    let exchange = movement.has_exchange();
    let columns = target.tiles.div_ceil(target.tiles_per_column.max(1)) as u64;
    let phase = if exchange {
        recv.iter()
            .zip(&sent)
            .map(|(r, s)| (*r).max((*s as f64 * scale) as u64))
            .max()
            .unwrap_or(0)
            + target.exchange_base_latency as u64
            + target.exchange_cycles_per_column_hop as u64 * columns
            + 2 * target.global_sync_latency as u64
    } else {
        0
    };
    let buffers =
        |m: &std::collections::BTreeMap<u32, u32>, t: u32| m.get(&t).copied().unwrap_or(0);
    let buffer_bytes = (0..target.tiles)
        .map(|t| buffers(&movement.staging_bytes, t) + buffers(&movement.send_bytes, t))
        .max()
        .unwrap_or(0);
    MoveCost {
        cycles: copies(&movement.before) + phase + copies(&movement.after),
        exchange,
        buffer_bytes,
        windows: windows.into_iter().max().unwrap_or(0),
    }
}

/// Movement costs already computed, by (source layout, view, destination layout). Shared by
/// the planner's threads; costs do not depend on which thread computes them.
pub struct MoveCache {
    costs: Mutex<HashMap<(Layout, View, Layout), MoveCost>>,
    policy: RoutePolicy,
}

impl MoveCache {
    /// An empty cache of movements routed by `policy` (as the lowering will route them).
    pub fn new(policy: RoutePolicy) -> MoveCache {
        MoveCache {
            costs: Mutex::default(),
            policy,
        }
    }

    /// The cost of moving a value in `from` through `view` into `to`.
    pub fn cost(
        &self,
        target: &Target,
        from: &Layout,
        view: &View,
        to: &Layout,
    ) -> Result<MoveCost, String> {
        if view.is_identity() && from == to {
            return Ok(MoveCost::default());
        }
        let key = (from.clone(), view.clone(), to.clone());
        if let Some(c) = self
            .costs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(*c);
        }
        let (fm, tm) = (
            from.shard_map().map_err(|e| e.to_string())?,
            to.shard_map().map_err(|e| e.to_string())?,
        );
        // A few destination blocks stand for all (distributions are regular): the first, the
        // last and one between.
        let count = to.dist.block_count();
        let mut sample: Vec<usize> = vec![0, count / 2, count.saturating_sub(1)];
        sample.sort_unstable();
        sample.dedup();
        let movement = plan_blocks(
            &Side {
                dist: &from.dist,
                map: &fm,
            },
            &Side {
                dist: &to.dist,
                map: &tm,
            },
            view,
            &sample,
            self.policy,
        );
        let cost = movement_cost_scaled(target, &movement, count as f64 / sample.len() as f64);
        self.costs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, cost);
        Ok(cost)
    }
}

/// Bytes a layout's buffer takes on each of its tiles.
pub fn shard_bytes(layout: &Layout) -> u32 {
    layout
        .shard_map()
        .map(|m| m.buffer_bytes())
        .unwrap_or(u32::MAX)
}

/// Adds `layout`'s shard bytes to the per-tile totals (weights pinned for the whole run).
pub fn pin(totals: &mut Arc<Vec<u32>>, layout: &Layout) {
    let bytes = shard_bytes(layout);
    let totals = Arc::make_mut(totals);
    for t in layout.dist.all_tiles() {
        if let Some(v) = totals.get_mut(t as usize) {
            *v = v.saturating_add(bytes);
        }
    }
}
