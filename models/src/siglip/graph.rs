//! SigLIP vision-encoder graphs, built with the codegen graph API only.
//!
//! Every graph takes one input `x`: f16 `[batch·tokens, hidden]`, the tokens of `batch` images
//! one after the other, and has one output `y` of the same type. Weight names are the store
//! names of [`super::weights`] (Hugging Face names, fused QKV, `[in, out]` linear weights).
//!
//! # Precision (see [`Precision`])
//!
//! The residual stream, LayerNorms, biases, softmax and GELU are f16 (LayerNorm parameters and
//! biases f32). Each dense GEMM — the fused QKV projection, the output projection, fc1 and fc2
//! by default — runs in FP8: a `Cast` of its input to [`Precision::activations`] (F143 with
//! scale −4: reals up to ±15, finest step 2⁻¹⁴) directly before the matmul, and an FP8 weight
//! (F143) with a per-tensor scale. The graph builder does not see the weight data, so weights
//! get the nominal scale [`Precision::nominal_weight_scale`] (−10: covers magnitudes up to
//! 240·2⁻¹⁰ ≈ 0.23, which fits the std-0.02 synthetic init); call
//! [`fit_fp8_weight_scales`](tessera_codegen::graph::fit_fp8_weight_scales) with the real
//! weights to replace it by the smallest scale that holds each tensor's largest magnitude.
//! The attention score and context matmuls are f16 × f16. Where casts finally run (fused into
//! the producer, early, late) is the planner's business; the graph only says which GEMMs are
//! FP8.

use tessera_codegen::graph::{DType, Graph, GraphBuilder, GraphError, ValueHandle, VerifyError};
use tessera_isa::numerics::Fp8Format;

use super::config::SiglipVisionConfig;
use super::weights::names;

use super::attention::{blocked_attention, key_chunks, whole_row_attention};
pub use super::attention::{key_blocks, MAX_AUTO_KEY_BLOCKS, MAX_KEY_BLOCKS, MIN_KEY_BLOCK};
pub use super::head::{k_parts, MAX_K_PARTS, MIN_K_CHUNK};
use super::k_split::k_split_linear;
pub use super::k_split::{EncoderKParts, MAX_SPLIT_BATCH, MIN_SPLIT_CHUNK, MIN_SPLIT_MACS};
use super::projections::qkv_projections;

