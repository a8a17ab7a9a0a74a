//! The whole vision tower on the host, from `pixel_values` to `last_hidden_state` and
//! `pooler_output`, in the order of transformers' `SiglipVisionTransformer.forward`:
//!
//! 1. `embeddings`: the patch embedding (the stride-P convolution as
//!    `patches [N·T, C·P·P] · W [C·P·P, D]` + bias) plus the position embedding of each token;
//! 2. the encoder layers ([`super::encoder_layer`]);
//! 3. `last_hidden_state = post_layernorm(h)`;
//! 4. `pooler_output = head(last_hidden_state)`, `SiglipMultiheadAttentionPoolingHead`: the
//!    probe `[1, D]` is the single query of `nn.MultiheadAttention(D, H, batch_first=True)` over
//!    each image's T tokens (`q = probe·Wq + bq`, `k = h·Wk + bk`, `v = h·Wv + bv`; per head
//!    `softmax(q·kᵀ/√head_dim)·v`; then `out_proj`), then `residual = a; a = layernorm(a);
//!    a = residual + fc2(gelu_tanh(fc1(a)))`, one row per image → `[N, D]`.
//!
//! Same numerics as the rest of [`crate::reference`]: f32 between steps, f64 accumulation.
//! Written from the model definition, not from any compiler graph.

use tessera_codegen::graph::WeightStore;

use super::{
    add_bias, encoder_layer, gelu_tanh, layer_norm, matmul, residual, softmax_rows, weight,
    ReferenceError,
};
use crate::pixels::PixelValues;
use crate::siglip::config::SiglipVisionConfig;
use crate::siglip::weights::names;

/// Every intermediate of a forward pass, each row-major f32.
#[derive(Clone, Debug, PartialEq)]
pub struct TowerOutputs {
    /// Images N.
    pub batch: usize,
    /// Tokens per image T.
    pub tokens: usize,
    /// Width D.
    pub hidden: usize,
    /// Patch + position embeddings, `[N, T, D]`.
    pub embeddings: Vec<f32>,
    /// The output of each encoder layer run, `[N, T, D]` each.
    pub layer_outputs: Vec<Vec<f32>>,
    /// After the post-LayerNorm, `[N, T, D]`.
    pub last_hidden_state: Vec<f32>,
    /// The pooling head's output, `[N, D]`, when asked for.
    pub pooler_output: Option<Vec<f32>>,
}

/// The patch and position embeddings of `pixels` (validated against `config`): `[N·T, D]`.
pub fn embeddings_from_pixels(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    pixels: &PixelValues,
) -> Result<Vec<f32>, ReferenceError> {
    let patches = pixels.patches(config)?;
    super::embeddings(config, store, &patches, pixels.batch())
}

/// `post_layernorm` over `x [rows, D]`.
pub fn post_layernorm(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    x: &[f32],
) -> Result<Vec<f32>, ReferenceError> {
    let d = config.hidden_size;
    super::check_len("x", x, &[x.len() / d.max(1), d])?;
    Ok(layer_norm(
        x,
        weight(store, names::POST_LN_WEIGHT, &[d])?,
        weight(store, names::POST_LN_BIAS, &[d])?,
        config.layer_norm_eps,
    ))
}

