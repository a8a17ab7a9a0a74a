//! Running an assembled object on one tile: load sections, decode code, start the supervisor or
//! one worker, run to completion (releasing global syncs as a one-tile chip would: with the
//! chip's rule, [`crate::chip::exchange::global_sync_release`]).

use crate::chip::exchange::global_sync_release;
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
    Worker {
        entry: u32,
        vertex: u32,
        worker_base: u32,
    },
}

/// Builds a tile of `machine` holding `object`'s sections, with code decoded and protected.
pub fn load_object(
    machine: &MachineDescription,
    object: &Object,
    tile_id: u32,
) -> Result<Tile, SimError> {
    let layout = Arc::new(
        MemoryLayout::from_machine(machine).map_err(|e| SimError::Load {
            tile: tile_id,
            message: e.to_string(),
        })?,
    );
    let mut tile = Tile::new(tile_id, machine, layout);
    for section in &object.sections {
        tile.memory
            .load_unchecked(section.address, &section.bytes)
            .map_err(|e| SimError::Load {
                tile: tile_id,
                message: format!("section {}: {e}", section.name),
            })?;
    }
    for section in &object.sections {
        if section.has_code && !section.bytes.is_empty() {
            tile.load_code(section.address, section.bytes.len() as u32)?;
        }
    }
    Ok(tile)
}

/// Starts `tile` in `mode` and runs it to the end. The run must end by `max_cycles` (its last
/// activity, such as a worker bundle's round, included); otherwise it stops with E-SIM-004,
/// naming every context still running with its pc and instruction.
pub fn run_tile(
    machine: &MachineDescription,
    tile: &mut Tile,
    mode: EntryMode,
    max_cycles: u64,
) -> Result<u64, SimError> {
    match mode {
        EntryMode::Supervisor { entry, vertex } => tile.start_supervisor(entry, vertex),
        EntryMode::Worker {
            entry,
            vertex,
            worker_base,
        } => tile.start_worker_from_host(entry, vertex, worker_base),
    }
    loop {
        match tile.run(max_cycles)? {
            TileStatus::Halted => return Ok(tile.finished_at()),
            TileStatus::WaitingGlobalSync => {
                // A one-tile chip: this tile's arrival and the words it received decide.
                let last_word_end = tile.port.last_arrival.map_or(0, |arrival| arrival + 1);
                let release = global_sync_release(
                    tile.global_sync_arrival(),
                    last_word_end,
                    machine.sync.global_sync_latency_cycles,
                );
                tile.release_global_sync(release);
            }
            // A one-tile run has no exchange view, so nothing can block it; run on.
            TileStatus::Blocked => continue,
            TileStatus::CycleLimit => {
                return Err(SimError::CycleBudget {
                    tile: tile.id,
                    budget: max_cycles,
                    stuck: format!(
                        "at cycle {}: {}",
                        tile.cycle(),
                        tile.running_contexts()
                            .unwrap_or_else(|| "no context runs".into())
                    ),
                })
            }
        }
    }
}
