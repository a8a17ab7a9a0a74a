//! [`split_contraction`]: a matrix product `[M, K] × [K, N]` rewritten as `parts` products
//! over slices of K whose f16 results are added. Each part reads `1/parts` of both operands, so
//! its blocks take that share of a tile's SRAM: the compiler's answer when no strategy of the
//! whole product fits (see [`crate::compile`]).
//!
//! Numerics: each part accumulates in the AMP as the whole product would and is rounded to f16;
//! the partial sums are added in f16, left to right. The result is therefore not bit-equal to
//! the unsplit product — the plan's reference executor runs the rewritten graph, so chip runs
//! stay bit-exact against it, and the error against the host's f32 reference grows by about
//! one f16 rounding per part.

use super::op::{Graph, Node, Op, ValueHandle};
use super::verify::{verify, VerifyError};

/// Why a product could not be split.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    #[error("E-SPLIT-001 %{0} is not a matrix product of two rank-2 operands")]
    NotAProduct(usize),
    #[error("E-SPLIT-002 %{node} `{label}`: K = {k} has fewer than {parts} blocks of {granule}")]
    TooNarrow {
        node: usize,
        label: String,
        k: usize,
        parts: usize,
        granule: usize,
    },
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// Bounds of `parts` slices of `0..k`, each a whole number of `granule`s but the last.
fn bounds(k: usize, parts: usize, granule: usize) -> Vec<usize> {
    let blocks = k.div_ceil(granule);
    (0..=parts)
        .map(|p| (blocks * p / parts * granule).min(k))
        .collect()
}

