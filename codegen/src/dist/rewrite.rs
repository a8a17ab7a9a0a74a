//! Costed rewrites on the mid level. Each applies only when the producer's and the consumer's
//! resolved shard geometry match (not their layout descriptions) and no other op reads the
//! intermediate value.

use super::{resolve, MidOp, MidProgram, ValueId};

/// What a pass changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewriteLog {
    pub applied: Vec<String>,
    pub refused: Vec<String>,
}

/// Replaces every use of `from` by `to` in the ops after `from`'s definition.
fn redirect(program: &mut MidProgram, from: ValueId, to: ValueId) {
    for op in &mut program.ops {
        let fix = |v: &mut ValueId| {
            if *v == from {
                *v = to;
            }
        };
        match op {
            MidOp::Input { .. } | MidOp::Weight { .. } => {}
            MidOp::LayerNorm { x, gamma, beta, .. } => {
                fix(x);
                fix(gamma);
                fix(beta);
            }
            MidOp::Cast { x }
            | MidOp::Gather { x }
            | MidOp::ToPanels { x }
            | MidOp::Gelu { x }
            | MidOp::Output { x, .. } => fix(x),
            MidOp::MatMul { a, w } => {
                fix(a);
                fix(w);
            }
            MidOp::BiasAdd { x, bias } => {
                fix(x);
                fix(bias);
            }
            MidOp::Add { a, b } => {
                fix(a);
                fix(b);
            }
        }
    }
}

/// Direct FP8 producer output: `cast(layernorm(x))` and `cast(gelu(x))` become a LayerNorm or
/// GeLU that writes FP8 itself (the kernels have packed-FP8 variants), saving a pass over the
/// data and the F16 intermediate. The cast is left with no readers (removed by `prune`).
pub fn fuse_fp8_casts(program: &mut MidProgram) -> RewriteLog {
    let mut log = RewriteLog::default();
    for k in 0..program.ops.len() {
        let MidOp::Cast { x } = program.ops[k] else {
            continue;
        };
        let producer = x.0 as usize;
        if !matches!(
            program.ops[producer],
            MidOp::LayerNorm { .. } | MidOp::Gelu { .. }
        ) {
            continue;
        }
        let what = format!(
            "%{k} cast of %{producer} ({})",
            program.ops[producer].name()
        );
        if program.readers(x).len() != 1 {
            log.refused
                .push(format!("{what}: the f16 value has other readers"));
            continue;
        }
        if resolve(&program.grid, &program.values[producer])
            != resolve(&program.grid, &program.values[k])
        {
            log.refused
                .push(format!("{what}: producer and consumer shards differ"));
            continue;
        }
        program.values[producer].layout.format = program.values[k].layout.format;
        program.values[producer].name = program.values[k].name.clone();
        redirect(program, ValueId(k as u32), x);
        log.applied.push(format!(
            "{what}: producer writes {} directly",
            program.values[producer].layout.format.name()
        ));
    }
    log
}

/// Identity-copy bypass: a gather whose result places the same elements on the same tiles as
/// its operand (e.g. a grid with one column) moves nothing; its readers use the operand.
pub fn bypass_identity_gathers(program: &mut MidProgram) -> RewriteLog {
    let mut log = RewriteLog::default();
    for k in 0..program.ops.len() {
        let MidOp::Gather { x } = program.ops[k] else {
            continue;
        };
        let same_order =
            program.values[x.0 as usize].layout.order == program.values[k].layout.order;
        if same_order
            && resolve(&program.grid, &program.values[x.0 as usize])
                == resolve(&program.grid, &program.values[k])
        {
            redirect(program, ValueId(k as u32), x);
            log.applied
                .push(format!("%{k} gather of %{}: identity, bypassed", x.0));
        }
    }
    log
}

/// Removes ops whose values nobody reads (except inputs and outputs), renumbering values.
pub fn prune(program: &mut MidProgram) {
    loop {
        let dead: Vec<usize> = (0..program.ops.len())
            .filter(|&k| {
                !matches!(program.ops[k], MidOp::Output { .. } | MidOp::Input { .. })
                    && program.readers(ValueId(k as u32)).is_empty()
            })
            .collect();
        let Some(&k) = dead.first() else { break };
        program.ops.remove(k);
        program.values.remove(k);
        // Renumber: every id above k moves down one.
        let shift = |v: &mut ValueId| {
            if v.0 as usize > k {
                v.0 -= 1;
            }
        };
        for op in &mut program.ops {
            match op {
                MidOp::Input { .. } | MidOp::Weight { .. } => {}
                MidOp::LayerNorm { x, gamma, beta, .. } => {
                    shift(x);
                    shift(gamma);
                    shift(beta);
                }
                MidOp::Cast { x }
                | MidOp::Gather { x }
                | MidOp::ToPanels { x }
                | MidOp::Gelu { x }
                | MidOp::Output { x, .. } => shift(x),
                MidOp::MatMul { a, w } => {
                    shift(a);
                    shift(w);
                }
                MidOp::BiasAdd { x, bias } => {
                    shift(x);
                    shift(bias);
                }
                MidOp::Add { a, b } => {
                    shift(a);
                    shift(b);
                }
            }
        }
    }
}
