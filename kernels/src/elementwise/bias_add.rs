//! `bias_add_f16`: out[r][c] = x[r][c] + bias[c] in f16 (GEMM output plus a per-column bias).

use super::common::{
    halves_with_specials, normal_halves, random_bits, worker_cycles, F16_SPECIALS, REGIONS,
};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::WORKERS;
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::f16_add;
use tessera_isa::rng::Rng;

pub struct BiasAdd;

const NAME: &str = "bias_add_f16";
const V_COLS: usize = 4;
const V_DISTINCT: usize = 5;
const V_SPLIT: usize = 6;

/// Where the three buffers go.
#[derive(Clone, Copy, Debug)]
struct Placement {
    x: Region,
    bias: Region,
    out: Region,
    /// Different element slots for the three buffers (and the fast path).
    distinct: bool,
}

impl Placement {
    fn describe(self) -> String {
        format!(
            "{}{}{} {}",
            self.x.letter(),
            self.bias.letter(),
            self.out.letter(),
            if self.distinct { "distinct" } else { "shared" }
        )
    }
}

/// Per worker: (first row, first group in the row, groups).
fn split_table(rows: usize, cols: usize) -> Vec<(u32, u32, u32)> {
    super::common::row_group_split(rows, cols)
}

fn make_case(
    name: String,
    rows: usize,
    cols: usize,
    x: Vec<u16>,
    bias: Vec<u16>,
    p: Placement,
) -> Case {
    assert_eq!(cols % 4, 0, "bias_add_f16 needs cols % 4 == 0");
    assert_eq!(x.len(), rows * cols);
    assert_eq!(bias.len(), cols);
    let slot = |s: u8| if p.distinct { Some(s) } else { None };
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(rows as u32),
        VertexWord::Value(cols as u32),
        VertexWord::Value(u32::from(p.distinct)),
    ]);
    for (row, group, count) in split_table(rows, cols) {
        vertex.extend([
            VertexWord::Value(row),
            VertexWord::Value(group),
            VertexWord::Value(count),
        ]);
    }
    Case {
        kernel: NAME.into(),
        name: format!("{rows}x{cols} {} {name}", p.describe()),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(&x), p.x, slot(0)),
            Buffer::input("bias", bytes::from_u16(&bias), p.bias, slot(1)),
            Buffer::output("out", rows * cols * 2, p.out, slot(2)),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

/// The reference: one f16 addition per element (RNE, canonical NaN, via the numerics module).
pub fn bias_add(x: &[u16], bias: &[u16]) -> Vec<u16> {
    let cols = bias.len();
    x.iter()
        .enumerate()
        .map(|(i, &v)| f16_add(v, bias[i % cols]))
        .collect()
}

const PLACEMENTS: [Placement; 6] = [
    Placement {
        x: Region::Standard,
        bias: Region::Standard,
        out: Region::Standard,
        distinct: false,
    },
    Placement {
        x: Region::Interleaved,
        bias: Region::Interleaved,
        out: Region::Interleaved,
        distinct: false,
    },
    Placement {
        x: Region::Standard,
        bias: Region::Standard,
        out: Region::Standard,
        distinct: true,
    },
    Placement {
        x: Region::Interleaved,
        bias: Region::Interleaved,
        out: Region::Interleaved,
        distinct: true,
    },
    Placement {
        x: Region::Interleaved,
        bias: Region::Standard,
        out: Region::Interleaved,
        distinct: true,
    },
    Placement {
        x: Region::Standard,
        bias: Region::Interleaved,
        out: Region::Standard,
        distinct: false,
    },
];

