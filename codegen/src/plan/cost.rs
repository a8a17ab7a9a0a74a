//! The planner's cost model: kernel cycles of a strategy from the kernels' own estimates (the
//! same typed calls the lowering makes), redistribution cycles from the planned movement
//! (exchange windows and words per tile, local copies), and the SRAM a strategy pins.

use crate::layout::{Distribution, Layout, View};
use crate::lower::calls::{compute_calls, ComputeKind};
use crate::lower::copies::{copy_params, table_bytes as table_bytes_of};
use crate::redist::after::{behind_covers, tile_copies};
use crate::redist::movement::{plan_blocks, RoutePolicy, WINDOW_CODE_BYTES};
use crate::redist::movement::{priced_copy_cycles, runs_word_aligned, transfer_cycles};
use crate::redist::reach::read_source_blocks;
use crate::redist::{Movement, Side};
use crate::target::Target;
use std::collections::{BTreeMap, BTreeSet, HashMap};
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveCost {
    /// Estimated cycles: copies before, the exchange phase, copies after, and a sync per step.
    pub cycles: u64,
    /// Whether it needs an exchange phase.
    pub exchange: bool,
    /// Largest staging plus send buffer on a tile.
    pub buffer_bytes: u32,
    /// Largest number of receive windows on a tile (exchange-program size grows with it).
    pub windows: u32,
    /// What the movement leaves on its destination tiles for the whole run.
    pub program: Arc<ProgramBytes>,
}

/// Program bytes a movement adds to its destination tiles for the whole run: its receive
/// windows' exchange code and its copies' tables (constants). Unlike buffers, these stay.
/// Exact for the tiles of the destination blocks the planner sampled; the middle sampled
/// block's mean stands for every other tile (tables differ a lot between blocks — a block
/// whose rows straddle source blocks unevenly loses its table's period — so neither the
/// busiest nor one mean stands for all: on So400m batch 1 the busiest blocks of `fc1.in` hold
/// 31.5 KB of tables and the others 0.9 KB).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramBytes {
    /// (tile, bytes), by tile.
    pub exact: Vec<(u32, u32)>,
    pub typical: u32,
}

impl ProgramBytes {
    /// The bytes charged to `tile`.
    pub fn on(&self, tile: u32) -> u32 {
        match self.exact.binary_search_by_key(&tile, |e| e.0) {
            Ok(i) => self.exact[i].1,
            Err(_) => self.typical,
        }
    }

    /// The most charged to one tile.
    pub fn most(&self) -> u32 {
        self.exact
            .iter()
            .map(|e| e.1)
            .max()
            .unwrap_or(0)
            .max(self.typical)
    }
}

/// The cost of `movement` on `target`.
pub fn movement_cost(target: &Target, movement: &Movement) -> MoveCost {
    movement_cost_scaled(target, movement, None, &SenderScale::NONE)
}

/// Per tile: the bytes of the copy tables `movement` puts there, as the lowering builds them
/// (each before-copy on its own, a tile's after-copies as one table, [`tile_copies`]). A copy
/// the lowering would refuse counts as more than any tile holds.
/// Per tile: the program bytes `movement` leaves there for the whole run, its copy tables and
/// the exchange code of its receive windows.
pub(crate) fn program_bytes(movement: &Movement, element_bytes: u32) -> HashMap<u32, u64> {
    let mut per = table_bytes(movement, element_bytes);
    for m in &movement.moves {
        for d in &m.deliveries {
            *per.entry(d.0).or_default() += WINDOW_CODE_BYTES;
        }
    }
    per
}

fn table_bytes(movement: &Movement, element_bytes: u32) -> HashMap<u32, u64> {
    let mut per: HashMap<u32, u64> = HashMap::new();
    // The replicas of a destination block copy the same runs: build each list's tables once.
    let mut known: HashMap<Vec<crate::redist::Run>, u64> = HashMap::new();
    let mut bytes = |runs: &[crate::redist::Run]| {
        if let Some(&b) = known.get(runs) {
            return b;
        }
        let b = copy_params(runs, element_bytes)
            .map_or(u32::MAX as u64, |calls| table_bytes_of(&calls));
        known.insert(runs.to_vec(), b);
        b
    };
    for c in &movement.before {
        *per.entry(c.tile).or_default() += bytes(&c.runs);
    }
    match tile_copies(movement, &behind_covers(movement)) {
        Ok(list) => {
            for c in list {
                *per.entry(c.tile).or_default() += bytes(&c.runs);
            }
        }
        Err(tile) => {
            per.insert(tile, u32::MAX as u64);
        }
    }
    per
}

