//! A host f32 reference forward of the SigLIP vision encoder, to measure the error of a
//! compiled run.
//!
//! Plain f32 storage between steps, no FP8 and no f16. Matrix products (the dense layers and
//! attention's scores and context) run in f32 on `ndarray`'s matrix product, whose
//! `matrixmultiply` kernels use the host's SIMD units (a So400m layer's 13 G multiply-adds in
//! about a second instead of eight in scalar f64); their summation order is the kernel's, fixed
//! for a host CPU and independent of the thread count, and f32 accumulation over at most a few
//! thousand terms errs by ~1e-6 relative, far below the f16 chip's ~1e-2. LayerNorm statistics,
//! softmax sums and element-wise steps accumulate in f64 and round once to f32. It is written
//! from the model's definition (Hugging Face `modeling_siglip.py`), not from the graph, and
//! reads weights from the store layout of [`crate::siglip::weights`]. Transcendentals use the
//! host's f64 `exp`/`tanh`/`sqrt`.
//!
//! The pieces (MLP block, encoder layer, encoder, embeddings) are here; the whole tower from
//! `pixel_values` to `last_hidden_state` and `pooler_output` is [`tower`].

use std::fmt;

pub mod tower;

pub use tower::{embeddings_from_pixels, pooling_head, post_layernorm, vision_tower, TowerOutputs};

use tessera_codegen::graph::{HostTensor, Shape, WeightStore};

use crate::siglip::config::SiglipVisionConfig;
use crate::siglip::graph::layer_prefix;
use crate::siglip::weights::names;

/// Why the reference could not run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReferenceError {
    #[error("E-REF-001: weight {name} is not in the weight store")]
    MissingWeight { name: String },

    #[error("E-REF-002: weight {name} is {got} in the store, expected {expected}")]
    WeightShape {
        name: String,
        got: Shape,
        expected: Shape,
    },

    #[error("E-REF-003: {what} has {got} values, expected {expected} ({shape})")]
    InputLength {
        what: &'static str,
        got: usize,
        expected: usize,
        shape: Shape,
    },

    #[error("E-REF-004: {requested} encoder layers requested, but the config has {available}")]
    Layers { requested: usize, available: usize },

    #[error("E-REF-005: invalid config: {0}")]
    Config(#[from] crate::siglip::config::ConfigError),

    #[error(transparent)]
    Pixels(#[from] crate::pixels::PixelError),
}

fn weight<'a>(
    store: &'a WeightStore,
    name: &str,
    shape: &[usize],
) -> Result<&'a [f32], ReferenceError> {
    let t: &HostTensor = store
        .get(name)
        .ok_or_else(|| ReferenceError::MissingWeight {
            name: name.to_string(),
        })?;
    if t.shape.dims() != shape {
        return Err(ReferenceError::WeightShape {
            name: name.to_string(),
            got: t.shape.clone(),
            expected: Shape::from(shape),
        });
    }
    Ok(&t.data)
}

fn check_len(what: &'static str, x: &[f32], shape: &[usize]) -> Result<(), ReferenceError> {
    let expected: usize = shape.iter().product();
    if x.len() != expected {
        return Err(ReferenceError::InputLength {
            what,
            got: x.len(),
            expected,
            shape: Shape::from(shape),
        });
    }
    Ok(())
}

/// `a [m, k] · b [k, n]` in f32 (`ndarray`'s matrix product; see the module docs).
///
/// Rows go in blocks of [`MATMUL_ROWS`] run in parallel on the current rayon pool; each
/// output's k products are summed by the same kernel in the same order whatever the blocks, so
/// neither the blocking nor the thread count changes a bit. `a` and `b` hold at least `m·k`
/// and `k·n` values (the callers check their inputs' lengths first; it panics otherwise).
pub fn matmul(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    use ndarray::linalg::general_mat_mul;
    use ndarray::{ArrayView2, ArrayViewMut2};
    use rayon::prelude::*;
    let mut out = vec![0.0f32; m * n];
    if n == 0 || m == 0 {
        return out;
    }
    let b = ArrayView2::from_shape((k, n), &b[..k * n]).expect("b holds k·n values");
    out.par_chunks_mut(MATMUL_ROWS * n)
        .enumerate()
        .for_each(|(block, out)| {
            let first = block * MATMUL_ROWS;
            let rows = out.len() / n;
            let a = ArrayView2::from_shape((rows, k), &a[first * k..(first + rows) * k])
                .expect("a block holds rows·k values");
            let mut c = ArrayViewMut2::from_shape((rows, n), out).expect("rows·n outputs");
            general_mat_mul(1.0, &a, &b, 0.0, &mut c);
        });
    out
}

/// Rows of a [`matmul`] block: enough to amortise the packing of `b`'s panels.
const MATMUL_ROWS: usize = 64;