/// `graph` with product `product` (a [`Op::MatMul`]) replaced by `parts` products over slices
/// of K of whole `granule`s (the AMP's K-block in elements), summed by [`Op::Add`]s. The sum
/// keeps the product's label; part `p` is `{label}.k{p}`. The result is verified.
pub fn split_contraction(
    graph: &Graph,
    product: ValueHandle,
    parts: usize,
    granule: usize,
) -> Result<Graph, SplitError> {
    let node = graph
        .node(product)
        .ok_or(SplitError::NotAProduct(product.index()))?;
    let Op::MatMul { a, b } = node.op else {
        return Err(SplitError::NotAProduct(product.index()));
    };
    let (a_ty, b_ty) = (&graph.nodes[a].ty, &graph.nodes[b].ty);
    if a_ty.shape.0.len() != 2 || b_ty.shape.0.len() != 2 {
        return Err(SplitError::NotAProduct(product.index()));
    }
    let (k, granule) = (b_ty.shape.0[0], granule.max(1));
    if parts < 2 || k.div_ceil(granule) < parts {
        return Err(SplitError::TooNarrow {
            node: product.index(),
            label: node.label.clone(),
            k,
            parts,
            granule,
        });
    }
    let cuts = bounds(k, parts, granule);
    let mut out = Graph::new();
    let mut map: Vec<ValueHandle> = Vec::with_capacity(graph.nodes.len());
    // A loop's body bounds move with the nodes the split adds.
    let (mut first, mut end) = (0, 0);
    for (h, n) in graph.nodes.iter() {
        if graph.looped.as_ref().is_some_and(|l| l.first == h.index()) {
            first = out.nodes.len();
        }
        if graph.looped.as_ref().is_some_and(|l| l.end == h.index()) {
            end = out.nodes.len();
        }
        if h != product {
            let mut op = n.op.clone();
            op.map_operands(|v| map[v.index()]);
            map.push(out.nodes.append(Node {
                op,
                ty: n.ty.clone(),
                label: n.label.clone(),
            }));
            continue;
        }
        let (a, b) = (map[a.index()], map[b.index()]);
        let mut sum: Option<ValueHandle> = None;
        for p in 0..parts {
            let (start, end) = (cuts[p], cuts[p + 1]);
            let slice = |out: &mut Graph, x: ValueHandle, axis: usize, what: &str| {
                let mut ty = out.nodes[x].ty.clone();
                ty.shape.0[axis] = end - start;
                out.nodes.append(Node {
                    op: Op::Slice {
                        x,
                        axis,
                        start,
                        end,
                    },
                    ty,
                    label: format!("{}.k{p}.{what}", n.label),
                })
            };
            let a_p = slice(&mut out, a, 1, "a");
            let b_p = slice(&mut out, b, 0, "b");
            let last = p + 1 == parts;
            let part = out.nodes.append(Node {
                op: Op::MatMul { a: a_p, b: b_p },
                ty: n.ty.clone(),
                label: format!("{}.k{p}", n.label),
            });
            sum = Some(match sum {
                None => part,
                Some(acc) => out.nodes.append(Node {
                    op: Op::Add { a: acc, b: part },
                    ty: n.ty.clone(),
                    label: if last {
                        n.label.clone()
                    } else {
                        format!("{}.sum{p}", n.label)
                    },
                }),
            });
        }
        map.push(sum.ok_or(SplitError::NotAProduct(product.index()))?);
    }
    out.regions = graph.regions.clone();
    out.looped = graph.looped.as_ref().map(|l| {
        let mut l = l.clone();
        if l.end == graph.nodes.len() {
            end = out.nodes.len();
        }
        (l.first, l.end) = (first, end);
        l.carried_in = map[l.carried_in.index()];
        l.carried_out = map[l.carried_out.index()];
        l
    });
    verify(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::builder::GraphBuilder;
    use crate::graph::eval::evaluate;
    use crate::graph::weights::{HostTensor, WeightStore};
    use crate::graph::DType;
    use std::collections::BTreeMap;

    #[test]
    fn bounds_are_whole_granules() {
        assert_eq!(bounds(4304, 2, 32), vec![0, 2144, 4304]);
        assert_eq!(bounds(64, 4, 16), vec![0, 16, 32, 48, 64]);
        assert_eq!(bounds(40, 3, 16), vec![0, 16, 32, 40]);
    }

    fn product(k: usize) -> (Graph, WeightStore, ValueHandle) {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [8, k]).unwrap();
        let w = b.weight("w", DType::F16, [k, 16]).unwrap();
        let y = b.matmul("y", x, w).unwrap();
        b.output("out", y).unwrap();
        let mut store = WeightStore::new();
        let data = (0..k * 16)
            .map(|i| ((i * 37 % 23) as f32 - 11.0) / 16.0)
            .collect();
        store.insert("w", HostTensor::new([k, 16], data).unwrap());
        (b.finish().unwrap(), store, y)
    }

    #[test]
    fn parts_are_sliced_products_summed_under_the_products_label() {
        let (graph, store, y) = product(64);
        let split = split_contraction(&graph, y, 3, 16).unwrap();
        let count = |m: &str| {
            split
                .nodes
                .iter()
                .filter(|(_, n)| n.op.mnemonic() == m)
                .count()
        };
        assert_eq!((count("matmul"), count("slice"), count("add")), (3, 6, 2));
        let labels: Vec<&str> = split.nodes.iter().map(|(_, n)| n.label.as_str()).collect();
        assert!(labels.contains(&"y.k2") && labels.contains(&"y.sum1") && labels.contains(&"y"));
        let slices: Vec<(usize, usize)> = split
            .nodes
            .iter()
            .filter_map(|(_, n)| {
                let Op::Slice {
                    start,
                    end,
                    axis: 0,
                    ..
                } = n.op
                else {
                    return None;
                };
                Some((start, end))
            })
            .collect();
        assert_eq!(slices, vec![(0, 16), (16, 32), (32, 64)]);
        // The same function of the inputs, up to the f16 rounding of the partial sums.
        let x: Vec<f32> = (0..8 * 64)
            .map(|i| ((i * 13 % 17) as f32 - 8.0) / 8.0)
            .collect();
        let inputs = BTreeMap::from([("x".to_string(), HostTensor::new([8, 64], x).unwrap())]);
        let whole = &evaluate(&graph, &inputs, &store).unwrap()["out"];
        let parts = &evaluate(&split, &inputs, &store).unwrap()["out"];
        for (a, b) in whole.data.iter().zip(&parts.data) {
            assert!((a - b).abs() <= 2e-3 * a.abs().max(1.0), "{a} vs {b}");
        }
    }

    #[test]
    fn what_cannot_be_split_is_refused() {
        let (graph, _, y) = product(32);
        assert!(matches!(
            split_contraction(&graph, y, 3, 16),
            Err(SplitError::TooNarrow {
                k: 32,
                parts: 3,
                ..
            })
        ));
        let x = graph.inputs().next().unwrap().0;
        assert_eq!(
            split_contraction(&graph, x, 2, 16),
            Err(SplitError::NotAProduct(x.index()))
        );
    }
}
