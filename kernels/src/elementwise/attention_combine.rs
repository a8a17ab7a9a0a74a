//! `attention_combine_f16`: the key blocks of an attention split along its keys combined into
//! the row's output — each block's partial product rescaled by `exp(m_j − M)` and the whole
//! divided by the rescaled sum of the exponentials. The numerics are the assembly header's.

use super::common::{normal_halves, random_bits, worker_cycles, F16_SPECIALS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{index_bits, packed_split_words, unpacked_item, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::{
    f16_max, f16_to_f32, f32_add, f32_exp, f32_mul, f32_oox, f32_sub, f32_to_f16,
};
use tessera_isa::rng::Rng;

pub struct AttentionCombine;

const NAME: &str = "attention_combine_f16";
const V_C: usize = 3;
const V_PAIRS: usize = 4;
const V_PART_STRIDE: usize = 5;
const V_ROW: usize = 6;
const V_STATS_ROW: usize = 7;
const V_K: usize = 8;
const V_STATS_STEP: usize = 9;
const V_SPLIT: usize = 10;

/// The most key blocks a row may have (the factors fill a worker's 256-byte scratch).
pub const MAX_BLOCKS: usize = 32;

/// The shape of a call: rows, blocks per row, pairs of groups of 4 columns, and the strides in
/// halves. The statistics of row r's block j are at `r · stats_row + j · stats_block`: a row's
/// pairs dense (`stats_block` 2, as a transpose gathers them) or a block's rows together
/// (`stats_row` 2, as each block's softmax part writes them and the exchange delivers them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub rows: usize,
    pub blocks: usize,
    pub pairs: usize,
    pub part_stride: usize,
    pub row_stride: usize,
    pub stats_row: usize,
    pub stats_block: usize,
}

impl Shape {
    /// The preconditions of the kernel, or why they fail.
    pub fn check(&self) -> Result<(), String> {
        let cols = 8 * self.pairs;
        let ok = self.rows >= 1
            && (1..=MAX_BLOCKS).contains(&self.blocks)
            && self.pairs >= 1
            && self.part_stride.is_multiple_of(8)
            && self.part_stride >= cols
            && self.row_stride.is_multiple_of(4)
            && (self.rows == 1
                || self.row_stride >= self.blocks * self.part_stride
                || (self.row_stride >= cols && self.part_stride >= self.rows * self.row_stride))
            && self.stats_row.is_multiple_of(2)
            && self.stats_block.is_multiple_of(2)
            && self.stats_block >= 2
            && (self.rows == 1
                || (self.stats_row >= self.blocks * self.stats_block)
                || (self.stats_row >= 2 && self.stats_block >= self.rows * self.stats_row));
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{self:?}: needs 1..={MAX_BLOCKS} blocks, part_stride % 8 == 0 and >= 8 * pairs, \
                 row strides covering a row (rows outer) or part strides covering the rows \
                 (blocks outer), even statistics strides, likewise"
            ))
        }
    }

    fn parts_halves(&self) -> usize {
        (self.rows - 1) * self.row_stride + (self.blocks - 1) * self.part_stride + 8 * self.pairs
    }

    fn stats_halves(&self) -> usize {
        (self.rows - 1) * self.stats_row + (self.blocks - 1) * self.stats_block + 2
    }

    fn out_halves(&self) -> usize {
        self.rows * 8 * self.pairs
    }
}

/// One row as the kernel evaluates it (the assembly header's numerics): `stats[j]` is block
/// j's `(m16, l16)` pair, `parts[j]` its `cols` values.
pub fn combine_row(stats: &[[u16; 2]], parts: &[&[u16]]) -> Vec<u16> {
    let c = parts.len();
    let m = |j: usize| stats[j][0];
    let big_m = (1..c).fold(m(0), |acc, j| f16_max(acc, m(j)));
    let big_m = f16_to_f32(big_m);
    let g: Vec<f32> = (0..c)
        .map(|j| f32_exp(f32_sub(f16_to_f32(m(j)), big_m)))
        .collect();
    let total = (0..c).fold(0.0f32, |acc, j| {
        f32_add(acc, f32_mul(f16_to_f32(stats[j][1]), g[j]))
    });
    let q = f32_oox(total);
    let a: Vec<f32> = g
        .iter()
        .map(|&g| f16_to_f32(f32_to_f16(f32_mul(g, q))))
        .collect();
    let cols = parts[0].len();
    (0..cols)
        .map(|d| {
            parts.iter().zip(&a).fold(0u16, |acc, (p, &a)| {
                f32_to_f16(f32_add(
                    f32_mul(1.0, f16_to_f32(acc)),
                    f32_mul(a, f16_to_f32(p[d])),
                ))
            })
        })
        .collect()
}

