//! Rewrites on the distributed level. Each applies only when the resolved layouts of producer
//! and consumer agree and no other op reads the intermediate value; [`prune`] removes what no
//! longer has readers. The verifier runs after each in tests.

use super::{MidId, MidOp, MidProgram};
use crate::graph::DType;

/// What a pass did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewriteLog {
    pub applied: Vec<String>,
    pub refused: Vec<String>,
}

/// Direct FP8 producer output: `cast(layernorm(x))` and `cast(gelu(x))` to FP8 become a
/// LayerNorm or GeLU writing FP8 itself (the kernels have FP8-output variants), saving a pass
/// and the f16 intermediate.
pub fn fuse_fp8_casts(program: &mut MidProgram) -> RewriteLog {
    let mut log = RewriteLog::default();
    let readers = program.readers();
    let mut redirect: Vec<(MidId, MidId)> = Vec::new();
    for (id, node) in program.nodes.iter() {
        let MidOp::Cast { x } = node.op else { continue };
        if !node.layout.dtype.is_fp8() {
            continue;
        }
        let producer = &program.nodes[x];
        if !matches!(producer.op, MidOp::LayerNorm { .. } | MidOp::Gelu { .. }) {
            continue;
        }
        let what = format!(
            "%{} cast of %{} ({} `{}`)",
            id.index(),
            x.index(),
            producer.op.name(),
            producer.label
        );
        if readers[x.index()].len() != 1 {
            log.refused
                .push(format!("{what}: the f16 value has other readers"));
            continue;
        }
        if producer.layout.dist != node.layout.dist || producer.layout.order != node.layout.order {
            log.refused
                .push(format!("{what}: producer and cast shards differ"));
            continue;
        }
        redirect.push((id, x));
        log.applied.push(format!(
            "{what}: the producer writes {} directly",
            node.layout.dtype
        ));
    }
    for &(cast, producer) in &redirect {
        let dtype: DType = program.nodes[cast].layout.dtype;
        program.nodes[producer].layout.dtype = dtype;
        for (_, node) in program.nodes.iter_mut() {
            node.op
                .map_operands(|v| if v == cast { producer } else { v });
        }
    }
    prune(program);
    log
}

/// The bias add after a sum of partial products in the sum's pass: `bias_add(add(a, b), bias)`
/// becomes `add_bias(a, b, bias)` (the `add_bias_f16` kernel) and `bias_add(sum_parts(x),
/// bias)` a `sum_parts` with the bias (`sum_parts_f16` adds it to the rounded sums): the same
/// f16 roundings in the same order, so every value stays bit for bit what it was, saving a
/// kernel call, a pass over the rows and the sum's buffer. Applies where the sum has no other
/// reader, is not a loop's carry and has the bias add's layout.
pub fn fuse_bias_adds(program: &mut MidProgram) -> RewriteLog {
    let mut log = RewriteLog::default();
    let readers = program.readers();
    let mut fused: Vec<(MidId, MidOp)> = Vec::new();
    for (id, node) in program.nodes.iter() {
        let MidOp::BiasAdd { x, bias } = node.op else {
            continue;
        };
        let producer = &program.nodes[x];
        let op = if let MidOp::Add { a, b } = producer.op {
            MidOp::AddBias { a, b, bias }
        } else if let MidOp::SumParts { x, bias: None } = producer.op {
            MidOp::SumParts {
                x,
                bias: Some(bias),
            }
        } else {
            continue;
        };
        let what = format!(
            "%{} bias_add `{}` of %{} {} `{}`",
            id.index(),
            node.label,
            x.index(),
            producer.op.name(),
            producer.label
        );
        if readers[x.index()].len() != 1 {
            log.refused
                .push(format!("{what}: the sum has other readers"));
            continue;
        }
        if program
            .looped
            .as_ref()
            .is_some_and(|l| l.carry == x || l.carried_in == x)
        {
            log.refused
                .push(format!("{what}: the sum is the loop's carry"));
            continue;
        }
        if producer.layout.order == crate::layout::Order::Cwei {
            log.refused
                .push(format!("{what}: the sum is written in $CWEI order"));
            continue;
        }
        if producer.layout != node.layout {
            log.refused.push(format!(
                "{what}: the sum and the bias add have different layouts"
            ));
            continue;
        }
        log.applied.push(format!("{what}: one {}", op.name()));
        fused.push((id, op));
    }
    for (id, op) in fused {
        program.nodes[id].op = op;
    }
    prune(program);
    log
}

/// Removes values nobody reads (outputs stay), renumbering the rest.
pub fn prune(program: &mut MidProgram) {
    loop {
        let readers = program.readers();
        let dead: Vec<bool> = program
            .nodes
            .iter()
            .map(|(id, n)| {
                !matches!(n.op, MidOp::Output { .. })
                    && readers[id.index()].is_empty()
                    && program.looped.as_ref().is_none_or(|l| l.carry != id)
            })
            .collect();
        if !dead.iter().any(|&d| d) {
            return;
        }
        let mut renumber = vec![None; dead.len()];
        let mut kept = MidProgram {
            route_policy: program.route_policy,
            ..MidProgram::new()
        };
        let looped = program.looped.clone();
        for (id, node) in program.nodes.iter() {
            if dead[id.index()] {
                continue;
            }
            let mut node = node.clone();
            node.op
                .map_operands(|v| renumber[v.index()].expect("operands are kept before users"));
            renumber[id.index()] = Some(kept.push(node));
        }
        // The carried value and the carry are read by the loop, so they are kept.
        kept.looped = looped.and_then(|l| l.renumbered(&renumber));
        *program = kept;
    }
}
