//! Builds a finalist's choices into a distributed-level program: every compute op with the
//! strategy the search chose (carried, not generated again), and for every operand the node
//! that brings it to the layout the strategy asks — the host writing an input or converting a
//! weight in that layout, or a
//! `Redistribute` of the computed value through its view (shared by every consumer asking the
//! same). Then the FP8 fusion rewrite and the verifier.

use super::forms::BaseKind;
use super::strategy::Strategy;
use super::{value_dims, PlanError, Planned};
use crate::graph::{Op, ValueHandle};
use crate::layout::{Distribution, Layout, Order, View};
use crate::mid::rewrite::{fuse_bias_adds, fuse_fp8_casts, RewriteLog};
use crate::mid::verify::verify;
use crate::mid::{AmpPrecision, MidId, MidNode, MidOp, MidProgram};
use std::collections::HashMap;
use std::sync::Arc;

/// Builds finalist `index`'s program (verified) and the log of its rewrites.
pub fn build(planned: &Planned, index: usize) -> Result<(MidProgram, RewriteLog), PlanError> {
    let graph = &planned.graph;
    let choices: HashMap<ValueHandle, Arc<Strategy>> = planned
        .finalists
        .get(index)
        .ok_or_else(|| PlanError::NothingFits(format!("no finalist {index}")))?
        .iter()
        .cloned()
        .collect();
    let mut program = MidProgram {
        route_policy: super::route_policy(planned.sram_saving),
        ..MidProgram::new()
    };
    let mut ids: Vec<Option<MidId>> = vec![None; graph.nodes.len()];
    let mut layouts: Vec<Option<Arc<Layout>>> = vec![None; graph.nodes.len()];
    // (base node, view, layout) → the node holding it.
    let mut made: HashMap<(ValueHandle, View, Layout), MidId> = HashMap::new();
    // In a loop's body: (the carried value's base, the body's first mid node).
    let body_entry: std::cell::Cell<Option<(ValueHandle, usize)>> = std::cell::Cell::new(None);

    // The node holding graph value `x` (a form) in `want`; a weight with a `stored` layout is
    // converted into that one and redistributed into `want`.
    let mut materialize = |program: &mut MidProgram,
                           ids: &[Option<MidId>],
                           x: ValueHandle,
                           want: &Layout,
                           stored: Option<&Layout>|
     -> Result<MidId, PlanError> {
        let form = &planned.forms[x.index()];
        let view = (*form.view).clone();
        let key = (form.base, view.clone(), want.clone());
        if let Some(&id) = made.get(&key) {
            // In a loop's body, the carried value changes every iteration: a node made from it
            // before the body holds iteration 0's and is not reused.
            let stale = body_entry
                .get()
                .is_some_and(|(carried, first)| carried == form.base && id.index() < first);
            if !stale {
                return Ok(id);
            }
        }
        let base = &graph.nodes[form.base];
        let label = graph.nodes[x].label.clone();
        let id = match (form.kind, stored) {
            (BaseKind::Weight, Some(stored)) => {
                let tensor = base.op.tensor_name().unwrap_or_default().to_string();
                let stored_key = (form.base, view.clone(), stored.clone());
                let home = match made.get(&stored_key) {
                    Some(&id) => id,
                    None => {
                        let id = program.push(MidNode {
                            op: MidOp::Weight { tensor, view },
                            shape: stored.dist.shape().to_vec(),
                            layout: stored.clone(),
                            label: label.clone(),
                        });
                        made.insert(stored_key, id);
                        id
                    }
                };
                program.push(MidNode {
                    op: MidOp::Redistribute {
                        x: home,
                        view: View::identity(stored.dist.shape()),
                    },
                    shape: want.dist.shape().to_vec(),
                    layout: want.clone(),
                    label: format!("{label}.gather"),
                })
            }
            (BaseKind::Input | BaseKind::Weight, _) => {
                let tensor = base.op.tensor_name().unwrap_or_default().to_string();
                let op = if form.kind == BaseKind::Input {
                    MidOp::Input { tensor, view }
                } else {
                    MidOp::Weight { tensor, view }
                };
                program.push(MidNode {
                    op,
                    shape: want.dist.shape().to_vec(),
                    layout: want.clone(),
                    label,
                })
            }
            (BaseKind::Compute, _) => {
                let base_id = ids[form.base.index()]
                    .ok_or_else(|| PlanError::op(graph, x, "operand not built"))?;
                if view.is_identity() && &program.nodes[base_id].layout == want {
                    base_id
                } else {
                    program.push(MidNode {
                        op: MidOp::Redistribute { x: base_id, view },
                        shape: want.dist.shape().to_vec(),
                        layout: want.clone(),
                        label,
                    })
                }
            }
        };
        made.insert(key, id);
        Ok(id)
    };

    let mut looped: Option<crate::mid::MidLoop> = None;
    let mut loop_first = 0;
    for (h, node) in graph.nodes.iter() {
        if let Some(l) = &graph.looped {
            if l.first == h.index() {
                loop_first = program.nodes.len();
                let carried = planned.forms[l.carried_in.index()].base;
                body_entry.set(Some((carried, loop_first)));
            }
            if l.end == h.index() {
                // The body is built: bring its result into the carried value's layout.
                let fail = |why: &str| PlanError::op(graph, l.carried_out, why);
                let entering = &planned.forms[l.carried_in.index()];
                if entering.kind != BaseKind::Compute || !entering.view.is_identity() {
                    return Err(fail("a loop's carried value must be computed before it"));
                }
                let carried_in = ids[entering.base.index()]
                    .ok_or_else(|| fail("the loop's carried value is not built"))?;
                let want = program.nodes[carried_in].layout.clone();
                let carry = materialize(&mut program, &ids, l.carried_out, &want, None)?;
                looped = Some(crate::mid::MidLoop {
                    name: l.name.clone(),
                    count: l.count,
                    first: loop_first,
                    end: program.nodes.len(),
                    carried_in,
                    carry,
                    weights: l.weights.clone(),
                });
            }
        }
        if let Op::Output { x, name } = &node.op {
            let form = &planned.forms[x.index()];
            let x_id = match form.kind {
                BaseKind::Compute => ids[form.base.index()]
                    .ok_or_else(|| PlanError::op(graph, h, "output of an unbuilt value"))?,
                BaseKind::Input | BaseKind::Weight => {
                    // The host reads it back from one tile, dense.
                    let shape = value_dims(&planned.graph, form.base);
                    let dist = Distribution::replicated(shape, vec![0])
                        .map_err(|e| PlanError::layout(graph, h, "the output's host copy", e))?;
                    let want = Layout {
                        dist,
                        order: Order::DENSE,
                        dtype: graph.nodes[form.base].ty.dtype,
                    };
                    materialize(&mut program, &ids, form.base, &want, None)?
                }
            };
            program.push(MidNode {
                op: MidOp::Output {
                    x: x_id,
                    tensor: name.clone(),
                    view: (*form.view).clone(),
                },
                shape: program.nodes[x_id].shape.clone(),
                layout: program.nodes[x_id].layout.clone(),
                label: name.clone(),
            });
            continue;
        }
        let Some(s) = choices.get(&h).cloned() else {
            continue;
        };
        let operands: Vec<MidId> = node
            .op
            .operands()
            .into_iter()
            .zip(&s.operands)
            .enumerate()
            .map(|(j, ((_, x), want))| {
                let stored = s.stored.get(j).and_then(Option::as_ref);
                materialize(&mut program, &ids, x, want, stored)
            })
            .collect::<Result<_, _>>()?;
        let op = match (&node.op, operands.as_slice()) {
            (Op::MatMul { a, .. } | Op::BatchedMatMul { a, .. }, [x, y]) => MidOp::MatMul {
                a: *x,
                b: *y,
                precision: if graph.nodes[*a].ty.dtype.is_fp8() {
                    AmpPrecision::Fp8
                } else {
                    AmpPrecision::F16
                },
            },
            (Op::BiasAdd { .. }, [x, bias]) => MidOp::BiasAdd { x: *x, bias: *bias },
            (Op::Add { .. }, [a, b]) => MidOp::Add { a: *a, b: *b },
            (Op::Gelu { .. }, [x]) => MidOp::Gelu { x: *x },
            (Op::Cast { .. }, [x]) => MidOp::Cast { x: *x },
            (Op::Softmax { scale, .. }, [x]) => MidOp::Softmax {
                x: *x,
                scale: *scale,
            },
            (Op::SoftmaxPart { scale, .. }, [x]) => MidOp::SoftmaxPart {
                x: *x,
                scale: *scale,
            },
            (Op::AttentionCombine { .. }, [parts, stats]) => MidOp::AttentionCombine {
                parts: *parts,
                stats: *stats,
            },
            (Op::SumParts { .. }, [x]) => MidOp::SumParts { x: *x, bias: None },
            (Op::LayerNorm { eps, .. }, [x, gamma, beta]) => MidOp::LayerNorm {
                x: *x,
                gamma: *gamma,
                beta: *beta,
                eps: *eps,
            },
            (op, _) => {
                return Err(PlanError::op(
                    graph,
                    h,
                    format!("{} has no distributed form", op.mnemonic()),
                ))
            }
        };
        let id = program.push(MidNode {
            op,
            shape: value_dims(&planned.graph, h),
            layout: s.out.clone(),
            label: node.label.clone(),
        });
        ids[h.index()] = Some(id);
        layouts[h.index()] = Some(Arc::new(s.out.clone()));
    }
    if graph.looped.is_some() && looped.is_none() {
        return Err(PlanError::NothingFits(
            "the loop's body ends the graph (nothing reads its result)".into(),
        ));
    }
    program.looped = looped;
    verify(&program).map_err(|source| PlanError::Malformed {
        stage: "built",
        source,
    })?;
    let mut log = fuse_fp8_casts(&mut program);
    if planned.fuse_bias_adds {
        let biases = fuse_bias_adds(&mut program);
        log.applied.extend(biases.applied);
        log.refused.extend(biases.refused);
    }
    verify(&program).map_err(|source| PlanError::Malformed {
        stage: "rewritten",
        source,
    })?;
    Ok((program, log))
}
