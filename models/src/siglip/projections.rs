//! The encoder's query, key and value projections in their graph forms: one product with the
//! heads padded to whole AMP blocks, with K split its values summed as AMP weights
//! ([`Precision::values_summed_as_weights`], the default with key blocks), or the values
//! projected transposed (with key blocks, [`Precision::values_transposed`]; the chunked
//! context, [`Precision::key_chunked_context`]).

use tessera_codegen::graph::{DType, GraphBuilder, GraphError, ValueHandle};

use super::config::SiglipVisionConfig;
use super::graph::{Dense, Precision};
use super::k_split::{k_split_linear, k_split_product, k_split_terms, sum_terms};
use super::weights::names;

/// Q, K and V (`[batch · heads, tokens, width]`, V transposed in the chunked form and in key
/// blocks with [`Precision::values_transposed`]) of the LayerNorm output `h`, for `chunks`
/// key chunks of the context or `blocks` key blocks of the attention.
pub(super) fn qkv_projections(
    b: &mut GraphBuilder,
    config: &SiglipVisionConfig,
    precision: &Precision,
    prefix: &str,
    h: ValueHandle,
    (tokens, batch): (usize, usize),
    (chunks, blocks): (Option<usize>, usize),
) -> Result<(ValueHandle, ValueHandle, ValueHandle), GraphError> {
    let d = config.hidden_size;
    let heads = config.num_attention_heads;
    let qkv_layer = Dense {
        label: "qkv",
        weight: names::QKV_WEIGHT,
        bias: names::QKV_BIAS,
        in_features: d,
        out_features: 3 * d,
        fp8: precision.fp8_attention_projections,
    };
    let hp = super::derived::padded_head_dim(config);
    let (q, k, v) = if chunks.is_some() {
        // Q and K token-major (the scores read them so), V transposed (the chunked context reads
        // a chunk's values key-minor, as `$CWEI` takes them): `vᵀ = W_vᵀ xᵀ`, its bias folded into
        // the output projection's (the probabilities of a row sum to one).
        let (input, w) = qkv_layer.operands(b, precision, prefix, h)?;
        let wqk = b.slice("qk.weight", w, 1, 0, 2 * d)?;
        let qk = b.matmul("qk", input, wqk)?;
        let bias = b.weight(&format!("{prefix}{}", names::QKV_BIAS), DType::F32, [3 * d])?;
        let bias = b.slice("qk.bias.cols", bias, 0, 0, 2 * d)?;
        let qk = b.bias_add("qk.bias", qk, bias)?;
        let wv = b.slice("v.weight", w, 1, 2 * d, 3 * d)?;
        let wvt = b.transpose("v.weight.t", wv, &[1, 0])?;
        let xt = b.transpose("v.x.t", input, &[1, 0])?;
        let vt = b.matmul("v.t", wvt, xt)?;
        let hd = d / heads;
        let vt = b.reshape("v.t.heads", vt, [heads, hd, batch, tokens])?;
        let vt = b.transpose("v.t.batch", vt, &[2, 0, 1, 3])?;
        let vt = b.reshape("v.t.rows", vt, [batch * heads, hd, tokens])?;
        let q = b.slice("q", qk, 1, 0, d)?;
        let k = b.slice("k", qk, 1, d, 2 * d)?;
        let q = b.split_heads("q.heads", q, heads, batch)?;
        let k = b.split_heads("k.heads", k, heads, batch)?;
        (q, k, vt)
    } else if precision.values_transposed && blocks > 1 {
        // Q and K from one product with the padded heads' weights, V transposed from its own:
        // `vᵀ = W_vᵀ xᵀ`, the tokens of each key block padded to its exponentials' width, so
        // every block's values reach `$CWEI` order in words; the value bias is folded into the
        // output projection's (the probabilities of a row sum to one).
        let qkv_heads = padded_heads(qkv_layer, heads * hp);
        let w = heads * hp;
        let parts = precision.k_parts_for(config, batch).qkv;
        let (input, weight) = qkv_heads.operands(b, precision, prefix, h)?;
        let wqk = b.slice("qk.weight", weight, 1, 0, 2 * w)?;
        let qk = k_split_product(b, "qk", input, wqk, parts)?;
        let qk = qk_bias_add(b, prefix, qk, w)?;
        let kc = tokens / blocks;
        let kp = tessera_codegen::graph::op::softmax_part_exp_columns(kc);
        let xb = b.reshape("v.x.blocks", input, [batch * blocks, kc, d])?;
        let xb = if kp > kc {
            b.pad("v.x.pad", xb, 1, kp)?
        } else {
            xb
        };
        let xb = b.reshape("v.x.rows", xb, [batch * blocks * kp, d])?;
        let xt = b.transpose("v.x.t", xb, &[1, 0])?;
        let wv = b.slice("v.weight", weight, 1, 2 * w, 3 * w)?;
        let wvt = b.transpose("v.weight.t", wv, &[1, 0])?;
        let vt = k_split_product(b, "v.t", wvt, xt, parts)?;
        let vt = b.reshape("v.t.blocks", vt, [heads, hp, batch, blocks, kp])?;
        let v = b.transpose("v.blocks", vt, &[2, 0, 3, 4, 1])?;
        let v = b.reshape("v.parts", v, [batch * heads * blocks, kp, hp])?;
        let (q, k) = queries_and_keys(b, qk, w, (heads, batch))?;
        (q, k, v)
    } else if precision.values_summed_as_weights_for(config, tokens, batch) {
        // The padded heads' product split along K; the queries' and keys' partial products
        // summed with their bias, the values' on their own: each key block's rows padded to
        // whole AMP K-blocks and the sum written in `$CWEI` order (`add_cwei_f16`), as the
        // products with the exponentials read them. The value bias is folded into the output
        // projection's (the probabilities of a row sum to one).
        let qkv_heads = padded_heads(qkv_layer, heads * hp);
        let w = heads * hp;
        let parts = precision.k_parts_for(config, batch).qkv;
        let (input, weight) = qkv_heads.operands(b, precision, prefix, h)?;
        let terms = k_split_terms(b, "qkv", input, weight, parts)?;
        let qk_terms = terms
            .iter()
            .enumerate()
            .map(|(i, &t)| b.slice(&format!("qk.part{i}"), t, 1, 0, 2 * w))
            .collect::<Result<Vec<_>, _>>()?;
        let qk = sum_terms(b, "qk", qk_terms)?;
        let qk = qk_bias_add(b, prefix, qk, w)?;
        let kc = tokens / blocks;
        let kp = tessera_codegen::graph::op::softmax_part_exp_columns(kc);
        let v_terms = terms
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let v = b.slice(&format!("v.part{i}"), t, 1, 2 * w, 3 * w)?;
                let v = b.reshape(&format!("v.part{i}.blocks"), v, [batch * blocks, kc, w])?;
                let v = if kp > kc {
                    b.pad(&format!("v.part{i}.pad"), v, 1, kp)?
                } else {
                    v
                };
                b.reshape(&format!("v.part{i}.rows"), v, [batch * blocks * kp, w])
            })
            .collect::<Result<Vec<_>, _>>()?;
        let v = sum_terms(b, "v", v_terms)?;
        let v = b.reshape("v.blocks", v, [batch, blocks, kp, heads, hp])?;
        let v = b.transpose("v.heads", v, &[0, 3, 1, 2, 4])?;
        let v = b.reshape("v.parts", v, [batch * heads * blocks, kp, hp])?;
        let (q, k) = queries_and_keys(b, qk, w, (heads, batch))?;
        (q, k, v)
    } else {
        // Every head padded to whole AMP channel blocks, the attention scale in the queries
        // (`derived::QKV_WEIGHT_HEADS`).
        let qkv_heads = padded_heads(qkv_layer, heads * hp);
        let qkv = k_split_linear(
            b,
            precision,
            prefix,
            qkv_heads,
            h,
            precision.k_parts_for(config, batch).qkv,
        )?;
        let w = heads * hp;
        let q = b.slice("q", qkv, 1, 0, w)?;
        let k = b.slice("k", qkv, 1, w, 2 * w)?;
        let v = b.slice("v", qkv, 1, 2 * w, 3 * w)?;
        let q = b.split_heads("q.heads", q, heads, batch)?;
        let k = b.split_heads("k.heads", k, heads, batch)?;
        let v = b.split_heads("v.heads", v, heads, batch)?;
        (q, k, v)
    };
    Ok((q, k, v))
}

