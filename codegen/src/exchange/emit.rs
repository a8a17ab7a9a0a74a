//! From a schedule to supervisor instructions on every tile: the ops each transfer needs at their
//! exact cycles, sorted, with `delay` in the gaps. A receiver sets its mux and pointer the way
//! its schedule was made for ([`ReceiveControls`]): with `put`s from the supervisor
//! ([`emit_tile`]), or as the hardware does, with timed controls (`delayxpic`, `delaypic`)
//! and, while the tile sends, carried by `sendpic` ([`emit_tile_timed`]).

use super::schedule::{
    paired_control_cycles, timed_control_cycles, PairedControl, PhaseSchedule, ReceiveControls,
    Width, MAX_WORDS_PER_SEND, MIN_WINDOW,
};
use super::{ExchangeError, ExchangePhase};
use crate::target::Target;
use tessera_isa::csr::index;
use tessera_isa::fabric::{Fabric, ITEMS_64, XPIC_NEUTRAL};
use tessera_isa::inst::{Inst, Opcode};
use tessera_isa::semantics::IncomingControl;

/// What a tile does at one cycle of an exchange phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeOp {
    /// `send` of up to 64 words starting at this cycle, with the send control `sctl` whose
    /// direction bits reach every receiver (`tessera_isa::fabric`); with its bit
    /// [`ITEMS_64`], `words` 64-bit items (a [`Width::Paired`] transfer). `continues`: the words
    /// follow the previous `Send` of the tile without a gap in time or address (one run of one
    /// transfer), so a `sendpic` may carry them.
    Send {
        address: u32,
        words: u32,
        sctl: u32,
        continues: bool,
    },
    /// `setzi $m1, address` one cycle before, then `put $INCOMING_SINIT, $m1` at this cycle.
    SetPointer { address: u32 },
    /// `setzi $m0, tile + 1` (0 = stop) one cycle before, then `put $INCOMING_MUX, $m0` at this
    /// cycle; or a timed XPIC selection at this cycle, which leads the words it is for by the
    /// receiver's mux lead (`Target::mux_lead`).
    Listen { sender: Option<u32> },
    /// A timed selection of the pair's paired stream (XPIC stream 1) at this cycle: `sender`'s
    /// 64-bit items, or neutral (`None`). Only with timed streams.
    ListenPaired { sender: Option<u32> },
    /// A timed format setting (PIC selector 1) at this cycle: 64-bit items from the route's
    /// direction `value` (1 or 2), or 32-bit words (0). Only with timed streams.
    Format { value: u32 },
}

/// The instructions of one tile for one phase, and the cycle after its last one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileExchangeCode {
    pub instructions: Vec<Inst>,
    pub ends_at: u32,
}

/// Every timed op of every tile (tile, cycle, op).
pub fn timed_ops(
    target: &Target,
    phase: &ExchangePhase,
    schedule: &PhaseSchedule,
) -> Vec<Vec<(u32, ExchangeOp)>> {
    let mut ops = vec![Vec::new(); target.tiles as usize];
    for (index, ((transfer, &start), runs)) in phase
        .transfers
        .iter()
        .zip(&schedule.starts)
        .zip(&schedule.runs)
        .enumerate()
    {
        let sctl = target
            .fabric
            .sctl(transfer.sender, transfer.deliveries.iter().map(|d| d.tile));
        let width = schedule.widths.get(index).copied().unwrap_or(Width::Words);
        if width == Width::Paired {
            paired_ops(target, transfer, start, runs, sctl, &mut ops);
            continue;
        }
        sender_ops(
            &mut ops[transfer.sender as usize],
            transfer.source,
            runs,
            sctl,
        );
        let end = runs.last().map_or(start, |&(cycle, words)| cycle + words);
        let window = (end - start).max(MIN_WINDOW);
        for delivery in &transfer.deliveries {
            let arrival = start + target.latency(transfer.sender, delivery.tile);
            // A timed mux selection leads the words it is for; a `put` applies in its cycle.
            let lead = match schedule.controls {
                ReceiveControls::SupervisorPuts => 0,
                ReceiveControls::TimedStreams => target.mux_lead(delivery.tile),
            };
            let [pointer, on, off] = timed_control_cycles(arrival, window, lead);
            let tile = &mut ops[delivery.tile as usize];
            tile.push((
                pointer,
                ExchangeOp::SetPointer {
                    address: delivery.destination,
                },
            ));
            tile.push((
                on,
                ExchangeOp::Listen {
                    sender: Some(transfer.sender),
                },
            ));
            tile.push((off, ExchangeOp::Listen { sender: None }));
        }
    }
    for tile in &mut ops {
        tile.sort_by_key(|&(cycle, _)| cycle);
    }
    ops
}

