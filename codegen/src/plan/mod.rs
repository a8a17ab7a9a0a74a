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
mod expand;
pub mod forms;
mod memory;
pub mod prune;
mod refine;
mod report;
pub mod spread;
pub mod strategy;

use crate::graph::op::view_op;
use crate::graph::{Graph, Op, ValueHandle};
use crate::layout::Layout;
use crate::lower::calls::ComputeKind;
use crate::target::Target;
use cost::MoveCache;
use expand::{expand, Lookahead};
use forms::{BaseKind, Form};
pub use memory::{loop_copies, resident_bytes, PROGRAM_RESERVE, SRAM_SAVING_RESERVE};
use memory::{weight_allowances, weights_to_come};
use rayon::prelude::*;
pub use report::{Fallback, PlanReport, StopReason};
use std::sync::Arc;
use strategy::{strategies, Ctx, Strategy};

/// Bounds on the work of one search, beside the beam's width. Deterministic: counted in
/// expansions (a state expanded by one strategy, costed), not in time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Once this many expansions are spent, the remaining ops are planned greedily: the beam
    /// keeps only its best state, so each op costs one state's strategies
    /// ([`StopReason::ExpansionLimit`]). `None`: no limit.
    pub max_expansions: Option<usize>,
}

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
    /// The same when [`PlanOptions::sram_saving`] is on.
    pub sram_saving_budget: u32,
    /// Bytes of the interleaved region the same may use (AMP weights and products live there).
    pub interleaved_budget: u32,
    /// Fixed choices: (op label, strategy label) — the op takes that strategy (as printed in
    /// the plan report), for experiments and for pinning a plan.
    pub force: Vec<(String, String)>,
    /// Also try strategies that trade cycles for SRAM: replicated weights stored once and
    /// gathered before each use, product columns in whole FP8 K-blocks (so the consumer's
    /// panels arrive without staging). The compiler turns this on when a plan without it does
    /// not fit.
    pub sram_saving: bool,
    /// Keep the graph's first top-level repeat as a loop (planned, lowered and emitted once,
    /// run `count` times) instead of unrolling it.
    pub layer_loop: bool,
    /// Store weights stored once dealt around all tiles (`Some(true)`) or on their products'
    /// grids (`Some(false)`); `None`: around all tiles when the model's weights take more than
    /// 1/[`strategy::SPREAD_ABOVE_SHARE`] of every tile.
    pub spread_stored: Option<bool>,
    /// Offer `SoftmaxPart` results in AMP panels at scale 1 (the product of the exponentials
    /// reads them where they lie), besides rows. Its caller chooses: the search's sampled costs
    /// misprice the values' reorder that the panels' plans trade against (So400m+head batch 1:
    /// 528,877 cropped with panels, 539,546 estimated without; batch 2: 874,409 with, the plan
    /// sending the exponentials to the values' tiles, against 845,827 without). Since the timed
    /// receives a cycle apart the panels win at every batch the CLI measured (`tessera run
    /// --softmax-panels true|false`): batch 2 435,746 cropped against 441,309, batch 4 estimated
    /// 1,063,919 against 1,080,385, the built-in model 84,492 against 85,127; the CLI turns them
    /// on by default.
    pub softmax_part_panels: bool,
    /// Offer products their A operand in rows (read where an exchange left them), besides
    /// AMP-left panels. Its caller chooses: So400m+head batch 1 475,967 cropped with rows
    /// against 513,834 without; batch 4 (with the MLP padded) 1,608,072 with, the beam then
    /// keeping a worse attention layout (scores 85k against 49k, their q/k exchange 71k against
    /// 34k), against 1,517,382 without.
    pub products_read_rows: bool,
    /// Run the bias add after a sum of two partial products in the sum's pass
    /// ([`crate::mid::rewrite::fuse_bias_adds`]; the values are the same bits either way).
    pub fuse_bias_adds: bool,
    /// After the search, write split products' results in panels of 16 columns where the
    /// plan's cost says so ([`refine::Replay::panels`]).
    pub panel_results: bool,
    /// After the search, give element-wise ops (sums, bias adds, LayerNorms, GELU) another of
    /// their strategies where the plan's cost says so, the later ops replayed by label
    /// ([`refine::Replay::sums`]).
    pub refine_sums: bool,
    /// Bounds on the search's work ([`SearchLimits`]); none by default.
    pub limits: SearchLimits,
    /// Diagnostic lines (timings, the beam, one op's pricing); off by default.
    pub trace: crate::trace::Trace,
}

