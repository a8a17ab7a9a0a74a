//! A reference interpreter of the graph: the [op semantics](super) made executable, for tests
//! and for small models. Not fast: it is a plain loop nest per op.
//!
//! Every value is held as f32 numbers that are exactly representable in the value's dtype:
//! each op computes in f64 (dot products and reductions accumulate in f64, in index order)
//! and rounds once to its result dtype (f32 and f16: round to nearest even; FP8: see
//! [`quantize`]). Inputs and weights are rounded to their declared dtype on entry. The
//! compiled program accumulates in the machine's order and precision, so it matches this
//! interpreter closely but not bit for bit. Transcendentals (`exp`, `tanh`, `sqrt`) use the
//! host's f64 functions.

use std::collections::BTreeMap;

use tessera_isa::numerics::{f16_to_f32, f16_to_fp8, f64_to_f16, fp8_decode};

use super::op::{repeat_weight_name, Graph, Op};
use super::types::{DType, Shape};
use super::verify::{verify, VerifyError};
use super::weights::{HostTensor, WeightStore};

/// Why a graph could not be evaluated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("E-EVAL-001: no value given for input `{name}` ({shape})")]
    MissingInput { name: String, shape: Shape },

    #[error("E-EVAL-002: input `{name}` is {got}, but the graph declares {expected}")]
    InputShape {
        name: String,
        expected: Shape,
        got: Shape,
    },

    #[error("E-EVAL-003: weight `{name}` is not in the weight store")]
    MissingWeight { name: String },

    #[error(
        "E-EVAL-004: weight `{name}` is {got} in the store, but the graph declares {expected}"
    )]
    WeightShape {
        name: String,
        expected: Shape,
        got: Shape,
    },

    #[error("E-EVAL-005: the graph does not verify: {0}")]
    Invalid(#[from] VerifyError),
}

/// Rounds `x` to a value of `dtype` (returned as f32, exactly).
///
/// * f32: nearest even. f16: nearest even, overflow to ±inf.
/// * FP8 `{format, scale}`: first to f16 (exact for f16 sources, which is how the graphs cast),
///   then `f16 × 2^−scale` rounded once to nearest even in `format`, saturating to ±max on
///   overflow (`FP_CTL.NANOO` = 0); NaN stays NaN. The result is `code × 2^scale`.
pub fn quantize(x: f64, dtype: DType) -> f32 {
    match dtype {
        DType::F32 => x as f32,
        DType::F16 => f16_to_f32(f64_to_f16(x)),
        DType::Fp8 { format, scale } => {
            let h = f64_to_f16(x);
            let code = f16_to_fp8(h, format, -(scale as i32), false);
            (fp8_decode(code, format) as f64 * (scale as f64).exp2()) as f32
        }
    }
}

/// Evaluates `graph` on named `inputs` with weights from `store`; returns the outputs by name.
/// The graph is verified first.
pub fn evaluate(
    graph: &Graph,
    inputs: &BTreeMap<String, HostTensor>,
    store: &WeightStore,
) -> Result<BTreeMap<String, HostTensor>, EvalError> {
    verify(graph)?;
    let mut args = Vec::new();
    for (h, name) in graph.inputs() {
        let ty = &graph.nodes[h].ty;
        let t = inputs.get(name).ok_or_else(|| EvalError::MissingInput {
            name: name.to_string(),
            shape: ty.shape.clone(),
        })?;
        if t.shape != ty.shape {
            return Err(EvalError::InputShape {
                name: name.to_string(),
                expected: ty.shape.clone(),
                got: t.shape.clone(),
            });
        }
        args.push(t.data.clone());
    }
    let outs = eval_graph(graph, args, store, "")?;
    Ok(outs.into_iter().collect())
}