/// The ops of a [`Width::Paired`] transfer: the sender's 64-bit items (its runs count items) in
/// sends of at most 64, and each receiver's paired controls ([`paired_control_cycles`]).
fn paired_ops(
    target: &Target,
    transfer: &super::Transfer,
    start: u32,
    runs: &[(u32, u32)],
    sctl: u32,
    ops: &mut [Vec<(u32, ExchangeOp)>],
) {
    let sent = sender_ops(
        &mut ops[transfer.sender as usize],
        transfer.source,
        runs,
        sctl | ITEMS_64,
    );
    for delivery in &transfer.deliveries {
        let latency = target
            .paired_latency(transfer.sender, delivery.tile)
            .unwrap_or_else(|| target.latency(transfer.sender, delivery.tile) + 1);
        let arrival = start + latency;
        let tile = &mut ops[delivery.tile as usize];
        for (at, control) in
            paired_control_cycles(target, transfer.sender, delivery.tile, sent, arrival)
        {
            let op = match control {
                PairedControl::Pointer => ExchangeOp::SetPointer {
                    address: delivery.destination,
                },
                PairedControl::Format(direction) => ExchangeOp::Format {
                    value: direction.unwrap_or(0),
                },
                PairedControl::Source(on) => ExchangeOp::ListenPaired {
                    sender: on.then_some(transfer.sender),
                },
            };
            tile.push((at, op));
        }
    }
}

/// A sender's `Send` ops for its `runs`: sends of at most 64 units (words, or 8-byte items
/// where `sctl` has [`ITEMS_64`]) from `source` on; returns the units sent.
fn sender_ops(
    ops: &mut Vec<(u32, ExchangeOp)>,
    source: u32,
    runs: &[(u32, u32)],
    sctl: u32,
) -> u32 {
    let unit = if sctl & ITEMS_64 != 0 { 8 } else { 4 };
    let mut sent = 0;
    for &(cycle, units) in runs {
        let mut done = 0;
        while done < units {
            let n = (units - done).min(MAX_WORDS_PER_SEND);
            ops.push((
                cycle + done,
                ExchangeOp::Send {
                    address: source + unit * sent,
                    words: n,
                    sctl,
                    continues: done > 0,
                },
            ));
            (done, sent) = (done + n, sent + n);
        }
    }
    sent
}

/// Lowers the timed ops of one tile to instructions.
pub fn emit_tile(
    target: &Target,
    tile: u32,
    ops: &[(u32, ExchangeOp)],
) -> Result<TileExchangeCode, ExchangeError> {
    let mut code = TileExchangeCode::default();
    let mut now = 0u32;
    let wait_until =
        |code: &mut TileExchangeCode, now: &mut u32, cycle: u32| -> Result<(), ExchangeError> {
            if cycle < *now {
                return Err(ExchangeError::Check {
                    tile,
                    cycle: cycle as u64,
                    reason: format!(
                        "op needed at cycle {cycle} but the supervisor is busy until {now}"
                    ),
                });
            }
            push_delay(&mut code.instructions, cycle - *now);
            *now = cycle;
            Ok(())
        };
    for &(cycle, op) in ops {
        match op {
            ExchangeOp::Send {
                address,
                words,
                sctl,
                continues: _,
            } => {
                wait_until(&mut code, &mut now, cycle)?;
                code.instructions
                    .push(Inst::new(Opcode::Send, &[words - 1, address, sctl]));
                now += words;
            }
            ExchangeOp::SetPointer { address } => {
                wait_until(&mut code, &mut now, cycle - 1)?;
                code.instructions
                    .push(Inst::new(Opcode::Setzi, &[1, address]));
                code.instructions
                    .push(Inst::new(Opcode::Put, &[index::INCOMING_SINIT as u32, 1]));
                now = cycle + target.csr_write_stall;
            }
            ExchangeOp::Listen { sender } => {
                wait_until(&mut code, &mut now, cycle - 1)?;
                code.instructions.push(Inst::new(
                    Opcode::Setzi,
                    &[0, sender.map(|s| s + 1).unwrap_or(0)],
                ));
                code.instructions
                    .push(Inst::new(Opcode::Put, &[index::INCOMING_MUX as u32, 0]));
                now = cycle + target.csr_write_stall;
            }
            ExchangeOp::ListenPaired { .. } | ExchangeOp::Format { .. } => {
                return Err(ExchangeError::Check {
                    tile,
                    cycle: u64::from(cycle),
                    reason: "a paired receive control in code for supervisor puts (paired transfers need timed streams)".into(),
                })
            }
        }
    }
    code.ends_at = now;
    Ok(code)
}

