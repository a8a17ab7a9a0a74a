//! Exact cycle counts of small tile programs, each derived in a comment from the timing rules
//! documented at the top of `sim/src/tile/mod.rs` (from `shared/reference/isa.md` §1 and §6) and
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
//!   of the register ends the wait); `delay n` occupies n cycles.
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
    let machine = ipu21();
    let object = assemble(source);
    let mut tile = load(&machine, &object);
    let mode = mode(symbol(&object, entry));
    let result = run_tile(&machine, &mut tile, mode, budget);
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
    expect_cycles(source, try_run_worker(source, entry, BUDGET))
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

// ---------------------------------------------------------------------------------------------
// Workers

#[test]
fn one_worker_alone_takes_six_cycles_per_bundle() {
    for n in [1usize, 2, 3, 4, 10, 100] {
        let source = format!("    .text\n    .align 8\nwork:\n{}", worker_bundles(n));
        let (cycles, tile, object) = run_worker(&source, "work");
        // R2: worker 0 first issues at cycle 0; R1: bundle k issues at 6k; R3: the last (the
        // exitz, bundle n - 1) completes at 6(n - 1) + 6 = 6n.
        assert_eq!(cycles, 6 * n as u64, "{n} bundles");
        assert_eq!(tile.counters.worker_bundles, n as u64, "no padding bundles");
        assert_eq!(tile.counters.supervisor_bundles, 0);
        assert_eq!(
            tile.spans,
            vec![span(0, symbol(&object, "work"), 0, 6 * n as u64)]
        );
    }
}

/// `setzi $m1, work` (cycle 0); `runall` (cycle 1); `sync 2`; `br $m10`, with each of the six
/// workers running `n` bundles.
fn six_worker_program(n: usize) -> String {
    format!(
        "    .text
    .align 8
sup:
    setzi $m1, work
    runall $m1, $mzero, 0
    sync 2
    br $m10
    .align 8
work:
{}",
        worker_bundles(n)
    )
}

#[test]
fn six_workers_each_take_six_cycles_per_bundle() {
    for n in [1usize, 2, 10, 100] {
        let n64 = n as u64;
        let (cycles, tile, object) = run_supervisor(&six_worker_program(n), "sup");
        let work = symbol(&object, "work");
        // Derivation:
        // - `setzi` issues at 0, `runall` at 1 (R4: no worker runs yet). R6: launch L = 2, and the
        //   supervisor may not issue again before 1 + 6 = 7 (R5).
        // - R2: workers 2, 3, 4, 5 first issue at 2, 3, 4, 5 (their slots in round [0, 6)); workers
        //   0 and 1 at 6 and 7 (their slots in round 0 had passed). Worker w's last bundle (the
        //   exitz) issues at first_w + 6(n - 1): 6n - 4 .. 6n - 1 for workers 2..5, 6n and 6n + 1
        //   for workers 0 and 1. R3: workers 2..5 end at 6n, workers 0 and 1 at 6n + 6 — each 6n
        //   cycles after the start of the round of its first issue.
        // - R4: with six workers running the supervisor is suspended. Worker 2 frees slot 2 first
        //   (its exit issues at 6n - 4) but slot 2 next comes round at 6n + 2, after the last exit
        //   (worker 1 at 6n + 1); the other slots free later, so `sync 2` issues at 6n + 2
        //   (>= 7), finds no worker running and stalls 6 (R5): `br $m10` issues at 6n + 8 and is
        //   the last activity, so the run takes 6n + 9 cycles. (With six workers `sync` can only
        //   issue once they have all exited, so its wait-and-release path — released 6 cycles
        //   after the last exit issues — is pinned with one worker in the next test.)
        assert_eq!(cycles, 6 * n64 + 9, "{n} bundles per worker");
        let expected: Vec<WorkerSpan> = (0..WORKERS as u8)
            .map(|w| {
                let first_round = if w >= 2 { 0 } else { 6 };
                span(w, work, 2, first_round + 6 * n64)
            })
            .collect();
        assert_eq!(sorted_spans(&tile), expected);
        assert_eq!(tile.counters.worker_bundles, 6 * n64);
        assert_eq!(tile.counters.supervisor_bundles, 4);
    }
    // The pinned totals.
    let totals: Vec<u64> = [1usize, 2, 10, 100]
        .iter()
        .map(|&n| run_supervisor(&six_worker_program(n), "sup").0)
        .collect();
    assert_eq!(totals, vec![15, 21, 69, 609]);
}

