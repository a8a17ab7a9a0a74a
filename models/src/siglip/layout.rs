//! Where each Hugging Face checkpoint tensor goes in the weight store, and the element
//! arithmetic of that move in both directions.
//!
//! A [`Spec`] pairs one checkpoint tensor (its name relative to the vision tower, i.e. without
//! the `vision_model.` prefix, and its Hugging Face shape) with one store tensor (its store
//! name, see [`super::weights::names`], and shape) and a [`Map`]. Three checkpoint tensors
//! (`q_proj`, `k_proj`, `v_proj`) fill one store tensor (the fused QKV), and one checkpoint
//! tensor (the head's `in_proj_weight`) fills three store tensors (its Q, K and V parts), so a
//! name can appear in several specs.
//!
//! Specs are produced lazily, layer by layer, so a config with an absurd layer count costs
//! nothing until a layer's tensors are asked for. Sizes use saturating arithmetic: on a config
//! that passed [`SiglipVisionConfig::validate`] they are exact.

use std::collections::BTreeMap;

use tessera_codegen::graph::{HostTensor, Shape, WeightStore};

use super::config::SiglipVisionConfig;
use super::weights::{names, WeightSelection};

/// How a checkpoint tensor maps onto a store tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Map {
    /// Same elements, same order (also `[1, 1, D]` → `[1, D]`).
    Copy,
    /// The checkpoint tensor viewed as `[rows, rest]` is the transpose of the store tensor
    /// (linear weights; the patch convolution).
    Transpose,
    /// Part `c` (0 = Q, 1 = K, 2 = V) of the fused QKV weight: `store[i, c·D + j] = hf[j, i]`.
    QkvWeight(usize),
    /// Part `c` of the fused QKV bias: `store[c·D + j] = hf[j]`.
    QkvBias(usize),
    /// Part `c` of `nn.MultiheadAttention.in_proj_weight` `[3D, D]`:
    /// `store[i, j] = hf[c·D + j, i]`.
    InProjWeight(usize),
    /// Part `c` of `in_proj_bias` `[3D]`: `store[j] = hf[c·D + j]`.
    InProjBias(usize),
}

/// One checkpoint tensor and where it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Spec {
    /// Name inside the vision tower (`encoder.layers.0.mlp.fc1.weight`), no prefix.
    pub hf_name: String,
    pub hf_shape: Vec<usize>,
    pub store_name: String,
    pub store_shape: Vec<usize>,
    pub map: Map,
}

/// The store-name prefix every store tensor has.
const STORE_PREFIX: &str = "vision_model.";

fn spec(hf_name: String, hf_shape: Vec<usize>, store_shape: Vec<usize>, map: Map) -> Spec {
    Spec {
        store_name: format!("{STORE_PREFIX}{hf_name}"),
        hf_name,
        hf_shape,
        store_shape,
        map,
    }
}

/// The tensors of encoder layer `i`.
pub(crate) fn layer_specs(config: &SiglipVisionConfig, i: usize) -> Vec<Spec> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let d3 = d.saturating_mul(3);
    let p = format!("encoder.layers.{i}.");
    let mut out = Vec::with_capacity(16);
    for n in [names::LN1_WEIGHT, names::LN1_BIAS] {
        out.push(spec(format!("{p}{n}"), vec![d], vec![d], Map::Copy));
    }
    for (c, part) in ["q_proj", "k_proj", "v_proj"].iter().enumerate() {
        let mut w = spec(
            format!("{p}self_attn.{part}.weight"),
            vec![d, d],
            vec![d, d3],
            Map::QkvWeight(c),
        );
        w.store_name = format!("{STORE_PREFIX}{p}{}", names::QKV_WEIGHT);
        let mut b = spec(
            format!("{p}self_attn.{part}.bias"),
            vec![d],
            vec![d3],
            Map::QkvBias(c),
        );
        b.store_name = format!("{STORE_PREFIX}{p}{}", names::QKV_BIAS);
        out.push(w);
        out.push(b);
    }
    out.push(spec(
        format!("{p}{}", names::OUT_WEIGHT),
        vec![d, d],
        vec![d, d],
        Map::Transpose,
    ));
    out.push(spec(
        format!("{p}{}", names::OUT_BIAS),
        vec![d],
        vec![d],
        Map::Copy,
    ));
    for n in [names::LN2_WEIGHT, names::LN2_BIAS] {
        out.push(spec(format!("{p}{n}"), vec![d], vec![d], Map::Copy));
    }
    out.push(spec(
        format!("{p}{}", names::FC1_WEIGHT),
        vec![f, d],
        vec![d, f],
        Map::Transpose,
    ));
    out.push(spec(
        format!("{p}{}", names::FC1_BIAS),
        vec![f],
        vec![f],
        Map::Copy,
    ));
    out.push(spec(
        format!("{p}{}", names::FC2_WEIGHT),
        vec![d, f],
        vec![f, d],
        Map::Transpose,
    ));
    out.push(spec(
        format!("{p}{}", names::FC2_BIAS),
        vec![d],
        vec![d],
        Map::Copy,
    ));
    out
}

