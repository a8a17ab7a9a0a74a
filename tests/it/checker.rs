//! The kernel checker as the kernel-family test modules use it: run a family's default or random cases on ipu21, require every case to pass, look up a case's simulated cycles.

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
