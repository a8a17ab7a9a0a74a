//! Weights the compiled graph reads that no checkpoint holds, derived on the host from the
//! checkpoint's own tensors: each layer's projections with its heads padded to whole AMP
//! channel blocks and the attention scale folded into the queries ([`qkv_heads`]), the pooling
//! head's score weight, its output bias with the value bias folded in, and the layers' and
//! the head's MLPs padded to whole FP8 K-blocks.
//!
//! The head's query is the probe, a constant of the checkpoint, so for head `h` with columns
//! `c ∈ h` of the projections the score of key token `x` is
//!
//! ```text
//! q_h · (x W_k + b_k)_h / √hd  =  x · w_h  +  (q_h · b_k,h) / √hd,    w_h = W_k[:, h] q_hᵀ / √hd
//! ```
//!
//! with `q = probe W_q + b_q`. The last term is the same for every key of a head, and softmax
//! is unchanged by a constant added to all its inputs, so the scores are `x W_s` with
//! `W_s = [w_0 … w_{H-1}]` (`[hidden, heads]`), computed here once in f64: the head's query
//! projection, key projection and per-head score products become one narrow product, which
//! streams every token through each weight load. The host f32 reference
//! (`crate::reference`) keeps the head as transformers writes it and checks this.

use tessera_codegen::graph::weights::{HostTensor, WeightStore};

use super::weights::{names, WeightError};
use super::SiglipVisionConfig;

/// The head's score weight `W_s`, `[hidden, heads]`: no checkpoint tensor, derived by
/// [`add_derived_weights`].
pub const HEAD_SCORE_WEIGHT: &str = "vision_model.head.attention.score_weight";

/// The head's output projection bias with the value bias folded in, `b_v W_o + b_o` (`[hidden]`):
/// the head pools the tokens before the value projection, and the pooling weights sum to 1, so
/// the value bias reaches the output as this constant.
pub const HEAD_OUT_BIAS_FOLDED: &str = "vision_model.head.attention.out_proj.bias_folded";

fn tensor<'s>(
    store: &'s WeightStore,
    name: &str,
    numel: usize,
) -> Result<&'s HostTensor, WeightError> {
    let t = store.get(name).ok_or_else(|| WeightError::MissingInStore {
        name: name.to_string(),
    })?;
    if t.data.len() != numel {
        return Err(WeightError::Shape {
            name: name.to_string(),
            got: t.shape.clone(),
            expected: vec![numel].into(),
        });
    }
    Ok(t)
}

/// `W_s` of the module docs from the store's probe, query and key tensors (store layout: a
/// projection's weight is `[in, out]`).
pub fn head_score_weight(
    config: &SiglipVisionConfig,
    store: &WeightStore,
) -> Result<HostTensor, WeightError> {
    let (d, heads) = (config.hidden_size, config.num_attention_heads);
    let hd = d / heads.max(1);
    let probe = &tensor(store, names::HEAD_PROBE, d)?.data;
    let wq = &tensor(store, names::HEAD_Q_WEIGHT, d * d)?.data;
    let bq = &tensor(store, names::HEAD_Q_BIAS, d)?.data;
    let wk = &tensor(store, names::HEAD_K_WEIGHT, d * d)?.data;
    // q = probe W_q + b_q
    let mut q: Vec<f64> = bq.iter().map(|&b| f64::from(b)).collect();
    for (i, &p) in probe.iter().enumerate() {
        let row = &wq[i * d..(i + 1) * d];
        for (qc, &w) in q.iter_mut().zip(row) {
            *qc += f64::from(p) * f64::from(w);
        }
    }
    // W_s[i, h] = Σ_{c ∈ h} W_k[i, c] q[c] / √hd
    let scale = 1.0 / (hd as f64).sqrt();
    let mut ws = vec![0f32; d * heads];
    for i in 0..d {
        let row = &wk[i * d..(i + 1) * d];
        for h in 0..heads {
            let cols = h * hd..(h + 1) * hd;
            let dot: f64 = row[cols.clone()]
                .iter()
                .zip(&q[cols])
                .map(|(&w, &qc)| f64::from(w) * qc)
                .sum();
            ws[i * heads + h] = (dot * scale) as f32;
        }
    }
    HostTensor::new([d, heads], ws).map_err(|e| WeightError::Corrupt {
        message: format!("{HEAD_SCORE_WEIGHT}: {e}"),
    })
}

