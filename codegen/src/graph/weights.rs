//! Host data of weights: the [`WeightStore`], checking a graph against it, and choosing FP8
//! weight scales from the data.
//!
//! The graph stays light: a [`Op::Weight`] node names a store tensor and says how the compiler
//! keeps it on the tiles (its dtype); the store holds every tensor once, as f32, in the
//! layout the graph uses (a matmul's `b` is `[K, N]`). The compiler rounds the data to the
//! node's dtype when it builds the image (for FP8: divide by `2^scale`, round to nearest even,
//! saturate).

use std::collections::BTreeMap;

use super::op::{kernel_op, repeat_weight_name, view_op, Graph, Op, ValueHandle};
use super::types::{fp8_scale_for_max_abs, DType, Shape, TensorType};

/// A host tensor: shape and f32 data in row-major order.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    pub shape: Shape,
    pub data: Vec<f32>,
}

impl HostTensor {
    /// Fails if `data.len()` is not the shape's element count.
    pub fn new(shape: impl Into<Shape>, data: Vec<f32>) -> Result<HostTensor, WeightStoreError> {
        let shape = shape.into();
        if shape.numel() != data.len() {
            return Err(WeightStoreError::DataLength {
                expected: shape.numel(),
                shape,
                got: data.len(),
            });
        }
        Ok(HostTensor { shape, data })
    }

    /// Largest magnitude, ignoring NaNs (0 for an empty tensor).
    pub fn max_abs(&self) -> f32 {
        self.data
            .iter()
            .filter(|x| !x.is_nan())
            .fold(0.0f32, |m, x| m.max(x.abs()))
    }
}

/// Problems with weights and their data.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WeightStoreError {
    #[error("E-WSTORE-001: a tensor of shape {shape} needs {expected} values, {got} given")]
    DataLength {
        shape: Shape,
        expected: usize,
        got: usize,
    },

    #[error(
        "E-WSTORE-002: the graph reads weight `{name}` ({ty}), which is not in the weight store"
    )]
    Missing { name: String, ty: TensorType },

    #[error(
        "E-WSTORE-003: weight `{name}` is {store} in the store, but the graph reads it as {ty}"
    )]
    Shape {
        name: String,
        store: Shape,
        ty: TensorType,
    },
}

/// Named host tensors, each held once as f32. Iteration is in name order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WeightStore {
    tensors: BTreeMap<String, HostTensor>,
}

impl WeightStore {
    pub fn new() -> WeightStore {
        WeightStore::default()
    }

    /// Adds or replaces a tensor; returns the one it replaced.
    pub fn insert(&mut self, name: impl Into<String>, tensor: HostTensor) -> Option<HostTensor> {
        self.tensors.insert(name.into(), tensor)
    }

