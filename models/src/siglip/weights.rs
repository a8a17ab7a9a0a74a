//! SigLIP vision weights: seeded synthetic weights, and loading (and writing) Hugging Face
//! `model.safetensors` checkpoints held in memory, into a codegen [`WeightStore`]. Loading a
//! checkpoint directory as transformers writes it (config, shards, index) is
//! [`super::checkpoint`].
//!
//! # Store names and layouts
//!
//! Store names are the Hugging Face names under `vision_model.` (see [`names`]) with these
//! differences the graphs rely on:
//!
//! * every linear weight is stored `[in, out]` (Hugging Face `nn.Linear` keeps `[out, in]`), so
//!   it is a matmul's `b` operand as it stands;
//! * each layer's `q_proj`, `k_proj`, `v_proj` are fused into `self_attn.qkv_proj.weight`
//!   `[D, 3D]` (columns: Q, then K, then V) and `self_attn.qkv_proj.bias` `[3D]`;
//! * the pooling head's `nn.MultiheadAttention` `in_proj_weight` `[3D, D]` and
//!   `in_proj_bias` `[3D]` are split into `head.attention.{q,k,v}_proj.{weight,bias}`
//!   (`[D, D]` each, `[in, out]`, and `[D]`): the query projection acts on the probe, the key
//!   and value projections on the hidden states, so they are different matmuls. The probe
//!   `[1, 1, D]` is stored `[1, D]`.
//!
//! The patch embedding (a stride-P convolution, Hugging Face `[D, C, P, P]`) is stored as the
//! matmul weight `[C·P·P, D]` for the patches of [`crate::input::patchify`] and
//! [`crate::pixels::PixelValues::patches`]; the position embedding is `[T, D]`; LayerNorm
//! parameters are `[D]`.
//!
//! Checkpoint names may carry the `vision_model.` prefix (`SiglipModel`, and
//! `SiglipVisionModel` as transformers 4 wrote it) or not (`SiglipVisionModel` as
//! transformers 5 writes it); the prefix is detected per checkpoint (see
//! [`super::checkpoint`]).

use safetensors::{Dtype, SafeTensors};
use tessera_codegen::graph::{HostTensor, Shape, WeightStore};

use super::config::SiglipVisionConfig;
use super::layout::{self, Spec};
use tessera_isa::rng::Rng;

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
    // The attention-pooling head (`SiglipMultiheadAttentionPoolingHead`).
    /// Prefix of every head tensor.
    pub const HEAD_PREFIX: &str = "vision_model.head.";
    /// The learned query, `[1, D]` (checkpoint `head.probe` `[1, 1, D]`).
    pub const HEAD_PROBE: &str = "vision_model.head.probe";
    /// Query projection `[D, D]` (`[in, out]`; rows `0..D` of the checkpoint's
    /// `head.attention.in_proj_weight`, transposed) and its bias `[D]`.
    pub const HEAD_Q_WEIGHT: &str = "vision_model.head.attention.q_proj.weight";
    pub const HEAD_Q_BIAS: &str = "vision_model.head.attention.q_proj.bias";
    /// Key projection (rows `D..2D` of `in_proj_weight`).
    pub const HEAD_K_WEIGHT: &str = "vision_model.head.attention.k_proj.weight";
    pub const HEAD_K_BIAS: &str = "vision_model.head.attention.k_proj.bias";
    /// Value projection (rows `2D..3D` of `in_proj_weight`).
    pub const HEAD_V_WEIGHT: &str = "vision_model.head.attention.v_proj.weight";
    pub const HEAD_V_BIAS: &str = "vision_model.head.attention.v_proj.bias";
    pub const HEAD_OUT_WEIGHT: &str = "vision_model.head.attention.out_proj.weight";
    pub const HEAD_OUT_BIAS: &str = "vision_model.head.attention.out_proj.bias";
    pub const HEAD_LN_WEIGHT: &str = "vision_model.head.layernorm.weight";
    pub const HEAD_LN_BIAS: &str = "vision_model.head.layernorm.bias";
    /// The head's MLP, `[D, F]`, `[F]`, `[F, D]`, `[D]`.
    pub const HEAD_FC1_WEIGHT: &str = "vision_model.head.mlp.fc1.weight";
    pub const HEAD_FC1_BIAS: &str = "vision_model.head.mlp.fc1.bias";
    pub const HEAD_FC2_WEIGHT: &str = "vision_model.head.mlp.fc2.weight";
    pub const HEAD_FC2_BIAS: &str = "vision_model.head.mlp.fc2.bias";
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
    /// The attention-pooling head (`head.*`).
    pub head: bool,
}

