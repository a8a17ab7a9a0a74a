//! List scheduling ([`Order::List`](super::Order::List)): the transfers with the same receivers queue in the
//! phase's order, and of the first few of every queue the one that can start earliest goes
//! next, within a budget of placements weighed per transfer.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use super::{Placement, Placer, MIN_WINDOW, SETUP_BEFORE_ARRIVAL};
use crate::exchange::{ExchangePhase, Transfer};

/// Transfers at the head of each receiver set's queue that list scheduling weighs for the next
/// start. Measured on the 33 exchange phases of one So400m/14 layer with the head at batch 1
/// (the phases' lengths summed, the shorter of the two orders kept per phase; 8 and 8
/// evaluations per transfer): the given order 176,412; window 1 165,349, 4 162,988, 8 162,502,
/// 16 162,567. The run: 528,277 → 513,834 cropped cycles.
pub const LIST_WINDOW: usize = 8;

/// Placements list scheduling may weigh per transfer of a phase with its whole window; then one
/// queue head at a time ([`LIST_NARROW_EVALUATIONS_PER_TRANSFER`]), then the rest in the
/// phase's order. Bounds the time a phase of many small transfers to few receivers takes (the
/// 33 phases above: 3.4 s in all at 8 and 8, the given order 0.6 s; 9.0 s at 48 for 160,922;
/// placing the rest in the phase's order right after the wide evaluations, 171,787).
pub const LIST_EVALUATIONS_PER_TRANSFER: usize = 8;

/// Queue heads list scheduling may weigh per transfer, one a queue, once the wide evaluations
/// are spent.
pub const LIST_NARROW_EVALUATIONS_PER_TRANSFER: usize = 8;

/// Most transfers of a phase that [`list_improved`] list-schedules; larger phases try only the
/// rounds. Measured on one So400m/14 layer with the head at batch 1: list scheduling was the
/// shortest schedule of no phase of more than 6,715 transfers (the 10 larger ones, 11,649 to
/// 135,507 transfers, kept the bipartite or greedy rounds or the given order), and took
/// 5.2 s of the emitter's 7.5 s of list improvement there (1.3 s on the largest phase alone).
pub const LIST_MAX_TRANSFERS: usize = 10_000;

/// [`Order::List`](super::Order::List): see there. Past [`LIST_EVALUATIONS_PER_TRANSFER`] placements weighed per
/// transfer, the transfers not yet placed go in the phase's order.
pub(super) fn list_schedule(state: &mut Placer, phase: &ExchangePhase, window: usize) {
    let words = |t: &Transfer| u64::from(t.words.max(MIN_WINDOW)) + u64::from(SETUP_BEFORE_ARRIVAL);
    let mut load = vec![0u64; state.tiles.len()];
    let mut queues: BTreeMap<Vec<u32>, VecDeque<usize>> = BTreeMap::new();
    for (index, transfer) in phase.transfers.iter().enumerate() {
        let mut receivers: Vec<u32> = transfer.deliveries.iter().map(|d| d.tile).collect();
        for &tile in &receivers {
            load[tile as usize] += words(transfer);
        }
        receivers.sort_unstable();
        queues.entry(receivers).or_default().push_back(index);
    }
    // Each queue under the start its head can take at the earliest, its busiest receiver's
    // load (more first) and its own index.
    let mut queues: Vec<VecDeque<usize>> = queues.into_values().collect();
    let mut heap: BinaryHeap<Reverse<(u32, Reverse<u64>, usize)>> = queues
        .iter()
        .enumerate()
        .map(|(q, queue)| {
            let busiest = phase.transfers[queue[0]]
                .deliveries
                .iter()
                .map(|d| load[d.tile as usize])
                .max()
                .unwrap_or(0);
            Reverse((0, Reverse(busiest), q))
        })
        .collect();
    let mut budget = LIST_EVALUATIONS_PER_TRANSFER.saturating_mul(phase.transfers.len());
    let mut narrow = LIST_NARROW_EVALUATIONS_PER_TRANSFER.saturating_mul(phase.transfers.len());
    while let Some(Reverse((key, busiest, q))) = heap.pop() {
        let width = if budget > 0 {
            window
        } else {
            narrow = narrow.saturating_sub(1);
            1
        };
        if narrow == 0 {
            // Out of evaluations: the rest in the phase's order.
            let mut rest: Vec<usize> = queues.iter_mut().flat_map(|q| q.drain(..)).collect();
            rest.sort_unstable();
            for index in rest {
                let placement = state.place(&phase.transfers[index]);
                state.commit(index, &phase.transfers[index], placement);
            }
            return;
        }
        let mut best: Option<(usize, Placement)> = None;
        for (position, &index) in queues[q].iter().take(width).enumerate() {
            let placement = state.place(&phase.transfers[index]);
            budget = budget.saturating_sub(1);
            if best.as_ref().is_none_or(|(_, b)| placement.start < b.start) {
                let reached = placement.start <= key;
                best = Some((position, placement));
                if reached {
                    break;
                }
            }
        }
        let Some((position, placement)) = best else {
            continue;
        };
        if placement.start > key {
            heap.push(Reverse((placement.start, busiest, q)));
            continue;
        }
        let Some(index) = queues[q].remove(position) else {
            continue;
        };
        state.commit(index, &phase.transfers[index], placement);
        if !queues[q].is_empty() {
            heap.push(Reverse((key, busiest, q)));
        }
    }
}
