//! `layernorm_f16` and `layernorm_fp8`: LayerNorm over the rows of an f16 matrix with centred
//! FP32 statistics, f32 gamma/beta and FP32 affine arithmetic; f16 or packed FP8 out.
//! Source: `kernels/asm/layernorm_stats.S`, then the header `layernorm_f16.S` / `layernorm_fp8.S`,
//! then the code they share, `layernorm_body.S`.

use super::data::{f32s, Dist};
use super::stats::{cycles, row_stats, shape_words, MeanLanes, Shape, ROW_SCRATCH_BYTES, V_END};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::{EntryKind, Kernel};
use tessera_isa::csr::{field, index};
use tessera_isa::numerics::{
    f16_to_f32, f16_to_fp8, f32_add, f32_mul, f32_sub, f32_to_f16, scale_from_field,
    scale_to_field, Fp8Format,
};
use tessera_isa::rng::Rng;

/// LayerNorm with f16 (`fp8: false`) or FP8 output.
pub struct LayerNorm {
    fp8: bool,
}

pub static LAYERNORM_F16: LayerNorm = LayerNorm { fp8: false };
pub static LAYERNORM_FP8: LayerNorm = LayerNorm { fp8: true };

/// Vertex words after the shared layout: the deviation buffer (or 0), then (FP8) the format
/// and scale CSR values.
const V_DEV: usize = V_END;
const V_NFMT: usize = V_END + 1;
const V_SCL: usize = V_END + 2;

/// FP8 output settings of a case.
#[derive(Clone, Copy, Debug)]
pub struct Fp8Out {
    pub format: Fp8Format,
    /// The `$FP_SCL` value: codes encode y · 2^scl.
    pub scl: i32,
    pub nanoo: bool,
}

impl Fp8Out {
    /// A random format, `$FP_SCL` in −8..8 and NANOO setting.
    pub(super) fn random(rng: &mut Rng) -> Fp8Out {
        Fp8Out {
            format: if rng.next_u32().is_multiple_of(2) {
                Fp8Format::F143
            } else {
                Fp8Format::F152
            },
            scl: rng.range(0, 16) as i32 - 8,
            nanoo: rng.next_u32().is_multiple_of(2),
        }
    }

    /// The settings a case's vertex words `nfmt` and `scl` and its supervisor CSRs carry:
    /// (format, scale, NANOO) as `f16_to_fp8` takes them.
    pub(super) fn of_case(case: &Case, nfmt: usize, scl: usize) -> (Fp8Format, i32, bool) {
        let format = Fp8Format::from_format_bit((case.word(nfmt) >> 1) & 1);
        let nanoo = case
            .supervisor_csrs
            .iter()
            .any(|&(i, v)| i == index::FP_ICTL && v & field::FP_CTL_NANOO != 0);
        (format, scale_from_field(case.word(scl)), nanoo)
    }
}

/// The row distributions random LayerNorm cases draw from.
pub(super) const RANDOM_DISTS: [Dist; 8] = [
    Dist::Normal {
        mean: 0.0,
        std: 1.0,
    },
    Dist::Normal {
        mean: -3.0,
        std: 20.0,
    },
    Dist::LargeMean,
    Dist::Constant(1.5),
    Dist::Specials,
    Dist::Tiny,
    Dist::AnyBits,
    Dist::Wide,
];

/// Everything that defines a LayerNorm case.
#[derive(Clone, Debug)]
pub struct LnSpec {
    pub label: String,
    pub rows: usize,
    pub n: usize,
    pub x: Vec<u16>,
    pub gamma: Vec<f32>,
    pub beta: Vec<f32>,
    pub eps: f32,
    /// Regions of x, gamma/beta, out, scratch.
    pub regions: [Region; 4],
    /// Give the kernel the deviation buffer (rows × 4·⌈n/4⌉ f32), so the normalising pass reads
    /// the deviations the variance pass stored instead of recomputing them.
    pub dev: bool,
    pub fp8: Option<Fp8Out>,
}

