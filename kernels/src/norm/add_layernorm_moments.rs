//! `add_layernorm_moments`: s = a + b (f16) stored, plus the FP32 moments (mean, rstd) of
//! every row of s, the variance centred and taken from the stored (rounded) sums.
//! Source: `kernels/asm/layernorm_stats.S` followed by `add_layernorm_moments.S`.

use super::data::{h, Dist};
use super::stats::{cycles, row_stats, shape_words, MeanLanes, Shape, ROW_SCRATCH_BYTES, V_END};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::WORKERS;
use crate::{kernel_consts, Kernel};
use half::f16;
use tessera_isa::rng::Rng;

pub struct AddLayerNormMoments;

pub static ADD_LAYERNORM_MOMENTS: AddLayerNormMoments = AddLayerNormMoments;

const NAME: &str = "add_layernorm_moments";
/// Vertex word with the flags (bit 0: the three streams are in different memory elements).
const V_FLAGS: usize = V_END;

/// Where a case puts a, b and sum_out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Placement {
    /// All in one region with no element separation: the general path.
    Shared(Region),
    /// a, b, sum in three element slots of one region: the ld2xst64pace path.
    Slots(Region),
    /// Separate slots, but the flag left clear (the general path must work there too).
    SlotsNoFlag(Region),
}

impl Placement {
    fn label(self) -> String {
        match self {
            Placement::Shared(r) => format!("{r:?}"),
            Placement::Slots(r) => format!("{r:?} slots fast"),
            Placement::SlotsNoFlag(r) => format!("{r:?} slots general"),
        }
    }
}

/// Builds a case from its rows.
pub fn make_case(
    label: &str,
    rows: usize,
    n: usize,
    a: Vec<u16>,
    b: Vec<u16>,
    eps: f32,
    placement: Placement,
) -> Case {
    assert_eq!((a.len(), b.len()), (rows * n, rows * n));
    let (region, slots, fast) = match placement {
        Placement::Shared(r) => (r, [None, None, None], false),
        Placement::Slots(r) => (r, [Some(0), Some(1), Some(2)], true),
        Placement::SlotsNoFlag(r) => (r, [Some(0), Some(1), Some(2)], false),
    };
    let buffers = vec![
        Buffer::input("a", bytes::from_u16(&a), region, slots[0]),
        Buffer::input("b", bytes::from_u16(&b), region, slots[1]),
        Buffer::output("sum", rows * n * 2, region, slots[2]),
        Buffer::output("moments", rows * 8, Region::Standard, None),
        Buffer::scratch("scratch", rows * ROW_SCRATCH_BYTES, Region::Standard),
    ];
    let mut vertex: Vec<VertexWord> = (0..5)
        .map(|buffer| VertexWord::Address { buffer, offset: 0 })
        .collect();
    vertex.extend(shape_words(rows, n, eps));
    vertex.push(VertexWord::Value(u32::from(fast)));
    Case {
        kernel: NAME.into(),
        name: format!("{rows}x{n} {label} eps={eps:e} {}", placement.label()),
        buffers,
        vertex,
        supervisor_csrs: vec![],
    }
}

/// The f16 sum the kernel stores: IEEE binary16 addition, RNE (via `half`, exact through f32),
/// NaN results canonical 0x7e00.
pub fn add_f16(a: u16, b: u16) -> u16 {
    let s = f16::from_bits(a) + f16::from_bits(b);
    if s.is_nan() {
        0x7e00
    } else {
        s.to_bits()
    }
}