/// Lowers the timed ops of one tile to instructions with the hardware's timed receive streams
/// ([`ReceiveControls::TimedStreams`]): a control in a gap of the tile's sends is a
/// `delayxpic` (the mux) or `delaypic` (the pointer) whose events end at its cycle; a control
/// while the tile sends splits the send there and rides on a `sendpic`, which continues the
/// outgoing stream. A control at the first word of a new stream (not a continuation) has no
/// instruction (`sendpic` cannot move the stream, and the two-word `sendpicp` is not modelled),
/// nor have two controls in one cycle: both are errors, and the phase is scheduled for
/// supervisor `put`s instead ([`crate::exchange::schedule::schedule_for_emission`]).
pub fn emit_tile_timed(
    fabric: Fabric,
    tile: u32,
    ops: &[(u32, ExchangeOp)],
) -> Result<TileExchangeCode, ExchangeError> {
    let fail = |cycle: u32, reason: String| ExchangeError::Check {
        tile,
        cycle: cycle as u64,
        reason,
    };
    let mut controls = Vec::new();
    let mut sends = Vec::new();
    for &(cycle, op) in ops {
        match op {
            ExchangeOp::Send {
                address,
                words,
                sctl,
                continues,
            } => sends.push((cycle, address, words, sctl, continues)),
            ExchangeOp::SetPointer { address } => {
                if !address.is_multiple_of(4) {
                    return Err(fail(
                        cycle,
                        format!("receive pointer {address:#x} is not word aligned"),
                    ));
                }
                controls.push((cycle, IncomingControl::Pointer { word: address / 4 }));
            }
            ExchangeOp::Listen { sender } => {
                // The hardware names the sender by its physical id (`Fabric::xpic`).
                let value = match sender {
                    None => XPIC_NEUTRAL,
                    Some(sender) => fabric.xpic(sender).ok_or_else(|| {
                        fail(cycle, format!("sender tile {sender} has no XPIC value"))
                    })?,
                };
                controls.push((
                    cycle,
                    IncomingControl::Source {
                        paired: false,
                        value,
                    },
                ))
            }
            ExchangeOp::ListenPaired { sender } => {
                // The pair's stream names the sender XOR bit 1 of this tile's physical id.
                let value = match sender {
                    None => XPIC_NEUTRAL,
                    Some(sender) => fabric.paired_xpic(sender, tile).ok_or_else(|| {
                        fail(
                            cycle,
                            format!("sender tile {sender} has no paired XPIC value"),
                        )
                    })?,
                };
                controls.push((
                    cycle,
                    IncomingControl::Source {
                        paired: true,
                        value,
                    },
                ))
            }
            ExchangeOp::Format { value } => {
                controls.push((cycle, IncomingControl::Format { value }))
            }
        }
    }
    controls.sort_by_key(|&(cycle, _)| cycle);
    let mut code = TileExchangeCode::default();
    let mut now = 0u32;
    let mut next = 0;
    // A run's sends of at most 64 words become one stream: a `send` of its first 64 words,
    // then `sendoff`s of up to 4,096 (and `sendpic`s where a control rides on a word).
    let mut merged: Vec<(u32, u32, u32, u32, bool)> = Vec::with_capacity(sends.len());
    for &(start, address, words, sctl, continues) in &sends {
        let unit = if sctl & ITEMS_64 != 0 { 8 } else { 4 };
        match merged.last_mut() {
            Some(last)
                if continues
                    && last.0 + last.2 == start
                    && last.1 + unit * last.2 == address
                    && last.3 == sctl =>
            {
                last.2 += words;
            }
            _ => merged.push((start, address, words, sctl, continues)),
        }
    }
    for &(start, address, words, sctl, continues) in &merged {
        while next < controls.len() && controls[next].0 < start {
            idle_control(&mut code, &mut now, controls[next])
                .map_err(|reason| fail(controls[next].0, reason))?;
            next += 1;
        }
        if start < now {
            return Err(fail(
                start,
                format!("send needed at cycle {start} but the supervisor is busy until {now}"),
            ));
        }
        push_delay(&mut code.instructions, start - now);
        let end = start + words;
        let (mut at, mut from) = (start, address);
        // A 64-bit send's items are 8 bytes, and its address field counts 8-byte units: the
        // operand (a 4-byte word address in the field) is half the byte address.
        let (unit, operand) = if sctl & ITEMS_64 != 0 { (8, 2) } else { (4, 1) };
        while at < end {
            let control = controls.get(next).filter(|c| c.0 == at).map(|c| c.1);
            let upto = controls
                .get(next + usize::from(control.is_some()))
                .map_or(end, |c| c.0.clamp(at, end));
            if upto == at {
                return Err(fail(at, "two incoming controls in one cycle".into()));
            }
            let fresh = at == start && !continues;
            let chunk = match control {
                Some(control) => {
                    if fresh {
                        return Err(fail(
                            at,
                            "an incoming control at the first word of a new outgoing stream".into(),
                        ));
                    }
                    let chunk = (upto - at).min(MAX_WORDS_PER_SEND);
                    let (selector, value) = sendpic_control(control);
                    code.instructions
                        .push(Inst::new(Opcode::SendPic, &[chunk - 1, selector, value]));
                    next += 1;
                    chunk
                }
                None if fresh => {
                    let chunk = (upto - at).min(MAX_WORDS_PER_SEND);
                    code.instructions
                        .push(Inst::new(Opcode::Send, &[chunk - 1, from / operand, sctl]));
                    chunk
                }
                None => {
                    let chunk = (upto - at).min(MAX_WORDS_PER_SENDOFF);
                    code.instructions
                        .push(Inst::new(Opcode::SendOff, &[chunk - 1, 0, sctl]));
                    chunk
                }
            };
            at += chunk;
            from += unit * chunk;
        }
        now = end;
    }
    for &control in &controls[next..] {
        idle_control(&mut code, &mut now, control).map_err(|reason| fail(control.0, reason))?;
    }
    code.ends_at = now;
    Ok(code)
}

