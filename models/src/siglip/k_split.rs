//! The encoder's products with K split into chunks that run side by side on parts of the chip
//! ([`k_split_linear`]), and how many chunks each product gets ([`EncoderKParts`]).

use tessera_codegen::graph::{DType, GraphBuilder, GraphError, ValueHandle};

use super::config::SiglipVisionConfig;
use super::graph::{linear, Dense, Precision, MAX_K_PARTS};

/// K-chunks of each encoder product (1: not split). A split product runs its chunks side by
/// side on parts of the chip, as the batch entries of one product, and sums them with a tree
/// of adds ([`k_split_linear`]): each tile receives only its chunk of the activations, where
/// an unsplit product streams all of K through every tile of a row block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncoderKParts {
    pub qkv: usize,
    pub out_proj: usize,
    pub fc1: usize,
    pub fc2: usize,
}

impl EncoderKParts {
    /// No product split.
    pub const NONE: EncoderKParts = EncoderKParts {
        qkv: 1,
        out_proj: 1,
        fc1: 1,
        fc2: 1,
    };

    /// The split for a model's sizes: a product of at least [`MIN_SPLIT_MACS`] per image has
    /// its K halved or quartered while the chunks keep at least [`MIN_SPLIT_CHUNK`] elements:
    /// fc2 up to 4 chunks, the output projection, fc1 and the QKV projection up to 2.
    ///
    /// Measured on one So400m/14 layer with the head at batch 1 (`tessera estimate`, the plan
    /// otherwise the same): none 723,600 estimated cycles; fc2 in 4 689,979, in 2 or 8
    /// 696,765 / 778,180; with the output projection in 2 674,501, in 3 or 4 667,641 /
    /// 673,336; with fc1 in 2 as well 667,037 (simulated 662,451, against 719,614 unsplit);
    /// the QKV projection in 2 as well 699,253, which the planner took with its sum in rows
    /// one to a tile (the attention then gathered each head's queries, keys and values row
    /// by row). Since a sum may take blocks of rows × 16s of columns (`blocks 6x240 on
    /// 1440`, the blocks the unsplit product wrote), the QKV projection in 2 pays
    /// (simulated on a transformers-written So400m/14 checkpoint with the head: 365,107 → 352,864 cropped at
    /// batch 1, peak SRAM 409 → 289 KiB; estimated at batch 2 643,775 → 600,657; in 3 or 4
    /// 364,442 / 366,682 estimated at batch 1 against 357,403 in 2). The built-in tower (hidden 256, MLP 1024, 256
    /// tokens) is too small: fc2 in 2 makes it 173,832 against 166,114. Above
    /// [`MAX_SPLIT_BATCH`] images only the QKV projection is split, and above
    /// [`MAX_QKV_SPLIT_BATCH`] nothing.
    pub fn for_config(config: &SiglipVisionConfig, batch: usize) -> EncoderKParts {
        if batch > MAX_QKV_SPLIT_BATCH {
            return EncoderKParts::NONE;
        }
        let (d, f, t) = (
            config.hidden_size,
            config.intermediate_size,
            config.num_patches(),
        );
        let parts = |k: usize, n: usize, most: usize| {
            if t.saturating_mul(k).saturating_mul(n) < MIN_SPLIT_MACS {
                return 1;
            }
            [4, 2]
                .into_iter()
                .find(|&p| p <= most && k.is_multiple_of(p) && k / p >= MIN_SPLIT_CHUNK)
                .unwrap_or(1)
        };
        let qkv = parts(d, 3 * d, 2);
        if batch > MAX_SPLIT_BATCH {
            return EncoderKParts {
                qkv,
                ..EncoderKParts::NONE
            };
        }
        EncoderKParts {
            qkv,
            out_proj: parts(d, d, 2),
            fc1: parts(d, f, 2),
            fc2: parts(f, d, 4),
        }
    }

