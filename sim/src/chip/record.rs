//! What a run records per tile for the [`Profile`]: phase spans between syncs, traffic, and the
//! assembly of the profile at the end (kernel spans named from the image's symbols, SRAM use
//! from its segments).

use super::{accounting, LoadedTile};
use crate::machine::MachineDescription;
use crate::profile::{KernelSpan, PhaseKind, PhaseSpan, Profile, TileExchange, TileMemoryUsage};
use std::collections::BTreeMap;
use tessera_isa::image::Image;

/// Per-tile records of one run.
#[derive(Clone, Debug, Default)]
pub(super) struct TileRecord {
    pub phases: Vec<PhaseSpan>,
    pub exchange: TileExchange,
}

impl TileRecord {
    /// Adds `[start, end)` of `kind` when it is not empty.
    pub fn span(&mut self, kind: PhaseKind, start: u64, end: u64) {
        if end > start {
            self.phases.push(PhaseSpan { kind, start, end });
        }
    }
}

/// The cycle totals of a run.
pub(super) struct Totals {
    pub total: u64,
    pub startup: u64,
    pub cropped: u64,
    pub syncs: u64,
}

/// Address → name for each symbol table (the first name in name order wins).
fn symbol_names(image: &Image) -> Vec<BTreeMap<u32, &str>> {
    image
        .symbol_tables
        .iter()
        .map(|table| {
            let mut names = BTreeMap::new();
            for (name, &address) in &table.symbols {
                names.entry(address).or_insert(name.as_str());
            }
            names
        })
        .collect()
}

/// Builds the profile of a finished run, taking the tiles' worker spans (a run of many layers
/// has tens of millions; they are not kept twice).
pub(super) fn profile(
    machine: &MachineDescription,
    image: &Image,
    tiles: &mut [LoadedTile],
    slot_of: &[u32],
    totals: &Totals,
) -> Profile {
    let count = machine.tiles as usize;
    let names = symbol_names(image);
    let mut profile = Profile {
        machine: machine.name.clone(),
        clock_hz: machine.clock_hz,
        tiles: machine.tiles,
        total_cycles: totals.total,
        startup_cycles: totals.startup,
        cropped_cycles: totals.cropped,
        phases: vec![Vec::new(); count],
        kernels: vec![Vec::new(); count],
        memory: Vec::with_capacity(count),
        exchange: vec![TileExchange::default(); count],
        syncs: totals.syncs,
        bundles: vec![0; count],
        sync_releases: Vec::new(),
        superstep_names: Vec::new(),
        operations: Vec::new(),
    };
    for id in 0..machine.tiles {
        let loaded = slot_of
            .get(id as usize)
            .copied()
            .filter(|&s| s != u32::MAX)
            .and_then(|s| tiles.get_mut(s as usize));
        let tile_image = image.tile(id);
        profile.memory.push(match tile_image {
            Some(t) => accounting::tile_usage(machine, id, Some(t)),
            None => accounting::tile_usage(machine, id, None),
        });
        let index = id as usize;
        match loaded {
            Some(loaded) => {
                profile.phases[index] = loaded.record.phases.clone();
                profile.exchange[index] = loaded.record.exchange;
                profile.bundles[index] = loaded.tile.counters.bundles;
                let tables: Vec<&BTreeMap<u32, &str>> = tile_image
                    .map(|t| {
                        t.symbols
                            .iter()
                            .filter_map(|id| names.get(id.0 as usize))
                            .collect()
                    })
                    .unwrap_or_default();
                let mut named: BTreeMap<u32, std::sync::Arc<str>> = BTreeMap::new();
                profile.kernels[index] = std::mem::take(&mut loaded.tile.spans)
                    .into_iter()
                    .map(|span| KernelSpan {
                        worker: span.worker,
                        name: named
                            .entry(span.entry)
                            .or_insert_with(|| {
                                tables
                                    .iter()
                                    .find_map(|t| t.get(&span.entry))
                                    .map_or_else(
                                        || format!("{:#x}", span.entry),
                                        |n| (*n).to_string(),
                                    )
                                    .into()
                            })
                            .clone(),
                        start: span.start,
                        end: span.end,
                        vertex: span.vertex,
                    })
                    .collect();
            }
            None => {
                if totals.startup > 0 {
                    profile.phases[index].push(PhaseSpan {
                        kind: PhaseKind::Startup,
                        start: 0,
                        end: totals.startup,
                    });
                }
            }
        }
    }
    profile
}

/// The memory usage of every tile of `image` on `machine` (for reports before a run).
pub fn memory_usage(machine: &MachineDescription, image: &Image) -> Vec<TileMemoryUsage> {
    (0..machine.tiles)
        .map(|id| accounting::tile_usage(machine, id, image.tile(id)))
        .collect()
}
