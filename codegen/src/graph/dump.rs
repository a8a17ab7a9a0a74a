//! A readable text form of a graph, one line per value:
//!
//! ```text
//! %3: f16[729, 4304] = matmul %1, %2  // fc1
//! ```
//!
//! Regions are printed first, each as an indented block, then the top-level nodes. Attributes
//! follow the operands (`eps=`, `scale=`, `perm=`, `heads=`, …); a cast's and a reshape's target
//! is the result type. Floats print in Rust's shortest round-trip form. The dump is stable: tests
//! snapshot it.

use std::fmt::{self, Write};

use super::op::{compute_op, Graph, Op, ValueHandle};

/// The dump of `graph` as a string.
pub fn dump(graph: &Graph) -> String {
    let mut s = String::new();
    write_graph(&mut s, graph, 0).expect("writing to a String cannot fail");
    s
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_graph(f, self, 0)
    }
}

fn v(h: ValueHandle) -> String {
    format!("%{}", h.index())
}

fn write_graph(out: &mut impl Write, graph: &Graph, indent: usize) -> fmt::Result {
    let pad = "  ".repeat(indent);
    for (r, region) in graph.regions.iter() {
        let params: Vec<String> = region
            .body
            .inputs()
            .map(|(h, _)| format!("{}: {}", v(h), region.body.nodes[h].ty))
            .collect();
        writeln!(
            out,
            "{pad}region #{} `{}` ({}) {{",
            r.index(),
            region.name,
            params.join(", ")
        )?;
        write_graph(out, &region.body, indent + 1)?;
        writeln!(out, "{pad}}}")?;
    }
    for (h, node) in graph.nodes.iter() {
        if let Some(l) = graph.looped.as_ref().filter(|l| l.first == h.index()) {
            writeln!(
                out,
                "{pad}loop `{}` x{}: %{}..%{}, carried {} -> {} ({} per-iteration weights)",
                l.name,
                l.count,
                l.first,
                l.end.saturating_sub(1),
                v(l.carried_in),
                v(l.carried_out),
                l.weights.len()
            )?;
        }
        let rhs = match &node.op {
            Op::Input { name } => format!("input \"{name}\""),
            Op::Weight { name } => format!("weight \"{name}\""),
            Op::MatMul { a, b } => format!("matmul {}, {}", v(*a), v(*b)),
            Op::BatchedMatMul { a, b } => format!("batched_matmul {}, {}", v(*a), v(*b)),
            Op::Add { a, b } => format!("add {}, {}", v(*a), v(*b)),
            Op::BiasAdd { x, bias } => format!("bias_add {}, {}", v(*x), v(*bias)),
            Op::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            } => {
                format!(
                    "layernorm {}, {}, {}, eps={eps:?}",
                    v(*x),
                    v(*gamma),
                    v(*beta)
                )
            }
            Op::Gelu { x } => format!("gelu {}", v(*x)),
            Op::Softmax { x, scale } => format!("softmax {}, scale={scale:?}", v(*x)),
            Op::SoftmaxPart { x, scale } => format!("softmax_part {}, scale={scale:?}", v(*x)),
            Op::AttentionCombine { parts, stats } => {
                format!("attention_combine {}, {}", v(*parts), v(*stats))
            }
            Op::SumParts { x } => format!("sum_parts {}", v(*x)),
            Op::Cast { x, .. } => format!("cast {}", v(*x)),
            Op::Reshape { x, .. } => format!("reshape {}", v(*x)),
            Op::Transpose { x, perm } => format!("transpose {}, perm={perm:?}", v(*x)),
            Op::Slice {
                x,
                axis,
                start,
                end,
            } => format!("slice {}, axis={axis}, range={start}..{end}", v(*x)),
            Op::Pad { x, axis, len } => format!("pad {}, axis={axis}, len={len}", v(*x)),
            Op::SplitHeads { x, heads, batch } => {
                format!("split_heads {}, heads={heads}, batch={batch}", v(*x))
            }
            Op::MergeHeads { x, heads } => format!("merge_heads {}, heads={heads}", v(*x)),
            Op::Broadcast { x, shape } => format!("broadcast {} to {shape}", v(*x)),
            Op::Repeat {
                region,
                count,
                args,
                weight_prefix,
            } => {
                let args: Vec<String> = args.iter().map(|a| v(*a)).collect();
                format!(
                    "repeat #{} x{count} ({}), weights=\"{weight_prefix}\"",
                    region.index(),
                    args.join(", ")
                )
            }
            Op::Output { x, name } => format!("output \"{name}\", {}", v(*x)),
        };
        let comment = match &node.op {
            Op::Input { .. } | Op::Weight { .. } | Op::Output { .. } => "",
            Op::Repeat { .. } | compute_op!() => node.label.as_str(),
        };
        if comment.is_empty() {
            writeln!(out, "{pad}{}: {} = {rhs}", v(h), node.ty)?;
        } else {
            writeln!(out, "{pad}{}: {} = {rhs}  // {comment}", v(h), node.ty)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::builder::GraphBuilder;
    use super::super::types::DType;
    use super::*;
    use expect_test::expect;

    #[test]
    fn every_op_dumps() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [8, 16]).unwrap();
        let g = b.weight("ln.weight", DType::F32, [16]).unwrap();
        let be = b.weight("ln.bias", DType::F32, [16]).unwrap();
        let ln = b.layer_norm("ln", x, g, be, 1e-6).unwrap();
        let ln8 = b.cast("ln.fp8", ln, DType::f143(-4)).unwrap();
        let w = b.weight("fc.weight", DType::f143(-10), [16, 32]).unwrap();
        let y = b.matmul("fc", ln8, w).unwrap();
        let bias = b.weight("fc.bias", DType::F32, [32]).unwrap();
        let y = b.bias_add("fc.bias", y, bias).unwrap();
        let y = b.gelu("act", y).unwrap();
        let h = b.split_heads("heads", y, 4, 2).unwrap();
        let ht = b.transpose("heads.t", h, &[0, 2, 1]).unwrap();
        let s = b.batched_matmul("scores", h, ht).unwrap();
        let p = b.softmax("probs", s, 0.35355338).unwrap();
        let o = b.batched_matmul("ctx", p, h).unwrap();
        let m = b.merge_heads("merge", o, 4).unwrap();
        let r = b.reshape("flat", m, [4, 64]).unwrap();
        let r = b.reshape("unflat", r, [8, 32]).unwrap();
        let r = b.add("sum", r, y).unwrap();
        let r32 = b.cast("to_f32", r, DType::F32).unwrap();
        b.output("y", r32).unwrap();
        let q = b.slice("q", y, 1, 8, 16).unwrap();
        b.output("q", q).unwrap();
        let graph = b.finish().unwrap();
        expect![[r#"
            %0: f16[8, 16] = input "x"
            %1: f32[16] = weight "ln.weight"
            %2: f32[16] = weight "ln.bias"
            %3: f16[8, 16] = layernorm %0, %1, %2, eps=1e-6  // ln
            %4: f143<-4>[8, 16] = cast %3  // ln.fp8
            %5: f143<-10>[16, 32] = weight "fc.weight"
            %6: f16[8, 32] = matmul %4, %5  // fc
            %7: f32[32] = weight "fc.bias"
            %8: f16[8, 32] = bias_add %6, %7  // fc.bias
            %9: f16[8, 32] = gelu %8  // act
            %10: f16[8, 4, 8] = split_heads %9, heads=4, batch=2  // heads
            %11: f16[8, 8, 4] = transpose %10, perm=[0, 2, 1]  // heads.t
            %12: f16[8, 4, 4] = batched_matmul %10, %11  // scores
            %13: f16[8, 4, 4] = softmax %12, scale=0.35355338  // probs
            %14: f16[8, 4, 8] = batched_matmul %13, %10  // ctx
            %15: f16[8, 32] = merge_heads %14, heads=4  // merge
            %16: f16[4, 64] = reshape %15  // flat
            %17: f16[8, 32] = reshape %16  // unflat
            %18: f16[8, 32] = add %17, %9  // sum
            %19: f32[8, 32] = cast %18  // to_f32
            %20: f32[8, 32] = output "y", %19
            %21: f16[8, 8] = slice %9, axis=1, range=8..16  // q
            %22: f16[8, 8] = output "q", %21
        "#]]
        .assert_eq(&dump(&graph));
    }

    #[test]
    fn regions_dump_as_blocks() {
        let mut body = GraphBuilder::new();
        let x = body.input("x", DType::F16, [4, 8]).unwrap();
        let w = body.weight("w", DType::F16, [8, 8]).unwrap();
        let y = body.matmul("mm", x, w).unwrap();
        body.output("y", y).unwrap();
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [4, 8]).unwrap();
        let r = b.region("layer", body.finish().unwrap()).unwrap();
        let y = b.repeat("layers", r, 27, "layers.{i}.", &[x]).unwrap();
        b.output("y", y).unwrap();
        let graph = b.finish().unwrap();
        expect![[r#"
            region #0 `layer` (%0: f16[4, 8]) {
              %0: f16[4, 8] = input "x"
              %1: f16[8, 8] = weight "w"
              %2: f16[4, 8] = matmul %0, %1  // mm
              %3: f16[4, 8] = output "y", %2
            }
            %0: f16[4, 8] = input "x"
            %1: f16[4, 8] = repeat #0 x27 (%0), weights="layers.{i}."  // layers
            %2: f16[4, 8] = output "y", %1
        "#]]
        .assert_eq(&graph.to_string());
    }
}
