//! The exchange scheduler: earliest feasible start per transfer, given three resources per tile —
//! its outgoing wires and supervisor (busy while sending and while issuing CSR writes) and its
//! incoming port (reserved from the pointer set-up to the end of a listening window).
//!
//! Two orders of placement are tried and the shorter schedule kept ([`schedule`]): the phase's
//! own order, and list scheduling ([`Order::List`]), which places next whichever transfer can
//! start earliest. Placing in the given order lets an early transfer take a slot that leaves
//! a later multicast no time when all its receivers are free at once (the scores' queries and
//! keys, fan-out 9 and 10 over the same tiles, took 2.3× their busiest receiver's words).
//!
//! A long transfer may pause: its sender sends in the gaps between its own receive set-ups
//! (`put`s at exact cycles for the transfers it receives) instead of waiting for a gap as long
//! as the whole transfer, and its receivers listen for the longer span. Where every tile both
//! sends a row and receives a row block (a product's operand broadcast from rows spread over
//! the chip), waiting serialised the row blocks: each sender was busy receiving while its
//! receivers waited. The scheduler takes, per transfer, whichever of the paused and the
//! unbroken send ends first.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use super::{ExchangeError, ExchangePhase, Transfer};
use crate::target::Target;

/// Words per `send` instruction (`zimm6` holds count − 1).
pub const MAX_WORDS_PER_SEND: u32 = 64;
/// Shortest listening window: the `put` that starts listening stalls the supervisor 6 cycles,
/// so the `put` that stops it comes at least 7 cycles later.
pub const MIN_WINDOW: u32 = 7;
/// Cycles of receive set-up before the first arrival (`setzi`, `put SINIT`, `setzi`).
pub const SETUP_BEFORE_ARRIVAL: u32 = 8;
/// Fewest words of a transfer whose sender may pause: 8 (So400m+head batch 1 estimates 579,585
/// cycles against 582,404 with 64, for 0.3 s more scheduling).
pub const PAUSABLE_WORDS: u32 = 8;

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

/// The order in which a phase's transfers are placed, each at its earliest feasible start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The phase's own order.
    Given,
    /// List scheduling: the transfers with the same receivers queue in the phase's order; of
    /// the first `window` transfers of every queue, the one that can start earliest goes next
    /// (ties: the queue whose busiest receiver has the most to receive, then the earlier
    /// queue and the earlier transfer). A transfer's earliest start only grows as others are
    /// placed, so a start computed before is a lower bound: a queue waits in a heap under it
    /// and is weighed again when it comes up.
    List { window: usize },
}

/// When each transfer starts, and the phase's length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseSchedule {
    /// Send start cycle of each transfer, relative to the phase start (the sync release).
    pub starts: Vec<u32>,
    /// Per transfer, the runs of consecutive cycles its sender sends in, `(first cycle, words)`
    /// in order: one run, or several when the sender pauses for its own receive set-ups
    /// ([`PAUSABLE_WORDS`]).
    pub runs: Vec<Vec<(u32, u32)>>,
    /// Cycle by which every tile's exchange code has finished and every word has arrived.
    pub length: u32,
}

/// Sorted disjoint half-open intervals.
#[derive(Clone, Debug, Default)]
struct Timeline {
    busy: Vec<(u32, u32)>,
}

