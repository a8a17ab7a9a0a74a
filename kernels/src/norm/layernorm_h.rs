//! `layernorm_h_f16` and `layernorm_h_fp8`: LayerNorm with f16 gamma and beta: the mean in f32
//! as `layernorm_f16`'s, the variance from f16 deviations (squares summed in f32; 1.5 bundles a
//! group of 4 where the f32 deviations take 5) and the affine steps in f16 (4 bundles a group
//! with f16 out, 5 with FP8, where the f32 steps take 11 and 12). For the LayerNorms whose
//! output feeds an FP8 product: the FP8 code keeps 3 or 4 significant bits, and the f16 steps'
//! few roundings of 2^-11 stay far inside one of its roundings.
//! Source: `kernels/asm/layernorm_stats.S`, then the header `layernorm_h_f16.S` /
//! `layernorm_h_fp8.S`, then the code they share, `layernorm_h_body.S`.

use super::data::{f32s, Dist};
use super::layernorm::{Fp8Out, LnSpec, RANDOM_DISTS};
use super::stats::{
    combine_partials, cycles, fold_lanes, mean_partial, shape_words, MeanLanes, Shape,
    ROW_SCRATCH_BYTES, V_END,
};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::WORKERS;
use crate::{EntryKind, Kernel};
use tessera_isa::csr::{field, index};
use tessera_isa::numerics::{
    f16_add, f16_mul, f16_sub, f16_to_f32, f16_to_fp8, f32_add, f32_mul, f32_oorx, f32_to_f16,
    scale_to_field, Fp8Format,
};
use tessera_isa::rng::Rng;

/// LayerNorm with f16 parameters and f16 (`fp8: false`) or FP8 output.
pub struct LayerNormH {
    fp8: bool,
}

pub static LAYERNORM_H_F16: LayerNormH = LayerNormH { fp8: false };
pub static LAYERNORM_H_FP8: LayerNormH = LayerNormH { fp8: true };

/// Vertex words after the shared layout: the deviation word (always 0), then (FP8) the format
/// and scale CSR values.
const V_DEV: usize = V_END;
const V_NFMT: usize = V_END + 1;
const V_SCL: usize = V_END + 2;

const STD: [Region; 4] = [Region::Standard; 4];
const INTER: [Region; 4] = [Region::Interleaved; 4];
const MIXED: [Region; 4] = [
    Region::Interleaved,
    Region::Standard,
    Region::Interleaved,
    Region::Standard,
];

impl LayerNormH {
    fn name_str(&self) -> &'static str {
        if self.fp8 {
            "layernorm_h_fp8"
        } else {
            "layernorm_h_f16"
        }
    }

    /// Builds the case of `spec`: its gamma and beta rounded to f16 (RNE). The spec must carry
    /// FP8 settings exactly when this kernel is FP8, a width that is a multiple of 4, and no
    /// deviation buffer.
    pub fn make_case(&self, spec: LnSpec) -> Case {
        assert_eq!(spec.fp8.is_some(), self.fp8);
        assert!(
            !spec.dev,
            "the f16-parameter LayerNorms take no deviation buffer"
        );
        let (rows, n) = (spec.rows, spec.n);
        assert!(n.is_multiple_of(4), "width {n} is not a multiple of 4");
        assert_eq!(spec.x.len(), rows * n);
        assert_eq!((spec.gamma.len(), spec.beta.len()), (n, n));
        let halves = |v: &[f32]| v.iter().map(|&g| f32_to_f16(g)).collect::<Vec<_>>();
        let out_bytes = if self.fp8 { rows * n } else { rows * n * 2 };
        let [rx, rgb, rout, rscratch] = spec.regions;
        let buffers = vec![
            Buffer::input("x", bytes::from_u16(&spec.x), rx, None),
            Buffer::input("gamma", bytes::from_u16(&halves(&spec.gamma)), rgb, None),
            Buffer::input("beta", bytes::from_u16(&halves(&spec.beta)), rgb, None),
            Buffer::output("out", out_bytes, rout, None),
            Buffer::scratch("scratch", rows * ROW_SCRATCH_BYTES, rscratch),
        ];
        let mut vertex: Vec<VertexWord> = (0..5)
            .map(|buffer| VertexWord::Address { buffer, offset: 0 })
            .collect();
        vertex.extend(shape_words(rows, n, spec.eps));
        debug_assert_eq!(vertex.len(), V_DEV);
        vertex.push(VertexWord::Value(0));
        let mut supervisor_csrs = vec![];
        let mut name = format!(
            "{rows}x{n} {} eps={:e} x:{rx:?} gamma:{rgb:?} out:{rout:?}",
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
        (rows, n): (usize, usize),
        dist: Dist,
        regions: [Region; 4],
        fp8: Option<Fp8Out>,
    ) -> LnSpec {
        LnSpec {
            label: dist.label(),
            rows,
            n,
            x: dist.rows(rng, rows, n),
            gamma: f32s(rng, n, 1.0, 0.25),
            beta: f32s(rng, n, 0.0, 0.5),
            eps: 1e-6,
            regions,
            dev: false,
            fp8,
        }
    }

    fn fp8_default(&self) -> Option<Fp8Out> {
        self.fp8.then_some(Fp8Out {
            format: Fp8Format::F143,
            scl: -4,
            nanoo: false,
        })
    }
}

