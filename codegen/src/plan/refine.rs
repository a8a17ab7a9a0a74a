//! After the search, refinements of the best plan that its beam does not reach on its own, each
//! kept where the whole plan's cost, replayed op by op with the search's own costing, is lower:
//!
//! * [`Replay::sums`]: another strategy for an element-wise op (the sums of a product's K
//!   chunks, bias adds, LayerNorms, GELU), the later ops replayed by their chosen labels (a
//!   `follow x` follows the new layout). The beam drops such plans where the op's own cost
//!   looks high: So400m/14 with the head at batch 2 kept fc1's sum in `blocks 24x61` (its GELU
//!   on rows of 72, 24.6k) where `rows on 1458` costs 38k less in all.
//! * [`Replay::panels`]: a split product's result written in panels of 16 columns
//!   ([`panel_twin`]). Offered to the search as strategies of their own, the panels changed
//!   which states the beam kept (batch 1, estimated 302,285 → 308,344: LayerNorms whole on 368
//!   tiles); applied to the search's best plan they change only themselves.

use std::sync::Arc;

use super::expand::{expand, Lookahead};
use super::forms::Form;
use super::strategy::{strategies, Ctx, Strategy, StrategyKind};
use super::{Choice, MoveCache, State};
use crate::graph::{Graph, Op, ValueHandle};
use crate::layout::{Layout, Order};
use crate::target::Target;

/// Columns of a panel: one AMP output channel block of f16 results.
const PANEL_COLUMNS: u32 = 16;

/// Least fall in the plan's cost a refinement keeps: below it the cost model's own error
/// decides (at batch 1 a changed `embeddings` sum priced 157 cycles cheaper estimated 331
/// dearer after lowering).
const MIN_GAIN: u64 = 500;

/// The end of a panel twin's label: `--force "OP=LABEL out panels"` picks it.
pub(super) const PANELS_SUFFIX: &str = " out panels";

/// The twin of a chosen strategy with its result in panels (`[..][nb][rows][16 columns]`, one
/// `gemm_*` call per column block): a batched product's grid (a product split along K, its
/// chunks the batch) in rows, whose result is split by columns over tiles that each hold
/// several column blocks. A consumer reading one column block of it (a sum's blocks) then takes
/// the block's rows as one run where it took one run a row. `None` for any other strategy.
pub(super) fn panel_twin(graph: &Graph, op: ValueHandle, s: &Strategy) -> Option<Strategy> {
    let batched = matches!(graph.nodes[op].op, Op::BatchedMatMul { .. });
    let rows = matches!(s.out.order, Order::RowMajor { .. });
    if !batched || !rows || s.kind != StrategyKind::Grid {
        return None;
    }
    let dist = &s.out.dist;
    let last = dist.rank().checked_sub(1)?;
    let column_blocks = dist.bounds()[last].len().saturating_sub(1);
    if column_blocks < 2 || dist.padded_box()[last] <= PANEL_COLUMNS {
        return None;
    }
    Some(Strategy {
        label: format!("{}{PANELS_SUFFIX}", s.label),
        out: Layout {
            order: Order::Panels,
            ..s.out.clone()
        },
        ..s.clone()
    })
}

/// The ops [`Replay::sums`] tries other strategies for: the element-wise ones whose layout
/// decides their neighbours' (products keep the search's grids, attention its layouts).
fn refinable(op: &Op) -> bool {
    match op {
        Op::Add { .. }
        | Op::BiasAdd { .. }
        | Op::LayerNorm { .. }
        | Op::Gelu { .. }
        | Op::SumParts { .. } => true,
        Op::MatMul { .. }
        | Op::BatchedMatMul { .. }
        | Op::Softmax { .. }
        | Op::SoftmaxPart { .. }
        | Op::AttentionCombine { .. }
        | Op::Cast { .. }
        | Op::Input { .. }
        | Op::Weight { .. }
        | Op::Reshape { .. }
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::SplitHeads { .. }
        | Op::MergeHeads { .. }
        | Op::Broadcast { .. }
        | Op::Repeat { .. }
        | Op::Output { .. } => false,
    }
}

