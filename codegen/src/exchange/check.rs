//! An independent checker of generated exchange code (in the spirit of regalloc2's checker):
//! it replays every tile's instructions with the supervisor timing rules, derives when each word
//! leaves its sender and which tiles' muxes and pointers accept it, and verifies that every
//! planned word reaches exactly the planned address on every planned receiver, that nothing else
//! is written, and that every word sent has a listener. It reads only the instructions and the
//! plan — not the scheduler's data.

use super::emit::TileExchangeCode;
use super::{ExchangeError, ExchangePhase};
use crate::target::Target;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use tessera_isa::csr::index;
use tessera_isa::fabric::ITEMS_64;
use tessera_isa::inst::Opcode;

#[derive(Default)]
struct Replay {
    /// (cycle, source address) of every word sent; a 64-bit item is two words of one cycle.
    sent: Vec<(u64, u32)>,
    /// The send control of every word sent (its fabric directions; `ITEMS_64` for an item's).
    sctl: Vec<u32>,
    /// (cycle, mux value) changes, at the first cycle of arrivals they apply to.
    mux: Vec<(u64, u32)>,
    /// (cycle, pointer) sets.
    pointer: Vec<(u64, u32)>,
    /// (cycle, sender + 1 or 0) selections of the pair's paired stream this tile wrote, at the
    /// first cycle of arrivals they apply to (on both members of the pair).
    pair: Vec<(u64, u32)>,
    /// (cycle, format) settings, at the first cycle of arrivals they apply to.
    format: Vec<(u64, u32)>,
}