impl PlanOptions {
    pub fn for_target(target: &Target) -> PlanOptions {
        PlanOptions {
            beam: 8,
            grids_per_product: 4,
            finalists: 3,
            // Kernel code, vertex state, supervisor and exchange programs take the rest.
            sram_budget: target.sram_size().saturating_sub(PROGRAM_RESERVE),
            sram_saving_budget: target.sram_size().saturating_sub(SRAM_SAVING_RESERVE),
            interleaved_budget: target
                .region(true)
                .map(|r| r.size)
                .unwrap_or(0)
                .saturating_sub(32 * 1024),
            force: Vec::new(),
            sram_saving: false,
            softmax_part_panels: true,
            products_read_rows: true,
            fuse_bias_adds: true,
            panel_results: true,
            refine_sums: true,
            layer_loop: false,
            spread_stored: None,
            limits: SearchLimits::default(),
            trace: crate::trace::Trace::default(),
        }
    }
}

/// Why planning failed: the op it failed at and why (typed, never a panic).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// Every strategy of an op was costed and none fits the tiles' SRAM: the one refusal a
    /// search with other strategies (SRAM-saving ones) can answer.
    #[error(
        "E-PLAN-004 {op} `{label}` (%{node}): no strategy fits:{}",
        prune::describe(reasons)
    )]
    DoesNotFit {
        node: usize,
        op: &'static str,
        label: String,
        /// The first few refusals (the search stops collecting after a handful).
        reasons: Vec<prune::Prune>,
    },
    /// The distributed-level program built from the chosen plan breaks an invariant: a bug
    /// of the planner or of a rewrite, not of the input.
    #[error("E-PLAN-005 the {stage} program is malformed")]
    Malformed {
        /// "built" (straight from the choices) or "rewritten" (after the mid rewrites).
        stage: &'static str,
        #[source]
        source: crate::mid::verify::MidVerifyError,
    },
    /// An op's layout or view cannot be formed (a view that does not compose, a distribution
    /// the layout refuses): the sizes of the graph, not of the machine.
    #[error("E-PLAN-006 {op} `{label}` (%{node}): {what}")]
    Layout {
        node: usize,
        op: &'static str,
        label: String,
        /// What was being formed.
        what: &'static str,
        #[source]
        source: crate::layout::LayoutError,
    },
    /// The graph's repeats cannot be inlined into one graph (or a loop of one).
    #[error("E-PLAN-007 the graph's repeats cannot be inlined")]
    Inline {
        #[source]
        source: crate::graph::VerifyError,
    },
}