/// How many destination blocks each sender of a sampled movement serves in the whole movement,
/// per block it serves in the sample. A sender's load in the sample times its factor stands for
/// its whole load.
///
/// Regular distributions spread readers evenly over the source tiles, so a sender serves about
/// `blocks × k / sources` destination blocks, where `k` is the sampled blocks' mean count of
/// senders and `sources` the tiles holding source data the movement reads: a value stored once and read by every
/// block has one sender serving all of them; rows on 368 tiles read by rows on 1472 have each
/// sender serving 4. Scaling every sender by `blocks / sampled` instead (as if every block read
/// every sampled sender) charged the second case 1,472 / 3 blocks per sender, a 100× overstated
/// exchange (1.5 M cycles for So400m's `probs` spread over the chip, which lowers to 17.5 k).
/// Never less than the blocks a sender is seen serving in the sample, nor more than all blocks.
#[derive(Clone, Debug)]
pub struct SenderScale {
    /// Destination blocks in the whole movement.
    pub blocks: usize,
    /// Tiles holding source data the movement reads (`tiles_holding` of [`read_source_blocks`]).
    pub sources: usize,
}

impl SenderScale {
    /// No scaling: the movement is planned for every destination block.
    pub const NONE: SenderScale = SenderScale {
        blocks: 0,
        sources: 0,
    };

    /// Per sender tile: the factor its sampled load is multiplied by.
    fn factors(&self, movement: &Movement, dest: Option<&Distribution>) -> HashMap<u32, f64> {
        let Some(dest) = dest else {
            return HashMap::new();
        };
        let mut served: HashMap<u32, BTreeSet<usize>> = HashMap::new();
        let mut senders: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
        for m in &movement.moves {
            for d in &m.deliveries {
                if let Some(b) = dest.block_on(d.0) {
                    served.entry(m.sender).or_default().insert(b);
                    senders.entry(b).or_default().insert(m.sender);
                }
            }
        }
        let sampled = senders.len().max(1) as f64;
        let mean_senders = senders.values().map(|s| s.len()).sum::<usize>() as f64 / sampled;
        let readers = self.blocks as f64 * mean_senders / self.sources.max(1) as f64;
        served
            .into_iter()
            .map(|(s, blocks)| {
                let seen = blocks.len() as f64;
                (
                    s,
                    readers.clamp(seen, (self.blocks as f64).max(seen)) / seen,
                )
            })
            .collect()
    }
}

/// The tiles holding the source blocks `read` ([`read_source_blocks`]): the senders a
/// movement's load spreads over (a slice such as V of a fused QKV reads a third of the
/// product's tiles).
fn tiles_holding(from: &Distribution, read: &[usize]) -> usize {
    read.iter()
        .map(|&b| from.tiles_of(b).len())
        .sum::<usize>()
        .max(1)
}

/// [`movement_cost`] of a movement planned for a sample of the destination blocks of `dest`:
/// receivers and copies are exact for the sampled blocks (the busiest of them stands for all),
/// each sender's load is scaled by [`SenderScale`] (with `None`, the movement is whole).
pub fn movement_cost_scaled(
    target: &Target,
    movement: &Movement,
    dest: Option<&Distribution>,
    scale: &SenderScale,
) -> MoveCost {
    let factors = scale.factors(movement, dest);
    let factor = |s: usize| factors.get(&(s as u32)).copied().unwrap_or(1.0);
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
                *p += priced_copy_cycles(c.runs.len(), bytes, runs_word_aligned(&c.runs))
                    + CALL_OVERHEAD_CYCLES;
            }
        }
        per.into_iter().max().unwrap_or(0)
    };
    let exchange = movement.has_exchange();
    let phase = if exchange {
        recv.iter()
            .zip(&sent)
            .enumerate()
            .map(|(t, (r, s))| (*r).max((*s as f64 * factor(t)) as u64))
            .max()
            .unwrap_or(0)
            + target.max_latency() as u64
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
        program: Arc::default(),
    }
}

/// Movement costs already computed, by (source layout, view, destination layout). Shared by
/// the planner's threads; costs do not depend on which thread computes them.
pub struct MoveCache {
    costs: Mutex<HashMap<(Layout, View, Layout), MoveCost>>,
    policy: RoutePolicy,
    /// Whether costs include [`ProgramBytes`].
    program: bool,
}

