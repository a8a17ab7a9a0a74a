//! An independent checker of generated exchange code (in the spirit of regalloc2's checker):
//! it replays every tile's instructions with the supervisor timing rules, derives when each word
//! leaves its sender and which tiles' muxes and pointers accept it, and verifies that every
//! planned word reaches exactly the planned address on every planned receiver, that nothing else
//! is written, and that every word sent has a listener. It reads only the instructions and the
//! plan — not the scheduler's data.

use super::emit::TileExchangeCode;
use super::{ExchangeError, ExchangePhase};
use crate::target::Target;
use std::collections::HashMap;
use tessera_isa::csr::index;
use tessera_isa::inst::Opcode;

struct Replay {
    /// (cycle, source address) of every word sent.
    sent: Vec<(u64, u32)>,
    /// (cycle, mux value) changes.
    mux: Vec<(u64, u32)>,
    /// (cycle, pointer) sets.
    pointer: Vec<(u64, u32)>,
}

fn replay(target: &Target, tile: u32, code: &TileExchangeCode) -> Result<Replay, ExchangeError> {
    let mut replay = Replay { sent: Vec::new(), mux: Vec::new(), pointer: Vec::new() };
    let mut m = [0u32; 16];
    let mut now = 0u64;
    for inst in &code.instructions {
        let fail = |reason: String| ExchangeError::Check { tile, cycle: now, reason };
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
                    other => return Err(fail(format!("unexpected CSR write {other:#x} in exchange code"))),
                }
                now += target.csr_write_stall as u64;
            }
            Opcode::Delay => now += inst.imm(0).max(1) as u64,
            Opcode::Send => {
                let words = inst.imm(0) + 1;
                if inst.imm(2) != 0 {
                    return Err(fail("send mode must be 0".into()));
                }
                for i in 0..words {
                    replay.sent.push((now + i as u64, inst.imm(1) + 4 * i));
                }
                now += words as u64;
            }
            other => return Err(fail(format!("unexpected instruction {other:?} in exchange code"))),
        }
    }
    Ok(replay)
}

