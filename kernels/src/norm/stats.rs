//! The row statistics shared by the norm kernels, written from the specification in
//! `kernels/asm/layernorm_stats.S`: per-worker partial sums with the documented lane order,
//! the fixed combine of the six partials, and the vertex fields every norm kernel shares.

use crate::case::{Case, VertexWord};
use crate::split::{split_words, worker_split, WORKERS};
use tessera_isa::numerics::{f16_to_f32, f32_add, f32_mul, f32_oorx, f32_sub};

/// Vertex word indices shared by the norm kernels.
pub const V_SCRATCH: usize = 4;
pub const V_ROWS: usize = 5;
pub const V_N: usize = 6;
pub const V_INVN: usize = 7;
pub const V_EPS: usize = 8;
pub const V_SPLIT: usize = 9;
/// First word after the shared layout (kernel-specific words follow).
pub const V_END: usize = V_SPLIT + 2 * WORKERS;

/// Bytes of scratch per row: six partial sums, then six partial sums of squares.
pub const ROW_SCRATCH_BYTES: usize = 48;

/// The shape fields of a norm vertex.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub rows: usize,
    pub n: usize,
    pub inv_n: f32,
    pub eps: f32,
    /// (first group, group count) of each worker over the n / 4 groups of a row.
    pub split: [(u32, u32); WORKERS],
}

impl Shape {
    /// Reads the shape from a case's vertex.
    pub fn of(case: &Case) -> Shape {
        let mut split = [(0, 0); WORKERS];
        for (w, entry) in split.iter_mut().enumerate() {
            *entry = (case.word(V_SPLIT + 2 * w), case.word(V_SPLIT + 2 * w + 1));
        }
        Shape {
            rows: case.word(V_ROWS) as usize,
            n: case.word(V_N) as usize,
            inv_n: f32::from_bits(case.word(V_INVN)),
            eps: f32::from_bits(case.word(V_EPS)),
            split,
        }
    }

    /// Elements of the tail (n % 4), which worker 5 handles after its groups.
    pub fn tail(&self) -> usize {
        self.n % 4
    }
}

/// The value words of the shared layout after the first `V_SCRATCH` addresses and the scratch
/// address: rows, n, inv_n = 1/n (f32, RNE), eps, and the split table of the n / 4 groups.
pub fn shape_words(rows: usize, n: usize, eps: f32) -> Vec<VertexWord> {
    assert!(
        rows >= 1 && n >= 1,
        "a norm needs at least one row and one column"
    );
    assert!(
        rows == 1 || n.is_multiple_of(4),
        "rows > 1 needs n % 4 == 0 (rows start 8-byte aligned)"
    );
    let inv_n = 1.0f32 / n as f32;
    let mut words = vec![
        VertexWord::Value(rows as u32),
        VertexWord::Value(n as u32),
        VertexWord::Value(inv_n.to_bits()),
        VertexWord::Value(eps.to_bits()),
    ];
    words.extend(split_words((n / 4) as u32));
    debug_assert_eq!(worker_split((n / 4) as u32).len(), WORKERS);
    words
}

/// The four values of a group of a worker's chunk: element `4 * group + i` for lanes below
/// `valid`, and +0 for the lanes a tail group leaves empty.
fn group_lanes(row: &[u16], group: usize, valid: usize) -> [u16; 4] {
    let mut lanes = [0u16; 4];
    for (i, lane) in lanes.iter_mut().enumerate().take(valid) {
        *lane = row[4 * group + i];
    }
    lanes
}

/// The groups worker `w` accumulates for a row: its full groups, then (worker 5) the tail
/// group with its number of valid lanes.
fn worker_groups(shape: &Shape, w: usize) -> Vec<(usize, usize)> {
    let (first, count) = shape.split[w];
    let mut groups: Vec<(usize, usize)> = (first as usize..(first + count) as usize)
        .map(|g| (g, 4))
        .collect();
    if w == WORKERS - 1 && shape.tail() != 0 {
        groups.push((shape.n / 4, shape.tail()));
    }
    groups
}

