//! The whole chip: load an [`Image`] on every tile, write the host inputs, run all tiles through
//! bulk-synchronous supersteps with statically scheduled exchange and global syncs, read the
//! outputs, and fill a [`Profile`].
//!
//! Start-up \[A\]: the host writes every image segment that has contents (once per tile) and every
//! input byte over one link of `host.host_load_bytes_per_second` shared by the chip (on the
//! ipu21 the 3.9 GB/s osmarks/ipu-stack measured on a C600 \[S\]); start-up lasts
//! `ceil(bytes · clock / rate)` cycles and every tile starts at its end. Cropped
//! cycles run from the end of start-up to the end of the last cycle that wrote a byte of an output
//! (a store or an exchange delivery into an output piece); an image without outputs has
//! cropped = total − start-up, and one whose outputs are never written has cropped = 0.
//!
//! Tiles run in parallel on a dedicated rayon pool of the requested size; exchange rules and the
//! round scheme that keeps runs bit-identical for any thread count are in [`exchange`]. A tile
//! waiting at a sync is not simulated cycle by cycle: it costs one check per round.

pub mod exchange;

mod accounting;
mod host_io;
mod record;

pub use record::memory_usage;

use crate::error::{HaltedTile, SimError, StuckTile};
use crate::machine::MachineDescription;
use crate::memory::MemoryLayout;
use crate::profile::{PhaseKind, Profile};
use crate::tile::{
    decode_words, DecodedRange, ExchangeView, RawCode, SupervisorStatus, Tile, TileStatus, WORKERS,
};
use rayon::prelude::*;
use record::{TileRecord, Totals};
use std::collections::HashMap;
use std::sync::Arc;
use tessera_isa::image::{BlobId, HostDirection, Image, TileEntry};

/// Where a run is, reported after each global sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunProgress {
    /// Global syncs released so far.
    pub supersteps: u64,
    /// The cycle the last sync released at.
    pub cycle: u64,
    /// The run's cycle budget end (start-up + `max_cycles`).
    pub limit: u64,
}

/// The most host threads a run takes: more than the tiles' rounds can use, bounded so a typo
/// does not hand the pool a hundred thousand threads.
pub const MAX_HOST_THREADS: usize = 512;

/// How to run.
#[derive(Clone, Copy)]
pub struct RunOptions<'a> {
    /// Host threads (`None`: rayon's default, one per core).
    pub threads: Option<usize>,
    /// Cycles the run may take after start-up before it stops with E-SIM-004.
    pub max_cycles: u64,
    /// Called after every global sync.
    pub progress: Option<&'a dyn Fn(&RunProgress)>,
    /// Record every worker's run for the profile's kernel spans. A front end that writes no
    /// profile page or trace turns it off: a many-layer run makes tens of millions of them.
    pub record_kernel_spans: bool,
    /// The simulator's shortcuts that change no result: a tile whose supervisor cannot issue
    /// runs its workers without re-examining the supervisor and the exchange port per bundle,
    /// and the AMP keeps its decoded `$CWEI` lanes between bundles. Off, every bundle takes the
    /// general path — for tests that prove the shortcuts change no bit and no cycle.
    pub fast_paths: bool,
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions {
            threads: None,
            max_cycles: 1_000_000_000,
            progress: None,
            record_kernel_spans: true,
            fast_paths: true,
        }
    }
}

/// The result of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunReport {
    /// Every output of the image, in image order: name and row-major bytes.
    pub outputs: Vec<(String, Vec<u8>)>,
    pub total_cycles: u64,
    pub startup_cycles: u64,
    pub cropped_cycles: u64,
    /// Global syncs released.
    pub supersteps: u64,
    /// Running tiles × cycles after start-up: the work the simulator did, for throughput figures.
    pub tile_cycles: u64,
    /// Rounds the simulator ran: each runs every tile as far as the words it may receive are
    /// known (see [`exchange`]); a host-speed figure, not the chip's.
    pub rounds: u64,
    pub profile: Profile,
}

impl RunReport {
    pub fn output(&self, name: &str) -> Option<&[u8]> {
        self.outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.as_slice())
    }
}

