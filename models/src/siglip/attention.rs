//! The encoder's attention after the projections, in its graph forms: over whole rows of keys
//! (the scores, one softmax, the context product, transposed or chunked along the keys) or
//! split along the keys into blocks ([`blocked_attention`]: per block the scores,
//! `SoftmaxPart` and the product with the block's values, then `AttentionCombine`), and how
//! many key blocks ([`key_blocks`]).

use tessera_codegen::graph::{GraphBuilder, GraphError, ValueHandle};

use super::graph::Precision;
use super::head::k_parts;

/// The number of key chunks of the encoder's attention context, when it is split along the
/// keys: the largest divisor of `tokens` up to [`MAX_K_PARTS`](super::graph::MAX_K_PARTS) leaving chunks of at least
/// [`MIN_K_CHUNK`](super::graph::MIN_K_CHUNK) keys (`None`: not split).
pub(super) fn key_chunks(precision: &Precision, tokens: usize) -> Option<usize> {
    if !precision.key_chunked_context {
        return None;
    }
    let c = k_parts(tokens);
    (c > 1).then_some(c)
}

/// The attention context `p · v` (`p` `[n, t, t]`, the values transposed, `vt` `[n, d, t]`)
/// with the keys split into `c` chunks that run as separate batch entries,
/// `Σ_j p[:, :, j] · v[:, j, :]`: every chunk's product reads the probabilities where the
/// softmax left them and a slice of the values, so no tile needs a whole head's keys; the
/// chunks' partial products (f16) are summed by a tree of adds (f16, rounded at every add).
fn chunked_context(
    b: &mut GraphBuilder,
    probs: ValueHandle,
    vt: ValueHandle,
    n: usize,
    t: usize,
    c: usize,
) -> Result<ValueHandle, GraphError> {
    let d = b.ty(vt).map_or(0, |ty| ty.shape.dims()[1]);
    let kc = t / c;
    let p = b.reshape("context.p.chunks", probs, [n, t, c, kc])?;
    let p = b.transpose("context.p.t", p, &[0, 2, 1, 3])?;
    let p = b.reshape("context.p.parts", p, [n * c, t, kc])?;
    let v = b.reshape("context.v.chunks", vt, [n, d, c, kc])?;
    let v = b.transpose("context.v.t", v, &[0, 2, 3, 1])?;
    let v = b.reshape("context.v.parts", v, [n * c, kc, d])?;
    let parts = b.batched_matmul("context.parts", p, v)?;
    let mut level = b.reshape("context.parts.chunks", parts, [n, c, t, d])?;
    // Summed as a tree of element-wise adds, each over the whole chip: halves of the chunks
    // at each level, an odd chunk out set aside and added last.
    let (mut m, mut odd, mut depth) = (c, Vec::new(), 0);
    while m > 1 {
        let half = m / 2;
        let a = b.slice(&format!("context.sum{depth}.a"), level, 1, 0, half)?;
        let z = b.slice(&format!("context.sum{depth}.b"), level, 1, half, 2 * half)?;
        if m % 2 == 1 {
            odd.push(b.slice(&format!("context.sum{depth}.odd"), level, 1, m - 1, m)?);
        }
        level = b.add(&format!("context.sum{depth}"), a, z)?;
        m = half;
        depth += 1;
    }
    for (j, x) in odd.into_iter().enumerate() {
        level = b.add(&format!("context.sum.odd{j}"), level, x)?;
    }
    b.reshape("context.sum.rows", level, [n, t, d])
}

/// The most key blocks of [`blocked_attention`] (the combine's kernel keeps one factor per
/// block in a worker's scratch).
pub const MAX_KEY_BLOCKS: usize = tessera_codegen::graph::ATTENTION_COMBINE_MAX_BLOCKS;

/// Fewest keys per block [`key_blocks`] picks: a block's exponentials and values fill several
/// AMP K-blocks of 16 keys.
pub const MIN_KEY_BLOCK: usize = 64;

/// The key blocks [`key_blocks`] picks at most.
pub const MAX_AUTO_KEY_BLOCKS: usize = 16;

/// Keys of one AMP K-block: a key block of a multiple of this fills whole `$CWEI` lanes.
const AMP_KEYS: usize = 16;

/// The key blocks of the encoder's attention for `tokens` keys, at any batch:
/// * the largest count up to [`MAX_AUTO_KEY_BLOCKS`] whose blocks are whole AMP K-blocks of 16
///   keys (the built-in model's 64 tokens: 4 blocks of 16);
/// * else the largest divisor of `tokens` up to [`MAX_AUTO_KEY_BLOCKS`] that leaves at least
///   [`MIN_KEY_BLOCK`] keys a block (So400m/14's 729 tokens: 9 blocks of 81), or 1.
///
/// Measured (`tessera run`, simulated cropped cycles): one So400m/14 layer with the head at
/// batch 1, 538,117 in 9 blocks against 546,795 whole (557,555 against 562,699 before the
/// padded heads and the unit-scale softmax; before each block's values went into `$CWEI` order
/// through whole 4 × 4 transposes, `transpose4x4_f16`, 590,954 against 574,884, and the keys
/// were split from batch 2 only); at batch 2 and 4 see the README. The built-in model (64 tokens):
/// batch 1, 133,568 in 4 blocks against 145,500 whole; batch 2, 144,535 against 150,264
/// (2 blocks 148,248, 8 blocks 149,494).
pub fn key_blocks(tokens: usize) -> usize {
    let aligned = (2..=MAX_AUTO_KEY_BLOCKS)
        .rev()
        .find(|&c| tokens.is_multiple_of(c) && (tokens / c).is_multiple_of(AMP_KEYS));
    if let Some(c) = aligned {
        return c;
    }
    (1..=MAX_AUTO_KEY_BLOCKS.min(tokens / MIN_KEY_BLOCK).max(1))
        .rev()
        .find(|c| tokens.is_multiple_of(*c))
        .unwrap_or(1)
}

