//! The graph verifier: checks a finished or rewritten [`Graph`] without trusting whoever built
//! it. Tests run it after every pass.
//!
//! It checks, in this order, for every node: operand handles are in range (E-VERIFY-001) and
//! defined before use (E-VERIFY-002); the op is valid under the type rules (E-VERIFY-003) and
//! its stored type is the one they give (E-VERIFY-004). Then: input, weight and output names
//! are unique (E-VERIFY-005); there is at least one output (E-VERIFY-006); every value
//! reaches an output (E-VERIFY-007, no dead values); every region body verifies
//! (E-VERIFY-008) and is used (E-VERIFY-009); and no two weight nodes read the same store
//! tensor once repeat prefixes are applied (E-VERIFY-010).

use std::collections::HashMap;
use std::fmt;

use super::op::{compute_op, repeat_weight_name, Graph, Op, RegionHandle, ValueHandle};
use super::types::TensorType;
use super::typing::{check_declared_type, infer, GraphError, Site};

/// A node and its op, shown as ``%5 (matmul `fc1`)``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct At {
    pub node: ValueHandle,
    pub site: Site,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{} ({})", self.node.index(), self.site)
    }
}

/// What is wrong with a graph.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error("E-VERIFY-001: {at}: operand {operand} is %{}, but the graph has {len} values", .handle.index())]
    HandleOutOfRange {
        at: At,
        operand: &'static str,
        handle: ValueHandle,
        len: usize,
    },

    #[error("E-VERIFY-002: {at}: operand {operand} is %{}, which is not defined before its use", .handle.index())]
    UseBeforeDefinition {
        at: At,
        operand: &'static str,
        handle: ValueHandle,
    },

    #[error("E-VERIFY-003: {at}: invalid op: {source}")]
    InvalidOp { at: At, source: Box<GraphError> },

    #[error("E-VERIFY-004: {at}: stored type is {stored}, but the operands give {inferred}")]
    TypeMismatch {
        at: At,
        stored: TensorType,
        inferred: TensorType,
    },

    #[error("E-VERIFY-005: the {kind} name `{name}` is used by both %{} and %{}", .first.index(), .second.index())]
    DuplicateName {
        kind: &'static str,
        name: String,
        first: ValueHandle,
        second: ValueHandle,
    },

    #[error("E-VERIFY-006: the graph has no output")]
    NoOutput,

    #[error("E-VERIFY-007: {at}: dead value: no output depends on it")]
    DeadValue { at: At },

    #[error("E-VERIFY-008: in region {region:?} `{name}`: {source}")]
    InRegion {
        region: RegionHandle,
        name: String,
        source: Box<VerifyError>,
    },

    #[error("E-VERIFY-009: region {region:?} `{name}` is not used by any repeat")]
    UnusedRegion { region: RegionHandle, name: String },

    #[error("E-VERIFY-010: store weight `{name}` is read by two different weight nodes ({first} and {second})")]
    WeightNameCollision {
        name: String,
        first: String,
        second: String,
    },

    #[error("E-VERIFY-011: loop `{name}`: {reason}")]
    BadLoop { name: String, reason: String },
}

fn at(graph: &Graph, node: ValueHandle) -> At {
    let n = &graph.nodes[node];
    At {
        node,
        site: Site::new(n.op.mnemonic(), n.label.clone()),
    }
}

/// Verifies `graph` and, recursively, the bodies of its regions. Returns the first problem.
pub fn verify(graph: &Graph) -> Result<(), VerifyError> {
    verify_structure(graph)?;
    verify_loop(graph)?;
    check_weight_names(graph)
}

