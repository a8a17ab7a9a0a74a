//! The GEMM kernels' cases: the deterministic tables of [`GemmSpec`]s (headline shapes, row, K
//! and N tails, formats and scales, data distributions, slot sharing) and the random case.

use super::abi::{fits, SLOT_A, SLOT_C, SLOT_C0};
use super::{AmpGemm, Data, GemmSpec, Precision};
use crate::case::{Case, Region};
use tessera_isa::numerics::Fp8Format;
use tessera_isa::rng::Rng;

impl AmpGemm {
    /// The default case specs.
    pub fn specs(&self) -> Vec<GemmSpec> {
        match self.precision {
            Precision::Fp8 => fp8_specs(),
            Precision::F16 => f16_specs(),
        }
    }
}

/// A random case that fits one tile (the checker's random mode).
pub(super) fn random_case(kernel: &AmpGemm, seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    loop {
        let mut spec = GemmSpec::new(
            rng.range(1, 140) as usize,
            rng.range(
                1,
                if kernel.precision == Precision::Fp8 {
                    1200
                } else {
                    600
                },
            ) as usize,
            rng.range(1, 100) as usize,
        );
        spec.partials = rng.next_u32() & 1 == 1;
        spec.x_format = *rng.pick(&[Fp8Format::F143, Fp8Format::F152]);
        spec.w_format = *rng.pick(&[Fp8Format::F143, Fp8Format::F152]);
        spec.scale = rng.range(0, 16) as i32 - 10;
        spec.a_region = *rng.pick(&[Region::Standard, Region::Interleaved]);
        spec.c0_region = *rng.pick(&[Region::Standard, Region::Interleaved]);
        spec.b_slot = *rng.pick(&[None, Some(SLOT_A), Some(SLOT_C0), Some(SLOT_C)]);
        spec.data = *rng.pick(&[
            Data::Normal,
            Data::Normal,
            Data::Wide,
            Data::Large,
            Data::Specials,
            Data::Ones,
        ]);
        spec.seed = seed;
        // A in rows a third of the time, where K is whole K-blocks: the row stride its blocks
        // or up to 64 bytes more.
        let block = kernel.precision.block();
        if rng.next_u32().is_multiple_of(3) && spec.k.is_multiple_of(block) {
            spec.a_row_stride = Some(spec.k / block * 32 + 8 * rng.range(0, 9) as usize);
        }
        if fits(kernel.precision, &spec) {
            let mut case = kernel.make_case(&spec);
            case.name = format!("random seed={seed} {}", case.name);
            return case;
        }
    }
}

/// Shorthand for the case tables.
#[allow(clippy::too_many_arguments)]
fn spec(
    (m, k, n): (usize, usize, usize),
    partials: bool,
    (x_format, w_format, scale): (Fp8Format, Fp8Format, i32),
    a_region: Region,
    c0_region: Region,
    data: Data,
    seed: u64,
) -> GemmSpec {
    GemmSpec {
        partials,
        x_format,
        w_format,
        scale,
        a_region,
        c0_region,
        data,
        seed,
        ..GemmSpec::new(m, k, n)
    }
}

use Fp8Format::{F143, F152};
use Region::{Interleaved as IL, Standard as STD};

