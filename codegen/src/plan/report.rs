//! How a search ended and what it reports: [`StopReason`], [`Fallback`], [`PlanReport`].

use std::fmt::Write;

/// How the search ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StopReason {
    /// No search has run (a default report).
    #[default]
    NotRun,
    /// Every compute op was planned: every state of the beam expanded by every strategy.
    Planned {
        ops: usize,
        beam: usize,
        sram_saving: bool,
    },
    /// Every compute op was planned, but [`SearchLimits::max_expansions`] ran out after the
    /// first `full_beam` of them: the rest were planned from the best state alone.
    ExpansionLimit {
        ops: usize,
        beam: usize,
        limit: usize,
        full_beam: usize,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::NotRun => write!(f, "no search ran"),
            StopReason::Planned {
                ops,
                beam,
                sram_saving,
            } => write!(
                f,
                "planned all {ops} compute ops with a beam of {beam} (every state expanded by every strategy{})",
                if *sram_saving {
                    ", SRAM-saving strategies included"
                } else {
                    ""
                }
            ),
            StopReason::ExpansionLimit {
                ops,
                beam,
                limit,
                full_beam,
            } => write!(
                f,
                "planned all {ops} compute ops; the limit of {limit} expansions ran out after {full_beam} of them with a beam of {beam}, the other {} planned greedily from the best state",
                ops - full_beam
            ),
        }
    }
}

/// What the compiler did around a search that did not give a plan that fits, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// The SRAM-saving search ran because the ordinary one refused (its error's text).
    SramSaving { because: String },
    /// Planned again with `kib` KiB more per tile left to what the planner does not model,
    /// as no finalist fit placement (the refusals' text).
    Tightened { kib: u32, refusals: String },
    /// The product `label` was split along K into two, as none of its strategies fit.
    SplitK { label: String, refusals: String },
}

impl std::fmt::Display for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fallback::SramSaving { because } => write!(f, "searched because {because}"),
            Fallback::Tightened { kib, refusals } => write!(
                f,
                "planned again leaving {kib} KiB more per tile to what the planner does not model (no finalist fit: {refusals})"
            ),
            Fallback::SplitK { label, refusals } => write!(
                f,
                "`{label}` split along K into 2 products (no strategy fit:{refusals})"
            ),
        }
    }
}

/// What the search did.
#[derive(Clone, Debug, Default)]
pub struct PlanReport {
    /// Per compute op of the best plan: (label, strategies considered, chosen strategy, cost).
    pub ops: Vec<(String, usize, String, u64)>,
    pub expansions: usize,
    pub pruned_memory: usize,
    pub dropped_by_beam: usize,
    /// Cost of each finalist, best first.
    pub finalists: Vec<u64>,
    pub stop: StopReason,
    /// What the compiler did before this search gave a plan that fits.
    pub fallbacks: Vec<Fallback>,
    pub rewrites: Vec<String>,
    /// The ops whose strategy the refinements after the search changed (`refine.rs`).
    pub refined: Vec<String>,
}

impl PlanReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "planner: {} expansions, {} pruned for memory, {} dropped by the beam; {}{}",
            self.expansions,
            self.pruned_memory,
            self.dropped_by_beam,
            self.stop,
            self.fallbacks
                .iter()
                .map(|f| format!("; {f}"))
                .collect::<String>()
        );
        let _ = writeln!(out, "finalists (estimated cycles): {:?}", self.finalists);
        if !self.refined.is_empty() {
            let _ = writeln!(out, "refined after the search: {}", self.refined.join(", "));
        }
        let _ = writeln!(
            out,
            "{:>10} {:>6}  {:<28} strategy",
            "est. cycles", "tried", "op"
        );
        for (label, tried, chosen, cost) in &self.ops {
            let _ = writeln!(out, "{cost:>10} {tried:>6}  {label:<28} {chosen}");
        }
        for r in &self.rewrites {
            let _ = writeln!(out, "rewrite: {r}");
        }
        out
    }
}