/// The attention-pooling head over `hidden [batch·tokens, D]` (`last_hidden_state`):
/// `[batch, D]`.
pub fn pooling_head(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    hidden: &[f32],
    tokens: usize,
    batch: usize,
) -> Result<Vec<f32>, ReferenceError> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let (heads, hd) = (config.num_attention_heads, config.head_dim());
    let rows = batch * tokens;
    super::check_len("hidden", hidden, &[rows, d])?;
    let w = |n: &str, s: &[usize]| weight(store, n, s);
    let probe = w(names::HEAD_PROBE, &[1, d])?;
    let mut q = matmul(probe, w(names::HEAD_Q_WEIGHT, &[d, d])?, 1, d, d);
    add_bias(&mut q, w(names::HEAD_Q_BIAS, &[d])?);
    let mut k = matmul(hidden, w(names::HEAD_K_WEIGHT, &[d, d])?, rows, d, d);
    add_bias(&mut k, w(names::HEAD_K_BIAS, &[d])?);
    let mut v = matmul(hidden, w(names::HEAD_V_WEIGHT, &[d, d])?, rows, d, d);
    add_bias(&mut v, w(names::HEAD_V_BIAS, &[d])?);

    let scale = (1.0 / (hd as f64).sqrt()) as f32;
    let mut context = vec![0.0f32; batch * d];
    let mut probs = vec![0.0f32; tokens];
    for b in 0..batch {
        for h in 0..heads {
            let cols = h * hd..(h + 1) * hd;
            for (s, pr) in probs.iter_mut().enumerate() {
                let kr = &k[(b * tokens + s) * d..][cols.clone()];
                *pr = q[cols.clone()]
                    .iter()
                    .zip(kr)
                    .map(|(&a, &c)| a as f64 * c as f64)
                    .sum::<f64>() as f32;
            }
            softmax_rows(&mut probs, tokens, scale);
            for i in 0..hd {
                let acc: f64 = (0..tokens)
                    .map(|s| probs[s] as f64 * v[(b * tokens + s) * d + h * hd + i] as f64)
                    .sum();
                context[b * d + h * hd + i] = acc as f32;
            }
        }
    }
    let mut a = matmul(&context, w(names::HEAD_OUT_WEIGHT, &[d, d])?, batch, d, d);
    add_bias(&mut a, w(names::HEAD_OUT_BIAS, &[d])?);

    let n = layer_norm(
        &a,
        w(names::HEAD_LN_WEIGHT, &[d])?,
        w(names::HEAD_LN_BIAS, &[d])?,
        config.layer_norm_eps,
    );
    let mut m = matmul(&n, w(names::HEAD_FC1_WEIGHT, &[d, f])?, batch, d, f);
    add_bias(&mut m, w(names::HEAD_FC1_BIAS, &[f])?);
    m.iter_mut().for_each(|x| *x = gelu_tanh(*x));
    let mut y = matmul(&m, w(names::HEAD_FC2_WEIGHT, &[f, d])?, batch, f, d);
    add_bias(&mut y, w(names::HEAD_FC2_BIAS, &[d])?);
    residual(&a, &mut y);
    Ok(y)
}