impl LayerNorm {
    fn name_str(&self) -> &'static str {
        if self.fp8 {
            "layernorm_fp8"
        } else {
            "layernorm_f16"
        }
    }

    /// Builds the case of `spec` (which must carry FP8 settings exactly when this kernel is FP8).
    pub fn make_case(&self, spec: LnSpec) -> Case {
        assert_eq!(spec.fp8.is_some(), self.fp8);
        let (rows, n) = (spec.rows, spec.n);
        assert_eq!(spec.x.len(), rows * n);
        assert_eq!((spec.gamma.len(), spec.beta.len()), (n, n));
        let out_bytes = if self.fp8 { rows * n } else { rows * n * 2 };
        let [rx, rgb, rout, rscratch] = spec.regions;
        let mut buffers = vec![
            Buffer::input("x", bytes::from_u16(&spec.x), rx, None),
            Buffer::input("gamma", bytes::from_f32(&spec.gamma), rgb, None),
            Buffer::input("beta", bytes::from_f32(&spec.beta), rgb, None),
            Buffer::output("out", out_bytes, rout, None),
            Buffer::scratch("scratch", rows * ROW_SCRATCH_BYTES, rscratch),
        ];
        let mut vertex: Vec<VertexWord> = (0..5)
            .map(|buffer| VertexWord::Address { buffer, offset: 0 })
            .collect();
        vertex.extend(shape_words(rows, n, spec.eps));
        debug_assert_eq!(vertex.len(), V_DEV);
        if spec.dev {
            buffers.push(Buffer::scratch("dev", rows * n.div_ceil(4) * 16, rscratch));
            vertex.push(VertexWord::Address {
                buffer: 5,
                offset: 0,
            });
        } else {
            vertex.push(VertexWord::Value(0));
        }
        let mut supervisor_csrs = vec![];
        let path = if spec.dev { "dev" } else { "x" };
        let mut name = format!(
            "{rows}x{n} {} eps={:e} x:{rx:?} gamma:{rgb:?} out:{rout:?} path={path}",
            spec.label, spec.eps
        );
        if let Some(f) = spec.fp8 {
            vertex.push(VertexWord::Value(f.format.format_bit() << 1));
            vertex.push(VertexWord::Value(scale_to_field(f.scl)));
            if f.nanoo {
                supervisor_csrs.push((index::FP_ICTL, field::FP_CTL_NANOO));
            }
            name = format!("{name} {} scl={} nanoo={}", f.format.name(), f.scl, f.nanoo);
        }
        Case {
            kernel: self.name_str().into(),
            name,
            buffers,
            vertex,
            supervisor_csrs,
        }
    }

    fn spec(
        &self,
        rng: &mut Rng,
        rows: usize,
        n: usize,
        dist: Dist,
        regions: [Region; 4],
        fp8: Option<Fp8Out>,
    ) -> LnSpec {
        let x = dist.rows(rng, rows, n);
        let gamma = f32s(rng, n, 1.0, 0.25);
        let beta = f32s(rng, n, 0.0, 0.5);
        // The deviation buffer whenever it fits easily (the biggest multi-row cases go without).
        let dev = rows * n <= 3 * 4304;
        LnSpec {
            label: dist.label(),
            rows,
            n,
            x,
            gamma,
            beta,
            eps: 1e-6,
            regions,
            dev,
            fp8,
        }
    }

    fn fp8_default(&self) -> Option<Fp8Out> {
        self.fp8.then_some(Fp8Out {
            format: Fp8Format::F143,
            scl: 0,
            nanoo: false,
        })
    }
}

const STD: [Region; 4] = [Region::Standard; 4];
const INTER: [Region; 4] = [Region::Interleaved; 4];
const MIXED: [Region; 4] = [
    Region::Interleaved,
    Region::Standard,
    Region::Interleaved,
    Region::Standard,
];
const MIXED2: [Region; 4] = [
    Region::Standard,
    Region::Interleaved,
    Region::Interleaved,
    Region::Standard,
];