/// Numeric choices of the graphs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Precision {
    /// What an FP8 GEMM's activation input is cast to. Default `f143<-4>`.
    pub activations: DType,
    /// Format of FP8 GEMM weights. Default F143.
    pub weight_format: Fp8Format,
    /// Scale FP8 weights get before their data is known. Default −10.
    pub nominal_weight_scale: i8,
    /// fc1 and fc2 in FP8 (else f16). Default true.
    pub fp8_mlp: bool,
    /// The QKV and output projections in FP8 (else f16). Default true.
    pub fp8_attention_projections: bool,
    /// The encoder's attention context computed transposed, `(vᵀ pᵀ)ᵀ`: a choice of graph form
    /// (the same products, summed along the keys either way), so that the head width streams
    /// through each `$CWEI` load. Default true.
    pub transposed_context: bool,
    /// The encoder's attention context split along the keys into chunks summed afterwards
    /// ([`chunked_context`]), with the values projected transposed, when the token count has a
    /// suitable divisor. Default false: on one So400m/14 layer with the head at batch 1 the
    /// estimate is 857,652 cycles against 804,512 without it (the chunks' sum is a tree of
    /// element-wise adds whose exchanges cost ~20k, and the softmax still writes whole rows),
    /// so it waits for a reducing sum and a softmax split along the keys.
    pub key_chunked_context: bool,
    /// How many chunks each encoder product's K is split into ([`k_split_linear`]); `None`:
    /// [`EncoderKParts::for_config`] picks from the model's sizes.
    pub k_parts: Option<EncoderKParts>,
    /// How many key blocks the encoder's attention is split into ([`blocked_attention`]; 1: the
    /// whole-row softmax and one context product). A count that does not divide the tokens, or
    /// above [`MAX_KEY_BLOCKS`], leaves it whole. `None`: [`key_blocks`] picks from the tokens
    /// and the batch.
    pub key_blocks: Option<usize>,
    /// With key blocks, the values projected transposed, `vᵀ = W_vᵀ xᵀ`, with the tokens of each
    /// key block padded to whole AMP K-blocks, so the product with each block's exponentials
    /// reads its values in `$CWEI` order as words (no element-wise transposes); the value bias
    /// goes through the output projection on the host ([`super::derived::OUT_BIAS_FOLDED`]).
    /// Default false: on one So400m/14 layer with the head at batch 1 the estimate is 349,669
    /// cycles against 331,127 without it; the values' relayout goes (its copies 6.8k, the
    /// context's step 18.3k → 16.1k), but the product `W_vᵀ xᵀ` (1,280 rows over 864 padded
    /// tokens, `grid 2x27x27`) costs 25.6k where the values' third of the QKV product costs
    /// ~9k, and the tokens travel to it as a second operand. The built-in model: 110,785 cropped
    /// against 102,576.
    pub values_transposed: bool,
    /// With key blocks and the QKV product split along K: the values' partial products summed
    /// on their own, each key block's rows padded to whole AMP K-blocks, and written by the sum
    /// in `$CWEI` order (`add_cwei_f16`), the order the products with the blocks' exponentials
    /// read them, so the values travel as whole blocks and are not transposed on the way; the
    /// value bias goes through the output projection on the host
    /// ([`super::derived::OUT_BIAS_FOLDED`]). Default true; see [`Precision::values_summed_as_weights_for`].
    pub values_summed_as_weights: bool,
    /// With key blocks and padded heads, the blocks combined over each head's own width, not
    /// its padding (the context products' padding columns sliced away before the combine), so
    /// the combine, the merge of the heads and the output projection (the checkpoint's weight,
    /// K = the hidden size) do no work on zeros. Default true.
    pub combine_head_width: bool,
    /// The pooling head's softmax split along the tokens into the encoder's key blocks
    /// ([`key_blocks`]): each block's part ([`softmax_part`](tessera_codegen::graph::GraphBuilder::softmax_part))
    /// pools its own tokens, and an attention combine rescales and adds the blocks, so no tile
    /// holds a head's whole row of scores. Else one softmax over each head's whole row, then
    /// the pooling product split along K.
    pub pooling_key_blocks: bool,
    /// With the pooling in key blocks, the head's scores as `x W_s` (the tokens as the
    /// product's rows, streaming through each weight load), each block's then transposed to
    /// heads × tokens; else `W_sᵀ xᵀ` with the tokens as the weights.
    pub head_scores_by_token: bool,
    /// The final LayerNorm (`post_layernorm`) with f16 gamma and beta (`layernorm_h_*`: the
    /// affine steps in f16, a few roundings of 2^-11 beside the FP8 products' 2^-4), so that
    /// the planner may split each row's columns over tiles; with f32 parameters a row is
    /// normalised whole on one tile by one worker. Default true.
    pub f16_post_layernorm: bool,
}

impl Default for Precision {
    fn default() -> Precision {
        Precision {
            activations: DType::f143(-4),
            weight_format: Fp8Format::F143,
            nominal_weight_scale: -10,
            fp8_mlp: true,
            fp8_attention_projections: true,
            transposed_context: true,
            key_chunked_context: false,
            k_parts: None,
            key_blocks: None,
            values_transposed: false,
            values_summed_as_weights: true,
            combine_head_width: true,
            pooling_key_blocks: true,
            head_scores_by_token: true,
            f16_post_layernorm: true,
        }
    }
}

impl Precision {
    /// Every GEMM in f16 (no casts): for comparing against the f32 reference without FP8 error.
    pub fn f16() -> Precision {
        Precision {
            fp8_mlp: false,
            fp8_attention_projections: false,
            ..Precision::default()
        }
    }

    /// Whether a layer of `config` over `tokens` keys at `batch` images sums its values as AMP
    /// weights ([`Precision::values_summed_as_weights`]): key blocks, no key chunks, the values
    /// not projected transposed, and the QKV product split along K (else there is no sum).
    pub fn values_summed_as_weights_for(
        &self,
        config: &SiglipVisionConfig,
        tokens: usize,
        batch: usize,
    ) -> bool {
        self.values_summed_as_weights
            && !self.values_transposed
            && key_chunks(self, tokens).is_none()
            && self.key_blocks_for(tokens) > 1
            && {
                let parts = self.k_parts_for(config, batch).qkv;
                parts > 1 && config.hidden_size.is_multiple_of(parts)
            }
    }

