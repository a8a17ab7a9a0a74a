//! Worker timing: six-cycle rounds, launches and exits, local sync, `rpt` and `brnzdec` loops (rules R1–R4, R6).

use super::*;

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

/// `setzi $m1, work` (cycle 0); `runall` (cycle 6: it reads the `setzi` result); `sync 2`;
/// `br $m10`, with each of the six workers running `n` bundles.
pub(super) fn six_worker_program(n: usize) -> String {
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
        // - `setzi` issues at 0; `runall` reads its result, ready at 6 (R5), and issues at 6 (R4:
        //   no worker runs yet). R6: launch L = 7, and the supervisor may not issue again before
        //   6 + 6 = 12 (R5).
        // - R2: workers 1, 2, 3, 4, 5 first issue at 7 .. 11 (their slots in round [6, 12));
        //   worker 0 at 12 (its slot in that round had passed). Worker w's last bundle (the exitz)
        //   issues at first_w + 6(n - 1): 6n + 1 .. 6n + 5 for workers 1..5, 6n + 6 for worker 0.
        //   R3: workers 1..5 end at 6n + 6, worker 0 at 6n + 12 — each 6n cycles after the start
        //   of the round of its first issue.
        // - R4: with six workers running the supervisor is suspended. Worker 1 frees slot 1 first
        //   (its exit issues at 6n + 1) but slot 1 next comes round at 6n + 7, after the last
        //   exit (worker 0 at 6n + 6); so `sync 2` issues at 6n + 7 (>= 12), finds no worker
        //   running and stalls 6 (R5): `br $m10` issues at 6n + 13 and is the last activity, so
        //   the run takes 6n + 14 cycles. (With six workers `sync` can only issue once they have
        //   all exited, so its wait-and-release path — released 6 cycles after the last exit
        //   issues — is pinned with one worker in the next test.)
        assert_eq!(cycles, 6 * n64 + 14, "{n} bundles per worker");
        let expected: Vec<WorkerSpan> = (0..WORKERS as u8)
            .map(|w| {
                let first_round = if w >= 1 { 6 } else { 12 };
                span(w, work, 7, first_round + 6 * n64)
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
    assert_eq!(totals, vec![20, 26, 74, 614]);
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
        // `setzi` at 0, `run` at 6 (it reads the `setzi` result, R5): worker 0 launched at 7
        // (R6), first issue in slot 0 at 12 (R2), exit issues at 12 + 6(n - 1) = 6n + 6 and its
        // round ends at 6n + 12 (R3). The supervisor may resume at 6 + 6 = 12 (R5), but slot 0 is
        // the worker's then (R4): `sync 2` issues at 13 and waits. The exit at 6n + 6 releases it
        // at 6n + 12 (R5): `br $m10` issues at 6n + 12, so the run takes 6n + 13 cycles (n >= 2).
        // (For n = 1 the exit at 12 comes before `sync` issues at 13, so `sync` finds no worker
        // and stalls 6 itself: `br $m10` at 19, 20 cycles.)
        let expected = if n == 1 { 20 } else { 6 * n64 + 13 };
        assert_eq!(cycles, expected, "{n} bundles");
        assert_eq!(
            sorted_spans(&tile),
            vec![span(0, symbol(&object, "work"), 7, 6 * n64 + 12)]
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
    // `runall` reads the first `setzi`'s result and issues at 6 (R5): launch at 7 (R6), the
    // supervisor could issue again at 12 (R5). Workers 1..5 first issue at 7..11 and worker 0 at
    // 12 (R2); worker 0 runs get, and, brz (taken), exitz at 12, 18, 24, 30. Until then all six
    // workers run and the supervisor is suspended (R4) even though its stall ended at 12. Slot 0
    // is free from 31 on: the first `get` issues at 36, and the second one round later at 42,
    // since slots 1..5 are still held by workers.
    let exit_of_worker0 = sorted_spans(&tile)[0];
    assert_eq!(
        exit_of_worker0.end, 36,
        "worker 0's exitz issued at 30, its round ends at 36"
    );
    assert_eq!((first, second), (36, 42));
    // The supervisor then issues in slot 0 only: the st32 of the first stamp at 48 (its result
    // was ready at 42, when the second `get` took the slot), the second st32 at 54 and `sync 2`
    // at 60, which waits. Workers 1..5 run M + 6 bundles (get, and, brz, setzi, M + 1 brnzdec,
    // exitz), first issuing at 7..11 (R2); the last exit is worker 5's at 11 + 6(M + 5) =
    // 6M + 41, releasing the supervisor at 6M + 47 (R5), when `br $m10` issues: 6M + 48 cycles.
    assert_eq!(cycles, 6 * M + 48);
    assert_eq!(cycles, 648);
    let ends: Vec<u64> = sorted_spans(&tile).iter().map(|s| s.end).collect();
    assert_eq!(
        ends,
        vec![
            36,
            6 * M + 42,
            6 * M + 42,
            6 * M + 42,
            6 * M + 42,
            6 * M + 42
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

/// A worker program of `rpts` loops in a row, each `rpt count` over a body of `body` bundles,
/// then `exitz`. Every `rpt` is solo and 8-byte aligned with a 4-byte `nop` before it when
/// needed, so that its body starts 8-byte aligned; returns the program and its bundles outside
/// the bodies (the rpts, the padding nops and the exitz).
fn rpt_program(rpts: u64, body: u64, count: u64) -> (String, u64) {
    let mut source = String::from("    .text\n    .align 8\nwork:\n");
    let mut outside = 1;
    for _ in 0..rpts {
        // The solo rpt at an address = 4 mod 8 puts the body at 0 mod 8.
        source.push_str("    nop\n");
        source.push_str(&format!("    rpt {count}, {}\n", body - 1));
        for _ in 0..body {
            source.push_str("    { nop ; fnop }\n");
        }
        outside += 2;
    }
    source.push_str("    exitz $mzero\n");
    (source, outside)
}

#[test]
fn an_executed_rpt_costs_its_own_bundle_and_the_body_nothing_more() {
    // The decision on `rpt` timing (issue 10; the machine file's `worker.repeat_rounds` = 1, its
    // basis tabulated in sim/src/machine.rs): an `rpt` of N iterations of a B-bundle body costs
    // exactly 1 + N·B worker cycles (issue rounds of 6 tile cycles), N = 0 included (the rpt
    // bundle alone, branching over the body). No set-up rounds, however many loops run.
    let ipu21 = ipu21();
    assert_eq!(ipu21.worker.repeat_rounds, 1);
    for (rpts, body, count) in [
        (1u64, 1u64, 0u64),
        (1, 1, 1),
        (1, 2, 3),
        (1, 5, 10),
        (3, 2, 4),
        (4, 1, 0),
    ] {
        let (source, outside) = rpt_program(rpts, body, count);
        let (cycles, tile, _) = run_worker_on(&ipu21, &source, "work");
        // Per loop: the padding nop, the rpt (1 round) and B·N body rounds; then exitz.
        let rounds = rpts * (1 + 1 + body * count) + 1;
        assert_eq!(cycles, 6 * rounds, "{rpts} rpt(s) of {body} x {count}");
        assert_eq!(tile.counters.worker_bundles, outside + rpts * body * count);
    }
}

#[test]
fn repeat_rounds_is_the_one_place_rpt_set_up_is_charged() {
    // With `worker.repeat_rounds` = 3 (the reading of PopLibs' vector-inner estimators that the
    // basis table rejects), each executed rpt costs 2 rounds more and nothing else changes.
    let mut machine = ipu21();
    machine.worker.repeat_rounds = 3;
    machine.validate().expect("still a valid machine");
    for (rpts, body, count) in [(1u64, 2u64, 3u64), (3, 1, 0), (2, 4, 7)] {
        let (source, outside) = rpt_program(rpts, body, count);
        let (base, _, _) = run_worker(&source, "work");
        let (cycles, tile, _) = run_worker_on(&machine, &source, "work");
        assert_eq!(
            cycles,
            base + rpts * 2 * 6,
            "{rpts} rpt(s) of {body} x {count}"
        );
        assert_eq!(tile.counters.worker_bundles, outside + rpts * body * count);
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

#[test]
fn an_f32div_keeps_its_worker_three_rounds() {
    // `f32div` alone, in a bundle, and in an `rpt` body: each costs 3 rounds (18 cycles) where
    // any other bundle costs one (the machine file's `worker.divide_rounds`).
    let source = "    .text
    .align 8
work:
    f32div $a0, $a1, $a2
    nop
    { nop ; f32div $a0, $a1, $a2 }
    { rpt 4, 0 ; fnop }
    { nop ; f32div $a0, $a1, $a2 }
    exitz $mzero
";
    let (cycles, tile, _) = run_worker(source, "work");
    assert_eq!(cycles, 18 + 6 + 18 + 6 + 4 * 18 + 6);
    assert_eq!(tile.counters.worker_bundles, 9);
}
