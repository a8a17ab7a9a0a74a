//! The exchange scheduler: earliest feasible start per transfer, given three resources per tile —
//! its outgoing wires and supervisor (busy while sending and while issuing CSR writes) and its
//! incoming port (reserved from the pointer set-up to the end of a listening window).
//!
//! Orders of placement are tried and the shortest schedule kept ([`schedule`]): the phase's
//! own order, list scheduling ([`Order::List`]), which places next whichever transfer can
//! start earliest, and rounds of transfers that share no tile ([`Order::Rounds`]). Placing in the given order lets an early transfer take a slot that leaves
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

use super::{ExchangeError, ExchangePhase, Transfer};
use crate::target::Target;

/// Words per `send` instruction (`zimm6` holds count − 1).
pub const MAX_WORDS_PER_SEND: u32 = 64;
/// Shortest listening window: the `put` that starts listening stalls the supervisor 6 cycles,
/// so the `put` that stops it comes at least 7 cycles later.
pub const MIN_WINDOW: u32 = 7;
/// Cycles of receive set-up before the first arrival (`setzi`, `put SINIT`, `setzi`).
pub const SETUP_BEFORE_ARRIVAL: u32 = 8;
/// The start a transfer's intervals are first written relative to, before the search moves
/// them to its real start: late enough that every interval lies at a cycle ≥ 0 (a timed mux
/// selection leads its first word by up to 96 cycles on the ipu21 and may come before its
/// sender's first word by up to 77; `tessera_isa::fabric`).
pub(super) const ORIGIN: u32 = 256;

/// Fewest words of a transfer whose sender may pause: 8 (So400m+head batch 1 estimates 579,585
/// cycles against 582,404 with 64, for 0.3 s more scheduling).
pub const PAUSABLE_WORDS: u32 = 8;

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
    /// Rounds: the transfers coloured into rounds in which no tile sends or receives twice
    /// ([`rounds`]), then placed round by round (in a round, in the phase's order). Where many
    /// senders each reach many receivers (a product's parts to the combine tiles, partial sums
    /// to the tiles that add them), the rounds are matchings that keep every receiver's port
    /// busy, where placing by earliest start leaves receivers idle between crossing transfers.
    Rounds(Colouring),
}

/// How [`Order::Rounds`] colours the transfers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colouring {
    /// Every transfer, largest first, takes the first round its tiles are free in.
    Greedy,
    /// The transfers to one receiver as a bipartite edge colouring in as few rounds as the
    /// busiest tile has of them ([`unicast_rounds`]); the multicasts greedily after them.
    Bipartite,
    /// As [`Colouring::Greedy`], with every transfer that may go as paired items ([`pairable`])
    /// holding its sender's partner too, as sending and receiving in its round: the partners a
    /// round's paired sends hold are held together, where placing by earliest start spreads
    /// them over the phase and every multicast to a held partner waits.
    Paired,
}

/// How a receiver controls its incoming mux and write pointer, which decides whether receiving
/// takes its supervisor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveControls {
    /// The protocol Tessera's simulator and emitter implement [A]: the receiver's supervisor
    /// sets the pointer and `put`s `$INCOMING_MUX` at the exact cycles of the first arrival and
    /// of the end, so a tile cannot send while one of its own receive windows opens or closes.
    SupervisorPuts,
    /// The protocol of the hardware (`docs/reference/hardware-ipu-stack.md` §1.1–1.3, from
    /// osmarks/ipu-stack, run on a C600): the mux (XPIC) and the pointer (PIC) are two timed
    /// control streams, set by `delayxpic` / `delaypic` or carried by `sendpic` without
    /// stopping a send, so a tile sends and receives at once (full duplex). The emitter's
    /// [`crate::exchange::emit::emit_tile_timed`] writes it; a phase whose schedule puts a
    /// control where no instruction can carry it is scheduled with `SupervisorPuts` instead
    /// ([`schedule_for_emission`]).
    TimedStreams,
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
    /// The receive protocol the schedule was made for (and its code must use).
    pub controls: ReceiveControls,
    /// How each transfer's words travel (its `runs` count items where it is
    /// [`Width::Paired`]).
    pub widths: Vec<Width>,
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
    /// [`Resource::Control`].
    control: Timeline,
}