fn replay(target: &Target, tile: u32, code: &TileExchangeCode) -> Result<Replay, ExchangeError> {
    let mut replay = Replay::default();
    let mut m = [0u32; 16];
    let mut now = 0u64;
    // A timed XPIC selection takes the words arriving this many cycles after its event; a
    // `put $INCOMING_MUX` those arriving in its own cycle.
    let lead = u64::from(target.mux_lead(tile));
    let pair_lead = u64::from(target.fabric.paired_mux_lead(tile));
    let format_lead = u64::from(target.fabric.format_lead());
    // The outgoing stream a `sendpic` continues: next address and send control.
    let mut stream: Option<(u32, u32)> = None;
    for inst in &code.instructions {
        let fail = |reason: String| ExchangeError::Check {
            tile,
            cycle: now,
            reason,
        };
        // Exchange code is a whitelist of eight opcodes: any other is an error, and so is any
        // opcode the table gains later.
        #[expect(
            clippy::wildcard_enum_match_arm,
            reason = "a whitelist of eight opcodes"
        )]
        match inst.opcode {
            Opcode::Setzi => {
                m[inst.reg(0)] = inst.imm(1);
                now += 1;
            }
            Opcode::Put => {
                let value = m[inst.reg(1)];
                match inst.imm(0) as u8 {
                    index::INCOMING_MUX => replay.mux.push((now, value)),
                    index::INCOMING_SINIT => replay.pointer.push((now, value)),
                    other => {
                        return Err(fail(format!(
                            "unexpected CSR write {other:#x} in exchange code"
                        )))
                    }
                }
                now += target.csr_write_stall as u64;
            }
            Opcode::Delay => now += inst.imm(0) as u64 + 1,
            Opcode::DelayXpic | Opcode::DelayPic => {
                // The control applies in the last of its events.
                let events = inst.imm(0) as u64 + 1;
                let at = now + events - 1;
                let (selector, value) = (inst.imm(1), inst.imm(2));
                match (inst.opcode == Opcode::DelayXpic, selector) {
                    (true, 1) => replay.pair.push((
                        at + pair_lead,
                        pair_value(target, tile, value).map_err(fail)?,
                    )),
                    (true, _) => replay
                        .mux
                        .push((at + lead, mux_value(target, selector, value).map_err(fail)?)),
                    (false, 0) => replay.pointer.push((at, value * 4)),
                    (false, _) => replay.format.push((at + format_lead, value)),
                }
                now += events;
            }
            Opcode::SendPic => {
                let Some((address, sctl)) = stream else {
                    return Err(fail("sendpic with no outgoing stream to continue".into()));
                };
                let (words, selector, value) = (inst.imm(0) + 1, inst.imm(1), inst.imm(2));
                match selector {
                    0 => replay.mux.push((
                        now + lead,
                        mux_value(target, selector, value).map_err(fail)?,
                    )),
                    1 => replay.pair.push((
                        now + pair_lead,
                        pair_value(target, tile, value).map_err(fail)?,
                    )),
                    2 => replay.pointer.push((now, value * 4)),
                    _ => replay.format.push((now + format_lead, value)),
                }
                stream = Some(push_sent(&mut replay, now, address, words, sctl));
                now += words as u64;
            }
            Opcode::SendOff => {
                let Some((address, _)) = stream else {
                    return Err(fail("sendoff with no outgoing stream to continue".into()));
                };
                let (words, delta, sctl) = (inst.imm(0) + 1, inst.imm(1), inst.imm(2));
                let directions =
                    tessera_isa::fabric::DIRECTION_1 | tessera_isa::fabric::DIRECTION_2;
                if sctl & directions == 0 || sctl & !(directions | ITEMS_64) != 0 {
                    return Err(fail(format!(
                        "sendoff control {sctl}: it names one or both fabric directions"
                    )));
                }
                let unit = if sctl & ITEMS_64 != 0 { 8 } else { 4 };
                stream = Some(push_sent(
                    &mut replay,
                    now,
                    address.wrapping_add(unit * delta),
                    words,
                    sctl,
                ));
                now += words as u64;
            }
            Opcode::Send => {
                let words = inst.imm(0) + 1;
                let sctl = inst.imm(2);
                let directions =
                    tessera_isa::fabric::DIRECTION_1 | tessera_isa::fabric::DIRECTION_2;
                if sctl & directions == 0 || sctl & !(directions | ITEMS_64) != 0 {
                    return Err(fail(format!(
                        "send control {sctl}: a send names one or both fabric directions, with 32-bit words or 64-bit items (1, 2, 3, 5, 6 or 7)"
                    )));
                }
                // A 64-bit send's address field counts 8-byte units.
                let address = if sctl & ITEMS_64 != 0 {
                    inst.imm(1).wrapping_mul(2)
                } else {
                    inst.imm(1)
                };
                stream = Some(push_sent(&mut replay, now, address, words, sctl));
                now += words as u64;
            }
            other => {
                return Err(fail(format!(
                    "unexpected instruction {other:?} in exchange code"
                )))
            }
        }
    }
    Ok(replay)
}

/// Records `count` words (or 64-bit items, two words each, where `sctl` says so) sent from
/// `address` from cycle `now` on; returns the stream a `sendpic` continues.
fn push_sent(replay: &mut Replay, now: u64, address: u32, count: u32, sctl: u32) -> (u32, u32) {
    let unit = if sctl & ITEMS_64 != 0 { 8 } else { 4 };
    for i in 0..count {
        let at = address + unit * i;
        for word in (0..unit).step_by(4) {
            replay.sent.push((now + i as u64, at + word));
            replay.sctl.push(sctl);
        }
    }
    (address + unit * count, sctl)
}

/// The sender + 1 (0: neutral) a selection of the pair's paired stream by `tile` names
/// (`Fabric::tile_of_paired_xpic`).
fn pair_value(target: &Target, tile: u32, value: u32) -> Result<u32, String> {
    if value == tessera_isa::fabric::XPIC_NEUTRAL {
        return Ok(0);
    }
    match target.fabric.tile_of_paired_xpic(value, tile) {
        Some(sender) if sender < target.tiles => Ok(sender + 1),
        _ => Err(format!(
            "paired XPIC value {value:#x} names no tile of the chip"
        )),
    }
}

