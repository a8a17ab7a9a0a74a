//! `sum_parts_f16`: the C parts of every row summed column by column in f32 and rounded once to
//! f16 — the partial products of a product split along K added up — and, with a bias, the
//! product's bias add in the same pass. The numerics are the assembly header's.

use super::common::{normal_halves, random_bits, worker_cycles, F16_SPECIALS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{worker_split, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::{f16_add, f16_to_f32, f32_add, f32_to_f16};
use tessera_isa::rng::Rng;

pub struct SumParts;

const NAME: &str = "sum_parts_f16";
const V_C: usize = 2;
const V_GROUPS: usize = 3;
const V_PART_STRIDE: usize = 4;
const V_ROW: usize = 5;
const V_SPLIT: usize = 7;

/// The most parts a row may have (a bound on the tables and the test space, not the kernel's).
pub const MAX_PARTS: usize = 64;

/// The shape of a call: rows, parts per row, groups of 4 columns, the strides in halves, and
/// whether a bias (f16, one per column) is added to the sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    pub rows: usize,
    pub parts: usize,
    pub groups: usize,
    pub part_stride: usize,
    pub row_stride: usize,
    pub bias: bool,
}

impl Shape {
    /// Parts of `groups` groups of 4 columns, back to back.
    pub fn dense(rows: usize, parts: usize, groups: usize) -> Shape {
        Shape {
            rows,
            parts,
            groups,
            part_stride: 4 * groups,
            row_stride: parts * 4 * groups,
            bias: false,
        }
    }

    /// The same sums with a bias added.
    pub fn with_bias(self) -> Shape {
        Shape { bias: true, ..self }
    }

    /// The preconditions of the kernel, or why they fail.
    pub fn check(&self) -> Result<(), String> {
        let cols = 4 * self.groups;
        let ok = self.rows >= 1
            && (1..=MAX_PARTS).contains(&self.parts)
            && self.groups >= 1
            && self.part_stride.is_multiple_of(4)
            && (self.parts == 1 || self.part_stride >= cols)
            && self.row_stride.is_multiple_of(4)
            && (self.rows == 1 || self.row_stride >= (self.parts - 1) * self.part_stride + cols)
            && self.rows * self.groups < 1 << 24;
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{self:?}: needs 1..={MAX_PARTS} parts, at least one group, part_stride % 4 == 0 \
                 and covering a part, row_stride % 4 == 0 and covering a row"
            ))
        }
    }

    fn parts_halves(&self) -> usize {
        (self.rows - 1) * self.row_stride + (self.parts - 1) * self.part_stride + 4 * self.groups
    }

    fn out_halves(&self) -> usize {
        self.rows * 4 * self.groups
    }

    /// Worker w's first (row, group) and its number of groups: the (row, group) items split in
    /// order.
    fn split(&self) -> [(u32, u32, u32); WORKERS] {
        let groups = self.groups as u32;
        worker_split((self.rows * self.groups) as u32)
            .map(|(first, count)| (first / groups, first % groups, count))
    }
}

/// One column's sum as the kernel forms it: `f16(((0 + p_0) + p_1) + … )`, each addition of a
/// widened half rounded to f32 (RNE), the total rounded once to f16.
pub fn sum_column(parts: impl IntoIterator<Item = u16>) -> u16 {
    f32_to_f16(
        parts
            .into_iter()
            .fold(0.0f32, |acc, p| f32_add(acc, f16_to_f32(p))),
    )
}

/// A case: `parts` as the kernel reads them (padding holds what it holds).
/// A case: `parts` as the kernel reads them (padding holds what it holds) and, when the shape
/// has one, the bias (`4 * groups` halves; empty otherwise).
fn make_case(
    name: &str,
    shape: Shape,
    parts: &[u16],
    bias: &[u16],
    regions: (Region, Region),
) -> Case {
    if let Err(e) = shape.check() {
        panic!("sum_parts case {name}: {e}");
    }
    assert_eq!(parts.len(), shape.parts_halves());
    assert_eq!(bias.len(), if shape.bias { 4 * shape.groups } else { 0 });
    // Buffers: parts, the bias (if any), out.
    let out = if shape.bias { 2 } else { 1 };
    let mut vertex = vec![
        VertexWord::Address {
            buffer: 0,
            offset: 0,
        },
        VertexWord::Address {
            buffer: out,
            offset: 0,
        },
    ];
    vertex.extend(
        [
            shape.parts,
            shape.groups,
            shape.part_stride,
            shape.row_stride,
        ]
        .map(|v| VertexWord::Value(v as u32)),
    );
    vertex.push(if shape.bias {
        VertexWord::Address {
            buffer: 1,
            offset: 0,
        }
    } else {
        VertexWord::Value(0)
    });
    for (row, group, count) in shape.split() {
        vertex.extend([row, group, count].map(VertexWord::Value));
    }
    Case {
        kernel: NAME.into(),
        name: format!(
            "{} rows x {} parts x {} cols (strides {}/{}){} {:?}/{:?} {name}",
            shape.rows,
            shape.parts,
            4 * shape.groups,
            shape.part_stride,
            shape.row_stride,
            if shape.bias { " + bias" } else { "" },
            regions.0,
            regions.1,
        ),
        buffers: [
            Some(Buffer::input(
                "parts",
                bytes::from_u16(parts),
                regions.0,
                None,
            )),
            shape
                .bias
                .then(|| Buffer::input("bias", bytes::from_u16(bias), regions.1, None)),
            Some(Buffer::output(
                "out",
                shape.out_halves() * 2,
                regions.1,
                None,
            )),
        ]
        .into_iter()
        .flatten()
        .collect(),
        vertex,
        supervisor_csrs: vec![],
    }
}

