//! The planner: chooses a layout for every compute op of a (repeat-free) graph by a bounded
//! beam search over the ops' [`strategy`]s, costed with the same machine the simulator runs
//! ([`cost`]: kernel estimates of the very calls the lowering makes, and the planned movement of
//! every redistribution an operand needs), and replays the best choices into a distributed-level
//! program ([`build`]).
//!
//! The search walks the compute ops in graph order. A state is the layouts chosen so far, the
//! weight bytes they pin on each tile, and the summed cost; each op expands every state by every
//! strategy (in parallel), drops expansions that do not fit a tile's SRAM, and keeps the
//! `beam` cheapest (ties: the earlier state and strategy). At the end the `finalists` cheapest
//! states are kept, best first; the report says how many expansions were made, how many were
//! pruned for memory and by the beam, and why the search stopped. Deterministic: the same graph
//! and options give the same plan on any number of threads.

pub mod build;
pub mod cost;
pub mod forms;
pub mod spread;
pub mod strategy;

use crate::graph::{Graph, Op, ValueHandle};
use crate::layout::Layout;
use crate::lower::calls::ComputeKind;
use crate::target::Target;
use cost::{op_cycles, pin, shard_bytes, MoveCache};
use forms::{BaseKind, Form};
use rayon::prelude::*;
use std::fmt::Write;
use std::sync::Arc;
use strategy::{strategies, Ctx, Strategy};

/// Search bounds.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// States kept after each op.
    pub beam: usize,
    /// Grid shapes tried per matrix product (per column granule).
    pub grids_per_product: usize,
    /// Best final states kept (the compiler falls back to them in order if placement fails).
    pub finalists: usize,
    /// Bytes of a tile's SRAM the planner lets weights and one op's working set use.
    pub sram_budget: u32,
}

impl PlanOptions {
    pub fn for_target(target: &Target) -> PlanOptions {
        PlanOptions {
            beam: 6,
            grids_per_product: 4,
            finalists: 3,
            // Kernel code, vertex state, supervisor and exchange programs take the rest.
            sram_budget: target.sram_size().saturating_sub(160 * 1024),
        }
    }
}

/// Why planning failed: the op it failed at and why (typed, never a panic).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("E-PLAN-001 {op} `{label}` (%{node}): {reason}")]
    Op {
        node: usize,
        op: &'static str,
        label: String,
        reason: String,
    },
    #[error("E-PLAN-002 no plan fits: {0}")]
    NothingFits(String),
    #[error("E-PLAN-003 bad options: {0}")]
    Options(String),
}

impl PlanError {
    pub fn op(graph: &Graph, h: ValueHandle, reason: impl Into<String>) -> PlanError {
        let node = &graph.nodes[h];
        PlanError::Op {
            node: h.index(),
            op: node.op.mnemonic(),
            label: node.label.clone(),
            reason: reason.into(),
        }
    }
}

/// One partial plan.
#[derive(Clone)]
struct State {
    cost: u64,
    /// Per graph node: the layout chosen for a compute node.
    layouts: Vec<Option<Arc<Layout>>>,
    /// Per planned compute op, in order: (node, strategy index, strategy label, cost).
    choices: Vec<(ValueHandle, u32, Arc<str>, u64)>,
    /// Weight bytes pinned on each tile.
    weights: Arc<Vec<u32>>,
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
    pub stop_reason: String,
    pub rewrites: Vec<String>,
}

impl PlanReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "planner: {} expansions, {} pruned for memory, {} dropped by the beam; {}",
            self.expansions, self.pruned_memory, self.dropped_by_beam, self.stop_reason
        );
        let _ = writeln!(out, "finalists (estimated cycles): {:?}", self.finalists);
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

/// The result of planning: the finalists' choices, best first, and the report.
pub struct Planned {
    /// The graph as planned (repeats unrolled).
    pub graph: Graph,
    pub forms: Vec<Form>,
    /// Strategy indices of each finalist, per compute op in graph order.
    pub finalists: Vec<Vec<(ValueHandle, u32)>>,
    pub report: PlanReport,
    pub granules: Vec<u32>,
    pub tiles: u32,
    pub grids_per_product: usize,
}

impl Planned {
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            graph: &self.graph,
            forms: &self.forms,
            tiles: self.tiles,
            granules: self.granules.clone(),
            grids_per_product: self.grids_per_product,
        }
    }
}

/// The kernel view of a graph compute op.
pub fn compute_kind(graph: &Graph, h: ValueHandle) -> Option<ComputeKind> {
    let node = &graph.nodes[h];
    Some(match &node.op {
        Op::MatMul { a, .. } | Op::BatchedMatMul { a, .. } => ComputeKind::MatMul {
            fp8: graph.nodes[*a].ty.dtype.is_fp8(),
        },
        Op::BiasAdd { .. } => ComputeKind::BiasAdd,
        Op::Add { .. } => ComputeKind::Add,
        Op::Gelu { .. } => ComputeKind::Gelu,
        Op::Softmax { scale, .. } => ComputeKind::Softmax { scale: *scale },
        Op::LayerNorm { eps, .. } => ComputeKind::LayerNorm { eps: *eps },
        Op::Cast { .. } => ComputeKind::Cast,
        Op::Input { .. }
        | Op::Weight { .. }
        | Op::Reshape { .. }
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::SplitHeads { .. }
        | Op::MergeHeads { .. }
        | Op::Broadcast { .. }
        | Op::Repeat { .. }
        | Op::Output { .. } => return None,
    })
}