#[test]
fn one_worker_under_the_supervisor_releases_the_local_sync_six_cycles_after_its_exit() {
    for n in [1usize, 2, 10, 100] {
        let n64 = n as u64;
        let source = format!(
            "    .text
    .align 8
sup:
    setzi $m1, work
    run $m1, $mzero, 0
    sync 2
    br $m10
    .align 8
work:
{}",
            worker_bundles(n)
        );
        let (cycles, tile, object) = run_supervisor(&source, "sup");
        // `setzi` at 0, `run` at 1: worker 0 launched at 2 (R6), first issue in slot 0 at 6 (R2),
        // exit issues at 6 + 6(n - 1) = 6n and its round ends at 6n + 6 (R3). The supervisor
        // resumes at 1 + 6 = 7 (R5) in slot 1, which no worker holds (R4): `sync 2` issues at 7
        // and waits. The exit at 6n releases it at 6n + 6 (R5): `br $m10` issues at 6n + 6,
        // so the run takes 6n + 7 cycles (n >= 2).
        // (For n = 1 the exit at 6 comes before `sync` issues at 7, so `sync` finds no worker
        // and stalls 6 itself: `br $m10` at 13, 14 cycles.)
        let expected = if n == 1 { 14 } else { 6 * n64 + 7 };
        assert_eq!(cycles, expected, "{n} bundles");
        assert_eq!(
            sorted_spans(&tile),
            vec![span(0, symbol(&object, "work"), 2, 6 * n64 + 6)]
        );
    }
}

#[test]
fn the_supervisor_is_suspended_while_six_workers_run() {
    // Worker 0 exits after 4 bundles; workers 1..5 run M + 6 bundles. The supervisor stamps
    // the cycle of its first two instructions after `runall` with `get $COUNT_L`.
    const M: u64 = 100;
    let source = format!(
        "    .text
    .align 8
sup:
    setzi $m1, work
    setzi $m3, stamps
    runall $m1, $mzero, 0
    get $m2, $COUNT_L
    get $m4, $COUNT_L
    st32 $m2, $m3, $mzero, 0
    st32 $m4, $m3, $mzero, 1
    sync 2
    br $m10
    .align 8
work:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK
    brz $m0, 2f
    setzi $m1, {M}
1:  brnzdec $m1, 1b
2:  exitz $mzero

    .data
    .align 4
stamps:
    .int 0xffffffff, 0xffffffff
"
    );
    let (cycles, tile, object) = run_supervisor(&source, "sup");
    let stamps = symbol(&object, "stamps");
    let first = tile.memory.read_u32(stamps).unwrap() as u64;
    let second = tile.memory.read_u32(stamps + 4).unwrap() as u64;
    // `runall` issues at 2: launch at 3 (R6), the supervisor could issue again at 8 (R5).
    // Worker 0 first issues at 6 (R2) and runs get, and, brz (taken), exitz at 6, 12, 18, 24.
    // Until then all six workers run and the supervisor is suspended (R4) even though its stall
    // ended at 8. Slot 0 is free from 25 on: the first `get` issues at 30, and the second one
    // round later at 36, since slots 1..5 are still held by workers.
    let exit_of_worker0 = sorted_spans(&tile)[0];
    assert_eq!(
        exit_of_worker0.end, 30,
        "worker 0's exitz issued at 24, its round ends at 30"
    );
    assert_eq!((first, second), (30, 36));
    // The supervisor then issues in slot 0 only: the two st32 at 42 and 48 and `sync 2` at 54,
    // which waits. Workers 1..5 run M + 6 bundles (get, and, brz, setzi, M + 1 brnzdec, exitz),
    // first issuing at 7, 8, 3, 4, 5 (R2); the last exit is worker 2's at 8 + 6(M + 5) = 6M + 38,
    // releasing the supervisor at 6M + 44 (R5), when `br $m10` issues: 6M + 45 cycles.
    assert_eq!(cycles, 6 * M + 45);
    assert_eq!(cycles, 645);
    let ends: Vec<u64> = sorted_spans(&tile).iter().map(|s| s.end).collect();
    assert_eq!(
        ends,
        vec![
            30,
            6 * M + 42,
            6 * M + 42,
            6 * M + 36,
            6 * M + 36,
            6 * M + 36
        ]
    );
    assert_eq!(tile.counters.supervisor_bundles, 9);
    assert_eq!(tile.counters.worker_bundles, 4 + 5 * (M + 6));
}

