//! Text form of a distributed-level program: one value per line,
//! `%k: dtype[shape] {order @ distribution} = op operands  // label`.

use super::{MidOp, MidProgram};
use crate::layout::View;
use std::fmt::Write;

fn view_text(view: &View) -> String {
    if view.is_identity() {
        String::new()
    } else {
        format!(
            " via {} step view from {:?}",
            view.steps().len(),
            view.source_shape()
        )
    }
}

/// The dump of `program`.
pub fn dump(program: &MidProgram) -> String {
    let mut out = String::new();
    for (id, node) in program.nodes.iter() {
        if let Some(l) = program.looped.as_ref().filter(|l| l.first == id.index()) {
            let _ = writeln!(
                out,
                "loop `{}` x{}: %{}..%{}, carried %{} = %{} after each iteration",
                l.name,
                l.count,
                l.first,
                l.end.saturating_sub(1),
                l.carried_in.index(),
                l.carry.index()
            );
        }
        let operands: Vec<String> = node
            .op
            .operands()
            .iter()
            .map(|v| format!("%{}", v.index()))
            .collect();
        let extra = match &node.op {
            MidOp::Input { tensor, view } | MidOp::Weight { tensor, view } => {
                format!(" \"{tensor}\"{}", view_text(view))
            }
            MidOp::Output { tensor, view, .. } => format!(" \"{tensor}\"{}", view_text(view)),
            MidOp::Redistribute { view, .. } => view_text(view),
            MidOp::MatMul { precision, .. } => format!(" ({precision:?})"),
            MidOp::LayerNorm { eps, .. } => format!(", eps={eps:e}"),
            MidOp::Softmax { scale, .. } | MidOp::SoftmaxPart { scale, .. } => {
                format!(", scale={scale}")
            }
            MidOp::BiasAdd { .. }
            | MidOp::Add { .. }
            | MidOp::AddBias { .. }
            | MidOp::Gelu { .. }
            | MidOp::Cast { .. }
            | MidOp::AttentionCombine { .. }
            | MidOp::SumParts { .. } => String::new(),
        };
        let shape: Vec<String> = node.shape.iter().map(u32::to_string).collect();
        let _ = writeln!(
            out,
            "%{}: {}[{}] {{{} @ {}}} = {} {}{}  // {}",
            id.index(),
            node.layout.dtype,
            shape.join(", "),
            node.layout.order.name(),
            node.layout.dist.describe(),
            node.op.name(),
            operands.join(", "),
            extra,
            node.label
        );
    }
    out
}
