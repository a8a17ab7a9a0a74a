//! From a schedule to supervisor instructions on every tile: the ops each transfer needs at their
//! exact cycles, sorted, with `delay` in the gaps.

use super::schedule::{PhaseSchedule, MAX_WORDS_PER_SEND, MIN_WINDOW, SETUP_BEFORE_ARRIVAL};
use super::{ExchangeError, ExchangePhase};
use crate::target::Target;
use tessera_isa::csr::index;
use tessera_isa::inst::{Inst, Opcode};

/// What a tile does at one cycle of an exchange phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeOp {
    /// `send` of up to 64 words starting at this cycle, with the send control `sctl` whose
    /// direction bits reach every receiver (`tessera_isa::fabric`).
    Send { address: u32, words: u32, sctl: u32 },
    /// `setzi $m1, address` one cycle before, then `put $INCOMING_SINIT, $m1` at this cycle.
    SetPointer { address: u32 },
    /// `setzi $m0, tile + 1` (0 = stop) one cycle before, then `put $INCOMING_MUX, $m0` at this cycle.
    Listen { sender: Option<u32> },
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
    for ((transfer, &start), runs) in phase
        .transfers
        .iter()
        .zip(&schedule.starts)
        .zip(&schedule.runs)
    {
        let sctl = target
            .fabric
            .sctl(transfer.sender, transfer.deliveries.iter().map(|d| d.tile));
        // Each run of the sender's words in sends of at most 64.
        let mut sent = 0;
        let mut end = start;
        for &(cycle, words) in runs {
            let mut done = 0;
            while done < words {
                let n = (words - done).min(MAX_WORDS_PER_SEND);
                ops[transfer.sender as usize].push((
                    cycle + done,
                    ExchangeOp::Send {
                        address: transfer.source + 4 * sent,
                        words: n,
                        sctl,
                    },
                ));
                (done, sent) = (done + n, sent + n);
            }
            end = cycle + words;
        }
        let window = (end - start).max(MIN_WINDOW);
        for delivery in &transfer.deliveries {
            let arrival = start + target.latency(transfer.sender, delivery.tile);
            let tile = &mut ops[delivery.tile as usize];
            tile.push((
                arrival - (SETUP_BEFORE_ARRIVAL - 1),
                ExchangeOp::SetPointer {
                    address: delivery.destination,
                },
            ));
            tile.push((
                arrival,
                ExchangeOp::Listen {
                    sender: Some(transfer.sender),
                },
            ));
            tile.push((arrival + window, ExchangeOp::Listen { sender: None }));
        }
    }
    for tile in &mut ops {
        tile.sort_by_key(|&(cycle, _)| cycle);
    }
    ops
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
            if cycle > *now {
                code.instructions
                    .push(Inst::new(Opcode::Delay, &[cycle - *now]));
                *now = cycle;
            }
            Ok(())
        };
    for &(cycle, op) in ops {
        match op {
            ExchangeOp::Send {
                address,
                words,
                sctl,
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
        }
    }
    code.ends_at = now;
    Ok(code)
}

/// Instructions for every tile of a scheduled phase.
pub fn emit(
    target: &Target,
    phase: &ExchangePhase,
    schedule: &PhaseSchedule,
) -> Result<Vec<TileExchangeCode>, ExchangeError> {
    timed_ops(target, phase, schedule)
        .iter()
        .enumerate()
        .map(|(tile, ops)| emit_tile(target, tile as u32, ops))
        .collect()
}