impl Kernel for AddLayerNormMoments {
    kernel_consts! {
        name: NAME,
        source: concat!(
            include_str!("../../asm/layernorm_stats.S"),
            include_str!("../../asm/add_layernorm_moments.S")
        ),
        entry_kind: Supervisor,
        abi: "supervisor; vertex: a, b (f16 rows x n), sum_out (f16 rows x n), moments_out (rows x (mean f32, rstd f32)), scratch (48 B/row), rows, n, inv_n (f32), eps (f32), split[6] of n/4 groups, flags (bit 0: a, b, sum_out in three different memory elements -> ld2xst64pace path); rows > 1 needs n % 4 == 0",
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(0xadd1);
        let mut cases = Vec::new();
        let push = |cases: &mut Vec<Case>,
                    rng: &mut Rng,
                    rows: usize,
                    n: usize,
                    da: Dist,
                    db: Dist,
                    placement: Placement,
                    eps: f32| {
            let a = da.rows(rng, rows, n);
            let b = db.rows(rng, rows, n);
            let label = if da == db {
                da.label()
            } else {
                format!("{} + {}", da.label(), db.label())
            };
            cases.push(make_case(&label, rows, n, a, b, eps, placement));
        };
        let normal = Dist::Normal {
            mean: 0.0,
            std: 1.0,
        };
        let std_ = Placement::Shared(Region::Standard);
        let inter = Placement::Shared(Region::Interleaved);
        let fast_i = Placement::Slots(Region::Interleaved);
        let fast_s = Placement::Slots(Region::Standard);
        // Target widths on both paths and regions.
        for &n in &[1152usize, 2152, 1728, 4304] {
            for placement in [std_, inter, fast_i, fast_s] {
                push(&mut cases, &mut rng, 1, n, normal, normal, placement, 1e-6);
            }
        }
        push(
            &mut cases,
            &mut rng,
            1,
            1152,
            normal,
            normal,
            Placement::SlotsNoFlag(Region::Interleaved),
            1e-6,
        );
        // Small and odd widths, both paths.
        for &n in &[
            1usize, 2, 3, 4, 5, 7, 8, 12, 17, 23, 24, 25, 29, 48, 383, 1153,
        ] {
            let placement = if n % 2 == 1 { fast_i } else { std_ };
            push(
                &mut cases,
                &mut rng,
                1,
                n,
                normal,
                Dist::Normal {
                    mean: 1.0,
                    std: 2.0,
                },
                placement,
                1e-6,
            );
            if n <= 8 || n == 17 {
                push(
                    &mut cases,
                    &mut rng,
                    1,
                    n,
                    normal,
                    normal,
                    if n % 2 == 1 { std_ } else { fast_s },
                    1e-6,
                );
            }
        }
        // Several rows.
        for &(rows, n, placement) in &[
            (2usize, 1152usize, fast_i),
            (3, 8, std_),
            (5, 4, fast_s),
            (6, 1152, inter),
            (7, 4304, fast_i),
            (38, 1152, fast_i),
            (38, 1152, inter),
            (13, 24, fast_s),
            (9, 20, inter),
        ] {
            push(
                &mut cases, &mut rng, rows, n, normal, normal, placement, 1e-6,
            );
        }
        // Constant rows, large means, specials, overflow of the sum, tiny, any bits.
        for &(rows, n, da, db, placement) in &[
            (
                1usize,
                1152usize,
                Dist::Constant(0.75),
                Dist::Constant(0.25),
                std_,
            ),
            (
                6,
                1152,
                Dist::Constant(600.0),
                Dist::Constant(400.0),
                fast_i,
            ),
            (1, 17, Dist::Constant(-3.0), Dist::Constant(1.0), std_),
            (
                1,
                1152,
                Dist::LargeMean,
                Dist::Normal {
                    mean: 0.0,
                    std: 0.5,
                },
                fast_i,
            ),
            (3, 2152, Dist::LargeMean, Dist::Constant(0.0), std_),
            (6, 1152, Dist::Specials, normal, fast_i),
            (12, 28, normal, Dist::Specials, std_),
            (1, 1152, Dist::Tiny, Dist::Tiny, inter),
            (3, 64, Dist::AnyBits, Dist::AnyBits, fast_s),
            (1, 1152, Dist::Wide, Dist::Wide, fast_i),
            (1, 1152, Dist::Wide, Dist::Wide, std_),
            (1, 2152, Dist::Wide, normal, fast_s),
            (4, 1728, Dist::Wide, Dist::Wide, fast_i),
            (1, 203, Dist::Wide, Dist::Wide, std_),
            (1, 1151, Dist::AnyBits, Dist::AnyBits, std_),
        ] {
            push(&mut cases, &mut rng, rows, n, da, db, placement, 1e-6);
        }
        // Sums that overflow f16 (65504 + 65504 = inf) and cancel exactly.
        {
            let n = 1152;
            // The largest f16 every 97th element, normal elsewhere.
            let with_max = |rng: &mut Rng| -> Vec<u16> {
                (0..n)
                    .map(|i| {
                        if i % 97 == 0 {
                            0x7bff
                        } else {
                            h(rng.normal(0.0, 1.0))
                        }
                    })
                    .collect()
            };
            let a = with_max(&mut rng);
            let b = with_max(&mut rng);
            cases.push(make_case("f16 overflow", 1, n, a, b, 1e-6, std_));
            let a: Vec<u16> = (0..n).map(|_| h(rng.normal(0.0, 3.0))).collect();
            let b: Vec<u16> = a.iter().map(|&x| x ^ 0x8000).collect();
            cases.push(make_case("a + (-a) = 0", 1, n, a, b, 1e-6, fast_i));
        }
        for eps in [1e-5f32, 0.0, 0.5] {
            push(&mut cases, &mut rng, 2, 1152, normal, normal, fast_i, eps);
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = *rng.pick(&[1usize, 1, 1, 2, 3, 6, 7, 11]);
        let n = if rows == 1 {
            rng.range(1, 2400) as usize
        } else {
            4 * rng.range(1, 600) as usize
        };
        let dists = [
            Dist::Normal {
                mean: 0.0,
                std: 1.0,
            },
            Dist::Normal {
                mean: 5.0,
                std: 30.0,
            },
            Dist::LargeMean,
            Dist::Constant(2.5),
            Dist::Specials,
            Dist::Tiny,
            Dist::AnyBits,
            Dist::Wide,
        ];
        let (da, db) = (*rng.pick(&dists), *rng.pick(&dists));
        let region = if rng.next_u32().is_multiple_of(2) {
            Region::Standard
        } else {
            Region::Interleaved
        };
        let placement = match rng.range(0, 2) {
            0 => Placement::Shared(region),
            1 => Placement::Slots(region),
            _ => Placement::SlotsNoFlag(region),
        };
        let a = da.rows(&mut rng, rows, n);
        let b = db.rows(&mut rng, rows, n);
        let eps = *rng.pick(&[1e-6f32, 1e-5, 1e-3]);
        make_case(
            &format!("random seed={seed} {} + {}", da.label(), db.label()),
            rows,
            n,
            a,
            b,
            eps,
            placement,
        )
    }

    /// s = f16(a + b) (RNE) for every element; per row, mean and rstd of s exactly as the
    /// statistics passes compute them ([`super::stats::row_stats`]), stored as two f32.
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = Shape::of(case);
        let a = bytes::to_u16(&case.buffer("a").bytes);
        let b = bytes::to_u16(&case.buffer("b").bytes);
        let s: Vec<u16> = a.iter().zip(&b).map(|(&x, &y)| add_f16(x, y)).collect();
        let mut moments = Vec::new();
        for row in s.chunks_exact(shape.n) {
            let stats = row_stats(&shape, row, MeanLanes::Blocks);
            moments.push(stats.mean);
            moments.push(stats.rstd);
        }
        vec![bytes::from_u16(&s), bytes::from_f32(&moments)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let shape = Shape::of(case);
        let fast = case.word(V_FLAGS) & 1 != 0;
        estimate(&shape, fast)
    }
}

/// Cycle estimate from the loop structure (see [`super::stats::cycles`]): pass 1 takes 6
/// bundles per two groups (3 on the pace path) and about 24 (28) around them per row, the
/// eight accumulators read out with four `f32v2gina`; pass 2 is the shared variance pass;
/// pass 3 takes 14 bundles per row for worker 0's rows.
fn estimate(shape: &Shape, fast: bool) -> u64 {
    let add = if fast {
        cycles::busiest(
            shape,
            25,
            &|c| match c {
                0 => 17,
                1 => 24,
                _ => 3 * (c / 2) + (c % 2) + 28,
            },
            18,
        )
    } else {
        cycles::busiest(shape, 27, &|c| if c > 0 { 3 * c + 24 } else { 17 }, 18)
    };
    let fin = 11 + 14 * (shape.rows as u64).div_ceil(WORKERS as u64) + 1;
    cycles::total(&[add, cycles::var_pass(shape, false), fin])
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_isa::numerics::{f32_add, f32_oorx};

    #[test]
    fn f16_sums() {
        assert_eq!(add_f16(h(1.0), h(2.0)), h(3.0));
        assert_eq!(
            add_f16(0x7bff, 0x7bff),
            0x7c00,
            "65504 + 65504 overflows to inf"
        );
        assert_eq!(
            add_f16(0x7c00, 0xfc00),
            0x7e00,
            "inf - inf is the canonical NaN"
        );
        // 2048 + 1 is a tie in f16 (spacing 2): rounds to even, 2048.
        assert_eq!(add_f16(h(2048.0), h(1.0)), h(2048.0));
    }

    #[test]
    fn moments_of_small_rows() {
        // a + b = [1, 2, 3, 4, 5, 6, 7, 8]: mean 4.5, var 5.25.
        let a: Vec<u16> = (0..8).map(|i| h(i as f64)).collect();
        let b = vec![h(1.0); 8];
        let case = make_case("t", 1, 8, a, b, 1e-6, Placement::Shared(Region::Standard));
        let out = ADD_LAYERNORM_MOMENTS.reference(&case);
        assert_eq!(
            bytes::to_u16(&out[0]),
            (1..=8).map(|i| h(i as f64)).collect::<Vec<_>>()
        );
        let m = bytes::to_f32(&out[1]);
        assert_eq!(m[0], 4.5);
        assert_eq!(m[1], f32_oorx(f32_add(5.25, 1e-6)));
        // Constant sums: variance 0, rstd = 1/sqrt(eps).
        let case = make_case(
            "t",
            2,
            4,
            vec![h(600.0); 8],
            vec![h(400.0); 8],
            1e-6,
            Placement::Shared(Region::Standard),
        );
        let m = bytes::to_f32(&ADD_LAYERNORM_MOMENTS.reference(&case)[1]);
        assert_eq!(m, vec![1000.0, f32_oorx(1e-6), 1000.0, f32_oorx(1e-6)]);
    }
}