impl Timeline {
    fn insert(&mut self, start: u32, end: u32) {
        let i = self.busy.partition_point(|&(s, _)| s < start);
        // Merge with touching neighbours so the timeline stays short.
        if i > 0 && self.busy[i - 1].1 == start {
            self.busy[i - 1].1 = end;
            if i < self.busy.len() && self.busy[i].0 == end {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            return;
        }
        if i < self.busy.len() && self.busy[i].0 == end {
            self.busy[i].0 = start;
            return;
        }
        self.busy.insert(i, (start, end));
    }

    /// [`Timeline::earliest`] for a caller whose `from` never decreases between calls: `cursor`
    /// (`None` at first) keeps the first interval ending after the last `from`, so a search
    /// that visits the same timeline many times does not search it from the start each time.
    fn earliest_from(&self, cursor: &mut Option<usize>, from: u32, len: u32) -> u32 {
        let mut i = match *cursor {
            None => self.busy.partition_point(|&(_, e)| e <= from),
            Some(mut i) => {
                while self.busy.get(i).is_some_and(|&(_, e)| e <= from) {
                    i += 1;
                }
                i
            }
        };
        *cursor = Some(i);
        let mut t = from;
        while let Some(&(s, e)) = self.busy.get(i) {
            if t + len <= s {
                break;
            }
            t = t.max(e);
            i += 1;
        }
        t
    }

    /// The earliest `t ≥ from` with `[t, t + len)` free.
    #[cfg(test)]
    fn earliest(&self, from: u32, len: u32) -> u32 {
        let mut t = from;
        let mut i = self.busy.partition_point(|&(_, e)| e <= t);
        while let Some(&(s, e)) = self.busy.get(i) {
            if t + len <= s {
                break;
            }
            t = t.max(e);
            i += 1;
        }
        t
    }
}

#[derive(Default, Clone)]
struct TileResources {
    supervisor: Timeline,
    port: Timeline,
    /// The spans of the tile's own transfers (first word to last): a paused transfer's span
    /// holds no other transfer of its sender, whose receivers would take those words too.
    sends: Timeline,
}

/// The intervals one transfer occupies if it starts at `start` (relative offsets resolved),
/// appended to `needs`.
fn requirements_into(
    target: &Target,
    transfer: &Transfer,
    start: u32,
    needs: &mut Vec<(u32, Resource, u32, u32)>,
) {
    let window = transfer.words.max(MIN_WINDOW);
    needs.push((transfer.sender, Resource::Supervisor, start, start + window));
    receiver_requirements_into(target, transfer, start, window, needs);
}

/// The receivers' part of [`requirements_into`] for a send spanning `window` cycles.
fn receiver_requirements_into(
    target: &Target,
    transfer: &Transfer,
    start: u32,
    window: u32,
    needs: &mut Vec<(u32, Resource, u32, u32)>,
) {
    for delivery in &transfer.deliveries {
        let arrival = start + target.latency(transfer.sender, delivery.tile);
        let end = arrival + window;
        let csr = target.csr_write_stall;
        needs.push((
            delivery.tile,
            Resource::Supervisor,
            arrival - SETUP_BEFORE_ARRIVAL,
            arrival + csr,
        ));
        needs.push((delivery.tile, Resource::Supervisor, end - 1, end + csr));
        needs.push((
            delivery.tile,
            Resource::Port,
            arrival - SETUP_BEFORE_ARRIVAL,
            end + csr,
        ));
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Resource {
    Supervisor,
    Port,
}

fn validate(target: &Target, transfer: &Transfer) -> Result<(), ExchangeError> {
    let bad = |reason: String| ExchangeError::BadTransfer {
        label: transfer.label.clone(),
        reason,
    };
    if transfer.words == 0 {
        return Err(bad("no words".into()));
    }
    if !transfer.source.is_multiple_of(4) {
        return Err(bad(format!(
            "source {:#x} is not word aligned",
            transfer.source
        )));
    }
    if transfer.sender >= target.tiles {
        return Err(bad(format!(
            "sender tile {} does not exist",
            transfer.sender
        )));
    }
    if transfer.deliveries.is_empty() {
        return Err(bad("no receivers".into()));
    }
    for (i, delivery) in transfer.deliveries.iter().enumerate() {
        if delivery.tile >= target.tiles || delivery.tile == transfer.sender {
            return Err(bad(format!(
                "receiver tile {} is invalid (sender {})",
                delivery.tile, transfer.sender
            )));
        }
        if delivery.destination % 4 != 0 {
            return Err(bad(format!(
                "destination {:#x} is not word aligned",
                delivery.destination
            )));
        }
        if transfer.deliveries[..i]
            .iter()
            .any(|d| d.tile == delivery.tile)
        {
            return Err(bad(format!("tile {} receives twice", delivery.tile)));
        }
    }
    Ok(())
}

/// The earliest start `≥ from` at which every interval of `needs` (relative to a start of
/// [`SETUP_BEFORE_ARRIVAL`]) is free: each interval in turn moves the start to its own earliest
/// slot, until a whole round since the last move moved nothing. Every interval's "earliest slot
/// from s" is monotone in s and never below s, so this reaches the same least common start as
/// moving by the latest slot of all intervals per round, with far fewer lookups when a
/// broadcast meets fragmented timelines (So400m batch 2's emit spent minutes in the
/// round-by-round version). Each interval's search start only grows, so each keeps its place in
/// its timeline (`cursors`, one per need, `None` at first).
fn earliest_common(
    tiles: &[TileResources],
    needs: &[(u32, Resource, u32, u32)],
    cursors: &mut [Option<usize>],
    from: u32,
) -> u32 {
    let mut start = from;
    let (mut i, mut since_move) = (0usize, 0usize);
    while since_move < needs.len() {
        let (tile, resource, a, b) = needs[i];
        let timeline = match resource {
            Resource::Supervisor => &tiles[tile as usize].supervisor,
            Resource::Port => &tiles[tile as usize].port,
        };
        let offset = a - SETUP_BEFORE_ARRIVAL;
        let t = timeline.earliest_from(&mut cursors[i], start + offset, b - a) - offset;
        if t > start {
            start = t;
            since_move = 1;
        } else {
            since_move += 1;
        }
        i = (i + 1) % needs.len();
    }
    start
}

/// The runs in which a sender whose supervisor is busy as `busy` says sends `words` words
/// from `from` on: in every free cycle, pausing over the busy intervals.
fn paused_runs(busy: &Timeline, from: u32, words: u32) -> Vec<(u32, u32)> {
    let mut runs = Vec::new();
    let (mut t, mut left) = (from, words);
    let mut i = busy.busy.partition_point(|&(_, e)| e <= t);
    while left > 0 {
        while let Some(&(s, e)) = busy.busy.get(i) {
            if s > t {
                break;
            }
            t = t.max(e);
            i += 1;
        }
        let gap = busy.busy.get(i).map_or(u32::MAX, |&(s, _)| s) - t;
        let n = left.min(gap);
        runs.push((t, n));
        (t, left) = (t + n, left - n);
    }
    runs
}

/// Where one transfer goes: its start, its sender's runs and the intervals it occupies
/// (absolute cycles).
struct Placement {
    start: u32,
    runs: Vec<(u32, u32)>,
    intervals: Vec<(u32, Resource, u32, u32)>,
}

impl Placement {
    fn end(&self) -> u32 {
        self.intervals
            .iter()
            .map(|i| i.3)
            .max()
            .unwrap_or(self.start)
    }
}

/// The buffers a placement search reuses: the intervals a transfer needs and each one's place
/// in its timeline.
#[derive(Default)]
struct Scratch {
    needs: Vec<(u32, Resource, u32, u32)>,
    cursors: Vec<Option<usize>>,
}

/// The transfer sent unbroken at the earliest start every resource allows.
fn unbroken(
    target: &Target,
    tiles: &[TileResources],
    transfer: &Transfer,
    scratch: &mut Scratch,
) -> Placement {
    let Scratch { needs, cursors } = scratch;
    needs.clear();
    requirements_into(target, transfer, SETUP_BEFORE_ARRIVAL, needs);
    cursors.clear();
    cursors.resize(needs.len(), None);
    let start = earliest_common(tiles, needs, cursors, 0);
    Placement {
        start,
        runs: vec![(start, transfer.words)],
        intervals: absolute(needs, start),
    }
}

/// The transfer with its sender pausing over its busy cycles ([`paused_runs`]), at the earliest
/// start its receivers allow for the span that gives.
fn paused(
    target: &Target,
    tiles: &[TileResources],
    transfer: &Transfer,
    scratch: &mut Scratch,
) -> Placement {
    let Scratch { needs, cursors } = scratch;
    let sender = &tiles[transfer.sender as usize];
    let mut from = 0;
    loop {
        let runs = paused_runs(&sender.supervisor, from, transfer.words);
        let start = runs[0].0;
        let end = runs.last().map_or(start, |&(c, n)| c + n);
        let clear = sender.sends.earliest_from(&mut None, start, end - start);
        if clear > start {
            from = clear;
            continue;
        }
        needs.clear();
        let window = (end - start).max(MIN_WINDOW);
        receiver_requirements_into(target, transfer, SETUP_BEFORE_ARRIVAL, window, needs);
        cursors.clear();
        cursors.resize(needs.len(), None);
        let at = earliest_common(tiles, needs, cursors, start);
        if at == start {
            let mut intervals = absolute(needs, start);
            intervals.extend(
                runs.iter()
                    .map(|&(c, n)| (transfer.sender, Resource::Supervisor, c, c + n)),
            );
            return Placement {
                start,
                runs,
                intervals,
            };
        }
        from = at;
    }
}

/// `needs` (relative to a start of [`SETUP_BEFORE_ARRIVAL`]) at `start`.
fn absolute(needs: &[(u32, Resource, u32, u32)], start: u32) -> Vec<(u32, Resource, u32, u32)> {
    needs
        .iter()
        .map(|&(tile, resource, a, b)| {
            (
                tile,
                resource,
                a - SETUP_BEFORE_ARRIVAL + start,
                b - SETUP_BEFORE_ARRIVAL + start,
            )
        })
        .collect()
}

/// Schedules every transfer of `phase` in the given order and by list scheduling
/// ([`Order::List`] with [`LIST_WINDOW`]) and keeps the shorter (the given order on a tie);
/// transfers of at least [`PAUSABLE_WORDS`] words may pause (see the module's doc).
pub fn schedule(target: &Target, phase: &ExchangePhase) -> Result<PhaseSchedule, ExchangeError> {
    let given = schedule_with(target, phase, true)?;
    list_improved(target, phase, &given)
}

/// The phase list-scheduled ([`Order::List`] with [`LIST_WINDOW`], pausing) if that is shorter
/// than `given` (its schedule in the given order), else `given`.
pub fn list_improved(
    target: &Target,
    phase: &ExchangePhase,
    given: &PhaseSchedule,
) -> Result<PhaseSchedule, ExchangeError> {
    let listed = schedule_ordered(
        target,
        phase,
        true,
        Order::List {
            window: LIST_WINDOW,
        },
    )?;
    Ok(if listed.length < given.length {
        listed
    } else {
        given.clone()
    })
}

/// The phase placed in its given order, with or without pausing.
pub fn schedule_with(
    target: &Target,
    phase: &ExchangePhase,
    pausing: bool,
) -> Result<PhaseSchedule, ExchangeError> {
    schedule_ordered(target, phase, pausing, Order::Given)
}

/// The phase placed in `order`, with or without pausing.
pub fn schedule_ordered(
    target: &Target,
    phase: &ExchangePhase,
    pausing: bool,
    order: Order,
) -> Result<PhaseSchedule, ExchangeError> {
    for transfer in &phase.transfers {
        validate(target, transfer)?;
    }
    let mut state = Placer {
        target,
        pausing,
        tiles: vec![TileResources::default(); target.tiles as usize],
        scratch: Scratch::default(),
        schedule: PhaseSchedule {
            starts: vec![0; phase.transfers.len()],
            runs: vec![Vec::new(); phase.transfers.len()],
            length: 0,
        },
    };
    match order {
        Order::Given => {
            for (index, transfer) in phase.transfers.iter().enumerate() {
                let chosen = state.place(transfer);
                state.commit(index, transfer, chosen);
            }
        }
        Order::List { window } => list_schedule(&mut state, phase, window.max(1)),
    }
    Ok(state.schedule)
}

/// The tiles' timelines as transfers are placed, and the schedule so far.
struct Placer<'a> {
    target: &'a Target,
    pausing: bool,
    tiles: Vec<TileResources>,
    scratch: Scratch,
    schedule: PhaseSchedule,
}

impl Placer<'_> {
    /// Where `transfer` goes now: unbroken, or paused where that ends sooner.
    fn place(&mut self, transfer: &Transfer) -> Placement {
        let whole = unbroken(self.target, &self.tiles, transfer, &mut self.scratch);
        if self.pausing && transfer.words >= PAUSABLE_WORDS {
            let broken = paused(self.target, &self.tiles, transfer, &mut self.scratch);
            if broken.end() < whole.end() {
                return broken;
            }
        }
        whole
    }

    /// Takes `chosen`'s intervals on the tiles' timelines for transfer `index`.
    fn commit(&mut self, index: usize, transfer: &Transfer, chosen: Placement) {
        for &(tile, resource, a, b) in &chosen.intervals {
            let tile = &mut self.tiles[tile as usize];
            match resource {
                Resource::Supervisor => tile.supervisor.insert(a, b),
                Resource::Port => tile.port.insert(a, b),
            }
            self.schedule.length = self.schedule.length.max(b);
        }
        let span_end = chosen
            .runs
            .last()
            .map_or(chosen.start, |&(c, n)| c + n)
            .max(chosen.start + transfer.words.max(MIN_WINDOW));
        self.tiles[transfer.sender as usize]
            .sends
            .insert(chosen.start, span_end);
        self.schedule.starts[index] = chosen.start;
        self.schedule.runs[index] = chosen.runs;
    }
}

/// [`Order::List`]: see there. Past [`LIST_EVALUATIONS_PER_TRANSFER`] placements weighed per
/// transfer, the transfers not yet placed go in the phase's order.
fn list_schedule(state: &mut Placer, phase: &ExchangePhase, window: usize) {
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

/// A lower bound on a phase's length, for the planner's cost model: the busiest tile's words
/// sent or received, plus set-up and the longest latency.
pub fn estimate_cycles(target: &Target, phase: &ExchangePhase) -> u64 {
    let mut sent = vec![0u64; target.tiles as usize];
    let mut received = vec![0u64; target.tiles as usize];
    let mut windows = vec![0u64; target.tiles as usize];
    for transfer in &phase.transfers {
        sent[transfer.sender as usize] += transfer.words.max(MIN_WINDOW) as u64;
        for delivery in &transfer.deliveries {
            received[delivery.tile as usize] += transfer.words.max(MIN_WINDOW) as u64;
            windows[delivery.tile as usize] += 1;
        }
    }
    let overhead = (SETUP_BEFORE_ARRIVAL + 2 * target.csr_write_stall) as u64;
    let busiest = (0..target.tiles as usize)
        .map(|t| sent[t].max(received[t] + windows[t] * overhead))
        .max()
        .unwrap_or(0);
    let latency = target.exchange_base_latency as u64
        + target.exchange_cycles_per_column_hop as u64
            * (target.tiles / target.tiles_per_column.max(1)) as u64;
    if phase.transfers.is_empty() {
        0
    } else {
        busiest + latency + overhead
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check::check, emit::emit, Delivery, Transfer};
    use super::*;
    use proptest::prelude::*;

    /// The earliest common start computed round by round (every interval's earliest slot from
    /// the same start, the start moved to the latest of them), the scheduler's first form: a
    /// reference for the one-interval-at-a-time search.
    fn reference(target: &Target, phase: &ExchangePhase) -> PhaseSchedule {
        let mut tiles = vec![TileResources::default(); target.tiles as usize];
        let (mut starts, mut length, mut needs) = (Vec::new(), 0, Vec::new());
        for transfer in &phase.transfers {
            needs.clear();
            requirements_into(target, transfer, SETUP_BEFORE_ARRIVAL, &mut needs);
            let mut start = 0;
            loop {
                let mut latest = start;
                for &(tile, resource, from, to) in &needs {
                    let timeline = match resource {
                        Resource::Supervisor => &tiles[tile as usize].supervisor,
                        Resource::Port => &tiles[tile as usize].port,
                    };
                    let offset = from - SETUP_BEFORE_ARRIVAL;
                    latest = latest.max(timeline.earliest(start + offset, to - from) - offset);
                }
                if latest == start {
                    break;
                }
                start = latest;
            }
            for &(tile, resource, from, to) in &needs {
                let (a, b) = (
                    from - SETUP_BEFORE_ARRIVAL + start,
                    to - SETUP_BEFORE_ARRIVAL + start,
                );
                match resource {
                    Resource::Supervisor => tiles[tile as usize].supervisor.insert(a, b),
                    Resource::Port => tiles[tile as usize].port.insert(a, b),
                }
                length = length.max(b);
            }
            starts.push(start);
        }
        let runs = phase
            .transfers
            .iter()
            .zip(&starts)
            .map(|(t, &s)| vec![(s, t.words)])
            .collect();
        PhaseSchedule {
            starts,
            runs,
            length,
        }
    }

    /// Random phases on the 16-tile test chip: senders, word counts and broadcasts to distinct
    /// receivers, each delivery to its own destination range.
    fn phases() -> impl Strategy<Value = ExchangePhase> {
        let transfer = (
            0u32..16,
            1u32..200,
            proptest::collection::vec(0u32..16, 1..6),
        );
        proptest::collection::vec(transfer, 1..60).prop_map(|list| {
            let mut transfers = Vec::new();
            for (i, (sender, words, receivers)) in list.into_iter().enumerate() {
                let mut tiles: Vec<u32> = receivers.into_iter().filter(|&t| t != sender).collect();
                tiles.sort_unstable();
                tiles.dedup();
                if tiles.is_empty() {
                    continue;
                }
                let at = 0x90000 + 0x200 * i as u32;
                transfers.push(Transfer {
                    sender,
                    source: 0x80000,
                    words,
                    deliveries: tiles
                        .into_iter()
                        .map(|tile| Delivery {
                            tile,
                            destination: at,
                        })
                        .collect(),
                    label: format!("t{i}"),
                });
            }
            ExchangePhase { transfers }
        })
    }

    /// Every tile sends one long row to the next group of four tiles and receives its own
    /// group's four rows (a product's operand broadcast from rows spread over the chip): a
    /// sender busy receiving pauses for its set-ups instead of holding its receivers back, so
    /// the phase takes about one group's rows, not a chain of groups.
    #[test]
    fn senders_that_also_receive_pause_instead_of_serialising_the_groups() {
        let target = Target::test_small();
        let words = 200;
        let transfers = (0..16u32)
            .map(|r| {
                let group = (r / 4 + 1) % 4;
                Transfer {
                    sender: r,
                    source: 0x80000,
                    words,
                    deliveries: (0..4)
                        .map(|i| Delivery {
                            tile: group * 4 + i,
                            destination: 0x90000 + 0x400 * (r % 4),
                        })
                        .collect(),
                    label: format!("row {r}"),
                }
            })
            .collect();
        let phase = ExchangePhase { transfers };
        let whole = schedule_with(&target, &phase, false).unwrap();
        let paused = schedule(&target, &phase).unwrap();
        let code = emit(&target, &phase, &paused).unwrap();
        check(&target, &phase, &code).unwrap();
        assert!(paused.runs.iter().any(|r| r.len() > 1), "nothing paused");
        // 1,512 cycles against 1,748 unbroken: each pause costs the row its sender's set-up
        // (14 cycles per put), and the last group still waits for its senders' first rows.
        assert!(
            paused.length * 10 < whole.length * 9,
            "paused {} against {} unbroken",
            paused.length,
            whole.length
        );
    }

    /// Two families of multicasts over a 4 × 4 block of tiles, as the scores' queries and keys
    /// are: each tile sends a long row to its column and a short row to its row, so every
    /// tile receives four of each. Any column's rows may go together and so may any row's,
    /// but a column's and a row's rows share a tile. Placed in the phase's order (a column's
    /// row, then a row's, in turn), the multicasts wait for all their receivers at once; list
    /// scheduling takes whichever can start soonest.
    #[test]
    fn list_scheduling_packs_crossing_multicasts_tighter_than_the_given_order() {
        let target = Target::test_small();
        let mut transfers = Vec::new();
        for r in 0..16u32 {
            let (row, column) = (r / 4, r % 4);
            let others = |f: &dyn Fn(u32) -> u32| -> Vec<Delivery> {
                (0..4)
                    .map(f)
                    .filter(|&t| t != r)
                    .map(|tile| Delivery {
                        tile,
                        destination: 0x90000 + 0x800 * (r % 8),
                    })
                    .collect()
            };
            transfers.push(Transfer {
                sender: r,
                source: 0x80000,
                words: 120,
                deliveries: others(&|i| i * 4 + column),
                label: format!("column {column} from {r}"),
            });
            transfers.push(Transfer {
                sender: r,
                source: 0x80000,
                words: 40,
                deliveries: others(&|i| row * 4 + i),
                label: format!("row {row} from {r}"),
            });
        }
        let phase = ExchangePhase { transfers };
        let given = schedule_with(&target, &phase, true).unwrap();
        let listed = schedule_ordered(
            &target,
            &phase,
            true,
            Order::List {
                window: LIST_WINDOW,
            },
        )
        .unwrap();
        for s in [&given, &listed] {
            let code = emit(&target, &phase, s).unwrap();
            check(&target, &phase, &code).unwrap();
        }
        assert!(
            listed.length < given.length,
            "listed {} against {} in the given order",
            listed.length,
            given.length
        );
        assert_eq!(schedule(&target, &phase).unwrap(), listed);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// List scheduling at any window places every transfer once, and its code passes the
        /// exchange checker; [`schedule`] is never longer than the given order.
        #[test]
        fn list_schedules_check_and_the_kept_one_is_never_longer(
            phase in phases(),
            window in 1usize..10,
        ) {
            let target = Target::test_small();
            let listed = schedule_ordered(&target, &phase, true, Order::List { window }).unwrap();
            prop_assert_eq!(listed.starts.len(), phase.transfers.len());
            let whole = listed
                .runs
                .iter()
                .zip(&phase.transfers)
                .all(|(runs, t)| runs.iter().map(|r| r.1).sum::<u32>() == t.words);
            prop_assert!(whole, "a transfer's runs do not add up to its words");
            let code = emit(&target, &phase, &listed).unwrap();
            prop_assert!(check(&target, &phase, &code).is_ok(), "{:?}", check(&target, &phase, &code));
            let given = schedule_with(&target, &phase, true).unwrap();
            prop_assert!(schedule(&target, &phase).unwrap().length <= given.length);
        }

        /// The schedule is the round-by-round one, and its code passes the exchange checker.
        #[test]
        fn the_schedule_is_the_reference_one_and_checks(phase in phases()) {
            let target = Target::test_small();
            let got = schedule_with(&target, &phase, false).unwrap();
            prop_assert_eq!(&got, &reference(&target, &phase));
            let code = emit(&target, &phase, &got).unwrap();
            prop_assert!(check(&target, &phase, &code).is_ok());
            // With pausing, the code the schedule gives passes the checker too.
            let paused = schedule(&target, &phase).unwrap();
            let code = emit(&target, &phase, &paused).unwrap();
            prop_assert!(check(&target, &phase, &code).is_ok(), "{:?}", check(&target, &phase, &code));
        }
    }
}