impl Kernel for LayerNormH {
    fn name(&self) -> &'static str {
        self.name_str()
    }

    fn source(&self) -> &'static str {
        if self.fp8 {
            concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_fp8.S"),
                include_str!("../../asm/layernorm_h_body.S")
            )
        } else {
            concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_f16.S"),
                include_str!("../../asm/layernorm_h_body.S")
            )
        }
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Supervisor
    }

    fn abi(&self) -> &'static str {
        if self.fp8 {
            "supervisor; vertex: x (f16 rows x n), gamma (f16[n]), beta (f16[n]), out (FP8 rows x n), scratch (48 B/row), rows, n (% 4 == 0), inv_n (f32), eps (f32), split[6] of n/4 groups, 0, nfmt ($FP_NFMT: 2 F143, 0 F152), scl ($FP_SCL); NANOO from $FP_ICTL; any region"
        } else {
            "supervisor; vertex: x (f16 rows x n), gamma (f16[n]), beta (f16[n]), out (f16 rows x n), scratch (48 B/row), rows, n (% 4 == 0), inv_n (f32), eps (f32), split[6] of n/4 groups, 0; any region"
        }
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(if self.fp8 { 0x1b8 } else { 0x1b16 });
        let fp8 = self.fp8_default();
        let normal = Dist::Normal {
            mean: 0.0,
            std: 1.0,
        };
        let mut specs: Vec<LnSpec> = Vec::new();
        // The model widths, one row and several, every region; widths whose split leaves some
        // workers no groups (4, 8, 20).
        for &(rows, n) in &[
            (1usize, 1152usize),
            (1, 1728),
            (1, 2152),
            (1, 4304),
            (1, 4),
            (1, 8),
            (1, 20),
            (2, 1152),
            (3, 8),
            (5, 4),
            (6, 1152),
            (7, 4304),
            (13, 24),
            (38, 1152),
        ] {
            for regions in [STD, INTER, MIXED] {
                specs.push(self.spec(&mut rng, (rows, n), normal, regions, fp8));
            }
        }
        for &(rows, n, dist) in &[
            (1usize, 1152usize, Dist::Constant(0.75)),
            (6, 1152, Dist::Constant(1000.0)),
            (4, 24, Dist::Constant(0.0)),
            (1, 1152, Dist::LargeMean),
            (3, 1152, Dist::LargeMean),
            (6, 1152, Dist::Specials),
            (12, 28, Dist::Specials),
            (1, 1152, Dist::Tiny),
            (2, 2152, Dist::Tiny),
            (3, 64, Dist::AnyBits),
            (1, 1152, Dist::Wide),
            (4, 2152, Dist::Wide),
            (1, 1152, Dist::AnyBits),
            (2, 64, Dist::Constant(-3.5)),
            (1, 4304, Dist::Wide),
            (
                2,
                1152,
                Dist::Normal {
                    mean: 0.5,
                    std: 30.0,
                },
            ),
        ] {
            let regions = if rows % 2 == 0 { INTER } else { STD };
            specs.push(self.spec(&mut rng, (rows, n), dist, regions, fp8));
        }
        // NaN and inf in gamma/beta; gamma and beta beyond f16 (they round to ±inf); other eps.
        let mut s = self.spec(&mut rng, (1, 1152), normal, INTER, fp8);
        s.gamma[3] = f32::NAN;
        s.gamma[700] = f32::INFINITY;
        s.beta[5] = f32::NEG_INFINITY;
        s.beta[1151] = f32::NAN;
        s.gamma[9] = 1e6;
        s.label = "NaN/inf in gamma/beta".into();
        specs.push(s);
        for eps in [1e-5f32, 0.25] {
            let mut s = self.spec(
                &mut rng,
                (3, 1152),
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
        if self.fp8 {
            for format in [Fp8Format::F143, Fp8Format::F152] {
                for &(scl, nanoo) in &[(0, false), (0, true), (-4, true), (3, false), (3, true)] {
                    let mut s = self.spec(
                        &mut rng,
                        (1, 1152),
                        normal,
                        if nanoo { INTER } else { STD },
                        Some(Fp8Out { format, scl, nanoo }),
                    );
                    // Spread gamma so that some outputs overflow the format at positive scales.
                    let spread = if format == Fp8Format::F143 {
                        12.0
                    } else {
                        2000.0
                    };
                    s.gamma = f32s(&mut rng, 1152, 0.0, spread);
                    specs.push(s);
                }
            }
        }
        specs.into_iter().map(|s| self.make_case(s)).collect()
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let rows = *rng.pick(&[1usize, 1, 1, 2, 3, 6, 7, 11]);
        let n = 4 * rng.range(1, if rows == 1 { 1100 } else { 600 }) as usize;
        let dist = *rng.pick(&RANDOM_DISTS);
        let regions = [STD, INTER, MIXED][rng.range(0, 2) as usize];
        let fp8 = self.fp8.then(|| Fp8Out::random(&mut rng));
        let mut spec = self.spec(&mut rng, (rows, n), dist, regions, fp8);
        spec.label = format!("random seed={seed} {}", spec.label);
        spec.eps = *rng.pick(&[1e-6f32, 1e-5, 1e-3]);
        self.make_case(spec)
    }

    /// Per row: the mean exactly as the statistics pass computes it, m16 = f16(mean), rstd
    /// from the f16 deviations ([`row_stats_h`]), r16 = f16(rstd); then per element in f16
    /// RNE: d = x − m16; t = d · r16; u = t · gamma; y = u + beta. FP8: f16_to_fp8(y, format,
    /// scl, nanoo).
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = Shape::of(case);
        let x = bytes::to_u16(&case.buffer("x").bytes);
        let gamma = bytes::to_u16(&case.buffer("gamma").bytes);
        let beta = bytes::to_u16(&case.buffer("beta").bytes);
        let fp8 = self.fp8.then(|| Fp8Out::of_case(case, V_NFMT, V_SCL));
        let mut out = Vec::new();
        for row in x.chunks_exact(shape.n) {
            let (m16, rstd) = row_stats_h(&shape, row);
            let r16 = f32_to_f16(rstd);
            for (i, &xi) in row.iter().enumerate() {
                let t = f16_mul(f16_sub(xi, m16), r16);
                let y = f16_add(f16_mul(t, gamma[i]), beta[i]);
                match fp8 {
                    Some((format, scale, nanoo)) => out.push(f16_to_fp8(y, format, scale, nanoo)),
                    None => out.extend(y.to_le_bytes()),
                }
            }
        }
        vec![out]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate(&Shape::of(case), self.fp8)
    }
}