fn fp8_specs() -> Vec<GemmSpec> {
    let h = (F143, F143, -4); // the headline: both F143, scale -4
    let mut specs = vec![
        // Headline shapes (one tile's worth): M = 38..128, K = 1152, N = 16..64.
        spec((128, 1152, 64), false, h, STD, IL, Data::Normal, 1),
        spec((128, 1152, 64), true, h, IL, IL, Data::Normal, 2),
        spec(
            (96, 1152, 32),
            true,
            (F143, F152, -4),
            STD,
            STD,
            Data::Normal,
            3,
        ),
        spec(
            (64, 1152, 48),
            false,
            (F152, F143, -4),
            IL,
            IL,
            Data::Normal,
            4,
        ),
        spec((38, 1152, 16), true, h, STD, IL, Data::Normal, 5),
        spec((38, 1152, 64), false, h, IL, IL, Data::Specials, 6),
        // The MLP tail: K = 4304 = 134 blocks + 16.
        spec((24, 4304, 16), true, h, IL, IL, Data::Normal, 7),
        spec((1, 4304, 17), false, h, STD, IL, Data::Normal, 8),
        spec(
            (7, 4304, 32),
            true,
            (F152, F152, -8),
            IL,
            STD,
            Data::Ones,
            9,
        ),
        // Smallest: M = 1, K = 32, N = 1; single values.
        spec((1, 32, 1), false, h, IL, IL, Data::Normal, 10),
        spec((1, 1, 1), true, h, STD, STD, Data::Ones, 11),
        spec((1, 32, 16), true, h, IL, IL, Data::Normal, 12),
    ];
    // Row tails: every split regime (0, 1, 2, 3+ rows per worker).
    for (i, &m) in [2usize, 3, 5, 6, 7, 11, 12, 13, 17, 18, 19, 23, 25, 37, 41]
        .iter()
        .enumerate()
    {
        let partials = i % 2 == 0;
        let region = if i % 3 == 0 { STD } else { IL };
        specs.push(spec(
            (m, 64, 32),
            partials,
            h,
            region,
            IL,
            Data::Normal,
            100 + i as u64,
        ));
        specs.push(spec(
            (m, 33, 17),
            !partials,
            (F152, F143, -4),
            IL,
            region,
            Data::Specials,
            150 + i as u64,
        ));
    }
    // K tails (zero-padded panels and weights) and N tails (zero weight channels).
    for (i, &(k, n)) in [
        (1, 16),
        (7, 1),
        (16, 15),
        (31, 33),
        (32, 2),
        (63, 31),
        (65, 47),
        (96, 63),
        (100, 64),
        (200, 9),
        (257, 48),
    ]
    .iter()
    .enumerate()
    {
        let formats = [
            (F143, F143, -4),
            (F152, F152, -4),
            (F143, F152, 0),
            (F152, F143, -6),
        ][i % 4];
        specs.push(spec(
            (20 + i, k, n),
            i % 2 == 1,
            formats,
            if i % 2 == 0 { IL } else { STD },
            IL,
            Data::Normal,
            200 + i as u64,
        ));
    }
    // Scales and formats on a mid-size shape.
    for (i, &scale) in [-4, 0, -12, 3, -20, 7].iter().enumerate() {
        for (j, &(x, w)) in [(F143, F143), (F152, F152), (F143, F152), (F152, F143)]
            .iter()
            .enumerate()
        {
            if (i + j) % 2 == 0 {
                specs.push(spec(
                    (30, 96, 40),
                    (i + j) % 4 == 0,
                    (x, w, scale),
                    IL,
                    IL,
                    Data::Normal,
                    300 + (4 * i + j) as u64,
                ));
            }
        }
    }
    // Dynamic range, overflow, NaN, exact sums.
    for (i, data) in [Data::Wide, Data::Large, Data::Specials, Data::Ones]
        .into_iter()
        .enumerate()
    {
        for (j, &(x, w)) in [(F143, F143), (F152, F152), (F152, F143)]
            .iter()
            .enumerate()
        {
            specs.push(spec(
                (19 + j, 160, 33),
                (i + j) % 2 == 0,
                (x, w, -4),
                IL,
                STD,
                data,
                400 + (3 * i + j) as u64,
            ));
        }
    }
    // B sharing a slot with A, with C, or none (it is only read by ld128putcs).
    for (i, slot) in [Some(SLOT_A), Some(SLOT_C), Some(SLOT_C0)]
        .into_iter()
        .enumerate()
    {
        let mut s = spec(
            (29, 128, 48),
            i != 1,
            h,
            IL,
            IL,
            Data::Normal,
            500 + i as u64,
        );
        s.b_slot = slot;
        specs.push(s);
    }
    // A in rows where an exchange left them (row stride RA, no panels): the shapes of the
    // products that read a broadcast operand, few rows (the plain loop) and many, K-block
    // tails of the stride, with and without partials.
    specs.push(GemmSpec {
        a_row_stride: Some(1152),
        ..spec((122, 1152, 16), false, h, IL, IL, Data::Normal, 700)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(1152),
        ..spec((41, 1152, 32), true, h, STD, IL, Data::Normal, 701)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(72),
        ..spec((17, 64, 20), false, h, IL, IL, Data::Normal, 702)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(96),
        ..spec((13, 96, 16), true, h, IL, IL, Data::Normal, 703)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(40),
        ..spec((2, 32, 16), false, h, STD, IL, Data::Normal, 704)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(64),
        ..spec((1, 64, 48), true, h, IL, IL, Data::Normal, 705)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(4112),
        ..spec((5, 128, 16), false, h, IL, IL, Data::Normal, 706)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(296),
        ..spec((30, 288, 40), true, h, STD, IL, Data::Normal, 707)
    });
    specs.extend(chain_edges(h, 32));
    specs
}