/// The patch and position embeddings.
pub(crate) fn embedding_specs(config: &SiglipVisionConfig) -> Vec<Spec> {
    let (d, c, p) = (config.hidden_size, config.num_channels, config.patch_size);
    let t = config.num_patches();
    vec![
        spec(
            "embeddings.patch_embedding.weight".into(),
            vec![d, c, p, p],
            vec![config.patch_dim(), d],
            Map::Transpose,
        ),
        spec(
            "embeddings.patch_embedding.bias".into(),
            vec![d],
            vec![d],
            Map::Copy,
        ),
        spec(
            "embeddings.position_embedding.weight".into(),
            vec![t, d],
            vec![t, d],
            Map::Copy,
        ),
    ]
}

/// The LayerNorm after the encoder.
pub(crate) fn post_layernorm_specs(config: &SiglipVisionConfig) -> Vec<Spec> {
    let d = config.hidden_size;
    ["post_layernorm.weight", "post_layernorm.bias"]
        .into_iter()
        .map(|n| spec(n.into(), vec![d], vec![d], Map::Copy))
        .collect()
}

/// The attention-pooling head (`SiglipMultiheadAttentionPoolingHead`).
pub(crate) fn head_specs(config: &SiglipVisionConfig) -> Vec<Spec> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let d3 = d.saturating_mul(3);
    let mut out = vec![spec(
        "head.probe".into(),
        vec![1, 1, d],
        vec![1, d],
        Map::Copy,
    )];
    // The parts of one checkpoint tensor are consecutive, so it is read once.
    for (c, part) in ["q_proj", "k_proj", "v_proj"].iter().enumerate() {
        let mut w = spec(
            "head.attention.in_proj_weight".into(),
            vec![d3, d],
            vec![d, d],
            Map::InProjWeight(c),
        );
        w.store_name = format!("{STORE_PREFIX}head.attention.{part}.weight");
        out.push(w);
    }
    for (c, part) in ["q_proj", "k_proj", "v_proj"].iter().enumerate() {
        let mut b = spec(
            "head.attention.in_proj_bias".into(),
            vec![d3],
            vec![d],
            Map::InProjBias(c),
        );
        b.store_name = format!("{STORE_PREFIX}head.attention.{part}.bias");
        out.push(b);
    }
    out.push(spec(
        "head.attention.out_proj.weight".into(),
        vec![d, d],
        vec![d, d],
        Map::Transpose,
    ));
    out.push(spec(
        "head.attention.out_proj.bias".into(),
        vec![d],
        vec![d],
        Map::Copy,
    ));
    for n in ["head.layernorm.weight", "head.layernorm.bias"] {
        out.push(spec(n.into(), vec![d], vec![d], Map::Copy));
    }
    out.push(spec(
        "head.mlp.fc1.weight".into(),
        vec![f, d],
        vec![d, f],
        Map::Transpose,
    ));
    out.push(spec(
        "head.mlp.fc1.bias".into(),
        vec![f],
        vec![f],
        Map::Copy,
    ));
    out.push(spec(
        "head.mlp.fc2.weight".into(),
        vec![d, f],
        vec![f, d],
        Map::Transpose,
    ));
    out.push(spec(
        "head.mlp.fc2.bias".into(),
        vec![d],
        vec![d],
        Map::Copy,
    ));
    out
}