    pub fn get(&self, name: &str) -> Option<&HostTensor> {
        self.tensors.get(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    pub fn remove(&mut self, name: &str) -> Option<HostTensor> {
        self.tensors.remove(name)
    }

    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// `(name, tensor)` in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &HostTensor)> {
        self.tensors.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Total number of f32 values held.
    pub fn total_values(&self) -> usize {
        self.tensors.values().map(|t| t.data.len()).sum()
    }
}

/// Checks that every weight the graph reads (with repeat prefixes applied) is in the store with
/// the shape the graph gives it. Extra store tensors are allowed.
pub fn check_weights(graph: &Graph, store: &WeightStore) -> Result<(), WeightStoreError> {
    for (name, ty) in graph.expanded_weights() {
        match store.get(&name) {
            None => return Err(WeightStoreError::Missing { name, ty }),
            Some(t) if t.shape != ty.shape => {
                return Err(WeightStoreError::Shape {
                    name,
                    store: t.shape.clone(),
                    ty,
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// One FP8 scale chosen by [`fit_fp8_weight_scales`].
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleChoice {
    /// The weight's name as written in its graph, with the repeat prefix patterns in front
    /// (e.g. `vision_model.encoder.layers.{i}.mlp.fc1.weight`).
    pub name: String,
    /// Largest magnitude over every store tensor the node reads.
    pub max_abs: f32,
    pub scale: i8,
}

/// Sets the scale of every FP8 weight node (keeping its format) to
/// [`fp8_scale_for_max_abs`] of its data: the largest element lands in the top half of the
/// format's range and nothing saturates. A weight inside a repeat body stands for one tensor per
/// iteration, but one node has one dtype, so its scale comes from the largest magnitude over all
/// iterations (and all repeats of the region). Checks the weights first ([`check_weights`]).
pub fn fit_fp8_weight_scales(
    graph: &mut Graph,
    store: &WeightStore,
) -> Result<Vec<ScaleChoice>, WeightStoreError> {
    check_weights(graph, store)?;
    let mut choices = Vec::new();
    fit_in(graph, store, &[String::new()], "", &mut choices);
    Ok(choices)
}

/// `prefixes`: every concrete name prefix this graph is instantiated under;
/// `pattern`: the same, as a pattern for reports.
fn fit_in(
    graph: &mut Graph,
    store: &WeightStore,
    prefixes: &[String],
    pattern: &str,
    out: &mut Vec<ScaleChoice>,
) {
    for (_, node) in graph.nodes.iter_mut() {
        let (Op::Weight { name }, DType::Fp8 { format, .. }) = (&node.op, node.ty.dtype) else {
            continue;
        };
        let max_abs = prefixes
            .iter()
            .filter_map(|p| store.get(&format!("{p}{name}")))
            .map(HostTensor::max_abs)
            .fold(0.0f32, f32::max);
        let scale = fp8_scale_for_max_abs(max_abs, format);
        node.ty.dtype = DType::Fp8 { format, scale };
        out.push(ScaleChoice {
            name: format!("{pattern}{name}"),
            max_abs,
            scale,
        });
    }
    // A view of a weight (a product's per-head block of it) has the weight's new dtype.
    let views: Vec<(ValueHandle, ValueHandle)> = graph
        .nodes
        .iter()
        .filter_map(|(h, n)| match &n.op {
            view_op!() => n.op.operands().first().map(|&(_, x)| (h, x)),
            Op::Input { .. }
            | Op::Weight { .. }
            | kernel_op!()
            | Op::Repeat { .. }
            | Op::Output { .. } => None,
        })
        .collect();
    for (h, x) in views {
        graph.nodes[h].ty.dtype = graph.nodes[x].ty.dtype;
    }
    // Prefixes of each region: every iteration of every repeat that uses it.
    let mut region_prefixes: Vec<(Vec<String>, String)> =
        vec![(Vec::new(), String::new()); graph.regions.len()];
    for (_, node) in graph.nodes.iter() {
        if let Op::Repeat {
            region,
            count,
            weight_prefix,
            ..
        } = &node.op
        {
            let entry = &mut region_prefixes[region.index()];
            for p in prefixes {
                for i in 0..*count {
                    entry
                        .0
                        .push(format!("{p}{}", repeat_weight_name(weight_prefix, i, "")));
                }
            }
            entry.1 = format!("{pattern}{weight_prefix}");
        }
    }
    for ((_, region), (ps, pat)) in graph.regions.iter_mut().zip(region_prefixes) {
        fit_in(&mut region.body, store, &ps, &pat, out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::builder::GraphBuilder;
    use super::super::verify::verify;
    use super::*;

    fn layer() -> Graph {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [2, 4]).unwrap();
        let x8 = b.cast("x8", x, DType::f143(-4)).unwrap();
        let w = b.weight("w", DType::f143(0), [4, 4]).unwrap();
        let y = b.matmul("mm", x8, w).unwrap();
        b.output("y", y).unwrap();
        b.finish().unwrap()
    }

    fn model() -> Graph {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F16, [2, 4]).unwrap();
        let x8 = b.cast("x8", x, DType::f152(0)).unwrap();
        let w = b.weight("proj", DType::f152(0), [4, 4]).unwrap();
        let y = b.matmul("proj", x8, w).unwrap();
        let r = b.region("layer", layer()).unwrap();
        let y = b.repeat("layers", r, 2, "layers.{i}.", &[y]).unwrap();
        b.output("y", y).unwrap();
        b.finish().unwrap()
    }

    fn store(l0: f32, l1: f32, proj: f32) -> WeightStore {
        let mut s = WeightStore::new();
        let t = |m: f32| {
            HostTensor::new(
                [4, 4],
                (0..16).map(|i| if i == 5 { -m } else { 0.0 }).collect(),
            )
            .unwrap()
        };
        s.insert("layers.0.w", t(l0));
        s.insert("layers.1.w", t(l1));
        s.insert("proj", t(proj));
        s
    }

    #[test]
    fn host_tensor_checks_length() {
        assert_eq!(
            HostTensor::new([2, 3], vec![0.0; 5])
                .unwrap_err()
                .to_string(),
            "E-WSTORE-001: a tensor of shape [2, 3] needs 6 values, 5 given"
        );
        let t = HostTensor::new([3], vec![1.0, -4.0, f32::NAN]).unwrap();
        assert_eq!(t.max_abs(), 4.0);
    }

    #[test]
    fn check_weights_reports_missing_and_shape() {
        let g = model();
        check_weights(&g, &store(1.0, 1.0, 1.0)).unwrap();
        let mut s = store(1.0, 1.0, 1.0);
        s.remove("layers.1.w");
        assert_eq!(
            check_weights(&g, &s).unwrap_err().to_string(),
            "E-WSTORE-002: the graph reads weight `layers.1.w` (f143<0>[4, 4]), which is not in the weight store"
        );
        s.insert("layers.1.w", HostTensor::new([16], vec![0.0; 16]).unwrap());
        assert_eq!(
            check_weights(&g, &s).unwrap_err().to_string(),
            "E-WSTORE-003: weight `layers.1.w` is [16] in the store, but the graph reads it as f143<0>[4, 4]"
        );
    }

    #[test]
    fn scales_come_from_the_largest_magnitude_over_iterations() {
        let mut g = model();
        let choices = fit_fp8_weight_scales(&mut g, &store(0.05, 0.2, 1000.0)).unwrap();
        verify(&g).unwrap();
        assert_eq!(
            choices,
            vec![
                ScaleChoice {
                    name: "proj".into(),
                    max_abs: 1000.0,
                    scale: -5
                },
                ScaleChoice {
                    name: "layers.{i}.w".into(),
                    max_abs: 0.2,
                    scale: -10
                },
            ]
        );
        // F152 for `proj`: 1000 ≤ 57344·2^-5. F143 in the body: 0.2 ≤ 240·2^-10 ≈ 0.234.
        assert_eq!(
            g.regions[super::super::arena::Handle::from_index(0)]
                .body
                .expanded_weights()[0]
                .1
                .dtype,
            DType::f143(-10)
        );
    }
}