/// (L0 + L2) + (L1 + L3): how a worker folds its four accumulator lanes.
pub fn fold_lanes(lanes: [f32; 4]) -> f32 {
    f32_add(f32_add(lanes[0], lanes[2]), f32_add(lanes[1], lanes[3]))
}

/// ((P0 + P2) + P4) + ((P1 + P3) + P5): how the six worker partials of a row are combined.
pub fn combine_partials(p: &[f32; WORKERS]) -> f32 {
    f32_add(
        f32_add(f32_add(p[0], p[2]), p[4]),
        f32_add(f32_add(p[1], p[3]), p[5]),
    )
}

/// How a mean pass feeds a worker's groups to f16v8acc (8 halves per instruction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeanLanes {
    /// One group per f16v8acc, quad {group, 0} (LayerNorm pass 1).
    Groups,
    /// Two consecutive groups of the chunk per f16v8acc, quad {group 2j, group 2j + 1}; a lone
    /// last group and the tail group go alone as {group, 0} (AddLayerNormMoments pass 1).
    Blocks,
}

/// f16v8acc: lane j (AACC[2j]) += h[j], each half widened exactly (isa/src/semantics/accumulate.rs).
fn f16v8acc(acc: &mut [f32; 8], quad: [u16; 8]) {
    for (acc, &h) in acc.iter_mut().zip(&quad) {
        *acc = f32_add(*acc, f16_to_f32(h));
    }
}

/// ((L0 + L2) + (L4 + L6)) + ((L1 + L3) + (L5 + L7)): how a worker folds eight accumulator
/// lanes (four `f32v2gina`, then pairwise adds).
pub fn fold_eight_lanes(l: [f32; 8]) -> f32 {
    f32_add(
        f32_add(f32_add(l[0], l[2]), f32_add(l[4], l[6])),
        f32_add(f32_add(l[1], l[3]), f32_add(l[5], l[7])),
    )
}

/// Worker `w`'s partial sum of a row (f16 bits). Each f16v8acc adds half j of its quad to lane j.
/// With [`MeanLanes::Groups`] each group is one f16v8acc of {group, 0}, so lanes 0..4 sum the
/// groups' columns 0..4 and the worker folds them (`fold_lanes`); with [`MeanLanes::Blocks`] a
/// pair of groups fills all eight lanes and the worker folds the eight (`fold_eight_lanes`).
pub fn mean_partial(shape: &Shape, row: &[u16], w: usize, lanes: MeanLanes) -> f32 {
    let mut acc = [0.0f32; 8];
    let groups = worker_groups(shape, w);
    let full: Vec<[u16; 4]> = groups
        .iter()
        .filter(|g| g.1 == 4)
        .map(|&(g, v)| group_lanes(row, g, v))
        .collect();
    let tail: Option<[u16; 4]> = groups
        .iter()
        .find(|g| g.1 < 4)
        .map(|&(g, v)| group_lanes(row, g, v));
    let step = match lanes {
        MeanLanes::Groups => 1,
        MeanLanes::Blocks => 2,
    };
    for block in full.chunks(step) {
        let hi = block.get(1).copied().unwrap_or([0; 4]);
        let x = block[0];
        f16v8acc(
            &mut acc,
            [x[0], x[1], x[2], x[3], hi[0], hi[1], hi[2], hi[3]],
        );
    }
    if let Some(x) = tail {
        f16v8acc(&mut acc, [x[0], x[1], x[2], x[3], 0, 0, 0, 0]);
    }
    match lanes {
        MeanLanes::Groups => fold_lanes([acc[0], acc[1], acc[2], acc[3]]),
        MeanLanes::Blocks => fold_eight_lanes(acc),
    }
}

/// Worker `w`'s partial sum of squared deviations: lane i += (f32(x_i) - mean)^2 (f32v4acc),
/// lanes a tail group leaves empty add +0.
pub fn var_partial(shape: &Shape, row: &[u16], w: usize, mean: f32) -> f32 {
    let mut acc = [0.0f32; 4];
    for (group, valid) in worker_groups(shape, w) {
        let x = group_lanes(row, group, valid);
        for (lane, acc) in acc.iter_mut().enumerate() {
            let square = if lane < valid {
                let d = f32_sub(f16_to_f32(x[lane]), mean);
                f32_mul(d, d)
            } else {
                0.0
            };
            *acc = f32_add(*acc, square);
        }
    }
    fold_lanes(acc)
}

