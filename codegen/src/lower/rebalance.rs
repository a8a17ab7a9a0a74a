//! Copies a tile makes from its own source block wait for no exchange: each may run in the step
//! its source is ready in or in the step its reader's other operands arrive in (where the
//! lowering puts it). [`Lower::rebalance_copies`] moves each to the earlier step where that
//! shortens the program: a step lasts as long as its busiest tile's calls (estimated), so a copy
//! on a tile that sets its step's length goes where its tile has room.
//!
//! Measured on one So400m/14 layer with the head at batch 1 (`tessera estimate`): moving every
//! such copy early 269,294 → 269,878 (some producers' steps grow more than their readers'
//! shrink), one copy at a time where it alone shortens the two steps 269,252, a step's tiles
//! brought down to a level together 268,671. What is left: tile 0 holds its own pieces of
//! several values in a row (every grid starts at tile 0), so its copies lengthen the producers'
//! steps as much as the readers'.

use super::steps::compute_vstep;
use super::Lower;
use crate::plan::cost::CALL_OVERHEAD_CYCLES;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

/// The calls of one copy from a tile's own source block (indices into the lowering's calls) and
/// the earlier virtual step they may run in.
pub(super) struct MovableCopy {
    pub calls: Range<usize>,
    pub tile: u32,
    pub early: usize,
}

/// Most levels [`Lower::rebalance_copies`] tries to bring a step down to.
const MAX_LEVELS: usize = 64;

impl Lower<'_> {
    /// Brings each step's busiest tiles down by moving their [`MovableCopy`]s to the steps their
    /// sources are ready in: for each step, the levels its tiles' estimated loads take are tried
    /// from the top, every tile above a level shedding copies (the largest first) until it is at
    /// or below it, and the level where the step's saving less the earlier steps' growth is
    /// largest is kept. Copies stay on their side of a loop's body, and go only to steps that
    /// run calls already.
    pub(super) fn rebalance_copies(&mut self, movable: &[MovableCopy], dropped: &HashSet<usize>) {
        if movable.is_empty() {
            return;
        }
        let cost = |c: &crate::tile::KernelCall| c.spec.estimate_cycles + CALL_OVERHEAD_CYCLES;
        let mut load: HashMap<(usize, u32), u64> = HashMap::new();
        let mut steps: BTreeMap<usize, u64> = BTreeMap::new();
        for (_, (v, t, c)) in self
            .calls
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
        {
            let l = load.entry((*v, *t)).or_default();
            *l += cost(c);
            let m = steps.entry(*v).or_default();
            *m = (*m).max(*l);
        }
        let body = self.body;
        let in_body =
            |v: usize| body.map(|(a, b)| (compute_vstep(a)..=compute_vstep(b)).contains(&v));
        // Per late step, per tile: the copies that may move (cost, index), largest first.
        let mut by_step: BTreeMap<usize, BTreeMap<u32, Vec<(u64, usize)>>> = BTreeMap::new();
        for (i, m) in movable.iter().enumerate() {
            let Some(&(late, _, _)) = self.calls.get(m.calls.start) else {
                continue;
            };
            if m.early >= late || !steps.contains_key(&m.early) || in_body(m.early) != in_body(late)
            {
                continue;
            }
            let c: u64 = self.calls[m.calls.clone()].iter().map(|c| cost(&c.2)).sum();
            by_step
                .entry(late)
                .or_default()
                .entry(m.tile)
                .or_default()
                .push((c, i));
        }
        let mut moves: Vec<usize> = Vec::new();
        for (late, tiles) in &mut by_step {
            for list in tiles.values_mut() {
                list.sort_by_key(|&(c, i)| (std::cmp::Reverse(c), i));
            }
            let top = steps.get(late).copied().unwrap_or(0);
            let mut levels: Vec<u64> = load
                .iter()
                .filter(|((v, _), _)| v == late)
                .map(|(_, &l)| l)
                .collect();
            levels.sort_unstable_by(|a, b| b.cmp(a));
            levels.dedup();
            let mut best: Option<(i64, Vec<usize>)> = None;
            for &level in levels.iter().skip(1).take(MAX_LEVELS) {
                // Every tile above the level sheds copies until it is at or below it.
                let mut chosen = Vec::new();
                let mut added: HashMap<(usize, u32), u64> = HashMap::new();
                let mut feasible = true;
                for (&(_, t), &l) in load.iter().filter(|((v, _), l)| v == late && **l > level) {
                    let mut left = l;
                    for &(c, i) in tiles.get(&t).map_or(&[][..], Vec::as_slice) {
                        if left <= level {
                            break;
                        }
                        left -= c;
                        chosen.push(i);
                        *added.entry((movable[i].early, t)).or_default() += c;
                    }
                    if left > level {
                        feasible = false;
                        break;
                    }
                }
                if !feasible {
                    break;
                }
                let mut growth: BTreeMap<usize, u64> = BTreeMap::new();
                for (&(e, t), &a) in &added {
                    let now = load.get(&(e, t)).copied().unwrap_or(0) + a;
                    let g = growth.entry(e).or_insert(steps[&e]);
                    *g = (*g).max(now);
                }
                let grown: i64 = growth
                    .iter()
                    .map(|(e, &g)| g as i64 - steps[e] as i64)
                    .sum();
                let saving = top as i64 - level as i64 - grown;
                if saving > 0 && best.as_ref().is_none_or(|(s, _)| saving > *s) {
                    chosen.sort_unstable();
                    best = Some((saving, chosen));
                }
            }
            let Some((_, chosen)) = best else {
                continue;
            };
            for &i in &chosen {
                let m = &movable[i];
                let c: u64 = self.calls[m.calls.clone()].iter().map(|c| cost(&c.2)).sum();
                *load.entry((m.early, m.tile)).or_default() += c;
                if let Some(l) = load.get_mut(&(*late, m.tile)) {
                    *l -= c;
                }
                let now = load[&(m.early, m.tile)];
                let e = steps.entry(m.early).or_default();
                *e = (*e).max(now);
            }
            let new_top = load
                .iter()
                .filter(|((v, _), _)| v == late)
                .map(|(_, &l)| l)
                .max()
                .unwrap_or(0);
            steps.insert(*late, new_top);
            moves.extend(chosen);
        }
        moves.sort_unstable();
        for i in moves {
            let m = &movable[i];
            for k in m.calls.clone() {
                self.calls[k].0 = m.early;
                let bindings: Vec<_> = self.calls[k].2.bindings.iter().map(|b| b.0).collect();
                for b in bindings {
                    self.touch(m.tile, b, m.early);
                }
            }
            let label = self.calls[m.calls.start].2.label.to_string();
            let ops = self.step_ops.entry(m.early).or_default();
            if !ops.contains(&label) {
                ops.push(label);
            }
        }
    }
}