/// The intervals one transfer occupies if it starts at `start` (relative offsets resolved),
/// appended to `needs`.
fn requirements_into(
    target: &Target,
    controls: ReceiveControls,
    transfer: &Transfer,
    start: u32,
    needs: &mut Vec<(u32, Resource, u32, u32)>,
) {
    let window = transfer.words.max(MIN_WINDOW);
    needs.push((transfer.sender, Resource::Supervisor, start, start + window));
    match controls {
        ReceiveControls::SupervisorPuts => {}
        // The first word of a new outgoing stream carries no incoming control.
        ReceiveControls::TimedStreams => {
            needs.push((transfer.sender, Resource::Control, start, start + 1))
        }
    }
    receiver_requirements_into(target, controls, transfer, start, window, needs);
}

/// The receivers' part of [`requirements_into`] for a send spanning `window` cycles.
fn receiver_requirements_into(
    target: &Target,
    controls: ReceiveControls,
    transfer: &Transfer,
    start: u32,
    window: u32,
    needs: &mut Vec<(u32, Resource, u32, u32)>,
) {
    for delivery in &transfer.deliveries {
        let arrival = start + target.latency(transfer.sender, delivery.tile);
        let end = arrival + window;
        let csr = target.csr_write_stall;
        match controls {
            ReceiveControls::SupervisorPuts => {
                needs.push((
                    delivery.tile,
                    Resource::Supervisor,
                    arrival - SETUP_BEFORE_ARRIVAL,
                    arrival + csr,
                ));
                needs.push((delivery.tile, Resource::Supervisor, end - 1, end + csr));
                // The port from the pointer's `setzi` to the stalled `put` that stops listening.
                needs.push((
                    delivery.tile,
                    Resource::Port,
                    arrival - SETUP_BEFORE_ARRIVAL,
                    end + csr,
                ));
            }
            // The pointer, the mux on and the mux off, each in a cycle of its own that starts
            // no outgoing stream of the receiver (`emit::emit_tile_timed`). The port from the
            // pointer's event to the last word: the next receive's pointer moves no earlier
            // than this one's last word lands, and its mux selection, leading its words by the
            // same lead, comes after this one's is released (the controls' own cycles differ).
            // No supervisor instruction stalls, so receives follow each other a cycle apart
            // where `SupervisorPuts` spends 8 cycles of set-up and a 6-cycle stall on each.
            ReceiveControls::TimedStreams => {
                let lead = target.mux_lead(delivery.tile);
                let cycles = timed_control_cycles(arrival, window, lead);
                for at in cycles {
                    needs.push((delivery.tile, Resource::Control, at, at + 1));
                }
                needs.push((delivery.tile, Resource::Port, cycles[0].min(arrival), end));
            }
        }
    }
}

/// The cycles of one delivery's three timed receive controls, `[pointer, mux on, mux off]`, for
/// its first word arriving at `arrival`, a listening window of `window` (≥ [`MIN_WINDOW`])
/// cycles and the receiver's mux lead `lead` (`Target::mux_lead`): the mux events lead the
/// words they are for, so they come at `arrival − lead` and `arrival + window − lead`. Where
/// the mux leads (the ipu21), the pointer is set at the first word's cycle, as the SDK's rows
/// set it (XPIC + 52 + 2·row; docs/reference/hardware-ipu-stack.md §1.3), or a cycle or two
/// before where the mux's own end falls there (a window of `lead`); on a fabric whose mux
/// applies in its own cycle, 7 cycles before (or 6). The three always differ.
pub fn timed_control_cycles(arrival: u32, window: u32, lead: u32) -> [u32; 3] {
    let (on, off) = (arrival - lead, arrival + window - lead);
    let candidates = if lead > 0 {
        [arrival, arrival - 1, arrival - 2]
    } else {
        let early = arrival - (SETUP_BEFORE_ARRIVAL - 1);
        [early, early + 1, early + 2]
    };
    let pointer = candidates
        .into_iter()
        .find(|&c| c != on && c != off)
        .unwrap_or(candidates[0]);
    [pointer, on, off]
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Resource {
    Supervisor,
    Port,
    /// With timed receive streams: the cycles of the tile's incoming controls and the first
    /// cycles of its outgoing streams, which must all differ.
    Control,
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
/// [`ORIGIN`]) is free and at a cycle ≥ 0: each interval in turn moves the start to its own earliest
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
            Resource::Control => &tiles[tile as usize].control,
        };
        let offset = i64::from(a) - i64::from(ORIGIN);
        let at = u32::try_from((i64::from(start) + offset).max(0)).unwrap_or(u32::MAX);
        let slot = timeline.earliest_from(&mut cursors[i], at, b - a);
        let t = u32::try_from(i64::from(slot) - offset).unwrap_or(u32::MAX);
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
    width: Width,
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
    controls: ReceiveControls,
    tiles: &[TileResources],
    transfer: &Transfer,
    scratch: &mut Scratch,
) -> Placement {
    unbroken_with(tiles, scratch, Width::Words, transfer.words, |needs| {
        requirements_into(target, controls, transfer, ORIGIN, needs)
    })
}

