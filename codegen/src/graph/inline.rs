//! [`inline_repeats`]: a graph with every `Repeat` unrolled into copies of its region, so later
//! levels see one flat graph. Iteration `i`'s nodes get the label prefix `{region}{i}.` (e.g.
//! `encoder_layer0.fc1`) and its weights their per-iteration store names.
//! [`inline_repeats_as_loop`] does the same but keeps the first top-level repeat as a loop: its
//! body inlined once and marked ([`GraphLoop`]), so the compiler plans and emits it once.

use super::op::{compute_op, repeat_weight_name, Graph, GraphLoop, Node, Op, ValueHandle};
use super::verify::{verify, VerifyError};
use std::collections::HashMap;

/// Copies the nodes of `body` into `out` for one iteration; returns the value of its output.
fn copy_body(
    body: &Graph,
    out: &mut Graph,
    params: &[ValueHandle],
    weight_prefix: &str,
    label_prefix: &str,
    weights: &mut HashMap<String, ValueHandle>,
) -> Option<ValueHandle> {
    let mut map: Vec<Option<ValueHandle>> = vec![None; body.nodes.len()];
    let mut next_param = 0usize;
    let mut result = None;
    for (h, node) in body.nodes.iter() {
        let mapped = match &node.op {
            Op::Input { .. } => {
                let p = params.get(next_param).copied();
                next_param += 1;
                p?
            }
            Op::Weight { name } => {
                let full = format!("{weight_prefix}{name}");
                *weights.entry(full.clone()).or_insert_with(|| {
                    out.nodes.append(Node {
                        op: Op::Weight { name: full.clone() },
                        ty: node.ty.clone(),
                        label: full,
                    })
                })
            }
            Op::Output { x, .. } => {
                result = map[x.index()];
                continue;
            }
            // Bodies are inlined before they are copied, so a `Repeat` here is copied as is.
            Op::Repeat { .. } | compute_op!() => {
                let mut op = node.op.clone();
                op.map_operands(|v| map[v.index()].expect("operands precede users"));
                out.nodes.append(Node {
                    op,
                    ty: node.ty.clone(),
                    label: format!("{label_prefix}{}", node.label),
                })
            }
        };
        map[h.index()] = Some(mapped);
    }
    result
}

/// Unrolls every repeat (regions first, so nested repeats unroll too). The result has no
/// regions and is verified.
pub fn inline_repeats(graph: &Graph) -> Result<Graph, VerifyError> {
    inline(graph, false)
}

/// Unrolls every repeat but the first one of the top level with two or more iterations, which
/// is inlined once and marked as a loop in [`Graph::looped`] (with the store names of its
/// weights in every iteration). A graph without one comes back as [`inline_repeats`] makes it.
pub fn inline_repeats_as_loop(graph: &Graph) -> Result<Graph, VerifyError> {
    inline(graph, true)
}

