//! End-to-end tests of the norm kernels (`layernorm_f16`, `layernorm_fp8`,
//! `add_layernorm_moments`) through the bitwise checker: every default case and a batch of
//! random cases match the Rust references bit for bit with no stray writes, the simulated
//! cycles at the target shapes stay below the targets, and the estimates stay close.

use tessera::check::{check_kernels, CheckOptions, CheckReport};
use tessera::kernels::norm;
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
    let kernels: Vec<&'static dyn Kernel> = norm::kernels();
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

/// Simulated cycles of the first passing case of `kernel` whose name starts with `prefix`
/// and contains every one of `parts`.
fn cycles(report: &CheckReport, kernel: &str, prefix: &str, parts: &[&str]) -> u64 {
    report
        .cases
        .iter()
        .find(|c| {
            c.kernel == kernel
                && c.passed
                && c.case.starts_with(prefix)
                && parts.iter().all(|p| c.case.contains(p))
        })
        .and_then(|c| c.cycles)
        .unwrap_or_else(|| panic!("no passing {kernel} case {prefix} {parts:?}"))
}

#[test]
fn default_cases_pass_and_meet_the_targets() {
    let report = run(0, 0);
    assert_all_pass(&report);
    for kernel in norm::kernels() {
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
    // Targets (hardware cycles of a single row) from the kernel brief.
    let targets: [(&str, &str, &[&str], u64); 6] = [
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
    for (kernel, prefix, parts, target) in targets {
        let got = cycles(&report, kernel, prefix, parts);
        assert!(
            got < target,
            "{kernel} {prefix}: {got} cycles, target {target}"
        );
    }
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
    let report = run(12, 0x5eed_0001);
    assert_all_pass(&report);
}
