//! `add_cwei_f16`: out = a + b for f16 blocks of `rows × 16`, the sum written in `$CWEI` order
//! over `[k = rows, n = 16]` — a K-split product's partial sums added and laid out as the
//! weights of the product that reads them (an attention's values), transposed on the way.

use super::common::{normal_halves, random_bits, worker_cycles, F16_SPECIALS, REGIONS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{worker_split, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::f16_add;
use tessera_isa::rng::Rng;

pub struct AddCwei;

const NAME: &str = "add_cwei_f16";
const V_SPLIT: usize = 4;

/// Columns of a block: one AMP channel block.
pub const COLUMNS: usize = 16;
/// Rows of the blocks the kernel takes are a multiple of this (one f16 AMP K-block).
pub const ROW_MULTIPLE: usize = 16;

/// The halves' index in the output of row `r`, column `c` (`$CWEI` order of one channel
/// block: K-blocks of 16 rows, each 16 channels of 16 rows).
pub fn cwei_index(r: usize, c: usize) -> usize {
    (r / 16) * 256 + c * 16 + r % 16
}

/// The reference: per element one f16 addition (RNE, canonical NaN, via the numerics module),
/// placed at [`cwei_index`].
pub fn add_cwei(a: &[u16], b: &[u16]) -> Vec<u16> {
    let mut out = vec![0u16; a.len()];
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        out[cwei_index(i / COLUMNS, i % COLUMNS)] = f16_add(x, y);
    }
    out
}

fn make_case(name: String, a: Vec<u16>, b: Vec<u16>, regions: [Region; 3]) -> Case {
    assert_eq!(a.len(), b.len());
    assert_eq!(
        a.len() % (COLUMNS * ROW_MULTIPLE),
        0,
        "whole blocks of 16 rows"
    );
    let rows = a.len() / COLUMNS;
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.push(VertexWord::Value(rows as u32));
    for (first, count) in worker_split((rows / 4) as u32) {
        vertex.extend([VertexWord::Value(first), VertexWord::Value(count)]);
    }
    let [ra, rb, ro] = regions;
    Case {
        kernel: NAME.into(),
        name: format!(
            "{rows}x16 {}{}{} {name}",
            ra.letter(),
            rb.letter(),
            ro.letter()
        ),
        buffers: vec![
            Buffer::input("a", bytes::from_u16(&a), ra, None),
            Buffer::input("b", bytes::from_u16(&b), rb, None),
            Buffer::output("out", rows * COLUMNS * 2, ro, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

impl Kernel for AddCwei {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/add_cwei_f16.S"),
        entry_kind: Worker,
        abi: "vertex: a, b, out (rows x 16 halves each; out in $CWEI order over [rows, 16], neither a \
              nor b), rows (% 16 == 0), split[6] (first group of 4 rows, groups); any region; 8-byte \
              aligned buffers",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0xadc3);
        let placements = [
            [REGIONS[0]; 3],
            [REGIONS[1]; 3],
            [REGIONS[0], REGIONS[1], REGIONS[0]],
            [REGIONS[1], REGIONS[0], REGIONS[1]],
        ];
        // One K-block; workers without groups; uneven groups; the blocks the planner gives
        // the attention's values (48 and 96 rows); long.
        for rows in [
            16usize, 32, 48, 64, 80, 96, 112, 128, 144, 160, 208, 256, 400,
        ] {
            for regions in placements {
                let a = normal_halves(&mut rng, rows * COLUMNS, 0.0, 3.0);
                let b = normal_halves(&mut rng, rows * COLUMNS, 0.0, 3.0);
                cases.push(make_case("normal".into(), a, b, regions));
            }
        }
        for regions in placements {
            // Every pair of edge values (24 × 24 = 576 = 36 rows), then rows of ones and
            // the smallest negative subnormal to 48.
            let n = F16_SPECIALS.len();
            let mut a: Vec<u16> = (0..n * n).map(|i| F16_SPECIALS[i / n]).collect();
            let mut b: Vec<u16> = (0..n * n).map(|i| F16_SPECIALS[i % n]).collect();
            a.resize(48 * COLUMNS, 0x3c00);
            b.resize(48 * COLUMNS, 0x8001);
            cases.push(make_case("every pair of edge values".into(), a, b, regions));
            // Sums that overflow to infinity or cancel to zero.
            let a = normal_halves(&mut rng, 32 * COLUMNS, 40000.0, 20000.0);
            let b = normal_halves(&mut rng, 32 * COLUMNS, 30000.0, 20000.0);
            cases.push(make_case("large values".into(), a, b, regions));
            let a = random_bits(&mut rng, 64 * COLUMNS);
            let b = random_bits(&mut rng, 64 * COLUMNS);
            cases.push(make_case("any bits".into(), a, b, regions));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = ROW_MULTIPLE * rng.range(1, 40) as usize;
        let regions = [0, 1, 2].map(|_| *rng.pick(&REGIONS));
        let a = random_bits(&mut rng, rows * COLUMNS);
        let b = random_bits(&mut rng, rows * COLUMNS);
        make_case(format!("random seed={seed} any bits"), a, b, regions)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let a = bytes::to_u16(&case.buffer("a").bytes);
        let b = bytes::to_u16(&case.buffer("b").bytes);
        vec![bytes::from_u16(&add_cwei(&a, &b))]
    }

    /// Bundles per worker, counted from the code: 16 to set up (6 for a worker without
    /// groups), 69 a group of 4 rows (3 of prologue, four pipelined blocks of 10 + 3 × 15, 6 of
    /// epilogue, 5 of offsets and loop), 1 to exit.
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let mut bundles = [0u64; WORKERS];
        for (w, b) in bundles.iter_mut().enumerate() {
            let groups = u64::from(case.word(V_SPLIT + 2 * w + 1));
            *b = if groups == 0 { 7 } else { 16 + 69 * groups + 1 };
        }
        worker_cycles(&bundles)
    }
}

/// The case of a compiler call: `rows × 16` halves (rows % 16 == 0) in any region. Data are
/// zeros.
pub fn compiler_case(rows: usize) -> Case {
    let zeros = vec![0u16; rows * COLUMNS];
    make_case(
        "compiled".into(),
        zeros.clone(),
        zeros,
        [Region::Standard; 3],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The output order is the AMP weight order the products read (`layout`'s own
    /// conversion of the row-major sum, an independent statement of `$CWEI`).
    #[test]
    fn the_output_is_the_row_major_sum_in_cwei_blocks() {
        let mut rng = Rng::new(7);
        let rows = 48;
        let a = normal_halves(&mut rng, rows * COLUMNS, 0.0, 1.0);
        let b = normal_halves(&mut rng, rows * COLUMNS, 0.0, 1.0);
        let sum: Vec<u16> = a.iter().zip(&b).map(|(&x, &y)| f16_add(x, y)).collect();
        let want = crate::layout::weights_to_cwei_blocks(&bytes::from_u16(&sum), rows, 16, 2);
        assert_eq!(bytes::from_u16(&add_cwei(&a, &b)), want);
    }
}