/// Every spec of a selection, in checkpoint order: layers, embeddings, post-LayerNorm, head.
/// Lazy: layer `i`'s specs are made when the iterator reaches them.
pub(crate) fn specs<'a>(
    config: &'a SiglipVisionConfig,
    selection: &WeightSelection,
) -> impl Iterator<Item = Spec> + 'a {
    let sel = *selection;
    (0..sel.layers)
        .flat_map(move |i| layer_specs(config, i))
        .chain(
            sel.embeddings
                .then(|| embedding_specs(config))
                .into_iter()
                .flatten(),
        )
        .chain(
            sel.post_layernorm
                .then(|| post_layernorm_specs(config))
                .into_iter()
                .flatten(),
        )
        .chain(sel.head.then(|| head_specs(config)).into_iter().flatten())
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |a, &b| a.saturating_mul(b))
}

/// Writes checkpoint tensor `hf` (f32, in the Hugging Face layout of `spec.hf_shape`) into
/// its store tensor `store` (of `spec.store_shape`). `d` is the hidden size.
pub(crate) fn hf_to_store(spec: &Spec, d: usize, hf: &[f32], store: &mut [f32]) {
    match spec.map {
        Map::Copy => store.copy_from_slice(hf),
        Map::Transpose => {
            let rows = spec.hf_shape[0];
            let cols = hf.len() / rows.max(1);
            for r in 0..rows {
                for c in 0..cols {
                    store[c * rows + r] = hf[r * cols + c];
                }
            }
        }
        Map::QkvWeight(part) => {
            for j in 0..d {
                for i in 0..d {
                    store[i * 3 * d + part * d + j] = hf[j * d + i];
                }
            }
        }
        Map::QkvBias(part) => store[part * d..(part + 1) * d].copy_from_slice(hf),
        Map::InProjWeight(part) => {
            for j in 0..d {
                for i in 0..d {
                    store[i * d + j] = hf[(part * d + j) * d + i];
                }
            }
        }
        Map::InProjBias(part) => store.copy_from_slice(&hf[part * d..(part + 1) * d]),
    }
}

/// The inverse of [`hf_to_store`]: writes the part of checkpoint tensor `hf` that store
/// tensor `store` holds.
pub(crate) fn store_to_hf(spec: &Spec, d: usize, store: &[f32], hf: &mut [f32]) {
    match spec.map {
        Map::Copy => hf.copy_from_slice(store),
        Map::Transpose => {
            let rows = spec.hf_shape[0];
            let cols = hf.len() / rows.max(1);
            for r in 0..rows {
                for c in 0..cols {
                    hf[r * cols + c] = store[c * rows + r];
                }
            }
        }
        Map::QkvWeight(part) => {
            for j in 0..d {
                for i in 0..d {
                    hf[j * d + i] = store[i * 3 * d + part * d + j];
                }
            }
        }
        Map::QkvBias(part) => hf.copy_from_slice(&store[part * d..(part + 1) * d]),
        Map::InProjWeight(part) => {
            for j in 0..d {
                for i in 0..d {
                    hf[(part * d + j) * d + i] = store[i * d + j];
                }
            }
        }
        Map::InProjBias(part) => hf[part * d..(part + 1) * d].copy_from_slice(store),
    }
}

/// Checkpoint tensors as `(name, Hugging Face shape, f32 data)`.
pub(crate) type HfTensors = Vec<(String, Vec<usize>, Vec<f32>)>;