/// Checks the generated code of a phase against the phase's transfers.
pub fn check(target: &Target, phase: &ExchangePhase, code: &[TileExchangeCode]) -> Result<(), ExchangeError> {
    let replays: Vec<Replay> = code.iter().enumerate().map(|(t, c)| replay(target, t as u32, c)).collect::<Result<_, _>>()?;
    // Planned: (sender, source address, receiver) → (destination, transfer, word).
    let mut planned: HashMap<(u32, u32, u32), (u32, usize, u32)> = HashMap::new();
    for (index, transfer) in phase.transfers.iter().enumerate() {
        for word in 0..transfer.words {
            for delivery in &transfer.deliveries {
                planned.insert((transfer.sender, transfer.source + 4 * word, delivery.tile), (delivery.destination + 4 * word, index, word));
            }
        }
    }
    let mut delivered: HashMap<(u32, u32, u32), u32> = HashMap::new();
    let mut listened = vec![Vec::<bool>::new(); replays.len()];
    for (sender, r) in replays.iter().enumerate() {
        listened[sender] = vec![false; r.sent.len()];
    }
    for (receiver, replay) in replays.iter().enumerate() {
        let receiver = receiver as u32;
        // Accepted words in arrival order: for each listening interval, the sender's words arriving in it.
        let mut arrivals: Vec<(u64, u32, usize)> = Vec::new(); // (arrival, sender, word index)
        for (i, &(from, value)) in replay.mux.iter().enumerate() {
            if value == 0 {
                continue;
            }
            let sender = value - 1;
            if sender >= target.tiles {
                return Err(ExchangeError::Check { tile: receiver, cycle: from, reason: format!("mux names tile {sender}, which does not exist") });
            }
            let until = replay.mux.get(i + 1).map(|&(c, _)| c).unwrap_or(u64::MAX);
            let latency = target.latency(sender, receiver) as u64;
            for (w, &(cycle, _)) in replays[sender as usize].sent.iter().enumerate() {
                let arrival = cycle + latency;
                if arrival >= from && arrival < until {
                    arrivals.push((arrival, sender, w));
                }
            }
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
                return Err(ExchangeError::Check { tile: receiver, cycle: arrival, reason: format!("word from tile {sender} accepted before any pointer was set") });
            };
            match planned.get(&(sender, source, receiver)) {
                Some(&(destination, _, _)) if destination == at => {}
                Some(&(destination, t, word)) => {
                    return Err(ExchangeError::Check {
                        tile: receiver,
                        cycle: arrival,
                        reason: format!("word {word} of `{}` lands at {at:#x}, planned {destination:#x}", phase.transfers[t].label),
                    })
                }
                None => {
                    return Err(ExchangeError::Check {
                        tile: receiver,
                        cycle: arrival,
                        reason: format!("accepts an unplanned word from tile {sender} (source {source:#x}) at {at:#x}"),
                    })
                }
            }
            *delivered.entry((sender, source, receiver)).or_default() += 1;
            listened[sender as usize][w] = true;
            pointer = Some(at + 4);
        }
    }
    for (sender, replay) in replays.iter().enumerate() {
        if let Some(w) = listened[sender].iter().position(|&l| !l) {
            let (cycle, address) = replay.sent[w];
            return Err(ExchangeError::NoListener { tile: sender as u32, cycle, address });
        }
    }
    for (&(sender, source, receiver), &(destination, t, word)) in &planned {
        match delivered.get(&(sender, source, receiver)) {
            Some(1) => {}
            Some(n) => {
                return Err(ExchangeError::Check { tile: receiver, cycle: 0, reason: format!("word {word} of `{}` arrived {n} times", phase.transfers[t].label) })
            }
            None => return Err(ExchangeError::Missing { label: phase.transfers[t].label.clone(), word, tile: receiver, destination }),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::schedule::schedule;
    use super::super::{emit::emit, Delivery, Transfer};
    use super::*;

    fn transfer(sender: u32, source: u32, words: u32, receivers: &[(u32, u32)]) -> Transfer {
        Transfer {
            sender,
            source,
            words,
            deliveries: receivers.iter().map(|&(tile, destination)| Delivery { tile, destination }).collect(),
            label: format!("t{sender}"),
        }
    }

    fn phase() -> ExchangePhase {
        ExchangePhase {
            transfers: vec![
                transfer(0, 0x80000, 100, &[(1, 0x90000), (5, 0x90000), (15, 0x90100)]),
                transfer(1, 0x80000, 3, &[(0, 0x91000)]),
                transfer(2, 0x80000, 70, &[(0, 0x92000)]),
                transfer(0, 0x80400, 9, &[(1, 0x93000)]),
                transfer(3, 0x80000, 20, &[(4, 0x94000), (0, 0x95000)]),
            ],
        }
    }

    #[test]
    fn scheduled_code_passes_the_check() {
        let target = Target::test_small();
        let phase = phase();
        let schedule = schedule(&target, &phase).unwrap();
        let code = emit(&target, &phase, &schedule).unwrap();
        check(&target, &phase, &code).unwrap();
        assert!(schedule.length > 100);
    }

    #[test]
    fn the_check_catches_a_shifted_listen() {
        let target = Target::test_small();
        let phase = phase();
        let schedule = schedule(&target, &phase).unwrap();
        let mut code = emit(&target, &phase, &schedule).unwrap();
        // Tile 1 starts listening one cycle late: it misses the first word and that word has
        // no listener on tile 1 (tiles 5 and 15 still take it), so a delivery goes missing.
        let position = code[1].instructions.iter().position(|i| i.opcode == Opcode::Delay).unwrap();
        code[1].instructions[position].operands[0] += 1;
        assert!(check(&target, &phase, &code).is_err());
    }

    #[test]
    fn the_check_catches_a_wrong_pointer_and_an_unheard_send() {
        let target = Target::test_small();
        let phase = phase();
        let schedule = schedule(&target, &phase).unwrap();
        let code = emit(&target, &phase, &schedule).unwrap();
        let mut wrong_pointer = code.clone();
        let setzi = wrong_pointer[4].instructions.iter().position(|i| i.opcode == Opcode::Setzi && i.operands[0] == 1).unwrap();
        wrong_pointer[4].instructions[setzi].operands[1] += 4;
        assert!(matches!(check(&target, &phase, &wrong_pointer), Err(ExchangeError::Check { tile: 4, .. })));
        let mut deaf = code;
        deaf[0].instructions.retain(|i| !(i.opcode == Opcode::Put && i.operands[0] == index::INCOMING_MUX as u32));
        assert!(check(&target, &phase, &deaf).is_err());
    }
}