impl Kernel for LayerNorm {
    fn name(&self) -> &'static str {
        self.name_str()
    }

    fn source(&self) -> &'static str {
        if self.fp8 {
            concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_fp8.S"),
                include_str!("../../asm/layernorm_body.S")
            )
        } else {
            concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_f16.S"),
                include_str!("../../asm/layernorm_body.S")
            )
        }
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Supervisor
    }

    fn abi(&self) -> &'static str {
        if self.fp8 {
            "supervisor; vertex: x (f16 rows x n), gamma (f32[n]), beta (f32[n]), out (FP8 rows x n), scratch (48 B/row), rows, n, inv_n (f32), eps (f32), split[6] of n/4 groups, dev (0 or rows x 4*ceil(n/4) f32 scratch: pass 3 at 8 instead of 12 bundles per 4 elements), nfmt ($FP_NFMT: 2 F143, 0 F152), scl ($FP_SCL); NANOO from $FP_ICTL; rows > 1 needs n % 4 == 0; any region"
        } else {
            "supervisor; vertex: x (f16 rows x n), gamma (f32[n]), beta (f32[n]), out (f16 rows x n), scratch (48 B/row), rows, n, inv_n (f32), eps (f32), split[6] of n/4 groups, dev (0 or rows x 4*ceil(n/4) f32 scratch: pass 3 at 7 instead of 11 bundles per 4 elements); rows > 1 needs n % 4 == 0; any region"
        }
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(if self.fp8 { 0x1a8 } else { 0x1a16 });
        let fp8 = self.fp8_default();
        let mut specs: Vec<LnSpec> = Vec::new();
        let normal = Dist::Normal {
            mean: 0.0,
            std: 1.0,
        };
        // The target shapes and the model widths, both regions.
        // Both normalising paths: from the stored deviations and from x.
        for &n in &[1152usize, 1728, 2152, 4304] {
            for (regions, dev) in [(STD, true), (INTER, true), (MIXED, false), (INTER, false)] {
                let mut s = self.spec(&mut rng, 1, n, normal, regions, fp8);
                s.dev = dev;
                specs.push(s);
            }
        }
        // Small and odd widths (tails of 1..3 elements, workers with no groups), both paths.
        for (i, &n) in [
            1usize, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 17, 21, 23, 24, 25, 31, 95, 383, 1153, 1155,
        ]
        .iter()
        .enumerate()
        {
            let dist = if n % 2 == 0 {
                Dist::Normal {
                    mean: 0.5,
                    std: 3.0,
                }
            } else {
                normal
            };
            let regions = if n % 3 == 0 { INTER } else { STD };
            let mut s = self.spec(&mut rng, 1, n, dist, regions, fp8);
            s.dev = i % 2 == 0;
            specs.push(s);
            if matches!(n, 1 | 3 | 5 | 17) {
                let mut s = self.spec(
                    &mut rng,
                    1,
                    n,
                    Dist::Normal {
                        mean: -2.0,
                        std: 0.5,
                    },
                    MIXED2,
                    fp8,
                );
                s.dev = i % 2 == 1;
                specs.push(s);
            }
        }
        // Several rows, split by columns: every worker takes its groups of every row.
        for &(rows, n, regions) in &[
            (2usize, 1152usize, STD),
            (3, 8, STD),
            (5, 4, INTER),
            (6, 1152, MIXED),
            (7, 4304, MIXED),
            (38, 1152, MIXED2),
            (24, 48, INTER),
            (13, 24, STD),
            (4, 100, INTER),
            (9, 20, STD),
        ] {
            specs.push(self.spec(&mut rng, rows, n, normal, regions, fp8));
        }
        // Constant rows (variance 0, rstd = 1/sqrt(eps)), large-mean rows, specials, tiny.
        for &(rows, n, dist) in &[
            (1usize, 1152usize, Dist::Constant(0.75)),
            (1, 17, Dist::Constant(-3.5)),
            (6, 1152, Dist::Constant(1000.0)),
            (4, 24, Dist::Constant(0.0)),
            (1, 1152, Dist::LargeMean),
            (1, 1728, Dist::LargeMean),
            (3, 1152, Dist::LargeMean),
            (1, 5, Dist::LargeMean),
            (6, 1152, Dist::Specials),
            (12, 28, Dist::Specials),
            (1, 1152, Dist::Tiny),
            (2, 2152, Dist::Tiny),
            (3, 64, Dist::AnyBits),
            (1, 1152, Dist::Wide),
            (4, 2152, Dist::Wide),
            (1, 203, Dist::Wide),
            (1, 1151, Dist::AnyBits),
        ] {
            let regions = if rows % 2 == 0 { INTER } else { STD };
            specs.push(self.spec(&mut rng, rows, n, dist, regions, fp8));
        }
        // Unit gamma / zero beta, NaN and inf in gamma/beta, other eps.
        {
            let mut s = self.spec(&mut rng, 2, 1152, normal, STD, fp8);
            s.gamma = vec![1.0; 1152];
            s.beta = vec![0.0; 1152];
            s.label = "gamma 1 beta 0".into();
            specs.push(s);
            let mut s = self.spec(&mut rng, 1, 1152, normal, INTER, fp8);
            s.gamma[3] = f32::NAN;
            s.gamma[700] = f32::INFINITY;
            s.beta[5] = f32::NEG_INFINITY;
            s.beta[1151] = f32::NAN;
            s.label = "NaN/inf in gamma/beta".into();
            specs.push(s);
            for eps in [1e-5f32, 0.0, 0.25] {
                let mut s = self.spec(
                    &mut rng,
                    3,
                    1152,
                    Dist::Normal {
                        mean: 2.0,
                        std: 0.01,
                    },
                    STD,
                    fp8,
                );
                s.eps = eps;
                specs.push(s);
            }
            let mut s = self.spec(&mut rng, 1, 1152, Dist::Constant(2.0), STD, fp8);
            s.eps = 0.0;
            s.label = "constant, eps 0 (rstd inf)".into();
            specs.push(s);
        }
        // FP8: both formats, scales (including -4), NANOO on and off, values that overflow.
        if self.fp8 {
            for format in [Fp8Format::F143, Fp8Format::F152] {
                for &(scl, nanoo) in &[
                    (0, false),
                    (0, true),
                    (-4, false),
                    (-4, true),
                    (3, false),
                    (3, true),
                    (-1, true),
                    (5, false),
                    (-9, false),
                ] {
                    let regions = if nanoo { INTER } else { STD };
                    let mut s = self.spec(
                        &mut rng,
                        1,
                        1152,
                        normal,
                        regions,
                        Some(Fp8Out { format, scl, nanoo }),
                    );
                    // Spread gamma so that some outputs overflow the format at positive scales.
                    s.gamma = f32s(
                        &mut rng,
                        1152,
                        0.0,
                        if format == Fp8Format::F143 {
                            12.0
                        } else {
                            2000.0
                        },
                    );
                    specs.push(s);
                }
                let mut s = self.spec(
                    &mut rng,
                    1,
                    19,
                    Dist::Specials,
                    STD,
                    Some(Fp8Out {
                        format,
                        scl: -4,
                        nanoo: true,
                    }),
                );
                s.label = "NaN/inf odd width".into();
                specs.push(s);
                specs.push(self.spec(
                    &mut rng,
                    6,
                    1152,
                    Dist::Specials,
                    MIXED,
                    Some(Fp8Out {
                        format,
                        scl: 1,
                        nanoo: false,
                    }),
                ));
            }
        }
        specs.into_iter().map(|s| self.make_case(s)).collect()
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = *rng.pick(&[1usize, 1, 1, 2, 3, 6, 7, 11]);
        let n = if rows == 1 {
            rng.range(1, 2400) as usize
        } else {
            4 * rng.range(1, 600) as usize
        };
        let dist = *rng.pick(&RANDOM_DISTS);
        let regions = [STD, INTER, MIXED, MIXED2][rng.range(0, 3) as usize];
        let fp8 = self.fp8.then(|| Fp8Out::random(&mut rng));
        let mut spec = self.spec(&mut rng, rows, n, dist, regions, fp8);
        spec.label = format!("random seed={seed} {}", spec.label);
        spec.eps = *rng.pick(&[1e-6f32, 1e-5, 1e-3]);
        self.make_case(spec)
    }

    /// Per row: mean and rstd exactly as the statistics passes compute them
    /// ([`super::stats::row_stats`]); then per element, in f32 RNE:
    /// d = f32(x) − mean; t = (rstd · d) + 0 (the f32v2axpy step); y = t · gamma + beta;
    /// y16 = f16(y) (RNE; NaN → 0x7e00). FP8: f16_to_fp8(y16, format, scl, nanoo).
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = Shape::of(case);
        let x = bytes::to_u16(&case.buffer("x").bytes);
        let gamma = bytes::to_f32(&case.buffer("gamma").bytes);
        let beta = bytes::to_f32(&case.buffer("beta").bytes);
        let fp8 = self.fp8.then(|| Fp8Out::of_case(case, V_NFMT, V_SCL));
        let mut out = Vec::new();
        for row in x.chunks_exact(shape.n) {
            let stats = row_stats(&shape, row, MeanLanes::Groups);
            for (i, &xi) in row.iter().enumerate() {
                let d = f32_sub(f16_to_f32(xi), stats.mean);
                let t = f32_add(f32_mul(stats.rstd, d), 0.0);
                let y = f32_to_f16(f32_add(f32_mul(t, gamma[i]), beta[i]));
                match fp8 {
                    Some((format, scale, nanoo)) => out.push(f16_to_fp8(y, format, scale, nanoo)),
                    None => out.extend(y.to_le_bytes()),
                }
            }
        }
        vec![out]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let shape = Shape::of(case);
        let dev = !matches!(case.vertex[V_DEV], VertexWord::Value(0));
        estimate(&shape, self.fp8, dev)
    }
}