    /// The four counts as `qkv,out_proj,fc1,fc2` (the CLI's `--k-parts`).
    pub fn parse(text: &str) -> Option<EncoderKParts> {
        let v: Vec<usize> = text
            .split(',')
            .map(|p| {
                p.trim()
                    .parse()
                    .ok()
                    .filter(|&n| (1..=MAX_K_PARTS).contains(&n))
            })
            .collect::<Option<_>>()?;
        match v[..] {
            [qkv, out_proj, fc1, fc2] => Some(EncoderKParts {
                qkv,
                out_proj,
                fc1,
                fc2,
            }),
            _ => None,
        }
    }
}

/// Most images per run [`EncoderKParts::for_config`] splits for: at batch 4 the chunks' weights,
/// replicated over each chunk's row blocks, leave no room for the activations (So400m+head:
/// `E-PLAN-004 batched_matmul layer0.fc2.parts: no strategy fits`, 306,629 bytes over on a
/// tile); batches 1 and 2 are measured faster split.
pub const MAX_SPLIT_BATCH: usize = 2;

/// Most images per run [`EncoderKParts::for_config`] splits the QKV projection for (the other
/// products up to [`MAX_SPLIT_BATCH`]): split, its values' partials are summed as AMP weights
/// (`Precision::values_summed_as_weights`). One So400m/14 layer with the head at batch 4,
/// estimated: 1,241,265 cycles unsplit, 1,183,870 with the QKV projection in 2 (its product's
/// weights gathered; compile 388 s → 145 s).
pub const MAX_QKV_SPLIT_BATCH: usize = 4;

/// Fewest K elements per chunk [`EncoderKParts::for_config`] makes.
pub const MIN_SPLIT_CHUNK: usize = 512;

/// Fewest multiply-accumulates per image of a product [`EncoderKParts::for_config`] splits
/// (2^28; So400m's smallest, the output projection, has 967 M, the built-in tower's largest
/// 67 M).
pub const MIN_SPLIT_MACS: usize = 1 << 28;

/// A [`Dense`] layer with K split into `parts` chunks: one batched product whose batch
/// entries are the chunks (`[parts, rows, K/parts] · [parts, K/parts, out]`), so each chunk's
/// tiles receive only their share of K, and the chunks summed by a tree of adds.
pub(super) fn k_split_linear(
    b: &mut GraphBuilder,
    precision: &Precision,
    prefix: &str,
    layer: Dense,
    x: ValueHandle,
    parts: usize,
) -> Result<ValueHandle, GraphError> {
    if parts <= 1 || !layer.in_features.is_multiple_of(parts) {
        return linear(b, precision, prefix, layer, x);
    }
    let (input, w) = layer.operands(b, precision, prefix, x)?;
    let y = k_split_product(b, layer.label, input, w, parts)?;
    let n = layer.out_features;
    let bias = b.weight(&format!("{prefix}{}", layer.bias), DType::F32, [n])?;
    b.bias_add(&format!("{}.bias", layer.label), y, bias)
}

/// `a [rows, k] · w [k, n]` with K split into `parts` chunks that run as the batch entries of
/// one product, their partial products summed as a tree of adds (`parts` must divide K; 1:
/// one product).
pub(super) fn k_split_product(
    b: &mut GraphBuilder,
    label: &str,
    input: ValueHandle,
    w: ValueHandle,
    parts: usize,
) -> Result<ValueHandle, GraphError> {
    let k = b
        .ty(input)
        .and_then(|t| t.shape.dims().last().copied())
        .unwrap_or(0);
    if parts <= 1 || !k.is_multiple_of(parts) {
        return b.matmul(label, input, w);
    }
    let terms = k_split_terms(b, label, input, w, parts)?;
    sum_terms(b, label, terms)
}

