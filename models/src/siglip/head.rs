//! The attention-pooling head of the SigLIP vision tower (`SiglipMultiheadAttentionPoolingHead`)
//! as graph ops, and the product of few rows with K split over the chip that its layers use.

use tessera_codegen::graph::{DType, GraphBuilder, GraphError, ValueHandle};

use super::config::SiglipVisionConfig;
use super::graph::{layer_norm, Dense, Precision};
use super::weights::names;

/// SiglipMultiheadAttentionPoolingHead: the probe as the one query of multi-head attention
/// over each image's tokens, the output projection, then `o + mlp(layernorm(o))`.
pub(super) fn pooling_head(
    b: &mut GraphBuilder,
    config: &SiglipVisionConfig,
    precision: &Precision,
    n: usize,
    hidden: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let (d, heads, f) = (
        config.hidden_size,
        config.num_attention_heads,
        config.intermediate_size,
    );
    let t = config.num_patches();
    let fp8 = precision.fp8_attention_projections;
    let dense = |label, weight, bias| Dense {
        label,
        weight,
        bias,
        in_features: d,
        out_features: d,
        fp8,
    };
    // The probe's query is a constant of the checkpoint, so the scores of every head are one
    // narrow product with a weight derived on the host (`derived::HEAD_SCORE_WEIGHT`: the key
    // projection times each head's query, over √hd; the key bias only shifts a head's scores,
    // which softmax ignores). No query or key projection runs on the chip, and every token
    // streams through each weight load. It reads the f16 tokens: the head's products are
    // small, and a cast of every token would cost more than the FP8 rate saves.
    // With key blocks they are `x W_s` (`Precision::head_scores_by_token`: So400m b1 313,462 →
    // 313,256 cropped); else, or with that off, transposed, `W_sᵀ xᵀ` (heads × tokens per
    // image): the tokens are the columns, so a head's row reaches its softmax tile in blocks
    // of 16 tokens. Either way K (the hidden size) is split over the chip like the head's
    // other products.
    let ws = b.weight(super::derived::HEAD_SCORE_WEIGHT, DType::F16, [d, heads])?;
    let blocks = if precision.pooling_key_blocks {
        super::attention::key_blocks(t)
    } else {
        1
    };
    let pooled = if blocks > 1 && precision.head_scores_by_token {
        // The tokens as the product's rows, `x W_s` (tokens × heads): every key block's
        // tokens stream through each weight load from the layout the encoder wrote them in,
        // and each block's scores are transposed to heads × tokens for its softmax part.
        let ws = b.reshape("head.scores.w3", ws, [1, d, heads])?;
        let ws = if n > 1 {
            b.broadcast("head.scores.w.images", ws, [n, d, heads])?
        } else {
            ws
        };
        let x3 = b.reshape("head.scores.x3", hidden, [n, t, d])?;
        let st = split_k_product(b, "head.scores", x3, ws)?;
        let kc = t / blocks;
        let s = b.reshape("head.scores.blocks", st, [n * blocks, kc, heads])?;
        let s = b.transpose("head.scores.bparts", s, &[0, 2, 1])?;
        pool_block_parts(b, s, hidden, (n, heads, t, d), blocks)?
    } else {
        let ws = b.transpose("head.scores.wt", ws, &[1, 0])?;
        let ws = b.reshape("head.scores.w3", ws, [1, heads, d])?;
        let ws = if n > 1 {
            b.broadcast("head.scores.w.images", ws, [n, heads, d])?
        } else {
            ws
        };
        // Each image's tokens are the columns of its own product, and each head's row of
        // scores is summed apart ([`split_k_product`]), so a row's blocks of 16 tokens start
        // at the row (729 is odd: rows cut from one flat run of `heads × tokens` would land a
        // half-word off).
        let xt = b.reshape("head.scores.x3", hidden, [n, t, d])?;
        let xt = b.transpose("head.scores.xt", xt, &[0, 2, 1])?;
        let scores = split_k_product(b, "head.scores", ws, xt)?;
        let scores = b.reshape("head.scores.heads", scores, [n, heads, t])?;
        if blocks > 1 {
            let kc = t / blocks;
            let s = b.reshape("head.scores.blocks", scores, [n, heads, blocks, kc])?;
            let s = b.transpose("head.scores.bt", s, &[0, 2, 1, 3])?;
            let s = b.reshape("head.scores.bparts", s, [n * blocks, heads, kc])?;
            pool_block_parts(b, s, hidden, (n, heads, t, d), blocks)?
        } else {
            pool_whole_rows(b, scores, hidden, (n, heads, t, d))?
        }
    };
    // The value projection stays f16 whatever the precision: a pooled row cast to FP8 carries
    // its rounding whole, where the tokens' own FP8 errors averaged out over the pooling
    // (pooler relative rms 8.12e-2 with FP8 here at So400m batch 2, 7.68e-2 before), and the
    // product is a few rows.
    let pooled = b.transpose("head.pooled.t", pooled, &[1, 0, 2])?;
    let wv = b.weight(names::HEAD_V_WEIGHT, DType::F16, [d, d])?;
    let wv = b.reshape("head.v.weight.heads", wv, [d, heads, d / heads])?;
    let wv = b.transpose("head.v.weight.t", wv, &[1, 0, 2])?;
    let context = split_k_product(b, "head.v", pooled, wv)?;
    let context = b.reshape("head.context.heads", context, [heads, n, d / heads])?;
    let context = b.transpose("head.context.t", context, &[1, 0, 2])?;
    let context = b.reshape("head.context.rows", context, [n, d])?;
    let o = few_rows_linear(
        b,
        precision,
        dense(
            "head.out_proj",
            names::HEAD_OUT_WEIGHT,
            super::derived::HEAD_OUT_BIAS_FOLDED,
        ),
        context,
    )?;
    let ln = layer_norm(
        b,
        config,
        "head.layernorm",
        "",
        (names::HEAD_LN_WEIGHT, names::HEAD_LN_BIAS),
        (o, precision.fp8_mlp),
    )?;
    // In FP8, the hidden width padded with zero units like each layer's (`derived::
    // HEAD_FC1_WEIGHT_PADDED`), so fc2's K chunks are whole FP8 K-blocks.
    let padded = super::derived::padded_mlp_width(config);
    let (f, fc1_weight, fc1_bias, fc2_weight) = if precision.fp8_mlp && padded != f {
        (
            padded,
            super::derived::HEAD_FC1_WEIGHT_PADDED,
            super::derived::HEAD_FC1_BIAS_PADDED,
            super::derived::HEAD_FC2_WEIGHT_PADDED,
        )
    } else {
        (
            f,
            names::HEAD_FC1_WEIGHT,
            names::HEAD_FC1_BIAS,
            names::HEAD_FC2_WEIGHT,
        )
    };
    let fc1 = Dense {
        label: "head.fc1",
        weight: fc1_weight,
        bias: fc1_bias,
        in_features: d,
        out_features: f,
        fp8: precision.fp8_mlp,
    };
    let m = few_rows_linear(b, precision, fc1, ln)?;
    let m = b.gelu("head.gelu", m)?;
    let fc2 = Dense {
        label: "head.fc2",
        weight: fc2_weight,
        bias: names::HEAD_FC2_BIAS,
        in_features: f,
        out_features: d,
        fp8: precision.fp8_mlp,
    };
    let m = few_rows_linear(b, precision, fc2, m)?;
    b.add("head.residual", o, m)
}