#[test]
fn rpt_loops_have_zero_overhead_per_iteration() {
    for (body, count) in [(1u64, 1u64), (1, 100), (3, 7), (4, 1000), (2, 4095)] {
        let mut source = format!(
            "    .text\n    .align 8\nwork:\n    {{ rpt {count}, {} ; fnop }}\n",
            body - 1
        );
        for _ in 0..body {
            source.push_str("    { nop ; fnop }\n");
        }
        source.push_str("    exitz $mzero\n");
        let (cycles, tile, _) = run_worker(&source, "work");
        // The rpt bundle, B·K body bundles and the exitz, 6 cycles each (R1, R3): no cycle per
        // iteration is added for looping.
        assert_eq!(cycles, 6 * (body * count) + 6 + 6, "body {body} x {count}");
        assert_eq!(tile.counters.worker_bundles, body * count + 2);
    }
    // The register form with a count above the 12-bit immediate, and with a count of 0 (the
    // body is skipped: rpt + exitz).
    for count in [0u64, 1, 5000] {
        let source = format!(
            "    .text
    .align 8
work:
    setzi $m1, {count}
    rpt $m1, 1
    {{ nop ; fnop }}
    {{ nop ; fnop }}
    exitz $mzero
"
        );
        let (cycles, _, _) = run_worker(&source, "work");
        // setzi + rpt (the solo rpt at offset 4 puts the body at offset 8) + 2K + exitz.
        assert_eq!(cycles, 6 * (2 * count) + 6 * 3, "count {count}");
    }
}

#[test]
fn a_worker_brnzdec_loop_costs_one_bundle_per_branch() {
    // A worker's taken branch costs nothing extra (isa §3.6): setzi, K + 1 brnzdec bundles
    // (K taken, one falling through) each preceded by a body bundle, then exitz.
    for k in [0u64, 1, 50] {
        let source = format!(
            "    .text
    .align 8
work:
    setzi $m1, {k}
1:  nop
    brnzdec $m1, 1b
    exitz $mzero
"
        );
        let (cycles, _, _) = run_worker(&source, "work");
        assert_eq!(cycles, 6 * (1 + 2 * (k + 1) + 1), "k {k}");
    }
}

// ---------------------------------------------------------------------------------------------
// Supervisor stalls

fn supervisor_cycles(body: &str) -> u64 {
    let source = format!("    .text\n    .align 8\nsup:\n{body}    br $m10\n\n    .data\n    .align 8\ndata:\n    .int 5, 6\n");
    run_supervisor(&source, "sup").0
}

