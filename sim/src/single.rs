//! Running an assembled object on one tile: load sections, decode code, start the supervisor or
//! one worker, run to completion (releasing global syncs as a one-tile chip would).

use crate::error::SimError;
use crate::machine::MachineDescription;
use crate::memory::MemoryLayout;
use crate::tile::{Tile, TileStatus};
use std::sync::Arc;
use tessera_isa::asm::object::Object;

/// How the program starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryMode {
    /// The supervisor starts at `entry` with `$mvertex_base = vertex`; it ends with `br $m10`.
    Supervisor { entry: u32, vertex: u32 },
    /// Worker 0 starts at `entry` with `$mvertex_base = vertex`; the run ends when it exits.
    Worker { entry: u32, vertex: u32, worker_base: u32 },
}

/// Builds a tile of `machine` holding `object`'s sections, with code decoded and protected.
pub fn load_object(machine: &MachineDescription, object: &Object, tile_id: u32) -> Result<Tile, SimError> {
    let layout = Arc::new(MemoryLayout::from_machine(machine).map_err(|e| SimError::Load { tile: tile_id, message: e.to_string() })?);
    let mut tile = Tile::new(tile_id, machine, layout);
    for section in &object.sections {
        tile.memory
            .load_unchecked(section.address, &section.bytes)
            .map_err(|e| SimError::Load { tile: tile_id, message: format!("section {}: {e}", section.name) })?;
    }
    for section in &object.sections {
        if section.has_code && !section.bytes.is_empty() {
            tile.load_code(section.address, section.bytes.len() as u32)?;
        }
    }
    Ok(tile)
}

/// Starts `tile` in `mode` and runs it to the end, or until `max_cycles`.
pub fn run_tile(machine: &MachineDescription, tile: &mut Tile, mode: EntryMode, max_cycles: u64) -> Result<u64, SimError> {
    match mode {
        EntryMode::Supervisor { entry, vertex } => tile.start_supervisor(entry, vertex),
        EntryMode::Worker { entry, vertex, worker_base } => tile.start_worker_from_host(entry, vertex, worker_base),
    }
    loop {
        match tile.run(max_cycles)? {
            TileStatus::Halted => return Ok(tile.finished_at()),
            TileStatus::WaitingGlobalSync => {
                let release = tile.cycle() + machine.sync.global_sync_latency_cycles as u64;
                tile.release_global_sync(release);
            }
            // A one-tile run has no exchange view, so nothing can block it; run on.
            TileStatus::Blocked => continue,
            TileStatus::CycleLimit => {
                return Err(SimError::CycleBudget {
                    tile: tile.id,
                    budget: max_cycles,
                    stuck: format!("supervisor {:?} at pc {:#x}", tile.status(), tile.supervisor.pc),
                })
            }
        }
    }
}