/// A loop mark names a non-empty body inside the graph that starts after its carried value and
/// holds the carried result; nothing before the body reads a body value.
fn verify_loop(graph: &Graph) -> Result<(), VerifyError> {
    let Some(l) = &graph.looped else {
        return Ok(());
    };
    let bad = |reason: String| VerifyError::BadLoop {
        name: l.name.clone(),
        reason,
    };
    if l.count == 0 || l.first >= l.end || l.end > graph.nodes.len() {
        return Err(bad(format!(
            "body {}..{} of {} nodes, {} iterations",
            l.first,
            l.end,
            graph.nodes.len(),
            l.count
        )));
    }
    if l.carried_in.index() >= l.first || !l.contains(l.carried_out.index()) {
        return Err(bad(format!(
            "carried value %{} enters and %{} leaves, body {}..{}",
            l.carried_in.index(),
            l.carried_out.index(),
            l.first,
            l.end
        )));
    }
    if graph.nodes[l.carried_in].ty != graph.nodes[l.carried_out].ty {
        return Err(bad("the carried value changes type".into()));
    }
    for (h, node) in graph.nodes.iter() {
        if l.contains(h.index()) {
            if matches!(
                node.op,
                Op::Input { .. } | Op::Output { .. } | Op::Repeat { .. }
            ) {
                return Err(bad(format!(
                    "%{} ({}) is in the body",
                    h.index(),
                    node.op.mnemonic()
                )));
            }
        } else if h.index() >= l.end {
            // After the body, only the last iteration's carried value is defined.
            for (_, o) in node.op.operands() {
                if o == l.carried_in {
                    return Err(bad(format!(
                        "%{} after the body reads the carried value as it entered the loop, which later iterations overwrite",
                        h.index()
                    )));
                }
                if l.contains(o.index()) && o != l.carried_out {
                    return Err(bad(format!(
                        "%{} after the body reads body value %{} (only the carried result leaves it)",
                        h.index(),
                        o.index()
                    )));
                }
            }
        }
    }
    Ok(())
}