impl WeightSelection {
    /// Layers `0..layers` only.
    pub fn encoder(layers: usize) -> WeightSelection {
        WeightSelection {
            layers,
            embeddings: false,
            post_layernorm: false,
            head: false,
        }
    }

    /// Everything the vision transformer has up to `last_hidden_state` (no pooling head).
    pub fn all(config: &SiglipVisionConfig) -> WeightSelection {
        WeightSelection {
            layers: config.num_hidden_layers,
            embeddings: true,
            post_layernorm: true,
            head: false,
        }
    }

    /// [`all`](Self::all) plus the pooling head if the config has one
    /// (`vision_use_head`).
    pub fn full(config: &SiglipVisionConfig) -> WeightSelection {
        WeightSelection {
            head: config.vision_use_head,
            ..Self::all(config)
        }
    }

    /// This selection with the head included or not.
    pub fn with_head(self, head: bool) -> WeightSelection {
        WeightSelection { head, ..self }
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

    #[error("E-WEIGHT-009: the safetensors data holds no SigLIP vision tower (no `embeddings.patch_embedding.weight` or `encoder.layers.0.layer_norm1.weight`, with or without `vision_model.`)")]
    NoVisionTower,

    #[error("E-WEIGHT-010: invalid config: {0}")]
    Config(#[from] super::config::ConfigError),
}

/// The store tensors of a selection, `(name, shape)`, each once, in checkpoint order.
pub fn store_tensors(
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Vec<(String, Shape)> {
    let mut seen = std::collections::HashSet::new();
    layout::specs(config, selection)
        .filter(|s| seen.insert(s.store_name.clone()))
        .map(|s| (s.store_name, Shape::from(s.store_shape)))
        .collect()
}

/// Whether a store tensor is a LayerNorm gamma (drawn around 1).
fn is_gamma(name: &str) -> bool {
    name.ends_with("layer_norm1.weight")
        || name.ends_with("layer_norm2.weight")
        || name == names::POST_LN_WEIGHT
        || name == names::HEAD_LN_WEIGHT
}

/// Seeded synthetic weights in the store layout: linear weights, biases, embeddings and the
/// head's probe ≈ N(0, 0.02²) (the Hugging Face init std; the distribution is a sum of 12
/// uniforms, so bounded by ±0.12), LayerNorm gammas ≈ 1 + N(0, 0.02²), betas ≈ N(0, 0.02²).
/// Each tensor is drawn from its own stream named by its store name, so a tensor's values
/// depend only on `seed` and its name — layer 0 is the same whether 1 or 27 layers are
/// generated, with or without the head. The config should have passed
/// [`SiglipVisionConfig::validate`] (every parser runs it); the sizes are its sizes.
pub fn synthetic_weights(
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
    seed: u64,
) -> WeightStore {
    let mut store = WeightStore::new();
    for (name, shape) in store_tensors(config, selection) {
        let mut rng = Rng::for_name(seed, &name);
        let mean = if is_gamma(&name) { 1.0 } else { 0.0 };
        let data = (0..shape.numel())
            .map(|_| rng.normal(mean, 0.02) as f32)
            .collect();
        let tensor = HostTensor { shape, data };
        store.insert(name, tensor);
    }
    store
}

/// Reads a checkpoint file ([`load_safetensors`] on its bytes). The whole file is read into
/// memory; [`super::checkpoint::load_checkpoint`] reads only the tensors it needs.
pub fn load_safetensors_file(
    path: impl AsRef<std::path::Path>,
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

/// The name prefix of the vision tower in a checkpoint whose tensor names satisfy
/// `has(name)`: `Some("vision_model.")`, `Some("")` or `None` (no vision tower; or, with
/// both forms present, the `vision_model.` one wins when it has the patch embedding).
pub(crate) fn detect_prefix(has: impl Fn(&str) -> bool) -> Option<&'static str> {
    const MARKERS: [&str; 2] = [
        "embeddings.patch_embedding.weight",
        "encoder.layers.0.layer_norm1.weight",
    ];
    for marker in MARKERS {
        for prefix in ["vision_model.", ""] {
            if has(&format!("{prefix}{marker}")) {
                return Some(prefix);
            }
        }
    }
    None
}

/// Loads the selected tensors of a Hugging Face SigLIP checkpoint held in memory
/// (`SiglipModel` or `SiglipVisionModel`; names with or without `vision_model.`, detected)
/// into the store layout. F32, F16 and BF16 tensors are converted to f32 exactly. Tensors
/// not selected (the text tower, the head unless `selection.head`) are ignored.
pub fn load_safetensors(
    bytes: &[u8],
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<WeightStore, WeightError> {
    config.validate()?;
    if selection.layers > config.num_hidden_layers {
        return Err(WeightError::Layers {
            requested: selection.layers,
            available: config.num_hidden_layers,
        });
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| WeightError::Corrupt {
        message: e.to_string(),
    })?;
    let prefix = detect_prefix(|n| st.tensor(n).is_ok()).ok_or(WeightError::NoVisionTower)?;
    let fetch = |spec: &Spec| -> Result<Vec<f32>, WeightError> {
        let name = format!("{prefix}{}", spec.hf_name);
        let view = st
            .tensor(&name)
            .map_err(|_| WeightError::Missing { name: name.clone() })?;
        if view.shape() != spec.hf_shape.as_slice() {
            return Err(WeightError::Shape {
                name,
                got: Shape::from(view.shape()),
                expected: Shape::from(spec.hf_shape.clone()),
            });
        }
        to_f32(view.dtype(), view.data()).map_err(|e| match e {
            Convert::DType(dtype) => WeightError::DType { name, dtype },
            Convert::NonFinite { index, value } => WeightError::NonFinite { name, index, value },
        })
    };
    layout::assemble(layout::specs(config, selection), config.hidden_size, fetch)
}

/// Why raw tensor bytes could not become f32.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Convert {
    /// Not F32, F16 or BF16 (the dtype's name).
    DType(String),
    /// A NaN or infinity at this element.
    NonFinite { index: usize, value: f32 },
}

/// Converts little-endian F32/F16/BF16 bytes to f32 (exactly), rejecting other dtypes and
/// non-finite values.
pub(crate) fn to_f32(dtype: Dtype, bytes: &[u8]) -> Result<Vec<f32>, Convert> {
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "safetensors' dtypes: three are read, every other is refused"
    )]
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
        other => return Err(Convert::DType(format!("{other:?}"))),
    };
    if let Some((index, &value)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(Convert::NonFinite { index, value });
    }
    Ok(data)
}