/// [`HEAD_OUT_BIAS_FOLDED`] from the store's value bias and output projection (computed in f64).
pub fn head_out_bias_folded(
    config: &SiglipVisionConfig,
    store: &WeightStore,
) -> Result<HostTensor, WeightError> {
    let d = config.hidden_size;
    let bv = &tensor(store, names::HEAD_V_BIAS, d)?.data;
    let wo = &tensor(store, names::HEAD_OUT_WEIGHT, d * d)?.data;
    let bo = &tensor(store, names::HEAD_OUT_BIAS, d)?.data;
    let mut out: Vec<f64> = bo.iter().map(|&b| f64::from(b)).collect();
    for (i, &v) in bv.iter().enumerate() {
        for (o, &w) in out.iter_mut().zip(&wo[i * d..(i + 1) * d]) {
            *o += f64::from(v) * f64::from(w);
        }
    }
    HostTensor::new([d], out.into_iter().map(|v| v as f32).collect()).map_err(|e| {
        WeightError::Corrupt {
            message: format!("{HEAD_OUT_BIAS_FOLDED}: {e}"),
        }
    })
}

/// Each encoder layer's output-projection bias with the value bias folded in, relative to the
/// layer's prefix: `b_o + b_v W_o`. The chunked attention context computes the values without
/// their bias; as every row of probabilities sums to one, `p (v + b_v) = p v + b_v`.
pub const OUT_BIAS_FOLDED: &str = "self_attn.out_proj.bias_folded";

/// [`OUT_BIAS_FOLDED`] of the layer whose tensors are prefixed `prefix`.
pub fn out_bias_folded(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    prefix: &str,
) -> Result<HostTensor, WeightError> {
    let d = config.hidden_size;
    let qkv_bias = &tensor(store, &format!("{prefix}{}", names::QKV_BIAS), 3 * d)?.data;
    let wo = &tensor(store, &format!("{prefix}{}", names::OUT_WEIGHT), d * d)?.data;
    let bo = &tensor(store, &format!("{prefix}{}", names::OUT_BIAS), d)?.data;
    let mut out: Vec<f64> = bo.iter().map(|&b| f64::from(b)).collect();
    for (i, &v) in qkv_bias[2 * d..].iter().enumerate() {
        for (o, &w) in out.iter_mut().zip(&wo[i * d..(i + 1) * d]) {
            *o += f64::from(v) * f64::from(w);
        }
    }
    HostTensor::new([d], out.into_iter().map(|v| v as f32).collect()).map_err(|e| {
        WeightError::Corrupt {
            message: format!("{prefix}{OUT_BIAS_FOLDED}: {e}"),
        }
    })
}

/// Each encoder layer's QKV weight (`[hidden, 3·heads·hp]`) and bias (`[3·heads·hp]`) with
/// every head's columns padded with zeros to [`padded_head_dim`] `hp` (So400m's 72 → 80: five
/// whole blocks of 16 AMP channels, so a head's queries, keys and values never straddle a
/// product's column block), the query columns times `1/√hd` (the attention scale, folded).
pub const QKV_WEIGHT_HEADS: &str = "self_attn.qkv_proj.weight_heads";
/// The bias of [`QKV_WEIGHT_HEADS`].
pub const QKV_BIAS_HEADS: &str = "self_attn.qkv_proj.bias_heads";
/// Each encoder layer's output-projection weight for the padded heads, `[heads·hp, hidden]`:
/// zero rows where the heads' padding columns of the context are.
pub const OUT_WEIGHT_HEADS: &str = "self_attn.out_proj.weight_heads";

/// AMP output channels per block: a head padded to a multiple of this fills whole blocks.
const AMP_CHANNELS: usize = 16;

/// The head width the encoder's attention runs at: the head dimension rounded up to a whole
/// number of AMP channel blocks (16).
pub fn padded_head_dim(config: &SiglipVisionConfig) -> usize {
    config.head_dim().next_multiple_of(AMP_CHANNELS)
}