/// A span in which a receiver takes one sender's words: on its mux (32-bit words), or on its
/// pair's paired stream while its format is on (64-bit items).
#[derive(Clone, Copy, Debug)]
struct Window {
    from: u64,
    until: u64,
    sender: u32,
    paired: bool,
}

/// `receiver`'s listening windows in time order: its mux's, and the paired stream's (its own and
/// its partner's selections) where its format is on. A format that is not the route's direction
/// and a mux window overlapping a paired one are errors.
fn windows(
    target: &Target,
    replays: &[Replay],
    receiver: u32,
) -> Result<Vec<Window>, ExchangeError> {
    let empty = Replay::default();
    let own = replays.get(receiver as usize).unwrap_or(&empty);
    let spans = |changes: &[(u64, u32)]| -> Vec<(u64, u64, u32)> {
        changes
            .iter()
            .enumerate()
            .filter(|(_, &(_, value))| value != 0)
            .map(|(i, &(from, value))| {
                let until = changes.get(i + 1).map_or(u64::MAX, |&(c, _)| c);
                (from, until, value)
            })
            .filter(|&(from, until, _)| from < until)
            .collect()
    };
    let mut windows: Vec<Window> = spans(&own.mux)
        .into_iter()
        .map(|(from, until, value)| Window {
            from,
            until,
            sender: value - 1,
            paired: false,
        })
        .collect();
    if !own.format.is_empty() {
        let partner = replays
            .get(target.fabric.partner(receiver) as usize)
            .unwrap_or(&empty);
        let mut selections: Vec<(u64, u32)> =
            own.pair.iter().chain(&partner.pair).copied().collect();
        selections.sort_by_key(|&(cycle, _)| cycle);
        for (from, until, sender) in spans(&selections) {
            for (f_from, f_until, format) in spans(&own.format) {
                let (a, b) = (from.max(f_from), until.min(f_until));
                if a >= b {
                    continue;
                }
                let sender = sender - 1;
                if let Some(direction) = target.fabric.direction(sender, receiver) {
                    if direction != format {
                        return Err(ExchangeError::Check {
                            tile: receiver,
                            cycle: a,
                            reason: format!(
                                "format {format} for 64-bit items from tile {sender}, which come in direction {direction}"
                            ),
                        });
                    }
                }
                windows.push(Window {
                    from: a,
                    until: b,
                    sender,
                    paired: true,
                });
            }
        }
        windows.sort_by_key(|w| (w.from, w.paired));
        if let Some(w) = windows.windows(2).find(|w| w[1].from < w[0].until) {
            return Err(ExchangeError::Check {
                tile: receiver,
                cycle: w[1].from,
                reason: format!(
                    "listens to tile {} on its mux while its format takes tile {}'s 64-bit items",
                    if w[0].paired {
                        w[1].sender
                    } else {
                        w[0].sender
                    },
                    if w[0].paired {
                        w[0].sender
                    } else {
                        w[1].sender
                    },
                ),
            });
        }
    }
    Ok(windows)
}

/// The first 64-bit item of a tile sent in a cycle in which its partner, whose lane it
/// borrows, sends a word too.
fn lane_conflict(target: &Target, replays: &[Replay]) -> Option<ExchangeError> {
    for (sender, replay) in replays.iter().enumerate() {
        let sender = sender as u32;
        let Some(partner) = replays.get(target.fabric.partner(sender) as usize) else {
            continue;
        };
        for (&(cycle, _), _) in replay
            .sent
            .iter()
            .zip(&replay.sctl)
            .filter(|(_, &sctl)| sctl & ITEMS_64 != 0)
        {
            let at = partner.sent.partition_point(|&(c, _)| c < cycle);
            if partner.sent.get(at).is_some_and(|&(c, _)| c == cycle) {
                return Some(ExchangeError::Check {
                    tile: sender,
                    cycle,
                    reason: format!(
                        "a 64-bit item on the lane of tile {}, which sends in that cycle",
                        target.fabric.partner(sender)
                    ),
                });
            }
        }
    }
    None
}

