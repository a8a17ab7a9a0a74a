//! One step of the search: a partial plan expanded by one strategy of the next op — its cycles,
//! the weights it pins, the exchange code it leaves on tiles, and the SRAM checks that drop it.

use super::cost::{self, op_cycles, pin, shard_bytes, MoveCache};
use super::forms::{BaseKind, Form};
use super::prune::Prune;
use super::strategy::{strategies, Ctx, Strategy};
use super::{compute_kind, loop_copies, State};
use crate::graph::{Graph, ValueHandle};
use crate::layout::{Layout, View};
use crate::lower::calls::ComputeKind;
use crate::target::Target;
use std::sync::Arc;

/// Expands `state` by strategy `s` of op `h`: the new state, or why it was dropped.
#[allow(clippy::too_many_arguments)]
pub(super) fn expand(
    graph: &Graph,
    forms: &[Form],
    target: &Target,
    (budget, interleaved_budget): (u32, u32),
    moves: &MoveCache,
    lookahead: &Lookahead,
    state: &State,
    h: ValueHandle,
    s: &Arc<Strategy>,
    trace: &crate::trace::Trace,
) -> Result<State, Prune> {
    let kind = compute_kind(graph, h).ok_or("not a compute op")?;
    let operands: Vec<&Layout> = s.operands.iter().collect();
    let mut pending = state.pending.clone();
    if pending.contains_key(&h) {
        Arc::make_mut(&mut pending).remove(&h);
    }
    for &(c, j) in &lookahead.readers[h.index()] {
        let operand = graph.nodes[c].op.operands()[j].1;
        let view = &forms[operand.index()].view;
        let mut best: Option<u64> = None;
        for consumer in lookahead.strategies(c).iter().take(2) {
            if let Ok(m) = moves.cost(target, &s.out, view, &consumer.operands[j]) {
                best = Some(best.map_or(m.cycles, |b| b.min(m.cycles)));
            }
        }
        if let Some(b) = best {
            *Arc::make_mut(&mut pending).entry(c).or_default() += b;
        }
    }
    let mut cost = op_cycles(&kind, &s.out, &operands)?;
    let debug = trace.wants_op(&graph.nodes[h].label);
    let mut parts = vec![format!("kernel {cost}")];
    let mut weights = state.weights.clone();
    let mut own_weights = 0u64;
    let mut amp_weights = state.amp_weights.clone();
    let mut own_amp_weights = 0u64;
    let mut working = shard_bytes(&s.out) as u64;
    // A product's weights operand and result live in interleaved memory.
    let mut interleaved = 0u64;
    if matches!(kind, ComputeKind::MatMul { .. }) {
        interleaved = shard_bytes(&s.out) as u64
            + s.operands
                .get(1)
                .map(|b| shard_bytes(b) as u64)
                .unwrap_or(0);
    }
    let mut program = state.program.clone();
    // An operand moved into `want`: its cycles, the operand and its buffers as working SRAM,
    // and its exchange code and copy tables on `want`'s tiles for the rest of the run (the
    // busiest sampled tile's bytes stand for every tile of `want`).
    let mut charge = |m: cost::MoveCost, want: &Layout, what: String| {
        cost += m.cycles;
        if debug {
            parts.push(format!(
                "{what}: {} (windows {}, buffers {}, program {} typical, {} most)",
                m.cycles,
                m.windows,
                m.buffer_bytes,
                m.program.typical,
                m.program.most()
            ));
        }
        working += shard_bytes(want) as u64 + m.buffer_bytes as u64;
        if m.program.most() > 0 {
            let totals = Arc::make_mut(&mut program);
            for t in want.dist.all_tiles() {
                if let Some(v) = totals.get_mut(t as usize) {
                    *v = v.saturating_add(m.program.on(t));
                }
            }
        }
    };
    for (j, ((_, x), want)) in graph.nodes[h]
        .op
        .operands()
        .into_iter()
        .zip(&s.operands)
        .enumerate()
    {
        let form = &forms[x.index()];
        match form.kind {
            // A host input arrives in place.
            BaseKind::Input => charge(cost::MoveCost::default(), want, "input".into()),
            BaseKind::Weight => match s.stored.get(j).and_then(Option::as_ref) {
                None => {
                    let copies = loop_copies(graph, form.base);
                    pin(&mut weights, want, copies);
                    own_weights += shard_bytes(want) as u64 * copies as u64;
                    if j == 1 && matches!(kind, ComputeKind::MatMul { .. }) {
                        pin(&mut amp_weights, want, copies);
                        // One copy is this op's working set too (counted below).
                        own_amp_weights += shard_bytes(want) as u64;
                    }
                }
                Some(stored) => {
                    // Stored once; gathered into `want` for this op only.
                    let copies = loop_copies(graph, form.base);
                    pin(&mut weights, stored, copies);
                    own_weights += shard_bytes(stored) as u64 * copies as u64;
                    let identity = View::identity(stored.dist.shape());
                    let m = moves.cost(target, stored, &identity, want)?;
                    charge(m, want, format!("{} gathered", graph.nodes[x].label));
                }
            },
            BaseKind::Compute => {
                let from = state.layouts[form.base.index()]
                    .as_ref()
                    .ok_or("operand not planned")?;
                let m = moves.cost(target, from, &form.view, want)?;
                charge(m, want, graph.nodes[x].label.clone());
            }
        }
    }
    if debug {
        trace.line(&format!(
            "  {} [{}]: {} | pinned before: weights {}, program {}",
            s.label,
            from_label(state, graph),
            parts.join(", "),
            state.weights.iter().max().unwrap_or(&0),
            state.program.iter().max().unwrap_or(&0)
        ));
    }
    let worst_weights = s
        .out
        .dist
        .all_tiles()
        .map(|t| amp_weights.get(t as usize).copied().unwrap_or(0))
        .max()
        .unwrap_or(0);
    // What stays on a tile for the whole run: its weights and its program bytes.
    let resident = |t: usize| {
        (weights.get(t).copied().unwrap_or(0) as u64) + program.get(t).copied().unwrap_or(0) as u64
    };
    let worst = s
        .out
        .dist
        .all_tiles()
        .map(|t| resident(t as usize))
        .max()
        .unwrap_or(0);
    let pinned = (0..weights.len()).map(resident).max().unwrap_or(0);
    // A product's in-place weights are both pinned and part of its interleaved working set.
    let interleaved_use = (worst_weights as u64 + interleaved).saturating_sub(own_amp_weights);
    if interleaved_use > interleaved_budget as u64 {
        return Err(Prune::Interleaved {
            needed: interleaved_use,
            budget: interleaved_budget,
        });
    }
    let to_come = lookahead.weights_after[h.index()];
    if worst + working + to_come > budget as u64 || pinned + to_come > budget as u64 {
        return Err(Prune::Sram {
            pinned: worst.max(pinned),
            working,
            to_come,
            budget,
        });
    }
    let mut layouts = state.layouts.clone();
    layouts[h.index()] = Some(Arc::new(s.out.clone()));
    let mut choices = state.choices.clone();
    choices.push(super::Choice {
        op: h,
        strategy: s.clone(),
        cost,
    });
    Ok(State {
        cost: state.cost + cost,
        layouts,
        choices,
        weights,
        amp_weights,
        program,
        own_weights,
        pending,
    })
}