/// [`QKV_WEIGHT_HEADS`], [`QKV_BIAS_HEADS`] and [`OUT_WEIGHT_HEADS`] of the layer prefixed
/// `prefix`, from its fused QKV weight and bias (`[hidden, 3·hidden]`, columns q | k | v, head
/// h's at `h·hd ..`) and output weight (`[hidden, hidden]`, store layout `[in, out]`).
pub fn qkv_heads(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    prefix: &str,
) -> Result<[HostTensor; 3], WeightError> {
    let (d, heads, hd) = (
        config.hidden_size,
        config.num_attention_heads,
        config.head_dim(),
    );
    let hp = padded_head_dim(config);
    let w = &tensor(store, &format!("{prefix}{}", names::QKV_WEIGHT), 3 * d * d)?.data;
    let bias = &tensor(store, &format!("{prefix}{}", names::QKV_BIAS), 3 * d)?.data;
    let wo = &tensor(store, &format!("{prefix}{}", names::OUT_WEIGHT), d * d)?.data;
    let scale = (1.0 / (hd as f64).sqrt()) as f32;
    let wide = 3 * heads * hp;
    // Column `c·d + h·hd + i` of the fused layout → `c·heads·hp + h·hp + i`, the queries scaled.
    let to = |c: usize, h: usize, i: usize| c * heads * hp + h * hp + i;
    let factor = |c: usize| if c == 0 { scale } else { 1.0 };
    let mut wh = vec![0f32; d * wide];
    let mut bh = vec![0f32; wide];
    for c in 0..3 {
        for h in 0..heads {
            for i in 0..hd {
                let from = c * d + h * hd + i;
                bh[to(c, h, i)] = bias[from] * factor(c);
                for r in 0..d {
                    wh[r * wide + to(c, h, i)] = w[r * 3 * d + from] * factor(c);
                }
            }
        }
    }
    let mut oh = vec![0f32; heads * hp * d];
    for h in 0..heads {
        for i in 0..hd {
            let (from, row) = ((h * hd + i) * d, (h * hp + i) * d);
            oh[row..row + d].copy_from_slice(&wo[from..from + d]);
        }
    }
    let corrupt = |name: &str| {
        let name = format!("{prefix}{name}");
        move |e| WeightError::Corrupt {
            message: format!("{name}: {e}"),
        }
    };
    Ok([
        HostTensor::new([d, wide], wh).map_err(corrupt(QKV_WEIGHT_HEADS))?,
        HostTensor::new([wide], bh).map_err(corrupt(QKV_BIAS_HEADS))?,
        HostTensor::new([heads * hp, d], oh).map_err(corrupt(OUT_WEIGHT_HEADS))?,
    ])
}

/// Each encoder layer's MLP with its hidden width padded with zeros to [`padded_mlp_width`]
/// (So400m's 4304 → 4352): fc1's weight `[hidden, fp]` and bias `[fp]` with zero columns, fc2's
/// weight `[fp, hidden]` with zero rows. The padded units compute `gelu(0) = 0` and add
/// nothing, and fc2's K (and each of its K chunks when split 2 or 4 ways) is whole FP8 AMP
/// K-blocks of 32, so its product reads its operand in rows where the exchange leaves them.
pub const FC1_WEIGHT_PADDED: &str = "mlp.fc1.weight_padded";
/// The bias of [`FC1_WEIGHT_PADDED`].
pub const FC1_BIAS_PADDED: &str = "mlp.fc1.bias_padded";
/// fc2's weight for [`FC1_WEIGHT_PADDED`]'s units.
pub const FC2_WEIGHT_PADDED: &str = "mlp.fc2.weight_padded";