impl MoveCache {
    /// An empty cache of movements routed by `policy` (as the lowering will route them),
    /// with their [`ProgramBytes`] when `program` (an SRAM-saving search charges them; a plan
    /// that fits without them has room to spare, and they cost a quarter more planning time).
    pub fn new(policy: RoutePolicy, program: bool) -> MoveCache {
        MoveCache {
            costs: Mutex::default(),
            policy,
            program,
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
            return Ok(c.clone());
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
        let read = read_source_blocks(&from.dist, view);
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
            read.len(),
        );
        let element = to.dtype.size_bytes() as u32;
        let scale = SenderScale {
            blocks: count,
            sources: tiles_holding(&from.dist, &read),
        };
        let mut cost = movement_cost_scaled(target, &movement, Some(&to.dist), &scale);
        if !self.program {
            self.costs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key, cost.clone());
            return Ok(cost);
        }
        let per = program_bytes(&movement, element);
        let bytes = |t: &u32| per.get(t).copied().unwrap_or(0).min(u32::MAX as u64) as u32;
        let mut exact: Vec<(u32, u32)> = sample
            .iter()
            .flat_map(|&b| to.dist.tiles_of(b).iter().map(|t| (*t, bytes(t))))
            .collect();
        exact.sort_unstable();
        exact.dedup_by_key(|e| e.0);
        let middle = to.dist.tiles_of(sample[sample.len() / 2]);
        let typical = (middle.iter().map(|t| bytes(t) as u64).sum::<u64>()
            / middle.len().max(1) as u64) as u32;
        cost.program = Arc::new(ProgramBytes { exact, typical });
        self.costs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, cost.clone());
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