/// A transfer of `units` words or items sent unbroken, needing what `fill` writes (relative to
/// [`ORIGIN`]), at the earliest start every resource allows.
fn unbroken_with(
    tiles: &[TileResources],
    scratch: &mut Scratch,
    width: Width,
    units: u32,
    fill: impl FnOnce(&mut Vec<(u32, Resource, u32, u32)>),
) -> Placement {
    let Scratch { needs, cursors } = scratch;
    needs.clear();
    fill(needs);
    cursors.clear();
    cursors.resize(needs.len(), None);
    let start = earliest_common(tiles, needs, cursors, 0);
    Placement {
        start,
        width,
        runs: vec![(start, units)],
        intervals: absolute(needs, start),
    }
}

/// The transfer with its sender pausing over its busy cycles ([`paused_runs`]), at the earliest
/// start its receivers allow for the span that gives.
fn paused(
    target: &Target,
    controls: ReceiveControls,
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
        receiver_requirements_into(target, controls, transfer, ORIGIN, window, needs);
        match controls {
            ReceiveControls::SupervisorPuts => {}
            ReceiveControls::TimedStreams => needs.extend(runs.iter().map(|&(c, _)| {
                let at = c - start + ORIGIN;
                (transfer.sender, Resource::Control, at, at + 1)
            })),
        }
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
                width: Width::Words,
                runs,
                intervals,
            };
        }
        from = at;
    }
}

/// `needs` (relative to a start of [`ORIGIN`]) at `start`.
fn absolute(needs: &[(u32, Resource, u32, u32)], start: u32) -> Vec<(u32, Resource, u32, u32)> {
    needs
        .iter()
        .map(|&(tile, resource, a, b)| (tile, resource, start + a - ORIGIN, start + b - ORIGIN))
        .collect()
}

/// Schedules every transfer of `phase` in the given order, by list scheduling
/// ([`Order::List`] with [`LIST_WINDOW`]) and in rounds ([`Order::Rounds`]) and keeps the
/// shortest (the given order on a tie, then the list);
/// transfers of at least [`PAUSABLE_WORDS`] words may pause (see the module's doc).
pub fn schedule(target: &Target, phase: &ExchangePhase) -> Result<PhaseSchedule, ExchangeError> {
    let given = schedule_with(target, phase, true)?;
    list_improved(target, phase, &given)
}

/// The phase list-scheduled ([`Order::List`] with [`LIST_WINDOW`], pausing) or in rounds
/// ([`Order::Rounds`]), whichever is shortest and shorter than `given` (its schedule in the
/// given order), else `given` (list scheduling only up to [`LIST_MAX_TRANSFERS`]). Measured on
/// one So400m/14 layer with the head at batch 1: the
/// greedy rounds shorten the partial sums' exchanges into the products' sums (fc1's 5,385 →
/// 4,784, QKV's 3,157 → 2,693, fc2's 3,007 → 2,708) and the head's probabilities' (1,213 →
/// 957), 331,011 → 328,813 cropped cycles; the bipartite rounds most others (fc2's partial
/// sums 2,098, out_proj's 1,808 → 1,443, the context's parts 5,384 → 5,104), 327,373 with
/// both, except QKV's, which the greedy rounds keep.
pub fn list_improved(
    target: &Target,
    phase: &ExchangePhase,
    given: &PhaseSchedule,
) -> Result<PhaseSchedule, ExchangeError> {
    let mut best = given.clone();
    let words_only = words_only(target, phase, given.controls);
    if words_only.is_some() {
        let candidate = schedule_controlled(
            target,
            phase,
            true,
            Order::Rounds(Colouring::Paired),
            given.controls,
        )?;
        if candidate.length < best.length && emittable(target, phase, &candidate) {
            best = candidate;
        }
    }
    for target in std::iter::once(target).chain(words_only.as_ref()) {
        let list = if phase.transfers.len() <= LIST_MAX_TRANSFERS {
            Some(listed(target, phase, given.controls)?)
        } else {
            None
        };
        for candidate in list.into_iter().chain([
            schedule_controlled(
                target,
                phase,
                true,
                Order::Rounds(Colouring::Bipartite),
                given.controls,
            )?,
            schedule_controlled(
                target,
                phase,
                true,
                Order::Rounds(Colouring::Greedy),
                given.controls,
            )?,
        ]) {
            if candidate.length < best.length && emittable(target, phase, &candidate) {
                best = candidate;
            }
        }
    }
    Ok(best)
}

