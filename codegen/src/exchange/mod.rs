//! Exchange scheduling: turning a phase's transfers (who sends which words to whom) into
//! cycle-timed supervisor code on every tile, and an independent checker that re-derives every
//! word's journey from that code.
//!
//! The exchange is statically scheduled: a word carries no destination; a receiver accepts
//! whatever its incoming mux selects at the word's arrival cycle. So the compiler must place, for
//! every transfer, the sender's `send` and every receiver's `put $INCOMING_SINIT` /
//! `put $INCOMING_MUX` at exact cycles (the simulator's rules are in
//! `sim/src/chip/exchange.rs`; the timing of the supervisor instructions used here is below).
//!
//! Code shape for one transfer of `n` words from tile S starting at cycle `s`, received by R
//! (arrival `a = s + latency(S, R)`, listening ends at `e = a + max(n, 7)`):
//!
//! | tile | cycle | instruction | busy until |
//! |---|---|---|---|
//! | S | `s`, `s+64`, … | `send min(64, left)-1, address, 0` | one cycle per word |
//! | R | `a-8` | `setzi $m1, destination` | `a-7` |
//! | R | `a-7` | `put $INCOMING_SINIT, $m1` | `a-1` (CSR write stall 6) |
//! | R | `a-1` | `setzi $m0, S+1` | `a` |
//! | R | `a` | `put $INCOMING_MUX, $m0` | `a+6` |
//! | R | `e-1` | `setzi $m0, 0` | `e` |
//! | R | `e` | `put $INCOMING_MUX, $m0` (stop listening) | `e+6` |
//!
//! With the hardware's timed receive streams (`schedule::ReceiveControls::TimedStreams`, what
//! the compiler emits where it can) the same three controls are `delaypic`/`delayxpic` or ride
//! on a `sendpic`, and the two mux events come `Target::mux_lead(R)` cycles before `a` and `e`
//! (on the ipu21 the mux selection leads the words by 52 + 2·row(R), so the selection may come
//! before the sender's first word: `a − lead = s + T(S, R) + 1`).
//!
//! Gaps are filled with `delay`. Because a receiver listening to S accepts *every* word of S that
//! arrives, a sender sends nothing else for `max(n, 7)` cycles, and a receiver listens exactly
//! during its windows. The scheduler is a deterministic greedy list scheduler: transfers in the
//! given order, each at the earliest start where the sender's wires, every receiver's supervisor
//! and every receiver's port are free.

pub mod check;
pub mod emit;
pub mod schedule;
pub mod spread;

use serde::{Deserialize, Serialize};

/// One receiver of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub tile: u32,
    /// Byte address (4-aligned) of the first word on the receiver.
    pub destination: u32,
}

/// Words moved in one exchange phase: `words` 32-bit words from `source` on `sender` to every
/// delivery (one sender to many receivers is a broadcast).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transfer {
    pub sender: u32,
    pub source: u32,
    pub words: u32,
    pub deliveries: Vec<Delivery>,
    /// What it carries (for reports and errors).
    pub label: String,
}

/// The transfers of one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExchangePhase {
    pub transfers: Vec<Transfer>,
}

impl ExchangePhase {
    pub fn bytes(&self) -> u64 {
        self.transfers.iter().map(|t| t.words as u64 * 4).sum()
    }

    /// How the phase loads its busiest tiles (for traces: a schedule much longer than the
    /// busiest receiver's or sender's words is lost to ordering, not to bandwidth).
    pub fn load(&self) -> PhaseLoad {
        use std::collections::HashMap;
        let mut received: HashMap<u32, (u64, u32)> = HashMap::new();
        let mut sent: HashMap<u32, (u64, u32)> = HashMap::new();
        let mut deliveries = 0u64;
        for t in &self.transfers {
            let s = sent.entry(t.sender).or_default();
            (s.0, s.1) = (s.0 + u64::from(t.words), s.1 + 1);
            for d in &t.deliveries {
                let r = received.entry(d.tile).or_default();
                (r.0, r.1) = (r.0 + u64::from(t.words), r.1 + 1);
                deliveries += 1;
            }
        }
        let busiest = |m: &HashMap<u32, (u64, u32)>| {
            m.iter()
                .map(|(&tile, &(words, transfers))| (words, transfers, tile))
                .max()
                .map(|(words, transfers, tile)| TileLoad {
                    tile,
                    words,
                    transfers,
                })
                .unwrap_or_default()
        };
        PhaseLoad {
            transfers: self.transfers.len(),
            deliveries,
            receiver: busiest(&received),
            sender: busiest(&sent),
        }
    }
}

/// [`ExchangePhase::load`]: its transfers and its busiest receiver and sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseLoad {
    pub transfers: usize,
    /// Transfers times their receivers.
    pub deliveries: u64,
    pub receiver: TileLoad,
    pub sender: TileLoad,
}

/// The words and transfers one tile receives or sends in a phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileLoad {
    pub tile: u32,
    pub words: u64,
    pub transfers: u32,
}

impl std::fmt::Display for PhaseLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (r, s) = (self.receiver, self.sender);
        write!(
            f,
            "{} transfers, {} deliveries; busiest receiver tile {} {} words in {} transfers, \
             busiest sender tile {} {} words in {} transfers",
            self.transfers,
            self.deliveries,
            r.tile,
            r.words,
            r.transfers,
            s.tile,
            s.words,
            s.transfers
        )
    }
}

/// Why a phase could not be scheduled or failed the check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    #[error("E-XCH-001 transfer `{label}`: {reason}")]
    BadTransfer { label: String, reason: String },
    #[error("E-XCH-002 check: tile {tile} cycle {cycle}: {reason}")]
    Check {
        tile: u32,
        cycle: u64,
        reason: String,
    },
    #[error("E-XCH-003 check: transfer `{label}` word {word} never reached tile {tile} at {destination:#x}")]
    Missing {
        label: String,
        word: u32,
        tile: u32,
        destination: u32,
    },
    #[error(
        "E-XCH-004 check: tile {tile} word sent at cycle {cycle} from {address:#x} has no listener"
    )]
    NoListener { tile: u32, cycle: u64, address: u32 },
}
