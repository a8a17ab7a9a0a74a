//! `softmax_f16`: the row softmax of attention, out = exp(s x − max) / Σ exp(s x − max), with
//! f32 max, exp and sum and f16 output.

use super::common::{
    halves_with_specials, normal_halves, random_bits, worker_cycles, F16_SPECIALS,
};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{split_words, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::{
    f16_max, f16_to_f32, f32_add, f32_exp, f32_mul, f32_oox, f32_sub, f32_to_f16,
};
use tessera_isa::rng::Rng;

pub struct Softmax;

const NAME: &str = "softmax_f16";
const V_COLS: usize = 3;
const V_STRIDE: usize = 4;
const V_S: usize = 5;
const V_SPLIT: usize = 6;

/// Groups of 4 per row (the padded row length in `out` is 4 × this).
pub(super) fn groups(cols: usize) -> usize {
    cols.div_ceil(4)
}

/// One row, as the kernel evaluates it (see the assembly header): the f16 maximum, m = s·max,
/// t = (s·x) + (0 − m), e = exp(t), sum = (even columns in order) + (odd columns in order),
/// q = 1 / sum, out = f16(e·q). Returns the padded row (4 · ceil(cols / 4) halves, the padding
/// columns computed as if x were −inf there).
pub fn softmax_row(x: &[u16], s: f32) -> Vec<u16> {
    let padded = 4 * groups(x.len());
    let lane = |c: usize| if c < x.len() { x[c] } else { 0xfc00 };
    let xmax = (0..padded).map(lane).fold(0xfc00, f16_max);
    let neg_m = f32_sub(0.0, f32_mul(s, f16_to_f32(xmax)));
    let e: Vec<f32> = (0..padded)
        .map(|c| f32_exp(f32_add(f32_mul(s, f16_to_f32(lane(c))), neg_m)))
        .collect();
    let (mut even, mut odd) = (0.0f32, 0.0f32);
    for (c, &v) in e.iter().enumerate() {
        if c % 2 == 0 {
            even = f32_add(even, v);
        } else {
            odd = f32_add(odd, v);
        }
    }
    let q = f32_oox(f32_add(even, odd));
    e.iter().map(|&v| f32_to_f16(f32_mul(v, q))).collect()
}

/// `rows` × `cols` case; `x` has `in_stride` halves per row (the padding columns are filled
/// with `junk`, which the kernel must ignore).
#[allow(clippy::too_many_arguments)]
fn make_case(
    name: &str,
    rows: usize,
    cols: usize,
    in_stride: usize,
    x: &[u16],
    s: f32,
    regions: (Region, Region, Region),
    junk: u16,
) -> Case {
    assert!(in_stride.is_multiple_of(4) && in_stride >= cols && cols >= 1);
    assert_eq!(x.len(), rows * cols);
    assert!(s > 0.0 && s.is_finite());
    let mut src = vec![junk; rows * in_stride];
    for r in 0..rows {
        src[r * in_stride..r * in_stride + cols].copy_from_slice(&x[r * cols..(r + 1) * cols]);
    }
    let stride = 4 * groups(cols);
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(cols as u32),
        VertexWord::Value(in_stride as u32),
        VertexWord::Value(s.to_bits()),
    ]);
    vertex.extend(split_words(rows as u32));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{rows}x{cols} stride {in_stride} s={s} {:?}/{:?}/{:?} {name}",
            regions.0, regions.1, regions.2
        ),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(&src), regions.0, None),
            Buffer::output("out", rows * stride * 2, regions.1, None),
            Buffer::scratch("e", WORKERS * stride * 4, regions.2),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

/// A random case's scale and `n` scores, as the softmax kernels' random cases draw them: one
/// of four scales, then any bits or normal values, in that order from `rng`.
pub(super) fn random_scores(rng: &mut Rng, n: usize) -> (f32, Vec<u16>) {
    let s = [0.125f32, 1.0, 0.0625, 3.0][rng.range(0, 3) as usize];
    let x = if rng.next_u32().is_multiple_of(2) {
        random_bits(rng, n)
    } else {
        normal_halves(rng, n, 0.0, 5.0)
    };
    (s, x)
}

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;
/// The placements of (x, out, scratch) the cases cycle through (shared with `softmax_seg`).
pub(super) const PLACES: [(Region, Region, Region); 4] =
    [(S, S, S), (I, I, I), (S, I, S), (I, S, I)];