/// Adds `bias[n]` to every row of `x [.., n]`.
pub fn add_bias(x: &mut [f32], bias: &[f32]) {
    for row in x.chunks_mut(bias.len()) {
        for (v, &b) in row.iter_mut().zip(bias) {
            *v = (*v as f64 + b as f64) as f32;
        }
    }
}

/// LayerNorm over rows of length `gamma.len()`, biased variance.
pub fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], eps: f32) -> Vec<f32> {
    let n = gamma.len();
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks(n) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + eps as f64).sqrt();
        out.extend(
            row.iter()
                .zip(gamma.iter().zip(beta))
                .map(|(&v, (&g, &b))| ((v as f64 - mean) * inv * g as f64 + b as f64) as f32),
        );
    }
    out
}

/// GELU, tanh approximation.
pub fn gelu_tanh(x: f32) -> f32 {
    let x = x as f64;
    (0.5 * x * (1.0 + (0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x)).tanh())) as f32
}

/// Softmax of `scale · x` over each row of length `n`, in place.
pub fn softmax_rows(x: &mut [f32], n: usize, scale: f32) {
    for row in x.chunks_mut(n) {
        let max = row
            .iter()
            .map(|&v| v as f64 * scale as f64)
            .fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = row
            .iter()
            .map(|&v| (v as f64 * scale as f64 - max).exp())
            .collect();
        let sum: f64 = e.iter().sum();
        for (o, v) in row.iter_mut().zip(e) {
            *o = (v / sum) as f32;
        }
    }
}

fn residual(x: &[f32], y: &mut [f32]) {
    for (o, &a) in y.iter_mut().zip(x) {
        *o = (*o as f64 + a as f64) as f32;
    }
}

/// The MLP half of layer `layer` with its residual, on `x [rows, D]`.
pub fn mlp_block(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    layer: usize,
    x: &[f32],
    rows: usize,
) -> Result<Vec<f32>, ReferenceError> {
    let (d, f) = (config.hidden_size, config.intermediate_size);
    check_len("x", x, &[rows, d])?;
    let p = layer_prefix(layer);
    let w = |n: &str, s: &[usize]| weight(store, &format!("{p}{n}"), s);
    let h = layer_norm(
        x,
        w(names::LN2_WEIGHT, &[d])?,
        w(names::LN2_BIAS, &[d])?,
        config.layer_norm_eps,
    );
    let mut h = matmul(&h, w(names::FC1_WEIGHT, &[d, f])?, rows, d, f);
    add_bias(&mut h, w(names::FC1_BIAS, &[f])?);
    h.iter_mut().for_each(|v| *v = gelu_tanh(*v));
    let mut y = matmul(&h, w(names::FC2_WEIGHT, &[f, d])?, rows, f, d);
    add_bias(&mut y, w(names::FC2_BIAS, &[d])?);
    residual(x, &mut y);
    Ok(y)
}

/// Encoder layer `layer` on `x [batch·tokens, D]` (each image's tokens attend only to each other).
pub fn encoder_layer(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    layer: usize,
    x: &[f32],
    tokens: usize,
    batch: usize,
) -> Result<Vec<f32>, ReferenceError> {
    let d = config.hidden_size;
    let rows = batch * tokens;
    check_len("x", x, &[rows, d])?;
    let (heads, hd) = (config.num_attention_heads, config.head_dim());
    let p = layer_prefix(layer);
    let w = |n: &str, s: &[usize]| weight(store, &format!("{p}{n}"), s);

    let h = layer_norm(
        x,
        w(names::LN1_WEIGHT, &[d])?,
        w(names::LN1_BIAS, &[d])?,
        config.layer_norm_eps,
    );
    let mut qkv = matmul(&h, w(names::QKV_WEIGHT, &[d, 3 * d])?, rows, d, 3 * d);
    add_bias(&mut qkv, w(names::QKV_BIAS, &[3 * d])?);
    let context = attention(&qkv, batch, tokens, heads, hd);
    let mut attn = matmul(&context, w(names::OUT_WEIGHT, &[d, d])?, rows, d, d);
    add_bias(&mut attn, w(names::OUT_BIAS, &[d])?);
    residual(x, &mut attn);
    mlp_block(config, store, layer, &attn, rows)
}

