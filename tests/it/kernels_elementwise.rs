//! End-to-end tests of the elementwise kernels (`bias_add_f16`, `cast_f16_fp8_panels`,
//! `gelu_f16`, `gelu_fp8`, `gelu_fp8_panels`, `softmax_f16`) through the bitwise checker: every
//! default case and a batch of random cases match the Rust references bit for bit with no stray
//! writes, the simulated cycles at the target shapes stay below the published hardware cycles,
//! and the estimates stay close to the simulation.

use crate::checker::{
    assert_all_pass, assert_case_counts, assert_cycles_below_targets, assert_estimates_within,
    CyclesFigure,
};
use tessera::kernels::elementwise;

#[test]
fn default_cases_pass_and_beat_the_targets() {
    let report = crate::checker::run(&elementwise::kernels(), 0, 0);
    assert_all_pass(&report);
    assert_case_counts(&report, &elementwise::kernels(), 60);
    // Published hardware cycles (kernel brief) that the simulated cycles must beat.
    let targets: [CyclesFigure; 8] = [
        (
            "cast_f16_fp8_panels",
            "38x80 pad 38x96 rowmajor S=80 II distinct mode 2",
            &[],
            3_528,
        ),
        ("gelu_f16", "n=1152 ", &[], 6_450),
        ("gelu_f16", "n=1728 ", &[], 9_510),
        ("gelu_fp8", "n=1152 ", &[], 7_092),
        ("gelu_fp8", "n=1728 ", &[], 10_386),
        ("gelu_fp8", "n=2152 ", &[], 13_680),
        ("gelu_fp8_panels", "1x2152 pad 1 ", &[], 13_680),
        // No published figure: keep the one-bundle-per-group fast path honest.
        ("bias_add_f16", "1x4304 III distinct", &[], 1_500),
    ];
    assert_cycles_below_targets(&report, &targets);
    // Estimates: within 10% on every case.
    assert_estimates_within(&report, 0.10);
}

#[test]
fn random_cases_pass() {
    let report = crate::checker::run(&elementwise::kernels(), 10, 0x5eed_e1e7);
    assert_all_pass(&report);
}