/// The pooling head's MLP padded as each layer's ([`FC1_WEIGHT_PADDED`]): its fc2 splits K into
/// chunks of whole FP8 K-blocks ([`crate::siglip::head`]'s `split_k_product`).
pub const HEAD_FC1_WEIGHT_PADDED: &str = "vision_model.head.mlp.fc1.weight_padded";
/// The bias of [`HEAD_FC1_WEIGHT_PADDED`].
pub const HEAD_FC1_BIAS_PADDED: &str = "vision_model.head.mlp.fc1.bias_padded";
/// The head's fc2 weight for [`HEAD_FC1_WEIGHT_PADDED`]'s units.
pub const HEAD_FC2_WEIGHT_PADDED: &str = "vision_model.head.mlp.fc2.weight_padded";

/// Units of the MLP's hidden width one padded width is a multiple of: 4 K chunks of whole
/// 32-byte FP8 K-blocks.
pub const MLP_WIDTH_MULTIPLE: usize = 128;

/// The MLP hidden width the encoder's FP8 products run at: the intermediate size rounded up
/// to [`MLP_WIDTH_MULTIPLE`].
pub fn padded_mlp_width(config: &SiglipVisionConfig) -> usize {
    config
        .intermediate_size
        .next_multiple_of(MLP_WIDTH_MULTIPLE)
}

/// [`FC1_WEIGHT_PADDED`], [`FC1_BIAS_PADDED`] and [`FC2_WEIGHT_PADDED`] of the layer prefixed
/// `prefix` (store layout `[in, out]`).
pub fn mlp_padded(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    prefix: &str,
) -> Result<[HostTensor; 3], WeightError> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let fp = padded_mlp_width(config);
    let w1 = &tensor(store, &format!("{prefix}{}", names::FC1_WEIGHT), d * f)?.data;
    let b1 = &tensor(store, &format!("{prefix}{}", names::FC1_BIAS), f)?.data;
    let w2 = &tensor(store, &format!("{prefix}{}", names::FC2_WEIGHT), f * d)?.data;
    let mut w1p = vec![0f32; d * fp];
    for r in 0..d {
        w1p[r * fp..r * fp + f].copy_from_slice(&w1[r * f..(r + 1) * f]);
    }
    let mut b1p = vec![0f32; fp];
    b1p[..f].copy_from_slice(b1);
    let mut w2p = vec![0f32; fp * d];
    w2p[..f * d].copy_from_slice(w2);
    let corrupt = |name: &str| {
        let name = format!("{prefix}{name}");
        move |e| WeightError::Corrupt {
            message: format!("{name}: {e}"),
        }
    };
    Ok([
        HostTensor::new([d, fp], w1p).map_err(corrupt(FC1_WEIGHT_PADDED))?,
        HostTensor::new([fp], b1p).map_err(corrupt(FC1_BIAS_PADDED))?,
        HostTensor::new([fp, d], w2p).map_err(corrupt(FC2_WEIGHT_PADDED))?,
    ])
}

/// The patch embedding's weight `[padded_patch_dim, hidden]` with zero rows past the patch's
/// `c · p · p` values (So400m/14's 588 → 608): the patches padded with zero columns to match
/// (`patches.pad` in the graph) make the FP8 product's K whole AMP K-blocks of 32, so it reads
/// the patches in rows where the exchange leaves them instead of relaying them out in panels.
pub const PATCH_WEIGHT_PADDED: &str = "vision_model.embeddings.patch_embedding.weight_padded";

/// Patch values one padded patch row is a multiple of: a 32-byte FP8 K-block.
pub const PATCH_DIM_MULTIPLE: usize = 32;

/// The patch row width the FP8 patch embedding runs at: the patch's values rounded up to
/// [`PATCH_DIM_MULTIPLE`].
pub fn padded_patch_dim(config: &SiglipVisionConfig) -> usize {
    config.patch_dim().next_multiple_of(PATCH_DIM_MULTIPLE)
}

/// [`PATCH_WEIGHT_PADDED`] from the store's patch weight (`[patch_dim, hidden]`).
pub fn patch_weight_padded(
    config: &SiglipVisionConfig,
    store: &WeightStore,
) -> Result<HostTensor, WeightError> {
    let (k, d) = (config.patch_dim(), config.hidden_size);
    let w = &tensor(store, names::PATCH_WEIGHT, k * d)?.data;
    let kp = padded_patch_dim(config);
    let mut padded = vec![0f32; kp * d];
    padded[..k * d].copy_from_slice(w);
    HostTensor::new([kp, d], padded).map_err(|e| WeightError::Corrupt {
        message: format!("{PATCH_WEIGHT_PADDED}: {e}"),
    })
}

