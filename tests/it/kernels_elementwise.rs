//! End-to-end tests of the elementwise kernels (`bias_add_f16`, `cast_f16_fp8_panels`,
//! `gelu_f16`, `gelu_fp8`, `gelu_fp8_panels`, `softmax_f16`) through the bitwise checker: every
//! default case and a batch of random cases match the Rust references bit for bit with no stray
//! writes, the simulated cycles at the target shapes stay below the published hardware cycles,
//! and the estimates stay close to the simulation.

use tessera::check::{check_kernels, CheckOptions, CheckReport};
use tessera::kernels::elementwise;
use tessera::kernels::Kernel;
use tessera::sim::MachineDescription;

fn run(random_cases: usize, seed: u64) -> CheckReport {
    let machine = MachineDescription::load("ipu21").expect("the ipu21 machine");
    // Random runs skip the default cases (the other test runs those).
    let cases_per_kernel = (random_cases > 0).then_some(0);
    let options = CheckOptions {
        random_cases,
        seed,
        cases_per_kernel,
        ..CheckOptions::default()
    };
    let kernels: Vec<&'static dyn Kernel> = elementwise::kernels();
    check_kernels(&machine, &options, &kernels).expect("the checker runs")
}

fn assert_all_pass(report: &CheckReport) {
    let failures: Vec<String> = report
        .cases
        .iter()
        .filter(|c| !c.passed)
        .map(|c| {
            format!(
                "{} [{}]: {}",
                c.kernel,
                c.case,
                c.failure.as_deref().unwrap_or("")
            )
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Simulated cycles of the first passing case of `kernel` whose name starts with `prefix`.
fn cycles(report: &CheckReport, kernel: &str, prefix: &str) -> u64 {
    report
        .cases
        .iter()
        .find(|c| c.kernel == kernel && c.passed && c.case.starts_with(prefix))
        .and_then(|c| c.cycles)
        .unwrap_or_else(|| panic!("no passing {kernel} case {prefix}"))
}

#[test]
fn default_cases_pass_and_beat_the_targets() {
    let report = run(0, 0);
    assert_all_pass(&report);
    for kernel in elementwise::kernels() {
        let count = report
            .cases
            .iter()
            .filter(|c| c.kernel == kernel.name())
            .count();
        assert!(
            count >= 60,
            "{} has only {count} default cases",
            kernel.name()
        );
    }
    // Published hardware cycles (kernel brief) that the simulated cycles must beat.
    let targets: [(&str, &str, u64); 8] = [
        (
            "cast_f16_fp8_panels",
            "38x80 pad 38x96 rowmajor S=80 II distinct mode 2",
            3_528,
        ),
        ("gelu_f16", "n=1152 ", 6_450),
        ("gelu_f16", "n=1728 ", 9_510),
        ("gelu_fp8", "n=1152 ", 7_092),
        ("gelu_fp8", "n=1728 ", 10_386),
        ("gelu_fp8", "n=2152 ", 13_680),
        ("gelu_fp8_panels", "1x2152 pad 1 ", 13_680),
        // No published figure: keep the one-bundle-per-group fast path honest.
        ("bias_add_f16", "1x4304 III distinct", 1_500),
    ];
    for (kernel, prefix, target) in targets {
        let got = cycles(&report, kernel, prefix);
        assert!(
            got < target,
            "{kernel} {prefix}: {got} cycles, target {target}"
        );
    }
    // Estimates: within 10% on every case.
    for case in &report.cases {
        let sim = case.cycles.expect("cycles") as f64;
        let error = (case.estimate as f64 - sim).abs() / sim;
        assert!(
            error < 0.10,
            "{} [{}]: estimate {} vs {} simulated",
            case.kernel,
            case.case,
            case.estimate,
            sim
        );
    }
}

#[test]
fn random_cases_pass() {
    let report = run(10, 0x5eed_e1e7);
    assert_all_pass(&report);
}