    /// [`Precision::k_parts`], or the split [`EncoderKParts::for_config`] picks for `batch`
    /// images.
    pub fn k_parts_for(&self, config: &SiglipVisionConfig, batch: usize) -> EncoderKParts {
        self.k_parts
            .unwrap_or_else(|| EncoderKParts::for_config(config, batch))
    }

    /// [`Precision::key_blocks`] if it divides `tokens` and is at most [`MAX_KEY_BLOCKS`] (else
    /// 1), or [`key_blocks`] when it is `None`.
    pub fn key_blocks_for(&self, tokens: usize) -> usize {
        match self.key_blocks {
            Some(c) if (1..=MAX_KEY_BLOCKS).contains(&c) && tokens.is_multiple_of(c) => c,
            Some(_) => 1,
            None => key_blocks(tokens),
        }
    }

    fn weight_dtype(&self, fp8: bool) -> DType {
        if fp8 {
            DType::Fp8 {
                format: self.weight_format,
                scale: self.nominal_weight_scale,
            }
        } else {
            DType::F16
        }
    }
}

/// A graph could not be built (a bad size, e.g. zero tokens or layers).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelGraphError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Verify(#[from] VerifyError),
}

/// The store-name prefix of layer `i`'s weights: `vision_model.encoder.layers.{i}.`.
pub fn layer_prefix(i: usize) -> String {
    names::LAYER_PREFIX_PATTERN.replace("{i}", &i.to_string())
}

/// The MLP half of an encoder layer, with its residual: `y = x + fc2(gelu(fc1(ln2(x))))`
/// (biases after each matmul), for layer 0's weights.
pub fn mlp_block(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
) -> Result<Graph, ModelGraphError> {
    mlp_block_with(config, tokens, batch, &Precision::default())
}

/// [`mlp_block`] with explicit precision.
pub fn mlp_block_with(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
    precision: &Precision,
) -> Result<Graph, ModelGraphError> {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [batch * tokens, config.hidden_size])?;
    let y = mlp(&mut b, config, precision, &layer_prefix(0), x)?;
    b.output("y", y)?;
    Ok(b.finish()?)
}

/// One encoder layer for layer 0's weights:
/// `h = x + out_proj(attention(ln1(x)))`, `y = h + mlp(ln2(h))`.
pub fn encoder_layer(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
) -> Result<Graph, ModelGraphError> {
    encoder_layer_with(config, tokens, batch, &Precision::default())
}

/// [`encoder_layer`] with explicit precision.
pub fn encoder_layer_with(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
    precision: &Precision,
) -> Result<Graph, ModelGraphError> {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [batch * tokens, config.hidden_size])?;
    let y = layer(
        &mut b,
        config,
        precision,
        tokens,
        batch,
        &layer_prefix(0),
        x,
    )?;
    b.output("y", y)?;
    Ok(b.finish()?)
}

/// `layers` encoder layers as one `Repeat` of an `encoder_layer` region whose weights are
/// prefixed `vision_model.encoder.layers.{i}.` (no post-LayerNorm: that belongs to the vision
/// transformer, not the encoder).
pub fn encoder(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
    layers: u32,
) -> Result<Graph, ModelGraphError> {
    encoder_with(config, tokens, batch, layers, &Precision::default())
}

/// [`encoder`] with explicit precision.
pub fn encoder_with(
    config: &SiglipVisionConfig,
    tokens: usize,
    batch: usize,
    layers: u32,
    precision: &Precision,
) -> Result<Graph, ModelGraphError> {
    let shape = [batch * tokens, config.hidden_size];
    let mut body = GraphBuilder::new();
    let x = body.input("x", DType::F16, shape)?;
    let y = layer(&mut body, config, precision, tokens, batch, "", x)?;
    body.output("y", y)?;
    let body = body.finish()?;

    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, shape)?;
    let region = b.region("encoder_layer", body)?;
    let y = b.repeat("encoder", region, layers, names::LAYER_PREFIX_PATTERN, &[x])?;
    b.output("y", y)?;
    Ok(b.finish()?)
}

