//! Steps: compute steps and exchange phases as virtual steps (`C0 X0 C1 X1 …` = 0, 1, 2, 3, …),
//! the compute step each redistribution's result is needed in, and the real steps and buffer
//! lifetimes the used virtual steps become.

use super::{Lower, Lowered};
use crate::mid::{MidId, MidOp, MidProgram};
use crate::redist::Movement;
use crate::tile::KernelCall;
use std::collections::{HashMap, HashSet};

pub(super) const NO_STEP: usize = usize::MAX;

pub(super) fn compute_vstep(step: usize) -> usize {
    2 * step
}

pub(super) fn exchange_vstep(step: usize) -> usize {
    2 * step + 1
}

impl Lower<'_> {
    /// The program: calls in their real steps (but `dropped`, indices into the calls),
    /// transfers, step labels and buffer lives.
    pub(super) fn finish(mut self, dropped: &HashSet<usize>) -> Lowered {
        let calls: Vec<(usize, u32, KernelCall)> = std::mem::take(&mut self.calls)
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, c)| c)
            .collect();
        self.calls = calls;
        // The virtual steps in use, in order.
        let mut used: Vec<usize> = self.calls.iter().map(|c| c.0).collect();
        used.extend(
            self.transfers
                .iter()
                .filter(|(_, t)| !t.is_empty())
                .map(|(&s, _)| exchange_vstep(s)),
        );
        used.sort_unstable();
        used.dedup();
        if used.is_empty() {
            used.push(0);
        }
        let index: HashMap<usize, usize> = used.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let mut step_ops = Vec::with_capacity(used.len());
        for &v in &used {
            let ops = self.step_ops.remove(&v).unwrap_or_default();
            let label = ops.join(", ");
            if v % 2 == 0 {
                self.program.compute_step(&label);
            } else {
                let transfers = self.transfers.remove(&(v / 2)).unwrap_or_default();
                self.program
                    .exchange_step(&format!("exchange: {label}"), transfers);
            }
            step_ops.push(ops);
        }
        for (v, tile, call) in std::mem::take(&mut self.calls) {
            let step = index[&v];
            self.program.tiles[tile as usize].calls[step].push(call);
        }
        let last = used.len() - 1;
        // Map virtual uses to real steps: the first used step at or after, the last at or before.
        let first_at = |v: usize| used.partition_point(|&u| u < v).min(last);
        let last_at = |v: usize| used.partition_point(|&u| u <= v).saturating_sub(1);
        for (tile, uses) in self.program.tiles.iter_mut().zip(&self.uses) {
            for (buffer, &(first, end)) in tile.buffers.iter_mut().zip(uses) {
                let (mut a, b) = if first == NO_STEP {
                    (0, 0)
                } else {
                    (
                        first_at(first),
                        if end >= usize::MAX - 1 {
                            last
                        } else {
                            last_at(end)
                        },
                    )
                };
                if buffer.contents.is_some() {
                    a = 0;
                }
                buffer.live = (a.min(b), b.max(a));
            }
        }
        for input in &self.program.inputs {
            for piece in &input.pieces {
                let buffer =
                    &mut self.program.tiles[piece.tile as usize].buffers[piece.buffer.0 as usize];
                buffer.live.0 = 0;
            }
        }
        if let (Some(l), Some((b0, b1))) = (&self.mid.looped, self.body) {
            let first = used.partition_point(|&u| u < compute_vstep(b0));
            let end = used.partition_point(|&u| u <= compute_vstep(b1));
            if first < end {
                let (first, last) = (first, end - 1);
                // A buffer used both in the body and outside it lives through the whole body:
                // the body runs again while it holds its value.
                for tile in &mut self.program.tiles {
                    for buffer in &mut tile.buffers {
                        let (a, b) = buffer.live;
                        if a <= last && b >= first && (a < first || b > last) {
                            buffer.live = (a.min(first), b.max(last));
                        }
                    }
                }
                let mut layered = vec![std::collections::BTreeMap::new(); self.program.tiles.len()];
                for (&(tile, buffer), &stride) in &self.layered {
                    layered[tile as usize].insert(buffer, stride);
                }
                self.program.looped = Some(crate::tile::StepLoop {
                    first,
                    last,
                    count: l.count,
                    layered,
                });
            }
        }
        Lowered {
            program: self.program,
            step_ops,
        }
    }
}