fn verify_structure(graph: &Graph) -> Result<(), VerifyError> {
    let len = graph.nodes.len();
    for (h, node) in graph.nodes.iter() {
        for (operand, o) in node.op.operands() {
            if o.index() >= len {
                return Err(VerifyError::HandleOutOfRange {
                    at: at(graph, h),
                    operand,
                    handle: o,
                    len,
                });
            }
            if o >= h {
                return Err(VerifyError::UseBeforeDefinition {
                    at: at(graph, h),
                    operand,
                    handle: o,
                });
            }
        }
        match &node.op {
            Op::Input { .. } | Op::Weight { .. } => {
                let site = Site::new(node.op.mnemonic(), node.label.clone());
                let name = node.op.tensor_name().unwrap_or_default();
                super::typing::check_name(&site, name)
                    .and_then(|_| check_declared_type(&site, &node.ty))
                    .map_err(|source| VerifyError::InvalidOp {
                        at: at(graph, h),
                        source: Box::new(source),
                    })?;
            }
            op @ (Op::Repeat { .. } | Op::Output { .. } | compute_op!()) => {
                let inferred =
                    infer(graph, op, &node.label).map_err(|source| VerifyError::InvalidOp {
                        at: at(graph, h),
                        source: Box::new(source),
                    })?;
                if inferred != node.ty {
                    return Err(VerifyError::TypeMismatch {
                        at: at(graph, h),
                        stored: node.ty.clone(),
                        inferred,
                    });
                }
            }
        }
    }

    // Unique names per kind.
    let mut names: HashMap<(&'static str, &str), ValueHandle> = HashMap::new();
    for (h, node) in graph.nodes.iter() {
        if let Some(name) = node.op.tensor_name() {
            let kind = node.op.mnemonic();
            if let Some(&first) = names.get(&(kind, name)) {
                return Err(VerifyError::DuplicateName {
                    kind,
                    name: name.to_string(),
                    first,
                    second: h,
                });
            }
            names.insert((kind, name), h);
        }
    }

    // Outputs and liveness: walk back from the outputs (operands precede users, so one
    // reverse sweep suffices).
    if graph.outputs().next().is_none() {
        return Err(VerifyError::NoOutput);
    }
    let mut live = vec![false; len];
    for (h, node) in graph.nodes.iter().rev() {
        if matches!(node.op, Op::Output { .. }) {
            live[h.index()] = true;
        }
        if live[h.index()] {
            for (_, o) in node.op.operands() {
                live[o.index()] = true;
            }
        }
    }
    if let Some(dead) = live.iter().position(|l| !l) {
        return Err(VerifyError::DeadValue {
            at: at(graph, ValueHandle::from_index(dead as u32)),
        });
    }

    // Regions: each verifies and is used.
    for (r, region) in graph.regions.iter() {
        verify_structure(&region.body).map_err(|source| VerifyError::InRegion {
            region: r,
            name: region.name.clone(),
            source: Box::new(source),
        })?;
        let used = graph
            .nodes
            .iter()
            .any(|(_, n)| matches!(n.op, Op::Repeat { region, .. } if region == r));
        if !used {
            return Err(VerifyError::UnusedRegion {
                region: r,
                name: region.name.clone(),
            });
        }
    }
    Ok(())
}

/// Every weight node, with its repeat prefixes applied, must read a store tensor no other
/// weight node reads. (One node may read one tensor in several iterations: a prefix without
/// `{i}` shares the weight across iterations.)
fn check_weight_names(graph: &Graph) -> Result<(), VerifyError> {
    // name → origin (a path of region and node handles, printed).
    let mut seen: HashMap<String, String> = HashMap::new();
    walk_weights(graph, "", "", &mut seen)
}

fn walk_weights(
    graph: &Graph,
    prefix: &str,
    origin: &str,
    seen: &mut HashMap<String, String>,
) -> Result<(), VerifyError> {
    for (h, node) in graph.nodes.iter() {
        match &node.op {
            Op::Weight { name } => {
                let full = format!("{prefix}{name}");
                let here = format!("{origin}%{}", h.index());
                match seen.get(&full) {
                    Some(first) if *first != here => {
                        return Err(VerifyError::WeightNameCollision {
                            name: full,
                            first: first.clone(),
                            second: here,
                        })
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(full, here);
                    }
                }
            }
            Op::Repeat {
                region,
                count,
                weight_prefix,
                ..
            } => {
                let r = &graph.regions[*region];
                let inner_origin = format!("{origin}region `{}` ", r.name);
                for i in 0..*count {
                    let p = format!("{prefix}{}", repeat_weight_name(weight_prefix, i, ""));
                    walk_weights(&r.body, &p, &inner_origin, seen)?;
                }
            }
            Op::Input { .. } | Op::Output { .. } | compute_op!() => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::arena::Handle;
    use super::super::builder::GraphBuilder;
    use super::super::op::Node;
    use super::super::types::DType;
    use super::*;

    /// x → gelu → output, with a weight-fed matmul.
    fn small() -> Graph {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let w = b.weight("w", DType::F16, [8, 8]).unwrap();
        let y = b.matmul("mm", x, w).unwrap();
        let z = b.gelu("act", y).unwrap();
        b.output("y", z).unwrap();
        b.finish().unwrap()
    }

    fn err(g: &Graph) -> String {
        verify(g).unwrap_err().to_string()
    }

    #[test]
    fn good_graph_verifies() {
        verify(&small()).unwrap();
    }

    #[test]
    fn v001_handle_out_of_range() {
        let mut g = small();
        g.nodes[Handle::from_index(3)].op = Op::Gelu {
            x: Handle::from_index(42),
        };
        assert_eq!(
            err(&g),
            "E-VERIFY-001: %3 (gelu `act`): operand x is %42, but the graph has 5 values"
        );
    }

    #[test]
    fn v002_use_before_definition() {
        let mut g = small();
        g.nodes[Handle::from_index(2)].op = Op::MatMul {
            a: Handle::from_index(0),
            b: Handle::from_index(3),
        };
        assert_eq!(
            err(&g),
            "E-VERIFY-002: %2 (matmul `mm`): operand b is %3, which is not defined before its use"
        );
        // A self-reference is a use before definition too.
        let mut g = small();
        g.nodes[Handle::from_index(3)].op = Op::Gelu {
            x: Handle::from_index(3),
        };
        assert!(err(&g).starts_with("E-VERIFY-002: %3 (gelu `act`)"));
    }

    #[test]
    fn v003_invalid_op() {
        let mut g = small();
        g.nodes[Handle::from_index(1)].ty = TensorType::new(DType::F16, [7, 8]);
        assert_eq!(
            err(&g),
            "E-VERIFY-003: %2 (matmul `mm`): invalid op: E-GRAPH-003: matmul `mm`: inner dimensions differ: a is [4, 8], b is [7, 8]"
        );
        let mut g = small();
        g.nodes[Handle::from_index(0)].ty = TensorType::new(DType::F16, [4, 0]);
        assert!(err(&g).starts_with("E-VERIFY-003: %0 (input `x`): invalid op: E-GRAPH-009"));
    }

    #[test]
    fn v004_type_mismatch() {
        let mut g = small();
        g.nodes[Handle::from_index(3)].ty = TensorType::new(DType::F32, [4, 8]);
        assert_eq!(
            err(&g),
            "E-VERIFY-004: %3 (gelu `act`): stored type is f32[4, 8], but the operands give f16[4, 8]"
        );
    }

    #[test]
    fn v005_duplicate_names() {
        let mut g = small();
        let ty = TensorType::new(DType::F16, [4, 8]);
        // A second input "x" whose value feeds a second output.
        let x2 = g.nodes.append(Node {
            op: Op::Input { name: "x".into() },
            ty: ty.clone(),
            label: "x".into(),
        });
        g.nodes.append(Node {
            op: Op::Output {
                x: x2,
                name: "y2".into(),
            },
            ty,
            label: "y2".into(),
        });
        assert_eq!(
            err(&g),
            "E-VERIFY-005: the input name `x` is used by both %0 and %5"
        );
    }

    #[test]
    fn v006_no_output() {
        let mut b = GraphBuilder::new();
        b.input("x", DType::F16, [4]).unwrap();
        assert_eq!(
            b.finish().unwrap_err().to_string(),
            "E-VERIFY-006: the graph has no output"
        );
    }

    #[test]
    fn v007_dead_value() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let _unused = b.weight("unused", DType::F16, [8, 8]).unwrap();
        let y = b.gelu("act", x).unwrap();
        b.output("y", y).unwrap();
        assert_eq!(
            b.finish().unwrap_err().to_string(),
            "E-VERIFY-007: %1 (weight `unused`): dead value: no output depends on it"
        );
    }

    fn layer_body() -> Graph {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let w = b.weight("w", DType::F16, [8, 8]).unwrap();
        let y = b.matmul("mm", x, w).unwrap();
        b.output("y", y).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn v008_region_body_errors_are_reported_with_the_region() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let r = b.region("layer", layer_body()).unwrap();
        let y = b.repeat("layers", r, 2, "layers.{i}.", &[x]).unwrap();
        b.output("y", y).unwrap();
        let mut g = b.finish().unwrap();
        g.regions[r].body.nodes[Handle::from_index(2)].ty = TensorType::new(DType::F32, [4, 8]);
        assert_eq!(
            err(&g),
            "E-VERIFY-008: in region [0] `layer`: E-VERIFY-004: %2 (matmul `mm`): stored type is f32[4, 8], but the operands give f16[4, 8]"
        );
    }

    #[test]
    fn v009_unused_region() {
        let mut g = small();
        g.regions.append(super::super::op::Region {
            name: "orphan".into(),
            body: layer_body(),
        });
        assert_eq!(
            err(&g),
            "E-VERIFY-009: region [0] `orphan` is not used by any repeat"
        );
    }

    #[test]
    fn v010_weight_name_collision() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let w = b.weight("layers.1.w", DType::F16, [8, 8]).unwrap();
        let x1 = b.matmul("pre", x, w).unwrap();
        let r = b.region("layer", layer_body()).unwrap();
        let y = b.repeat("layers", r, 2, "layers.{i}.", &[x1]).unwrap();
        b.output("y", y).unwrap();
        assert_eq!(
            b.finish().unwrap_err().to_string(),
            "E-VERIFY-010: store weight `layers.1.w` is read by two different weight nodes (%1 and region `layer` %1)"
        );
    }

    #[test]
    fn shared_weights_across_iterations_are_allowed() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let r = b.region("layer", layer_body()).unwrap();
        let y = b.repeat("layers", r, 3, "shared.", &[x]).unwrap();
        b.output("y", y).unwrap();
        let g = b.finish().unwrap();
        let names: Vec<String> = g.expanded_weights().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["shared.w"]);
    }

    #[test]
    fn expanded_weight_names() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let r = b.region("layer", layer_body()).unwrap();
        let y = b.repeat("layers", r, 3, "enc.layers.{i}.", &[x]).unwrap();
        b.output("y", y).unwrap();
        let g = b.finish().unwrap();
        let names: Vec<String> = g.expanded_weights().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            vec!["enc.layers.0.w", "enc.layers.1.w", "enc.layers.2.w"]
        );
    }
}