/// The fused QKV layer over the padded heads' weights (`derived::QKV_WEIGHT_HEADS`: every head
/// padded to whole AMP channel blocks, the attention scale in the queries), `w` columns a
/// third.
fn padded_heads(qkv_layer: Dense, w: usize) -> Dense {
    Dense {
        weight: super::derived::QKV_WEIGHT_HEADS,
        bias: super::derived::QKV_BIAS_HEADS,
        out_features: 3 * w,
        ..qkv_layer
    }
}

/// The queries' and keys' bias (the first two thirds of the padded heads' bias) added to `qk`.
fn qk_bias_add(
    b: &mut GraphBuilder,
    prefix: &str,
    qk: ValueHandle,
    w: usize,
) -> Result<ValueHandle, GraphError> {
    let bias = b.weight(
        &format!("{prefix}{}", super::derived::QKV_BIAS_HEADS),
        DType::F32,
        [3 * w],
    )?;
    let bias = b.slice("qk.bias.cols", bias, 0, 0, 2 * w)?;
    b.bias_add("qk.bias", qk, bias)
}

/// Q and K split into heads from `qk` (`[rows, 2w]`, the queries then the keys).
fn queries_and_keys(
    b: &mut GraphBuilder,
    qk: ValueHandle,
    w: usize,
    (heads, batch): (usize, usize),
) -> Result<(ValueHandle, ValueHandle), GraphError> {
    let q = b.slice("q", qk, 1, 0, w)?;
    let k = b.slice("k", qk, 1, w, 2 * w)?;
    let q = b.split_heads("q.heads", q, heads, batch)?;
    let k = b.split_heads("k.heads", k, heads, batch)?;
    Ok((q, k))
}
