//! SigLIP vision weights: seeded synthetic weights, and loading (and writing) Hugging Face
//! `model.safetensors` checkpoints, into a codegen [`WeightStore`].
//!
//! # Store names and layouts
//!
//! Store names are the Hugging Face names (see [`names`]) with two differences the graphs rely on:
//!
//! * every linear weight is stored `[in, out]` (Hugging Face `nn.Linear` keeps `[out, in]`), so
//!   it is a matmul's `b` operand as it stands;
//! * each layer's `q_proj`, `k_proj`, `v_proj` are fused into `self_attn.qkv_proj.weight`
//!   `[D, 3D]` (columns: Q, then K, then V) and `self_attn.qkv_proj.bias` `[3D]`.
//!
//! The patch embedding (a stride-P convolution, Hugging Face `[D, C, P, P]`) is stored as the
//! matmul weight `[C·P·P, D]` for the patches of [`crate::input::patchify`]; the position
//! embedding is `[T, D]`; LayerNorm parameters are `[D]`.

use std::collections::BTreeMap;
use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use tessera_codegen::graph::{HostTensor, Shape, WeightStore};

use super::config::SiglipVisionConfig;
use crate::rng::Rng;

/// Tensor names.
pub mod names {
    /// Prefix of layer `i`'s tensors, with `{i}` standing for the layer index.
    pub const LAYER_PREFIX_PATTERN: &str = "vision_model.encoder.layers.{i}.";
    // Per layer, relative to the layer prefix.
    pub const LN1_WEIGHT: &str = "layer_norm1.weight";
    pub const LN1_BIAS: &str = "layer_norm1.bias";
    /// Fused Q/K/V (store only; the checkpoint has `q_proj`, `k_proj`, `v_proj`).
    pub const QKV_WEIGHT: &str = "self_attn.qkv_proj.weight";
    pub const QKV_BIAS: &str = "self_attn.qkv_proj.bias";
    pub const OUT_WEIGHT: &str = "self_attn.out_proj.weight";
    pub const OUT_BIAS: &str = "self_attn.out_proj.bias";
    pub const LN2_WEIGHT: &str = "layer_norm2.weight";
    pub const LN2_BIAS: &str = "layer_norm2.bias";
    pub const FC1_WEIGHT: &str = "mlp.fc1.weight";
    pub const FC1_BIAS: &str = "mlp.fc1.bias";
    pub const FC2_WEIGHT: &str = "mlp.fc2.weight";
    pub const FC2_BIAS: &str = "mlp.fc2.bias";
    // Model-level.
    pub const PATCH_WEIGHT: &str = "vision_model.embeddings.patch_embedding.weight";
    pub const PATCH_BIAS: &str = "vision_model.embeddings.patch_embedding.bias";
    pub const POSITION: &str = "vision_model.embeddings.position_embedding.weight";
    pub const POST_LN_WEIGHT: &str = "vision_model.post_layernorm.weight";
    pub const POST_LN_BIAS: &str = "vision_model.post_layernorm.bias";
}

/// Which tensors to generate, load or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WeightSelection {
    /// Encoder layers `0..layers`.
    pub layers: usize,
    /// Patch and position embeddings.
    pub embeddings: bool,
    /// The LayerNorm after the encoder.
    pub post_layernorm: bool,
}

impl WeightSelection {
    /// Layers `0..layers` only.
    pub fn encoder(layers: usize) -> WeightSelection {
        WeightSelection {
            layers,
            embeddings: false,
            post_layernorm: false,
        }
    }

    /// Everything the vision transformer has (no pooling head).
    pub fn all(config: &SiglipVisionConfig) -> WeightSelection {
        WeightSelection {
            layers: config.num_hidden_layers,
            embeddings: true,
            post_layernorm: true,
        }
    }
}

