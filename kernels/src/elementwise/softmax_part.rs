//! `softmax_part_f16`: one key block of an attention softmax split along its keys — per row the
//! block's maximum, the f16 exponentials relative to it and their sum, for the combine of the
//! key blocks (`attention_combine_f16`). The numerics are the assembly header's.

use super::common::{halves_with_specials, normal_halves, random_bits, worker_cycles};
use super::softmax::{groups, random_scores, PLACES};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{split_words, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::{f16_exp, f16_max, f16_sub, f16_to_f32, f32_add, f32_mul, f32_to_f16};
use tessera_isa::rng::Rng;

pub struct SoftmaxPart;

const NAME: &str = "softmax_part_f16";
const V_COLS: usize = 2;
const V_STRIDE: usize = 3;
const V_S: usize = 4;
const V_RS: usize = 5;
const V_P: usize = 6;
const V_SPLIT: usize = 7;

/// Halves of one AMP K-block: the exponentials fill whole blocks.
const BLOCK: usize = 16;

/// The exponentials' blocks of 16 halves for `cols` scores.
pub fn exp_blocks(cols: usize) -> usize {
    cols.div_ceil(BLOCK)
}

/// Halves of one output row for `cols` scores: the exponentials padded to whole blocks of 16,
/// then the (m16, l16, 0, 0) group.
pub fn out_row_halves(cols: usize) -> usize {
    BLOCK * exp_blocks(cols) + 4
}

/// Where the kernel writes its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OutLayout {
    /// Rows of [`out_row_halves`] halves one after another.
    Rows,
    /// AMP-left panels of the rows (`kernels/src/layout.rs`, m_padded = the rows): block `b`
    /// of row `r` at `(b · rows + r) · 32` bytes, the statistics in block `exp_blocks` (its
    /// group, then zeros).
    Panels,
}

impl OutLayout {
    /// (RS, P): bytes from one output row to the next and from one block of 16 halves to the
    /// next, for `rows` rows of `cols` scores.
    pub fn strides(self, rows: usize, cols: usize) -> (usize, usize) {
        match self {
            OutLayout::Rows => (2 * out_row_halves(cols), 2 * BLOCK),
            OutLayout::Panels => (2 * BLOCK, 2 * BLOCK * rows),
        }
    }

    /// Bytes of the output buffer.
    pub fn bytes(self, rows: usize, cols: usize) -> usize {
        match self {
            OutLayout::Rows => rows * 2 * out_row_halves(cols),
            OutLayout::Panels => (exp_blocks(cols) + 1) * rows * 2 * BLOCK,
        }
    }

    /// The layout of strides `(rs, p)` for `rows` rows of `cols` scores, if it is one.
    pub fn of(rs: usize, p: usize, rows: usize, cols: usize) -> Option<OutLayout> {
        [OutLayout::Rows, OutLayout::Panels]
            .into_iter()
            .find(|l| l.strides(rows, cols) == (rs, p))
    }
}

/// One row as the kernel evaluates it (the assembly header's numerics): `e` over the row's
/// groups of 4 (the last group's lanes past the row computed as if x were −inf there: +0 unless
/// m is NaN), zeros to whole blocks of 16, then `(m16, l16, 0, 0)`.
pub fn softmax_part_row(x: &[u16], s: f32) -> Vec<u16> {
    let padded = 4 * groups(x.len());
    let lane = |c: usize| if c < x.len() { x[c] } else { 0xfc00 };
    let xmax = (0..padded).map(lane).fold(0xfc00, f16_max);
    let m16 = f32_to_f16(f32_mul(s, f16_to_f32(xmax)));
    let (mut row, l16) = if s == 1.0 {
        unit_row(padded, lane, m16)
    } else {
        scaled_row(padded, lane, m16, s)
    };
    row.resize(BLOCK * exp_blocks(x.len()), 0);
    row.extend([m16, l16, 0, 0]);
    row
}