fn f16_specs() -> Vec<GemmSpec> {
    let h = (F143, F143, -4); // ignored by the f16 AMP
    let mut specs = vec![
        // Attention scores per head: Q (tokens × 72) × Kᵀ (72 × tokens).
        spec((64, 72, 729), false, h, IL, IL, Data::Normal, 1),
        spec((197, 72, 197), false, h, STD, IL, Data::Normal, 2),
        spec((49, 72, 197), true, h, IL, IL, Data::Normal, 3),
        // Attention × V: (tokens × tokens) × (tokens × 72).
        spec((64, 729, 72), false, h, IL, IL, Data::Normal, 4),
        spec((128, 197, 72), true, h, STD, STD, Data::Normal, 5),
        spec((1, 729, 72), true, h, IL, IL, Data::Normal, 6),
        spec((1, 72, 1), false, h, IL, IL, Data::Normal, 7),
        spec((1, 16, 16), true, h, STD, STD, Data::Ones, 8),
        spec((1, 1, 1), false, h, IL, IL, Data::Ones, 9),
    ];
    for (i, &m) in [2usize, 3, 4, 5, 6, 7, 8, 11, 12, 13, 17, 18, 19, 24, 31, 43]
        .iter()
        .enumerate()
    {
        let partials = i % 2 == 1;
        let region = if i % 3 == 0 { STD } else { IL };
        specs.push(spec(
            (m, 72, 40),
            partials,
            h,
            region,
            IL,
            Data::Normal,
            100 + i as u64,
        ));
        specs.push(spec(
            (m, 17, 16),
            !partials,
            h,
            IL,
            region,
            Data::Specials,
            150 + i as u64,
        ));
    }
    for (i, &(k, n)) in [
        (1, 1),
        (3, 16),
        (15, 17),
        (16, 31),
        (17, 2),
        (47, 48),
        (64, 63),
        (72, 65),
        (100, 33),
        (129, 15),
        (200, 80),
    ]
    .iter()
    .enumerate()
    {
        specs.push(spec(
            (14 + 2 * i, k, n),
            i % 2 == 0,
            h,
            if i % 2 == 0 { STD } else { IL },
            IL,
            Data::Normal,
            200 + i as u64,
        ));
    }
    for (i, data) in [Data::Wide, Data::Large, Data::Specials, Data::Ones]
        .into_iter()
        .enumerate()
    {
        for j in 0..3 {
            specs.push(spec(
                (19 + 7 * j, 48 + 40 * j, 17 + 16 * j),
                (i + j) % 2 == 0,
                h,
                IL,
                STD,
                data,
                400 + (3 * i + j) as u64,
            ));
        }
    }
    // $FP_INFMT / $FP_ISCL have no effect on the f16 AMP.
    for (i, &(x, w, scale)) in [(F152, F152, 7), (F143, F152, -20)].iter().enumerate() {
        specs.push(spec(
            (21, 80, 24),
            i == 0,
            (x, w, scale),
            IL,
            IL,
            Data::Normal,
            500 + i as u64,
        ));
    }
    for (i, slot) in [Some(SLOT_A), Some(SLOT_C), Some(SLOT_C0)]
        .into_iter()
        .enumerate()
    {
        let mut s = spec(
            (29, 64, 48),
            i != 1,
            h,
            IL,
            IL,
            Data::Normal,
            600 + i as u64,
        );
        s.b_slot = slot;
        specs.push(s);
    }
    // A in rows where an exchange left them (row stride RA, no panels): the shapes of the
    // products that read a broadcast operand, few rows (the plain loop) and many, K-block
    // tails of the stride, with and without partials.
    specs.push(GemmSpec {
        a_row_stride: Some(160),
        ..spec((73, 80, 96), false, h, IL, IL, Data::Normal, 800)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(192),
        ..spec((73, 96, 80), true, h, STD, IL, Data::Normal, 801)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(64),
        ..spec((17, 32, 16), false, h, IL, IL, Data::Normal, 802)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(40),
        ..spec((2, 16, 16), true, h, IL, IL, Data::Normal, 803)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(288),
        ..spec((40, 144, 24), false, h, STD, IL, Data::Normal, 804)
    });
    specs.push(GemmSpec {
        a_row_stride: Some(128),
        ..spec((1, 64, 16), false, h, IL, IL, Data::Normal, 805)
    });
    specs.extend(chain_edges(h, 16));
    // The attention products at the plan's per-tile shape, chained (kbs 5 and 6, 13 rows a
    // worker), with partials and A in rows.
    specs.push(GemmSpec {
        a_row_stride: Some(160),
        ..spec((73, 80, 96), true, h, IL, STD, Data::Specials, 950)
    });
    specs
}

