//! End-to-end tests of the AMP GEMM kernels (`gemm_fp8`, `gemm_f16`) through the bitwise kernel
//! checker (`tessera::check`), including deliberately broken kernels: the checker must report a
//! wrong result, a write past the output, and a broken memory-placement requirement.

use std::sync::Arc;

use tessera::check::{self, CaseResult};
use tessera::kernels::gemm::{AmpGemm, Data, GemmSpec, GEMM_F16, GEMM_FP8};
use tessera::kernels::{Case, Kernel, Region};
use tessera::sim::memory::MemoryLayout;
use tessera::sim::MachineDescription;

const MAX_CYCLES: u64 = 5_000_000;

/// Runs `case` on `kernel`, optionally with its source replaced.
fn run(kernel: &'static AmpGemm, source: Option<&str>, case: &Case) -> CaseResult {
    let machine = MachineDescription::builtin("ipu21").expect("machine");
    let layout = Arc::new(MemoryLayout::from_machine(&machine).expect("layout"));
    let prepared = check::prepare(&machine, kernel, source).expect("the kernel assembles");
    check::run_case(&machine, &layout, &prepared, case, MAX_CYCLES)
}

/// `source` with `old` (which must occur exactly once) replaced by `new`.
fn patch(source: &str, old: &str, new: &str) -> String {
    assert_eq!(
        source.matches(old).count(),
        1,
        "the patch site `{old}` must be unique"
    );
    source.replacen(old, new, 1)
}

fn spec(m: usize, k: usize, n: usize, partials: bool) -> GemmSpec {
    GemmSpec {
        partials,
        data: Data::Normal,
        seed: 7,
        ..GemmSpec::new(m, k, n)
    }
}

#[test]
fn small_cases_pass_on_both_kernels() {
    // The fast path (>= 3 rows per worker, so the rpt body runs), the plain loop (< 3 rows),
    // K and N tails, with and without C0.
    for kernel in [&GEMM_FP8, &GEMM_F16] {
        for (m, k, n, partials) in [
            (30, 70, 20, true),
            (30, 40, 33, false),
            (8, 33, 17, true),
            (1, 1, 1, false),
        ] {
            let case = kernel.make_case(&spec(m, k, n, partials));
            let result = run(kernel, None, &case);
            assert!(
                result.passed,
                "{} {}: {:?}",
                kernel.name(),
                case.name,
                result.failure
            );
            let estimate = result.estimate as f64;
            let cycles = result.cycles.unwrap() as f64;
            assert!(
                (estimate - cycles).abs() / cycles < 0.1,
                "{}: estimate {estimate} vs {cycles} cycles",
                case.name
            );
        }
    }
}

#[test]
fn a_wrong_phase_flag_is_reported_as_a_mismatch() {
    // The steady-state bundle that feeds phase 0 (in the rpt body, `row_body`) issues phase 1
    // instead.
    let site = ".macro row_body stride\n    \
        { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b000000 ; AMP $a6:7, $a0:1, $a2:3, P3 }\n    \
        { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }";
    let broken = patch(GEMM_FP8.source(), site, &site.replace("P0 }", "P1 }"));
    let case = GEMM_FP8.make_case(&spec(48, 64, 16, true));
    assert!(
        run(&GEMM_FP8, None, &case).passed,
        "the unpatched kernel passes this case"
    );
    let result = run(&GEMM_FP8, Some(&broken), &case);
    assert!(!result.passed, "the checker must catch the wrong phase");
    let failure = result.failure.unwrap();
    eprintln!("reported: {failure}");
    assert!(
        failure.contains("output `c`") && failure.contains("differ"),
        "{failure}"
    );
}

#[test]
fn a_dropped_store_is_reported_as_a_mismatch() {
    // The last store of every launch (the final phase of each worker's last row) is dropped.
    let broken = patch(
        GEMM_FP8.source(),
        "    st64pace $a6:7, $m0:1+=, $m2, 0b00\n.endm",
        "    nop\n.endm",
    );
    let case = GEMM_FP8.make_case(&spec(24, 64, 32, false));
    let result = run(&GEMM_FP8, Some(&broken), &case);
    assert!(!result.passed);
    let failure = result.failure.unwrap();
    eprintln!("reported: {failure}");
    assert!(failure.contains("output `c`"), "{failure}");
}

/// A chained case of `spec` passes, and fails with the source's `old` replaced by `new`.
fn a_chained_mutation_is_caught(old: &str, new: &str, spec: GemmSpec, what: &str) {
    let broken = patch(GEMM_FP8.source(), old, new);
    let case = GEMM_FP8.make_case(&spec);
    assert!(
        run(&GEMM_FP8, None, &case).passed,
        "the unpatched kernel passes {}",
        case.name
    );
    let result = run(&GEMM_FP8, Some(&broken), &case);
    assert!(!result.passed, "the checker must catch {what}");
    eprintln!("reported: {}", result.failure.unwrap());
}

#[test]
fn a_chained_launch_without_its_row_wrap_is_caught() {
    // K_WORKER_C's stores go on from row count-1 to row count instead of wrapping to row 0:
    // the results of K-blocks 2 .. kbs-2 land a worker's rows further on.
    a_chained_mutation_is_caught(
        "$m0:1+=, $m10, 0b010000",
        "$m0:1+=, $m2, 0b010000",
        spec(48, 128, 32, true),
        "the missing row wrap",
    );
}

#[test]
fn a_next_column_blocks_wrap_left_out_is_caught() {
    // K_WORKER_ZX's stores hold at the last column block's last row instead of wrapping to the
    // new column block's row 0 (field 1 of $m2 is 0).
    a_chained_mutation_is_caught(
        "$m0:1+=, $m10, 0b1000",
        "$m0:1+=, $m2, 0b1000",
        spec(48, 128, 48, false),
        "the missing column-block wrap",
    );
}

#[test]
fn a_store_past_the_output_is_caught_by_the_write_guard() {
    // One row, one column block: C is 32 bytes. The plain loop's pointer bump after the last
    // store becomes a second store of the last result one atom further: the output itself stays
    // right, but 8 bytes past C change.
    let broken = patch(
        GEMM_FP8.source(),
        "    { st64 $a4:5, $m8, $mzero, 3                   ; fnop }\n    { add $m8, $m8, $m7                            ; fnop }",
        "    { st64 $a4:5, $m8, $mzero, 3                   ; fnop }\n    { st64 $a4:5, $m8, $mzero, 4                   ; fnop }",
    );
    let case = GEMM_FP8.make_case(&spec(1, 32, 16, true));
    assert_eq!(case.buffer("c").len(), 32);
    assert!(run(&GEMM_FP8, None, &case).passed);
    let result = run(&GEMM_FP8, Some(&broken), &case);
    assert!(!result.passed, "the write guard must catch the stray store");
    let failure = result.failure.unwrap();
    eprintln!("reported: {failure}");
    assert!(failure.contains("write guard"), "{failure}");
}

#[test]
fn the_element_slot_requirement_is_real() {
    // A and C in the same element slot of the standard region (one 16 KiB element): the pace
    // instructions then access one memory element twice in a cycle and the tile traps.
    let mut case = GEMM_F16.make_case(&spec(40, 64, 16, false));
    for buffer in &mut case.buffers {
        if buffer.name == "a" || buffer.name == "c" {
            buffer.element_slot = Some(0);
            buffer.region = Region::Standard;
        }
    }
    let result = run(&GEMM_F16, None, &case);
    assert!(!result.passed);
    let failure = result.failure.unwrap();
    eprintln!("reported: {failure}");
    assert!(failure.contains("memory element"), "{failure}");
}