/// Evaluates a verified graph; `args` are the input values in input order.
fn eval_graph(
    graph: &Graph,
    args: Vec<Vec<f32>>,
    store: &WeightStore,
    prefix: &str,
) -> Result<Vec<(String, HostTensor)>, EvalError> {
    let mut vals: Vec<Vec<f32>> = Vec::with_capacity(graph.nodes.len());
    let mut args = args.into_iter();
    let mut outputs = Vec::new();
    for (_, node) in graph.nodes.iter() {
        let ty = &node.ty;
        let dt = ty.dtype;
        let q = |x: f64| quantize(x, dt);
        let shape = |h: super::op::ValueHandle| &graph.nodes[h].ty.shape;
        let val: Vec<f32> = match &node.op {
            Op::Input { .. } => {
                let a = args.next().unwrap_or_default();
                a.iter().map(|&x| q(x as f64)).collect()
            }
            Op::Weight { name } => {
                let full = format!("{prefix}{name}");
                let t = store
                    .get(&full)
                    .ok_or(EvalError::MissingWeight { name: full.clone() })?;
                if t.shape != ty.shape {
                    return Err(EvalError::WeightShape {
                        name: full,
                        expected: ty.shape.clone(),
                        got: t.shape.clone(),
                    });
                }
                t.data.iter().map(|&x| q(x as f64)).collect()
            }
            Op::MatMul { a, b } => {
                let (sa, sb) = (shape(*a), shape(*b));
                let (m, k, n) = (sa.0[0], sa.0[1], sb.0[1]);
                matmul(&vals[a.index()], &vals[b.index()], m, k, n, q)
            }
            Op::BatchedMatMul { a, b } => {
                let (sa, sb) = (shape(*a), shape(*b));
                let (bs, m, k, n) = (sa.0[0], sa.0[1], sa.0[2], sb.0[2]);
                let (va, vb) = (&vals[a.index()], &vals[b.index()]);
                let mut out = Vec::with_capacity(bs * m * n);
                for i in 0..bs {
                    out.extend(matmul(
                        &va[i * m * k..(i + 1) * m * k],
                        &vb[i * k * n..(i + 1) * k * n],
                        m,
                        k,
                        n,
                        q,
                    ));
                }
                out
            }
            Op::Add { a, b } => vals[a.index()]
                .iter()
                .zip(&vals[b.index()])
                .map(|(&x, &y)| q(x as f64 + y as f64))
                .collect(),
            Op::BiasAdd { x, bias } => {
                let vb = &vals[bias.index()];
                vals[x.index()]
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| q(v as f64 + vb[i % vb.len()] as f64))
                    .collect()
            }
            Op::LayerNorm {
                x,
                gamma,
                beta,
                eps,
            } => {
                let n = ty.shape.last().unwrap_or(1);
                let (g, be) = (&vals[gamma.index()], &vals[beta.index()]);
                let mut out = Vec::with_capacity(ty.shape.numel());
                for row in vals[x.index()].chunks(n) {
                    let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
                    let var =
                        row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
                    let inv = 1.0 / (var + *eps as f64).sqrt();
                    out.extend(
                        row.iter()
                            .enumerate()
                            .map(|(i, &v)| q((v as f64 - mean) * inv * g[i] as f64 + be[i] as f64)),
                    );
                }
                out
            }
            Op::Gelu { x } => vals[x.index()]
                .iter()
                .map(|&v| q(gelu_tanh(v as f64)))
                .collect(),
            Op::Softmax { x, scale } => {
                let n = ty.shape.last().unwrap_or(1);
                let mut out = Vec::with_capacity(ty.shape.numel());
                for row in vals[x.index()].chunks(n) {
                    let s: Vec<f64> = row.iter().map(|&v| v as f64 * *scale as f64).collect();
                    let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|&v| (v - max).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    out.extend(e.iter().map(|&v| q(v / sum)));
                }
                out
            }
            Op::SoftmaxPart { x, scale } => {
                let n = shape(*x).last().unwrap_or(1);
                let mut out = Vec::with_capacity(ty.shape.numel());
                for row in vals[x.index()].chunks(n) {
                    let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                    let m = q(max as f64 * *scale as f64);
                    let e: Vec<f32> = row
                        .iter()
                        .map(|&v| q((v as f64 * *scale as f64 - m as f64).exp()))
                        .collect();
                    let l = e.iter().map(|&v| v as f64).sum::<f64>();
                    let pad = super::op::softmax_part_exp_columns(n) - n;
                    out.extend(e);
                    out.extend(std::iter::repeat_n(0.0, pad));
                    out.extend([m, q(l), 0.0, 0.0]);
                }
                out
            }
            Op::AttentionCombine { parts, stats } => {
                // parts [..., C, R, D], stats [..., C, R, 2].
                let dims = shape(*parts).dims();
                let n = dims.len();
                let (c, r, d) = (dims[n - 3], dims[n - 2], dims[n - 1]);
                let (p, s) = (&vals[parts.index()], &vals[stats.index()]);
                let mut out = Vec::with_capacity(ty.shape.numel());
                for (lp, ls) in p.chunks(c * r * d).zip(s.chunks(c * r * 2)) {
                    for row in 0..r {
                        let stat = |j: usize, k: usize| ls[(j * r + row) * 2 + k];
                        let big_m = (0..c).map(|j| stat(j, 0)).fold(f32::NEG_INFINITY, f32::max);
                        let w: Vec<f64> = (0..c)
                            .map(|j| (stat(j, 0) as f64 - big_m as f64).exp())
                            .collect();
                        let total: f64 = (0..c).map(|j| w[j] * stat(j, 1) as f64).sum();
                        let part = |j: usize, k: usize| lp[(j * r + row) * d + k] as f64;
                        out.extend(
                            (0..d)
                                .map(|k| q((0..c).map(|j| w[j] * part(j, k)).sum::<f64>() / total)),
                        );
                    }
                }
                out
            }
            Op::SumParts { x } => {
                let dims = shape(*x).dims();
                let (c, d) = (dims[dims.len() - 2], dims[dims.len() - 1]);
                vals[x.index()]
                    .chunks(c * d)
                    .flat_map(|row| {
                        (0..d).map(move |k| q((0..c).map(|j| row[j * d + k] as f64).sum()))
                    })
                    .collect()
            }
            Op::Cast { x, .. } => vals[x.index()].iter().map(|&v| q(v as f64)).collect(),
            Op::Reshape { x, .. } => vals[x.index()].clone(),
            Op::Broadcast { x, .. } => {
                let from = shape(*x);
                let to = &ty.shape;
                let lead = to.rank() - from.rank();
                let strides = from.strides();
                let vx = &vals[x.index()];
                let mut out = Vec::with_capacity(to.numel());
                let mut idx = vec![0usize; to.rank()];
                for _ in 0..to.numel() {
                    let off: usize = (0..from.rank())
                        .map(|d| {
                            if from.0[d] == 1 {
                                0
                            } else {
                                idx[d + lead] * strides[d]
                            }
                        })
                        .sum();
                    out.push(vx[off]);
                    for d in (0..idx.len()).rev() {
                        idx[d] += 1;
                        if idx[d] < to.0[d] {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
                out
            }
            Op::Transpose { x, perm } => {
                let src = shape(*x);
                let src_strides = src.strides();
                let dst = &ty.shape;
                let mut out = Vec::with_capacity(dst.numel());
                let mut idx = vec![0usize; dst.rank()];
                for _ in 0..dst.numel() {
                    let off: usize = idx
                        .iter()
                        .zip(perm)
                        .map(|(&i, &p)| i * src_strides[p])
                        .sum();
                    out.push(vals[x.index()][off]);
                    // Increment the destination index, innermost first.
                    for d in (0..idx.len()).rev() {
                        idx[d] += 1;
                        if idx[d] < dst.0[d] {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
                out
            }
            Op::Slice {
                x,
                axis,
                start,
                end,
            } => {
                // Rows of the outer dims × [start..end) × inner block.
                let src = shape(*x);
                let inner: usize = src.0[axis + 1..].iter().product();
                let outer: usize = src.0[..*axis].iter().product();
                let len = src.0[*axis];
                let vx = &vals[x.index()];
                let mut out = Vec::with_capacity(ty.shape.numel());
                for o in 0..outer {
                    out.extend_from_slice(&vx[(o * len + start) * inner..(o * len + end) * inner]);
                }
                out
            }
            Op::Pad { x, axis, len } => {
                // Rows of the outer dims × (x's [0..n) then zeros to len) × inner block.
                let src = shape(*x);
                let inner: usize = src.0[axis + 1..].iter().product();
                let outer: usize = src.0[..*axis].iter().product();
                let n = src.0[*axis];
                let vx = &vals[x.index()];
                let mut out = Vec::with_capacity(ty.shape.numel());
                for o in 0..outer {
                    out.extend_from_slice(&vx[o * n * inner..(o + 1) * n * inner]);
                    out.extend(std::iter::repeat_n(0.0, (len - n) * inner));
                }
                out
            }
            Op::SplitHeads { x, heads, batch } => {
                // out[b·H + h, t, d] = x[b·T + t, h·D + d]
                let (bh, t, d) = (ty.shape.0[0], ty.shape.0[1], ty.shape.0[2]);
                let vx = &vals[x.index()];
                let mut out = Vec::with_capacity(ty.shape.numel());
                for i in 0..bh {
                    let (b, h) = (i / heads, i % heads);
                    for tt in 0..t {
                        let row = (b * t + tt) * heads * d;
                        out.extend_from_slice(&vx[row + h * d..row + (h + 1) * d]);
                    }
                }
                debug_assert_eq!(bh, batch * heads);
                out
            }
            Op::MergeHeads { x, heads } => {
                // out[b·T + t, h·D + d] = x[b·H + h, t, d]
                let (bh, t, d) = (shape(*x).0[0], shape(*x).0[1], shape(*x).0[2]);
                let vx = &vals[x.index()];
                let mut out = Vec::with_capacity(ty.shape.numel());
                for b in 0..bh / heads {
                    for tt in 0..t {
                        for h in 0..*heads {
                            let off = ((b * heads + h) * t + tt) * d;
                            out.extend_from_slice(&vx[off..off + d]);
                        }
                    }
                }
                out
            }
            Op::Repeat {
                region,
                count,
                args: rargs,
                weight_prefix,
            } => {
                let body = &graph.regions[*region].body;
                let mut carried = vals[rargs[0].index()].clone();
                for i in 0..*count {
                    let mut a = vec![carried];
                    a.extend(rargs[1..].iter().map(|h| vals[h.index()].clone()));
                    let p = format!("{prefix}{}", repeat_weight_name(weight_prefix, i, ""));
                    let mut outs = eval_graph(body, a, store, &p)?;
                    carried = outs.pop().map(|(_, t)| t.data).unwrap_or_default();
                }
                carried
            }
            Op::Output { x, name } => {
                let v = vals[x.index()].clone();
                outputs.push((
                    name.clone(),
                    HostTensor {
                        shape: ty.shape.clone(),
                        data: v.clone(),
                    },
                ));
                v
            }
        };
        vals.push(val);
    }
    Ok(outputs)
}

fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, q: impl Fn(f64) -> f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0.0f64;
            for l in 0..k {
                acc += a[i * k + l] as f64 * b[l * n + j] as f64;
            }
            out.push(q(acc));
        }
    }
    out
}

/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
pub fn gelu_tanh(x: f64) -> f64 {
    const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)).tanh())
}