/// Expands `state` by strategy `s` of op `h`: the new state, or why it was dropped.
#[allow(clippy::too_many_arguments)]
fn expand(
    graph: &Graph,
    forms: &[Form],
    target: &Target,
    budget: u32,
    moves: &MoveCache,
    state: &State,
    h: ValueHandle,
    index: usize,
    s: &Strategy,
) -> Result<State, String> {
    let kind = compute_kind(graph, h).ok_or("not a compute op")?;
    let operands: Vec<&Layout> = s.operands.iter().collect();
    let mut cost = op_cycles(&kind, &s.out, &operands)?;
    let mut weights = state.weights.clone();
    let mut working = shard_bytes(&s.out) as u64;
    for ((_, x), want) in graph.nodes[h].op.operands().into_iter().zip(&s.operands) {
        let form = &forms[x.index()];
        match form.kind {
            BaseKind::Input => working += shard_bytes(want) as u64,
            BaseKind::Weight => pin(&mut weights, want),
            BaseKind::Compute => {
                let from = state.layouts[form.base.index()]
                    .as_ref()
                    .ok_or("operand not planned")?;
                let m = moves.cost(target, from, &form.view, want)?;
                cost += m.cycles;
                working += shard_bytes(want) as u64 + m.buffer_bytes as u64;
            }
        }
    }
    let worst = s
        .out
        .dist
        .all_tiles()
        .map(|t| weights.get(t as usize).copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let pinned = weights.iter().copied().max().unwrap_or(0);
    if worst as u64 + working > budget as u64 || pinned > budget {
        return Err(format!(
            "needs {} bytes of weights and {working} working bytes on a tile (budget {budget})",
            worst.max(pinned)
        ));
    }
    let mut layouts = state.layouts.clone();
    layouts[h.index()] = Some(Arc::new(s.out.clone()));
    let mut choices = state.choices.clone();
    choices.push((h, index as u32, Arc::from(s.label.as_str()), cost));
    Ok(State {
        cost: state.cost + cost,
        layouts,
        choices,
        weights,
    })
}

/// Plans `graph` for `target`.
pub fn plan(graph: &Graph, target: &Target, options: &PlanOptions) -> Result<Planned, PlanError> {
    if options.beam == 0 || options.finalists == 0 || options.grids_per_product == 0 {
        return Err(PlanError::Options(format!(
            "beam {}, finalists {} and grids per product {} must all be at least 1",
            options.beam, options.finalists, options.grids_per_product
        )));
    }
    let graph =
        crate::graph::inline_repeats(graph).map_err(|e| PlanError::NothingFits(e.to_string()))?;
    let forms = forms::forms(&graph)?;
    let granules = strategy::head_granules(&graph);
    let ctx = Ctx {
        graph: &graph,
        forms: &forms,
        tiles: target.tiles,
        granules: granules.clone(),
        grids_per_product: options.grids_per_product,
    };
    let moves = MoveCache::default();
    let mut beam = vec![State {
        cost: 0,
        layouts: vec![None; graph.nodes.len()],
        choices: Vec::new(),
        weights: Arc::new(vec![0; target.tiles as usize]),
    }];
    let mut report = PlanReport::default();
    let mut tried_per_op: Vec<usize> = Vec::new();
    for (h, _) in graph.nodes.iter() {
        if compute_kind(&graph, h).is_none() {
            continue;
        }
        // Strategies per state (they depend on the operands' layouts).
        let per_state: Vec<Vec<Strategy>> = beam
            .iter()
            .map(|state| strategies(&ctx, h, &|v| state.layouts[v.index()].clone()))
            .collect::<Result<_, _>>()?;
        tried_per_op.push(per_state.iter().map(Vec::len).max().unwrap_or(0));
        let jobs: Vec<(usize, usize)> = per_state
            .iter()
            .enumerate()
            .flat_map(|(si, list)| (0..list.len()).map(move |k| (si, k)))
            .collect();
        let results: Vec<Result<State, String>> = jobs
            .par_iter()
            .map(|&(si, k)| {
                expand(
                    &graph,
                    &forms,
                    target,
                    options.sram_budget,
                    &moves,
                    &beam[si],
                    h,
                    k,
                    &per_state[si][k],
                )
            })
            .collect();
        report.expansions += results.len();
        let mut next: Vec<(usize, State)> = Vec::new();
        let mut reasons: Vec<String> = Vec::new();
        for (order, r) in results.into_iter().enumerate() {
            match r {
                Ok(s) => next.push((order, s)),
                Err(reason) => {
                    report.pruned_memory += 1;
                    if reasons.len() < 3 {
                        reasons.push(reason);
                    }
                }
            }
        }
        if next.is_empty() {
            return Err(PlanError::op(
                &graph,
                h,
                format!("no strategy fits: {}", reasons.join("; ")),
            ));
        }
        next.sort_by_key(|(order, s)| (s.cost, *order));
        report.dropped_by_beam += next.len().saturating_sub(options.beam);
        next.truncate(options.beam);
        beam = next.into_iter().map(|(_, s)| s).collect();
    }
    beam.truncate(options.finalists);
    let best = &beam[0];
    report.ops = best
        .choices
        .iter()
        .zip(&tried_per_op)
        .map(|((h, _, label, cost), &tried)| {
            (
                graph.nodes[*h].label.clone(),
                tried,
                label.to_string(),
                *cost,
            )
        })
        .collect();
    report.finalists = beam.iter().map(|s| s.cost).collect();
    report.stop_reason = format!(
        "planned all {} compute ops with a beam of {} (every state expanded by every strategy)",
        tried_per_op.len(),
        options.beam
    );
    let finalists = beam
        .iter()
        .map(|s| s.choices.iter().map(|(h, i, _, _)| (*h, *i)).collect())
        .collect();
    Ok(Planned {
        graph,
        forms,
        finalists,
        report,
        granules,
        tiles: target.tiles,
        grids_per_product: options.grids_per_product,
    })
}