impl Kernel for BiasAdd {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/bias_add_f16.S"),
        entry_kind: Worker,
        abi: "vertex: x, bias, out, rows, cols (% 4 == 0), distinct (1: x, bias, out in three different \
              memory elements -> one-bundle ld2xst64pace loop; 0: any placement, out may be x), split[6] \
              (first row, first 4-group, groups); any region; 8-byte aligned buffers",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0xb1a5);
        let shapes: [(usize, usize); 19] = [
            (1, 4),
            (1, 8),
            (1, 12),
            (1, 24),
            (1, 1152),
            (1, 4304),
            (2, 12),
            (3, 4),
            (5, 36),
            (6, 8),
            (7, 1152),
            (13, 4),
            (16, 64),
            (38, 80),
            // Rows of one AMP block (the narrow path), whole and cut at a worker's start.
            (1, 16),
            (5, 16),
            (7, 16),
            (61, 16),
            (122, 16),
        ];
        for (i, &(rows, cols)) in shapes.iter().enumerate() {
            for (j, &p) in PLACEMENTS.iter().enumerate() {
                if (i + j) % 2 == 1 && rows * cols > 64 {
                    continue; // every placement for the small shapes, half of them for the large
                }
                let x = normal_halves(&mut rng, rows * cols, 0.0, 3.0);
                let bias = normal_halves(&mut rng, cols, 0.0, 1.0);
                cases.push(make_case("normal".into(), rows, cols, x, bias, p));
            }
        }
        // Edge values in x and in the bias; large magnitudes that overflow to infinity.
        for &p in &PLACEMENTS[..4] {
            let cols = F16_SPECIALS.len();
            let x: Vec<u16> = (0..cols * cols).map(|i| F16_SPECIALS[i / cols]).collect();
            let bias = F16_SPECIALS.to_vec();
            cases.push(make_case(
                "every pair of edge values".into(),
                cols,
                cols,
                x,
                bias,
                p,
            ));
        }
        for &region in &REGIONS {
            let p = Placement {
                x: region,
                bias: region,
                out: region,
                distinct: true,
            };
            let x = halves_with_specials(&mut rng, 9 * 100, 1000.0, 7);
            let bias = normal_halves(&mut rng, 100, 30000.0, 10000.0);
            cases.push(make_case(
                "large values, overflow".into(),
                9,
                100,
                x,
                bias,
                p,
            ));
            let x = random_bits(&mut rng, 4 * 52);
            let bias = random_bits(&mut rng, 52);
            cases.push(make_case("any bits".into(), 4, 52, x, bias, p));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = rng.range(1, 40) as usize;
        // A quarter of the cases in rows of one AMP block (the narrow path).
        let cols = if rng.range(0, 4) == 0 {
            16
        } else {
            4 * rng.range(1, 300) as usize
        };
        let p = *rng.pick(&PLACEMENTS);
        let x = random_bits(&mut rng, rows * cols);
        let bias = random_bits(&mut rng, cols);
        make_case(
            format!("random seed={seed} any bits"),
            rows,
            cols,
            x,
            bias,
            p,
        )
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let x = bytes::to_u16(&case.buffer("x").bytes);
        let bias = bytes::to_u16(&case.buffer("bias").bytes);
        vec![bytes::from_u16(&bias_add(&x, &bias))]
    }

    /// Bundles per worker, counted from the code: 22 to set up, then per row segment of n groups
    /// 7 + (fast: n + 11, general: 3n + 2 [+2 when distinct but n < 2]) + 3, and the exit; rows
    /// of 16 halves from a whole row on: 6 + 8 + 8 a row + 4 for them all.
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let cols = case.word(V_COLS) as u64;
        let distinct = case.word(V_DISTINCT) != 0;
        let per_row = cols / 4;
        let mut bundles = [0u64; WORKERS];
        for (w, b) in bundles.iter_mut().enumerate() {
            let base = V_SPLIT + 3 * w;
            let (mut group, mut count) = (case.word(base + 1) as u64, case.word(base + 2) as u64);
            if count == 0 {
                *b = 9;
                continue;
            }
            let mut total = 22;
            while count > 0 {
                let n = count.min(per_row - group);
                count -= n;
                group = 0;
                if per_row == 4 && n == 4 {
                    // The narrow path: this row and the whole rows after it.
                    let rows = 1 + count / 4;
                    count %= 4;
                    total += 6 + 8 + 8 * rows + 1 + 3;
                    continue;
                }
                total += 7 + 3;
                total += match (distinct, n >= 2) {
                    (true, true) => n + 11,
                    (true, false) => 3 * n + 4,
                    (false, _) => 3 * n + 2,
                };
            }
            *b = total + 1;
        }
        worker_cycles(&bundles)
    }
}

/// The case of a compiler call: `rows × cols` (cols % 4 == 0), x and out anywhere (out may be
/// x: the kernel reads each group before writing it), no element constraints. Data are zeros.
///
/// With `slots`, x, bias and out in those three element slots (all different, so out is not
/// x) and `distinct` set: the one-bundle-per-group loop.
pub fn compiler_case(rows: usize, cols: usize, slots: Option<[u8; 3]>) -> Case {
    let placement = Placement {
        x: Region::Standard,
        bias: Region::Standard,
        out: Region::Standard,
        distinct: slots.is_some(),
    };
    let mut case = make_case(
        "compiled".into(),
        rows,
        cols,
        vec![0; rows * cols],
        vec![0; cols],
        placement,
    );
    if let Some(slots) = slots {
        for (buffer, slot) in case.buffers.iter_mut().zip(slots) {
            buffer.element_slot = Some(slot);
        }
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_adds_the_bias_per_column() {
        // [1, 2, 3, 4; 5, 6, 7, 8] + [0.5, -2, 0, inf]
        let x: Vec<u16> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
            .iter()
            .map(|&v| half::f16::from_f32(v).to_bits())
            .collect();
        let bias: Vec<u16> = vec![0x3800, 0xc000, 0x0000, 0x7c00];
        let out = bias_add(&x, &bias);
        let want: Vec<u16> = [
            1.5f32,
            0.0,
            3.0,
            f32::INFINITY,
            5.5,
            4.0,
            7.0,
            f32::INFINITY,
        ]
        .iter()
        .map(|&v| half::f16::from_f32(v).to_bits())
        .collect();
        assert_eq!(out, want);
        // inf + -inf is the canonical NaN; 65504 + 65504 overflows.
        assert_eq!(
            bias_add(&[0x7c00, 0x7bff], &[0xfc00, 0x7bff]),
            vec![0x7e00, 0x7c00]
        );
    }

    #[test]
    fn split_table_starts_rows_correctly() {
        let t = split_table(5, 36); // 45 groups, 9 per row
        assert_eq!(t[0], (0, 0, 8));
        assert_eq!(t[1], (0, 8, 8));
        assert_eq!(t[2], (1, 7, 8));
        assert_eq!(t.iter().map(|e| e.2).sum::<u32>(), 45);
    }
}