/// Adds to `store` every derived weight its tensors allow: the head's score weight when the
/// store holds the head. Idempotent.
pub fn add_derived_weights(
    config: &SiglipVisionConfig,
    store: &mut WeightStore,
) -> Result<(), WeightError> {
    if padded_patch_dim(config) != config.patch_dim() && store.contains(names::PATCH_WEIGHT) {
        let w = patch_weight_padded(config, store)?;
        store.insert(PATCH_WEIGHT_PADDED, w);
    }
    for i in 0..config.num_hidden_layers {
        let prefix = super::graph::layer_prefix(i);
        if !store.contains(&format!("{prefix}{}", names::QKV_BIAS)) {
            break;
        }
        let bias = out_bias_folded(config, store, &prefix)?;
        store.insert(format!("{prefix}{OUT_BIAS_FOLDED}"), bias);
        let [w, b, o] = qkv_heads(config, store, &prefix)?;
        store.insert(format!("{prefix}{QKV_WEIGHT_HEADS}"), w);
        store.insert(format!("{prefix}{QKV_BIAS_HEADS}"), b);
        store.insert(format!("{prefix}{OUT_WEIGHT_HEADS}"), o);
        if padded_mlp_width(config) != config.intermediate_size
            && store.contains(&format!("{prefix}{}", names::FC1_WEIGHT))
        {
            let [w1, b1, w2] = mlp_padded(config, store, &prefix)?;
            store.insert(format!("{prefix}{FC1_WEIGHT_PADDED}"), w1);
            store.insert(format!("{prefix}{FC1_BIAS_PADDED}"), b1);
            store.insert(format!("{prefix}{FC2_WEIGHT_PADDED}"), w2);
        }
    }
    if store.contains(names::HEAD_PROBE) {
        let ws = head_score_weight(config, store)?;
        store.insert(HEAD_SCORE_WEIGHT, ws);
        let bias = head_out_bias_folded(config, store)?;
        store.insert(HEAD_OUT_BIAS_FOLDED, bias);
        if padded_mlp_width(config) != config.intermediate_size
            && store.contains(names::HEAD_FC1_WEIGHT)
        {
            let [w1, b1, w2] = mlp_padded(config, store, names::HEAD_PREFIX)?;
            store.insert(HEAD_FC1_WEIGHT_PADDED, w1);
            store.insert(HEAD_FC1_BIAS_PADDED, b1);
            store.insert(HEAD_FC2_WEIGHT_PADDED, w2);
        }
    }
    Ok(())
}