/// Partial products like a split product's: each part a normal sample, the padding junk.
fn product_case(rng: &mut Rng, name: &str, shape: Shape, place: usize) -> Case {
    let mut parts = random_bits(rng, shape.parts_halves());
    for r in 0..shape.rows {
        for j in 0..shape.parts {
            let at = r * shape.row_stride + j * shape.part_stride;
            let values = normal_halves(rng, 4 * shape.groups, 0.0, 4.0);
            parts[at..at + 4 * shape.groups].copy_from_slice(&values);
        }
    }
    let bias = if shape.bias {
        normal_halves(rng, 4 * shape.groups, 0.0, 2.0)
    } else {
        Vec::new()
    };
    make_case(name, shape, &parts, &bias, PLACES[place % PLACES.len()])
}

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;
const PLACES: [(Region, Region); 4] = [(S, S), (I, I), (S, I), (I, S)];

impl Kernel for SumParts {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/sum_parts_f16.S"),
        entry_kind: Worker,
        abi: "vertex: parts, out, C (parts per row), groups (of 4 columns), part_stride, \
              row_stride (halves, % 4 == 0), then (first row, first group, groups) per worker; \
              out rows of 4 * groups halves, dense; any region",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0x5a4d);
        // The head's sums (18 chunks of 16 columns, 9 of 72, 17 of 16), one part, many parts,
        // rows that leave workers idle or split a row between workers.
        for (i, &(rows, parts, groups)) in [
            (1usize, 18usize, 4usize),
            (16, 18, 18),
            (1, 17, 4),
            (4, 9, 4),
            (1, 1, 1),
            (3, 1, 5),
            (2, 64, 3),
            (7, 2, 1),
            (13, 5, 2),
            (1, 3, 31),
        ]
        .iter()
        .enumerate()
        {
            cases.push(product_case(
                &mut rng,
                "product-like",
                Shape::dense(rows, parts, groups),
                i,
            ));
            cases.push(product_case(
                &mut rng,
                "product-like",
                Shape::dense(rows, parts, groups).with_bias(),
                i + 2,
            ));
            // Padding between parts and between rows.
            let mut padded = Shape::dense(rows, parts, groups);
            padded.part_stride += 4 * (1 + i % 3);
            padded.row_stride = parts * padded.part_stride + 4 * (i % 2);
            cases.push(product_case(&mut rng, "padded", padded, i + 1));
        }
        // Rows that leave workers idle, split a row between workers or end mid-split, from one
        // part to the most.
        for (i, &parts) in [1usize, 2, 3, 4, 7, 8, 16, 17, 18, 31, 32, 64]
            .iter()
            .enumerate()
        {
            for (k, &groups) in [1usize, 2, 5].iter().enumerate() {
                let rows = 1 + (3 * i + k) % 11;
                let shape = Shape::dense(rows, parts, groups);
                let shape = if (i + k) % 2 == 0 {
                    shape
                } else {
                    shape.with_bias()
                };
                cases.push(product_case(&mut rng, "sweep", shape, i + k));
            }
        }
        // Edge values (NaN, ±inf, overflow of the f16 range by the sum, subnormals, ±0).
        for shape in [Shape::dense(5, 6, 3), Shape::dense(5, 6, 6).with_bias()] {
            let cols = if shape.bias { 4 * shape.groups } else { 0 };
            for &place in &PLACES {
                let parts: Vec<u16> = (0..shape.parts_halves())
                    .map(|_| *rng.pick(&F16_SPECIALS))
                    .collect();
                let bias: Vec<u16> = (0..cols).map(|_| *rng.pick(&F16_SPECIALS)).collect();
                cases.push(make_case("edge values", shape, &parts, &bias, place));
                let parts = random_bits(&mut rng, shape.parts_halves());
                let bias = random_bits(&mut rng, cols);
                cases.push(make_case("any bits", shape, &parts, &bias, place));
            }
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        // Up to ~110 KB of parts: the case fits a tile's standard region beside the output.
        let mut shape = Shape::dense(
            rng.range(1, 12) as usize,
            rng.range(1, MAX_PARTS as u64) as usize,
            rng.range(1, 16) as usize,
        );
        shape.part_stride += 4 * rng.range(0, 2) as usize;
        shape.row_stride = shape.parts * shape.part_stride + 4 * rng.range(0, 1) as usize;
        shape.bias = rng.range(0, 1) == 1;
        let place = rng.range(0, 3) as usize;
        if rng.next_u32().is_multiple_of(4) {
            let parts = random_bits(&mut rng, shape.parts_halves());
            let bias = random_bits(&mut rng, if shape.bias { 4 * shape.groups } else { 0 });
            make_case(
                &format!("random bits seed={seed}"),
                shape,
                &parts,
                &bias,
                PLACES[place],
            )
        } else {
            product_case(&mut rng, &format!("random seed={seed}"), shape, place)
        }
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = shape_of(case);
        let parts = bytes::to_u16(&case.buffer("parts").bytes);
        let cols = 4 * shape.groups;
        let bias = if shape.bias {
            bytes::to_u16(&case.buffer("bias").bytes)
        } else {
            Vec::new()
        };
        let mut out = vec![0u16; shape.out_halves()];
        for r in 0..shape.rows {
            for d in 0..cols {
                let sum = sum_column(
                    (0..shape.parts)
                        .map(|j| parts[r * shape.row_stride + j * shape.part_stride + d]),
                );
                out[r * cols + d] = match bias.get(d) {
                    Some(&b) => f16_add(sum, b),
                    None => sum,
                };
            }
        }
        vec![bytes::from_u16(&out)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let shape = shape_of(case);
        estimate(&shape)
    }
}