/// A tile of the loaded image and what the current run recorded about it.
pub(crate) struct LoadedTile {
    pub tile: Tile,
    entry: Option<TileEntry>,
    record: TileRecord,
}

/// A simulated chip.
pub struct Chip {
    machine: MachineDescription,
    layout: Arc<MemoryLayout>,
    image: Option<Arc<Image>>,
    decoded: HashMap<BlobId, DecodedRange>,
    tiles: Vec<LoadedTile>,
    /// Tile id → index in `tiles` (`u32::MAX`: the image has nothing on that tile).
    slot_of: Vec<u32>,
    /// `tiles` hold a freshly loaded image (no run has touched them).
    fresh: bool,
}

fn not_modelled(what: String) -> SimError {
    SimError::NotModelled { what }
}

impl Chip {
    /// A chip of `machine`; refuses machine parameters the chip model does not support.
    pub fn new(machine: &MachineDescription) -> Result<Chip, SimError> {
        if machine.exchange.bytes_per_cycle_per_tile != 4 {
            return Err(not_modelled(format!(
                "exchange.bytes_per_cycle_per_tile = {} (the exchange model sends one 4-byte word per cycle per tile)",
                machine.exchange.bytes_per_cycle_per_tile
            )));
        }
        if machine.contexts.workers as usize != WORKERS
            || machine.contexts.issue_slots as usize != WORKERS
        {
            return Err(not_modelled(format!(
                "contexts.workers = {}, contexts.issue_slots = {} (the tile model has {WORKERS} of each)",
                machine.contexts.workers, machine.contexts.issue_slots
            )));
        }
        let layout = MemoryLayout::from_machine(machine).map_err(|e| SimError::Load {
            tile: 0,
            message: e.to_string(),
        })?;
        Ok(Chip {
            machine: machine.clone(),
            layout: Arc::new(layout),
            image: None,
            decoded: HashMap::new(),
            tiles: Vec::new(),
            slot_of: Vec::new(),
            fresh: false,
        })
    }

    pub fn machine(&self) -> &MachineDescription {
        &self.machine
    }

    /// The loaded image.
    pub fn image(&self) -> Option<&Image> {
        self.image.as_deref()
    }

    /// Loads `image` (a copy) on the chip; see [`Chip::load_shared_image`].
    pub fn load_image(&mut self, image: &Image) -> Result<(), SimError> {
        self.load_shared_image(Arc::new(image.clone()))
    }

    /// Loads `image`: checks it was built for this machine, decodes once each code blob that
    /// several code segments hold (the kernels), and builds every tile of the image with its
    /// segments, write-protected code (a blob only one segment holds is decoded when fetched:
    /// see [`crate::tile::CodeCache`]), worker bases and output watches.
    pub fn load_shared_image(&mut self, image: Arc<Image>) -> Result<(), SimError> {
        image.check_machine(&self.machine.fingerprint())?;
        image.validate()?;
        self.decoded.clear();
        let mut uses: HashMap<BlobId, usize> = HashMap::new();
        for tile in &image.tiles {
            for segment in tile.segments.iter().filter(|s| s.category.is_code()) {
                if let Some(blob) = segment.blob {
                    *uses.entry(blob).or_default() += 1;
                }
            }
        }
        for (&blob, _) in uses.iter().filter(|(_, &count)| count > 1) {
            self.decoded.insert(blob, decode_words(image.blob(blob)));
        }
        self.image = Some(image);
        self.instantiate()
    }

    /// The tile `id` of the loaded image (after a run: as the run left it).
    pub fn tile(&self, id: u32) -> Option<&Tile> {
        let slot = *self.slot_of.get(id as usize)?;
        self.tiles.get(slot as usize).map(|t| &t.tile)
    }