/// The mux value of the `put` convention (sender + 1, 0 = none) for an XPIC setting of the main
/// stream (`selector` 0; exchange code uses no paired stream), whose value names the sender as
/// the hardware does (`Fabric::xpic`: its physical id on the ipu21).
fn mux_value(target: &Target, selector: u32, value: u32) -> Result<u32, String> {
    let tile = target.fabric.tile_of_xpic(value);
    match (selector, value, tile) {
        (0, tessera_isa::fabric::XPIC_NEUTRAL, _) => Ok(0),
        (0, _, Some(tile)) if tile < tessera_isa::fabric::XPIC_NEUTRAL => Ok(tile + 1),
        _ => Err(format!(
            "XPIC stream {selector}, value {value:#x}: exchange code listens on the main stream to a tile or to none"
        )),
    }
}

/// Checks the generated code of a phase against the phase's transfers.
pub fn check(
    target: &Target,
    phase: &ExchangePhase,
    code: &[TileExchangeCode],
) -> Result<(), ExchangeError> {
    let replays: Vec<Replay> = code
        .iter()
        .enumerate()
        .map(|(t, c)| replay(target, t as u32, c))
        .collect::<Result<_, _>>()?;
    if let Some(error) = lane_conflict(target, &replays) {
        return Err(error);
    }
    match Planned::new(phase, replays.len()) {
        Some(planned) => check_by_range(target, phase, &replays, &planned),
        None => check_per_word(target, phase, &replays),
    }
}

/// One planned delivery seen from its receiver: words `[start, end)` (byte addresses) of
/// `sender` go to `destination` onwards.
#[derive(Clone, Copy, Debug)]
struct Range {
    sender: u32,
    start: u64,
    end: u64,
    destination: u32,
    transfer: usize,
    /// Index of the first word's delivery count in the receiver's counts.
    counts: usize,
}

/// The plan by receiver: each receiver's deliveries sorted by (sender, source).
struct Planned {
    by_receiver: Vec<Vec<Range>>,
}

impl Planned {
    /// `None` when two deliveries to one receiver share source bytes of one sender (or a range
    /// passes the end of the address space): then a word has more than one planned destination
    /// and only the word-by-word check says which one counts.
    fn new(phase: &ExchangePhase, tiles: usize) -> Option<Planned> {
        let receivers = phase
            .transfers
            .iter()
            .flat_map(|t| &t.deliveries)
            .map(|d| d.tile as usize + 1)
            .max()
            .unwrap_or(0)
            .max(tiles);
        let mut by_receiver: Vec<Vec<Range>> = vec![Vec::new(); receivers];
        for (index, transfer) in phase.transfers.iter().enumerate() {
            if transfer.words == 0 {
                continue;
            }
            let start = transfer.source as u64;
            let end = start + 4 * transfer.words as u64;
            if end > 1 << 32 {
                return None;
            }
            for delivery in &transfer.deliveries {
                by_receiver[delivery.tile as usize].push(Range {
                    sender: transfer.sender,
                    start,
                    end,
                    destination: delivery.destination,
                    transfer: index,
                    counts: 0,
                });
            }
        }
        for ranges in &mut by_receiver {
            ranges.sort_by_key(|r| (r.sender, r.start, r.transfer));
            if ranges
                .windows(2)
                .any(|w| w[0].sender == w[1].sender && w[1].start < w[0].end)
            {
                return None;
            }
            let mut counts = 0;
            for range in ranges.iter_mut() {
                range.counts = counts;
                counts += ((range.end - range.start) / 4) as usize;
            }
        }
        Some(Planned { by_receiver })
    }
}

