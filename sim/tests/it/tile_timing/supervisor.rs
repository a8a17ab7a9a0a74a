//! Supervisor stalls: taken branches, CSR writes, result-use, `delay`, `run`/`runall` (rule R5).
//! A register written by a supervisor instruction (a load, an ALU result such as `setzi`'s, a
//! post-increment) is ready 6 cycles after the writer issues, so a reader right after waits.

use super::*;

pub(super) fn supervisor_cycles(body: &str) -> u64 {
    let source = format!("    .text\n    .align 8\nsup:\n{body}    br $m10\n\n    .data\n    .align 8\ndata:\n    .int 5, 6\n");
    run_supervisor(&source, "sup").0
}

#[test]
fn a_taken_supervisor_branch_stalls_six_cycles() {
    let program = |value: u32| format!("    setzi $m1, {value}\n    brz $m1, 1f\n1:\n");
    // setzi at 0; brz reads its result, ready at 6 (R5), so brz issues at 6. Taken: the next
    // issue waits until 6 + 6 = 12 (R5), so `br $m10` issues at 12 and the run takes 13 cycles.
    // Not taken: `br $m10` issues at 7, 8 cycles.
    let taken = supervisor_cycles(&program(0));
    let not_taken = supervisor_cycles(&program(1));
    assert_eq!((taken, not_taken), (13, 8));
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
    // setzi at 0; the first brnzdec reads $m1 at 6 (R5); taken K times (6 cycles each, R5, which
    // also covers its own decrement's result-use), then falls through (1 cycle): `br $m10` at
    // 6 + 6K + 1, so 6K + 8 cycles.
    for k in [0u64, 1, 10] {
        assert_eq!(
            supervisor_cycles(&format!("    setzi $m1, {k}\n1:  brnzdec $m1, 1b\n")),
            6 * k + 8,
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
    // setzi at 0; ld32 reads its result at 6 (R5), the load is ready at 6 + 6 = 12.
    let load = "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n";
    // The next instruction reads $m1: it waits until 12; `br $m10` at 13: 14 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    add $m3, $m1, 1\n")),
        14
    );
    // The next instruction does not read $m1: add at 7, `br $m10` at 8: 9 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    add $m3, $m2, 1\n")),
        9
    );
    // A store of the loaded register reads it too: it waits until 12 as well.
    assert_eq!(
        supervisor_cycles(&format!("{load}    st32 $m1, $m2, $mzero, 1\n")),
        14
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
/// and `sim/src/tile/mod.rs` as "waits until `result_use` cycles after the writer": a reader two
/// instructions after the load (still only 2 cycles after it) waits until load + 6 too.
#[test]
fn a_supervisor_load_use_waits_even_with_an_instruction_in_between() {
    // setzi 0, ld32 6 (ready at 12), nop 7, add waits until 12, br at 13: 14 cycles.
    assert_eq!(
        supervisor_cycles(
            "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n    nop\n    add $m3, $m1, 1\n"
        ),
        14
    );
}

/// An ALU result is ready 6 cycles after its instruction, as a load's is: PopLibs keeps a `shr`
/// result six instructions from its reader with nops (`conv_partial_1x1_supervisor.S`, "keep
/// nop for 6 instructions pipeline") and counts "6 cycles" for the reader of an `and` result
/// (`EncodeOneHot.S`).
#[test]
fn a_supervisor_alu_result_is_ready_six_cycles_after_its_instruction() {
    // add at 0 (ready 6); a reader right after waits until 6, br at 7: 8 cycles.
    assert_eq!(
        supervisor_cycles("    add $m1, $m2, 1\n    add $m3, $m1, 1\n"),
        8
    );
    // Five instructions between: the reader issues at 6 without waiting, br at 7: 8 cycles.
    assert_eq!(
        supervisor_cycles(
            "    add $m1, $m2, 1\n    nop\n    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        ),
        8
    );
    // A chain of three dependent adds: 0, 6, 12; br at 13: 14 cycles.
    assert_eq!(
        supervisor_cycles("    add $m1, $m2, 1\n    add $m1, $m1, 1\n    add $m1, $m1, 1\n"),
        14
    );
    // Independent adds issue back to back: 0, 1, 2; br at 3: 4 cycles.
    assert_eq!(
        supervisor_cycles("    add $m1, $m2, 1\n    add $m3, $m2, 1\n    add $m4, $m2, 1\n"),
        4
    );
    // A write to `$mzero` leaves nothing to wait for: add at 0, its reader at 1, br at 2: 3.
    assert_eq!(
        supervisor_cycles("    add $mzero, $m2, 1\n    add $m3, $mzero, 1\n"),
        3
    );
}

#[test]
fn supervisor_load_use_is_tracked_per_register() {
    // setzi at 0; ld32 reads its result at 6 and is ready at 12 (R5).
    let load = "    setzi $m2, data\n    ld32 $m1, $m2, $mzero, 0\n";
    // Four instructions between: nops at 7..10, the reader waits until 12 (not 11), br at 13: 14.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        14
    );
    // Five instructions between: nops at 7..11, the reader issues at 12 without waiting: 14.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        14
    );
    // Six between: the reader at 13 is past the load; br at 14: 15 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    nop\n    nop\n    nop\n    nop\n    nop\n    nop\n    add $m3, $m1, 1\n"
        )),
        15
    );
    // Two loads in a row: ld32 $m1 at 6 (ready 12), ld32 $m4 at 7 (ready 13). A reader of $m1
    // right after waits until 12, a reader of $m4 then issues at 13, br at 14: 15 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    ld32 $m4, $m2, $mzero, 1\n    add $m3, $m1, 1\n    add $m5, $m4, 1\n"
        )),
        15
    );
    // A reader of both waits for the later load: 13; br at 14: 15 cycles.
    assert_eq!(
        supervisor_cycles(&format!(
            "{load}    ld32 $m4, $m2, $mzero, 1\n    add $m3, $m1, $m4\n"
        )),
        15
    );
    // A later write takes over: setzi $m1 at 7 is ready at 13, and its reader waits for it, br
    // at 14: 15 cycles.
    assert_eq!(
        supervisor_cycles(&format!("{load}    setzi $m1, 3\n    add $m3, $m1, 1\n")),
        15
    );
    // A load's post-incremented address register is a result too (`EncodeOneHot.S` counts 6
    // cycles for its reader): ld32step at 6 writes $m1 and $m2, both ready at 12; the reader of
    // $m2 waits until 12, the reader of $m1 then issues at 13, br at 14: 15 cycles.
    assert_eq!(
        supervisor_cycles(
            "    setzi $m2, data\n    ld32step $m1, $mzero, $m2+=, 1\n    add $m3, $m2, 1\n    add $m3, $m1, 1\n"
        ),
        15
    );
}

#[test]
fn delay_occupies_the_supervisor_for_n_plus_one_cycles() {
    // `delay n` at 0, `br $m10` at n + 1: n + 2 cycles (the hardware's `delay n` advances n + 1
    // exchange events).
    for (n, expected) in [(0u64, 2u64), (1, 3), (2, 4), (10, 12), (1000, 1002)] {
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
    // The two setzi issue at 0 and 1; `run` reads $m1, ready at 6 (R5), and issues at 6. Worker 0
    // is launched at 7 (R6) and its exitz issues at 12, the first slot-0 cycle >= 7 (R2); it ends
    // at 18 (R3). The `get` may issue from 6 + 6 = 12 (R5), but slot 0 is the worker's then: it
    // stamps 13. st32 reads the `get`'s result, ready at 19 (R5): st32 at 19, `sync 2` at 20
    // finds no worker running and stalls 6 (R5): `br $m10` at 26, 27 cycles.
    assert_eq!(tile.memory.read_u32(symbol(&object, "stamps")).unwrap(), 13);
    assert_eq!(cycles, 27);
}