/// What the lookahead needs: who reads what through a view, and the strategies of those
/// readers that do not depend on their operands' layouts (made once per reader).
pub(super) struct Lookahead<'g> {
    pub(super) readers: Vec<Vec<(ValueHandle, usize)>>,
    /// Per node: bytes per tile, at the least, of the weights only later ops read
    /// ([`super::memory::weights_to_come`]).
    pub(super) weights_after: Vec<u64>,
    pub(super) ctx: &'g Ctx<'g>,
    pub(super) cache: std::sync::Mutex<std::collections::HashMap<ValueHandle, Arc<Vec<Strategy>>>>,
}

impl Lookahead<'_> {
    fn strategies(&self, c: ValueHandle) -> Arc<Vec<Strategy>> {
        if let Some(s) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(&c) {
            return s.clone();
        }
        let list = Arc::new(strategies(self.ctx, c, &|_| None).unwrap_or_default());
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(c, list.clone());
        list
    }
}

fn from_label(state: &State, graph: &Graph) -> String {
    state
        .choices
        .iter()
        .filter(|c| c.strategy.kind == super::strategy::StrategyKind::Grid)
        .map(|c| format!("{}:{}", graph.nodes[c.op].label, c.strategy.label))
        .collect::<Vec<_>>()
        .join(" ")
}
