//! The planner: a bounded search over grid shapes (row blocks × column blocks) for a graph,
//! costed with a model of the same machine the simulator runs — kernel cycles from each
//! kernel's own estimate, exchange from words, bandwidth, latency and set-up, a global sync per
//! step — and memory from a real placement of every tile. It keeps the best finalists,
//! reports every candidate it explored and why it stopped, and is deterministic.

pub mod cost;

use crate::dist::{from_graph::distribute, rewrite, verify::verify, Grid, MidProgram};
use crate::graph::weights::WeightStore;
use crate::graph::Graph;
use crate::lower::{lower_with, WeightCache};
use crate::place::{place, Placement, Reserved};
use crate::target::Target;
use crate::tile::{verify::verify as verify_tiles, Program};
use cost::{estimate, Estimate};
use rayon::prelude::*;
use std::fmt::Write;

/// Search bounds.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// At most this many candidates are costed.
    pub max_candidates: usize,
    /// The best this many are kept and reported as finalists.
    pub finalists: usize,
    /// Fix the grid instead of searching (`--grid TMxTN`).
    pub grid: Option<(u32, u32)>,
    /// Space reserved at the start of SRAM for code and worker scratch (an upper bound; the
    /// emitter checks it).
    pub reserved: Reserved,
}

impl PlanOptions {
    pub fn for_target(target: &Target) -> PlanOptions {
        let code_end = target.sram_base + 48 * 1024;
        PlanOptions {
            max_candidates: 24,
            finalists: 4,
            grid: None,
            reserved: Reserved {
                code_end,
                worker_scratch: code_end,
                worker_scratch_bytes: 256,
            },
        }
    }
}

/// One costed (or rejected) candidate.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub tm: u32,
    pub tn: u32,
    pub outcome: Result<Estimate, String>,
}

/// A chosen plan with everything the later stages need.
pub struct Plan {
    pub mid: MidProgram,
    pub program: Program,
    pub placement: Placement,
    pub estimate: Estimate,
    pub report: PlanReport,
}

/// What the search did.
#[derive(Clone, Debug)]
pub struct PlanReport {
    pub explored: Vec<Candidate>,
    /// Indices into `explored`, best first.
    pub finalists: Vec<usize>,
    pub chosen: usize,
    pub stop_reason: String,
    pub rewrites: Vec<String>,
}

impl PlanReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "planner: explored {} candidates; {}",
            self.explored.len(),
            self.stop_reason
        );
        let _ = writeln!(
            out,
            "{:>5} {:>5} {:>12} {:>10}  {}",
            "tm", "tn", "est. cycles", "peak SRAM", "outcome"
        );
        for (i, c) in self.explored.iter().enumerate() {
            let mark = if i == self.chosen {
                "chosen"
            } else if self.finalists.contains(&i) {
                "finalist"
            } else {
                ""
            };
            match &c.outcome {
                Ok(e) => {
                    let _ = writeln!(
                        out,
                        "{:>5} {:>5} {:>12} {:>9}K  {mark}",
                        c.tm,
                        c.tn,
                        e.cycles,
                        e.peak_sram / 1024
                    );
                }
                Err(reason) => {
                    let _ = writeln!(
                        out,
                        "{:>5} {:>5} {:>12} {:>10}  rejected: {reason}",
                        c.tm, c.tn, "-", "-"
                    );
                }
            }
        }
        for r in &self.rewrites {
            let _ = writeln!(out, "rewrite: {r}");
        }
        out
    }
}

/// Why planning failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PlanError {
    #[error("E-PLAN-001 no candidate fits: {0}")]
    NothingFits(String),
    #[error("E-PLAN-002 {0}")]
    Stage(String),
}

/// The matmuls of a graph as (K, N).
fn matmul_shapes(graph: &Graph) -> Vec<(u64, u64)> {
    graph
        .nodes
        .iter()
        .filter_map(|(_, n)| match &n.op {
            crate::graph::Op::MatMul { b, .. } => {
                let dims = &graph.nodes[*b].ty.shape.0;
                Some((dims[0] as u64, dims[1] as u64))
            }
            _ => None,
        })
        .collect()
}