/// Problems loading or writing weights.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WeightError {
    #[error("E-WEIGHT-001: the checkpoint has no tensor {name}")]
    Missing { name: String },

    #[error("E-WEIGHT-002: {name} has shape {got}, expected {expected}")]
    Shape {
        name: String,
        got: Shape,
        expected: Shape,
    },

    #[error("E-WEIGHT-003: the safetensors data is corrupt: {message}")]
    Corrupt { message: String },

    #[error("E-WEIGHT-004: {name} has dtype {dtype}; only F32, F16 and BF16 are supported")]
    DType { name: String, dtype: String },

    #[error("E-WEIGHT-005: {name} holds a non-finite value ({value}) at element {index}")]
    NonFinite {
        name: String,
        index: usize,
        value: f32,
    },

    #[error("E-WEIGHT-006: cannot read {path}: {message}")]
    Io { path: String, message: String },

    #[error("E-WEIGHT-007: {requested} layers requested, but the model has {available}")]
    Layers { requested: usize, available: usize },

    #[error("E-WEIGHT-008: the weight store has no tensor {name}")]
    MissingInStore { name: String },
}

/// How a checkpoint tensor maps onto a store tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Map {
    /// Same elements, same order.
    Copy,
    /// The checkpoint tensor viewed as `[rows, rest]` is the transpose of the store tensor
    /// (linear weights; the patch convolution).
    Transpose,
    /// Part `c` (0 = Q, 1 = K, 2 = V) of the fused QKV weight: `store[i, c·D + j] = hf[j, i]`.
    QkvWeight(usize),
    /// Part `c` of the fused QKV bias: `store[c·D + j] = hf[j]`.
    QkvBias(usize),
}

/// One checkpoint tensor and where it goes.
#[derive(Clone, Debug)]
struct Spec {
    hf_name: String,
    hf_shape: Vec<usize>,
    store_name: String,
    store_shape: Vec<usize>,
    map: Map,
}

fn specs(config: &SiglipVisionConfig, selection: &WeightSelection) -> Vec<Spec> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let mut out = Vec::new();
    let mut push = |hf_name: String,
                    hf_shape: Vec<usize>,
                    store_name: String,
                    store_shape: Vec<usize>,
                    map| {
        out.push(Spec {
            hf_name,
            hf_shape,
            store_name,
            store_shape,
            map,
        })
    };
    for i in 0..selection.layers {
        let p = names::LAYER_PREFIX_PATTERN.replace("{i}", &i.to_string());
        let same = |n: &str| (format!("{p}{n}"), format!("{p}{n}"));
        for n in [names::LN1_WEIGHT, names::LN1_BIAS] {
            let (h, s) = same(n);
            push(h, vec![d], s, vec![d], Map::Copy);
        }
        for (c, part) in ["q_proj", "k_proj", "v_proj"].iter().enumerate() {
            push(
                format!("{p}self_attn.{part}.weight"),
                vec![d, d],
                format!("{p}{}", names::QKV_WEIGHT),
                vec![d, 3 * d],
                Map::QkvWeight(c),
            );
            push(
                format!("{p}self_attn.{part}.bias"),
                vec![d],
                format!("{p}{}", names::QKV_BIAS),
                vec![3 * d],
                Map::QkvBias(c),
            );
        }
        let (h, s) = same(names::OUT_WEIGHT);
        push(h, vec![d, d], s, vec![d, d], Map::Transpose);
        let (h, s) = same(names::OUT_BIAS);
        push(h, vec![d], s, vec![d], Map::Copy);
        for n in [names::LN2_WEIGHT, names::LN2_BIAS] {
            let (h, s) = same(n);
            push(h, vec![d], s, vec![d], Map::Copy);
        }
        let (h, s) = same(names::FC1_WEIGHT);
        push(h, vec![f, d], s, vec![d, f], Map::Transpose);
        let (h, s) = same(names::FC1_BIAS);
        push(h, vec![f], s, vec![f], Map::Copy);
        let (h, s) = same(names::FC2_WEIGHT);
        push(h, vec![d, f], s, vec![f, d], Map::Transpose);
        let (h, s) = same(names::FC2_BIAS);
        push(h, vec![d], s, vec![d], Map::Copy);
    }
    if selection.embeddings {
        let (c, p) = (config.num_channels, config.patch_size);
        push(
            names::PATCH_WEIGHT.into(),
            vec![d, c, p, p],
            names::PATCH_WEIGHT.into(),
            vec![c * p * p, d],
            Map::Transpose,
        );
        push(
            names::PATCH_BIAS.into(),
            vec![d],
            names::PATCH_BIAS.into(),
            vec![d],
            Map::Copy,
        );
        let t = config.num_patches();
        push(
            names::POSITION.into(),
            vec![t, d],
            names::POSITION.into(),
            vec![t, d],
            Map::Copy,
        );
    }
    if selection.post_layernorm {
        for n in [names::POST_LN_WEIGHT, names::POST_LN_BIAS] {
            push(n.into(), vec![d], n.into(), vec![d], Map::Copy);
        }
    }
    out
}