/// `target` with transfers kept to 32-bit words, where it would send paired items: each
/// phase is scheduled both ways and the shorter kept, since a paired transfer holds its
/// sender's partner, which the greedy placement does not weigh (one So400m layer at batch 1:
/// fc2's operand exchange 14.7k with words, 16.3k choosing pairs wherever they end no later).
/// `None` where no transfer of `phase` could go paired with `controls` (the schedules would be
/// the same).
fn words_only(target: &Target, phase: &ExchangePhase, controls: ReceiveControls) -> Option<Target> {
    let any = target.paired_exchange
        && phase
            .transfers
            .iter()
            .any(|t| pairable(target, controls, t));
    any.then(|| Target {
        paired_exchange: false,
        ..target.clone()
    })
}

/// The phase list-scheduled ([`Order::List`] with [`LIST_WINDOW`], pausing) for `controls`.
fn listed(
    target: &Target,
    phase: &ExchangePhase,
    controls: ReceiveControls,
) -> Result<PhaseSchedule, ExchangeError> {
    schedule_controlled(
        target,
        phase,
        true,
        Order::List {
            window: LIST_WINDOW,
        },
        controls,
    )
}

/// The phase in its given order (pausing) for the hardware's timed receive streams
/// ([`ReceiveControls::TimedStreams`]) where the emitter can write every control of that
/// schedule, else for supervisor `put`s.
pub fn schedule_for_emission(
    target: &Target,
    phase: &ExchangePhase,
) -> Result<PhaseSchedule, ExchangeError> {
    let mut best: Option<PhaseSchedule> = None;
    let words_only = words_only(target, phase, ReceiveControls::TimedStreams);
    for target in std::iter::once(target).chain(words_only.as_ref()) {
        let timed = schedule_controlled(
            target,
            phase,
            true,
            Order::Given,
            ReceiveControls::TimedStreams,
        )?;
        if best.as_ref().is_none_or(|b| timed.length < b.length) && emittable(target, phase, &timed)
        {
            best = Some(timed);
        }
    }
    match best {
        Some(best) => Ok(best),
        None => schedule_with(target, phase, true),
    }
}

/// Whether every tile's code of `schedule` can be written (the timing alone decides it, not the
/// addresses: see [`crate::exchange::emit::emit_tile_timed`]).
fn emittable(target: &Target, phase: &ExchangePhase, schedule: &PhaseSchedule) -> bool {
    match schedule.controls {
        ReceiveControls::SupervisorPuts => true,
        ReceiveControls::TimedStreams => super::emit::timed_ops(target, phase, schedule)
            .iter()
            .enumerate()
            .all(|(tile, ops)| {
                super::emit::emit_tile_timed(target.fabric, tile as u32, ops).is_ok()
            }),
    }
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
    schedule_controlled(
        target,
        phase,
        pausing,
        order,
        ReceiveControls::SupervisorPuts,
    )
}

/// What the phase would take if receivers drove their mux and pointer with `controls`, every
/// one of them, with no fallback: the shorter of the given order and list scheduling, as
/// [`schedule`] does. A projection for comparing the protocols (`tessera estimate
/// --receive-puts`); nothing emits it.
pub fn schedule_projected(
    target: &Target,
    phase: &ExchangePhase,
    controls: ReceiveControls,
) -> Result<PhaseSchedule, ExchangeError> {
    let given = schedule_controlled(target, phase, true, Order::Given, controls)?;
    let listed = listed(target, phase, controls)?;
    Ok(if listed.length < given.length {
        listed
    } else {
        given
    })
}