/// The partial products of `a [rows, k] · w [k, n]` with K split into `parts` chunks (which
/// must divide K) that run as the batch entries of one product: `parts` values `[rows, n]`.
pub(super) fn k_split_terms(
    b: &mut GraphBuilder,
    label: &str,
    input: ValueHandle,
    w: ValueHandle,
    parts: usize,
) -> Result<Vec<ValueHandle>, GraphError> {
    let dims = |v: ValueHandle| b.ty(v).map_or(vec![0, 0], |t| t.shape.dims().to_vec());
    let (ad, wd) = (dims(input), dims(w));
    let (rows, k) = match ad.split_last() {
        Some((&k, lead)) => (lead.iter().product::<usize>(), k),
        None => (0, 0),
    };
    let n = wd.last().copied().unwrap_or(0);
    let kc = k / parts.max(1);
    let a = b.reshape(&format!("{label}.a.chunks"), input, [rows, parts, kc])?;
    let a = b.transpose(&format!("{label}.a.t"), a, &[1, 0, 2])?;
    let w = b.reshape(&format!("{label}.w.parts"), w, [parts, kc, n])?;
    let p = b.batched_matmul(&format!("{label}.parts"), a, w)?;
    (0..parts)
        .map(|i| {
            let s = b.slice(&format!("{label}.part{i}"), p, 0, i, i + 1)?;
            b.reshape(&format!("{label}.part{i}.rows"), s, [rows, n])
        })
        .collect()
}

/// Terms summed as a tree of adds (`{label}.sum{level}.{j}`), each level pairing neighbours.
pub(super) fn sum_terms(
    b: &mut GraphBuilder,
    label: &str,
    mut terms: Vec<ValueHandle>,
) -> Result<ValueHandle, GraphError> {
    let mut level = 0;
    while terms.len() > 1 {
        let mut next = Vec::new();
        for (j, pair) in terms.chunks(2).enumerate() {
            // A chunk of `chunks(2)` holds one or two terms.
            next.push(match pair {
                [a, c] => b.add(&format!("{label}.sum{level}.{j}"), *a, *c)?,
                _ => pair[0],
            });
        }
        terms = next;
        level += 1;
    }
    Ok(terms[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The automatic split: So400m/14's products as measured best (`2,2,2,4`), nothing for a
    /// tower below MIN_SPLIT_MACS per product, and every chunk whole and at least
    /// MIN_SPLIT_CHUNK long for any sizes.
    #[test]
    fn the_automatic_k_split_keeps_chunks_whole_and_long() {
        let so400m = SiglipVisionConfig::so400m_patch14_378();
        let p = EncoderKParts::for_config(&so400m, 1);
        assert_eq!((p.qkv, p.out_proj, p.fc1, p.fc2), (2, 2, 2, 4));
        let mut small = SiglipVisionConfig::so400m_patch14_378();
        (small.hidden_size, small.intermediate_size) = (256, 1024);
        (small.image_size, small.patch_size) = (224, 14);
        assert_eq!(EncoderKParts::for_config(&small, 1), EncoderKParts::NONE);
        assert_eq!(EncoderKParts::for_config(&so400m, 2), p);
        assert_eq!(
            EncoderKParts::for_config(&so400m, MAX_SPLIT_BATCH + 1),
            EncoderKParts {
                qkv: 2,
                ..EncoderKParts::NONE
            }
        );
        assert_eq!(
            EncoderKParts::for_config(&so400m, MAX_QKV_SPLIT_BATCH + 1),
            EncoderKParts::NONE
        );
        for d in (64..=2048).step_by(64) {
            for f in [d * 3, d * 4, d * 4 - 32, 4304] {
                let mut c = so400m.clone();
                (c.hidden_size, c.intermediate_size) = (d, f);
                let p = EncoderKParts::for_config(&c, 2);
                for (k, parts) in [(d, p.out_proj), (d, p.fc1), (f, p.fc2), (d, p.qkv)] {
                    assert!(k % parts == 0 && (parts == 1 || k / parts >= MIN_SPLIT_CHUNK));
                }
            }
        }
        assert_eq!(
            EncoderKParts::parse("1, 2,2,4"),
            Some(EncoderKParts {
                qkv: 1,
                out_proj: 2,
                fc1: 2,
                fc2: 4
            })
        );
        for bad in ["", "1,2,2", "1,2,2,4,1", "0,1,1,1", "1,1,1,33", "a,1,1,1"] {
            assert_eq!(EncoderKParts::parse(bad), None, "{bad}");
        }
    }
}