/// The exponentials and their sum at `s ≠ 1`: `f16v4mix` with `$TAS = (s16, 1.0)` (each product
/// rounded to f32, their sum too), `l = E + O` (the even and the odd columns in order).
fn scaled_row(padded: usize, lane: impl Fn(usize) -> u16, m16: u16, s: f32) -> (Vec<u16>, u16) {
    let neg_m = f16_to_f32(f16_sub(0, m16));
    let s16 = f16_to_f32(f32_to_f16(s));
    let (mut even, mut odd) = (0.0f32, 0.0f32);
    let mut e = vec![0u16; padded];
    for (c, out) in e.iter_mut().enumerate() {
        let t = f32_add(f32_mul(s16, f16_to_f32(lane(c))), f32_mul(1.0, neg_m));
        *out = f16_exp(f32_to_f16(t));
        if c % 2 == 0 {
            even = f32_add(even, f16_to_f32(*out));
        } else {
            odd = f32_add(odd, f16_to_f32(*out));
        }
    }
    (e, f32_to_f16(f32_add(even, odd)))
}

/// The exponentials and their sum at `s = 1` (the scale folded into the queries; the header's
/// unit loops): `t = f16(x − m16)` (`f16v4sub`, one rounding), the exponentials summed in
/// column order into eight accumulators `S0..S7`,
/// `l = ((S0 + S2) + (S4 + S6)) + ((S1 + S3) + (S5 + S7))`. Column c goes to `S(c mod 8)` in the
/// whole blocks of four regular groups (the first 16 ⌊(g − 1)/4⌋ columns of g groups: `f16v8acc`
/// over a pair of groups adds half j to accumulator j), to `S(c mod 4)` past them (`f16v4acc`
/// over one group). (The rows without such a block fold only `S0..S3`: the same value, as
/// `S4..S7` are +0 there.)
fn unit_row(padded: usize, lane: impl Fn(usize) -> u16, m16: u16) -> (Vec<u16>, u16) {
    let paired = 16 * ((padded / 4).saturating_sub(1) / 4);
    let mut sums = [0.0f32; 8];
    let mut e = vec![0u16; padded];
    for (c, out) in e.iter_mut().enumerate() {
        *out = f16_exp(f16_sub(lane(c), m16));
        let k = if c < paired { c % 8 } else { c % 4 };
        sums[k] = f32_add(sums[k], f16_to_f32(*out));
    }
    let l = f32_add(
        f32_add(f32_add(sums[0], sums[2]), f32_add(sums[4], sums[6])),
        f32_add(f32_add(sums[1], sums[3]), f32_add(sums[5], sums[7])),
    );
    (e, f32_to_f16(l))
}

/// The output buffer of `rows` (each [`softmax_part_row`]'s halves) laid out as `layout` says.
pub fn lay_out(rows: &[Vec<u16>], cols: usize, layout: OutLayout) -> Vec<u8> {
    let (rs, p) = layout.strides(rows.len(), cols);
    let nb = exp_blocks(cols);
    let mut out = vec![0u8; layout.bytes(rows.len(), cols)];
    for (r, row) in rows.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let at = r * rs + (c / BLOCK) * p + (c % BLOCK) * 2;
            out[at..at + 2].copy_from_slice(&v.to_le_bytes());
        }
        debug_assert_eq!(row.len(), BLOCK * nb + 4);
    }
    out
}