/// What replaying a plan needs: the search's graph, costing and budgets.
pub(super) struct Replay<'a> {
    pub ctx: &'a Ctx<'a>,
    /// Ops whose strategy the caller fixed (`--force`): never changed.
    pub forced: &'a [ValueHandle],
    pub graph: &'a Graph,
    pub forms: &'a [Form],
    pub target: &'a Target,
    pub budgets: (u32, u32),
    pub moves: &'a MoveCache,
    pub lookahead: &'a Lookahead<'a>,
    pub trace: &'a crate::trace::Trace,
}

impl Replay<'_> {
    /// The plan of `choices` costed from `start` op by op as the search costs them; `None`
    /// where a strategy no longer fits.
    fn run(&self, start: &State, choices: &[(ValueHandle, Arc<Strategy>)]) -> Option<State> {
        let mut state = start.clone();
        for (op, strategy) in choices {
            state = self.step(&state, *op, strategy)?;
        }
        Some(state)
    }

    /// One op expanded from `state` by `strategy`; `None` where it does not fit.
    fn step(&self, state: &State, op: ValueHandle, strategy: &Arc<Strategy>) -> Option<State> {
        expand(
            self.graph,
            self.forms,
            self.target,
            self.budgets,
            self.moves,
            self.lookahead,
            state,
            op,
            strategy,
            self.trace,
        )
        .ok()
    }

    /// The states before each op of `best` and after the last, replayed from `start`.
    fn prefixes(&self, start: &State, best: &State) -> Option<Vec<State>> {
        let mut states = vec![start.clone()];
        for c in &best.choices {
            let next = self.step(states.last()?, c.op, &c.strategy)?;
            states.push(next);
        }
        Some(states)
    }

    /// From `state` (before op `at + 1` of `best`), the later ops of `best` replayed by their
    /// chosen labels: each takes the strategy with its label among those generated for the
    /// replayed state (a `follow x` follows the layout before it), or its chosen strategy
    /// where none has that label.
    fn replay_by_label(&self, mut state: State, best: &State, at: usize) -> Option<State> {
        for c in &best.choices[at + 1..] {
            let generated = strategies(self.ctx, c.op, &|v| state.layouts[v.index()].clone()).ok();
            let pick = generated
                .into_iter()
                .flatten()
                .find(|s| s.label == c.strategy.label)
                .map(Arc::new)
                .unwrap_or_else(|| c.strategy.clone());
            state = self.step(&state, c.op, &pick)?;
        }
        Some(state)
    }

    /// `best` with each element-wise op ([`refinable`]) given the strategy, among those the
    /// search generated for it, that lowers the plan's cost with the later ops replayed by
    /// label ([`Replay::replay_by_label`]); one op at a time in plan order, each kept change
    /// staying for the next. Returns the refined plan and the labels of the changed ops.
    pub(super) fn sums(&self, start: &State, best: State) -> (State, Vec<String>) {
        let mut best = best;
        let mut changed = Vec::new();
        let Some(mut states) = self.prefixes(start, &best) else {
            return (best, changed);
        };
        for at in 0..best.choices.len() {
            let Choice { op, strategy, .. } = &best.choices[at];
            let op = *op;
            if !refinable(&self.graph.nodes[op].op) || self.forced.contains(&op) {
                continue;
            }
            let before = &states[at];
            let Ok(alternatives) = strategies(self.ctx, op, &|v| before.layouts[v.index()].clone())
            else {
                continue;
            };
            let mut improved: Option<State> = None;
            for alternative in alternatives {
                if alternative.label == strategy.label {
                    continue;
                }
                let Some(first) = self.step(before, op, &Arc::new(alternative)) else {
                    continue;
                };
                let Some(done) = self.replay_by_label(first, &best, at) else {
                    continue;
                };
                let bar = improved
                    .as_ref()
                    .map_or(best.cost.saturating_sub(MIN_GAIN), |s| s.cost);
                if done.cost < bar {
                    improved = Some(done);
                }
            }
            if let Some(state) = improved {
                changed.push(self.graph.nodes[op].label.clone());
                best = state;
                match self.prefixes(start, &best) {
                    Some(s) => states = s,
                    None => break,
                }
            }
        }
        (best, changed)
    }

    /// `best` with each split product's result in panels where that lowers the plan's cost,
    /// one product at a time in plan order (each kept change stays for the next); `start` is
    /// the search's empty plan. Returns the refined plan and the labels of the changed ops.
    pub(super) fn panels(&self, start: &State, best: State) -> (State, Vec<String>) {
        let mut best = best;
        let mut changed = Vec::new();
        for i in 0..best.choices.len() {
            let Choice { op, strategy, .. } = &best.choices[i];
            let Some(twin) = panel_twin(self.graph, *op, strategy) else {
                continue;
            };
            let mut choices: Vec<(ValueHandle, Arc<Strategy>)> = best
                .choices
                .iter()
                .map(|c| (c.op, c.strategy.clone()))
                .collect();
            choices[i].1 = Arc::new(twin);
            if let Some(state) = self.run(start, &choices) {
                if state.cost < best.cost.saturating_sub(MIN_GAIN) {
                    changed.push(self.graph.nodes[state.choices[i].op].label.clone());
                    best = state;
                }
            }
        }
        (best, changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{DType, GraphBuilder};
    use crate::layout::{Distribution, TileGrid};

    fn strategy(bounds_n: Vec<u32>, order: Order, kind: StrategyKind) -> Strategy {
        let n = *bounds_n.last().unwrap();
        let grid = TileGrid::new(vec![2, bounds_n.len() as u32 - 1], 0);
        let dist = Distribution::on_grid(
            vec![2, 32, n],
            vec![vec![0, 1, 2], vec![0, 32], bounds_n],
            &grid,
            &[Some(0), None, Some(1)],
        )
        .unwrap();
        Strategy {
            label: "grid".into(),
            kind,
            out: Layout {
                dist,
                order,
                dtype: DType::F16,
            },
            operands: Vec::new(),
            stored: Vec::new(),
        }
    }

    /// Only a batched product's grid in rows, with several column blocks a tile over several
    /// tiles, has a twin, and the twin differs from it in the result's order alone.
    #[test]
    fn only_split_products_in_rows_with_wide_column_blocks_have_a_panel_twin() {
        let mut b = GraphBuilder::new();
        let a = b.input("a", DType::F16, [2, 32, 64]).unwrap();
        let w = b.input("w", DType::F16, [2, 64, 128]).unwrap();
        let batched = b.batched_matmul("p", a, w).unwrap();
        let sum = b.add("s", batched, batched).unwrap();
        b.output("y", sum).unwrap();
        let g = b.finish().unwrap();
        let wide = strategy(
            vec![0, 64, 128],
            Order::RowMajor { align: 16 },
            StrategyKind::Grid,
        );
        let twin = panel_twin(&g, batched, &wide).expect("a twin");
        assert_eq!(twin.out.order, Order::Panels);
        assert_eq!(twin.out.dist, wide.out.dist);
        assert_eq!(twin.label, "grid out panels");
        // One column block a tile, one column block in all, panels already, not a grid, not a
        // product.
        let narrow = strategy(
            (0..=8).map(|i| 16 * i).collect(),
            Order::RowMajor { align: 16 },
            StrategyKind::Grid,
        );
        assert!(panel_twin(&g, batched, &narrow).is_none());
        let whole = strategy(
            vec![0, 128],
            Order::RowMajor { align: 16 },
            StrategyKind::Grid,
        );
        assert!(panel_twin(&g, batched, &whole).is_none());
        assert!(panel_twin(&g, batched, &twin).is_none());
        let rows = strategy(
            vec![0, 64, 128],
            Order::RowMajor { align: 16 },
            StrategyKind::Rows,
        );
        assert!(panel_twin(&g, batched, &rows).is_none());
        assert!(panel_twin(&g, sum, &wide).is_none());
    }
}