/// m16 = f16(mean) of a row (the mean of `layernorm_stats.S`'s pass 1) and its rstd from the
/// variance pass of `layernorm_h_body.S`: each worker's groups in pairs, d = f16(x − m16), the
/// squares added as f16v8sqacc adds them (AACC[2i] += h[2i]², then += h[2i+1]² over the quad
/// {d_a, d_b}, a lone last group with zeros), folded, the six partials combined, times inv_n;
/// rstd = f32oorx(var + eps).
pub fn row_stats_h(shape: &Shape, row: &[u16]) -> (u16, f32) {
    let mut sums = [0.0f32; WORKERS];
    for (w, sum) in sums.iter_mut().enumerate() {
        *sum = mean_partial(shape, row, w, MeanLanes::Groups);
    }
    let m16 = f32_to_f16(f32_mul(combine_partials(&sums), shape.inv_n));
    let square = |h: u16| f32_mul(f16_to_f32(h), f16_to_f32(h));
    let mut squares = [0.0f32; WORKERS];
    for (w, partial) in squares.iter_mut().enumerate() {
        let (first, count) = shape.split[w];
        let groups: Vec<usize> = (first as usize..(first + count) as usize).collect();
        let mut acc = [0.0f32; 4];
        for pair in groups.chunks(2) {
            let mut quad = [0u16; 8];
            for (k, &g) in pair.iter().enumerate() {
                for i in 0..4 {
                    quad[4 * k + i] = f16_sub(row[4 * g + i], m16);
                }
            }
            for (lane, a) in acc.iter_mut().enumerate() {
                *a = f32_add(
                    f32_add(*a, square(quad[2 * lane])),
                    square(quad[2 * lane + 1]),
                );
            }
        }
        *partial = fold_lanes(acc);
    }
    let var = f32_mul(combine_partials(&squares), shape.inv_n);
    (m16, f32_oorx(f32_add(var, shape.eps)))
}