/// A case: `parts` and `stats` as the kernel reads them (padding holds `junk`).
fn make_case(
    name: &str,
    shape: Shape,
    parts: &[u16],
    stats: &[u16],
    regions: (Region, Region, Region),
) -> Case {
    if let Err(e) = shape.check() {
        panic!("attention_combine case {name}: {e}");
    }
    assert_eq!(parts.len(), shape.parts_halves());
    assert_eq!(stats.len(), shape.stats_halves());
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend(
        [
            shape.blocks,
            shape.pairs,
            shape.part_stride,
            shape.row_stride,
            shape.stats_row,
            index_bits(shape.pairs as u32) as usize,
            shape.stats_block / 2,
        ]
        .map(|v| VertexWord::Value(v as u32)),
    );
    // Units of one pair of one row, row-major.
    vertex.extend(packed_split_words(
        (shape.rows * shape.pairs) as u32,
        shape.pairs as u32,
    ));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{} rows x {} blocks x {} cols (strides {}/{}/{}/{}) {:?}/{:?}/{:?} {name}",
            shape.rows,
            shape.blocks,
            8 * shape.pairs,
            shape.part_stride,
            shape.row_stride,
            shape.stats_row,
            shape.stats_block,
            regions.0,
            regions.1,
            regions.2
        ),
        buffers: vec![
            Buffer::input("parts", bytes::from_u16(parts), regions.0, None),
            Buffer::input("stats", bytes::from_u16(stats), regions.1, None),
            Buffer::output("out", shape.out_halves() * 2, regions.2, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

/// Data like an attention's: maxima of scaled scores, sums of up to `keys` exponentials, and
/// partial products of that size; the padding between rows and blocks holds junk.
fn attention_case(rng: &mut Rng, name: &str, shape: Shape, keys: f64, place: usize) -> Case {
    let mut parts = random_bits(rng, shape.parts_halves());
    let mut stats = random_bits(rng, shape.stats_halves());
    let h = |v: f64| half::f16::from_f64(v).to_bits();
    for r in 0..shape.rows {
        for j in 0..shape.blocks {
            let l = 1.0 + rng.unit() * (keys - 1.0);
            let s = r * shape.stats_row + j * shape.stats_block;
            stats[s] = h(rng.normal(3.0, 2.5));
            stats[s + 1] = h(l);
            let at = r * shape.row_stride + j * shape.part_stride;
            let values = normal_halves(rng, 8 * shape.pairs, 0.0, 0.5 * l);
            parts[at..at + 8 * shape.pairs].copy_from_slice(&values);
        }
    }
    make_case(name, shape, &parts, &stats, PLACES[place % PLACES.len()])
}

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;
const PLACES: [(Region, Region, Region); 4] = [(S, S, S), (I, I, I), (S, I, S), (I, S, I)];

/// A dense shape: blocks of `8 · pairs` columns back to back.
fn dense(rows: usize, blocks: usize, pairs: usize) -> Shape {
    Shape {
        rows,
        blocks,
        pairs,
        part_stride: 8 * pairs,
        row_stride: blocks * 8 * pairs,
        stats_row: 2 * blocks,
        stats_block: 2,
    }
}

/// A key block's rows one after another, each padded to a whole 16-column AMP block as the
/// context product writes them, then the next block's (`[C, rows, width]`).
fn blocks_outer(rows: usize, blocks: usize, pairs: usize) -> Shape {
    let row = (8 * pairs).div_ceil(16) * 16;
    Shape {
        rows,
        blocks,
        pairs,
        part_stride: rows * row,
        row_stride: row,
        stats_row: 2 * blocks,
        stats_block: 2,
    }
}

/// [`blocks_outer`] with the statistics also a block's rows together (`[C, rows, 2]`), as the
/// softmax parts' statistics arrive at the combine's tile.
fn stats_blocks_outer(rows: usize, blocks: usize, pairs: usize) -> Shape {
    Shape {
        stats_row: 2,
        stats_block: 2 * rows,
        ..blocks_outer(rows, blocks, pairs)
    }
}

impl Kernel for AttentionCombine {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/attention_combine_f16.S"),
        entry_kind: Worker,
        abi: "vertex: parts, stats ((m16, l16) per block), out, C (1..=32), pairs, part_stride (% 8 == 0), \
              row_stride, stats_row (halves), K (bits of a pair index), stats_step (words between a row's blocks' pairs), split[6] over units of one pair of one row (first packed (row << K) | pair); parts rows outer or blocks outer; \
              out rows of 8 * pairs halves, dense; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0xc0b1);
        // Head dim 72 (9 pairs), blocks of 729 keys (9, 3, 27), one block, the most blocks.
        for (i, &(rows, blocks, pairs, keys)) in [
            (8usize, 9usize, 9usize, 81.0f64),
            (2, 3, 9, 243.0),
            (7, 27, 9, 27.0),
            (1, 1, 1, 5.0),
            (6, 32, 2, 16.0),
            (13, 2, 4, 100.0),
            (3, 5, 1, 7.0),
        ]
        .iter()
        .enumerate()
        {
            cases.push(attention_case(
                &mut rng,
                "attention-like",
                dense(rows, blocks, pairs),
                keys,
                i,
            ));
            // Padding between blocks, rows and output rows.
            let mut padded = dense(rows, blocks, pairs);
            padded.part_stride += 8;
            padded.row_stride = blocks * padded.part_stride + 4;
            padded.stats_row = 2 * blocks + 2;
            cases.push(attention_case(&mut rng, "padded", padded, keys, i + 1));
            cases.push(attention_case(
                &mut rng,
                "blocks outer",
                blocks_outer(rows, blocks, pairs),
                keys,
                i + 2,
            ));
            cases.push(attention_case(
                &mut rng,
                "statistics blocks outer",
                stats_blocks_outer(rows, blocks, pairs),
                keys,
                i + 3,
            ));
            // A block's rows of statistics with a gap after them.
            let mut gapped = stats_blocks_outer(rows, blocks, pairs);
            gapped.stats_block += 6;
            cases.push(attention_case(
                &mut rng,
                "statistics gapped",
                gapped,
                keys,
                i,
            ));
        }
        // Rows that leave workers idle or unequal, from one block to the most, short and long
        // rows.
        for (i, &blocks) in [1usize, 2, 3, 4, 7, 8, 9, 16, 31, 32].iter().enumerate() {
            for (k, &pairs) in [1usize, 2, 5, 9].iter().enumerate() {
                let rows = 1 + (3 * i + k) % 13;
                cases.push(attention_case(
                    &mut rng,
                    "sweep",
                    dense(rows, blocks, pairs),
                    50.0,
                    i + k,
                ));
            }
        }
        // Edge values in the statistics and the parts (NaN, ±inf, subnormals, zero sums).
        let shape = dense(6, 4, 3);
        let specials = |rng: &mut Rng, n: usize| -> Vec<u16> {
            (0..n).map(|_| *rng.pick(&F16_SPECIALS)).collect()
        };
        for &place in &PLACES {
            let parts = specials(&mut rng, shape.parts_halves());
            let stats = specials(&mut rng, shape.stats_halves());
            cases.push(make_case("edge values", shape, &parts, &stats, place));
            let parts = random_bits(&mut rng, shape.parts_halves());
            let stats = random_bits(&mut rng, shape.stats_halves());
            cases.push(make_case("any bits", shape, &parts, &stats, place));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let mut shape = dense(
            rng.range(1, 20) as usize,
            rng.range(1, MAX_BLOCKS as u64) as usize,
            rng.range(1, 12) as usize,
        );
        shape.part_stride += 8 * rng.range(0, 1) as usize;
        shape.row_stride = shape.blocks * shape.part_stride + 4 * rng.range(0, 1) as usize;
        match rng.next_u32() % 6 {
            0 | 1 => shape = blocks_outer(shape.rows, shape.blocks, shape.pairs),
            2 => shape = stats_blocks_outer(shape.rows, shape.blocks, shape.pairs),
            _ => {}
        }
        let place = rng.range(0, 3) as usize;
        if rng.next_u32().is_multiple_of(4) {
            let parts = random_bits(&mut rng, shape.parts_halves());
            let stats = random_bits(&mut rng, shape.stats_halves());
            make_case(
                &format!("random bits seed={seed}"),
                shape,
                &parts,
                &stats,
                PLACES[place],
            )
        } else {
            attention_case(
                &mut rng,
                &format!("random seed={seed}"),
                shape,
                200.0,
                place,
            )
        }
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = shape_of(case);
        let parts = bytes::to_u16(&case.buffer("parts").bytes);
        let stats = bytes::to_u16(&case.buffer("stats").bytes);
        let cols = 8 * shape.pairs;
        let mut out = vec![0u16; shape.out_halves()];
        for r in 0..shape.rows {
            let blocks: Vec<&[u16]> = (0..shape.blocks)
                .map(|j| {
                    let at = r * shape.row_stride + j * shape.part_stride;
                    &parts[at..at + cols]
                })
                .collect();
            let pairs: Vec<[u16; 2]> = (0..shape.blocks)
                .map(|j| {
                    let at = r * shape.stats_row + j * shape.stats_block;
                    [stats[at], stats[at + 1]]
                })
                .collect();
            let row = combine_row(&pairs, &blocks);
            out[r * cols..(r + 1) * cols].copy_from_slice(&row);
        }
        vec![bytes::from_u16(&out)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let shape = shape_of(case);
        let (pairs, k) = (shape.pairs as u32, case.word(V_K));
        estimate(&shape, |w| {
            let first = unpacked_item(case.word(V_SPLIT + 2 * w), pairs, k);
            (first, case.word(V_SPLIT + 2 * w + 1))
        })
    }
}

fn shape_of(case: &Case) -> Shape {
    let w = |i: usize| case.word(i) as usize;
    let units: usize = (0..WORKERS).map(|k| w(V_SPLIT + 2 * k + 1)).sum();
    let rows = units / w(V_PAIRS).max(1);
    Shape {
        rows,
        blocks: w(V_C),
        pairs: w(V_PAIRS),
        part_stride: w(V_PART_STRIDE),
        row_stride: w(V_ROW),
        stats_row: w(V_STATS_ROW),
        stats_block: 2 * w(V_STATS_STEP),
    }
}

/// Bundles per worker, counted from the listing: 39 to set up; per row touched 26 + 13 per
/// block, per quad of its pairs 12 + 5 per block and for an odd pair 10 + 3 per block; the exit
/// (7 for a worker without units). `units_of(w)` is worker w's (first unit, units).
fn estimate(shape: &Shape, units_of: impl Fn(usize) -> (u32, u32)) -> u64 {
    let (c, pairs) = (shape.blocks as u64, shape.pairs as u64);
    let mut bundles = [0u64; WORKERS];
    for (w, b) in bundles.iter_mut().enumerate() {
        let (first, units) = units_of(w);
        let (mut at, end) = (first as u64, first as u64 + units as u64);
        *b = if units == 0 { 7 } else { 39 + 1 };
        while at < end {
            let n = (end - at).min(pairs - at % pairs);
            *b += 26 + 13 * c + n / 2 * (12 + 5 * c) + n % 2 * (10 + 3 * c);
            at += n;
        }
    }
    worker_cycles(&bundles)
}

/// The case of a compiler call (zeros).
pub fn compiler_case(shape: Shape) -> Case {
    make_case(
        "compiled",
        shape,
        &vec![0; shape.parts_halves()],
        &vec![0; shape.stats_halves()],
        (S, S, S),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> u16 {
        half::f16::from_f32(v).to_bits()
    }

    #[test]
    fn blocks_combine_to_the_softmax_weighted_sum() {
        // Two blocks with maxima 0 and −1 (natural log units), sums 2 and 3: weights 1 and
        // e^-1, so out = (p0 + e^-1 p1) / (2 + 3 e^-1).
        let stats = [[h(0.0), h(2.0)], [h(-1.0), h(3.0)]];
        let p0 = [h(1.0), h(2.0), h(0.0), h(-4.0)];
        let p1 = [h(3.0), h(0.0), h(1.0), h(2.0)];
        let out = combine_row(&stats, &[&p0, &p1]);
        let w = (-1.0f32).exp();
        let l = 2.0 + 3.0 * w;
        for d in 0..4 {
            let expect = (half::f16::from_bits(p0[d]).to_f32()
                + w * half::f16::from_bits(p1[d]).to_f32())
                / l;
            let got = half::f16::from_bits(out[d]).to_f32();
            assert!((got - expect).abs() < 2e-3, "column {d}: {got} vs {expect}");
        }
    }
}
