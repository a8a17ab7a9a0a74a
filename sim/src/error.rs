//! Errors a simulation run reports: traps with where and when they happened, and run-level faults
//! (exchange faults, syncs that cannot complete, cycle budgets, host I/O and image problems).

use crate::memory::MemoryFault;
use std::fmt::Write as _;
use tessera_isa::image::ImageError;
use thiserror::Error;

/// Where a trap happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrapSite {
    pub tile: u32,
    pub context: &'static str,
    pub pc: u32,
    /// The bundle in assembly form (or the raw words when it does not decode).
    pub instruction: String,
    pub cycle: u64,
}

/// A tile waiting at a global sync that cannot complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StuckTile {
    pub tile: u32,
    /// The supervisor's pc (the instruction after the `sync`).
    pub pc: u32,
    /// The cycle its `sync` issued.
    pub since: u64,
}

/// A tile that ended its program instead of reaching a global sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HaltedTile {
    pub tile: u32,
    /// The cycle its last activity ended.
    pub at: u64,
}

/// Tiles listed in full in a message; the rest are counted.
const LISTED_TILES: usize = 8;

fn list<T>(items: &[T], mut one: impl FnMut(&T) -> String) -> String {
    let mut text = items
        .iter()
        .take(LISTED_TILES)
        .map(&mut one)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LISTED_TILES {
        let _ = write!(text, " and {} more", items.len() - LISTED_TILES);
    }
    text
}

fn stuck_text(waiting: &[StuckTile], halted: &[HaltedTile]) -> String {
    format!(
        "{} tile(s) wait at it ({}) but {} tile(s) halted without reaching it ({})",
        waiting.len(),
        list(waiting, |t| format!(
            "tile {} at pc {:#x} since cycle {}",
            t.tile, t.pc, t.since
        )),
        halted.len(),
        list(halted, |t| format!("tile {} at cycle {}", t.tile, t.at)),
    )
}

/// Why a simulation stopped abnormally.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    #[error("E-SIM-001 trap on tile {} ({}) at pc {:#x} `{}` cycle {}: {kind}", site.tile, site.context, site.pc, site.instruction, site.cycle)]
    Trap {
        site: TrapSite,
        kind: tessera_isa::semantics::TrapKind,
    },
    #[error(
        "E-SIM-002 tile {tile} ({context}) fetched pc {pc:#x} at cycle {cycle}, which is not code"
    )]
    NotCode {
        tile: u32,
        context: &'static str,
        pc: u32,
        cycle: u64,
    },
    #[error("E-SIM-003 tile {tile} ({context}) at pc {pc:#x} cycle {cycle}: {error}")]
    Decode {
        tile: u32,
        context: &'static str,
        pc: u32,
        cycle: u64,
        error: tessera_isa::inst::emit::DecodeError,
    },
    #[error("E-SIM-004 cycle budget of {budget} cycles exceeded on tile {tile} ({stuck})")]
    CycleBudget {
        tile: u32,
        budget: u64,
        stuck: String,
    },
    #[error("E-SIM-005 loading tile {tile}: {message}")]
    Load { tile: u32, message: String },
    #[error("E-SIM-006 tile {tile}: the supervisor waits on a local sync at pc {pc:#x} but no worker is running and none can start")]
    Deadlock { tile: u32, pc: u32 },
    #[error("E-SIM-008 exchange collision: two senders reach tile {receiver} in cycle {cycle}: {detail}")]
    ExchangeCollision {
        receiver: u32,
        cycle: u64,
        first_sender: u32,
        second_sender: u32,
        detail: String,
    },
    #[error("E-SIM-009 exchange: tile {receiver} receives a word from tile {sender} at cycle {cycle} into {address:#x}: {fault}")]
    ExchangeReceive {
        receiver: u32,
        sender: u32,
        cycle: u64,
        address: u32,
        fault: MemoryFault,
    },
    #[error("E-SIM-017 exchange: tile {receiver} receives a word from tile {sender} at cycle {cycle} into {address:#x}, in memory element {element}, which its supervisor fetches its instructions from (at {fetch:#x}): the hardware's receive error CLASH_IFETCH")]
    ExchangeFetchClash {
        receiver: u32,
        sender: u32,
        cycle: u64,
        address: u32,
        element: u32,
        fetch: u32,
    },
    #[error("E-SIM-010 exchange: tile {receiver}'s paired receive of tile {sender}'s words at cycle {cycle}: {detail}")]
    ExchangePaired {
        receiver: u32,
        sender: u32,
        cycle: u64,
        detail: String,
    },
    #[error("E-SIM-016 exchange: tile {sender} sends a 64-bit item at cycle {cycle} on its partner tile {partner}'s lane, and tile {partner} sends a word in that cycle")]
    ExchangeLaneBusy {
        sender: u32,
        partner: u32,
        cycle: u64,
    },
    #[error(
        "E-SIM-011 global sync {sync} can never complete: {}",
        stuck_text(waiting, halted)
    )]
    SyncNeverReached {
        sync: u64,
        waiting: Vec<StuckTile>,
        halted: Vec<HaltedTile>,
    },
    #[error("E-SIM-012 not modelled: {what}")]
    NotModelled { what: String },
    #[error("E-SIM-013 host tensor `{name}`: {problem}")]
    HostIo { name: String, problem: String },
    #[error("E-SIM-014 image: {0}")]
    Image(#[from] ImageError),
    #[error("E-SIM-015 {what} {value} is outside the limit 1..={limit}")]
    Limit {
        what: &'static str,
        value: u64,
        limit: u64,
    },
}