/// Multi-head attention of `qkv [batch·tokens, 3·D]` (each row `[q | k | v]`, each `D = heads ×
/// head_dim`): per image and head, `softmax(q·kᵀ / √head_dim) · v`, as `[batch·tokens, D]` with
/// the heads side by side. Images × heads run in parallel; each is two f32 matrix products on
/// strided views of `qkv` (no copies) around a row softmax.
fn attention(qkv: &[f32], batch: usize, tokens: usize, heads: usize, hd: usize) -> Vec<f32> {
    // Slices by `slice_axis`: the `s!` macro allows `unsafe_code`, which the crate forbids.
    use ndarray::{ArrayView2, Axis, Slice};
    use rayon::prelude::*;
    let d = heads * hd;
    let mut context = vec![0.0f32; batch * tokens * d];
    if context.is_empty() {
        return context;
    }
    let qkv = ArrayView2::from_shape((batch * tokens, 3 * d), qkv).expect("qkv is [rows, 3·D]");
    let scale = (1.0 / (hd as f64).sqrt()) as f32;
    let per_head: Vec<ndarray::Array2<f32>> = (0..batch * heads)
        .into_par_iter()
        .map(|bh| {
            let (b, head) = (bh / heads, bh % heads);
            let part = |p: usize| {
                let mut view = qkv;
                view.slice_axis_inplace(Axis(0), Slice::from(b * tokens..(b + 1) * tokens));
                view.slice_axis_inplace(
                    Axis(1),
                    Slice::from(p * d + head * hd..p * d + (head + 1) * hd),
                );
                view
            };
            let mut scores = part(0).dot(&part(1).t());
            let probs = scores
                .as_slice_mut()
                .expect("a fresh product is in standard layout");
            softmax_rows(probs, tokens, scale);
            scores.dot(&part(2))
        })
        .collect();
    for (bh, out) in per_head.iter().enumerate() {
        let (b, head) = (bh / heads, bh % heads);
        for (t, row) in out.rows().into_iter().enumerate() {
            let at = (b * tokens + t) * d + head * hd;
            for (o, &v) in context[at..at + hd].iter_mut().zip(row) {
                *o = v;
            }
        }
    }
    context
}

/// Layers `0..layers` on `x [batch·tokens, D]`.
pub fn encoder(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    layers: usize,
    x: &[f32],
    tokens: usize,
    batch: usize,
) -> Result<Vec<f32>, ReferenceError> {
    let mut h = x.to_vec();
    for layer in 0..layers {
        h = encoder_layer(config, store, layer, &h, tokens, batch)?;
    }
    Ok(h)
}

/// The patch and position embeddings: `patches [batch·T, C·P·P] · W + bias + position[t]`
/// with T = `config.num_patches()`.
pub fn embeddings(
    config: &SiglipVisionConfig,
    store: &WeightStore,
    patches: &[f32],
    batch: usize,
) -> Result<Vec<f32>, ReferenceError> {
    let (d, t, k) = (config.hidden_size, config.num_patches(), config.patch_dim());
    check_len("patches", patches, &[batch * t, k])?;
    let mut y = matmul(
        patches,
        weight(store, names::PATCH_WEIGHT, &[k, d])?,
        batch * t,
        k,
        d,
    );
    add_bias(&mut y, weight(store, names::PATCH_BIAS, &[d])?);
    let pos = weight(store, names::POSITION, &[t, d])?;
    for (i, v) in y.iter_mut().enumerate() {
        *v = (*v as f64 + pos[i % (t * d)] as f64) as f32;
    }
    Ok(y)
}

/// How far `actual` is from `reference`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorReport {
    /// Number of values compared.
    pub count: usize,
    /// Largest |actual − reference| and where.
    pub max_abs: f64,
    pub max_abs_index: usize,
    /// Mean |actual − reference|.
    pub mean_abs: f64,
    /// √mean((actual − reference)²).
    pub rms: f64,
    /// √mean(reference²).
    pub reference_rms: f64,
    /// `rms / reference_rms` (0 if the reference is all zeros).
    pub relative_rms: f64,
    /// Values where one side is NaN or infinite and the other is not identical.
    pub non_finite: usize,
}

/// Compares element by element; the shorter length decides how many.
pub fn compare(reference: &[f32], actual: &[f32]) -> ErrorReport {
    let mut r = ErrorReport {
        count: 0,
        max_abs: 0.0,
        max_abs_index: 0,
        mean_abs: 0.0,
        rms: 0.0,
        reference_rms: 0.0,
        relative_rms: 0.0,
        non_finite: 0,
    };
    let (mut sum_abs, mut sum_sq, mut sum_ref) = (0.0f64, 0.0f64, 0.0f64);
    for (i, (&e, &a)) in reference.iter().zip(actual).enumerate() {
        r.count += 1;
        if !(e.is_finite() && a.is_finite()) {
            if e.to_bits() != a.to_bits() {
                r.non_finite += 1;
            }
            continue;
        }
        let diff = (a as f64 - e as f64).abs();
        if diff > r.max_abs {
            r.max_abs = diff;
            r.max_abs_index = i;
        }
        sum_abs += diff;
        sum_sq += diff * diff;
        sum_ref += (e as f64) * (e as f64);
    }
    if r.count > 0 {
        let n = r.count as f64;
        r.mean_abs = sum_abs / n;
        r.rms = (sum_sq / n).sqrt();
        r.reference_rms = (sum_ref / n).sqrt();
        r.relative_rms = if r.reference_rms > 0.0 {
            r.rms / r.reference_rms
        } else {
            0.0
        };
    }
    r
}