#[test]
fn a_taken_supervisor_branch_stalls_six_cycles() {
    let program = |value: u32| format!("    setzi $m1, {value}\n    brz $m1, 1f\n1:\n");
    // setzi at 0, brz at 1. Taken: the next issue waits until 1 + 6 = 7 (R5), so `br $m10`
    // issues at 7 and the run takes 8 cycles. Not taken: `br $m10` issues at 2, 3 cycles.
    let taken = supervisor_cycles(&program(0));
    let not_taken = supervisor_cycles(&program(1));
    assert_eq!((taken, not_taken), (8, 3));
    assert_eq!(
        taken - not_taken,
        6 - 1,
        "a taken branch costs 6 cycles instead of 1"
    );
    // The final `br $m10` itself is a taken branch, but it ends the program: a lone `br $m10`
    // takes 1 cycle.
    assert_eq!(supervisor_cycles(""), 1);
}

#[test]
fn a_supervisor_brnzdec_loop_stalls_on_every_taken_iteration() {
    // setzi at 0; brnzdec taken K times (6 cycles each, R5), then falls through (1 cycle):
    // `br $m10` at 1 + 6K + 1, so 6K + 3 cycles.
    for k in [0u64, 1, 10] {
        assert_eq!(
            supervisor_cycles(&format!("    setzi $m1, {k}\n1:  brnzdec $m1, 1b\n")),
            6 * k + 3,
            "k {k}"
        );
    }
}

#[test]
fn a_csr_write_stalls_six_cycles() {
    // `put` at 0 stalls the next issue to 6 (R5): `br $m10` at 6, 7 cycles. A `get` (a CSR
    // read) does not stall: `br $m10` at 1, 2 cycles.
    assert_eq!(supervisor_cycles("    put $FP_ICTL, $mzero\n"), 7);
    assert_eq!(supervisor_cycles("    get $m1, $FP_ICTL\n"), 2);
    // Two back-to-back CSR writes: 0 and 6, `br` at 12.
    assert_eq!(
        supervisor_cycles("    put $FP_ICTL, $mzero\n    put $FP_ICTL, $mzero\n"),
        13
    );
}

#[test]
fn a_supervisor_load_use_waits_six_cycles_after_the_load() {
    // setzi at 0, ld32 at 1 (ready at 1 + 6 = 7).
    let load = "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n";
    // The next instruction reads $m1: it waits until 7; `br $m10` at 8: 9 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    add $m3, $m1, 1\n")),
        9
    );
    // The next instruction does not read $m1: add at 2, `br $m10` at 3: 4 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    add $m3, $m2, 1\n")),
        4
    );
    // A store of the loaded register reads it too: it waits until 7 as well.
    assert_eq!(
        supervisor_cycles(&format!("{load}    st32 $m1, $m2, $mzero, 1\n")),
        9
    );
    // The value used is the loaded one.
    let source = "    .text\n    .align 8\nsup:\n    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n    add $m3, $m1, 1\n    st32 $m3, $m2, $mzero, 1\n    br $m10\n\n    .data\n    .align 8\ndata:\n    .int 5, 6\n";
    let (_, tile, object) = run_supervisor(source, "sup");
    assert_eq!(
        tile.memory.read_u32(symbol(&object, "data") + 4).unwrap(),
        6
    );
}

/// isa.md §6 states the stall as "a register load-use (a load followed by an add that needs it)"
/// and `sim/src/tile/mod.rs` as "waits until `load_use` cycles after the load": a reader two
/// instructions after the load (still only 2 cycles after it) waits until load + 6 too.
#[test]
fn a_supervisor_load_use_waits_even_with_an_instruction_in_between() {
    // setzi 0, ld32 1 (ready at 7), nop 2, add waits until 7, br at 8: 9 cycles.
    assert_eq!(
        supervisor_cycles(
            "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n    nop\n    add $m3, $m1, 1\n"
        ),
        9
    );
}

