//! Trap reports (where and when), memory-element clashes, interleaving, and the cycle budget (rule R8).

use super::workers::six_worker_program;
use super::*;

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
    // runall at 6 (it reads `setzi`'s result, R5), launch at 7: worker 1 issues first, at 7.
    assert_eq!(
        trap_text(result),
        format!(
            "E-SIM-001 trap on tile 0 (worker 1) at pc {work:#x} `run $m1, $mzero, 0` cycle 7: E-TRAP-002 `run` cannot run in the worker 1 context"
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

/// A program whose entry `name` spins forever.
fn spinning(name: &str) -> String {
    format!("    .text\n    .align 8\n{name}:\n    nop\n1:  bri 1b\n")
}

#[test]
fn cycle_budget_exceeded_is_reported() {
    let worker_loop = spinning("work");
    let (result, tile, _) = try_run_worker(&worker_loop, "work", 1000);
    let text = trap_text(result);
    assert!(
        text.starts_with("E-SIM-004 cycle budget of 1000 cycles exceeded on tile 0 ("),
        "{text}"
    );
    assert_eq!(tile.cycle(), 1000);
    // A supervisor spinning forever: the report names the supervisor and its pc.
    let supervisor_loop = spinning("sup");
    let (result, _, object) = try_run_supervisor(&supervisor_loop, "sup", 1000);
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
    let worker_loop = spinning("work");
    let (result, _, object) = try_run_worker(&worker_loop, "work", 1000);
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
    // The same through the supervisor: six workers of 10 bundles take 74 cycles (see
    // six_workers_each_take_six_cycles_per_bundle); 73 is one short.
    let (result, _, _) = try_run_supervisor(&six_worker_program(10), "sup", 74);
    assert_eq!(result.expect("fits in 74 cycles"), 74);
    let (result, _, _) = try_run_supervisor(&six_worker_program(10), "sup", 73);
    assert!(trap_text(result).starts_with(
        "E-SIM-004 cycle budget of 73 cycles exceeded on tile 0 (at cycle 73: supervisor at pc "
    ));
}