impl fmt::Display for ErrorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} values: max |err| {:.3e} (at {}), mean |err| {:.3e}, rms err {:.3e} ({:.3}% of rms {:.3e})",
            self.count,
            self.max_abs,
            self.max_abs_index,
            self.mean_abs,
            self.rms,
            self.relative_rms * 100.0,
            self.reference_rms
        )?;
        if self.non_finite > 0 {
            write!(f, ", {} non-finite mismatches", self.non_finite)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::siglip::weights::{synthetic_weights, WeightSelection};

    #[test]
    fn small_ops() {
        assert_eq!(
            matmul(&[1.0, 2.0, 3.0, 4.0], &[1.0, 0.0, 0.0, 1.0], 2, 2, 2),
            vec![1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(matmul(&[1.0, 2.0], &[3.0, 4.0], 1, 2, 1), vec![11.0]);
        let ln = layer_norm(&[1.0, 3.0], &[1.0, 2.0], &[0.0, 1.0], 0.0);
        assert_eq!(ln, vec![-1.0, 3.0]);
        let mut s = vec![0.0, 0.0, 1.0, 1.0];
        softmax_rows(&mut s, 2, 3.0);
        assert_eq!(s, vec![0.5, 0.5, 0.5, 0.5]);
        assert_eq!(gelu_tanh(0.0), 0.0);
        assert!((gelu_tanh(1.0) - 0.841192).abs() < 1e-6);
        let mut x = vec![1.0, 2.0, 3.0, 4.0];
        add_bias(&mut x, &[10.0, 20.0]);
        assert_eq!(x, vec![11.0, 22.0, 13.0, 24.0]);
    }

    #[test]
    fn compare_reports() {
        let r = compare(&[1.0, -2.0, 0.0, f32::NAN], &[1.5, -2.0, 0.0, 1.0]);
        assert_eq!(
            (r.count, r.max_abs, r.max_abs_index, r.non_finite),
            (4, 0.5, 0, 1)
        );
        assert!((r.rms - (0.25f64 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(
            r.to_string(),
            "4 values: max |err| 5.000e-1 (at 0), mean |err| 1.250e-1, rms err 2.500e-1 (22.361% of rms 1.118e0), 1 non-finite mismatches"
        );
    }

    #[test]
    fn attention_is_per_image() {
        // Two identical images give identical outputs; a batch of two equals two single runs.
        let c = SiglipVisionConfig::tiny();
        let store = synthetic_weights(&c, &WeightSelection::encoder(1), 3);
        let t = c.num_patches();
        let x: Vec<f32> = crate::input::synthetic_activations_f32(2 * t, c.hidden_size, 9);
        let both = encoder_layer(&c, &store, 0, &x, t, 2).unwrap();
        let first = encoder_layer(&c, &store, 0, &x[..t * c.hidden_size], t, 1).unwrap();
        let second = encoder_layer(&c, &store, 0, &x[t * c.hidden_size..], t, 1).unwrap();
        assert_eq!(&both[..t * c.hidden_size], first.as_slice());
        assert_eq!(&both[t * c.hidden_size..], second.as_slice());
    }

    #[test]
    fn errors() {
        let c = SiglipVisionConfig::tiny();
        let store = synthetic_weights(&c, &WeightSelection::encoder(1), 3);
        assert_eq!(
            mlp_block(&c, &store, 0, &[0.0; 10], 16)
                .unwrap_err()
                .to_string(),
            "E-REF-003: x has 10 values, expected 1024 ([16, 64])"
        );
        assert_eq!(
            mlp_block(&c, &store, 1, &[0.0; 1024], 16).unwrap_err().to_string(),
            "E-REF-001: weight vision_model.encoder.layers.1.layer_norm2.weight is not in the weight store"
        );
        let mut bad = store.clone();
        bad.insert(
            "vision_model.encoder.layers.0.mlp.fc1.weight",
            HostTensor::new([128, 64], vec![0.0; 128 * 64]).unwrap(),
        );
        assert_eq!(
            mlp_block(&c, &bad, 0, &[0.0; 1024], 16).unwrap_err().to_string(),
            "E-REF-002: weight vision_model.encoder.layers.0.mlp.fc1.weight is [128, 64] in the store, expected [64, 128]"
        );
        assert_eq!(
            embeddings(&c, &store, &[0.0; 16 * 588], 1).unwrap_err().to_string(),
            "E-REF-001: weight vision_model.embeddings.patch_embedding.weight is not in the weight store"
        );
    }
}