#[test]
fn supervisor_load_use_is_tracked_per_register() {
    let load = "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n";
    // Four instructions between: nops at 2..5, the reader waits until 7 (not 6), br at 8: 9.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        9
    );
    // Five instructions between: nops at 2..6, the reader issues at 7 without waiting: 9.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        9
    );
    // Six between: the reader at 8 is long past the load; br at 9: 10 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        10
    );
    // Two loads in a row: ld32 $m1 at 1 (ready 7), ld32 $m4 at 2 (ready 8). A reader of $m1
    // right after waits until 7, a reader of $m4 then issues at 8, br at 9: 10 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    ld32 $m4, $m2, $mzero, 1\n    add $m3, $m1, 1\n    add $m5, $m4, 1\n"
        )),
        10
    );
    // A reader of both waits for the later load: 8; br at 9: 10 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    ld32 $m4, $m2, $mzero, 1\n    add $m3, $m1, $m4\n"
        )),
        10
    );
    // A later non-load write replaces the loaded value: setzi $m1 at 2, its reader issues at 3
    // without waiting, br at 4: 5 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    setzi $m1, 3\n    add $m3, $m1, 1\n")),
        5
    );
    // A load's post-incremented address register is ready at once: ld32step at 1 writes $m1
    // (ready 7) and $m2 (now); the reader of $m2 issues at 2, the reader of $m1 waits until 7,
    // br at 8: 9 cycles.
    assert_eq!(
        supervisor_cycles(
            "    setzi $m2, data\n    ld32step $m1, $mzero, $m2+=, 1\n    add $m3, $m2, 1\n    add $m3, $m1, 1\n"
        ),
        9
    );
}

#[test]
fn delay_occupies_the_supervisor_for_n_cycles() {
    // `delay n` at 0, `br $m10` at max(n, 1): n + 1 cycles (a zero delay still takes its cycle).
    for (n, expected) in [(0u64, 2u64), (1, 2), (2, 3), (10, 11), (1000, 1001)] {
        assert_eq!(
            supervisor_cycles(&format!("    delay {n}\n")),
            expected,
            "delay {n}"
        );
    }
}

#[test]
fn run_and_runall_stall_the_supervisor_six_cycles() {
    // The supervisor's next instruction after `run` (a `get $COUNT_L` stamp) waits 6 cycles.
    let source = "    .text
    .align 8
sup:
    setzi $m1, work
    setzi $m3, stamps
    run $m1, $mzero, 0
    get $m2, $COUNT_L
    st32 $m2, $m3, $mzero, 0
    sync 2
    br $m10
    .align 8
work:
    exitz $mzero
    .data
    .align 4
stamps:
    .int 0
";
    let (cycles, tile, object) = run_supervisor(source, "sup");
    // The two setzi issue at 0 and 1, `run` at 2: the `get` waits until 2 + 6 = 8 (R5) and
    // stamps 8. Worker 0 is launched at 3 (R6) and its exitz issues at 6, the first slot-0
    // cycle >= 3 (R2); it ends at 12 (R3). st32 at 9, `sync 2` at 10 finds no worker running and
    // stalls 6 (R5): `br $m10` at 16, 17 cycles.
    assert_eq!(tile.memory.read_u32(symbol(&object, "stamps")).unwrap(), 8);
    assert_eq!(cycles, 17);
}

// ---------------------------------------------------------------------------------------------
// Global sync on one tile

#[test]
fn a_one_tile_global_sync_is_released_as_on_a_one_tile_chip() {
    // `sync 3` issues at 0: the tile arrives at 1 and the sync is released at 1 + 90 = 91 (R7);
    // `br $m10` issues at 91, so the run takes 92 cycles.
    assert_eq!(supervisor_cycles("    sync 3\n"), 92);
    // Two syncs: the second issues at 91, is released at 92 + 90 = 182; br at 182: 183 cycles.
    assert_eq!(supervisor_cycles("    sync 3\n    sync 3\n"), 183);
    // With a worker still running when `sync 3` issues, the tile arrives when the worker's last
    // round ends: `run` at 1 launches worker 0 at 2 (R6); it first issues at 6 (R2) and its exitz
    // (bundle n) at 6n, completing at 6n + 6 (R3). `sync 3` issues at 7 (R5). Release at
    // 6n + 6 + 90, `br $m10` then: 6n + 97 cycles.
    for n in [2u64, 10] {
        let source = format!(
            "    .text
    .align 8
sup:
    setzi $m1, work
    run $m1, $mzero, 0
    sync 3
    br $m10
    .align 8
work:
{}",
            worker_bundles(n as usize)
        );
        assert_eq!(run_supervisor(&source, "sup").0, 6 * n + 97, "{n} bundles");
    }
}