/// A quick analytical cost used only to order and prune candidates before the real costing:
/// AMP time per tile (128 FP8 MAC per cycle plus a per-block overhead), exchange time (the row
/// blocks every tile gathers, 4 bytes per cycle), and the weight bytes each tile must hold.
fn quick_cost(rows: u32, shapes: &[(u64, u64)], tm: u32, tn: u32) -> (u64, u64) {
    let rows_per_tile = rows.div_ceil(tm) as u64;
    let mut cycles = 0;
    let mut weights = 0;
    for &(k, n) in shapes {
        let cols = n.div_ceil(tn as u64).div_ceil(32) * 32;
        let blocks = k.div_ceil(32) * cols.div_ceil(16);
        cycles += rows_per_tile * k * cols / 128
            + blocks * (6 * (4 * rows_per_tile.div_ceil(6) + 28) + 60);
        cycles += rows_per_tile * k / 4;
        weights += k * cols;
    }
    (cycles, weights)
}

/// The candidate grids, most promising first by the quick cost, with those whose weights cannot
/// fit a tile's interleaved memory pruned; bounded by `max_candidates`. Returns the candidates
/// and how many grids were considered.
pub fn candidates(
    graph: &Graph,
    target: &Target,
    options: &PlanOptions,
) -> (Vec<(u32, u32)>, usize) {
    if let Some(grid) = options.grid {
        return (vec![grid], 1);
    }
    let rows = graph_rows(graph);
    let shapes = matmul_shapes(graph);
    let max_tn = shapes
        .iter()
        .map(|&(_, n)| n.div_ceil(32) as u32)
        .min()
        .unwrap_or(1)
        .max(1);
    let interleaved = target.region(true).map(|r| r.size as u64).unwrap_or(0);
    let mut all = Vec::new();
    for tm in 1..=rows.min(target.tiles) {
        for tn in 1..=(target.tiles / tm).min(max_tn) {
            // Keep only grids that use the tiles well: no grid row could take another column.
            if tn < (target.tiles / tm).min(max_tn) && tn * 2 <= (target.tiles / tm).min(max_tn) {
                continue;
            }
            let (cycles, weights) = quick_cost(rows, &shapes, tm, tn);
            if weights * 10 > interleaved * 9 {
                continue;
            }
            all.push((cycles, tm, tn));
        }
    }
    all.sort();
    let total = all.len();
    all.truncate(options.max_candidates);
    (all.into_iter().map(|(_, tm, tn)| (tm, tn)).collect(), total)
}

/// Distribute, rewrite, verify, lower and place one grid.
pub fn build(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    tm: u32,
    tn: u32,
    reserved: Reserved,
) -> Result<(MidProgram, Program, Placement, Vec<String>), String> {
    build_with(
        graph,
        store,
        target,
        tm,
        tn,
        reserved,
        &WeightCache::default(),
    )
}

/// [`build`] with weights converted once for every grid of the same `store`.
pub fn build_with(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    tm: u32,
    tn: u32,
    reserved: Reserved,
    cache: &WeightCache,
) -> Result<(MidProgram, Program, Placement, Vec<String>), String> {
    let rows = graph_rows(graph);
    if tm == 0 || tn == 0 || tm as u64 * tn as u64 > target.tiles as u64 {
        return Err(format!(
            "E-PLAN-003 grid {tm}x{tn} does not fit {} tiles (both sides at least 1)",
            target.tiles
        ));
    }
    if tm > rows {
        return Err(format!(
            "E-PLAN-004 grid {tm}x{tn} has more row blocks than the {rows} rows"
        ));
    }
    let mut mid = distribute(graph, Grid::new(tm, tn, rows)).map_err(|e| e.to_string())?;
    verify(&mid).map_err(|e| e.to_string())?;
    let mut log = rewrite::fuse_fp8_casts(&mut mid);
    let bypass = rewrite::bypass_identity_gathers(&mut mid);
    log.applied.extend(bypass.applied);
    rewrite::prune(&mut mid);
    verify(&mid).map_err(|e| e.to_string())?;
    let program = lower_with(&mid, store, target.tiles, cache).map_err(|e| e.to_string())?;
    verify_tiles(&program).map_err(|e| e.to_string())?;
    let placement = place(target, &program.tiles, reserved).map_err(|e| e.to_string())?;
    let mut notes = log.applied;
    notes.extend(log.refused.into_iter().map(|r| format!("refused: {r}")));
    Ok((mid, program, placement, notes))
}