#[cfg(test)]
mod tests {
    use super::super::builder::GraphBuilder;
    use super::*;

    fn t(shape: &[usize], data: &[f32]) -> HostTensor {
        HostTensor::new(shape, data.to_vec()).unwrap()
    }

    fn run(
        graph: &Graph,
        inputs: &[(&str, HostTensor)],
        store: &WeightStore,
    ) -> BTreeMap<String, HostTensor> {
        let inputs = inputs
            .iter()
            .map(|(n, t)| (n.to_string(), t.clone()))
            .collect();
        evaluate(graph, &inputs, store).unwrap()
    }

    #[test]
    fn quantize_rules() {
        assert_eq!(quantize(1.0 + 1e-9, DType::F32), 1.0);
        assert_eq!(quantize(1.0 + 2f64.powi(-11), DType::F16), 1.0); // tie → even
        assert_eq!(quantize(70000.0, DType::F16), f32::INFINITY);
        // F143 with scale −4: 1.03 → codes are 16.48 → 16 → 1.0.
        assert_eq!(quantize(1.03, DType::f143(-4)), 1.0);
        // Saturates at 240·2^-4 = 15.
        assert_eq!(quantize(100.0, DType::f143(-4)), 15.0);
        assert_eq!(quantize(-100.0, DType::f143(-4)), -15.0);
        assert!(quantize(f64::NAN, DType::f143(0)).is_nan());
    }

