//! `softmax_seg_f16`: the row softmax with every row cut into segments that the six workers
//! share, in two passes (the segments' exponentials, maxima and sums; then each segment scaled by
//! its factor), for tiles that hold fewer rows than workers or a count that does not divide
//! among them. The numerics are the assembly header's.

use super::common::{halves_with_specials, normal_halves, random_bits};
use super::softmax::{groups, random_scores, PLACES};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{worker_split, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::{
    f16_exp, f16_max, f16_mul, f16_sub, f16_to_f32, f32_add, f32_exp, f32_max, f32_mul, f32_oox,
    f32_sub, f32_to_f16,
};
use tessera_isa::rng::Rng;

pub struct SoftmaxSeg;

const NAME: &str = "softmax_seg_f16";
const V_COLS: usize = 3;
const V_STRIDE: usize = 4;
const V_S: usize = 5;
const V_NSEG: usize = 6;
const V_SPLIT: usize = 8;

/// Groups per segment but the last, for `nseg` segments of a row of `cols`: the groups shared
/// as evenly as whole groups allow (every segment non-empty needs `nseg ≤ groups`).
pub fn segment_groups(cols: usize, nseg: usize) -> usize {
    groups(cols).div_ceil(nseg.max(1))
}

/// The segments a row of `cols` really has when asked for `nseg`: with G =
/// [`segment_groups`], the last one must keep at least one group.
pub fn segments(cols: usize, nseg: usize) -> usize {
    let g = segment_groups(cols, nseg);
    groups(cols).div_ceil(g).max(1)
}

/// One row as the kernel evaluates it (the assembly header's numerics), `nseg` segments of
/// `segment_groups` groups. Returns the padded row (4 · ceil(cols / 4) halves).
pub fn softmax_seg_row(x: &[u16], s: f32, nseg: usize) -> Vec<u16> {
    let g = groups(x.len());
    let per = segment_groups(x.len(), nseg);
    let nseg = segments(x.len(), nseg);
    let lane = |c: usize| if c < x.len() { x[c] } else { 0xfc00 };
    let mut e16 = vec![0u16; 4 * g];
    let mut stats = Vec::with_capacity(nseg);
    let s16 = f16_to_f32(f32_to_f16(s));
    for j in 0..nseg {
        let cols = 4 * j * per..4 * ((j + 1) * per).min(g);
        let xmax = cols.clone().map(lane).fold(0xfc00, f16_max);
        let m16 = f32_to_f16(f32_mul(s, f16_to_f32(xmax)));
        let neg_m = f16_to_f32(f16_sub(0, m16));
        let (mut even, mut odd) = (0.0f32, 0.0f32);
        for (i, c) in cols.enumerate() {
            // f16v4mix with $TAS = (s16, 1.0): each product rounded to f32, their sum too.
            let t = f32_add(f32_mul(s16, f16_to_f32(lane(c))), f32_mul(1.0, neg_m));
            let e = f16_exp(f32_to_f16(t));
            if i % 2 == 0 {
                even = f32_add(even, f16_to_f32(e));
            } else {
                odd = f32_add(odd, f16_to_f32(e));
            }
            e16[c] = e;
        }
        stats.push((f16_to_f32(m16), f32_add(even, odd)));
    }
    let big_m = stats[1..]
        .iter()
        .fold(stats[0].0, |acc, &(m, _)| f32_max(acc, m));
    let total = stats.iter().fold(0.0f32, |acc, &(m, l)| {
        f32_add(acc, f32_mul(f32_exp(f32_sub(m, big_m)), l))
    });
    let q = f32_oox(total);
    let mut out = e16;
    for (j, &(m, _)) in stats.iter().enumerate() {
        let f = f32_to_f16(f32_mul(f32_exp(f32_sub(m, big_m)), q));
        for v in &mut out[4 * j * per..4 * ((j + 1) * per).min(g)] {
            *v = f16_mul(*v, f);
        }
    }
    out
}

/// The per-worker vertex words: (first row, first segment, items) over `rows × nseg` items.
fn split_words(rows: usize, nseg: usize) -> Vec<VertexWord> {
    worker_split((rows * nseg) as u32)
        .iter()
        .flat_map(|&(first, count)| {
            let first = first as usize;
            [
                VertexWord::Value((first / nseg) as u32),
                VertexWord::Value((first % nseg) as u32),
                VertexWord::Value(count),
            ]
        })
        .collect()
}

/// `rows` × `cols` case with `nseg` segments asked for; `x` has `in_stride` halves per row (the
/// padding columns hold `junk`, which the kernel must ignore).
#[allow(clippy::too_many_arguments)]
fn make_case(
    name: &str,
    rows: usize,
    cols: usize,
    in_stride: usize,
    nseg: usize,
    x: &[u16],
    s: f32,
    regions: (Region, Region, Region),
    junk: u16,
) -> Case {
    assert!(in_stride.is_multiple_of(4) && in_stride >= cols && cols >= 1 && nseg >= 1);
    assert_eq!(x.len(), rows * cols);
    assert!(s > 0.0 && s.is_finite());
    let nseg = segments(cols, nseg);
    let mut src = vec![junk; rows * in_stride];
    for r in 0..rows {
        src[r * in_stride..r * in_stride + cols].copy_from_slice(&x[r * cols..(r + 1) * cols]);
    }
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(cols as u32),
        VertexWord::Value(in_stride as u32),
        VertexWord::Value(s.to_bits()),
        VertexWord::Value(nseg as u32),
        VertexWord::Value(segment_groups(cols, nseg) as u32),
    ]);
    vertex.extend(split_words(rows, nseg));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{rows}x{cols} in {nseg} segments stride {in_stride} s={s} {:?}/{:?}/{:?} {name}",
            regions.0, regions.1, regions.2
        ),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(&src), regions.0, None),
            Buffer::output("out", rows * 4 * groups(cols) * 2, regions.1, None),
            Buffer::scratch("stats", rows * nseg * 8, regions.2),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