impl PlanError {
    /// [`PlanError::Layout`] at op `h`.
    pub fn layout(
        graph: &Graph,
        h: ValueHandle,
        what: &'static str,
        source: crate::layout::LayoutError,
    ) -> PlanError {
        let node = &graph.nodes[h];
        PlanError::Layout {
            node: h.index(),
            op: node.op.mnemonic(),
            label: node.label.clone(),
            what,
            source,
        }
    }

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

/// The strategy a partial plan took for one compute op.
#[derive(Clone, Debug)]
struct Choice {
    op: ValueHandle,
    /// The strategy itself: the build takes it as it is, without generating the op's
    /// strategies again.
    strategy: Arc<Strategy>,
    /// What the op added to the plan's estimated cycles.
    cost: u64,
}

/// One partial plan.
#[derive(Clone)]
struct State {
    cost: u64,
    /// Per graph node: the layout chosen for a compute node.
    layouts: Vec<Option<Arc<Layout>>>,
    /// Per planned compute op, in order.
    choices: Vec<Choice>,
    /// Weight bytes pinned on each tile.
    weights: Arc<Vec<u32>>,
    /// The part of `weights` that a product reads in place, which lives in interleaved memory
    /// (a weight stored once and gathered may be anywhere).
    amp_weights: Arc<Vec<u32>>,
    /// Program bytes pinned on each tile by the redistributions planned so far: exchange code
    /// and copy tables, which stay for the whole run (see [`cost::ProgramBytes`]).
    program: Arc<Vec<u32>>,
    /// Weight bytes the last op pinned on each of its tiles.
    own_weights: u64,
    /// Lookahead: for ops not planned yet that read a planned value through a view, the
    /// cheapest conversion of that operand among a few of their strategies (for ranking only;
    /// replaced by the real cost when the op is planned).
    pending: Arc<std::collections::BTreeMap<ValueHandle, u64>>,
}

impl State {
    /// What states are ranked by: the cost so far and the lookahead of what is pending.
    fn rank(&self) -> u64 {
        self.cost + self.pending.values().sum::<u64>()
    }
}

/// The shape of value `h` as the `u32` dimensions that views and layouts take.
fn value_dims(graph: &Graph, h: ValueHandle) -> Vec<u32> {
    graph.nodes[h]
        .ty
        .shape
        .0
        .iter()
        .map(|&d| d as u32)
        .collect()
}

/// For every compute node `h`: the later compute ops reading `h` through a view (with the
/// operand index), looking through the elementwise ops that follow `h` (a bias add after a
/// product keeps its layout), so a product's layout is costed against how attention reads it.
fn view_readers(graph: &Graph, forms: &[Form]) -> Vec<Vec<(ValueHandle, usize)>> {
    let n = graph.nodes.len();
    let mut direct: Vec<Vec<(ValueHandle, usize)>> = vec![Vec::new(); n];
    let mut followers: Vec<Vec<ValueHandle>> = vec![Vec::new(); n];
    for (c, node) in graph.nodes.iter() {
        if compute_kind(graph, c).is_none() {
            continue;
        }
        for (j, (_, x)) in node.op.operands().into_iter().enumerate() {
            let form = &forms[x.index()];
            if form.kind != BaseKind::Compute {
                continue;
            }
            if form.view.is_identity() {
                if j == 0
                    && matches!(
                        node.op,
                        Op::BiasAdd { .. } | Op::Gelu { .. } | Op::Cast { .. }
                    )
                {
                    followers[form.base.index()].push(c);
                }
            } else {
                direct[form.base.index()].push((c, j));
            }
        }
    }
    let mut out = direct.clone();
    for h in (0..n).rev() {
        for &f in &followers[h].clone() {
            let more = out[f.index()].clone();
            out[h].extend(more);
        }
    }
    out
}

/// The result of planning: the finalists' choices, best first, and the report.
pub struct Planned {
    /// The graph as planned (repeats unrolled).
    pub graph: Graph,
    pub forms: Vec<Form>,
    /// The strategies of each finalist, per compute op in graph order.
    pub finalists: Vec<Vec<(ValueHandle, Arc<Strategy>)>>,
    pub report: PlanReport,
    pub granules: Vec<u32>,
    pub row_granules: Vec<u32>,
    pub tiles: u32,
    pub grids_per_product: usize,
    pub sram_saving: bool,
    pub softmax_part_panels: bool,
    pub products_read_rows: bool,
    /// See [`PlanOptions::fuse_bias_adds`].
    pub fuse_bias_adds: bool,
    /// See [`Ctx::stored_bases`].
    pub stored_bases: Vec<u32>,
}

impl Planned {
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            graph: &self.graph,
            forms: &self.forms,
            tiles: self.tiles,
            granules: self.granules.clone(),
            row_granules: self.row_granules.clone(),
            grids_per_product: self.grids_per_product,
            sram_saving: self.sram_saving,
            softmax_part_panels: self.softmax_part_panels,
            products_read_rows: self.products_read_rows,
            stored_bases: self.stored_bases.clone(),
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
        Op::BiasAdd { .. } => ComputeKind::BiasAdd { slots: None },
        Op::Add { .. } => ComputeKind::Add { slots: None },
        Op::Gelu { .. } => ComputeKind::Gelu,
        Op::Softmax { scale, .. } => ComputeKind::Softmax { scale: *scale },
        Op::SoftmaxPart { scale, .. } => ComputeKind::SoftmaxPart { scale: *scale },
        Op::AttentionCombine { .. } => ComputeKind::AttentionCombine,
        Op::SumParts { .. } => ComputeKind::SumParts,
        Op::LayerNorm { eps, .. } => ComputeKind::LayerNorm { eps: *eps },
        Op::Cast { .. } => ComputeKind::Cast,
        Op::Input { .. }
        | Op::Weight { .. }
        | view_op!()
        | Op::Repeat { .. }
        | Op::Output { .. } => return None,
    })
}