/// `rows` × `cols` case; `x` has `in_stride` halves per row (the padding columns hold `junk`,
/// which the kernel must ignore).
#[allow(clippy::too_many_arguments)]
fn make_case(
    name: &str,
    rows: usize,
    cols: usize,
    in_stride: usize,
    x: &[u16],
    s: f32,
    regions: (Region, Region),
    junk: u16,
    layout: OutLayout,
) -> Case {
    assert!(in_stride.is_multiple_of(4) && in_stride >= cols && cols >= 1);
    assert_eq!(x.len(), rows * cols);
    assert!(s > 0.0 && s.is_finite());
    let mut src = vec![junk; rows * in_stride];
    for r in 0..rows {
        src[r * in_stride..r * in_stride + cols].copy_from_slice(&x[r * cols..(r + 1) * cols]);
    }
    let mut vertex = VertexWord::buffer_starts(2);
    vertex.extend([
        VertexWord::Value(cols as u32),
        VertexWord::Value(in_stride as u32),
        VertexWord::Value(s.to_bits()),
    ]);
    let (rs, p) = layout.strides(rows, cols);
    vertex.extend([VertexWord::Value(rs as u32), VertexWord::Value(p as u32)]);
    vertex.extend(split_words(rows as u32));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{rows}x{cols} stride {in_stride} s={s} {layout:?} {:?}/{:?} {name}",
            regions.0, regions.1
        ),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(&src), regions.0, None),
            Buffer::output("out", layout.bytes(rows, cols), regions.1, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

impl Kernel for SoftmaxPart {
    kernel_consts! {
        name: NAME,
        source: concat!(
            include_str!("../../asm/softmax_part_f16.S"),
            include_str!("../../asm/softmax_exp_groups.S")
        ),
        entry_kind: Worker,
        abi: "vertex: x, out (rows of e padded to 16*ceil(cols/16) halves, then m16, l16, 0, 0; \
              row-major, or AMP panels at s == 1), cols, in_stride (% 4 == 0), s (f32 bits, > 0), \
              RS, P (output row and block strides, bytes), split[6] over rows; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0x5a27);
        let s72 = 1.0 / 72f32.sqrt();
        // Key blocks of 729 tokens (81, 243, 27, 91 keys), the head's long rows, tails.
        for (i, &(rows, cols)) in [
            (73usize, 81usize),
            (8, 243),
            (6, 27),
            (13, 91),
            (1, 729),
            (7, 1),
            (5, 2),
            (6, 3),
            (2, 4),
            (9, 5),
            (12, 33),
            (3, 100),
            (1, 1153),
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
                    s72,
                    (place.0, place.1),
                    0x7e00,
                    OutLayout::Rows,
                ));
            }
        }
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
            let (rows, cols) = (3 + i, 37 + 9 * i);
            let x = normal_halves(&mut rng, rows * cols, mean, std);
            let place = PLACES[i % 4];
            cases.push(make_case(
                &format!("normal({mean},{std})"),
                rows,
                cols,
                4 * groups(cols),
                &x,
                s,
                (place.0, place.1),
                0x7c00,
                OutLayout::Rows,
            ));
        }
        // Every row length from 1 to 16 (each mask of the last group, one to four groups), rows
        // that leave workers idle or unequal.
        for cols in 1..=16usize {
            let rows = 1 + cols % 7;
            let x = normal_halves(&mut rng, rows * cols, 0.0, 3.0);
            let place = PLACES[cols % 4];
            cases.push(make_case(
                "short rows",
                rows,
                cols,
                4 * groups(cols) + 4 * (cols % 2),
                &x,
                0.5,
                (place.0, place.1),
                0x7e00,
                OutLayout::Rows,
            ));
        }
        // s = 1 (the scale folded into the queries): the unit loop, every mask of the last group
        // and no regular group at all, the plan's key blocks.
        for (i, &(rows, cols)) in [(73usize, 81usize), (146, 81), (1, 729), (6, 27)]
            .iter()
            .chain(
                (1..=16usize)
                    .map(|c| (1 + c % 7, c))
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .enumerate()
        {
            let x = normal_halves(&mut rng, rows * cols, 0.0, 3.0);
            let place = PLACES[i % 4];
            cases.push(make_case(
                "unit",
                rows,
                cols,
                4 * groups(cols) + 4 * (i % 2),
                &x,
                1.0,
                (place.0, place.1),
                0x7e00,
                [OutLayout::Rows, OutLayout::Panels][(i / 2) % 2],
            ));
        }
        let specials: Vec<u16> = super::common::F16_SPECIALS.to_vec();
        let rows_of = |v: Vec<u16>, rows: usize| -> Vec<u16> {
            v.into_iter().cycle().take(rows * 24).collect()
        };
        cases.push(make_case(
            "every edge value",
            6,
            24,
            24,
            &rows_of(specials, 6),
            0.25,
            (Region::Standard, Region::Interleaved),
            0x7e00,
            OutLayout::Rows,
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
            (Region::Interleaved, Region::Standard),
            0x7e00,
            OutLayout::Rows,
        ));
        for (i, &place) in PLACES.iter().enumerate() {
            let x = halves_with_specials(&mut rng, 7 * 50, 3.0, 25);
            cases.push(make_case(
                "edge mix",
                7,
                50,
                52,
                &x,
                0.3,
                (place.0, place.1),
                0x7c00,
                OutLayout::Rows,
            ));
            let x = random_bits(&mut rng, 4 * (20 + i));
            cases.push(make_case(
                "any bits",
                4,
                20 + i,
                4 * groups(20 + i),
                &x,
                1.0,
                (place.0, place.1),
                0x7e00,
                [OutLayout::Rows, OutLayout::Panels][i % 2],
            ));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = rng.range(1, 80) as usize;
        let cols = rng.range(1, 400) as usize;
        let stride = 4 * groups(cols) + 4 * rng.range(0, 1) as usize;
        let place = *rng.pick(&PLACES);
        let (s, x) = random_scores(&mut rng, rows * cols);
        // A third at s = 1, the unit loop.
        let s = if rng.next_u32().is_multiple_of(3) {
            1.0
        } else {
            s
        };
        // Half of those with the rows in AMP panels.
        let layout = if s == 1.0 && rng.next_u32().is_multiple_of(2) {
            OutLayout::Panels
        } else {
            OutLayout::Rows
        };
        make_case(
            &format!("random seed={seed}"),
            rows,
            cols,
            stride,
            &x,
            s,
            (place.0, place.1),
            0x7c00,
            layout,
        )
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let src = bytes::to_u16(&case.buffer("x").bytes);
        let (cols, stride) = (case.word(V_COLS) as usize, case.word(V_STRIDE) as usize);
        let s = f32::from_bits(case.word(V_S));
        let rows = src.len() / stride;
        let (rs, p) = (case.word(V_RS) as usize, case.word(V_P) as usize);
        let layout = OutLayout::of(rs, p, rows, cols).expect("a case's strides are a layout");
        let out: Vec<Vec<u16>> = (0..rows)
            .map(|r| softmax_part_row(&src[r * stride..r * stride + cols], s))
            .collect();
        vec![lay_out(&out, cols, layout)]
    }

    /// Bundles per worker, counted from the listing: 32 to set up; per row 16 + the mask of the
    /// last group (0, 6, 3, 5 by cols % 4) + the max loop (g + 2 if g > 1, else 7) + the
    /// exponentials (see [`estimate`]); the exit.
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let cols = case.word(V_COLS) as u64;
        let unit = f32::from_bits(case.word(V_S)) == 1.0;
        let panels = case.word(V_RS) == 2 * BLOCK as u32;
        estimate(cols, unit, panels, |w| {
            case.word(V_SPLIT + 2 * w + 1) as u64
        })
    }
}

