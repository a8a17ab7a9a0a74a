//! The checker's report: per case results and per kernel summaries (cases passed, simulated
//! cycles min/median/max, the estimate and its error).

use serde::Serialize;

/// One case's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub kernel: String,
    pub case: String,
    pub passed: bool,
    pub cycles: Option<u64>,
    pub estimate: u64,
    pub failure: Option<String>,
}

/// Per kernel figures.
#[derive(Clone, Debug, Serialize)]
pub struct KernelSummary {
    pub kernel: String,
    pub cases: usize,
    pub passed: usize,
    pub cycles_min: u64,
    pub cycles_median: u64,
    pub cycles_max: u64,
    /// Estimate for the median case.
    pub estimate_median: u64,
    /// Median over cases of |estimate - simulated| / simulated, in percent.
    pub estimate_error_percent: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    pub kernels: Vec<KernelSummary>,
    pub cases: Vec<CaseResult>,
}

impl CheckReport {
    pub fn new(cases: Vec<CaseResult>) -> CheckReport {
        let mut names: Vec<String> = Vec::new();
        for case in &cases {
            if !names.contains(&case.kernel) {
                names.push(case.kernel.clone());
            }
        }
        let kernels = names
            .iter()
            .map(|name| {
                let mine: Vec<&CaseResult> = cases.iter().filter(|c| &c.kernel == name).collect();
                let mut timed: Vec<(u64, u64)> = mine
                    .iter()
                    .filter_map(|c| c.cycles.map(|cy| (cy, c.estimate)))
                    .collect();
                timed.sort();
                let median = timed.get(timed.len() / 2).copied().unwrap_or((0, 0));
                let mut errors: Vec<f64> = timed
                    .iter()
                    .map(|&(sim, est)| (est as f64 - sim as f64).abs() / sim.max(1) as f64 * 100.0)
                    .collect();
                errors.sort_by(|a, b| a.total_cmp(b));
                KernelSummary {
                    kernel: name.clone(),
                    cases: mine.len(),
                    passed: mine.iter().filter(|c| c.passed).count(),
                    cycles_min: timed.first().map(|t| t.0).unwrap_or(0),
                    cycles_median: median.0,
                    cycles_max: timed.last().map(|t| t.0).unwrap_or(0),
                    estimate_median: median.1,
                    estimate_error_percent: errors.get(errors.len() / 2).copied().unwrap_or(0.0),
                }
            })
            .collect();
        CheckReport { kernels, cases }
    }

    pub fn total(&self) -> usize {
        self.cases.len()
    }

    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.passed).count()
    }

    pub fn failures(&self) -> impl Iterator<Item = &CaseResult> {
        self.cases.iter().filter(|c| !c.passed)
    }

    /// The table the CLI prints.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<28} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
            "kernel", "passed", "min cyc", "median", "max cyc", "estimate", "est err"
        );
        for k in &self.kernels {
            out += &format!(
                "{:<28} {:>3}/{:<3} {:>9} {:>9} {:>9} {:>9} {:>7.1}%\n",
                k.kernel,
                k.passed,
                k.cases,
                k.cycles_min,
                k.cycles_median,
                k.cycles_max,
                k.estimate_median,
                k.estimate_error_percent
            );
        }
        out += &format!(
            "{} passed, {} failed\n",
            self.passed(),
            self.total() - self.passed()
        );
        out
    }
}