/// For every compute base: the position of the last node reading it (through any view).
fn last_reads(graph: &Graph, forms: &[Form]) -> Vec<usize> {
    let mut last = vec![0usize; graph.nodes.len()];
    for (h, node) in graph.nodes.iter() {
        for (_, x) in node.op.operands() {
            let base = forms[x.index()].base.index();
            last[base] = last[base].max(h.index());
        }
    }
    last
}

/// What the rest of the search can see of a state at position `at`: the layouts of the
/// computed values read later. Two states with equal signatures have the same future.
fn signature(state: &State, last_reads: &[usize], at: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (i, layout) in state.layouts.iter().enumerate() {
        if let Some(l) = layout {
            if last_reads[i] > at {
                i.hash(&mut hasher);
                l.hash(&mut hasher);
            }
        }
    }
    hasher.finish()
}

/// The next beam from expansions sorted best first: one state per signature (the cheapest),
/// first the best state of every combination of the last two grid choices (up to half the
/// beam, so a product's alternatives survive until the ops after it show what they are worth),
/// then the cheapest others.
fn select(sorted: Vec<(usize, State)>, beam: usize, key: impl Fn(&State) -> u64) -> Vec<State> {
    let keys: Vec<u64> = sorted.iter().map(|(_, s)| key(s)).collect();
    let mut seen = std::collections::HashSet::new();
    let mut taken = vec![false; sorted.len()];
    let mut strategies_seen = std::collections::HashSet::new();
    let mut picked: Vec<usize> = Vec::new();
    for (i, (_, s)) in sorted.iter().enumerate() {
        if picked.len() >= beam.div_ceil(2) {
            break;
        }
        // The last two grid choices (the decisions whose worth later ops reveal).
        let strategy: Vec<(ValueHandle, Arc<str>)> = s
            .choices
            .iter()
            .rev()
            .filter(|c| c.strategy.kind == strategy::StrategyKind::Grid)
            .take(2)
            .map(|c| (c.op, Arc::from(c.strategy.label.as_str())))
            .collect();
        if !seen.contains(&keys[i]) && strategies_seen.insert(strategy) {
            seen.insert(keys[i]);
            taken[i] = true;
            picked.push(i);
        }
    }
    for i in 0..sorted.len() {
        if picked.len() >= beam {
            break;
        }
        if !taken[i] && seen.insert(keys[i]) {
            taken[i] = true;
            picked.push(i);
        }
    }
    picked.sort_unstable();
    let mut out: Vec<Option<State>> = sorted.into_iter().map(|(_, s)| Some(s)).collect();
    picked.into_iter().filter_map(|i| out[i].take()).collect()
}