fn inline(graph: &Graph, keep_loop: bool) -> Result<Graph, VerifyError> {
    let mut regions: Vec<Graph> = Vec::with_capacity(graph.regions.len());
    for (_, region) in graph.regions.iter() {
        regions.push(inline_repeats(&region.body)?);
    }
    let mut out = Graph::new();
    let mut map: Vec<ValueHandle> = Vec::with_capacity(graph.nodes.len());
    let mut weights: HashMap<String, ValueHandle> = HashMap::new();
    let mut looped: Option<GraphLoop> = None;
    for (_, node) in graph.nodes.iter() {
        let mapped = match &node.op {
            Op::Repeat {
                region,
                count,
                args,
                weight_prefix,
            } if keep_loop && looped.is_none() && *count >= 2 => {
                let body = &regions[region.index()];
                let name = &graph.regions[*region].name;
                let params: Vec<ValueHandle> = args.iter().map(|a| map[a.index()]).collect();
                let first = out.nodes.len();
                // A fresh weight map: every body weight node is in the body, even one whose
                // iteration-0 tensor is also read outside it.
                let mut body_weights: HashMap<String, ValueHandle> = HashMap::new();
                let prefix = repeat_weight_name(weight_prefix, 0, "");
                let value = copy_body(
                    body,
                    &mut out,
                    &params,
                    &prefix,
                    &format!("{name}0."),
                    &mut body_weights,
                );
                let (Some(carried_out), Some(&carried_in)) = (value, params.first()) else {
                    return Err(VerifyError::BadLoop {
                        name: name.clone(),
                        reason: "a repeat kept as a loop needs a carried parameter and an output"
                            .into(),
                    });
                };
                let mut per_iteration = std::collections::BTreeMap::new();
                for (_, n) in body.weights() {
                    let names: Vec<String> = (0..*count)
                        .map(|i| repeat_weight_name(weight_prefix, i, n))
                        .collect();
                    if names.iter().any(|m| *m != names[0]) {
                        per_iteration.insert(names[0].clone(), names);
                    }
                }
                looped = Some(GraphLoop {
                    name: name.clone(),
                    count: *count,
                    first,
                    end: out.nodes.len(),
                    carried_in,
                    carried_out,
                    weights: per_iteration,
                });
                carried_out
            }
            Op::Repeat {
                region,
                count,
                args,
                weight_prefix,
            } => {
                let body = &regions[region.index()];
                let name = &graph.regions[*region].name;
                let mut params: Vec<ValueHandle> = args.iter().map(|a| map[a.index()]).collect();
                for i in 0..*count {
                    let prefix = repeat_weight_name(weight_prefix, i, "");
                    let value = copy_body(
                        body,
                        &mut out,
                        &params,
                        &prefix,
                        &format!("{name}{i}."),
                        &mut weights,
                    );
                    if let (Some(v), Some(first)) = (value, params.first_mut()) {
                        *first = v;
                    }
                }
                params[0]
            }
            Op::Weight { name } => *weights
                .entry(name.clone())
                .or_insert_with(|| out.nodes.append(node.clone())),
            Op::Input { .. } | Op::Output { .. } | compute_op!() => {
                let mut op = node.op.clone();
                op.map_operands(|v| map[v.index()]);
                out.nodes.append(Node {
                    op,
                    ty: node.ty.clone(),
                    label: node.label.clone(),
                })
            }
        };
        map.push(mapped);
    }
    out.looped = looped;
    verify(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{dump, DType, GraphBuilder};

    #[test]
    fn a_repeat_becomes_copies_of_its_body() {
        let mut body = GraphBuilder::new();
        let x = body.input("x", DType::F16, [4, 8]).unwrap();
        let b = body.weight("b", DType::F32, [8]).unwrap();
        let y = body.bias_add("add", x, b).unwrap();
        let y = body.gelu("act", y).unwrap();
        body.output("y", y).unwrap();
        let body = body.finish().unwrap();
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F16, [4, 8]).unwrap();
        let r = g.region("layer", body).unwrap();
        let y = g.repeat("layers", r, 2, "l{i}.", &[x]).unwrap();
        g.output("y", y).unwrap();
        let flat = inline_repeats(&g.finish().unwrap()).unwrap();
        expect_test::expect![[r#"
            %0: f16[4, 8] = input "x"
            %1: f32[8] = weight "l0.b"
            %2: f16[4, 8] = bias_add %0, %1  // layer0.add
            %3: f16[4, 8] = gelu %2  // layer0.act
            %4: f32[8] = weight "l1.b"
            %5: f16[4, 8] = bias_add %3, %4  // layer1.add
            %6: f16[4, 8] = gelu %5  // layer1.act
            %7: f16[4, 8] = output "y", %6
        "#]]
        .assert_eq(&dump(&flat));
    }

    #[test]
    fn a_repeat_kept_as_a_loop_is_its_body_once() {
        let mut body = GraphBuilder::new();
        let x = body.input("x", DType::F16, [4, 8]).unwrap();
        let b = body.weight("b", DType::F32, [8]).unwrap();
        let s = body.weight("shared", DType::F32, [8]).unwrap();
        let y = body.bias_add("add", x, b).unwrap();
        let y = body.bias_add("add2", y, s).unwrap();
        let y = body.gelu("act", y).unwrap();
        body.output("y", y).unwrap();
        let body = body.finish().unwrap();
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F16, [4, 8]).unwrap();
        let x = g.gelu("pre", x).unwrap();
        let r = g.region("layer", body).unwrap();
        let y = g.repeat("layers", r, 3, "l{i}.", &[x]).unwrap();
        let y = g.gelu("post", y).unwrap();
        g.output("y", y).unwrap();
        let graph = g.finish().unwrap();
        let looped = inline_repeats_as_loop(&graph).unwrap();
        expect_test::expect![[r#"
            %0: f16[4, 8] = input "x"
            %1: f16[4, 8] = gelu %0  // pre
            loop `layer` x3: %2..%6, carried %1 -> %6 (2 per-iteration weights)
            %2: f32[8] = weight "l0.b"
            %3: f32[8] = weight "l0.shared"
            %4: f16[4, 8] = bias_add %1, %2  // layer0.add
            %5: f16[4, 8] = bias_add %4, %3  // layer0.add2
            %6: f16[4, 8] = gelu %5  // layer0.act
            %7: f16[4, 8] = gelu %6  // post
            %8: f16[4, 8] = output "y", %7
        "#]]
        .assert_eq(&dump(&looped));
        let l = looped.looped.as_ref().unwrap();
        assert_eq!(l.weights["l0.b"], ["l0.b", "l1.b", "l2.b"]);
        // Unrolled, there is no mark; a mark that breaks the rules is refused.
        let one = inline_repeats(&graph).unwrap();
        assert!(one.looped.is_none());
        let mut bad = looped.clone();
        bad.looped.as_mut().unwrap().carried_in = ValueHandle::from_index(3);
        assert!(matches!(verify(&bad), Err(VerifyError::BadLoop { .. })));
    }
}