/// The whole vision tower of [`vision_tower`]: what it has besides the config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TowerSpec {
    /// Images per run (N).
    pub batch: usize,
    /// Encoder layers kept (the first `layers` of the model).
    pub layers: usize,
    /// Whether the attention-pooling head runs (output `pooler_output`).
    pub head: bool,
    pub precision: Precision,
}

/// The SigLIP vision tower on `pixel_values` (f32 `[N, C, S, S]`, normalised as the Hugging Face
/// image processor makes them): patch embedding (the stride-P convolution as a matmul of the
/// patches), position embedding, `layers` encoder layers (one `Repeat`), post-LayerNorm →
/// output `last_hidden_state` (f16 `[N, T, D]`), and with `head` the attention-pooling head →
/// output `pooler_output` (f16 `[N, D]`). Pixels are cast to f16 on the chip; the patch
/// extraction is a view (reshape/transpose), so it is the patch GEMM's input redistribution.
/// Pixels past the last whole patch (384 = 27·14 + 6) are sliced off, as the convolution does.
pub fn vision_tower(
    config: &SiglipVisionConfig,
    spec: &TowerSpec,
) -> Result<Graph, ModelGraphError> {
    let (n, c, s, p) = (
        spec.batch,
        config.num_channels,
        config.image_size,
        config.patch_size,
    );
    let d = config.hidden_size;
    let g = config.patches_per_side();
    let t = g * g;
    let precision = &spec.precision;
    let mut b = GraphBuilder::new();
    let pixels = b.input("pixel_values", DType::F32, [n, c, s, s])?;
    let mut x = b.cast("pixels.f16", pixels, DType::F16)?;
    if g * p < s {
        x = b.slice("pixels.crop.h", x, 2, 0, g * p)?;
        x = b.slice("pixels.crop.w", x, 3, 0, g * p)?;
    }
    let x = b.reshape("patches.grid", x, [n, c, g, p, g, p])?;
    let x = b.transpose("patches.order", x, &[0, 2, 4, 1, 3, 5])?;
    let mut patches = b.reshape("patches", x, [n * t, c * p * p])?;
    // In FP8, the patches padded with zero columns to whole K-blocks, against the weight's zero
    // rows (`derived::PATCH_WEIGHT_PADDED`): the product reads its rows as they land.
    let padded = super::derived::padded_patch_dim(config);
    let (in_features, weight) = if precision.fp8_mlp && padded != c * p * p {
        patches = b.pad("patches.pad", patches, 1, padded)?;
        (padded, super::derived::PATCH_WEIGHT_PADDED)
    } else {
        (c * p * p, names::PATCH_WEIGHT)
    };
    let embed = Dense {
        label: "patch_embed",
        weight,
        bias: names::PATCH_BIAS,
        in_features,
        out_features: d,
        fp8: precision.fp8_mlp,
    };
    let x = linear(&mut b, precision, "", embed, patches)?;
    let pos = b.weight(names::POSITION, DType::F16, [t, d])?;
    let pos = b.reshape("pos.rows", pos, [1, t, d])?;
    let pos = b.broadcast("pos.batch", pos, [n, t, d])?;
    let pos = b.reshape("pos", pos, [n * t, d])?;
    let mut h = b.add("embeddings", x, pos)?;
    if spec.layers > 0 {
        let shape = [n * t, d];
        let mut body = GraphBuilder::new();
        let bx = body.input("x", DType::F16, shape)?;
        let by = layer(&mut body, config, precision, t, n, "", bx)?;
        body.output("y", by)?;
        let body = body.finish()?;
        let region = b.region("layer", body)?;
        h = b.repeat(
            "encoder",
            region,
            spec.layers as u32,
            names::LAYER_PREFIX_PATTERN,
            &[h],
        )?;
    }
    let post = layer_norm(
        &mut b,
        config,
        "post_layernorm",
        "",
        (names::POST_LN_WEIGHT, names::POST_LN_BIAS),
        (h, precision.f16_post_layernorm),
    )?;
    let hidden = b.reshape("last_hidden_state.view", post, [n, t, d])?;
    b.output("last_hidden_state", hidden)?;
    if spec.head {
        let pooled = super::head::pooling_head(&mut b, config, precision, n, post)?;
        b.output("pooler_output", pooled)?;
    }
    Ok(b.finish()?)
}