/// A [`Dense`] layer of the pooling head (`x` with few rows, any shape of `rows × in` elements)
/// as a [`split_k_product`]: the result `[rows, out]`.
fn few_rows_linear(
    b: &mut GraphBuilder,
    precision: &Precision,
    layer: Dense,
    x: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let (input, w) = layer.operands(b, precision, "", x)?;
    let Dense {
        label,
        bias,
        in_features,
        out_features,
        ..
    } = layer;
    let elements: usize = b.ty(x).map_or(0, |t| t.shape.dims().iter().product());
    let rows = elements / in_features.max(1);
    let x3 = b.reshape(&format!("{label}.x3"), input, [1, rows, in_features])?;
    let w3 = b.reshape(&format!("{label}.w3"), w, [1, in_features, out_features])?;
    let y = split_k_product(b, label, x3, w3)?;
    let bias = b.weight(bias, DType::F32, [out_features])?;
    b.bias_add(&format!("{label}.bias"), y, bias)
}

/// The token count the head's pooling product runs at: `t` when [`k_parts_of_blocks`] finds
/// chunks of whole f16 K-blocks for it, else `t` rounded up to a multiple of [`MIN_K_CHUNK`]
/// (So400m/14: 729 → 768).
pub fn pooling_tokens(t: usize) -> usize {
    let c = k_parts_of_blocks(t, 16);
    if (t / c).is_multiple_of(16) {
        t
    } else {
        t.next_multiple_of(MIN_K_CHUNK)
    }
}

/// Largest number of K-chunks [`split_k_product`] makes.
pub const MAX_K_PARTS: usize = 32;

/// Fewest K elements per chunk of [`split_k_product`]: 64 f16 (4 of the AMP's K-blocks) or
/// FP8 (2).
pub const MIN_K_CHUNK: usize = 64;