/// Removes from `store` every weight [`add_derived_weights`] adds, and returns the bytes their
/// values held. A compiled program holds its own copies of the weights it reads, so a run drops
/// these before simulating: the host reference reads only the checkpoint's tensors.
pub fn remove_derived_weights(config: &SiglipVisionConfig, store: &mut WeightStore) -> usize {
    let mut names: Vec<String> = vec![PATCH_WEIGHT_PADDED.to_string()];
    for i in 0..config.num_hidden_layers {
        let prefix = super::graph::layer_prefix(i);
        names.extend(
            [
                OUT_BIAS_FOLDED,
                QKV_WEIGHT_HEADS,
                QKV_BIAS_HEADS,
                OUT_WEIGHT_HEADS,
                FC1_WEIGHT_PADDED,
                FC1_BIAS_PADDED,
                FC2_WEIGHT_PADDED,
            ]
            .map(|name| format!("{prefix}{name}")),
        );
    }
    names.extend(
        [
            HEAD_SCORE_WEIGHT,
            HEAD_OUT_BIAS_FOLDED,
            HEAD_FC1_WEIGHT_PADDED,
            HEAD_FC1_BIAS_PADDED,
            HEAD_FC2_WEIGHT_PADDED,
        ]
        .map(String::from),
    );
    names
        .iter()
        .filter_map(|name| store.remove(name))
        .map(|tensor| tensor.data.len() * std::mem::size_of::<f32>())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::siglip::weights::{synthetic_weights, WeightSelection};

    /// Softmax of `x`.
    fn softmax(x: &[f64]) -> Vec<f64> {
        let max = x.iter().cloned().fold(f64::MIN, f64::max);
        let e: Vec<f64> = x.iter().map(|v| (v - max).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|v| v / sum).collect()
    }

    /// The probabilities of every head over random tokens are those of the head as
    /// transformers defines it (query and key projections with their biases, scaled scores),
    /// written out here in f64 from the definition.
    #[test]
    fn the_score_weight_gives_the_heads_attention_probabilities() {
        let config = SiglipVisionConfig::tiny();
        let (d, heads) = (config.hidden_size, config.num_attention_heads);
        let hd = d / heads;
        let store = synthetic_weights(&config, &WeightSelection::full(&config), 5);
        let ws = head_score_weight(&config, &store).unwrap();
        assert_eq!(ws.shape, [d, heads].into());
        let get = |n: &str| store.get(n).unwrap().data.clone();
        let (probe, wq, bq) = (
            get(names::HEAD_PROBE),
            get(names::HEAD_Q_WEIGHT),
            get(names::HEAD_Q_BIAS),
        );
        let (wk, bk) = (get(names::HEAD_K_WEIGHT), get(names::HEAD_K_BIAS));
        let mut rng = tessera_isa::rng::Rng::new(3);
        let tokens = 9;
        let x: Vec<f64> = (0..tokens * d).map(|_| rng.normal(0.0, 1.0)).collect();
        let q: Vec<f64> = (0..d)
            .map(|c| {
                f64::from(bq[c])
                    + (0..d)
                        .map(|i| f64::from(probe[i]) * f64::from(wq[i * d + c]))
                        .sum::<f64>()
            })
            .collect();
        for h in 0..heads {
            let direct: Vec<f64> = (0..tokens)
                .map(|t| {
                    (h * hd..(h + 1) * hd)
                        .map(|c| {
                            let k = f64::from(bk[c])
                                + (0..d)
                                    .map(|i| x[t * d + i] * f64::from(wk[i * d + c]))
                                    .sum::<f64>();
                            q[c] * k
                        })
                        .sum::<f64>()
                        / (hd as f64).sqrt()
                })
                .collect();
            let folded: Vec<f64> = (0..tokens)
                .map(|t| {
                    (0..d)
                        .map(|i| x[t * d + i] * f64::from(ws.data[i * heads + h]))
                        .sum()
                })
                .collect();
            for (a, b) in softmax(&direct).iter().zip(softmax(&folded)) {
                assert!((a - b).abs() < 1e-6, "head {h}: {a} vs {b}");
            }
        }
    }

    /// The folded bias is `b_v W_o + b_o`, element by element from the definition (store
    /// weights are `[in, out]`).
    #[test]
    fn the_folded_out_bias_is_the_value_bias_through_the_output_projection() {
        let config = SiglipVisionConfig::tiny();
        let d = config.hidden_size;
        let store = synthetic_weights(&config, &WeightSelection::full(&config), 7);
        let folded = head_out_bias_folded(&config, &store).unwrap();
        let get = |n: &str| store.get(n).unwrap().data.clone();
        let (bv, wo, bo) = (
            get(names::HEAD_V_BIAS),
            get(names::HEAD_OUT_WEIGHT),
            get(names::HEAD_OUT_BIAS),
        );
        for j in 0..d {
            let want: f64 = f64::from(bo[j])
                + (0..d)
                    .map(|i| f64::from(bv[i]) * f64::from(wo[i * d + j]))
                    .sum::<f64>();
            assert!((f64::from(folded.data[j]) - want).abs() < 1e-6, "{j}");
        }
    }

    /// The padded heads' projections compute the checkpoint's: every head's queries (times
    /// `1/√hd`), keys and values in its first `hd` columns, zeros in the padding, and the output
    /// projection of a padded context is the checkpoint's of the plain one.
    #[test]
    fn padded_heads_project_as_the_checkpoint_with_the_scale_in_the_queries() {
        let config = SiglipVisionConfig {
            hidden_size: 24,
            num_attention_heads: 2,
            ..SiglipVisionConfig::tiny()
        };
        let (d, heads, hd) = (24usize, 2usize, 12usize);
        let hp = padded_head_dim(&config);
        assert_eq!(hp, 16);
        let store = synthetic_weights(&config, &WeightSelection::encoder(1), 9);
        let prefix = crate::siglip::graph::layer_prefix(0);
        let [w, b, o] = qkv_heads(&config, &store, &prefix).unwrap();
        let get = |n: &str| store.get(&format!("{prefix}{n}")).unwrap().data.clone();
        let (w0, b0, o0) = (
            get(names::QKV_WEIGHT),
            get(names::QKV_BIAS),
            get(names::OUT_WEIGHT),
        );
        let mut rng = tessera_isa::rng::Rng::new(4);
        let x: Vec<f64> = (0..d).map(|_| rng.normal(0.0, 1.0)).collect();
        let project = |wt: &[f32], bias: &[f32], cols: usize, c: usize| -> f64 {
            f64::from(bias[c])
                + (0..d)
                    .map(|i| x[i] * f64::from(wt[i * cols + c]))
                    .sum::<f64>()
        };
        let scale = 1.0 / (hd as f64).sqrt();
        for part in 0..3 {
            for h in 0..heads {
                for i in 0..hp {
                    let got = project(
                        &w.data,
                        &b.data,
                        3 * heads * hp,
                        part * heads * hp + h * hp + i,
                    );
                    let want = if i < hd {
                        project(&w0, &b0, 3 * d, part * d + h * hd + i)
                            * if part == 0 { scale } else { 1.0 }
                    } else {
                        0.0
                    };
                    assert!(
                        (got - want).abs() < 1e-5,
                        "part {part} head {h} column {i}: {got} vs {want}"
                    );
                }
            }
        }
        let ctx: Vec<f64> = (0..d).map(|_| rng.normal(0.0, 1.0)).collect();
        for j in 0..d {
            let plain: f64 = (0..d).map(|r| ctx[r] * f64::from(o0[r * d + j])).sum();
            let padded: f64 = (0..heads * hp)
                .map(|r| {
                    let (h, i) = (r / hp, r % hp);
                    // Padding columns of the context hold anything: their rows are zero.
                    let c = if i < hd { ctx[h * hd + i] } else { 7.0 };
                    c * f64::from(o.data[r * d + j])
                })
                .sum();
            assert!((plain - padded).abs() < 1e-9, "{j}");
        }
    }

    #[test]
    fn a_store_without_the_head_gets_only_the_layers_folded_bias_and_a_broken_head_is_an_error() {
        let config = SiglipVisionConfig::tiny();
        let mut store = synthetic_weights(&config, &WeightSelection::encoder(1), 5);
        let before = store.len();
        add_derived_weights(&config, &mut store).unwrap();
        // Only the layer's folded output bias and its padded heads' projections.
        assert_eq!(store.len(), before + 4);
        let folded = format!("{}{OUT_BIAS_FOLDED}", crate::siglip::graph::layer_prefix(0));
        assert!(store.contains(&folded));
        let mut store = synthetic_weights(&config, &WeightSelection::full(&config), 5);
        store.remove(names::HEAD_K_WEIGHT);
        let e = add_derived_weights(&config, &mut store).unwrap_err();
        assert!(e.to_string().contains(names::HEAD_K_WEIGHT), "{e}");
    }

    /// Removing the derived weights leaves exactly the checkpoint's tensors, with their values,
    /// and says how many bytes went.
    #[test]
    fn removing_the_derived_weights_leaves_the_checkpoint() {
        let mut config = SiglipVisionConfig::tiny();
        config.intermediate_size = 100;
        let original = synthetic_weights(&config, &WeightSelection::full(&config), 3);
        let mut store = original.clone();
        add_derived_weights(&config, &mut store).unwrap();
        let added: usize = store
            .iter()
            .filter(|(name, _)| !original.contains(name))
            .map(|(_, t)| t.data.len() * 4)
            .sum();
        assert!(added > 0 && store.len() > original.len());
        assert_eq!(remove_derived_weights(&config, &mut store), added);
        assert_eq!(store.len(), original.len());
        for (name, tensor) in original.iter() {
            assert_eq!(
                store.get(name).map(|t| &t.data),
                Some(&tensor.data),
                "{name}"
            );
        }
    }

    /// The padded MLP computes what the checkpoint's does, in f64 from the definition
    /// (`fc2(gelu(x fc1 + b1)) `): the padded units' pre-activations are 0, gelu(0) = 0, and
    /// their rows of fc2 are zero.
    #[test]
    fn the_padded_mlp_is_the_checkpoint_mlp() {
        let mut config = SiglipVisionConfig::tiny();
        config.intermediate_size = 100;
        let (d, f) = (config.hidden_size, config.intermediate_size);
        let fp = padded_mlp_width(&config);
        assert_eq!(fp, 128);
        let store = synthetic_weights(&config, &WeightSelection::full(&config), 9);
        let prefix = crate::siglip::graph::layer_prefix(0);
        let [w1p, b1p, w2p] = mlp_padded(&config, &store, &prefix).unwrap();
        assert_eq!(
            (w1p.shape.clone(), w2p.shape.clone()),
            ([d, fp].into(), [fp, d].into())
        );
        let get = |n: &str| store.get(&format!("{prefix}{n}")).unwrap().data.clone();
        let (w1, b1, w2) = (
            get(names::FC1_WEIGHT),
            get(names::FC1_BIAS),
            get(names::FC2_WEIGHT),
        );
        let gelu = |v: f64| 0.5 * v * (1.0 + (0.7978845608 * (v + 0.044715 * v * v * v)).tanh());
        let mlp = |x: &[f64], w1: &[f32], b1: &[f32], w2: &[f32], f: usize| -> Vec<f64> {
            let h: Vec<f64> = (0..f)
                .map(|j| {
                    gelu(b1[j] as f64 + (0..d).map(|i| x[i] * w1[i * f + j] as f64).sum::<f64>())
                })
                .collect();
            (0..d)
                .map(|o| (0..f).map(|j| h[j] * w2[j * d + o] as f64).sum())
                .collect()
        };
        let x: Vec<f64> = (0..d).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
        let want = mlp(&x, &w1, &b1, &w2, f);
        let got = mlp(&x, &w1p.data, &b1p.data, &w2p.data, fp);
        for (a, b) in want.iter().zip(&got) {
            assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{a} vs {b}");
        }
    }

    /// The padded patch embedding computes what the checkpoint's does (f64 from the
    /// definition, `x W`): the patches' zero columns meet the weight's zero rows, and the
    /// weight's first rows are the checkpoint's.
    #[test]
    fn the_padded_patch_embedding_is_the_checkpoints() {
        let config = SiglipVisionConfig::tiny();
        let (k, d) = (config.patch_dim(), config.hidden_size);
        let kp = padded_patch_dim(&config);
        assert!(kp >= k && kp.is_multiple_of(PATCH_DIM_MULTIPLE) && kp - k < PATCH_DIM_MULTIPLE);
        let mut store = synthetic_weights(&config, &WeightSelection::full(&config), 5);
        let w = store.get(names::PATCH_WEIGHT).unwrap().data.clone();
        add_derived_weights(&config, &mut store).unwrap();
        let wp = if kp == k {
            assert!(store.get(PATCH_WEIGHT_PADDED).is_none(), "nothing to pad");
            return;
        } else {
            store.get(PATCH_WEIGHT_PADDED).unwrap()
        };
        assert_eq!(wp.shape, [kp, d].into());
        let x: Vec<f64> = (0..k).map(|i| ((i * 29 % 13) as f64 - 6.0) / 5.0).collect();
        let mut xp = x.clone();
        xp.resize(kp, 0.0);
        for o in 0..d {
            let want: f64 = (0..k).map(|i| x[i] * w[i * d + o] as f64).sum();
            let got: f64 = (0..kp).map(|i| xp[i] * wp.data[i * d + o] as f64).sum();
            assert_eq!(want, got, "output {o}");
        }
    }
}