/// The chained K-blocks' edges ([`super::abi::chains`]) for K-blocks of `block` elements (32
/// FP8, 16 f16; 32 bytes either way): the fewest rows (24: 4 a worker) and K-blocks (3), the
/// row wrap at the pace field's end and one column block past it (7 · 4 nbs + 3 atoms: 18
/// column blocks fit, 19 do not), with and without partials, A in panels and in rows.
fn chain_edges(h: (Fp8Format, Fp8Format, i32), block: usize) -> Vec<GemmSpec> {
    let k3 = 3 * block;
    let row = 32 * 3; // bytes of A's row of 3 K-blocks
    vec![
        spec((24, k3, 32), false, h, IL, IL, Data::Normal, 900),
        spec((24, k3, 17), true, h, STD, IL, Data::Specials, 901),
        GemmSpec {
            a_row_stride: Some(row + 32 + 8),
            ..spec((25, k3 + block, 40), true, h, IL, STD, Data::Normal, 902)
        },
        spec((48, k3, 18 * 16), false, h, IL, IL, Data::Normal, 903),
        spec((48, 2 * k3, 18 * 16), true, h, STD, IL, Data::Wide, 904),
        spec((48, k3, 19 * 16), false, h, IL, IL, Data::Normal, 905),
        GemmSpec {
            a_row_stride: Some(row),
            ..spec((23, k3, 33), false, h, IL, IL, Data::Normal, 906)
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::super::{GEMM_F16, GEMM_FP8};
    use super::*;
    use crate::Kernel;

    #[test]
    fn case_tables_fit_and_are_large_enough() {
        for kernel in [&GEMM_FP8, &GEMM_F16] {
            let specs = kernel.specs();
            assert!(
                specs.len() >= 60,
                "{} has {} cases",
                kernel.name(),
                specs.len()
            );
            for spec in &specs {
                assert!(
                    fits(kernel.precision, spec),
                    "{} {spec:?} does not fit",
                    kernel.name()
                );
            }
            for seed in 0..20 {
                let case = kernel.random_case(seed);
                assert_eq!(kernel.reference(&case)[0].len(), case.buffer("c").len());
            }
        }
    }

    /// The tables hold chained cases at every edge of [`super::super::abi::chains`] and
    /// unchained ones just past them (the rows, the K-blocks, the row wrap), with and without
    /// partials and A in rows.
    #[test]
    fn case_tables_cover_the_chains_edges() {
        use super::super::abi::{FLAG_CHAIN, FLAG_PARTIALS, V_FLAGS, V_KBS, V_M};
        for kernel in [&GEMM_FP8, &GEMM_F16] {
            let cases: Vec<_> = kernel
                .specs()
                .iter()
                .map(|s| (s.clone(), kernel.make_case(s)))
                .collect();
            let chained = |c: &Case| c.word(V_FLAGS) & FLAG_CHAIN != 0;
            let has = |what: &str, f: &dyn Fn(&GemmSpec, &Case) -> bool| {
                assert!(
                    cases.iter().any(|(s, c)| f(s, c)),
                    "{}: no case {what}",
                    kernel.name()
                );
            };
            has("chained at 24 rows", &|_, c| {
                chained(c) && c.word(V_M) == 24
            });
            has("chained at 3 K-blocks", &|_, c| {
                chained(c) && c.word(V_KBS) == 3
            });
            has("chained with partials", &|_, c| {
                chained(c) && c.word(V_FLAGS) & FLAG_PARTIALS != 0
            });
            has("one chain over several column blocks", &|s, c| {
                chained(c) && c.word(V_FLAGS) & FLAG_PARTIALS == 0 && s.n > 16
            });
            has("chained with A in rows", &|s, c| {
                chained(c) && s.a_row_stride.is_some()
            });
            has("chained at the wrap's end", &|s, c| {
                chained(c) && s.n == 18 * 16 && s.m == 48
            });
            has("unchained past the wrap", &|s, c| {
                !chained(c) && s.n == 19 * 16 && s.m == 48
            });
            has("unchained at 23 rows", &|s, c| {
                !chained(c) && s.m == 23 && c.word(V_KBS) >= 3
            });
        }
    }
}