    fn instantiate(&mut self) -> Result<(), SimError> {
        let Some(image) = self.image.clone() else {
            return Err(SimError::Load {
                tile: 0,
                message: "no image is loaded".into(),
            });
        };
        self.tiles.clear();
        self.slot_of = vec![u32::MAX; self.machine.tiles as usize];
        for tile_image in &image.tiles {
            let id = tile_image.tile;
            let load_error = |message: String| SimError::Load { tile: id, message };
            let mut tile = Tile::new(id, &self.machine, Arc::clone(&self.layout));
            for segment in &tile_image.segments {
                if let Some(bytes) = image.segment_bytes(segment) {
                    tile.memory
                        .load_unchecked(segment.address, bytes)
                        .map_err(|e| load_error(format!("segment `{}`: {e}", segment.name)))?;
                }
            }
            for segment in tile_image.segments.iter().filter(|s| s.category.is_code()) {
                match segment.blob {
                    Some(blob) => match self.decoded.get(&blob) {
                        Some(slots) => {
                            tile.load_decoded_code(segment.address, Arc::clone(slots))?
                        }
                        None => tile.load_raw_code(
                            segment.address,
                            RawCode::Blob(Arc::clone(&image), blob),
                        )?,
                    },
                    None => tile.load_raw_code(
                        segment.address,
                        RawCode::Bytes(Arc::from(vec![0u8; segment.size as usize])),
                    )?,
                }
            }
            if let Some(bases) = tile_image.worker_bases {
                for (worker, base) in bases.into_iter().enumerate() {
                    tile.supervisor.csr[tessera_isa::csr::index::WORKER0_BASE as usize + worker] =
                        base;
                }
            }
            for tensor in image.host_tensors_of(HostDirection::Output) {
                for piece in tensor.pieces.iter().filter(|p| p.tile == id) {
                    tile.watch.add(piece.address, piece.bytes);
                }
            }
            self.slot_of[id as usize] = self.tiles.len() as u32;
            self.tiles.push(LoadedTile {
                tile,
                entry: tile_image.entry,
                record: TileRecord::default(),
            });
        }
        self.fresh = true;
        Ok(())
    }

