//! The greedy scheduler: earliest feasible start per transfer, given three resources per tile —
//! its outgoing wires and supervisor (busy while sending and while issuing CSR writes) and its
//! incoming port (reserved from the pointer set-up to the end of a listening window).
//!
//! A long transfer may pause: its sender sends in the gaps between its own receive set-ups
//! (`put`s at exact cycles for the transfers it receives) instead of waiting for a gap as long
//! as the whole transfer, and its receivers listen for the longer span. Where every tile both
//! sends a row and receives a row block (a product's operand broadcast from rows spread over
//! the chip), waiting serialised the row blocks: each sender was busy receiving while its
//! receivers waited. The scheduler takes, per transfer, whichever of the paused and the
//! unbroken send ends first.

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

/// Schedules every transfer of `phase` in order; transfers of at least [`PAUSABLE_WORDS`] words
/// may pause (see the module's doc).
pub fn schedule(target: &Target, phase: &ExchangePhase) -> Result<PhaseSchedule, ExchangeError> {
    schedule_with(target, phase, true)
}

/// [`schedule`], with or without pausing.
pub fn schedule_with(
    target: &Target,
    phase: &ExchangePhase,
    pausing: bool,
) -> Result<PhaseSchedule, ExchangeError> {
    let mut tiles = vec![TileResources::default(); target.tiles as usize];
    let n = phase.transfers.len();
    let mut starts = vec![0; n];
    let mut all_runs = vec![Vec::new(); n];
    let mut length = 0;
    let mut scratch = Scratch::default();
    for (index, transfer) in phase.transfers.iter().enumerate() {
        validate(target, transfer)?;
        let whole = unbroken(target, &tiles, transfer, &mut scratch);
        let chosen = if pausing && transfer.words >= PAUSABLE_WORDS {
            let broken = paused(target, &tiles, transfer, &mut scratch);
            if broken.end() < whole.end() {
                broken
            } else {
                whole
            }
        } else {
            whole
        };
        for &(tile, resource, a, b) in &chosen.intervals {
            match resource {
                Resource::Supervisor => tiles[tile as usize].supervisor.insert(a, b),
                Resource::Port => tiles[tile as usize].port.insert(a, b),
            }
            length = length.max(b);
        }
        let span_end = chosen
            .runs
            .last()
            .map_or(chosen.start, |&(c, n)| c + n)
            .max(chosen.start + transfer.words.max(MIN_WINDOW));
        tiles[transfer.sender as usize]
            .sends
            .insert(chosen.start, span_end);
        starts[index] = chosen.start;
        all_runs[index] = chosen.runs;
    }
    Ok(PhaseSchedule {
        starts,
        runs: all_runs,
        length,
    })
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

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