/// A dense layer: `x · W + bias` with W `[in, out]` read from `prefix + weight`.
#[derive(Clone, Copy)]
pub(super) struct Dense<'a> {
    pub(super) label: &'a str,
    pub(super) weight: &'a str,
    pub(super) bias: &'a str,
    pub(super) in_features: usize,
    pub(super) out_features: usize,
    pub(super) fp8: bool,
}

impl Dense<'_> {
    /// The product's operands: `x` (cast to the activation dtype in FP8, as `{label}.in`) and
    /// the weight `prefix + weight`, `[in, out]`.
    pub(super) fn operands(
        &self,
        b: &mut GraphBuilder,
        precision: &Precision,
        prefix: &str,
        x: ValueHandle,
    ) -> Result<(ValueHandle, ValueHandle), GraphError> {
        let input = if self.fp8 {
            b.cast(&format!("{}.in", self.label), x, precision.activations)?
        } else {
            x
        };
        let w = b.weight(
            &format!("{prefix}{}", self.weight),
            precision.weight_dtype(self.fp8),
            [self.in_features, self.out_features],
        )?;
        Ok((input, w))
    }
}

/// Builds a [`Dense`] layer; in FP8, `x` is cast to the activation dtype first.
pub(super) fn linear(
    b: &mut GraphBuilder,
    precision: &Precision,
    prefix: &str,
    layer: Dense,
    x: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let (input, w) = layer.operands(b, precision, prefix, x)?;
    let y = b.matmul(layer.label, input, w)?;
    let bias = b.weight(
        &format!("{prefix}{}", layer.bias),
        DType::F32,
        [layer.out_features],
    )?;
    b.bias_add(&format!("{}.bias", layer.label), y, bias)
}

/// A LayerNorm over the hidden width; `f16_params`: its gamma and beta are f16 where the width
/// is whole groups of 4 (the f16 affine kernels, `layernorm_h_*`, which may split a row's
/// columns over tiles), else f32. The layers' LayerNorms take f16 parameters where they feed
/// FP8 products only (the FP8 cast keeps 3 or 4 significant bits).
pub(super) fn layer_norm(
    b: &mut GraphBuilder,
    config: &SiglipVisionConfig,
    label: &str,
    prefix: &str,
    (gamma, beta): (&str, &str),
    (x, f16_params): (ValueHandle, bool),
) -> Result<ValueHandle, GraphError> {
    let d = config.hidden_size;
    let params = if f16_params && d.is_multiple_of(4) {
        DType::F16
    } else {
        DType::F32
    };
    let g = b.weight(&format!("{prefix}{gamma}"), params, [d])?;
    let be = b.weight(&format!("{prefix}{beta}"), params, [d])?;
    b.layer_norm(label, x, g, be, config.layer_norm_eps)
}

/// LayerNorm 2 → fc1 → GELU → fc2 → residual.
fn mlp(
    b: &mut GraphBuilder,
    config: &SiglipVisionConfig,
    precision: &Precision,
    prefix: &str,
    x: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    let fp8 = precision.fp8_mlp;
    let rows = b.ty(x).map_or(0, |t| t.shape.dims()[0]);
    let batch = rows / config.num_patches().max(1);
    let h = layer_norm(
        b,
        config,
        "ln2",
        prefix,
        (names::LN2_WEIGHT, names::LN2_BIAS),
        (x, precision.fp8_mlp),
    )?;
    // In FP8, the hidden width padded with zero units to whole K-blocks for every K chunk of
    // fc2 (`derived::padded_mlp_width`), so fc2 reads its operand in rows.
    let padded = super::derived::padded_mlp_width(config);
    let (f, fc1_weight, fc1_bias, fc2_weight) = if fp8 && padded != f {
        (
            padded,
            super::derived::FC1_WEIGHT_PADDED,
            super::derived::FC1_BIAS_PADDED,
            super::derived::FC2_WEIGHT_PADDED,
        )
    } else {
        (f, names::FC1_WEIGHT, names::FC1_BIAS, names::FC2_WEIGHT)
    };
    let fc1 = Dense {
        label: "fc1",
        weight: fc1_weight,
        bias: fc1_bias,
        in_features: d,
        out_features: f,
        fp8,
    };
    let parts = precision.k_parts_for(config, batch);
    let h = k_split_linear(b, precision, prefix, fc1, h, parts.fc1)?;
    let h = b.gelu("gelu", h)?;
    let fc2 = Dense {
        label: "fc2",
        weight: fc2_weight,
        bias: names::FC2_BIAS,
        in_features: f,
        out_features: d,
        fp8,
    };
    let h = k_split_linear(b, precision, prefix, fc2, h, parts.fc2)?;
    b.add("residual2", x, h)
}