/// The compute step every value is ready in. Compute ops run in program order: an op joins the
/// step of the op before it unless an operand reaches it over the exchange, in which case it
/// starts the next step and that exchange runs in the phase just before (as late as its readers
/// allow). So a large destination — a head's keys or values broadcast to every query tile — is
/// live only from the phase before its reader, and two of them do not pile up in one step.
///
/// In a program with a loop, the body's work starts in a compute step of its own after
/// everything before it, and the work after the body in one after the body's last (a node's
/// *floor*): so the body's steps are a range that can run again.
///
/// With `early_exchanges`, [`join_earlier_phases`] then moves the exchanges that stage nothing on
/// their senders into earlier phases.
pub(super) fn late_steps(
    mid: &MidProgram,
    movements: &[Option<Movement>],
    early_exchanges: bool,
) -> Schedule {
    let n = mid.nodes.len();
    let mut asap = vec![0usize; n];
    let mut floors = vec![0usize; n];
    let mut floor = 0usize;
    let mut latest = 0usize;
    let mut body = None;
    let exchanged = |id: MidId| {
        movements[id.index()]
            .as_ref()
            .is_some_and(|m| m.has_exchange())
    };
    let mut current = 0usize;
    for (id, node) in mid.nodes.iter() {
        if let Some(l) = &mid.looped {
            if id.index() == l.first {
                floor = latest + 1;
                current = current.max(floor);
            }
            if id.index() == l.end {
                body = Some((floor, latest.max(floor)));
                floor = latest.max(floor) + 1;
                current = current.max(floor);
            }
        }
        floors[id.index()] = floor;
        let operands = node.op.operands();
        let ready = operands
            .iter()
            .map(|o| asap[o.index()])
            .max()
            .unwrap_or(0)
            .max(if node.op.operands().is_empty() {
                0
            } else {
                floor
            });
        // A redistribution waits for its exchange; a compute op starts a new step after an
        // exchanged operand (`MidOp::is_compute` is the one exhaustive classification).
        asap[id.index()] = if let MidOp::Redistribute { .. } = node.op {
            ready + usize::from(exchanged(id))
        } else if node.op.is_compute() {
            let new_step = operands
                .iter()
                .any(|&o| matches!(mid.nodes[o].op, MidOp::Redistribute { .. }) && exchanged(o));
            let step = ready.max(if new_step { current + 1 } else { current });
            current = step;
            step
        } else {
            ready
        };
        latest = latest.max(asap[id.index()]);
    }
    if let Some(l) = &mid.looped {
        if l.end == n {
            body = Some((floor, latest.max(floor)));
        }
    }
    let readers = mid.readers();
    let mut late = asap.clone();
    for (id, node) in mid.nodes.iter() {
        if matches!(node.op, MidOp::Redistribute { .. }) {
            if let Some(first) = readers[id.index()]
                .iter()
                .filter(|r| !matches!(mid.nodes[**r].op, MidOp::Output { .. }))
                .map(|r| asap[r.index()])
                .min()
            {
                late[id.index()] = first.max(asap[id.index()]);
            }
            // A redistribution in a loop's body whose readers all come after the loop (the
            // last layer's output into `post_layernorm`'s layout) still runs in the body: its
            // work is emitted once with the body's and repeats with it.
            if let (Some(l), Some((_, last))) = (&mid.looped, body) {
                if (l.first..l.end).contains(&id.index()) {
                    late[id.index()] = late[id.index()].min(last).max(asap[id.index()]);
                }
            }
        }
    }
    if early_exchanges {
        join_earlier_phases(mid, movements, &asap, &mut late);
    }
    Schedule { late, floors, body }
}

/// Moves every exchange with no copies on its senders (`Movement::before` empty) into the
/// earliest exchange phase already in use at or after its source is ready, where that comes
/// before the phase its readers need: one phase and its sync fewer, and its receivers' copies
/// in the compute step after that phase, for a destination buffer that lives longer. Exchanges
/// with sender-side copies stay: their copies would join an earlier compute step, which the
/// values' `$CWEI` reorder (on the tiles computing the scores) showed costs more than the
/// merged phase gains. A phase all of whose exchanges move away is no longer joined.
/// Measured on one So400m/14 layer with the head, batch 1: estimate 345,261 → 342,895.
fn join_earlier_phases(
    mid: &MidProgram,
    movements: &[Option<Movement>],
    asap: &[usize],
    late: &mut [usize],
) {
    let exchanged = |id: MidId| {
        movements[id.index()]
            .as_ref()
            .is_some_and(|m| m.has_exchange())
    };
    // Exchanges per phase (keyed by the compute step after it).
    let mut phases: std::collections::BTreeMap<usize, usize> = Default::default();
    for (id, node) in mid.nodes.iter() {
        if matches!(node.op, MidOp::Redistribute { .. }) && exchanged(id) {
            *phases.entry(late[id.index()]).or_default() += 1;
        }
    }
    for (id, node) in mid.nodes.iter() {
        let unstaged = movements[id.index()]
            .as_ref()
            .is_some_and(|m| m.has_exchange() && m.before.is_empty());
        if !matches!(node.op, MidOp::Redistribute { .. }) || !unstaged {
            continue;
        }
        let from = late[id.index()];
        let Some((&to, _)) = phases.range(asap[id.index()]..from).next() else {
            continue;
        };
        late[id.index()] = to;
        *phases.entry(to).or_default() += 1;
        if let Some(count) = phases.get_mut(&from) {
            *count -= 1;
            if *count == 0 {
                phases.remove(&from);
            }
        }
    }
}

/// When values are needed: see [`late_steps`].
pub(super) struct Schedule {
    /// Per redistribution: the compute step its result is needed in.
    pub late: Vec<usize>,
    /// Per node: the first compute step its work may use.
    pub floors: Vec<usize>,
    /// A loop's body: its first and last compute step.
    pub body: Option<(usize, usize)>,
}