// ---------------------------------------------------------------------------------------------
// Traps

fn trap_text(result: Result<u64, SimError>) -> String {
    match result {
        Ok(cycles) => panic!("expected a trap, the run ended after {cycles} cycles"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn misaligned_load_trap_reports_where_and_when() {
    let source = "    .text
    .align 8
work:
    setzi $m1, data + 2
    ld32 $m0, $m1, $mzero, 0
    exitz $mzero
    .data
    .align 8
data:
    .int 1, 2
";
    let (result, _, object) = try_run_worker(source, "work", BUDGET);
    let work = symbol(&object, "work");
    let data = symbol(&object, "data");
    // The ld32 is worker 0's second bundle: issued at cycle 6.
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 0) at pc {:#x} `ld32 $m0, $m1, $mzero, 0` cycle 6: E-TRAP-001 memory fault: \
             4-byte access at {:#x} is not naturally aligned",
            work + 4,
            data + 2
        )
    );
}

#[test]
fn write_to_code_trap_reports_where_and_when() {
    let source = "    .text
    .align 8
work:
    setzi $m1, work
    nop
    st32 $m0, $m1, $mzero, 1
    exitz $mzero
";
    let (result, _, object) = try_run_worker(source, "work", BUDGET);
    let work = symbol(&object, "work");
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 0) at pc {:#x} `st32 $m0, $m1, $mzero, 1` cycle 12: E-TRAP-001 memory fault: \
             write at {:#x} touches write-protected memory (code)",
            work + 8,
            work + 4
        )
    );
}

#[test]
fn supervisor_only_instruction_in_a_worker_traps() {
    // No `.worker`/`.supervisor` marker, so the assembler accepts the sync; the worker traps.
    let source = "    .text
    .align 8
work:
    nop
    sync 2
    exitz $mzero
";
    let (result, _, object) = try_run_worker(source, "work", BUDGET);
    let work = symbol(&object, "work");
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 0) at pc {:#x} `sync 2` cycle 6: E-TRAP-002 `sync` cannot run in the worker 0 context",
            work + 4
        )
    );
    // The same through `runall`: worker 3 (slot 3) is the first to reach its `run`.
    let source = "    .text
    .align 8
sup:
    setzi $m1, work
    runall $m1, $mzero, 0
    sync 2
    br $m10
    .align 8
work:
    run $m1, $mzero, 0
    exitz $mzero
";
    let (result, _, object) = try_run_supervisor(source, "sup", BUDGET);
    let work = symbol(&object, "work");
    // runall at 1, launch at 2: worker 2 issues first, at cycle 2.
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 2) at pc {work:#x} `run $m1, $mzero, 0` cycle 2: E-TRAP-002 `run` cannot run in the worker 2 context"
        )
    );
}

#[test]
fn element_clash_trap_reports_where_and_when() {
    // Two 64-bit loads in one instruction from the same 16 KiB element of the standard
    // (non-interleaved) region: a clash. From different elements: no clash.
    let program = |second: &str| {
        format!(
            "    .text
    .align 8
work:
    setzi $m2, buf
    setzi $m3, {second}
    tapack $m4:5, $m2, $m3, $m2
    ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0
    exitz $mzero
    .data
    .align 8
buf:
    .space 16
    .align 16384
far:
    .space 8
"
        )
    };
    let (result, _, object) = try_run_worker(&program("buf + 8"), "work", BUDGET);
    let (work, buf) = (symbol(&object, "work"), symbol(&object, "buf"));
    let element = element_of(buf);
    assert_eq!(Some(element), layout().element_of(buf + 8));
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 0) at pc {:#x} `ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0` cycle 18: \
             E-TRAP-001 memory fault: accesses at {:#x} and {:#x} in the same cycle both use memory element {element}",
            work + 12,
            buf,
            buf + 8
        )
    );
    let (cycles, _, object) = run_worker(&program("far"), "work");
    assert_ne!(
        element_of(symbol(&object, "buf")),
        element_of(symbol(&object, "far"))
    );
    assert_eq!(cycles, 6 * 5);
}