/// `unit`: s = 1. With g ≥ 4 groups of 4 a row, the fast unit path ([`fast_unit_row`]) after
/// 18 more set-up bundles. Else the row loop: the unit loop: 16 bundles a whole block of four
/// regular groups, 6 a regular group of the last block, and 35 around them (the masked group,
/// the sums, the statistics, the next row; fitted to the simulator), 3 more for the statistics
/// block of panels; or (s ≠ 1) the two exp calls (13 + 7 n bundles over n groups, or 2 for
/// none) and 8 around them. Both: the zero groups, a `rpt` of one bundle each (1 + z bundles
/// for z > 0); and the branches to them (3 bundles for s = 1, 1 else).
fn estimate(cols: u64, unit: bool, panels: bool, rows_of: impl Fn(usize) -> u64) -> u64 {
    let g = cols.div_ceil(4);
    let zeros = (4 - g % 4) % 4;
    let (setup, row) = if unit && g >= 4 {
        (32 + 18, fast_unit_row(g, panels))
    } else {
        let mask = [0, 6, 3, 5][(cols % 4) as usize];
        let exp_call = |n: u64| if n == 0 { 2 } else { 13 + 7 * n };
        let max_loop = if g > 1 { g + 2 } else { 7 };
        let zero_groups = if zeros > 0 { 1 + zeros } else { 0 };
        let exps = zero_groups
            + if unit {
                let (blocks, rest) = ((g - 1) / 4, (g - 1) % 4);
                35 + 16 * blocks + 6 * rest + if panels { 3 } else { 0 }
            } else {
                exp_call(g - 1) + exp_call(1) + 8
            };
        // Unit rows of one group take 8 bundles less than the count, of 2 or 3 groups 1 less
        // (measured: the code's alignment).
        let single = match (unit, g) {
            (true, 1) => 8,
            (true, 2..=3) => 1,
            _ => 0,
        };
        (
            32 + if unit { 3 } else { 1 },
            16 + mask + max_loop + exps - single,
        )
    };
    let mut bundles = [0u64; WORKERS];
    for (w, b) in bundles.iter_mut().enumerate() {
        let rows = rows_of(w);
        *b = if rows == 0 {
            19
        } else {
            setup + rows * row + 1
        };
    }
    worker_cycles(&bundles)
}