/// How movements are routed in a plan with or without SRAM saving (the lowering routes the
/// built program's movements the same way).
pub fn route_policy(sram_saving: bool) -> crate::redist::RoutePolicy {
    if sram_saving {
        crate::redist::RoutePolicy::SRAM_SAVING
    } else {
        crate::redist::RoutePolicy::DEFAULT
    }
}

/// Plans `graph` for `target`.
pub fn plan(graph: &Graph, target: &Target, options: &PlanOptions) -> Result<Planned, PlanError> {
    plan_with_progress(graph, target, options, &|_| {})
}

/// How far a search has got: compute ops planned of all, and candidate states costed so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchProgress {
    pub ops_done: usize,
    pub ops: usize,
    pub costed: usize,
}

/// [`plan`], calling `progress` after every compute op.
pub fn plan_with_progress(
    graph: &Graph,
    target: &Target,
    options: &PlanOptions,
    progress: &dyn Fn(SearchProgress),
) -> Result<Planned, PlanError> {
    if options.beam == 0 || options.finalists == 0 || options.grids_per_product == 0 {
        return Err(PlanError::Options(format!(
            "beam {}, finalists {} and grids per product {} must all be at least 1",
            options.beam, options.finalists, options.grids_per_product
        )));
    }
    // A graph the compiler has already inlined (and perhaps split) is planned as it is, so its
    // loop mark stays.
    let graph = if graph
        .nodes
        .iter()
        .any(|(_, n)| matches!(n.op, Op::Repeat { .. }))
    {
        let inline = if options.layer_loop {
            crate::graph::inline::inline_repeats_as_loop
        } else {
            crate::graph::inline_repeats
        };
        inline(graph).map_err(|source| PlanError::Inline { source })?
    } else {
        graph.clone()
    };
    let forms = forms::forms(&graph)?;
    for (op, _) in &options.force {
        let known = graph
            .nodes
            .iter()
            .any(|(h, n)| n.label == *op && compute_kind(&graph, h).is_some());
        if !known {
            return Err(PlanError::Options(format!(
                "a forced strategy names `{op}`, which is no compute op of the graph (the plan report lists them)"
            )));
        }
    }
    let granules = strategy::head_granules(&graph);
    let row_granules = strategy::key_block_granules(&graph);
    let ctx = Ctx {
        graph: &graph,
        forms: &forms,
        tiles: target.tiles,
        granules: granules.clone(),
        row_granules: row_granules.clone(),
        grids_per_product: options.grids_per_product,
        sram_saving: options.sram_saving,
        softmax_part_panels: options.softmax_part_panels,
        products_read_rows: options.products_read_rows,
        stored_bases: match options.spread_stored {
            Some(false) => Vec::new(),
            Some(true) => Ctx::stored_bases(&graph, target.tiles, 0),
            None => Ctx::stored_bases(&graph, target.tiles, target.sram_size()),
        },
    };
    let moves = MoveCache::new(route_policy(options.sram_saving), options.sram_saving);
    let empty = State {
        cost: 0,
        layouts: vec![None; graph.nodes.len()],
        choices: Vec::new(),
        weights: Arc::new(vec![0; target.tiles as usize]),
        amp_weights: Arc::new(vec![0; target.tiles as usize]),
        program: Arc::new(vec![0; target.tiles as usize]),
        own_weights: 0,
        pending: Arc::new(std::collections::BTreeMap::new()),
    };
    let mut beam = vec![empty.clone()];
    let lookahead = Lookahead {
        readers: view_readers(&graph, &forms),
        weights_after: weights_to_come(&graph, &forms, target.tiles),
        ctx: &ctx,
        cache: Default::default(),
    };
    let sram_budget = if options.sram_saving {
        options.sram_saving_budget
    } else {
        options.sram_budget
    };
    let allowances = weight_allowances(&graph, &forms, sram_budget.min(options.interleaved_budget));
    let live_after = last_reads(&graph, &forms);
    let mut report = PlanReport::default();
    let mut tried_per_op: Vec<usize> = Vec::new();
    let ops = graph
        .nodes
        .iter()
        .filter(|(h, _)| compute_kind(&graph, *h).is_some())
        .count();
    let mut ops_done = 0;
    // The ops planned with the whole beam before the expansion limit ran out.
    let mut limited_after: Option<usize> = None;
    for (h, _) in graph.nodes.iter() {
        if compute_kind(&graph, h).is_none() {
            continue;
        }
        if let Some(limit) = options.limits.max_expansions {
            if report.expansions >= limit {
                limited_after.get_or_insert(ops_done);
                // The beam is in rank order: its best state goes on alone.
                beam.truncate(1);
            }
        }
        progress(SearchProgress {
            ops_done,
            ops,
            costed: report.expansions,
        });
        ops_done += 1;
        // Strategies per state (they depend on the operands' layouts).
        let forced = options
            .force
            .iter()
            .find(|(op, _)| *op == graph.nodes[h].label)
            .map(|(_, s)| s.as_str());
        // A forced result in panels ([`refine::panel_twin`]) names a twin the search does not
        // offer: the op's strategies then come with their twins.
        let twins = forced.is_some_and(|f| f.ends_with(refine::PANELS_SUFFIX));
        let per_state: Vec<Vec<Arc<Strategy>>> = beam
            .iter()
            .map(|state| {
                strategies(&ctx, h, &|v| state.layouts[v.index()].clone()).map(|list| {
                    let extra: Vec<Strategy> = if twins {
                        list.iter()
                            .filter_map(|s| refine::panel_twin(&graph, h, s))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    list.into_iter().chain(extra).map(Arc::new).collect()
                })
            })
            .collect::<Result<_, _>>()?;
        // A forced op expands only the strategy with that label; the lists stay whole, as the
        // build replays a choice by its index.
        let allowed = |s: &Arc<Strategy>| forced.is_none_or(|f| s.label == f);
        if let Some(f) = forced {
            if !per_state.iter().flatten().any(allowed) {
                let mut offered: Vec<String> =
                    strategies(&ctx, h, &|v| beam[0].layouts[v.index()].clone())?
                        .into_iter()
                        .map(|s| s.label)
                        .collect();
                let mut seen = std::collections::HashSet::new();
                offered.retain(|label| seen.insert(label.clone()));
                offered.truncate(12);
                return Err(PlanError::op(
                    &graph,
                    h,
                    format!(
                        "the forced strategy `{f}` is none of the op's strategies (among them: {})",
                        offered.join("; ")
                    ),
                ));
            }
        }
        tried_per_op.push(per_state.iter().map(Vec::len).max().unwrap_or(0));
        let jobs: Vec<(usize, usize)> = per_state
            .iter()
            .enumerate()
            .flat_map(|(si, list)| (0..list.len()).map(move |k| (si, k)))
            .collect();
        let results: Vec<Result<State, prune::Prune>> = jobs
            .par_iter()
            .filter(|&&(si, k)| allowed(&per_state[si][k]))
            .map(|&(si, k)| {
                expand(
                    &graph,
                    &forms,
                    target,
                    (sram_budget, options.interleaved_budget),
                    &moves,
                    &lookahead,
                    &beam[si],
                    h,
                    &per_state[si][k],
                    &options.trace,
                )
            })
            .collect();
        report.expansions += results.len();
        let mut next: Vec<(usize, State)> = Vec::new();
        let mut reasons: Vec<prune::Prune> = Vec::new();
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
        if options.trace.beam {
            let mut shown: Vec<&(usize, State)> = next.iter().collect();
            shown.sort_by_key(|(o, s)| (s.cost, *o));
            for (_, s) in shown.iter().take(4) {
                let path: Vec<String> = s
                    .choices
                    .iter()
                    .filter(|c| c.strategy.kind == strategy::StrategyKind::Grid)
                    .map(|c| format!("{}:{}", graph.nodes[c.op].label, c.strategy.label))
                    .collect();
                options.trace.line(&format!(
                    "{}: cost {} (+{}) pinned {} | {}",
                    graph.nodes[h].label,
                    s.cost,
                    s.choices.last().map(|c| c.cost).unwrap_or(0),
                    s.weights.iter().max().unwrap_or(&0),
                    path.join(" ")
                ));
            }
        }
        if next.is_empty() {
            let node = &graph.nodes[h];
            return Err(PlanError::DoesNotFit {
                node: h.index(),
                op: node.op.mnemonic(),
                label: node.label.clone(),
                reasons,
            });
        }
        let allowance = allowances[h.index()];
        if next.iter().any(|(_, s)| s.own_weights <= allowance) {
            let before = next.len();
            next.retain(|(_, s)| s.own_weights <= allowance);
            report.pruned_memory += before - next.len();
        }
        next.sort_by_key(|(order, s)| (s.rank(), *order));
        let before = next.len();
        let width = if limited_after.is_some() {
            1
        } else {
            options.beam
        };
        beam = select(next, width, |s| signature(s, &live_after, h.index()));
        report.dropped_by_beam += before - beam.len();
    }
    beam.truncate(options.finalists);
    let forced: Vec<ValueHandle> = graph
        .nodes
        .iter()
        .filter(|(_, n)| options.force.iter().any(|(op, _)| *op == n.label))
        .map(|(h, _)| h)
        .collect();
    let replay = refine::Replay {
        ctx: &ctx,
        forced: &forced,
        graph: &graph,
        forms: &forms,
        target,
        budgets: (sram_budget, options.interleaved_budget),
        moves: &moves,
        lookahead: &lookahead,
        trace: &options.trace,
    };
    if options.refine_sums && !beam.is_empty() {
        let (refined, changed) = replay.sums(&empty, beam[0].clone());
        beam[0] = refined;
        report.refined.extend(changed);
    }
    if options.panel_results && !beam.is_empty() {
        let (refined, changed) = replay.panels(&empty, beam[0].clone());
        beam[0] = refined;
        report.refined.extend(changed);
    }
    let best = &beam[0];
    report.ops = best
        .choices
        .iter()
        .zip(&tried_per_op)
        .map(|(c, &tried)| {
            (
                graph.nodes[c.op].label.clone(),
                tried,
                c.strategy.label.clone(),
                c.cost,
            )
        })
        .collect();
    report.finalists = beam.iter().map(|s| s.cost).collect();
    report.stop = match (limited_after, options.limits.max_expansions) {
        (Some(full_beam), Some(limit)) => StopReason::ExpansionLimit {
            ops: tried_per_op.len(),
            beam: options.beam,
            limit,
            full_beam,
        },
        _ => StopReason::Planned {
            ops: tried_per_op.len(),
            beam: options.beam,
            sram_saving: options.sram_saving,
        },
    };
    let finalists = beam
        .iter()
        .map(|s| {
            s.choices
                .iter()
                .map(|c| (c.op, c.strategy.clone()))
                .collect()
        })
        .collect();
    let stored_bases = ctx.stored_bases.clone();
    Ok(Planned {
        graph,
        forms,
        finalists,
        report,
        granules,
        row_granules,
        tiles: target.tiles,
        grids_per_product: options.grids_per_product,
        sram_saving: options.sram_saving,
        softmax_part_panels: options.softmax_part_panels,
        products_read_rows: options.products_read_rows,
        fuse_bias_adds: options.fuse_bias_adds,
        stored_bases,
    })
}