/// Rows of the graph's activations (the first input's first dimension).
pub fn graph_rows(graph: &Graph) -> u32 {
    graph
        .nodes
        .iter()
        .find_map(|(_, n)| {
            matches!(n.op, crate::graph::Op::Input { .. })
                .then(|| n.ty.shape.0.first().copied().unwrap_or(1) as u32)
        })
        .unwrap_or(1)
}

/// A built and estimated candidate: (mid, program, placement, rewrite notes, estimate).
type Built = (MidProgram, Program, Placement, Vec<String>, Estimate);

/// The better of two bests, `a` from earlier candidates than `b`: fewer cycles, or the earlier
/// on a tie — what a sequential search keeping the first strictly better candidate finds.
fn earlier_best(a: Option<(usize, Built)>, b: Option<(usize, Built)>) -> Option<(usize, Built)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.1 .4.cycles < a.1 .4.cycles { b } else { a }),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Searches and returns the best plan. Candidates are built and costed in parallel; the
/// explored list and the choice are those of costing them one by one in order (only the best
/// build so far is kept, so memory does not grow with the number of candidates).
pub fn plan(
    graph: &Graph,
    store: &WeightStore,
    target: &Target,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let (grids, total) = candidates(graph, target, options);
    let cache = WeightCache::default();
    let (explored, best) = grids
        .par_iter()
        .enumerate()
        .map(|(index, &(tm, tn))| {
            match build_with(graph, store, target, tm, tn, options.reserved, &cache) {
                Ok((mid, program, placement, notes)) => {
                    let estimate = estimate(target, &program, &placement);
                    (
                        vec![Candidate {
                            tm,
                            tn,
                            outcome: Ok(estimate.clone()),
                        }],
                        Some((index, (mid, program, placement, notes, estimate))),
                    )
                }
                Err(reason) => (
                    vec![Candidate {
                        tm,
                        tn,
                        outcome: Err(reason),
                    }],
                    None,
                ),
            }
        })
        .reduce(
            || (Vec::new(), None),
            |(mut explored, a), (more, b)| {
                explored.extend(more);
                (explored, earlier_best(a, b))
            },
        );
    let stop_reason = if options.grid.is_some() {
        "the grid was fixed by the caller".to_string()
    } else if total > grids.len() {
        format!("stopped at the bound of {} candidates ({} more grids ranked lower by the quick model were not costed)", options.max_candidates, total - grids.len())
    } else {
        format!("costed every grid the quick model kept ({total})")
    };
    let Some((chosen, built)) = best else {
        let reasons: Vec<String> = explored
            .iter()
            .filter_map(|c| {
                c.outcome
                    .as_ref()
                    .err()
                    .map(|e| format!("{}x{}: {e}", c.tm, c.tn))
            })
            .take(3)
            .collect();
        return Err(PlanError::NothingFits(reasons.join("; ")));
    };
    let mut order: Vec<usize> = (0..explored.len())
        .filter(|&i| explored[i].outcome.is_ok())
        .collect();
    order.sort_by_key(|&i| {
        (
            explored[i]
                .outcome
                .as_ref()
                .map(|e| e.cycles)
                .unwrap_or(u64::MAX),
            i,
        )
    });
    order.truncate(options.finalists);
    let (mid, program, placement, rewrites, estimate) = built;
    let report = PlanReport {
        explored,
        finalists: order,
        chosen,
        stop_reason,
        rewrites,
    };
    Ok(Plan {
        mid,
        program,
        placement,
        estimate,
        report,
    })
}