/// Writes the selected tensors of `store` as a Hugging Face-layout F32 safetensors file with
/// `vision_model.` names (the inverse of [`load_safetensors`]): for tests and for making small
/// checkpoints.
pub fn to_safetensors(
    store: &WeightStore,
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<Vec<u8>, WeightError> {
    to_safetensors_prefixed(store, config, selection, "vision_model.")
}

/// [`to_safetensors`] with the given name prefix: `"vision_model."` (`SiglipModel`) or `""`
/// (`SiglipVisionModel` as transformers 5 writes it).
pub fn to_safetensors_prefixed(
    store: &WeightStore,
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
    prefix: &str,
) -> Result<Vec<u8>, WeightError> {
    let tensors = checkpoint_tensors(store, config, selection)?;
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .into_iter()
        .map(|(name, shape, data)| {
            (
                format!("{prefix}{name}"),
                shape,
                data.iter().flat_map(|v| v.to_le_bytes()).collect(),
            )
        })
        .collect();
    serialize_f32(&bytes)
}

/// The checkpoint tensors (`name` without prefix, Hugging Face shape, f32 data) of a selection
/// of `store`, in checkpoint order.
pub(crate) fn checkpoint_tensors(
    store: &WeightStore,
    config: &SiglipVisionConfig,
    selection: &WeightSelection,
) -> Result<layout::HfTensors, WeightError> {
    layout::disassemble(
        store,
        layout::specs(config, selection),
        config.hidden_size,
        |name| WeightError::MissingInStore {
            name: name.to_string(),
        },
        |name, got, expected| WeightError::Shape {
            name: name.to_string(),
            got: got.clone(),
            expected: Shape::from(expected),
        },
    )
}

/// Serializes `(name, shape, little-endian f32 bytes)` as a safetensors file.
pub(crate) fn serialize_f32(
    tensors: &[(String, Vec<usize>, Vec<u8>)],
) -> Result<Vec<u8>, WeightError> {
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
    fn synthetic_head() {
        let c = tiny();
        let full = WeightSelection::full(&c);
        assert!(full.head);
        let a = synthetic_weights(&c, &full, 42);
        // + probe, q/k/v weight and bias, out weight and bias, LN, fc1/fc2 weight and bias.
        assert_eq!(a.len(), 2 * 12 + 5 + 15);
        assert_eq!(
            a.get(names::HEAD_PROBE).unwrap().shape,
            Shape::from([1, 64])
        );
        assert_eq!(
            a.get(names::HEAD_K_WEIGHT).unwrap().shape,
            Shape::from([64, 64])
        );
        assert_eq!(
            a.get(names::HEAD_FC1_WEIGHT).unwrap().shape,
            Shape::from([64, 128])
        );
        let gamma = a.get(names::HEAD_LN_WEIGHT).unwrap();
        assert!(gamma.data.iter().all(|&g| (g - 1.0).abs() <= 0.12));
        // The head does not change the other tensors.
        let without = synthetic_weights(&c, &WeightSelection::all(&c), 42);
        for (name, t) in without.iter() {
            assert_eq!(a.get(name), Some(t), "{name}");
        }
        let no_head = SiglipVisionConfig {
            vision_use_head: false,
            ..tiny()
        };
        assert!(!WeightSelection::full(&no_head).head);
    }

    #[test]
    fn safetensors_round_trip_with_head_and_without_prefix() {
        let c = tiny();
        let sel = WeightSelection::full(&c);
        let store = synthetic_weights(&c, &sel, 8);
        for prefix in ["vision_model.", ""] {
            let bytes = to_safetensors_prefixed(&store, &c, &sel, prefix).unwrap();
            let st = SafeTensors::deserialize(&bytes).unwrap();
            let probe = st.tensor(&format!("{prefix}head.probe")).unwrap();
            assert_eq!(probe.shape(), &[1, 1, 64]);
            let in_proj = st
                .tensor(&format!("{prefix}head.attention.in_proj_weight"))
                .unwrap();
            assert_eq!(in_proj.shape(), &[192, 64]);
            assert_eq!(
                load_safetensors(&bytes, &c, &sel).unwrap(),
                store,
                "{prefix:?}"
            );
            // Without the head flag, the head tensors are ignored.
            let body = load_safetensors(&bytes, &c, &WeightSelection::all(&c)).unwrap();
            assert_eq!(body.len(), 2 * 12 + 5);
        }
        // in_proj_weight rows c·D..(c+1)·D are part c, transposed.
        let bytes = to_safetensors(&store, &c, &sel).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let w = st
            .tensor("vision_model.head.attention.in_proj_weight")
            .unwrap();
        let w: Vec<f32> = w
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let v = store.get(names::HEAD_V_WEIGHT).unwrap();
        let (d, i, j) = (64, 5, 9);
        assert_eq!(w[(2 * d + j) * d + i], v.data[i * d + j]);
        assert!(load_safetensors(&bytes[..20], &c, &sel)
            .unwrap_err()
            .to_string()
            .starts_with("E-WEIGHT-003"));
        let empty = safetensors::serialize(Vec::<(String, TensorView)>::new(), None).unwrap();
        assert!(load_safetensors(&empty, &c, &sel)
            .unwrap_err()
            .to_string()
            .starts_with("E-WEIGHT-009: the safetensors data holds no SigLIP vision tower"));
    }

    /// A config claiming millions of layers fails at the first missing layer, without
    /// making specs or tensors for the others.
    #[test]
    fn absurd_layer_counts_fail_fast() {
        let c = tiny();
        let (_, bytes) = checkpoint(&c);
        let many = SiglipVisionConfig {
            num_hidden_layers: 4_000_000,
            ..tiny()
        };
        let t = std::time::Instant::now();
        assert_eq!(
            load_safetensors(&bytes, &many, &WeightSelection::encoder(4_000_000))
                .unwrap_err()
                .to_string(),
            "E-WEIGHT-001: the checkpoint has no tensor vision_model.encoder.layers.2.layer_norm1.weight"
        );
        assert!(t.elapsed().as_secs_f64() < 2.0);
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
    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "the test writes F16, BF16 or (otherwise) F32 tensors"
    )]
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