/// Adds `copies` × `layout`'s shard bytes to the per-tile totals (weights pinned for the whole
/// run; a loop body's weight has one copy per iteration).
pub fn pin(totals: &mut Arc<Vec<u32>>, layout: &Layout, copies: u32) {
    let bytes = shard_bytes(layout).saturating_mul(copies);
    let totals = Arc::make_mut(totals);
    for t in layout.dist.all_tiles() {
        if let Some(v) = totals.get_mut(t as usize) {
            *v = v.saturating_add(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::DType;
    use crate::layout::{even_bounds, Distribution, Order, TileGrid};
    use crate::redist::movement::plan_movement_with;

    #[test]
    fn sampled_program_bytes_are_exact_on_the_sampled_tiles() {
        // Rows of [40, 64] f16 on 5 tiles into 3 row blocks of panels, each on 2 tiles: the
        // row blocks straddle the source blocks unevenly, so their tables differ.
        let src = Distribution::on_grid(
            vec![40, 64],
            vec![even_bounds(40, 5, 1), vec![0, 64]],
            &TileGrid::new(vec![5], 0),
            &[Some(0), None],
        )
        .unwrap();
        let dst = Distribution::on_grid(
            vec![40, 64],
            vec![even_bounds(40, 3, 1), vec![0, 64]],
            &TileGrid::new(vec![3, 2], 8),
            &[Some(0), None],
        )
        .unwrap();
        let from = Layout {
            dist: src,
            order: Order::RowMajor { align: 16 },
            dtype: DType::F16,
        };
        let to = Layout {
            dist: dst,
            order: Order::Cwei,
            dtype: DType::F16,
        };
        let target = Target::test_small();
        let view = View::identity(&[40, 64]);
        let cache = MoveCache::new(RoutePolicy::DEFAULT, true);
        let sampled = cache.cost(&target, &from, &view, &to).unwrap();
        let (fm, tm) = (from.shard_map().unwrap(), to.shard_map().unwrap());
        let full = plan_movement_with(
            &Side {
                dist: &from.dist,
                map: &fm,
            },
            &Side {
                dist: &to.dist,
                map: &tm,
            },
            &view,
            RoutePolicy::DEFAULT,
        );
        let per = program_bytes(&full, 2);
        assert!(!sampled.program.exact.is_empty());
        for &(tile, bytes) in &sampled.program.exact {
            assert_eq!(
                bytes as u64,
                per.get(&tile).copied().unwrap_or(0),
                "tile {tile}"
            );
        }
        let middle = to.dist.tiles_of(1);
        let mean = middle.iter().map(|t| per[t]).sum::<u64>() / middle.len() as u64;
        assert_eq!(sampled.program.typical as u64, mean);
        assert!(sampled.program.most() > 0);
        // Every receive window is charged its exchange code, on top of the tables.
        let windows = full
            .moves
            .iter()
            .flat_map(|m| &m.deliveries)
            .filter(|d| d.0 == middle[0])
            .count() as u64;
        assert!(per[&middle[0]] >= windows * WINDOW_CODE_BYTES && windows > 0);
        // Without program bytes, the cache charges none.
        let plain = MoveCache::new(RoutePolicy::DEFAULT, false);
        let cost = plain.cost(&target, &from, &view, &to).unwrap();
        assert_eq!(cost.program.most(), 0);
        assert_eq!(cost.cycles, sampled.cycles);
    }

    /// The sampled cost of moving `from` into `to` and the cost of the whole movement.
    fn sampled_and_whole(from: &Layout, view: &View, to: &Layout) -> (MoveCost, MoveCost) {
        let target = Target::test_small();
        let sampled = MoveCache::new(RoutePolicy::DEFAULT, false)
            .cost(&target, from, view, to)
            .unwrap();
        let (fm, tm) = (from.shard_map().unwrap(), to.shard_map().unwrap());
        let whole = plan_movement_with(
            &Side {
                dist: &from.dist,
                map: &fm,
            },
            &Side {
                dist: &to.dist,
                map: &tm,
            },
            view,
            RoutePolicy::DEFAULT,
        );
        (sampled, movement_cost(&target, &whole))
    }

    /// f16 row-major blocks of `shape` split at `bounds`, block i on `tiles[i]`.
    fn f16_blocks(shape: [u32; 2], bounds: [Vec<u32>; 2], tiles: Vec<Vec<u32>>) -> Layout {
        Layout {
            dist: Distribution::new(shape.to_vec(), bounds.to_vec(), tiles).unwrap(),
            order: Order::RowMajor { align: 4 },
            dtype: DType::F16,
        }
    }

    /// One tile per block.
    fn each(tiles: impl Iterator<Item = u32>) -> Vec<Vec<u32>> {
        tiles.map(|t| vec![t]).collect()
    }

    #[test]
    fn a_sampled_exchange_scales_each_sender_by_the_blocks_it_serves() {
        let rows = |tiles: Vec<Vec<u32>>| {
            let n = tiles.len() as u32;
            f16_blocks([256, 64], [even_bounds(256, n, 1), vec![0, 64]], tiles)
        };
        let columns = f16_blocks(
            [256, 64],
            [vec![0, 256], even_bounds(64, 16, 1)],
            each(0..16),
        );
        let reversed = rows(each((0..16).rev()));
        let cases = [
            // One sender per block, each serving one block (the old scaling charged 16/3).
            (
                "rows to rows on other tiles",
                rows(each(0..16)),
                reversed.clone(),
            ),
            // Four senders, each serving two blocks (the old scaling charged 8/3).
            (
                "rows on 4 to rows on 8",
                rows(each(12..16)),
                rows(each(0..8)),
            ),
            // Every block reads every sender.
            ("columns to rows", columns, reversed.clone()),
            // One sender serves every block.
            ("one tile to rows", rows(vec![vec![0]]), rows(each(1..16))),
        ];
        let identity = View::identity(&[256, 64]);
        let mut cases: Vec<(&str, Layout, View, Layout)> = cases
            .into_iter()
            .map(|(name, from, to)| (name, from, identity.clone(), to))
            .collect();
        // A slice (V of a fused QKV) reads a third of its source's tiles: 4 senders of 12,
        // each serving two blocks.
        let fused = f16_blocks(
            [64, 48],
            [even_bounds(64, 4, 1), even_bounds(48, 3, 1)],
            each(0..12),
        );
        let slice_rows = f16_blocks(
            [64, 16],
            [even_bounds(64, 8, 1), vec![0, 16]],
            each((8..16).rev()),
        );
        let third = View::slice(&[64, 48], 1, 32, 48).unwrap();
        assert_eq!(
            tiles_holding(&fused.dist, &read_source_blocks(&fused.dist, &third)),
            4
        );
        cases.push(("a slice read by rows", fused, third, slice_rows));
        for (name, from, view, to) in cases {
            let (sampled, whole) = sampled_and_whole(&from, &view, &to);
            assert!(whole.exchange && sampled.exchange, "{name}");
            let (s, w) = (sampled.cycles as f64, whole.cycles as f64);
            assert!(
                (s - w).abs() <= 0.1 * w,
                "{name}: sampled {s} cycles, whole movement {w}"
            );
        }
    }
}