/// A control at `cycle` while the tile sends nothing: a `delayxpic` or `delaypic` whose last
/// event is `cycle` (a `delay` first where the gap is longer than its events field holds).
fn idle_control(
    code: &mut TileExchangeCode,
    now: &mut u32,
    (cycle, control): (u32, IncomingControl),
) -> Result<(), String> {
    if cycle < *now {
        return Err(format!(
            "incoming control needed at cycle {cycle} but the supervisor is busy until {now}"
        ));
    }
    let (opcode, max_events, selector, value) = match control {
        IncomingControl::Source { paired, value } => {
            (Opcode::DelayXpic, MAX_XPIC_EVENTS, u32::from(paired), value)
        }
        IncomingControl::Pointer { word } => (Opcode::DelayPic, MAX_PIC_EVENTS, 0, word),
        IncomingControl::Format { value } => (Opcode::DelayPic, MAX_PIC_EVENTS, 1, value),
    };
    let events = cycle - *now + 1;
    push_delay(&mut code.instructions, events.saturating_sub(max_events));
    code.instructions.push(Inst::new(
        opcode,
        &[events.min(max_events) - 1, selector, value],
    ));
    *now = cycle + 1;
    Ok(())
}

/// `delay`s that pass `events` cycles (none for 0): `delay N` lasts N + 1, at most 2^19.
fn push_delay(instructions: &mut Vec<Inst>, mut events: u32) {
    while events > 0 {
        let part = events.min(MAX_DELAY_EVENTS);
        instructions.push(Inst::new(Opcode::Delay, &[part - 1]));
        events -= part;
    }
}

/// Most cycles one `delay` passes (its 19-bit field is cycles − 1).
const MAX_DELAY_EVENTS: u32 = 1 << 19;

/// `sendpic`'s selector and value for a control: 0 and 1 the XPIC streams, 2 and 3 the PIC
/// pointer and format.
fn sendpic_control(control: IncomingControl) -> (u32, u32) {
    match control {
        IncomingControl::Source { paired, value } => (u32::from(paired), value),
        IncomingControl::Pointer { word } => (2, word),
        IncomingControl::Format { value } => (3, value),
    }
}

/// Most words one `sendoff` sends (its 12-bit count field is words − 1).
const MAX_WORDS_PER_SENDOFF: u32 = 1 << 12;

/// Most events a `delayxpic` holds (its 12-bit field is events − 1).
const MAX_XPIC_EVENTS: u32 = 1 << 12;
/// Most events a `delaypic` holds (its 7-bit field is events − 1).
const MAX_PIC_EVENTS: u32 = 1 << 7;

/// Instructions for every tile of a scheduled phase, for the receive protocol its schedule was
/// made for.
pub fn emit(
    target: &Target,
    phase: &ExchangePhase,
    schedule: &PhaseSchedule,
) -> Result<Vec<TileExchangeCode>, ExchangeError> {
    timed_ops(target, phase, schedule)
        .iter()
        .enumerate()
        .map(|(tile, ops)| match schedule.controls {
            ReceiveControls::SupervisorPuts => emit_tile(target, tile as u32, ops),
            ReceiveControls::TimedStreams => emit_tile_timed(target.fabric, tile as u32, ops),
        })
        .collect()
}