/// The check with the plan as ranges: work proportional to the words sent and received.
/// Receivers are checked in parallel; the error is the one checking them in order finds first.
fn check_by_range(
    target: &Target,
    phase: &ExchangePhase,
    replays: &[Replay],
    planned: &Planned,
) -> Result<(), ExchangeError> {
    let listened: Vec<Vec<AtomicBool>> = replays
        .iter()
        .map(|r| r.sent.iter().map(|_| AtomicBool::new(false)).collect())
        .collect();
    let outcomes: Vec<Result<Option<ExchangeError>, ExchangeError>> = planned
        .by_receiver
        .par_iter()
        .enumerate()
        .map(|(receiver, ranges)| {
            check_receiver(target, phase, replays, receiver as u32, ranges, &listened)
        })
        .collect();
    // The first word delivered other than once is reported after the listener check, as the
    // word-by-word check does.
    let mut miscounted: Option<ExchangeError> = None;
    for outcome in outcomes {
        if let Some(error) = outcome? {
            miscounted.get_or_insert(error);
        }
    }
    for (sender, replay) in replays.iter().enumerate() {
        if let Some(w) = listened[sender]
            .iter()
            .position(|l| !l.load(Ordering::Relaxed))
        {
            let (cycle, address) = replay.sent[w];
            return Err(ExchangeError::NoListener {
                tile: sender as u32,
                cycle,
                address,
            });
        }
    }
    match miscounted {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Checks the words `receiver` accepts against its planned `ranges`, marking each word heard in
/// `listened`. Returns the first planned word it did not get exactly once, if any.
fn check_receiver(
    target: &Target,
    phase: &ExchangePhase,
    replays: &[Replay],
    receiver: u32,
    ranges: &[Range],
    listened: &[Vec<AtomicBool>],
) -> Result<Option<ExchangeError>, ExchangeError> {
    let empty = Replay::default();
    let replay = replays.get(receiver as usize).unwrap_or(&empty);
    if let Some(&(from, value)) = replay.mux.iter().find(|&&(_, value)| value > target.tiles) {
        return Err(ExchangeError::Check {
            tile: receiver,
            cycle: from,
            reason: format!("mux names tile {}, which does not exist", value - 1),
        });
    }
    let mut counts = vec![
        0u32;
        ranges
            .last()
            .map(|r| r.counts + ((r.end - r.start) / 4) as usize)
            .unwrap_or(0)
    ];
    let mut pointer_sets = replay.pointer.iter().peekable();
    let mut pointer: Option<u32> = None;
    let mut last: Option<usize> = None;
    // Accepted words in arrival order: for each listening interval in turn (they are in time
    // order and disjoint), the sender's words arriving in it (they leave in cycle order).
    for window in windows(target, replays, receiver)? {
        let sender = window.sender;
        for (arrival, w) in window_arrivals(target, replays, receiver, &window)? {
            let source = replays[sender as usize].sent[w].1;
            while let Some(&&(cycle, address)) = pointer_sets.peek() {
                if cycle <= arrival {
                    pointer = Some(address);
                    pointer_sets.next();
                } else {
                    break;
                }
            }
            let Some(at) = pointer else {
                return Err(ExchangeError::Check {
                    tile: receiver,
                    cycle: arrival,
                    reason: format!("word from tile {sender} accepted before any pointer was set"),
                });
            };
            let contains = |r: &Range| {
                r.sender == sender
                    && r.start <= source as u64
                    && (source as u64) < r.end
                    && (source as u64 - r.start).is_multiple_of(4)
            };
            let found = match last.filter(|&k| contains(&ranges[k])) {
                Some(k) => Some(k),
                None => {
                    let k =
                        ranges.partition_point(|r| (r.sender, r.start) <= (sender, source as u64));
                    k.checked_sub(1).filter(|&k| contains(&ranges[k]))
                }
            };
            let Some(k) = found else {
                return Err(ExchangeError::Check { tile: receiver, cycle: arrival, reason: format!("accepts an unplanned word from tile {sender} (source {source:#x}) at {at:#x}") });
            };
            last = Some(k);
            let range = &ranges[k];
            let word = ((source as u64 - range.start) / 4) as u32;
            let destination = range.destination.wrapping_add(4 * word);
            if destination != at {
                return Err(ExchangeError::Check {
                    tile: receiver,
                    cycle: arrival,
                    reason: format!(
                        "word {word} of `{}` lands at {at:#x}, planned {destination:#x}",
                        phase.transfers[range.transfer].label
                    ),
                });
            }
            counts[range.counts + word as usize] += 1;
            listened[sender as usize][w].store(true, Ordering::Relaxed);
            pointer = Some(at.wrapping_add(4));
        }
    }
    for range in ranges {
        let words = ((range.end - range.start) / 4) as u32;
        for word in 0..words {
            let label = &phase.transfers[range.transfer].label;
            match counts[range.counts + word as usize] {
                1 => {}
                0 => {
                    return Ok(Some(ExchangeError::Missing {
                        label: label.clone(),
                        word,
                        tile: receiver,
                        destination: range.destination.wrapping_add(4 * word),
                    }))
                }
                n => {
                    return Ok(Some(ExchangeError::Check {
                        tile: receiver,
                        cycle: 0,
                        reason: format!("word {word} of `{label}` arrived {n} times"),
                    }))
                }
            }
        }
    }
    Ok(None)
}

/// The words of `window`'s sender that `receiver` takes in it, `(arrival, word index)` in
/// arrival order: those arriving in the window in a direction that reaches the receiver, 32-bit
/// words on the mux and 64-bit items on the paired stream (an item on the mux is an error; a
/// 32-bit word is for some other tile's mux).
fn window_arrivals(
    target: &Target,
    replays: &[Replay],
    receiver: u32,
    window: &Window,
) -> Result<Vec<(u64, usize)>, ExchangeError> {
    let (sender, paired) = (window.sender, window.paired);
    let latency = window_latency(target, window, receiver);
    let sent = &replays[sender as usize].sent;
    let sctl = &replays[sender as usize].sctl;
    let first = sent.partition_point(|&(cycle, _)| cycle + latency < window.from);
    let mut taken = Vec::new();
    for (w, &(cycle, _)) in sent.iter().enumerate().skip(first) {
        let arrival = cycle + latency;
        if arrival >= window.until {
            break;
        }
        if !target.fabric.reaches(sctl[w], sender, receiver) {
            // The word's directions miss this tile: its mux sees nothing.
            continue;
        }
        match (paired, sctl[w] & ITEMS_64 != 0) {
            (false, false) | (true, true) => taken.push((arrival, w)),
            (true, false) => {}
            (false, true) => {
                return Err(ExchangeError::Check {
                    tile: receiver,
                    cycle: arrival,
                    reason: format!("a 64-bit item from tile {sender} on its 32-bit mux"),
                })
            }
        }
    }
    Ok(taken)
}

/// Cycles from a word (or item) of `window`'s sender leaving to its write on `receiver`.
fn window_latency(target: &Target, window: &Window, receiver: u32) -> u64 {
    let words = target.latency(window.sender, receiver);
    u64::from(match window.paired {
        false => words,
        true => target
            .paired_latency(window.sender, receiver)
            .unwrap_or(words + 1),
    })
}

/// A planned word's (sender, source address, receiver).
type WordSource = (u32, u32, u32);
/// Where a planned word lands: (destination address, transfer index, word index).
type WordDestination = (u32, usize, u32);

/// The check word by word: a map from every planned (sender, source, receiver) word to its
/// destination. Exact for any plan, but its cost grows with words × receivers; [`check`] uses it
/// only for plans whose source ranges to one receiver overlap.
fn check_per_word(
    target: &Target,
    phase: &ExchangePhase,
    replays: &[Replay],
) -> Result<(), ExchangeError> {
    // Planned: (sender, source address, receiver) → every (destination, transfer, word) it
    // goes to (one source word can be sent to one receiver several times, to different places).
    let mut planned: HashMap<WordSource, Vec<WordDestination>> = HashMap::new();
    for (index, transfer) in phase.transfers.iter().enumerate() {
        for word in 0..transfer.words {
            for delivery in &transfer.deliveries {
                planned
                    .entry((transfer.sender, transfer.source + 4 * word, delivery.tile))
                    .or_default()
                    .push((delivery.destination + 4 * word, index, word));
            }
        }
    }
    // (sender, source, receiver, destination) → times delivered.
    let mut delivered: HashMap<(u32, u32, u32, u32), u32> = HashMap::new();
    let mut listened = vec![Vec::<bool>::new(); replays.len()];
    for (sender, r) in replays.iter().enumerate() {
        listened[sender] = vec![false; r.sent.len()];
    }
    for (receiver, replay) in replays.iter().enumerate() {
        let receiver = receiver as u32;
        // Accepted words in arrival order: for each listening interval, the sender's words arriving in it.
        let mut arrivals: Vec<(u64, u32, usize)> = Vec::new(); // (arrival, sender, word index)
        if let Some(&(from, value)) = replay.mux.iter().find(|&&(_, v)| v > target.tiles) {
            return Err(ExchangeError::Check {
                tile: receiver,
                cycle: from,
                reason: format!("mux names tile {}, which does not exist", value - 1),
            });
        }
        for window in windows(target, replays, receiver)? {
            let sender = window.sender;
            arrivals.extend(
                window_arrivals(target, replays, receiver, &window)?
                    .into_iter()
                    .map(|(arrival, w)| (arrival, sender, w)),
            );
        }
        arrivals.sort();
        let mut pointer_sets = replay.pointer.iter().peekable();
        let mut pointer: Option<u32> = None;
        for (arrival, sender, w) in arrivals {
            while let Some(&&(cycle, address)) = pointer_sets.peek() {
                if cycle <= arrival {
                    pointer = Some(address);
                    pointer_sets.next();
                } else {
                    break;
                }
            }
            let source = replays[sender as usize].sent[w].1;
            let Some(at) = pointer else {
                return Err(ExchangeError::Check {
                    tile: receiver,
                    cycle: arrival,
                    reason: format!("word from tile {sender} accepted before any pointer was set"),
                });
            };
            match planned.get(&(sender, source, receiver)) {
                Some(list) if list.iter().any(|&(destination, _, _)| destination == at) => {}
                Some(list) => {
                    let (destination, t, word) = list[0];
                    return Err(ExchangeError::Check {
                        tile: receiver,
                        cycle: arrival,
                        reason: format!("word {word} of `{}` lands at {at:#x}, planned {destination:#x}", phase.transfers[t].label),
                    });
                }
                None => {
                    return Err(ExchangeError::Check {
                        tile: receiver,
                        cycle: arrival,
                        reason: format!("accepts an unplanned word from tile {sender} (source {source:#x}) at {at:#x}"),
                    })
                }
            }
            *delivered.entry((sender, source, receiver, at)).or_default() += 1;
            listened[sender as usize][w] = true;
            pointer = Some(at + 4);
        }
    }
    for (sender, replay) in replays.iter().enumerate() {
        if let Some(w) = listened[sender].iter().position(|&l| !l) {
            let (cycle, address) = replay.sent[w];
            return Err(ExchangeError::NoListener {
                tile: sender as u32,
                cycle,
                address,
            });
        }
    }
    let mut planned: Vec<(WordSource, WordDestination)> = planned
        .into_iter()
        .flat_map(|(key, list)| list.into_iter().map(move |d| (key, d)))
        .collect();
    planned.sort_unstable();
    for ((sender, source, receiver), (destination, t, word)) in planned {
        match delivered.get(&(sender, source, receiver, destination)) {
            Some(1) => {}
            Some(n) => {
                return Err(ExchangeError::Check {
                    tile: receiver,
                    cycle: 0,
                    reason: format!(
                        "word {word} of `{}` arrived {n} times",
                        phase.transfers[t].label
                    ),
                })
            }
            None => {
                return Err(ExchangeError::Missing {
                    label: phase.transfers[t].label.clone(),
                    word,
                    tile: receiver,
                    destination,
                })
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