/// Cycle estimate from the loop structure (see [`super::stats::cycles`]): the two statistics
/// passes, then the normalising pass: 20 (FP8 23) set-up bundles, per row 4 (FP8 5) bundles a
/// group and 23 around them, 17 for a worker without groups.
fn estimate(shape: &Shape, fp8: bool) -> u64 {
    let f = u64::from(fp8);
    let norm = cycles::busiest(
        shape,
        20 + 3 * f,
        &|c| if c > 0 { (4 + f) * c + 23 } else { 17 },
        0,
    );
    // The variance pass: 19 set-up bundles (fitted: the listing has 20); per row 9 for the mean and m16, 3 a pair of
    // groups and 2 around them, 1 + 3 for a lone last group, 7 for the partial.
    let var = cycles::busiest(
        shape,
        19,
        &|c| {
            let (pairs, lone) = (c / 2, c % 2);
            9 + if pairs > 0 { 3 * pairs + 2 } else { 0 } + 1 + 3 * lone + 7
        },
        0,
    );
    cycles::total(&[cycles::mean_pass(shape), var, norm])
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn spec(x: &[f32], gamma: Vec<f32>, beta: Vec<f32>) -> LnSpec {
        LnSpec {
            label: "test".into(),
            rows: 1,
            n: x.len(),
            x: x.iter().map(|&v| f16::from_f32(v).to_bits()).collect(),
            gamma,
            beta,
            eps: 1e-6,
            regions: STD,
            dev: false,
            fp8: None,
        }
    }

    #[test]
    fn four_elements_by_hand() {
        // mean 2.5, var 1.25: y = (x - 2.5) / sqrt(1.25 + 1e-6) * 2 + 1, within the f16 steps.
        let case =
            LAYERNORM_H_F16.make_case(spec(&[1.0, 2.0, 3.0, 4.0], vec![2.0; 4], vec![1.0; 4]));
        let y: Vec<f64> = bytes::to_u16(&LAYERNORM_H_F16.reference(&case)[0])
            .into_iter()
            .map(|h| f16::from_bits(h).to_f64())
            .collect();
        for (i, &v) in y.iter().enumerate() {
            let want = (i as f64 + 1.0 - 2.5) / (1.25f64 + 1e-6).sqrt() * 2.0 + 1.0;
            assert!((v - want).abs() < 4e-3, "y[{i}] = {v}, want {want}");
        }
    }

    #[test]
    fn close_to_the_f32_layernorm() {
        // Normal rows of the model's width: every output within a few f16 ulps of the exact
        // LayerNorm of the f16 inputs (f64), so far inside an FP8 rounding.
        let mut rng = Rng::new(7);
        let n = 1152;
        let s = LAYERNORM_H_F16.spec(
            &mut rng,
            (1, n),
            Dist::Normal {
                mean: 0.3,
                std: 2.0,
            },
            STD,
            None,
        );
        let xs: Vec<f64> = s.x.iter().map(|&h| f16::from_bits(h).to_f64()).collect();
        let (g, b): (Vec<f64>, Vec<f64>) = (
            s.gamma.iter().map(|&v| f16::from_f32(v).to_f64()).collect(),
            s.beta.iter().map(|&v| f16::from_f32(v).to_f64()).collect(),
        );
        let case = LAYERNORM_H_F16.make_case(s);
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
        let rstd = 1.0 / (var + 1e-6).sqrt();
        let got = bytes::to_u16(&LAYERNORM_H_F16.reference(&case)[0]);
        for i in 0..n {
            let exact = (xs[i] - mean) * rstd * g[i] + b[i];
            let y = f16::from_bits(got[i]).to_f64();
            assert!(
                (y - exact).abs() <= 6e-3 * (1.0 + exact.abs()),
                "element {i}: {y} vs {exact}"
            );
        }
    }
}