/// Attention split along the keys into `blocks` blocks, for `q`, `k`, `v` `[n, t, d]` (n = batch ×
/// heads) → `[n, t, d]`. Every (head, key block) is a batch entry of two products, so a tile
/// holds a block of queries against one block of keys and values, and the probabilities never
/// move: per block the scores `q kᵀ`, their [`softmax_part`](GraphBuilder::softmax_part) (the
/// block's maximum, exponentials and their sum), the exponentials times the block's values;
/// then [`attention_combine`](GraphBuilder::attention_combine) rescales the blocks by
/// `exp(m_j − M)` and divides by the rescaled sum, which is the softmax over all keys.
pub(super) fn blocked_attention(
    b: &mut GraphBuilder,
    (q, k, v): (ValueHandle, ValueHandle, ValueHandle),
    (n, t, d): (usize, usize, usize),
    blocks: usize,
    scale: f32,
    values_in_blocks: bool,
    out_width: usize,
) -> Result<ValueHandle, GraphError> {
    let kc = t / blocks;
    // Every key block meets every query: the queries repeated per block (a view).
    let q = b.reshape("q.rows", q, [n, 1, t, d])?;
    let q = b.broadcast("q.blocks", q, [n, blocks, t, d])?;
    let q = b.reshape("q.parts", q, [n * blocks, t, d])?;
    let k = b.reshape("k.blocks", k, [n, blocks, kc, d])?;
    let kt = b.transpose("k.t", k, &[0, 1, 3, 2])?;
    let kt = b.reshape("k.parts", kt, [n * blocks, d, kc])?;
    let scores = b.batched_matmul("scores", q, kt)?;
    let part = b.softmax_part("probs", scores, scale)?;
    // Each row: the exponentials in whole AMP K-blocks (zeros past the block's keys), then
    // (m, l, 0, 0). The product reads them whole, against the block's values padded with zero
    // rows as far: where the softmax part writes AMP panels, its exponentials are the
    // product's operand as they lie.
    let padded = tessera_codegen::graph::op::softmax_part_exp_columns(kc);
    let e = b.slice("probs.e", part, 2, 0, padded)?;
    let stats = b.slice("probs.stats", part, 2, padded, padded + 2)?;
    // `values_in_blocks`: v is `[n · blocks, padded, d]` already (the values projected
    // transposed, each block's keys padded).
    let v = if values_in_blocks {
        v
    } else {
        let mut v = b.reshape("v.parts", v, [n * blocks, kc, d])?;
        if padded > kc {
            v = b.pad("v.pad", v, 1, padded)?;
        }
        v
    };
    let parts = b.batched_matmul("context.parts", e, v)?;
    // The combine reads a key block's rows together, as the product writes them, so the rows
    // a combine tile takes from one product tile travel as one run.
    let mut parts = b.reshape("context.parts.rows", parts, [n, blocks, t, d])?;
    // `out_width` < d: the columns past it (the heads' padding) are not combined.
    if out_width < d {
        parts = b.slice("context.parts.cols", parts, 3, 0, out_width)?;
    }
    // The statistics likewise a block's rows together, as each block's part writes them.
    let stats = b.reshape("probs.stats.blocks", stats, [n, blocks, t, 2])?;
    b.attention_combine("context", parts, stats)
}

/// The attention over whole rows of keys: the scores, their softmax, the context product
/// (transposed or chunked along the keys as `precision` says), the heads merged.
pub(super) fn whole_row_attention(
    b: &mut GraphBuilder,
    precision: &Precision,
    (q, k, v): (ValueHandle, ValueHandle, ValueHandle),
    (batch, heads, tokens): (usize, usize, usize),
    chunks: Option<usize>,
    scale: f32,
) -> Result<ValueHandle, GraphError> {
    let kt = b.transpose("k.t", k, &[0, 2, 1])?;
    let scores = b.batched_matmul("scores", q, kt)?;
    let probs = b.softmax("probs", scores, scale)?;
    let context = if let Some(c) = chunks {
        chunked_context(b, probs, v, batch * heads, tokens, c)?
    } else if precision.transposed_context {
        // `(vᵀ pᵀ)ᵀ`: a head's values (its width in rows) stream through each `$CWEI` load
        // of 16 keys × 16 queries of the probabilities, instead of a few query rows through
        // each load of 16 keys × 16 of the head's columns.
        let vt = b.transpose("v.t", v, &[0, 2, 1])?;
        let pt = b.transpose("probs.t", probs, &[0, 2, 1])?;
        let ct = b.batched_matmul("context", vt, pt)?;
        b.transpose("context.t", ct, &[0, 2, 1])?
    } else {
        b.batched_matmul("context", probs, v)?
    };
    b.merge_heads("context.merge", context, heads)
}
