//! The kernel checker as the kernel-family test modules use it: run a family's default or random cases on ipu21, require every case to pass, enough cases per kernel, estimates close to the simulation and cycles under the targets; look up a case's simulated cycles.

use tessera::check::{check_kernels, CheckOptions, CheckReport};
use tessera::kernels::Kernel;
use tessera::sim::MachineDescription;

/// Checks `kernels` on ipu21: their default cases when `random_cases` is 0, else only
/// `random_cases` random cases per kernel from `seed` (the default run covers the others).
pub fn run(kernels: &[&'static dyn Kernel], random_cases: usize, seed: u64) -> CheckReport {
    let machine = MachineDescription::load("ipu21").expect("the ipu21 machine");
    let options = CheckOptions {
        random_cases,
        seed,
        cases_per_kernel: (random_cases > 0).then_some(0),
        ..CheckOptions::default()
    };
    check_kernels(&machine, &options, kernels).expect("the checker runs")
}

/// Fails with every failing case (kernel, case, reason) listed.
pub fn assert_all_pass(report: &CheckReport) {
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

/// Simulated cycles of the first passing case of `kernel` whose name starts with `prefix` and
/// contains every one of `parts`.
pub fn cycles(report: &CheckReport, kernel: &str, prefix: &str, parts: &[&str]) -> u64 {
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

/// Fails unless every kernel of `kernels` has at least `min` cases in `report`.
pub fn assert_case_counts(report: &CheckReport, kernels: &[&'static dyn Kernel], min: usize) {
    for kernel in kernels {
        let count = report
            .cases
            .iter()
            .filter(|c| c.kernel == kernel.name())
            .count();
        assert!(
            count >= min,
            "{} has only {count} default cases",
            kernel.name()
        );
    }
}

/// Fails unless every case's estimate is within `tolerance` (a fraction, 0.1 for 10%) of its
/// simulated cycles.
pub fn assert_estimates_within(report: &CheckReport, tolerance: f64) {
    for case in &report.cases {
        let sim = case.cycles.expect("cycles") as f64;
        let error = (case.estimate as f64 - sim).abs() / sim;
        assert!(
            error < tolerance,
            "{} [{}]: estimate {} vs {} simulated",
            case.kernel,
            case.case,
            case.estimate,
            sim
        );
    }
}

/// A case picked as [`cycles`] picks it, `(kernel, name prefix, name parts)`, and its cycle
/// figure.
pub type CyclesFigure<'a> = (&'a str, &'a str, &'a [&'a str], u64);

/// Fails unless each case simulates in fewer cycles than its target (published hardware cycles
/// the kernel must beat).
pub fn assert_cycles_below_targets(report: &CheckReport, targets: &[CyclesFigure]) {
    for &(kernel, prefix, parts, target) in targets {
        let got = cycles(report, kernel, prefix, parts);
        assert!(
            got < target,
            "{kernel} {prefix}: {got} cycles, target {target}"
        );
    }
}

/// Fails unless each case simulates in at most its bound (the cycles its loop was written to
/// reach, with some headroom), so that a slower loop fails.
pub fn assert_cycles_within_bounds(report: &CheckReport, bounds: &[CyclesFigure]) {
    for &(kernel, prefix, parts, bound) in bounds {
        let got = cycles(report, kernel, prefix, parts);
        assert!(
            got <= bound,
            "{kernel} {prefix}: {got} cycles, bound {bound}"
        );
    }
}