/// The number of K-chunks for a contraction of `k`: the largest divisor of `k` up to
/// [`MAX_K_PARTS`] that leaves chunks of at least [`MIN_K_CHUNK`] (1: no split).
pub fn k_parts(k: usize) -> usize {
    (1..=MAX_K_PARTS.min(k / MIN_K_CHUNK).max(1))
        .rev()
        .find(|c| k.is_multiple_of(*c))
        .unwrap_or(1)
}

/// The number of K-chunks [`split_k_product`] makes of a contraction of `k` whose AMP K-blocks
/// hold `block` elements: the largest count up to [`MAX_K_PARTS`] whose chunks are whole
/// blocks of at least [`MIN_K_CHUNK`] elements (a chunk with a tail of a block is copied into
/// the product's panels element by element), else [`k_parts`].
pub fn k_parts_of_blocks(k: usize, block: usize) -> usize {
    (1..=MAX_K_PARTS.min(k / MIN_K_CHUNK).max(1))
        .rev()
        .find(|c| k.is_multiple_of(*c) && (k / c).is_multiple_of(block.max(1)))
        .unwrap_or_else(|| k_parts(k))
}

/// Each head's pooled row `Σ_t p_t x_t`, `[n, heads, d]`, from the scores `[n, heads, t]` and
/// the tokens `[n · t, d]`: one softmax over each head's whole row of scores, then the pooling
/// product split along its K (the tokens).
fn pool_whole_rows(
    b: &mut GraphBuilder,
    scores: ValueHandle,
    hidden: ValueHandle,
    (n, heads, t, d): (usize, usize, usize, usize),
) -> Result<ValueHandle, GraphError> {
    let probs = b.softmax("head.probs", scores, 1.0)?;
    // With one query, a head's context is `Σ_t p_t (x_t W_v,h + b_v,h) = (Σ_t p_t x_t) W_v,h +
    // b_v,h` (the probabilities sum to 1): each head pools the tokens first, a product of
    // 16 rows instead of the values of every token, and the value projection acts on one
    // pooled row per head. The value bias goes through the output projection on the host
    // (`derived::HEAD_OUT_BIAS_FOLDED` = b_v W_o + b_o). Every product here has few rows, so
    // each splits K over the chip ([`split_k_product`]); their sums come out as rows,
    // `[rows, N]`.
    let tokens = b.reshape("head.tokens", hidden, [n, t, d])?;
    // The tokens (the pooling's K) padded with zero probabilities and zero tokens to whole
    // chunks of whole f16 K-blocks ([`pooling_tokens`]: So400m's 729 → 768, 12 chunks of 64),
    // so the chunks reach the products' panels and `$CWEI` order in words, not elements.
    let tp = pooling_tokens(t);
    let (probs, tokens) = if tp == t {
        (probs, tokens)
    } else {
        (
            b.pad("head.probs.padded", probs, 2, tp)?,
            b.pad("head.tokens.padded", tokens, 1, tp)?,
        )
    };
    let pooled = split_k_product(b, "head.pooled", probs, tokens)?;
    b.reshape("head.pooled.heads", pooled, [n, heads, d])
}

/// [`pool_whole_rows`] with the tokens in `blocks` key blocks, from each block's scores `[n ·
/// blocks, heads, t / blocks]`, as the encoder's attention
/// (`super::attention::blocked_attention`): per block the part of each head's softmax over its
/// own tokens (maximum, exponentials, their sum) and the product of its exponentials with its
/// tokens (padded to whole AMP K-blocks), then the attention combine, which rescales each
/// block by `exp(m_j − M)` and divides by the rescaled sum. No tile holds a head's whole row.
fn pool_block_parts(
    b: &mut GraphBuilder,
    s: ValueHandle,
    hidden: ValueHandle,
    (n, heads, t, d): (usize, usize, usize, usize),
    blocks: usize,
) -> Result<ValueHandle, GraphError> {
    let kc = t / blocks;
    let part = b.softmax_part("head.probs", s, 1.0)?;
    let padded = tessera_codegen::graph::op::softmax_part_exp_columns(kc);
    let e = b.slice("head.probs.e", part, 2, 0, padded)?;
    let stats = b.slice("head.probs.stats", part, 2, padded, padded + 2)?;
    let mut tokens = b.reshape("head.tokens", hidden, [n * blocks, kc, d])?;
    if padded > kc {
        tokens = b.pad("head.tokens.pad", tokens, 1, padded)?;
    }
    let parts = b.batched_matmul("head.pooled.parts", e, tokens)?;
    // The combine over every image's heads as rows, `[blocks, n · heads, d]`, so that it
    // spreads over rows × column blocks (a few rows of the hidden width).
    let parts = b.reshape("head.pooled.parts.blocks", parts, [n, blocks, heads, d])?;
    let parts = b.transpose("head.pooled.parts.bt", parts, &[1, 0, 2, 3])?;
    let parts = b.reshape("head.pooled.parts.rows", parts, [blocks, n * heads, d])?;
    let stats = b.reshape("head.probs.stats.blocks", stats, [n, blocks, heads, 2])?;
    let stats = b.transpose("head.probs.stats.bt", stats, &[1, 0, 2, 3])?;
    let stats = b.reshape("head.probs.stats.rows", stats, [blocks, n * heads, 2])?;
    let pooled = b.attention_combine("head.pooled", parts, stats)?;
    b.reshape("head.pooled.heads", pooled, [n, heads, d])
}

