//! `add_bias_f16`: out[r][c] = (a[r][c] + b[r][c]) + bias[c] in f16 — the sum of two partial
//! products and the bias after it in one pass, bit for bit the residual add followed by the
//! bias add.

use super::common::{normal_halves, random_bits, worker_cycles, F16_SPECIALS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{worker_split, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::f16_add;
use tessera_isa::rng::Rng;

pub struct AddBias;

const NAME: &str = "add_bias_f16";
const V_COLS: usize = 5;
const V_DISTINCT: usize = 6;
const V_SPLIT: usize = 7;

/// Where the four buffers go.
#[derive(Clone, Copy, Debug)]
struct Placement {
    a: Region,
    b: Region,
    bias: Region,
    out: Region,
    /// a, b and out in three different element slots (and the paced loops).
    distinct: bool,
}

impl Placement {
    fn describe(self) -> String {
        format!(
            "{}{}{}{} {}",
            self.a.letter(),
            self.b.letter(),
            self.bias.letter(),
            self.out.letter(),
            if self.distinct { "distinct" } else { "shared" }
        )
    }
}

/// Per worker: (first row, first group in the row, groups). Rows of one AMP block (16
/// columns) go whole to a worker, so every worker runs the narrow path from its first group;
/// other rows are split wherever the groups fall.
fn split_table(rows: usize, cols: usize) -> Vec<(u32, u32, u32)> {
    let per_row = (cols / 4) as u32;
    if per_row == 4 {
        return worker_split(rows as u32)
            .iter()
            .map(|&(first, count)| (first, 0, 4 * count))
            .collect();
    }
    super::common::row_group_split(rows, cols)
}

/// The operands of a case: a, b (`rows × cols` each) and the bias (`cols`).
struct Operands {
    a: Vec<u16>,
    b: Vec<u16>,
    bias: Vec<u16>,
}

fn make_case(name: String, rows: usize, cols: usize, data: Operands, p: Placement) -> Case {
    assert_eq!(cols % 4, 0, "add_bias_f16 needs cols % 4 == 0");
    assert_eq!(data.a.len(), rows * cols);
    assert_eq!(data.b.len(), rows * cols);
    assert_eq!(data.bias.len(), cols);
    let slot = |s: u8| if p.distinct { Some(s) } else { None };
    let mut vertex = VertexWord::buffer_starts(4);
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
            Buffer::input("a", bytes::from_u16(&data.a), p.a, slot(0)),
            Buffer::input("b", bytes::from_u16(&data.b), p.b, slot(1)),
            Buffer::input("bias", bytes::from_u16(&data.bias), p.bias, None),
            Buffer::output("out", rows * cols * 2, p.out, slot(2)),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

/// The reference: per element `(a + b) + bias[c]`, two f16 additions (RNE, canonical NaN, via
/// the numerics module), in that order.
pub fn add_bias(a: &[u16], b: &[u16], bias: &[u16]) -> Vec<u16> {
    let cols = bias.len();
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (&x, &y))| f16_add(f16_add(x, y), bias[i % cols]))
        .collect()
}

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;

const PLACEMENTS: [Placement; 6] = [
    Placement {
        a: S,
        b: S,
        bias: S,
        out: S,
        distinct: false,
    },
    Placement {
        a: I,
        b: I,
        bias: I,
        out: I,
        distinct: false,
    },
    Placement {
        a: S,
        b: S,
        bias: S,
        out: S,
        distinct: true,
    },
    Placement {
        a: I,
        b: I,
        bias: I,
        out: I,
        distinct: true,
    },
    Placement {
        a: I,
        b: S,
        bias: I,
        out: I,
        distinct: true,
    },
    Placement {
        a: S,
        b: I,
        bias: S,
        out: S,
        distinct: false,
    },
];

fn normal_operands(rng: &mut Rng, rows: usize, cols: usize) -> Operands {
    Operands {
        a: normal_halves(rng, rows * cols, 0.0, 3.0),
        b: normal_halves(rng, rows * cols, 0.0, 3.0),
        bias: normal_halves(rng, cols, 0.0, 1.0),
    }
}

impl Kernel for AddBias {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/add_bias_f16.S"),
        entry_kind: Worker,
        abi: "vertex: a, b, bias, out, rows, cols (% 4 == 0), distinct (1: a, b, out in three different \
              memory elements -> two-bundle ld2xst64pace loops; 0: any placement, out may be a or b), \
              split[6] (first row, first 4-group, groups); any region; 8-byte aligned buffers",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0xadb1);
        let shapes: [(usize, usize); 20] = [
            (1, 4),
            (1, 8),
            (1, 12),
            (1, 24),
            (1, 576),
            (1, 2176),
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
            (2, 16),
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
                let data = normal_operands(&mut rng, rows, cols);
                cases.push(make_case("normal".into(), rows, cols, data, p));
            }
        }
        // Every pair of edge values in a and b, the bias over the edge values too; then
        // magnitudes whose first sum overflows or whose bias brings it back.
        for &p in &PLACEMENTS[..4] {
            let n = F16_SPECIALS.len();
            let a: Vec<u16> = (0..n * n).map(|i| F16_SPECIALS[i / n]).collect();
            let b: Vec<u16> = (0..n * n).map(|i| F16_SPECIALS[i % n]).collect();
            let bias: Vec<u16> = (0..n).map(|i| F16_SPECIALS[(i * 7) % n]).collect();
            cases.push(make_case(
                "every pair of edge values".into(),
                n,
                n,
                Operands { a, b, bias },
                p,
            ));
        }
        for &p in &PLACEMENTS[2..4] {
            let data = Operands {
                a: normal_halves(&mut rng, 9 * 100, 40000.0, 20000.0),
                b: normal_halves(&mut rng, 9 * 100, 30000.0, 20000.0),
                bias: normal_halves(&mut rng, 100, -30000.0, 10000.0),
            };
            cases.push(make_case("large values".into(), 9, 100, data, p));
            let data = Operands {
                a: random_bits(&mut rng, 4 * 52),
                b: random_bits(&mut rng, 4 * 52),
                bias: random_bits(&mut rng, 52),
            };
            cases.push(make_case("any bits".into(), 4, 52, data, p));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = rng.range(1, 40) as usize;
        // A quarter of the cases in rows of one AMP block (the narrow path); three buffers of
        // rows × cols in distinct element slots fit in 24,000 halves each.
        let cols = if rng.range(0, 4) == 0 {
            16
        } else {
            4 * rng.range(1, (6000 / rows as u64).min(300)) as usize
        };
        let p = *rng.pick(&PLACEMENTS);
        let data = Operands {
            a: random_bits(&mut rng, rows * cols),
            b: random_bits(&mut rng, rows * cols),
            bias: random_bits(&mut rng, cols),
        };
        make_case(format!("random seed={seed} any bits"), rows, cols, data, p)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let a = bytes::to_u16(&case.buffer("a").bytes);
        let b = bytes::to_u16(&case.buffer("b").bytes);
        let bias = bytes::to_u16(&case.buffer("bias").bytes);
        vec![bytes::from_u16(&add_bias(&a, &b, &bias))]
    }

    /// Bundles per worker, counted from the code: 24 to set up, then per row segment of n groups
    /// 3, 6 more when distinct, the loop (fast: 2n + 12 with an alignment bundle; general:
    /// 4n + 3) and 3 for the next segment; rows of 16 halves from a whole row on (distinct):
    /// 4 + 7 + 3 + 1 + 8 (rows - 1) + 7 + 6 + 3; and the exit.
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
            let mut total = 24;
            while count > 0 {
                let n = count.min(per_row - group);
                count -= n;
                group = 0;
                total += 3;
                if !distinct {
                    total += 4 * n + 3 + 3;
                    continue;
                }
                total += 4;
                if per_row == 4 && n == 4 {
                    // The narrow path: this row and the whole rows after it.
                    let rows = 1 + count / 4;
                    count %= 4;
                    total += 7 + 3 + 1 + 8 * (rows - 1) + 7 + 6 + 3;
                    continue;
                }
                total += 2;
                total += if n >= 2 { 2 * n + 12 } else { 4 * n + 3 } + 3;
            }
            *b = total + 1;
        }
        worker_cycles(&bundles)
    }
}

