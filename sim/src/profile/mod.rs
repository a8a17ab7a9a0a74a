//! What a run records for people to read: per-tile supersteps, per-worker kernel spans, SRAM use
//! by category, exchange traffic, and the cycle totals (total and cropped). The chip fills a
//! [`Profile`]; `html.rs` and `trace.rs` write it out, `report.rs` summarises it as text.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

pub mod html;
pub mod report;
pub mod trace;

pub use html::write_html;
pub use trace::write_trace;

/// Writes `profile.html` and `trace.json` (all tiles, with kernel spans) into `dir`, creating it.
pub fn write_profile(dir: &Path, profile: &Profile) -> std::io::Result<()> {
    write_profile_with(dir, profile, &trace::TraceOptions::default())
}

/// [`write_profile`] with a choice of what goes into `trace.json` (e.g. a tile range).
/// The two files are written in parallel: a full-chip trace is tens of megabytes.
pub fn write_profile_with(
    dir: &Path,
    profile: &Profile,
    trace_options: &trace::TraceOptions,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let (html, trace) = rayon::join(
        || write_html(File::create(dir.join("profile.html"))?, profile),
        || {
            write_trace(
                File::create(dir.join("trace.json"))?,
                profile,
                trace_options,
            )
        },
    );
    html.and(trace)
}

/// The kind of a superstep phase on one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PhaseKind {
    /// Loading code, weights and inputs before the program runs.
    Startup,
    /// Between syncs, no exchange traffic on this tile.
    Compute,
    /// Between syncs, this tile sent or received exchange words.
    Exchange,
    /// Waiting at a global sync for the other tiles (arrival to release).
    Sync,
}

/// A span of one phase on one tile, in cycles `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseSpan {
    pub kind: PhaseKind,
    pub start: u64,
    pub end: u64,
}

/// One worker's run of a kernel, from launch to exit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSpan {
    pub worker: u8,
    /// The entry symbol's name (or its address in hex when no symbol names it); a compiler
    /// front end may rename it after the op it ran for. Shared: a full run has millions of
    /// spans and a few hundred names.
    pub name: std::sync::Arc<str>,
    pub start: u64,
    pub end: u64,
    /// `$mvertex_base` at launch (identifies the call whose vertex state the worker read).
    #[serde(default)]
    pub vertex: u32,
}

/// SRAM use of one tile.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileMemoryUsage {
    pub tile: u32,
    /// Bytes by category name ("code", "vertex state", "tensor:NAME", "exchange program",
    /// "worker scratch", "host data", "constants", "padding").
    pub categories: BTreeMap<String, u64>,
    pub used: u64,
    pub free: u64,
    /// Largest free contiguous range per region name.
    pub largest_free: BTreeMap<String, u64>,
}

/// Exchange traffic of one tile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileExchange {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Bytes this tile sent that no tile received (legal on the hardware).
    #[serde(default)]
    pub bytes_unheard: u64,
}

/// Everything a run reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub machine: String,
    pub clock_hz: u64,
    pub tiles: u32,
    /// From cycle 0 (start of loading) to the end of the last activity on any tile.
    pub total_cycles: u64,
    /// Cycles spent loading code, weights and inputs (and any first syncs).
    pub startup_cycles: u64,
    /// From the end of start-up to the last write of an output.
    pub cropped_cycles: u64,
    /// Per tile, in time order.
    pub phases: Vec<Vec<PhaseSpan>>,
    /// Per tile, in time order.
    pub kernels: Vec<Vec<KernelSpan>>,
    /// Per tile.
    pub memory: Vec<TileMemoryUsage>,
    /// Per tile.
    pub exchange: Vec<TileExchange>,
    /// Number of global syncs.
    pub syncs: u64,
    /// Bundles issued per tile.
    pub bundles: Vec<u64>,
    /// The cycle each global sync released at, in order: superstep `k` runs from release
    /// `k − 1` (or the end of start-up) to release `k`.
    #[serde(default)]
    pub sync_releases: Vec<u64>,
    /// Optional names of the supersteps (a compiler's op labels), shown in the page and trace.
    #[serde(default)]
    pub superstep_names: Vec<String>,
    /// Optional cycles by operation, from a compiler that knows which ops each superstep ran
    /// (the page shows them as a table).
    #[serde(default)]
    pub operations: Vec<OperationCycles>,
}

/// Simulated and estimated cycles of one operation of a compiled program.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationCycles {
    pub name: String,
    pub simulated: u64,
    pub estimated: u64,
    /// How many ops of the program it sums (e.g. the same op of every layer).
    pub count: u32,
}

impl Profile {
    pub fn seconds(&self, cycles: u64) -> f64 {
        cycles as f64 / self.clock_hz.max(1) as f64
    }

    pub fn total_exchange_bytes(&self) -> u64 {
        self.exchange.iter().map(|e| e.bytes_sent).sum()
    }

    /// Tiles sorted by busy (compute + exchange) cycles, busiest first.
    pub fn busiest_tiles(&self, count: usize) -> Vec<(u32, u64)> {
        let mut busy: Vec<(u32, u64)> = self
            .phases
            .iter()
            .enumerate()
            .map(|(tile, spans)| {
                let cycles = spans
                    .iter()
                    .filter(|s| matches!(s.kind, PhaseKind::Compute | PhaseKind::Exchange))
                    .map(|s| s.end - s.start)
                    .sum();
                (tile as u32, cycles)
            })
            .collect();
        busy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        busy.truncate(count);
        busy
    }
}