    /// Runs the loaded image with `inputs` (every input of the image, by name, as row-major
    /// bytes) and returns the outputs, the cycle counts and the profile.
    pub fn run<N: AsRef<str>, B: AsRef<[u8]>>(
        &mut self,
        inputs: &[(N, B)],
        options: &RunOptions,
    ) -> Result<RunReport, SimError> {
        let Some(image) = self.image.clone() else {
            return Err(SimError::Load {
                tile: 0,
                message: "no image is loaded".into(),
            });
        };
        if !self.fresh {
            self.instantiate()?;
        }
        self.fresh = false;
        let matched = host_io::match_inputs(&image, inputs)?;
        host_io::write_inputs(&image, &matched, &mut self.tiles, &self.slot_of)?;
        let input_bytes: u64 = matched.iter().map(|b| b.len() as u64).sum();
        let startup = self
            .machine
            .host_load_cycles(image.load_bytes() + input_bytes);
        let limit = startup.saturating_add(options.max_cycles);
        for loaded in &mut self.tiles {
            loaded.tile.record_spans = options.record_kernel_spans;
            loaded.tile.fast_paths = options.fast_paths;
            loaded.tile.advance_to(startup);
            loaded.record.span(PhaseKind::Startup, 0, startup);
            if let Some(entry) = loaded.entry {
                loaded
                    .tile
                    .start_supervisor(entry.supervisor, entry.vertex_base);
            }
        }
        if let Some(threads) = options.threads {
            if threads == 0 || threads > MAX_HOST_THREADS {
                return Err(SimError::Limit {
                    what: "host threads",
                    value: threads as u64,
                    limit: MAX_HOST_THREADS as u64,
                });
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads.unwrap_or(0))
            .build()
            .map_err(|e| not_modelled(format!("a host thread pool ({e})")))?;
        let syncs = self.run_supersteps(&pool, startup, limit, options)?;
        let total = self
            .tiles
            .iter()
            .map(|t| t.tile.finished_at())
            .max()
            .unwrap_or(0)
            .max(startup)
            .max(syncs.last_arrival_end);
        let has_outputs = image
            .host_tensors_of(HostDirection::Output)
            .next()
            .is_some();
        let last_output = self
            .tiles
            .iter()
            .filter_map(|t| t.tile.watch.last_write_end())
            .max();
        let cropped = match (has_outputs, last_output) {
            (false, _) => total - startup,
            (true, Some(end)) => end.saturating_sub(startup),
            (true, None) => 0,
        };
        for loaded in &mut self.tiles {
            loaded.tile.spans.sort_by_key(|s| (s.start, s.worker));
        }
        let outputs = host_io::read_outputs(&image, &self.tiles, &self.slot_of)?;
        let running = self.tiles.iter().filter(|t| t.entry.is_some()).count() as u64;
        let totals = Totals {
            total,
            startup,
            cropped,
            syncs: syncs.released,
        };
        let mut profile = record::profile(
            &self.machine,
            &image,
            &mut self.tiles,
            &self.slot_of,
            &totals,
        );
        profile.sync_releases = syncs.releases;
        Ok(RunReport {
            outputs,
            total_cycles: total,
            startup_cycles: startup,
            cropped_cycles: cropped,
            supersteps: syncs.released,
            tile_cycles: running * (total - startup),
            rounds: syncs.rounds,
            profile,
        })
    }

    /// Runs phases until every tile halts; returns the number of syncs and the end of the last
    /// word arrival.
    fn run_supersteps(
        &mut self,
        pool: &rayon::ThreadPool,
        startup: u64,
        limit: u64,
        options: &RunOptions,
    ) -> Result<SyncTotals, SimError> {
        let tiles = self.machine.tiles as usize;
        let mut sent = vec![Vec::new(); tiles];
        let mut progress = vec![u64::MAX; tiles];
        let mut pair_selections = vec![Vec::new(); tiles];
        let mut phase_start = startup;
        let mut totals = SyncTotals {
            released: 0,
            last_arrival_end: 0,
            releases: Vec::new(),
            rounds: 0,
        };
        loop {
            totals.rounds += self.run_phase(
                pool,
                limit,
                options.max_cycles,
                (&mut sent, &mut pair_selections),
                &mut progress,
            )?;
            if let Some(error) = exchange::lane_conflict(&sent, self.machine.exchange.fabric) {
                return Err(error);
            }
            if let Some(error) = exchange::switch_collision(
                self.tiles.iter().map(|t| &t.tile),
                &sent,
                &self.machine.exchange,
            ) {
                return Err(error);
            }
            let unheard = exchange::unheard_words(self.tiles.iter().map(|t| &t.tile), &sent);
            let mut last_arrival_end = 0;
            for loaded in &mut self.tiles {
                let bytes_sent: u64 = sent[loaded.tile.id as usize]
                    .iter()
                    .map(crate::tile::OutgoingWord::bytes)
                    .sum();
                loaded.record.exchange.bytes_sent += bytes_sent;
                loaded.record.exchange.bytes_received += loaded.tile.port.bytes_received;
                loaded.record.exchange.bytes_unheard += 4 * unheard[loaded.tile.id as usize];
                if let Some(arrival) = loaded.tile.port.last_arrival {
                    last_arrival_end = last_arrival_end.max(arrival + 1);
                }
            }
            totals.last_arrival_end = totals.last_arrival_end.max(last_arrival_end);
            let running = || self.tiles.iter().filter(|t| t.entry.is_some());
            let waiting: Vec<StuckTile> = running()
                .filter(|t| t.tile.status() == SupervisorStatus::WaitingGlobalSync)
                .map(|t| StuckTile {
                    tile: t.tile.id,
                    pc: t.tile.supervisor.pc,
                    since: t.tile.global_sync_at(),
                })
                .collect();
            let halted: Vec<HaltedTile> = running()
                .filter(|t| t.tile.status() == SupervisorStatus::Halted)
                .map(|t| HaltedTile {
                    tile: t.tile.id,
                    at: t.tile.finished_at(),
                })
                .collect();
            let traffic = |loaded: &LoadedTile, sent: &[Vec<crate::tile::OutgoingWord>]| {
                !sent[loaded.tile.id as usize].is_empty() || loaded.tile.port.bytes_received > 0
            };
            if waiting.is_empty() {
                for loaded in self.tiles.iter_mut().filter(|t| t.entry.is_some()) {
                    let kind = if traffic(loaded, &sent) {
                        PhaseKind::Exchange
                    } else {
                        PhaseKind::Compute
                    };
                    let end = loaded.tile.finished_at();
                    loaded.record.span(kind, phase_start, end);
                }
                return Ok(totals);
            }
            if !halted.is_empty() {
                return Err(SimError::SyncNeverReached {
                    sync: totals.released + 1,
                    waiting,
                    halted,
                });
            }
            let arrival = |t: &Tile| t.global_sync_arrival();
            let last_tile = self
                .tiles
                .iter()
                .filter(|t| t.entry.is_some())
                .map(|t| arrival(&t.tile))
                .max()
                .unwrap_or(phase_start);
            let release = exchange::global_sync_release(
                last_tile,
                last_arrival_end,
                self.machine.sync.global_sync_latency_cycles,
            );
            for loaded in self.tiles.iter_mut() {
                if loaded.entry.is_some() {
                    let kind = if traffic(loaded, &sent) {
                        PhaseKind::Exchange
                    } else {
                        PhaseKind::Compute
                    };
                    let at = arrival(&loaded.tile);
                    loaded.record.span(kind, phase_start, at);
                    loaded.record.span(PhaseKind::Sync, at, release);
                }
                loaded.tile.port.start_phase();
                loaded.tile.exchange_csr_writes.clear();
                loaded.tile.release_global_sync(release);
            }
            // Released, not only cleared: a tile's largest phase would otherwise hold its
            // capacity for the whole run (a word is 24 bytes here).
            for words in &mut sent {
                *words = Vec::new();
            }
            for selections in &mut pair_selections {
                selections.clear();
            }
            totals.released += 1;
            totals.releases.push(release);
            phase_start = release;
            if let Some(report) = options.progress {
                report(&RunProgress {
                    supersteps: totals.released,
                    cycle: release,
                    limit,
                });
            }
        }
    }

    /// Runs rounds until every tile halted or waits at the sync and every word has arrived;
    /// returns the number of rounds.
    fn run_phase(
        &mut self,
        pool: &rayon::ThreadPool,
        limit: u64,
        budget: u64,
        (sent, pair_selections): (
            &mut [Vec<crate::tile::OutgoingWord>],
            &mut [Vec<crate::tile::PairSelection>],
        ),
        progress: &mut [u64],
    ) -> Result<u64, SimError> {
        let mut rounds = 0;
        loop {
            rounds += 1;
            let mut all_parked = true;
            for loaded in &self.tiles {
                let parked = loaded.tile.is_parked();
                all_parked &= parked;
                progress[loaded.tile.id as usize] = if parked {
                    u64::MAX
                } else {
                    loaded.tile.cycle()
                };
            }
            let view = ExchangeView {
                sent,
                progress,
                pair_selections,
            };
            let statuses: Vec<Result<TileStatus, SimError>> = pool.install(|| {
                self.tiles
                    .par_iter_mut()
                    .map(|loaded| loaded.tile.run_with(limit, &view))
                    .collect()
            });
            for (loaded, status) in self.tiles.iter().zip(statuses) {
                if status? == TileStatus::CycleLimit {
                    let tile = &loaded.tile;
                    let startup = limit - budget;
                    return Err(SimError::CycleBudget {
                        tile: tile.id,
                        budget,
                        stuck: format!(
                            "at cycle {} ({} after start-up): {}",
                            tile.cycle(),
                            tile.cycle().saturating_sub(startup),
                            tile.running_contexts()
                                .unwrap_or_else(|| "no context runs".into())
                        ),
                    });
                }
            }
            for loaded in &mut self.tiles {
                if !loaded.tile.outbox.is_empty() {
                    sent[loaded.tile.id as usize].append(&mut loaded.tile.outbox);
                }
                if !loaded.tile.port.pair_outbox.is_empty() {
                    pair_selections[loaded.tile.id as usize]
                        .append(&mut loaded.tile.port.pair_outbox);
                }
            }
            if all_parked {
                return Ok(rounds);
            }
        }
    }
}

struct SyncTotals {
    released: u64,
    last_arrival_end: u64,
    /// The cycle every global sync released at, in order.
    releases: Vec<u64>,
    /// Rounds run over all phases.
    rounds: u64,
}
