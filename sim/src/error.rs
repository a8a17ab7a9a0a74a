//! Errors a simulation run reports: traps with where and when they happened, and run-level faults.

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

/// Why a simulation stopped abnormally.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    #[error("E-SIM-001 trap on tile {} ({}) at pc {:#x} `{}` cycle {}: {kind}", site.tile, site.context, site.pc, site.instruction, site.cycle)]
    Trap { site: TrapSite, kind: tessera_isa::semantics::TrapKind },
    #[error("E-SIM-002 tile {tile} ({context}) fetched pc {pc:#x} at cycle {cycle}, which is not code")]
    NotCode { tile: u32, context: &'static str, pc: u32, cycle: u64 },
    #[error("E-SIM-003 tile {tile} ({context}) at pc {pc:#x} cycle {cycle}: {error}")]
    Decode { tile: u32, context: &'static str, pc: u32, cycle: u64, error: tessera_isa::inst::emit::DecodeError },
    #[error("E-SIM-004 cycle budget of {budget} cycles exceeded on tile {tile} ({stuck})")]
    CycleBudget { tile: u32, budget: u64, stuck: String },
    #[error("E-SIM-005 loading tile {tile}: {message}")]
    Load { tile: u32, message: String },
    #[error("E-SIM-006 tile {tile}: the supervisor waits on a local sync at pc {pc:#x} but no worker is running and none can start")]
    Deadlock { tile: u32, pc: u32 },
}
