//! Exact cycle counts of small tile programs, each derived in a comment from the timing rules
//! documented at the top of `sim/src/tile/mod.rs` (from `docs/reference/isa.md` §1 and §6) and
//! the ipu21 machine file (every supervisor stall is 6 cycles), plus trap reports and
//! determinism. Programs are assembled with `assemble_str` and run with `single::run_tile`.
//!
//! Rules used below (ipu21):
//! - R1 tile cycle `c` is issue slot `c % 6`; worker `n` always issues in slot `n`, once per round.
//! - R2 a worker launched at cycle `L` first issues at the first cycle `>= L` of its slot; a
//!   worker-only run launches worker 0 at cycle 0.
//! - R3 a worker bundle issued at cycle `c` completes at the end of its round,
//!   `c - c % 6 + 6`; a run's cycle count is the end of the last activity (a worker's round end or
//!   a supervisor issue + 1).
//! - R4 the supervisor issues in every slot no running worker holds, one bundle per cycle; it is
//!   suspended while all six workers run.
//! - R5 supervisor stalls (next issue no earlier than issue + 6): taken branch, CSR write (`put`),
//!   `run`/`runall`, `sync` (released at once when no worker runs, otherwise 6 cycles after the
//!   last worker's exit issues); an instruction reading a register loaded by a supervisor load
//!   waits until load + 6, however many instructions lie between them (a later non-load write
//!   of the register ends the wait); `delay n` occupies n + 1 cycles.
//! - R6 `run`/`runall` issued at `c` launch the workers at `c + 1`; `br $m10` to the host return
//!   address (0) ends the supervisor.
//! - R7 a global sync (`sync 3`) on one tile is released as on a one-tile chip: at
//!   `max(sync issue + 1, the end of the last worker round) + 90` (ipu21's latency).
//! - R8 the cycle budget bounds the run's length: a run whose last activity ends after it (a
//!   worker bundle's round included) is an E-SIM-004 error.

use tessera_isa::asm::{assemble_str, Object};
use tessera_sim::single::{load_object, run_tile, EntryMode};
use tessera_sim::tile::{Tile, WorkerSpan, WORKERS};
use tessera_sim::{MachineDescription, SimError};

const BUDGET: u64 = 10_000_000;
/// Per-worker scratch ($mworker_base) for these runs: the top of the interleaved region.
const SCRATCH: u32 = 0xE0000;

fn ipu21() -> MachineDescription {
    MachineDescription::builtin("ipu21").expect("ipu21 is valid")
}

fn assemble(source: &str) -> Object {
    assemble_str(source)
        .unwrap_or_else(|errors| panic!("assembly failed:\n{errors}\n--- source ---\n{source}"))
}

fn symbol(object: &Object, name: &str) -> u32 {
    object
        .symbol(name)
        .unwrap_or_else(|| panic!("no symbol `{name}`"))
        .address
}

/// Loads `object` on tile 0 with every worker's scratch base set, as `tile_program` does.
fn load(machine: &MachineDescription, object: &Object) -> Tile {
    let mut tile = load_object(machine, object, 0).expect("object loads");
    for worker in 0..WORKERS {
        tile.supervisor.csr[tessera_isa::csr::index::WORKER0_BASE as usize + worker] =
            SCRATCH + 256 * worker as u32;
    }
    tile
}

/// Runs `source` on tile 0 from the entry mode `mode` makes of the address of `entry`.
fn try_run(
    source: &str,
    entry: &str,
    budget: u64,
    mode: impl FnOnce(u32) -> EntryMode,
) -> (Result<u64, SimError>, Tile, Object) {
    try_run_on(&ipu21(), source, entry, budget, mode)
}

/// [`try_run`] on `machine`.
fn try_run_on(
    machine: &MachineDescription,
    source: &str,
    entry: &str,
    budget: u64,
    mode: impl FnOnce(u32) -> EntryMode,
) -> (Result<u64, SimError>, Tile, Object) {
    let object = assemble(source);
    let mut tile = load(machine, &object);
    let mode = mode(symbol(&object, entry));
    let result = run_tile(machine, &mut tile, mode, budget);
    (result, tile, object)
}

/// The cycles of a run that must succeed (else the error, with the source).
fn expect_cycles(source: &str, run: (Result<u64, SimError>, Tile, Object)) -> (u64, Tile, Object) {
    let (result, tile, object) = run;
    let cycles = result.unwrap_or_else(|e| panic!("{e}\n--- source ---\n{source}"));
    (cycles, tile, object)
}

/// Runs `source` with worker 0 started at `entry` by the host (no supervisor).
fn try_run_worker(source: &str, entry: &str, budget: u64) -> (Result<u64, SimError>, Tile, Object) {
    try_run(source, entry, budget, |entry| EntryMode::Worker {
        entry,
        vertex: 0,
        worker_base: SCRATCH,
    })
}

fn run_worker(source: &str, entry: &str) -> (u64, Tile, Object) {
    run_worker_on(&ipu21(), source, entry)
}

/// [`run_worker`] on `machine`.
fn run_worker_on(machine: &MachineDescription, source: &str, entry: &str) -> (u64, Tile, Object) {
    let run = try_run_on(machine, source, entry, BUDGET, |entry| EntryMode::Worker {
        entry,
        vertex: 0,
        worker_base: SCRATCH,
    });
    expect_cycles(source, run)
}

/// Runs `source` with the supervisor started at `entry`.
fn try_run_supervisor(
    source: &str,
    entry: &str,
    budget: u64,
) -> (Result<u64, SimError>, Tile, Object) {
    try_run(source, entry, budget, |entry| EntryMode::Supervisor {
        entry,
        vertex: 0,
    })
}

fn run_supervisor(source: &str, entry: &str) -> (u64, Tile, Object) {
    expect_cycles(source, try_run_supervisor(source, entry, BUDGET))
}

/// `n` worker bundles ending with `exitz $mzero`: the first n - 1 cycle through a solo `nop`, a
/// solo `fnop` and a `{ nop ; fnop }` pair (16 bytes per three bundles, so every pair stays
/// 8-byte aligned when the block starts aligned and no padding is inserted).
fn worker_bundles(n: usize) -> String {
    assert!(n >= 1);
    let mut text = String::new();
    for i in 0..n - 1 {
        text.push_str(match i % 3 {
            0 => "    nop\n",
            1 => "    fnop\n",
            _ => "    { nop ; fnop }\n",
        });
    }
    text.push_str("    exitz $mzero\n");
    text
}

fn layout() -> tessera_sim::memory::MemoryLayout {
    tessera_sim::memory::MemoryLayout::from_machine(&ipu21()).expect("ipu21 layout")
}

fn element_of(address: u32) -> tessera_sim::memory::MemoryElement {
    layout().element_of(address).expect("an SRAM address")
}

fn span(worker: u8, entry: u32, start: u64, end: u64) -> WorkerSpan {
    WorkerSpan {
        worker,
        entry,
        vertex: 0,
        start,
        end,
        exit_status: true,
    }
}

fn sorted_spans(tile: &Tile) -> Vec<WorkerSpan> {
    let mut spans = tile.spans.clone();
    spans.sort_by_key(|s| s.worker);
    // The timing is what these tests pin; the vertex each ran on is the launch's business.
    for s in &mut spans {
        s.vertex = 0;
    }
    spans
}

mod determinism;
mod global_sync;
mod supervisor;
mod traps;
mod workers;
