//! The greedy scheduler: earliest feasible start per transfer, given three resources per tile —
//! its outgoing wires and supervisor (busy while sending and while issuing CSR writes) and its
//! incoming port (reserved from the pointer set-up to the end of a listening window).

use super::{ExchangeError, ExchangePhase, Transfer};
use crate::target::Target;

/// Words per `send` instruction (`zimm6` holds count − 1).
pub const MAX_WORDS_PER_SEND: u32 = 64;
/// Shortest listening window: the `put` that starts listening stalls the supervisor 6 cycles,
/// so the `put` that stops it comes at least 7 cycles later.
pub const MIN_WINDOW: u32 = 7;
/// Cycles of receive set-up before the first arrival (`setzi`, `put SINIT`, `setzi`).
pub const SETUP_BEFORE_ARRIVAL: u32 = 8;

/// When each transfer starts, and the phase's length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseSchedule {
    /// Send start cycle of each transfer, relative to the phase start (the sync release).
    pub starts: Vec<u32>,
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

    /// The earliest `t ≥ from` with `[t, t + len)` free.
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

/// Schedules every transfer of `phase` in order.
pub fn schedule(target: &Target, phase: &ExchangePhase) -> Result<PhaseSchedule, ExchangeError> {
    let mut tiles = vec![TileResources::default(); target.tiles as usize];
    let mut starts = Vec::with_capacity(phase.transfers.len());
    let mut length = 0;
    let mut needs: Vec<(u32, Resource, u32, u32)> = Vec::new();
    for transfer in &phase.transfers {
        validate(target, transfer)?;
        // The intervals relative to a start of 0 (every requirement begins at or after
        // SETUP_BEFORE_ARRIVAL before an arrival, so offsets are taken from that base).
        needs.clear();
        requirements_into(target, transfer, SETUP_BEFORE_ARRIVAL, &mut needs);
        // Earliest start where every interval is free: move the start to the latest earliest
        // slot of any interval until none moves it.
        let mut start = 0;
        loop {
            let mut latest = start;
            for &(tile, resource, from, to) in &needs {
                let timeline = match resource {
                    Resource::Supervisor => &tiles[tile as usize].supervisor,
                    Resource::Port => &tiles[tile as usize].port,
                };
                let offset = from - SETUP_BEFORE_ARRIVAL;
                let t = timeline.earliest(start + offset, to - from);
                latest = latest.max(t - offset);
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
    Ok(PhaseSchedule { starts, length })
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