/// Bundles of one row on the fast unit path (`.Lf_row`, g ≥ 4 groups): 12 for the masked last
/// group, the maximum's ends and the set-up of the exponentials, with g − 3 in the maximum's
/// loop; a `rpt` and 14 bundles a whole block of four regular groups (none without one);
/// 3 after the blocks and 6 a regular group of the last block; 4 for the masked group; the
/// zero groups (a `brz`, then a `rpt` and one bundle each); 12 for the sums (four `f32v2gina`,
/// three adds of pairs, one of singles) and the statistics, then 3 zero stores for panels and 2
/// branches.
fn fast_unit_row(g: u64, panels: bool) -> u64 {
    let (blocks, rest) = ((g - 1) / 4, (g - 1) % 4);
    let zeros = (4 - g % 4) % 4;
    let block_loop = if blocks > 0 { 1 + 14 * blocks } else { 0 };
    let zero_groups = 1 + if zeros > 0 { 1 + zeros } else { 0 };
    12 + (g - 3) + block_loop + 3 + 6 * rest + 4 + zero_groups + 12 + 3 * u64::from(panels) + 2
}

/// The case of a compiler call: `rows` rows of `cols` halves with a row stride of `in_stride`
/// halves (% 4 == 0, ≥ cols) in, scale `s` (finite, > 0; 1 for panels), rows out as `layout`
/// says, any region. Data are zeros.
pub fn compiler_case(
    rows: usize,
    cols: usize,
    in_stride: usize,
    s: f32,
    layout: OutLayout,
) -> Case {
    make_case(
        "compiled",
        rows,
        cols,
        in_stride,
        &vec![0; rows * cols],
        s,
        (Region::Standard, Region::Standard),
        0,
        layout,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> u16 {
        half::f16::from_f32(v).to_bits()
    }

    #[test]
    fn the_row_holds_its_maximum_sum_and_exponentials() {
        let row = softmax_part_row(&[h(1.0), h(3.0), h(2.0), h(0.0), h(-1.0)], 1.0);
        assert_eq!(row.len(), 20, "one block of 16, then the statistics group");
        assert_eq!(row[16], h(3.0), "m16 = s · max");
        assert_eq!(&row[18..20], &[0, 0]);
        assert_eq!(row[1], h(1.0), "the maximum's exponential is 1");
        assert!(
            row[5..16].iter().all(|&v| v == 0),
            "padding lanes are exp(−inf) = 0"
        );
        let sum: f32 = row[..5]
            .iter()
            .map(|&v| half::f16::from_bits(v).to_f32())
            .sum();
        let l = half::f16::from_bits(row[17]).to_f32();
        assert!(
            (sum - l).abs() <= l * 1e-3,
            "l16 is the sum of the exponentials"
        );
        // exp(s·x − m) of the softmax: e_c / l is the softmax of the row.
        let expect = (-2.0f32).exp()
            / (1.0 + (-1.0f32).exp() + (-2.0f32).exp() + (-3.0f32).exp() + (-4.0f32).exp());
        let p = half::f16::from_bits(row[0]).to_f32() / l;
        assert!((p - expect).abs() < 1e-3);
    }

    #[test]
    fn panels_hold_each_row_block_by_block() {
        // 3 rows of 20 scores: two blocks of exponentials, then the statistics block.
        let rows: Vec<Vec<u16>> = (0..3u16)
            .map(|r| (0..36).map(|c| r * 100 + c).collect())
            .collect();
        let out = bytes::to_u16(&lay_out(&rows, 20, OutLayout::Panels));
        assert_eq!(out.len(), 3 * 16 * 3);
        for (r, row) in rows.iter().enumerate() {
            for b in 0..2 {
                let at = (b * 3 + r) * 16;
                assert_eq!(&out[at..at + 16], &row[16 * b..16 * b + 16]);
            }
            let at = (2 * 3 + r) * 16;
            assert_eq!(&out[at..at + 4], &row[32..36]);
            assert!(out[at + 4..at + 16].iter().all(|&v| v == 0));
        }
        let flat = bytes::to_u16(&lay_out(&rows, 20, OutLayout::Rows));
        assert_eq!(flat, rows.concat());
    }
}