/// The tower on `pixels`: embeddings, encoder layers `0..layers`, post-LayerNorm, and the
/// pooling head if `head` (its weights must then be in the store, see
/// [`names::HEAD_PREFIX`]).
pub fn vision_tower(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    pixels: &PixelValues,
    layers: usize,
    head: bool,
) -> Result<TowerOutputs, ReferenceError> {
    config.validate()?;
    if layers > config.num_hidden_layers {
        return Err(ReferenceError::Layers {
            requested: layers,
            available: config.num_hidden_layers,
        });
    }
    let (batch, tokens) = (pixels.batch(), config.num_patches());
    let embeddings = embeddings_from_pixels(config, store, pixels)?;
    let mut layer_outputs: Vec<Vec<f32>> = Vec::with_capacity(layers);
    for layer in 0..layers {
        let x = layer_outputs.last().unwrap_or(&embeddings);
        let y = encoder_layer(config, store, layer, x, tokens, batch)?;
        layer_outputs.push(y);
    }
    let last = layer_outputs.last().unwrap_or(&embeddings);
    let last_hidden_state = post_layernorm(config, store, last)?;
    let pooler_output = if head {
        Some(pooling_head(
            config,
            store,
            &last_hidden_state,
            tokens,
            batch,
        )?)
    } else {
        None
    };
    Ok(TowerOutputs {
        batch,
        tokens,
        hidden: config.hidden_size,
        embeddings,
        layer_outputs,
        last_hidden_state,
        pooler_output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::siglip::weights::{synthetic_weights, WeightSelection};

    fn pixels(n: usize, seed: u64) -> PixelValues {
        let c = SiglipVisionConfig::tiny();
        let img = crate::input::synthetic_image(3, 56 * n, 56, seed);
        PixelValues::new(
            &[n, c.num_channels, 56, 56],
            img.iter().map(|v| (v - 0.5) / 0.5).collect(),
        )
        .unwrap()
    }

    #[test]
    fn images_are_independent_and_the_head_pools_each() {
        let c = SiglipVisionConfig::tiny();
        let store = synthetic_weights(&c, &WeightSelection::full(&c), 5);
        let two = pixels(2, 1);
        let out = vision_tower(&c, &store, &two, 2, true).unwrap();
        assert_eq!(out.layer_outputs.len(), 2);
        assert_eq!(out.last_hidden_state.len(), 2 * 16 * 64);
        let pooled = out.pooler_output.clone().unwrap();
        assert_eq!(pooled.len(), 2 * 64);
        let half = 3 * 56 * 56;
        let second = PixelValues::new(&[1, 3, 56, 56], two.data()[half..].to_vec()).unwrap();
        let one = vision_tower(&c, &store, &second, 2, true).unwrap();
        assert_eq!(
            &out.last_hidden_state[16 * 64..],
            one.last_hidden_state.as_slice()
        );
        assert_eq!(&pooled[64..], one.pooler_output.unwrap().as_slice());
        // A pooled row is not just a copy of a token.
        assert!(pooled[..64] != pooled[64..]);
    }

    /// With one token, softmax is 1 and the head is out_proj(v(h)) followed by its MLP.
    #[test]
    fn one_token_head_is_value_then_output_projection() {
        let c = SiglipVisionConfig {
            image_size: 14,
            ..SiglipVisionConfig::tiny()
        };
        let store = synthetic_weights(&c, &WeightSelection::full(&c), 9);
        let d = c.hidden_size;
        let h: Vec<f32> = crate::input::synthetic_activations_f32(1, d, 3);
        let got = pooling_head(&c, &store, &h, 1, 1).unwrap();
        let mut v = matmul(
            &h,
            weight(&store, names::HEAD_V_WEIGHT, &[d, d]).unwrap(),
            1,
            d,
            d,
        );
        add_bias(&mut v, weight(&store, names::HEAD_V_BIAS, &[d]).unwrap());
        let mut a = matmul(
            &v,
            weight(&store, names::HEAD_OUT_WEIGHT, &[d, d]).unwrap(),
            1,
            d,
            d,
        );
        add_bias(&mut a, weight(&store, names::HEAD_OUT_BIAS, &[d]).unwrap());
        let n = layer_norm(
            &a,
            weight(&store, names::HEAD_LN_WEIGHT, &[d]).unwrap(),
            weight(&store, names::HEAD_LN_BIAS, &[d]).unwrap(),
            c.layer_norm_eps,
        );
        let f = c.intermediate_size;
        let mut m = matmul(
            &n,
            weight(&store, names::HEAD_FC1_WEIGHT, &[d, f]).unwrap(),
            1,
            d,
            f,
        );
        add_bias(&mut m, weight(&store, names::HEAD_FC1_BIAS, &[f]).unwrap());
        m.iter_mut().for_each(|x| *x = gelu_tanh(*x));
        let mut y = matmul(
            &m,
            weight(&store, names::HEAD_FC2_WEIGHT, &[f, d]).unwrap(),
            1,
            f,
            d,
        );
        add_bias(&mut y, weight(&store, names::HEAD_FC2_BIAS, &[d]).unwrap());
        residual(&a, &mut y);
        assert_eq!(got, y);
    }

    #[test]
    fn errors() {
        let c = SiglipVisionConfig::tiny();
        let store = synthetic_weights(&c, &WeightSelection::all(&c), 5);
        let px = pixels(1, 2);
        assert_eq!(
            vision_tower(&c, &store, &px, 2, true)
                .unwrap_err()
                .to_string(),
            "E-REF-001: weight vision_model.head.probe is not in the weight store"
        );
        assert_eq!(
            vision_tower(&c, &store, &px, 3, false)
                .unwrap_err()
                .to_string(),
            "E-REF-004: 3 encoder layers requested, but the config has 2"
        );
        let wrong = PixelValues::new(&[1, 3, 28, 28], vec![0.0; 3 * 28 * 28]).unwrap();
        assert_eq!(
            vision_tower(&c, &store, &wrong, 2, false).unwrap_err().to_string(),
            "E-PIXELS-005: pixel_values images are 28×28, but the model takes 56×56 (image_size); resize them first"
        );
        let bad = SiglipVisionConfig {
            num_attention_heads: 0,
            ..c.clone()
        };
        assert!(vision_tower(&bad, &store, &px, 2, false)
            .unwrap_err()
            .to_string()
            .starts_with("E-REF-005: invalid config: E-CONFIG-004"));
        assert!(vision_tower(&c, &store, &px, 0, false).is_ok());
    }
}