impl Kernel for SoftmaxSeg {
    kernel_consts! {
        name: NAME,
        source: concat!(
            include_str!("../../asm/softmax_seg_f16.S"),
            include_str!("../../asm/softmax_exp_groups.S")
        ),
        entry_kind: Supervisor,
        abi: "vertex: x, out (rows x 4*ceil(cols/4) halves, padding columns written), stats (rows x nseg x 8 bytes), \
              cols, in_stride (% 4 == 0), s (f32 bits, > 0), nseg, G (groups per segment), (first row, first segment, items)[6]; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0x5e95);
        let s72 = 1.0 / 72f32.sqrt();
        // Attention shapes (8 rows of 729, the head's one row), tails, segments that do not
        // divide the groups, more segments than groups.
        for (i, &(rows, cols, nseg)) in [
            (8usize, 729usize, 3usize),
            (1, 729, 6),
            (2, 729, 3),
            (8, 729, 1),
            (1, 5, 6),
            (3, 1, 2),
            (4, 2, 3),
            (5, 3, 2),
            (1, 4, 4),
            (7, 33, 5),
            (2, 100, 6),
            (1, 1153, 6),
            (6, 64, 2),
            (9, 257, 4),
            (3, 729, 2),
            (4, 13, 6),
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
                    nseg,
                    &x,
                    s72,
                    place,
                    0x7e00,
                ));
            }
        }
        // Scales, large means, constant rows, wide ranges (segments with far apart maxima).
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
            let (rows, cols) = (1 + i, 37 + 9 * i);
            let x = normal_halves(&mut rng, rows * cols, mean, std);
            cases.push(make_case(
                &format!("normal({mean},{std})"),
                rows,
                cols,
                4 * groups(cols),
                2 + i % 5,
                &x,
                s,
                PLACES[i % 4],
                0x7c00,
            ));
        }
        // Edge values: NaN and +inf make rows NaN; subnormals; overflow of s x.
        let specials: Vec<u16> = super::common::F16_SPECIALS.to_vec();
        let rows_of = |v: Vec<u16>, rows: usize| -> Vec<u16> {
            v.into_iter().cycle().take(rows * 24).collect()
        };
        cases.push(make_case(
            "every edge value",
            2,
            24,
            24,
            3,
            &rows_of(specials, 2),
            0.25,
            PLACES[0],
            0x7e00,
        ));
        let tiny: Vec<u16> = (0..24)
            .map(|i| (i * 37 % 1024) as u16 | if i % 2 == 1 { 0x8000 } else { 0 })
            .collect();
        cases.push(make_case(
            "subnormals",
            3,
            24,
            24,
            2,
            &rows_of(tiny, 3),
            1.0,
            PLACES[3],
            0x7e00,
        ));
        for (i, &place) in PLACES.iter().enumerate() {
            let x = halves_with_specials(&mut rng, 3 * 50, 3.0, 25);
            cases.push(make_case("edge mix", 3, 50, 52, 4, &x, 0.3, place, 0x7c00));
            let x = random_bits(&mut rng, 2 * (20 + i));
            cases.push(make_case(
                "any bits",
                2,
                20 + i,
                4 * groups(20 + i),
                3,
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
        let rows = rng.range(1, 12) as usize;
        let cols = rng.range(1, 800) as usize;
        let nseg = rng.range(1, 7) as usize;
        let stride = 4 * groups(cols) + 4 * rng.range(0, 2) as usize;
        let place = *rng.pick(&PLACES);
        let (s, x) = random_scores(&mut rng, rows * cols);
        make_case(
            &format!("random seed={seed}"),
            rows,
            cols,
            stride,
            nseg,
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
        let nseg = case.word(V_NSEG) as usize;
        let rows = src.len() / stride;
        let out: Vec<u16> = (0..rows)
            .flat_map(|r| softmax_seg_row(&src[r * stride..r * stride + cols], s, nseg))
            .collect();
        vec![bytes::from_u16(&out)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let cols = case.word(V_COLS) as usize;
        let nseg = case.word(V_NSEG) as usize;
        let items: Vec<(usize, usize, usize)> = (0..WORKERS)
            .map(|w| {
                let at = V_SPLIT + 3 * w;
                (
                    case.word(at) as usize,
                    case.word(at + 1) as usize,
                    case.word(at + 2) as usize,
                )
            })
            .collect();
        estimate(cols, nseg, &items)
    }
}

/// Bundles per worker of pass 1: 30 to set up and exit; per item the exp calls (13 + 7 per
/// group) over the regular groups and over the last, the max loop (g + 2 when it has groups),
/// the mask of a row's last group and 33 around; the row's last segment 4 more and a row
/// change 9.
fn pass1(cols: usize, nseg: usize, first_seg: usize, items: usize) -> u64 {
    let g = groups(cols);
    let per = segment_groups(cols, nseg);
    let mask = [1, 7, 5, 6][cols % 4] as u64;
    let mut bundles = 30u64;
    let mut seg = first_seg;
    let exp = |n: u64| if n > 0 { 13 + 7 * n } else { 2 };
    for _ in 0..items {
        let last = seg + 1 == nseg;
        let n = if last { g - seg * per } else { per } as u64;
        let regular = n - 1;
        let max_loop = if regular > 0 { regular + 3 } else { 0 };
        bundles += 33 + max_loop + exp(regular) + exp(1) + if last { 4 + mask + 9 } else { 1 };
        seg = if last { 0 } else { seg + 1 };
    }
    bundles
}

/// Bundles per worker of pass 2: 21 to set up and exit; per item the maximum (4 per further
/// segment), the sum (6 per segment), 17 for the factor and the segment's size, 2 per group and
/// 9 around them, and to move on (+9 at a row change).
fn pass2(cols: usize, nseg: usize, first_seg: usize, items: usize) -> u64 {
    let g = groups(cols);
    let per = segment_groups(cols, nseg);
    let mut bundles = 21u64;
    let mut seg = first_seg;
    for _ in 0..items {
        let last = seg + 1 == nseg;
        let n = if last { g - seg * per } else { per } as u64;
        let s = nseg as u64;
        bundles += 5 + 4 * (s - 1) + 3 + 6 * s + 17 + 2 * n + 9 + if last { 9 } else { 0 };
        seg = if last { 0 } else { seg + 1 };
    }
    bundles
}

/// Cycles of a call: the supervisor's launches and syncs around the two passes, each as long as
/// its busiest worker.
fn estimate(cols: usize, nseg: usize, items: &[(usize, usize, usize)]) -> u64 {
    let busiest = |pass: &dyn Fn(usize, usize, usize, usize) -> u64| {
        items
            .iter()
            .filter(|&&(_, _, n)| n > 0)
            .map(|&(_, seg, n)| pass(cols, nseg, seg, n))
            .max()
            .unwrap_or(9)
    };
    11 + (6 * busiest(&pass1) + 14) + (6 * busiest(&pass2) + 14)
}

/// The estimate of a call over `rows` rows of `cols` with `nseg` segments asked for.
pub fn estimate_call(rows: usize, cols: usize, nseg: usize) -> u64 {
    let nseg = segments(cols, nseg);
    let items: Vec<(usize, usize, usize)> = worker_split((rows * nseg) as u32)
        .iter()
        .map(|&(first, count)| {
            let first = first as usize;
            (first / nseg, first % nseg, count as usize)
        })
        .collect();
    estimate(cols, nseg, &items)
}

/// The case of a compiler call (zeros): `rows` rows of `cols` halves with a row stride of
/// `in_stride` halves, `nseg` segments asked for, scale `s`.
pub fn compiler_case(rows: usize, cols: usize, in_stride: usize, nseg: usize, s: f32) -> Case {
    make_case(
        "compiled",
        rows,
        cols,
        in_stride,
        nseg,
        &vec![0; rows * cols],
        s,
        (Region::Standard, Region::Standard, Region::Standard),
        0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> u16 {
        half::f16::from_f32(v).to_bits()
    }

    #[test]
    fn segments_agree_with_the_whole_row_softmax() {
        let mut rng = Rng::new(4);
        let x = normal_halves(&mut rng, 729, 0.0, 4.0);
        let whole = super::super::softmax::softmax_row(&x, 0.125);
        for nseg in 1..=6 {
            let seg = softmax_seg_row(&x, 0.125, nseg);
            assert_eq!(seg.len(), whole.len());
            for (a, b) in seg.iter().zip(&whole) {
                let (a, b) = (f16_to_f32(*a), f16_to_f32(*b));
                assert!((a - b).abs() <= 2e-3 * b.abs() + 1e-7, "{nseg}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn rows_sum_to_one_and_pad_with_zeros() {
        let x: Vec<u16> = [1.0f32, 2.0, 3.0, 0.5, -1.0, 7.0, 0.0]
            .iter()
            .map(|&v| h(v))
            .collect();
        let out = softmax_seg_row(&x, 1.0, 2);
        assert_eq!(out.len(), 8);
        assert_eq!(out[7], 0, "the padding column is +0");
        let total: f64 = out.iter().map(|&v| half::f16::from_bits(v).to_f64()).sum();
        assert!((total - 1.0).abs() < 3e-3, "{total}");
    }

    #[test]
    fn segments_keep_at_least_one_group() {
        assert_eq!(segments(5, 6), 2);
        assert_eq!(segments(729, 6), 6);
        assert_eq!(segment_groups(729, 6), 31);
        assert_eq!(segments(729, 4), 4);
        assert_eq!(segments(17, 4), 3, "5 groups as 2 + 2 + 1");
        assert_eq!(segments(1, 3), 1);
    }
}
