//! End-to-end tests of the norm kernels (`layernorm_f16`, `layernorm_fp8`,
//! `add_layernorm_moments`) through the bitwise checker: every default case and a batch of
//! random cases match the Rust references bit for bit with no stray writes, the simulated
//! cycles at the target shapes stay below the targets, and the estimates stay close.

use crate::checker::{
    assert_all_pass, assert_case_counts, assert_cycles_below_targets, assert_estimates_within,
    cycles, CyclesFigure,
};
use tessera::kernels::norm;

#[test]
fn default_cases_pass_and_meet_the_targets() {
    let report = crate::checker::run(&norm::kernels(), 0, 0);
    assert_all_pass(&report);
    assert_case_counts(&report, &norm::kernels(), 60);
    // Targets (hardware cycles of a single row) from the kernel brief.
    let targets: [CyclesFigure; 6] = [
        ("layernorm_f16", "1x1152 normal(0,1)", &["path=dev"], 9_378),
        (
            "layernorm_fp8",
            "1x1152 normal(0,1)",
            &["path=dev", "scl=0 nanoo=false"],
            9_936,
        ),
        ("layernorm_f16", "1x1728 normal(0,1)", &["path=dev"], 13_338),
        (
            "layernorm_fp8",
            "1x1728 normal(0,1)",
            &["path=dev", "scl=0 nanoo=false"],
            14_040,
        ),
        (
            "add_layernorm_moments",
            "1x1152 normal(0,1)",
            &["fast"],
            4_050,
        ),
        (
            "add_layernorm_moments",
            "1x2152 normal(0,1)",
            &["fast"],
            6_444,
        ),
    ];
    assert_cycles_below_targets(&report, &targets);
    // The paths that need no extra memory also meet the targets.
    assert!(cycles(&report, "layernorm_f16", "1x1152 normal(0,1)", &["path=x"]) < 9_378);
    assert!(cycles(&report, "layernorm_fp8", "1x1728 normal(0,1)", &["path=x"]) < 14_040);
    assert!(
        cycles(
            &report,
            "add_layernorm_moments",
            "1x2152 normal(0,1)",
            &["Standard "]
        ) < 6_444
    );
    // The f16-parameter LayerNorms: below the hardware figures, and at most their loops'
    // cycles with 5 % headroom (f16 variance 1.5 and affine 4 or 5 bundles a group of 4).
    for (kernel, shape, bound) in [
        ("layernorm_h_f16", "1x1152 normal(0,1)", 2_762),
        ("layernorm_h_fp8", "1x1152 normal(0,1)", 3_083),
        ("layernorm_h_f16", "1x1728 normal(0,1)", 3_745),
        ("layernorm_h_fp8", "1x1728 normal(0,1)", 4_217),
    ] {
        let got = cycles(&report, kernel, shape, &[]);
        assert!(
            got <= bound,
            "{kernel} {shape}: {got} cycles, bound {bound}"
        );
    }
    // Estimates: within 10% on every case.
    assert_estimates_within(&report, 0.10);
}

#[test]
fn random_cases_pass() {
    let report = crate::checker::run(&norm::kernels(), 12, 0x5eed_0001);
    assert_all_pass(&report);
}