impl Kernel for Softmax {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/softmax_f16.S"),
        entry_kind: Worker,
        abi: "vertex: x, out (rows x 4*ceil(cols/4) halves, padding columns written), scratch (6 x 16*ceil(cols/4) bytes), \
              cols, in_stride (% 4 == 0), s (f32 bits, > 0), split[6] over rows; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0x50f7);
        let inv_sqrt = |d: f32| 1.0 / d.sqrt();
        // Attention shapes: 729 tokens (one long row per worker), head dim 72 scale; tails.
        for (i, &(rows, cols)) in [
            (6usize, 729usize),
            (1, 729),
            (7, 729),
            (12, 257),
            (2, 1),
            (3, 2),
            (5, 3),
            (6, 4),
            (7, 5),
            (1, 6),
            (13, 7),
            (4, 8),
            (9, 33),
            (6, 64),
            (24, 100),
            (3, 1153),
        ]
        .iter()
        .enumerate()
        {
            for (j, &place) in PLACES.iter().enumerate() {
                if (i + j) % 2 == 1 && rows * cols > 64 {
                    continue;
                }
                let stride = 4 * groups(cols) + 4 * ((i + j) % 2);
                let x = normal_halves(&mut rng, rows * cols, 0.0, 4.0);
                cases.push(make_case(
                    "normal(0,4)",
                    rows,
                    cols,
                    stride,
                    &x,
                    inv_sqrt(72.0),
                    place,
                    0x7e00,
                ));
            }
        }
        // Scales, large means, constant rows, wide ranges.
        for (i, &(s, mean, std)) in [
            (1.0f32, 0.0, 1.0),
            (0.125, 100.0, 30.0),
            (4.0, 0.0, 8.0),
            (1e-3, 0.0, 60000.0),
            (0.5, -500.0, 1.0),
            (2.0, 0.0, 0.0),
            (30.0, 0.0, 2.0),
        ]
        .iter()
        .enumerate()
        {
            let (rows, cols) = (6 + i, 37 + 9 * i);
            let x = normal_halves(&mut rng, rows * cols, mean, std);
            cases.push(make_case(
                &format!("normal({mean},{std})"),
                rows,
                cols,
                4 * groups(cols),
                &x,
                s,
                PLACES[i % 4],
                0x7c00,
            ));
        }
        // Edge values: NaN, +-inf, -inf rows, subnormals, overflow of s x.
        let rows_of = |v: Vec<u16>, rows: usize| -> Vec<u16> {
            v.into_iter().cycle().take(rows * 24).collect()
        };
        let specials: Vec<u16> = F16_SPECIALS.to_vec();
        cases.push(make_case(
            "every edge value",
            6,
            24,
            24,
            &rows_of(specials.clone(), 6),
            0.25,
            PLACES[0],
            0x7e00,
        ));
        let mut neg_inf = vec![0xfc00u16; 24];
        neg_inf[5] = 0x3c00;
        cases.push(make_case(
            "-inf but one",
            6,
            24,
            28,
            &rows_of(neg_inf, 6),
            1.0,
            PLACES[1],
            0x7c00,
        ));
        cases.push(make_case(
            "all -inf",
            2,
            24,
            24,
            &[0xfc00; 48],
            1.0,
            PLACES[2],
            0x3c00,
        ));
        let tiny: Vec<u16> = (0..24)
            .map(|i| (i * 37 % 1024) as u16 | if i % 2 == 1 { 0x8000 } else { 0 })
            .collect();
        cases.push(make_case(
            "subnormals",
            6,
            24,
            24,
            &rows_of(tiny, 6),
            1.0,
            PLACES[3],
            0x7e00,
        ));
        let big: Vec<u16> = (0..24).map(|i| 0x7800 + i as u16 * 17).collect();
        cases.push(make_case(
            "huge s x",
            3,
            24,
            24,
            &rows_of(big, 3),
            1e36,
            PLACES[0],
            0x7e00,
        ));
        for (i, &place) in PLACES.iter().enumerate() {
            let x = halves_with_specials(&mut rng, 7 * 50, 3.0, 25);
            cases.push(make_case("edge mix", 7, 50, 52, &x, 0.3, place, 0x7c00));
            let x = random_bits(&mut rng, 4 * (20 + i));
            cases.push(make_case(
                "any bits",
                4,
                20 + i,
                4 * groups(20 + i),
                &x,
                1.0,
                place,
                0x7e00,
            ));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = rng.range(1, 30) as usize;
        let cols = rng.range(1, 800) as usize;
        let stride = 4 * groups(cols) + 4 * rng.range(0, 2) as usize;
        let place = *rng.pick(&PLACES);
        let (s, x) = random_scores(&mut rng, rows * cols);
        make_case(
            &format!("random seed={seed}"),
            rows,
            cols,
            stride,
            &x,
            s,
            place,
            0x7c00,
        )
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let src = bytes::to_u16(&case.buffer("x").bytes);
        let (cols, stride) = (case.word(V_COLS) as usize, case.word(V_STRIDE) as usize);
        let s = f32::from_bits(case.word(V_S));
        let rows = src.len() / stride;
        let out: Vec<u16> = (0..rows)
            .flat_map(|r| softmax_row(&src[r * stride..r * stride + cols], s))
            .collect();
        vec![bytes::from_u16(&out)]
    }