/// The store tensors of a selection, `(name, shape)`, each once, in checkpoint order.
pub fn store_tensors(
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Vec<(String, Shape)> {
    let mut seen = std::collections::HashSet::new();
    specs(config, selection)
        .into_iter()
        .filter(|s| seen.insert(s.store_name.clone()))
        .map(|s| (s.store_name, Shape::from(s.store_shape)))
        .collect()
}

/// Seeded synthetic weights in the store layout: linear weights, biases and embeddings
/// ≈ N(0, 0.02²) (the Hugging Face init std; the distribution is a sum of 12 uniforms, so
/// bounded by ±0.12), LayerNorm gammas ≈ 1 + N(0, 0.02²), betas ≈ N(0, 0.02²). Each tensor
/// is drawn from its own stream named by its store name, so a tensor's values depend only on
/// `seed` and its name — layer 0 is the same whether 1 or 27 layers are generated.
pub fn synthetic_weights(
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
    seed: u64,
) -> WeightStore {
    let mut store = WeightStore::new();
    for (name, shape) in store_tensors(config, selection) {
        let mut rng = Rng::for_name(seed, &name);
        let is_gamma = name.ends_with("layer_norm1.weight")
            || name.ends_with("layer_norm2.weight")
            || name == names::POST_LN_WEIGHT;
        let mean = if is_gamma { 1.0 } else { 0.0 };
        let data = (0..shape.numel())
            .map(|_| rng.normal(mean, 0.02) as f32)
            .collect();
        let tensor = HostTensor { shape, data };
        store.insert(name, tensor);
    }
    store
}

/// Reads a checkpoint file ([`load_safetensors`] on its bytes). The whole file is read into
/// memory.
pub fn load_safetensors_file(
    path: impl AsRef<Path>,
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<WeightStore, WeightError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| WeightError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    load_safetensors(&bytes, config, selection)
}

/// Loads the selected tensors of a Hugging Face SigLIP checkpoint (`SiglipModel` or
/// `SiglipVisionModel`: names under `vision_model.`) into the store layout. F32, F16 and BF16
/// tensors are converted to f32 exactly. Other tensors in the file (the text tower, the
/// pooling head) are ignored.
pub fn load_safetensors(
    bytes: &[u8],
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<WeightStore, WeightError> {
    if selection.layers > config.num_hidden_layers {
        return Err(WeightError::Layers {
            requested: selection.layers,
            available: config.num_hidden_layers,
        });
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| WeightError::Corrupt {
        message: e.to_string(),
    })?;
    let mut tensors: BTreeMap<String, HostTensor> = BTreeMap::new();
    let d = config.hidden_size;
    for spec in specs(config, selection) {
        let view = st.tensor(&spec.hf_name).map_err(|_| WeightError::Missing {
            name: spec.hf_name.clone(),
        })?;
        if view.shape() != spec.hf_shape.as_slice() {
            return Err(WeightError::Shape {
                name: spec.hf_name.clone(),
                got: Shape::from(view.shape()),
                expected: Shape::from(spec.hf_shape.clone()),
            });
        }
        let data = to_f32(&spec.hf_name, view.dtype(), view.data())?;
        let store = tensors
            .entry(spec.store_name.clone())
            .or_insert_with(|| HostTensor {
                shape: Shape::from(spec.store_shape.clone()),
                data: vec![0.0; spec.store_shape.iter().product()],
            });
        match spec.map {
            Map::Copy => store.data.copy_from_slice(&data),
            Map::Transpose => {
                let rows = spec.hf_shape[0];
                let cols = data.len() / rows;
                for r in 0..rows {
                    for c in 0..cols {
                        store.data[c * rows + r] = data[r * cols + c];
                    }
                }
            }
            Map::QkvWeight(part) => {
                for j in 0..d {
                    for i in 0..d {
                        store.data[i * 3 * d + part * d + j] = data[j * d + i];
                    }
                }
            }
            Map::QkvBias(part) => store.data[part * d..(part + 1) * d].copy_from_slice(&data),
        }
    }
    let mut out = WeightStore::new();
    for (name, t) in tensors {
        out.insert(name, t);
    }
    Ok(out)
}

/// Converts little-endian F32/F16/BF16 bytes to f32, rejecting other dtypes and non-finite
/// values.
fn to_f32(name: &str, dtype: Dtype, bytes: &[u8]) -> Result<Vec<f32>, WeightError> {
    let data: Vec<f32> = match dtype {
        Dtype::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => bytes
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => {
            return Err(WeightError::DType {
                name: name.to_string(),
                dtype: format!("{other:?}"),
            })
        }
    };
    if let Some((index, &value)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(WeightError::NonFinite {
            name: name.to_string(),
            index,
            value,
        });
    }
    Ok(data)
}

/// Writes the selected tensors of `store` as a Hugging Face-layout F32 safetensors file (the
/// inverse of [`load_safetensors`]): for tests and for making small checkpoints.
pub fn to_safetensors(
    store: &WeightStore,
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<Vec<u8>, WeightError> {
    let d = config.hidden_size;
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for spec in specs(config, selection) {
        let t = store
            .get(&spec.store_name)
            .ok_or_else(|| WeightError::MissingInStore {
                name: spec.store_name.clone(),
            })?;
        if t.shape.dims() != spec.store_shape.as_slice() {
            return Err(WeightError::Shape {
                name: spec.store_name.clone(),
                got: t.shape.clone(),
                expected: Shape::from(spec.store_shape.clone()),
            });
        }
        let n: usize = spec.hf_shape.iter().product();
        let mut hf = vec![0.0f32; n];
        match spec.map {
            Map::Copy => hf.copy_from_slice(&t.data),
            Map::Transpose => {
                let rows = spec.hf_shape[0];
                let cols = n / rows;
                for r in 0..rows {
                    for c in 0..cols {
                        hf[r * cols + c] = t.data[c * rows + r];
                    }
                }
            }
            Map::QkvWeight(part) => {
                for j in 0..d {
                    for i in 0..d {
                        hf[j * d + i] = t.data[i * 3 * d + part * d + j];
                    }
                }
            }
            Map::QkvBias(part) => hf.copy_from_slice(&t.data[part * d..(part + 1) * d]),
        }
        let bytes = hf.iter().flat_map(|v| v.to_le_bytes()).collect();
        tensors.push((spec.hf_name, spec.hf_shape, bytes));
    }
    let views = tensors
        .iter()
        .map(|(name, shape, bytes)| {
            safetensors::tensor::TensorView::new(Dtype::F32, shape.clone(), bytes)
                .map(|v| (name.clone(), v))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| WeightError::Corrupt {
            message: e.to_string(),
        })?;
    safetensors::serialize(views, None).map_err(|e| WeightError::Corrupt {
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::TensorView;

    fn tiny() -> SiglipVisionConfig {
        SiglipVisionConfig::tiny()
    }

    #[test]
    fn synthetic_weights_are_deterministic_and_shaped() {
        let c = tiny();
        let all = WeightSelection::all(&c);
        let a = synthetic_weights(&c, &all, 42);
        let b = synthetic_weights(&c, &all, 42);
        assert_eq!(a, b);
        assert_ne!(a, synthetic_weights(&c, &all, 43));
        // 2 layers × 12 tensors + 3 embedding + 2 post-LN.
        assert_eq!(a.len(), 2 * 12 + 5);
        let qkv = a
            .get("vision_model.encoder.layers.1.self_attn.qkv_proj.weight")
            .unwrap();
        assert_eq!(qkv.shape, Shape::from([64, 192]));
        assert_eq!(
            a.get(names::PATCH_WEIGHT).unwrap().shape,
            Shape::from([588, 64])
        );
        assert_eq!(a.get(names::POSITION).unwrap().shape, Shape::from([16, 64]));
        // Statistics: weights ~N(0, 0.02), gammas ~1, bounded by 6σ.
        let fc1 = a
            .get("vision_model.encoder.layers.0.mlp.fc1.weight")
            .unwrap();
        let mean = fc1.data.iter().map(|&v| v as f64).sum::<f64>() / fc1.data.len() as f64;
        let std = (fc1
            .data
            .iter()
            .map(|&v| (v as f64 - mean).powi(2))
            .sum::<f64>()
            / fc1.data.len() as f64)
            .sqrt();
        assert!(
            mean.abs() < 0.002 && (std - 0.02).abs() < 0.002,
            "{mean} {std}"
        );
        assert!(fc1.max_abs() <= 0.12);
        let gamma = a
            .get("vision_model.encoder.layers.0.layer_norm1.weight")
            .unwrap();
        assert!(gamma.data.iter().all(|&g| (g - 1.0).abs() <= 0.12));
        // A tensor does not depend on how many layers were generated.
        let one = synthetic_weights(&c, &WeightSelection::encoder(1), 42);
        assert_eq!(
            one.get("vision_model.encoder.layers.0.mlp.fc1.weight"),
            Some(fc1)
        );
    }

    #[test]
    fn safetensors_round_trip_f32() {
        let c = tiny();
        let sel = WeightSelection::all(&c);
        let store = synthetic_weights(&c, &sel, 5);
        let bytes = to_safetensors(&store, &c, &sel).unwrap();
        let back = load_safetensors(&bytes, &c, &sel).unwrap();
        assert_eq!(back, store);
        // Loading fewer layers, and no embeddings, from the same file.
        let one = load_safetensors(&bytes, &c, &WeightSelection::encoder(1)).unwrap();
        assert_eq!(one.len(), 12);
    }

    /// Writes a checkpoint by hand with the `safetensors` serializer, in Hugging Face layout
    /// (`[out, in]`, separate q/k/v), so that the layout conversion is checked against an
    /// independent statement of it.
    #[test]
    fn loads_hf_layout_written_by_hand_in_f16_and_bf16() {
        let c = SiglipVisionConfig {
            num_hidden_layers: 1,
            ..tiny()
        };
        let (d, f) = (c.hidden_size, c.intermediate_size);
        let p = "vision_model.encoder.layers.0.";
        // value(name, flat index) – exactly representable in bf16 and f16 (multiples of 1/64 ≤ 4).
        let value = |seed: usize, i: usize| ((i * 7 + seed * 13) % 257) as f32 / 64.0;
        let mut raw: Vec<(String, Vec<usize>, Dtype, Vec<u8>)> = Vec::new();
        let mut add = |name: String, shape: Vec<usize>, seed: usize, dtype: Dtype| {
            let n: usize = shape.iter().product();
            let bytes: Vec<u8> = (0..n)
                .flat_map(|i| match dtype {
                    Dtype::F16 => half::f16::from_f32(value(seed, i)).to_le_bytes().to_vec(),
                    Dtype::BF16 => half::bf16::from_f32(value(seed, i)).to_le_bytes().to_vec(),
                    _ => value(seed, i).to_le_bytes().to_vec(),
                })
                .collect();
            raw.push((name, shape, dtype, bytes));
        };
        add(format!("{p}layer_norm1.weight"), vec![d], 1, Dtype::F32);
        add(format!("{p}layer_norm1.bias"), vec![d], 2, Dtype::F32);
        add(
            format!("{p}self_attn.q_proj.weight"),
            vec![d, d],
            3,
            Dtype::F16,
        );
        add(
            format!("{p}self_attn.k_proj.weight"),
            vec![d, d],
            4,
            Dtype::BF16,
        );
        add(
            format!("{p}self_attn.v_proj.weight"),
            vec![d, d],
            5,
            Dtype::F32,
        );
        add(format!("{p}self_attn.q_proj.bias"), vec![d], 6, Dtype::F32);
        add(format!("{p}self_attn.k_proj.bias"), vec![d], 7, Dtype::F32);
        add(format!("{p}self_attn.v_proj.bias"), vec![d], 8, Dtype::F32);
        add(
            format!("{p}self_attn.out_proj.weight"),
            vec![d, d],
            9,
            Dtype::BF16,
        );
        add(
            format!("{p}self_attn.out_proj.bias"),
            vec![d],
            10,
            Dtype::F32,
        );
        add(format!("{p}layer_norm2.weight"), vec![d], 11, Dtype::F32);
        add(format!("{p}layer_norm2.bias"), vec![d], 12, Dtype::F32);
        add(format!("{p}mlp.fc1.weight"), vec![f, d], 13, Dtype::F16);
        add(format!("{p}mlp.fc1.bias"), vec![f], 14, Dtype::F32);
        add(format!("{p}mlp.fc2.weight"), vec![d, f], 15, Dtype::F32);
        add(format!("{p}mlp.fc2.bias"), vec![d], 16, Dtype::F32);
        add("text_model.unrelated".into(), vec![3], 17, Dtype::F32);
        let views: Vec<(String, TensorView)> = raw
            .iter()
            .map(|(n, s, dt, b)| (n.clone(), TensorView::new(*dt, s.clone(), b).unwrap()))
            .collect();
        let bytes = safetensors::serialize(views, None).unwrap();
        let store = load_safetensors(&bytes, &c, &WeightSelection::encoder(1)).unwrap();
        let get = |n: &str| store.get(&format!("{p}{n}")).unwrap();
        // fc1: HF [F, D] element (o, i) → store [D, F] element (i, o).
        let fc1 = get(names::FC1_WEIGHT);
        assert_eq!(fc1.shape, Shape::from([d, f]));
        for (o, i) in [(0, 0), (5, 3), (f - 1, d - 1), (100, 7)] {
            assert_eq!(fc1.data[i * f + o], value(13, o * d + i));
        }
        let fc2 = get(names::FC2_WEIGHT);
        assert_eq!(fc2.data[7 * d + 3], value(15, 3 * f + 7));
        // QKV: part c column block; K came from bf16.
        let qkv = get(names::QKV_WEIGHT);
        for (c, seed) in [(0, 3), (1, 4), (2, 5)] {
            for (o, i) in [(0, 0), (2, 9), (d - 1, 1)] {
                assert_eq!(qkv.data[i * 3 * d + c * d + o], value(seed, o * d + i));
            }
        }
        let qkv_b = get(names::QKV_BIAS);
        assert_eq!(qkv_b.data[d + 5], value(7, 5));
        assert_eq!(qkv_b.data[2 * d], value(8, 0));
        assert_eq!(get(names::LN2_BIAS).data[9], value(12, 9));
        assert_eq!(get(names::OUT_WEIGHT).data[4 * d + 2], value(9, 2 * d + 4));
    }

    fn checkpoint(c: &SiglipVisionConfig) -> (WeightStore, Vec<u8>) {
        let sel = WeightSelection::encoder(c.num_hidden_layers);
        let store = synthetic_weights(c, &sel, 1);
        let bytes = to_safetensors(&store, c, &sel).unwrap();
        (store, bytes)
    }

    /// Replaces one tensor of a serialized checkpoint.
    fn with_tensor(
        bytes: &[u8],
        name: &str,
        dtype: Dtype,
        shape: Vec<usize>,
        data: Vec<u8>,
    ) -> Vec<u8> {
        let st = SafeTensors::deserialize(bytes).unwrap();
        let mut views: Vec<(String, TensorView)> = st
            .tensors()
            .into_iter()
            .filter(|(n, _)| n != name)
            .collect();
        views.push((
            name.to_string(),
            TensorView::new(dtype, shape, &data).unwrap(),
        ));
        safetensors::serialize(views, None).unwrap()
    }

    #[test]
    fn errors() {
        let c = tiny();
        let sel = WeightSelection::encoder(2);
        let (_, bytes) = checkpoint(&c);
        let fc1 = "vision_model.encoder.layers.0.mlp.fc1.weight";
        let e = |b: &[u8]| load_safetensors(b, &c, &sel).unwrap_err().to_string();

        let wrong = with_tensor(
            &bytes,
            fc1,
            Dtype::F32,
            vec![128, 60],
            vec![0; 128 * 60 * 4],
        );
        assert_eq!(
            e(&wrong),
            "E-WEIGHT-002: vision_model.encoder.layers.0.mlp.fc1.weight has shape [128, 60], expected [128, 64]"
        );
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let missing: Vec<(String, TensorView)> =
            st.tensors().into_iter().filter(|(n, _)| n != fc1).collect();
        let missing = safetensors::serialize(missing, None).unwrap();
        assert_eq!(e(&missing), "E-WEIGHT-001: the checkpoint has no tensor vision_model.encoder.layers.0.mlp.fc1.weight");

        assert!(e(&bytes[..bytes.len() - 10])
            .starts_with("E-WEIGHT-003: the safetensors data is corrupt: "));
        assert!(e(b"garbage").starts_with("E-WEIGHT-003: the safetensors data is corrupt: "));
        assert!(e(&[]).starts_with("E-WEIGHT-003"));

        let ints = with_tensor(
            &bytes,
            fc1,
            Dtype::I32,
            vec![128, 64],
            vec![0; 128 * 64 * 4],
        );
        assert_eq!(e(&ints), "E-WEIGHT-004: vision_model.encoder.layers.0.mlp.fc1.weight has dtype I32; only F32, F16 and BF16 are supported");

        let mut nan = vec![0u8; 128 * 64 * 4];
        nan[40..44].copy_from_slice(&f32::NAN.to_le_bytes());
        let nan = with_tensor(&bytes, fc1, Dtype::F32, vec![128, 64], nan);
        assert_eq!(e(&nan), "E-WEIGHT-005: vision_model.encoder.layers.0.mlp.fc1.weight holds a non-finite value (NaN) at element 10");

        let io = load_safetensors_file("/nonexistent/model.safetensors", &c, &sel)
            .unwrap_err()
            .to_string();
        assert!(
            io.starts_with("E-WEIGHT-006: cannot read /nonexistent/model.safetensors: "),
            "{io}"
        );

        assert_eq!(
            load_safetensors(&bytes, &c, &WeightSelection::encoder(3))
                .unwrap_err()
                .to_string(),
            "E-WEIGHT-007: 3 layers requested, but the model has 2"
        );
        // The file has no embeddings.
        assert_eq!(
            load_safetensors(&bytes, &c, &WeightSelection::all(&c)).unwrap_err().to_string(),
            "E-WEIGHT-001: the checkpoint has no tensor vision_model.embeddings.patch_embedding.weight"
        );
        assert_eq!(
            to_safetensors(&WeightStore::new(), &c, &sel).unwrap_err().to_string(),
            "E-WEIGHT-008: the weight store has no tensor vision_model.encoder.layers.0.layer_norm1.weight"
        );
    }

    #[test]
    fn reads_files() {
        let c = tiny();
        let (store, bytes) = checkpoint(&c);
        let dir =
            std::env::temp_dir().join(format!("tessera-models-weights-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("model.safetensors");
        std::fs::write(&path, &bytes).unwrap();
        let back = load_safetensors_file(&path, &c, &WeightSelection::encoder(2)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back, store);
    }
}