    #[test]
    fn matmul_bias_gelu_add() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [2, 2]).unwrap();
        let w = b.weight("w", DType::F32, [2, 3]).unwrap();
        let bias = b.weight("b", DType::F32, [3]).unwrap();
        let y = b.matmul("mm", x, w).unwrap();
        let y = b.bias_add("bias", y, bias).unwrap();
        let g = b.gelu("act", y).unwrap();
        let s = b.add("sum", g, y).unwrap();
        b.output("y", y).unwrap();
        b.output("s", s).unwrap();
        let graph = b.finish().unwrap();
        let mut store = WeightStore::new();
        store.insert("w", t(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
        store.insert("b", t(&[3], &[0.5, 0.0, -0.5]));
        let out = run(&graph, &[("x", t(&[2, 2], &[1.0, 0.0, 0.0, -1.0]))], &store);
        assert_eq!(out["y"].data, vec![1.5, 2.0, 2.5, -3.5, -5.0, -6.5]);
        let s: Vec<f32> = out["y"]
            .data
            .iter()
            .map(|&v| (gelu_tanh(v as f64) as f32) + v)
            .collect();
        for (a, e) in out["s"].data.iter().zip(&s) {
            assert!((a - e).abs() < 1e-6);
        }
    }

    #[test]
    fn layernorm_and_softmax() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [1, 4]).unwrap();
        let g = b.weight("g", DType::F32, [4]).unwrap();
        let be = b.weight("b", DType::F32, [4]).unwrap();
        let ln = b.layer_norm("ln", x, g, be, 0.0).unwrap();
        let sm = b.softmax("sm", x, 2.0).unwrap();
        b.output("ln", ln).unwrap();
        b.output("sm", sm).unwrap();
        let graph = b.finish().unwrap();
        let mut store = WeightStore::new();
        store.insert("g", t(&[4], &[1.0, 1.0, 2.0, 1.0]));
        store.insert("b", t(&[4], &[0.0, 0.0, 0.0, 1.0]));
        let out = run(&graph, &[("x", t(&[1, 4], &[1.0, 2.0, 3.0, 4.0]))], &store);
        // mean 2.5, var 1.25
        let s = 1.25f64.sqrt();
        let expect = [-1.5 / s, -0.5 / s, 2.0 * 0.5 / s, 1.5 / s + 1.0];
        for (a, e) in out["ln"].data.iter().zip(expect) {
            assert!((*a as f64 - e).abs() < 1e-6, "{a} {e}");
        }
        let z: f64 = [2.0f64, 4.0, 6.0, 8.0].iter().map(|v| v.exp()).sum();
        assert!((out["sm"].data[3] as f64 - 8f64.exp() / z).abs() < 1e-6);
        assert!((out["sm"].data.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn heads_and_transpose_move_data() {
        // x [B·T, H·D] with B = 2, T = 2, H = 2, D = 3; x[r, c] = 10·r + c.
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [4, 6]).unwrap();
        let s = b.split_heads("split", x, 2, 2).unwrap();
        let tr = b.transpose("t", s, &[0, 2, 1]).unwrap();
        let back = b.transpose("t2", tr, &[0, 2, 1]).unwrap();
        let m = b.merge_heads("merge", back, 2).unwrap();
        b.output("split", s).unwrap();
        b.output("t", tr).unwrap();
        b.output("m", m).unwrap();
        let sl = b.slice("cols", x, 1, 2, 5).unwrap();
        let sl3 = b.slice("heads", s, 1, 1, 2).unwrap();
        b.output("cols", sl).unwrap();
        b.output("t1", sl3).unwrap();
        let graph = b.finish().unwrap();
        let data: Vec<f32> = (0..4)
            .flat_map(|r| (0..6).map(move |c| (10 * r + c) as f32))
            .collect();
        let out = run(&graph, &[("x", t(&[4, 6], &data))], &WeightStore::new());
        // split[(b·H + h), t, d] = x[b·T + t, h·D + d]
        let split = &out["split"].data;
        assert_eq!(out["split"].shape, Shape::from([4, 2, 3]));
        for bb in 0..2 {
            for h in 0..2 {
                for tt in 0..2 {
                    for d in 0..3 {
                        let got = split[((bb * 2 + h) * 2 + tt) * 3 + d];
                        assert_eq!(got, (10 * (bb * 2 + tt) + h * 3 + d) as f32);
                    }
                }
            }
        }
        // t[i, d, t] = split[i, t, d]
        assert_eq!(out["t"].shape, Shape::from([4, 3, 2]));
        assert_eq!(out["t"].data[1], split[3]);
        assert_eq!(out["m"].data, data);
        let cols: Vec<f32> = (0..4)
            .flat_map(|r| (2..5).map(move |c| (10 * r + c) as f32))
            .collect();
        assert_eq!(out["cols"].data, cols);
        assert_eq!(out["t1"].shape, Shape::from([4, 1, 3]));
        let t1: Vec<f32> = (0..4)
            .flat_map(|i| split[i * 6 + 3..i * 6 + 6].to_vec())
            .collect();
        assert_eq!(out["t1"].data, t1);
    }

    #[test]
    fn repeat_applies_prefixed_weights_in_order() {
        let mut body = GraphBuilder::new();
        let x = body.input("x", DType::F32, [1, 2]).unwrap();
        let shift = body.input("shift", DType::F32, [1, 2]).unwrap();
        let w = body.weight("w", DType::F32, [2, 2]).unwrap();
        let y = body.matmul("mm", x, w).unwrap();
        let y = body.add("shift", y, shift).unwrap();
        body.output("y", y).unwrap();
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [1, 2]).unwrap();
        let shift = b.input("shift", DType::F32, [1, 2]).unwrap();
        let r = b.region("layer", body.finish().unwrap()).unwrap();
        let y = b.repeat("layers", r, 2, "l{i}.", &[x, shift]).unwrap();
        b.output("y", y).unwrap();
        let graph = b.finish().unwrap();
        let mut store = WeightStore::new();
        store.insert("l0.w", t(&[2, 2], &[2.0, 0.0, 0.0, 2.0])); // ×2
        store.insert("l1.w", t(&[2, 2], &[0.0, 1.0, 1.0, 0.0])); // swap
        let out = run(
            &graph,
            &[
                ("x", t(&[1, 2], &[1.0, 3.0])),
                ("shift", t(&[1, 2], &[0.5, 0.0])),
            ],
            &store,
        );
        // ((1,3)·2 + (0.5,0)) = (2.5, 6) → swap (6, 2.5) + (0.5, 0) = (6.5, 2.5)
        assert_eq!(out["y"].data, vec![6.5, 2.5]);
    }

    #[test]
    fn fp8_matmul_uses_quantized_operands() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [1, 2]).unwrap();
        let x8 = b.cast("x8", x, DType::f143(-4)).unwrap();
        let w = b.weight("w", DType::f143(-4), [2, 1]).unwrap();
        let y = b.matmul("mm", x8, w).unwrap();
        b.output("y", y).unwrap();
        let graph = b.finish().unwrap();
        let mut store = WeightStore::new();
        store.insert("w", t(&[2, 1], &[1.03, 100.0]));
        let out = run(&graph, &[("x", t(&[1, 2], &[1.03, 1.0]))], &store);
        // 1.03 → 1.0 in f143<-4>, 100 saturates to 15: 1·1 + 1·15.
        assert_eq!(out["y"].data, vec![16.0]);
    }

    #[test]
    fn errors() {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [1, 2]).unwrap();
        let w = b.weight("w", DType::F32, [2, 2]).unwrap();
        let y = b.matmul("mm", x, w).unwrap();
        b.output("y", y).unwrap();
        let graph = b.finish().unwrap();
        let e = |inputs: &[(&str, HostTensor)], store: &WeightStore| {
            let inputs = inputs
                .iter()
                .map(|(n, t)| (n.to_string(), t.clone()))
                .collect();
            evaluate(&graph, &inputs, store).unwrap_err().to_string()
        };
        let mut store = WeightStore::new();
        assert_eq!(
            e(&[], &store),
            "E-EVAL-001: no value given for input `x` ([1, 2])"
        );
        assert_eq!(
            e(&[("x", t(&[2], &[0.0, 0.0]))], &store),
            "E-EVAL-002: input `x` is [2], but the graph declares [1, 2]"
        );
        assert_eq!(
            e(&[("x", t(&[1, 2], &[0.0, 0.0]))], &store),
            "E-EVAL-003: weight `w` is not in the weight store"
        );
        store.insert("w", t(&[4], &[0.0; 4]));
        assert_eq!(
            e(&[("x", t(&[1, 2], &[0.0, 0.0]))], &store),
            "E-EVAL-004: weight `w` is [4] in the store, but the graph declares [2, 2]"
        );
        let mut bad = graph.clone();
        bad.nodes[super::super::arena::Handle::from_index(2)]
            .ty
            .dtype = DType::F16;
        assert!(evaluate(&bad, &BTreeMap::new(), &store)
            .unwrap_err()
            .to_string()
            .starts_with("E-EVAL-005: the graph does not verify: E-VERIFY-004"));
    }
}