/// `a · w` as rows, `[B·M, N]`, for `a` `[B, M, K]`, `w` `[B, K, N]` whose rows M are few: K is
/// split into [`k_parts_of_blocks`] chunks that run as separate batch entries, so the product
/// spreads over the chip instead of streaming all of K through a few tiles, and each row's
/// partial products (f16) are summed column by column (`sum_parts`), its sums in blocks that
/// start at the row.
///
/// Numerics: each chunk accumulates in the AMP and is rounded to f16; the sum adds the rounded
/// chunks in f32 in order and rounds once more.
fn split_k_product(
    b: &mut GraphBuilder,
    label: &str,
    a: ValueHandle,
    w: ValueHandle,
) -> Result<ValueHandle, GraphError> {
    let dims = |b: &GraphBuilder, v: ValueHandle| -> Vec<usize> {
        b.ty(v).map(|t| t.shape.dims().to_vec()).unwrap_or_default()
    };
    let (ad, wd) = (dims(b, a), dims(b, w));
    let (&[bn, m, k], &[_, _, n]) = (&ad[..], &wd[..]) else {
        // Not rank 3: the plain product reports the shapes.
        return b.batched_matmul(label, a, w);
    };
    // Whole AMP K-blocks: 32 FP8 elements, 16 f16 (`tessera_kernels::gemm`).
    let block = match b.ty(w).map(|t| t.dtype) {
        Some(DType::Fp8 { .. }) => 32,
        Some(DType::F16 | DType::F32) | None => 16,
    };
    let c = k_parts_of_blocks(k, block);
    if c == 1 {
        let y = b.batched_matmul(label, a, w)?;
        return b.reshape(&format!("{label}.rows"), y, [bn * m, n]);
    }
    let kc = k / c;
    let a = b.reshape(&format!("{label}.a.chunks"), a, [bn, m, c, kc])?;
    let a = b.transpose(&format!("{label}.a.t"), a, &[0, 2, 1, 3])?;
    let a = b.reshape(&format!("{label}.a.parts"), a, [bn * c, m, kc])?;
    let w = b.reshape(&format!("{label}.w.parts"), w, [bn * c, kc, n])?;
    let parts = b.batched_matmul(&format!("{label}.parts"), a, w)?;
    // The chunks of every row of `a` side by side, `[bn·m, c, n]`, summed column by column.
    let parts = if m == 1 {
        b.reshape(&format!("{label}.parts.rows"), parts, [bn, c, n])?
    } else {
        let p = b.reshape(&format!("{label}.parts.split"), parts, [bn, c, m, n])?;
        let p = b.transpose(&format!("{label}.parts.t"), p, &[0, 2, 1, 3])?;
        b.reshape(&format!("{label}.parts.rows"), p, [bn * m, c, n])?
    };
    b.sum_parts(label, parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks are whole AMP K-blocks where the contraction allows, and the pooling's tokens are
    /// padded until it does.
    #[test]
    fn chunks_are_whole_k_blocks_and_the_tokens_pad_to_them() {
        // So400m's hidden size: 18 chunks of 64 (two FP8 blocks, four f16 ones).
        assert_eq!(k_parts_of_blocks(1152, 32), 18);
        assert_eq!(k_parts_of_blocks(1152, 16), 18);
        // The padded MLP width in FP8: 17 chunks of 256 (32 chunks of 136 would end mid-block).
        assert_eq!(k_parts_of_blocks(4352, 32), 17);
        // 729 tokens have no whole-block split: the count falls back to k_parts (9 of 81) and
        // the pooling pads them to 768, 12 chunks of 64.
        assert_eq!(k_parts_of_blocks(729, 16), k_parts(729));
        assert_eq!(pooling_tokens(729), 768);
        assert_eq!(k_parts_of_blocks(768, 16), 12);
        // The built-in tower's 64 tokens are one whole chunk already.
        assert_eq!(pooling_tokens(64), 64);
        for k in [64usize, 256, 729, 768, 1152, 4304, 4352] {
            for block in [16usize, 32] {
                let c = k_parts_of_blocks(k, block);
                assert!(k.is_multiple_of(c) && c <= MAX_K_PARTS, "{k} {block}: {c}");
            }
        }
    }
}