fn schedule_controlled(
    target: &Target,
    phase: &ExchangePhase,
    pausing: bool,
    order: Order,
    controls: ReceiveControls,
) -> Result<PhaseSchedule, ExchangeError> {
    for transfer in &phase.transfers {
        validate(target, transfer)?;
    }
    let mut state = Placer {
        target,
        controls,
        pausing,
        pairing: target.paired_exchange,
        tiles: vec![TileResources::default(); target.tiles as usize],
        scratch: Scratch::default(),
        schedule: PhaseSchedule {
            starts: vec![0; phase.transfers.len()],
            runs: vec![Vec::new(); phase.transfers.len()],
            length: 0,
            controls,
            widths: vec![Width::Words; phase.transfers.len()],
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
        Order::Rounds(colouring) => {
            let paired: Vec<bool> = phase
                .transfers
                .iter()
                .map(|t| {
                    colouring == Colouring::Paired
                        && target.paired_exchange
                        && pairable(target, controls, t)
                })
                .collect();
            for index in rounds(phase, colouring, &paired) {
                let transfer = &phase.transfers[index];
                let chosen = state.place(transfer);
                state.commit(index, transfer, chosen);
            }
        }
    }
    Ok(state.schedule)
}

/// The tiles' timelines as transfers are placed, and the schedule so far.
struct Placer<'a> {
    target: &'a Target,
    controls: ReceiveControls,
    pausing: bool,
    /// Whether transfers may go as paired items ([`Width::Paired`]).
    pairing: bool,
    tiles: Vec<TileResources>,
    scratch: Scratch,
    schedule: PhaseSchedule,
}

impl Placer<'_> {
    /// Where `transfer` goes now: unbroken, paused where that ends sooner, or as paired items
    /// where it may ([`pairable`]) and that ends no later.
    fn place(&mut self, transfer: &Transfer) -> Placement {
        let mut best = unbroken(
            self.target,
            self.controls,
            &self.tiles,
            transfer,
            &mut self.scratch,
        );
        if self.pausing && transfer.words >= PAUSABLE_WORDS {
            let broken = paused(
                self.target,
                self.controls,
                &self.tiles,
                transfer,
                &mut self.scratch,
            );
            if broken.end() < best.end() {
                best = broken;
            }
        }
        if self.pairing && pairable(self.target, self.controls, transfer) {
            let paired = paired(self.target, &self.tiles, transfer, &mut self.scratch);
            if paired.end() <= best.end() {
                best = paired;
            }
        }
        best
    }

    /// Takes `chosen`'s intervals on the tiles' timelines for transfer `index`.
    fn commit(&mut self, index: usize, transfer: &Transfer, chosen: Placement) {
        for &(tile, resource, a, b) in &chosen.intervals {
            let tile = &mut self.tiles[tile as usize];
            match resource {
                Resource::Supervisor => tile.supervisor.insert(a, b),
                Resource::Port => tile.port.insert(a, b),
                Resource::Control => tile.control.insert(a, b),
            }
            self.schedule.length = self.schedule.length.max(b);
        }
        let units = match chosen.width {
            Width::Words => transfer.words,
            Width::Paired => transfer.words / 2,
        };
        let span_end = chosen
            .runs
            .last()
            .map_or(chosen.start, |&(c, n)| c + n)
            .max(chosen.start + units.max(MIN_WINDOW));
        self.tiles[transfer.sender as usize]
            .sends
            .insert(chosen.start, span_end);
        self.schedule.starts[index] = chosen.start;
        self.schedule.runs[index] = chosen.runs;
        self.schedule.widths[index] = chosen.width;
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
    let latency = target.max_latency() as u64;
    if phase.transfers.is_empty() {
        0
    } else {
        busiest + latency + overhead
    }
}

mod list;
mod paired;
mod rounds;
use list::list_schedule;
pub use list::{
    LIST_EVALUATIONS_PER_TRANSFER, LIST_MAX_TRANSFERS, LIST_NARROW_EVALUATIONS_PER_TRANSFER,
    LIST_WINDOW,
};
use paired::paired;
pub use paired::{
    pairable, paired_control_cycles, PairedControl, Width, PAIRED_MIN_WORDS, PAIRED_PARTNER_TAIL,
};
#[cfg(test)]
use rounds::round_of;
use rounds::rounds;

#[cfg(test)]
mod tests;