/// The case of a compiler call: `rows × cols` (cols % 4 == 0), a, b and out anywhere (out may
/// be a or b: the kernel reads each group before writing it), no element constraints. Data are
/// zeros.
///
/// With `slots`, a, b and out in those three element slots (all different, so out is neither
/// a nor b) and `distinct` set: the two-bundle-per-group loops.
pub fn compiler_case(rows: usize, cols: usize, slots: Option<[u8; 3]>) -> Case {
    let placement = Placement {
        a: S,
        b: S,
        bias: S,
        out: S,
        distinct: slots.is_some(),
    };
    let zeros = Operands {
        a: vec![0; rows * cols],
        b: vec![0; rows * cols],
        bias: vec![0; cols],
    };
    let mut case = make_case("compiled".into(), rows, cols, zeros, placement);
    if let Some([a, b, out]) = slots {
        for (name, slot) in [("a", a), ("b", b), ("out", out)] {
            if let Some(buffer) = case.buffers.iter_mut().find(|x| x.name == name) {
                buffer.element_slot = Some(slot);
            }
        }
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> u16 {
        half::f16::from_f32(v).to_bits()
    }

    #[test]
    fn reference_adds_then_adds_the_bias() {
        // [1, 2, 3, 4] + [0.5, 0.5, -3, 65504] + [1, -2, 0, 65504]
        let a = [1.0f32, 2.0, 3.0, 4.0].map(h);
        let b = [0.5f32, 0.5, -3.0, 65504.0].map(h);
        let bias = [1.0f32, -2.0, 0.0, 65504.0].map(h);
        let want = [2.5f32, 0.5, 0.0, f32::INFINITY].map(h);
        assert_eq!(add_bias(&a, &b, &bias), want.to_vec());
        // The first sum is rounded before the bias: 2048 + 1 rounds to 2048 (ties to even),
        // and 2048 + 1 again is 2048 where (1 + 1) + 2048 would be 2050.
        assert_eq!(
            add_bias(&[h(2048.0)], &[h(1.0)], &[h(1.0)]),
            vec![h(2048.0)]
        );
        // inf + -inf is the canonical NaN whatever the bias.
        assert_eq!(add_bias(&[0x7c00], &[0xfc00], &[h(1.0)]), vec![0x7e00]);
    }

    #[test]
    fn split_table_starts_rows_correctly() {
        let t = split_table(5, 36); // 45 groups, 9 per row
        assert_eq!(t[0], (0, 0, 8));
        assert_eq!(t[2], (1, 7, 8));
        assert_eq!(t.iter().map(|e| e.2).sum::<u32>(), 45);
        // Rows of 16 columns go whole: 13 rows as 3, 2, 2, 2, 2, 2.
        let t = split_table(13, 16);
        assert_eq!(t[0], (0, 0, 12));
        assert_eq!(t[1], (3, 0, 8));
        assert_eq!(t.iter().map(|e| e.2).sum::<u32>(), 52);
    }
}