/// A whole encoder layer.
fn layer(
    b: &mut GraphBuilder,
    config: &SiglipVisionConfig,
    precision: &Precision,
    tokens: usize,
    batch: usize,
    prefix: &str,
    x: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let d = config.hidden_size;
    let heads = config.num_attention_heads;
    let fp8 = precision.fp8_attention_projections;
    let h = layer_norm(
        b,
        config,
        "ln1",
        prefix,
        (names::LN1_WEIGHT, names::LN1_BIAS),
        (x, fp8),
    )?;
    let hp = super::derived::padded_head_dim(config);
    let chunks = key_chunks(precision, tokens);
    let blocks = match chunks {
        Some(_) => 1,
        None => precision.key_blocks_for(tokens),
    };
    let (q, k, v) = qkv_projections(
        b,
        config,
        precision,
        prefix,
        h,
        (tokens, batch),
        (chunks, blocks),
    )?;
    // The chunked form reads the checkpoint's projections; the others the padded heads, whose
    // queries carry the scale.
    let (scale, width) = if chunks.is_some() {
        (1.0 / (config.head_dim() as f32).sqrt(), config.head_dim())
    } else {
        (1.0, hp)
    };
    // The width the blocks are combined over: each head's own where its padding can go.
    let hd = config.head_dim();
    let combined = blocks > 1
        && chunks.is_none()
        && precision.combine_head_width
        && width > hd
        && hd.is_multiple_of(8);
    let values_as_weights = precision.values_summed_as_weights_for(config, tokens, batch);
    let context = if blocks > 1 {
        let dims = (batch * heads, tokens, width);
        let context = blocked_attention(
            b,
            (q, k, v),
            dims,
            blocks,
            scale,
            precision.values_transposed || values_as_weights,
            if combined { hd } else { width },
        )?;
        b.merge_heads("context.merge", context, heads)?
    } else {
        whole_row_attention(
            b,
            precision,
            (q, k, v),
            (batch, heads, tokens),
            chunks,
            scale,
        )?
    };
    let out_proj = if combined {
        Dense {
            label: "out_proj",
            weight: names::OUT_WEIGHT,
            bias: if precision.values_transposed || values_as_weights {
                super::derived::OUT_BIAS_FOLDED
            } else {
                names::OUT_BIAS
            },
            in_features: d,
            out_features: d,
            fp8,
        }
    } else if chunks.is_some() {
        Dense {
            label: "out_proj",
            weight: names::OUT_WEIGHT,
            bias: super::derived::OUT_BIAS_FOLDED,
            in_features: d,
            out_features: d,
            fp8,
        }
    } else {
        Dense {
            label: "out_proj",
            weight: super::derived::OUT_WEIGHT_HEADS,
            bias: if (precision.values_transposed && blocks > 1) || values_as_weights {
                super::derived::OUT_BIAS_FOLDED
            } else {
                names::OUT_BIAS
            },
            in_features: heads * hp,
            out_features: d,
            fp8,
        }
    };
    let attn = k_split_linear(
        b,
        precision,
        prefix,
        out_proj,
        context,
        precision.k_parts_for(config, batch).out_proj,
    )?;
    let h = b.add("residual1", x, attn)?;
    debug_assert_eq!(b.ty(h).map(|t| t.shape.dims()[0]), Some(batch * tokens));
    mlp(b, config, precision, prefix, h)
}

#[cfg(test)]
mod tests;
