//! What every graph value *is* before any layout is chosen: a [`Form`] — a base node (a host
//! input, a weight, or a compute op) read through a [`View`]. View ops (reshape, transpose,
//! slice, broadcast, split and merge of heads) add to the view and never move data; the
//! consumer's redistribution reads the base through the composed view.

use super::{value_dims, PlanError};
use crate::graph::op::{kernel_op, view_op};
use crate::graph::{Graph, Op, ValueHandle};
use crate::layout::View;
use std::sync::Arc;

/// What a base node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseKind {
    /// A graph input (the host writes it in any layout).
    Input,
    /// A weight (the host converts it into any layout).
    Weight,
    /// A compute op (its layout is a planning choice).
    Compute,
}

/// A graph value as a base node read through a view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Form {
    pub base: ValueHandle,
    pub kind: BaseKind,
    /// Maps this value's index to the base's.
    pub view: Arc<View>,
}

/// The form of every node (outputs get their operand's form).
pub fn forms(graph: &Graph) -> Result<Vec<Form>, PlanError> {
    let mut out: Vec<Form> = Vec::with_capacity(graph.nodes.len());
    for (h, node) in graph.nodes.iter() {
        let own = |kind| Form {
            base: h,
            kind,
            view: Arc::new(View::identity(&value_dims(graph, h))),
        };
        let viewed = |x: ValueHandle,
                      view: Result<View, crate::layout::LayoutError>|
         -> Result<Form, PlanError> {
            let inner: &Form = &out[x.index()];
            let view = view.map_err(|e| PlanError::layout(graph, h, "its view", e))?;
            let composed = view
                .then(&inner.view)
                .map_err(|e| PlanError::layout(graph, h, "its view of its operand's base", e))?;
            Ok(Form {
                base: inner.base,
                kind: inner.kind,
                view: Arc::new(composed),
            })
        };
        let form = match &node.op {
            Op::Input { .. } => own(BaseKind::Input),
            Op::Weight { .. } => own(BaseKind::Weight),
            Op::Reshape { x, .. } => viewed(
                *x,
                View::reshape(&value_dims(graph, *x), &value_dims(graph, h)),
            )?,
            Op::Transpose { x, perm } => viewed(*x, View::transpose(&value_dims(graph, *x), perm))?,
            Op::Slice {
                x,
                axis,
                start,
                end,
            } => viewed(
                *x,
                View::slice(&value_dims(graph, *x), *axis, *start as u32, *end as u32),
            )?,
            Op::Pad { x, axis, len } => {
                viewed(*x, View::pad(&value_dims(graph, *x), *axis, *len as u32))?
            }
            Op::SplitHeads { x, heads, batch } => viewed(
                *x,
                View::split_heads(&value_dims(graph, *x), *heads as u32, *batch as u32),
            )?,
            Op::MergeHeads { x, heads } => {
                viewed(*x, View::merge_heads(&value_dims(graph, *x), *heads as u32))?
            }
            Op::Broadcast { x, .. } => viewed(
                *x,
                View::broadcast(&value_dims(graph, *x), &value_dims(graph, h)),
            )?,
            Op::Output { x, .. } => out[x.index()].clone(),
            Op::Repeat { .. } => {
                return Err(PlanError::op(
                    graph,
                    h,
                    "repeats are unrolled before planning (graph::inline_repeats)",
                ))
            }
            kernel_op!() => own(BaseKind::Compute),
        };
        out.push(form);
    }
    Ok(out)
}

/// Whether a graph op is a view (no data moves).
pub fn is_view(op: &Op) -> bool {
    match op {
        view_op!() => true,
        Op::Input { .. }
        | Op::Weight { .. }
        | kernel_op!()
        | Op::Repeat { .. }
        | Op::Output { .. } => false,
    }
}