/// Cycle estimate from the loop structure (see [`super::stats::cycles`]): the two statistics
/// passes, then the normalising pass: per row, from the deviations 7 (FP8 8) bundles per group
/// and 14 around them; from x 11 (12) per group and 19 around them.
fn estimate(shape: &Shape, fp8: bool, dev: bool) -> u64 {
    let f = u64::from(fp8);
    let setup = if fp8 { 36 } else { 30 } + 2 * u64::from(dev);
    let norm = if dev {
        cycles::busiest(
            shape,
            setup,
            &|c| if c > 0 { (7 + f) * c + 14 } else { 11 },
            36,
        )
    } else {
        cycles::busiest(
            shape,
            setup,
            &|c| if c > 0 { (11 + f) * c + 19 } else { 15 },
            40,
        )
    };
    cycles::total(&[cycles::mean_pass(shape), cycles::var_pass(shape, dev), norm])
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn spec(x: &[f32], gamma: Vec<f32>, beta: Vec<f32>, fp8: Option<Fp8Out>) -> LnSpec {
        LnSpec {
            label: "test".into(),
            rows: 1,
            n: x.len(),
            x: x.iter().map(|&v| f16::from_f32(v).to_bits()).collect(),
            gamma,
            beta,
            eps: 1e-6,
            regions: STD,
            dev: true,
            fp8,
        }
    }

    fn out_f16(case: &Case) -> Vec<f32> {
        bytes::to_u16(&LAYERNORM_F16.reference(case)[0])
            .into_iter()
            .map(|h| f16::from_bits(h).to_f32())
            .collect()
    }

    #[test]
    fn four_elements_by_hand() {
        // mean 2.5, var 1.25: y = (x - 2.5) / sqrt(1.25 + 1e-6) * 2 + 1.
        let case = LAYERNORM_F16.make_case(spec(
            &[1.0, 2.0, 3.0, 4.0],
            vec![2.0; 4],
            vec![1.0; 4],
            None,
        ));
        let y = out_f16(&case);
        for (i, &v) in y.iter().enumerate() {
            let want = (i as f64 + 1.0 - 2.5) / (1.25f64 + 1e-6).sqrt() * 2.0 + 1.0;
            assert!((v as f64 - want).abs() < 2e-3, "y[{i}] = {v}, want {want}");
        }
        // Bit-exact against the documented steps.
        let rstd = tessera_isa::numerics::f32_oorx(f32_add(f32_mul(5.0, 0.25), 1e-6));
        let t = f32_add(f32_mul(rstd, -1.5), 0.0);
        assert_eq!(
            y[0],
            f16::from_bits(f32_to_f16(f32_add(f32_mul(t, 2.0), 1.0))).to_f32()
        );
    }

    #[test]
    fn constant_row_gives_beta() {
        let case = LAYERNORM_F16.make_case(spec(
            &[7.5; 9],
            vec![3.0; 9],
            (0..9).map(|i| i as f32 * 0.25).collect(),
            None,
        ));
        let y = out_f16(&case);
        assert_eq!(y, (0..9).map(|i| i as f32 * 0.25).collect::<Vec<_>>());
    }

    #[test]
    fn large_mean_rows_are_centred() {
        // 1000 ± 0.5 (one f16 ulp): normalised values ±1 (the uncentred formula would give
        // garbage here: E[x²] − mean² cancels in f32).
        let x = [999.5, 1000.5, 999.5, 1000.5];
        let case = LAYERNORM_F16.make_case(spec(&x, vec![1.0; 4], vec![0.0; 4], None));
        let y = out_f16(&case);
        for (v, want) in y.iter().zip([-1.0, 1.0, -1.0, 1.0]) {
            assert!((v - want).abs() < 2e-3, "{v} vs {want}");
        }
    }

    #[test]
    fn fp8_output_is_the_cast_of_the_f16_output() {
        let x: Vec<f32> = (0..12).map(|i| (i as f32 - 5.0) * 0.7).collect();
        let gamma = vec![100.0; 12];
        let beta = vec![0.5; 12];
        let f16_case = LAYERNORM_F16.make_case(spec(&x, gamma.clone(), beta.clone(), None));
        let halves = bytes::to_u16(&LAYERNORM_F16.reference(&f16_case)[0]);
        for (format, scl, nanoo) in [
            (Fp8Format::F143, -4, true),
            (Fp8Format::F143, 0, false),
            (Fp8Format::F152, 3, true),
        ] {
            let case = LAYERNORM_FP8.make_case(spec(
                &x,
                gamma.clone(),
                beta.clone(),
                Some(Fp8Out { format, scl, nanoo }),
            ));
            let codes = &LAYERNORM_FP8.reference(&case)[0];
            let want: Vec<u8> = halves
                .iter()
                .map(|&h| f16_to_fp8(h, format, scl, nanoo))
                .collect();
            assert_eq!(codes, &want);
        }
        // |y| reaches about 160: at F143 scale 3 (×8) that overflows, to NaN with NANOO and to
        // ±max (0x7f / 0xff) without.
        let case = LAYERNORM_FP8.make_case(spec(
            &x,
            gamma.clone(),
            beta.clone(),
            Some(Fp8Out {
                format: Fp8Format::F143,
                scl: 3,
                nanoo: true,
            }),
        ));
        assert!(LAYERNORM_FP8.reference(&case)[0].contains(&0x80));
        let case = LAYERNORM_FP8.make_case(spec(
            &x,
            gamma,
            beta,
            Some(Fp8Out {
                format: Fp8Format::F143,
                scl: 3,
                nanoo: false,
            }),
        ));
        let codes = &LAYERNORM_FP8.reference(&case)[0];
        assert!(codes.contains(&0x7f) && codes.contains(&0xff) && !codes.contains(&0x80));
    }
}