fn shape_of(case: &Case) -> Shape {
    let w = |i: usize| case.word(i) as usize;
    let groups = w(V_GROUPS);
    let items: usize = (0..WORKERS).map(|k| w(V_SPLIT + 3 * k + 2)).sum();
    Shape {
        rows: items / groups.max(1),
        parts: w(V_C),
        groups,
        part_stride: w(V_PART_STRIDE),
        row_stride: w(V_ROW),
        bias: case.buffers.iter().any(|b| b.name == "bias"),
    }
}

/// Bundles per worker, counted from the listing: 31 to set up (33 with the bias); per group
/// 3 + (C − 1) + 3 to sum and store (one more with the bias), 5 to step on (3 more at a row's
/// end, 4 with the bias); the exit (7 for a worker without groups).
pub fn estimate(shape: &Shape) -> u64 {
    let c = shape.parts as u64;
    let groups = shape.groups as u32;
    let mut bundles = [0u64; WORKERS];
    for (b, (_, group, count)) in bundles.iter_mut().zip(shape.split()) {
        if count == 0 {
            *b = 7;
            continue;
        }
        // Row ends crossed: every time the running group reaches `groups`.
        let ends = u64::from((group + count) / groups);
        let bias = u64::from(shape.bias);
        *b = 31 + 2 * bias + u64::from(count) * (c + 5 + 5 + bias) + (3 + bias) * ends + 1;
    }
    worker_cycles(&bundles)
}

/// The case of a compiler call (zeros).
pub fn compiler_case(shape: Shape) -> Case {
    let bias = vec![0; if shape.bias { 4 * shape.groups } else { 0 }];
    make_case(
        "compiled",
        shape,
        &vec![0; shape.parts_halves()],
        &bias,
        (S, S),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> u16 {
        half::f16::from_f32(v).to_bits()
    }

    #[test]
    fn columns_sum_in_f32_and_round_once() {
        // 2048 + 1 + 1 in f16 steps would stay 2048 (ulp 2); in f32 it is 2050, an f16.
        assert_eq!(sum_column([h(2048.0), h(1.0), h(1.0)]), h(2050.0));
        assert_eq!(sum_column([h(1.5), h(-0.25)]), h(1.25));
        // Past the f16 range: +inf.
        assert_eq!(sum_column([h(60000.0), h(60000.0)]), 0x7c00);
    }

    #[test]
    fn the_split_starts_runs_at_their_row_and_group() {
        let shape = Shape::dense(3, 2, 5);
        let split = shape.split();
        // 15 items over 6 workers: 3, 3, 3, 2, 2, 2.
        assert_eq!(split[0], (0, 0, 3));
        assert_eq!(split[1], (0, 3, 3));
        assert_eq!(split[2], (1, 1, 3));
        assert_eq!(split[5], (2, 3, 2));
    }
}