#[test]
fn interleaved_memory_alternates_elements_every_eight_bytes() {
    // In the interleaved region (0x80000..) 64-bit words at addresses differing in bit 3 are in
    // different elements: 0x80000 with 0x80008 is fine, 0x80000 with 0x80010 clashes.
    let program = |second: u32| {
        format!(
            "    .text
    .align 8
work:
    setzi $m2, 0x80000
    setzi $m3, {second:#x}
    tapack $m4:5, $m2, $m3, $m2
    ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0
    exitz $mzero
"
        )
    };
    assert_ne!(element_of(0x80000), element_of(0x80008));
    assert_eq!(element_of(0x80000), element_of(0x80010));
    let (cycles, _, _) = run_worker(&program(0x80008), "work");
    assert_eq!(cycles, 30);
    let (result, _, object) = try_run_worker(&program(0x80010), "work", BUDGET);
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 0) at pc {:#x} `ld2x64pace $a0:1, $a2:3, $m4:5+=, $mzero, 0` cycle 18: \
             E-TRAP-001 memory fault: accesses at 0x80000 and 0x80010 in the same cycle both use memory element {}",
            symbol(&object, "work") + 12,
            element_of(0x80000)
        )
    );
}

#[test]
fn cycle_budget_exceeded_is_reported() {
    // A worker spinning forever.
    let worker_loop = "    .text
    .align 8
work:
    nop
1:  bri 1b
";
    let (result, tile, _) = try_run_worker(worker_loop, "work", 1000);
    let text = trap_text(result);
    assert!(
        text.starts_with("E-SIM-004 cycle budget of 1000 cycles exceeded on tile 0 ("),
        "{text}"
    );
    assert_eq!(tile.cycle(), 1000);
    // A supervisor spinning forever: the report names the supervisor and its pc.
    let supervisor_loop = "    .text
    .align 8
sup:
    nop
1:  bri 1b
";
    let (result, _, object) = try_run_supervisor(supervisor_loop, "sup", 1000);
    let pc = symbol(&object, "sup") + 4;
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-004 cycle budget of 1000 cycles exceeded on tile 0 (at cycle 1000: supervisor at pc {pc:#x} `bri {pc:#x}`)"
        )
    );
}

/// The cycle-budget error says which context is stuck, where, in which instruction and when
/// (ARCHITECTURE.md: traps report tile, context, PC, instruction, cycle).
#[test]
fn cycle_budget_report_names_the_stuck_worker() {
    let worker_loop = "    .text
    .align 8
work:
    nop
1:  bri 1b
";
    let (result, _, object) = try_run_worker(worker_loop, "work", 1000);
    let text = trap_text(result);
    let pc = format!("{:#x}", symbol(&object, "work") + 4);
    assert!(
        text.contains("worker 0") && text.contains(&pc) && text.contains("bri"),
        "{text}"
    );
    // Exactly: the halted supervisor is not listed.
    assert_eq!(
        text,
        format!("E-SIM-004 cycle budget of 1000 cycles exceeded on tile 0 (at cycle 1000: worker 0 at pc {pc} `bri {pc}`)")
    );
}