/// Builds a store from specs, asking `fetch` for each checkpoint tensor as f32 in its
/// Hugging Face layout (`fetch` checks shape and dtype; it is asked once per distinct
/// consecutive name). Store tensors are allocated only after their first checkpoint tensor
/// was fetched, so their sizes are backed by data that exists.
pub(crate) fn assemble<E>(
    specs: impl Iterator<Item = Spec>,
    d: usize,
    mut fetch: impl FnMut(&Spec) -> Result<Vec<f32>, E>,
) -> Result<WeightStore, E> {
    let mut tensors: BTreeMap<String, HostTensor> = BTreeMap::new();
    let mut last: Option<(String, Vec<f32>)> = None;
    for spec in specs {
        if last
            .as_ref()
            .map(|(n, _)| n != &spec.hf_name)
            .unwrap_or(true)
        {
            last = Some((spec.hf_name.clone(), fetch(&spec)?));
        }
        let hf = &last.as_ref().expect("set above").1;
        let store = tensors
            .entry(spec.store_name.clone())
            .or_insert_with(|| HostTensor {
                shape: Shape::from(spec.store_shape.clone()),
                data: vec![0.0; numel(&spec.store_shape)],
            });
        hf_to_store(&spec, d, hf, &mut store.data);
    }
    let mut out = WeightStore::new();
    for (name, t) in tensors {
        out.insert(name, t);
    }
    Ok(out)
}

/// The checkpoint tensors of a selection made from the store: `(hf_name, hf_shape, data)`
/// in checkpoint order, each once. `missing(store_name)` / `shape(store_name, got,
/// expected)` make the caller's errors.
pub(crate) fn disassemble<E>(
    store: &WeightStore,
    specs: impl Iterator<Item = Spec>,
    d: usize,
    missing: impl Fn(&str) -> E,
    shape: impl Fn(&str, &Shape, &[usize]) -> E,
) -> Result<HfTensors, E> {
    let mut out: HfTensors = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for spec in specs {
        let t = store
            .get(&spec.store_name)
            .ok_or_else(|| missing(&spec.store_name))?;
        if t.shape.dims() != spec.store_shape.as_slice() {
            return Err(shape(&spec.store_name, &t.shape, &spec.store_shape));
        }
        let slot = *index.entry(spec.hf_name.clone()).or_insert_with(|| {
            out.push((
                spec.hf_name.clone(),
                spec.hf_shape.clone(),
                vec![0.0; numel(&spec.hf_shape)],
            ));
            out.len() - 1
        });
        store_to_hf(&spec, d, &t.data, &mut out[slot].2);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_counts() {
        let c = SiglipVisionConfig::tiny();
        let l = layer_specs(&c, 3);
        assert_eq!(l.len(), 16);
        assert_eq!(l[2].hf_name, "encoder.layers.3.self_attn.q_proj.weight");
        assert_eq!(
            l[2].store_name,
            "vision_model.encoder.layers.3.self_attn.qkv_proj.weight"
        );
        let h = head_specs(&c);
        assert_eq!(h.len(), 15);
        assert_eq!(h[2].hf_name, "head.attention.in_proj_weight");
        assert_eq!(h[2].store_name, "vision_model.head.attention.k_proj.weight");
        assert_eq!(h[2].hf_shape, vec![192, 64]);
        assert_eq!(h[6].store_name, "vision_model.head.attention.v_proj.bias");
        let sel = WeightSelection {
            layers: 2,
            embeddings: true,
            post_layernorm: true,
            head: true,
        };
        assert_eq!(specs(&c, &sel).count(), 2 * 16 + 3 + 2 + 15);
        // Lazy: a huge layer count costs nothing until iterated.
        let huge = WeightSelection::encoder(usize::MAX);
        assert_eq!(specs(&c, &huge).take(5).count(), 5);
    }

    #[test]
    fn in_proj_parts_round_trip() {
        let c = SiglipVisionConfig {
            hidden_size: 4,
            num_attention_heads: 2,
            ..SiglipVisionConfig::tiny()
        };
        let d = 4;
        let hf: Vec<f32> = (0..3 * d * d).map(|i| i as f32).collect();
        let mut back = vec![0.0; 3 * d * d];
        for s in head_specs(&c)
            .iter()
            .filter(|s| s.hf_name.ends_with("in_proj_weight"))
        {
            let mut store = vec![0.0; d * d];
            hf_to_store(s, d, &hf, &mut store);
            let Map::InProjWeight(part) = s.map else {
                panic!()
            };
            // store [in i, out j] = hf [part·D + j, i]
            assert_eq!(store[d + 2], hf[(part * d + 2) * d + 1]);
            store_to_hf(s, d, &store, &mut back);
        }
        assert_eq!(back, hf);
    }
}