    /// Bundles per worker, counted from the listing: 24 to set up; per row 5 + the mask of the
    /// last group (0, 6, 3, 5 by cols % 4) + 3 + the max loop (g + 2 if g > 1) + 9 + 3 + the exp
    /// call over g - 1 groups (5 + 11 n, or 2) + 3 + the exp call over the last group (16) +
    /// the normalisation (3g + 6) + 5; the exit.
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let cols = case.word(V_COLS) as u64;
        let g = cols.div_ceil(4);
        let mask = [0, 6, 3, 5][(cols % 4) as usize];
        let exp_call = |n: u64| if n == 0 { 2 } else { 5 + 11 * n };
        let max_loop = if g > 1 { g + 2 } else { 0 };
        let row =
            5 + mask + 3 + max_loop + 9 + 3 + exp_call(g - 1) + 3 + exp_call(1) + 3 * g + 6 + 5;
        let mut bundles = [0u64; WORKERS];
        for (w, b) in bundles.iter_mut().enumerate() {
            let rows = case.word(V_SPLIT + 2 * w + 1) as u64;
            *b = if rows == 0 { 9 } else { 24 + rows * row + 1 };
        }
        worker_cycles(&bundles)
    }
}

/// The case of a compiler call: `rows` rows of `cols` halves with a row stride of `in_stride`
/// halves (% 4 == 0, ≥ cols) in, `rows × 4·ceil(cols/4)` halves out, scale `s` (finite, > 0),
/// any region. Data are zeros.
pub fn compiler_case(rows: usize, cols: usize, in_stride: usize, s: f32) -> Case {
    make_case(
        "compiled",
        rows,
        cols,
        in_stride,
        &vec![0; rows * cols],
        s,
        (Region::Standard, Region::Standard, Region::Standard),
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sum_to_one_and_pad_with_zeros() {
        let h = |v: f32| half::f16::from_f32(v).to_bits();
        let x: Vec<u16> = [1.0f32, 2.0, 3.0, 0.5, -1.0]
            .iter()
            .map(|&v| h(v))
            .collect();
        let out = softmax_row(&x, 1.0);
        assert_eq!(out.len(), 8);
        assert!(out[5..].iter().all(|&v| v == 0), "padding columns are +0");
        let total: f64 = out.iter().map(|&v| half::f16::from_bits(v).to_f64()).sum();
        assert!((total - 1.0).abs() < 2e-3);
        // The maximum gets exp(0) / sum; equal inputs give equal outputs.
        let flat = softmax_row(&[h(2.0); 4], 0.5);
        assert!(flat.iter().all(|&v| v == h(0.25)));
    }

    #[test]
    fn specials() {
        // A NaN or +inf anywhere makes the row NaN; -inf entries are 0.
        assert!(softmax_row(&[0x3c00, 0x7e00], 1.0)
            .iter()
            .all(|&v| v == 0x7e00));
        assert!(softmax_row(&[0x3c00, 0x7c00], 1.0)
            .iter()
            .all(|&v| v == 0x7e00));
        assert_eq!(softmax_row(&[0x3c00, 0xfc00], 1.0)[..2], [0x3c00, 0x0000]);
        assert!(softmax_row(&[0xfc00, 0xfc00], 1.0)
            .iter()
            .all(|&v| v == 0x7e00));
    }
}