#[test]
fn cycle_budget_report_names_every_running_context() {
    // The supervisor waits at a local sync while worker 0 spins and worker 1 runs a long loop.
    let source = "    .text
    .align 8
sup:
    setzi $m1, spin
    setzi $m2, count
    run $m1, $mzero, 0
    run $m2, $mzero, 0
    sync 2
    br $m10
    .align 8
spin:
    nop
1:  bri 1b
    .align 8
count:
    setzi $m0, 100000
2:  brnzdec $m0, 2b
    exitz $mzero
";
    let (result, _, object) = try_run_supervisor(source, "sup", 1000);
    let sup = symbol(&object, "sup");
    let spin = symbol(&object, "spin") + 4;
    let count = symbol(&object, "count") + 4;
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-004 cycle budget of 1000 cycles exceeded on tile 0 (at cycle 1000: \
             supervisor waiting at a local sync at pc {:#x} `br $m10`, \
             worker 0 at pc {spin:#x} `bri {spin:#x}`, worker 1 at pc {count:#x} `brnzdec $m0, {count:#x}`)",
            sup + 20
        )
    );
}

#[test]
fn the_budget_bounds_the_run_length_not_only_the_issue_cycles() {
    // A 100-bundle worker: its exitz issues at 594 and completes at 600 (R3). With a budget of
    // 600 the run fits; with 595 the last issue is inside the budget but the run ends after it.
    let source = format!("    .text\n    .align 8\nwork:\n{}", worker_bundles(100));
    let (result, _, _) = try_run_worker(&source, "work", 600);
    assert_eq!(result.expect("fits in 600 cycles"), 600);
    for budget in [595, 599] {
        let (result, tile, object) = try_run_worker(&source, "work", budget);
        // 99 bundles of 16 bytes per three (see worker_bundles) precede the exitz.
        let exitz = symbol(&object, "work") + 33 * 16;
        assert_eq!(
            trap_text(result),
            format!(
                "E-SIM-004 cycle budget of {budget} cycles exceeded on tile 0 (at cycle {budget}: worker 0 at pc {exitz:#x} `exitz $mzero`)"
            )
        );
        assert!(tile.spans.is_empty(), "the worker did not complete");
    }
    // The same through the supervisor: six workers of 10 bundles take 69 cycles (see
    // six_workers_each_take_six_cycles_per_bundle); 68 is one short.
    let (result, _, _) = try_run_supervisor(&six_worker_program(10), "sup", 69);
    assert_eq!(result.expect("fits in 69 cycles"), 69);
    let (result, _, _) = try_run_supervisor(&six_worker_program(10), "sup", 68);
    assert!(trap_text(result).starts_with(
        "E-SIM-004 cycle budget of 68 cycles exceeded on tile 0 (at cycle 68: supervisor at pc "
    ));
}

// ---------------------------------------------------------------------------------------------
// Determinism

#[test]
fn the_same_program_gives_the_same_cycles_and_memory() {
    // Six workers each summing a strided slice and storing to their own slot, launched with
    // per-worker vertex bases; run twice from scratch.
    let source = "    .text
    .align 8
sup:
    setzi $m1, work
    setzi $m2, vertices - 0x4C000
    runall $m1, $m2, 2
    sync 2
    br $m10
    .align 8
work:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    get $m2, $COUNT_L
    setzi $m3, 20
1:  add $m1, $m1, $m0
    brnzdec $m3, 1b
    st32 $m1, $mvertex_base, $mzero, 1
    st32 $m2, $mworker_base, $mzero, 0
    exitz $mzero
    .data
    .align 8
vertices:
    .int 1, 100, 2, 200, 3, 300, 4, 400, 5, 500, 6, 600
";
    let first = run_supervisor(source, "sup");
    let second = run_supervisor(source, "sup");
    assert_eq!(first.0, second.0);
    assert_eq!(first.1.counters, second.1.counters);
    assert_eq!(first.1.spans, second.1.spans);
    assert!(
        first.1.memory.bytes() == second.1.memory.bytes(),
        "memory differs between runs"
    );
    // And the workers did their work: 100·w + 21·w for worker w (1-based values).
    let vertices = symbol(&first.2, "vertices");
    for w in 0..6u32 {
        assert_eq!(
            first.1.memory.read_u32(vertices + 8 * w + 4).unwrap(),
            121 * (w + 1)
        );
    }
}