/// The statistics of one row: (mean, rstd) with rstd = f32oorx(var + eps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowStats {
    pub mean: f32,
    pub rstd: f32,
}

/// Mean (sum of the partials × inv_n) and rstd of a row, exactly as the passes compute them.
pub fn row_stats(shape: &Shape, row: &[u16], lanes: MeanLanes) -> RowStats {
    let mut sums = [0.0f32; WORKERS];
    for (w, sum) in sums.iter_mut().enumerate() {
        *sum = mean_partial(shape, row, w, lanes);
    }
    let mean = f32_mul(combine_partials(&sums), shape.inv_n);
    let mut squares = [0.0f32; WORKERS];
    for (w, square) in squares.iter_mut().enumerate() {
        *square = var_partial(shape, row, w, mean);
    }
    let var = f32_mul(combine_partials(&squares), shape.inv_n);
    RowStats {
        mean,
        rstd: f32_oorx(f32_add(var, shape.eps)),
    }
}

/// Cycle-estimate helpers: bundle counts of the passes read off the code paths of
/// `layernorm_stats.S`, and the supervisor's cost around them.
pub mod cycles {
    use super::Shape;
    use crate::split::{worker_split, WORKERS};

    /// Supervisor cycles per pass: the `runall` stall and launch, the workers' staggered slots,
    /// and the `sync` release.
    pub const PER_PASS: u64 = 14;
    /// Supervisor set-up (5 instructions) and the final `br $m10`.
    pub const FIXED: u64 = 5 + 6;

    /// The largest bundle count over the workers: `setup` + rows × `per_row(count)` (+ `tail`
    /// for worker 5 when n % 4 != 0) + 1 for the exit.
    pub fn busiest(shape: &Shape, setup: u64, per_row: &dyn Fn(u64) -> u64, tail: u64) -> u64 {
        let split = worker_split((shape.n / 4) as u32);
        (0..WORKERS)
            .map(|w| {
                let c = split[w].1 as u64;
                let extra = if w == WORKERS - 1 && shape.tail() != 0 {
                    tail
                } else {
                    0
                };
                setup + shape.rows as u64 * per_row(c) + extra + 1
            })
            .max()
            .unwrap_or(0)
    }

    /// Pass 1 of LayerNorm: 21 set-up bundles; per row the groups (1 each, +2 around the
    /// loop) and 10 for the zeroing, the tail test and the partial.
    pub fn mean_pass(shape: &Shape) -> u64 {
        busiest(shape, 21, &|c| 10 + if c > 0 { c + 2 } else { 0 }, 7)
    }

    /// Pass 2: 23 set-up bundles (+2 with the deviation buffer); per row 5 per group, 16
    /// around them (+3 with groups, +2 with the deviation buffer).
    pub fn var_pass(shape: &Shape, dev: bool) -> u64 {
        let d = u64::from(dev) * 2;
        busiest(
            shape,
            23 + d,
            &|c| 16 + d + if c > 0 { 5 * c + 3 } else { 0 },
            12 + d,
        )
    }

    /// Cycles of a run whose passes take `passes` worker bundles each.
    pub fn total(passes: &[u64]) -> u64 {
        FIXED + passes.iter().map(|&b| 6 * b + PER_PASS).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn shape(rows: usize, n: usize) -> Shape {
        let words = shape_words(rows, n, 1e-6);
        let mut split = [(0, 0); WORKERS];
        for (w, entry) in split.iter_mut().enumerate() {
            let value = |i: usize| match words[4 + i] {
                VertexWord::Value(v) => v,
                VertexWord::Address { .. } => unreachable!(),
            };
            *entry = (value(2 * w), value(2 * w + 1));
        }
        Shape {
            rows,
            n,
            inv_n: 1.0 / n as f32,
            eps: 1e-6,
            split,
        }
    }

    fn halves(values: &[f32]) -> Vec<u16> {
        values.iter().map(|&v| f16::from_f32(v).to_bits()).collect()
    }

    #[test]
    fn small_row_by_hand() {
        // n = 5: one group (worker 0) and a one-element tail (worker 5).
        let s = shape(1, 5);
        let row = halves(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(mean_partial(&s, &row, 0, MeanLanes::Groups), 10.0);
        assert_eq!(mean_partial(&s, &row, 5, MeanLanes::Groups), 5.0);
        assert_eq!(mean_partial(&s, &row, 2, MeanLanes::Blocks), 0.0);
        let stats = row_stats(&s, &row, MeanLanes::Groups);
        assert_eq!(stats.mean, f32_mul(15.0, 1.0 / 5.0));
        // Deviations -2 .. 2 (the mean is exactly 3): squares sum to 10, var = 2.
        assert_eq!(var_partial(&s, &row, 0, 3.0), 6.0);
        assert_eq!(var_partial(&s, &row, 5, 3.0), 4.0);
        assert_eq!(stats.rstd, f32_oorx(f32_add(f32_mul(10.0, 0.2), 1e-6)));
    }

    #[test]
    fn lane_order_is_the_documented_one() {
        // n = 24: one group per worker. Worker 0: acc0 = x0 + x1, acc2 = x2 + x3 in f32 (2049
        // is not an f16 but is exact in f32); fold = (acc0 + 0) + (acc2 + 0).
        let s = shape(1, 24);
        let mut values = vec![0.0f32; 24];
        values[0] = 2048.0;
        values[1] = 1.0;
        values[2] = 3.0;
        let row = halves(&values);
        assert_eq!(mean_partial(&s, &row, 0, MeanLanes::Groups), 2052.0);
        // The combine order matters for rounding: 2^24 + 1 + 1 vs 2^24 + 2.
        let p = [16_777_216.0, 1.0, 1.0, 1.0, 0.0, 0.0];
        assert_eq!(
            combine_partials(&p),
            f32_add(f32_add(16_777_216.0, 1.0), 2.0)
        );
    }

    #[test]
    fn block_lanes_pair_consecutive_groups() {
        // n = 48: two groups per worker. Worker 1 has groups 2 and 3 (elements 8..16); every
        // f16v8acc half has its own lane (AACC[2j]).
        // Groups: lane j = x(8 + j) + x(12 + j) for j < 4, folded (L0 + L2) + (L1 + L3).
        // Blocks: lane j = x(8 + j) for j < 8, folded ((L0 + L2) + (L4 + L6)) + ((L1 + L3) +
        // (L5 + L7)).
        let s = shape(1, 48);
        let values: Vec<f32> = (0..48)
            .map(|i| 1000.0 + i as f32 * 0.5 + if i % 3 == 0 { 0.25 } else { 0.0 })
            .collect();
        let row = halves(&values);
        let x: Vec<f32> = row.iter().map(|&h| f16_to_f32(h)).collect();
        let groups = fold_lanes(std::array::from_fn(|j| f32_add(x[8 + j], x[12 + j])));
        let (l, by_hand) = (
            |j: usize| x[8 + j],
            f32_add(
                f32_add(f32_add(x[8], x[10]), f32_add(x[12], x[14])),
                f32_add(f32_add(x[9], x[11]), f32_add(x[13], x[15])),
            ),
        );
        let blocks = fold_eight_lanes(std::array::from_fn(l));
        assert_eq!(blocks, by_hand);
        assert_eq!(mean_partial(&s, &row, 1, MeanLanes::Groups), groups);
        assert_eq!(mean_partial(&s, &row, 1, MeanLanes::Blocks), blocks);
    }

    #[test]
    fn constant_rows_have_zero_variance() {
        for n in [4usize, 24, 1152, 1728, 2152, 4304, 17] {
            let s = shape(1, n);
            let row = vec![f16::from_f32(0.7).to_bits(); n];
            for lanes in [MeanLanes::Groups, MeanLanes::Blocks] {
                let stats = row_stats(&s, &row, lanes);
                assert_eq!(stats.mean, f16::from_f32(0.7).to_f32(), "n = {n}");
                assert_eq!(stats.rstd, f32_oorx(1e-6), "n = {n}");
            }
        }
    }
}
