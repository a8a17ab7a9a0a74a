//! `layernorm_h_f16` and `layernorm_h_fp8`: LayerNorm with f16 gamma and beta: the mean in f32
//! as `layernorm_f16`'s, the variance from f16 deviations (squares summed in f32; 1.5 bundles a
//! group of 4 where the f32 deviations take 5) and the affine steps in f16 (4 bundles a group
//! with f16 out, 5 with FP8, where the f32 steps take 11 and 12). For the LayerNorms whose
//! output feeds an FP8 product: the FP8 code keeps 3 or 4 significant bits, and the f16 steps'
//! few roundings of 2^-11 stay far inside one of its roundings.
//! The column variants (`layernorm_h_cols_*`) take the statistics of whole rows and normalise a
//! block of their columns: a row split by columns over several tiles.
//! Source: `kernels/asm/layernorm_stats.S`, then the header `layernorm_h_f16.S` /
//! `layernorm_h_fp8.S` (`layernorm_h_cols_f16.S` / `layernorm_h_cols_fp8.S`), then the code they
//! share, `layernorm_h_body.S`.

use super::data::{f32s, Dist};
use super::layernorm::{Fp8Out, LnSpec, RANDOM_DISTS};
use super::stats::{
    combine_partials, cycles, fold_eight_lanes, mean_partial, shape_words, MeanLanes, Shape,
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

/// LayerNorm with f16 parameters and f16 (`fp8: false`) or FP8 output; `cols`: over a block of
/// each row's columns (the statistics of the whole rows).
pub struct LayerNormH {
    fp8: bool,
    cols: bool,
}

pub static LAYERNORM_H_F16: LayerNormH = LayerNormH {
    fp8: false,
    cols: false,
};
pub static LAYERNORM_H_FP8: LayerNormH = LayerNormH {
    fp8: true,
    cols: false,
};
pub static LAYERNORM_H_COLS_F16: LayerNormH = LayerNormH {
    fp8: false,
    cols: true,
};
pub static LAYERNORM_H_COLS_FP8: LayerNormH = LayerNormH {
    fp8: true,
    cols: true,
};

/// The block of columns a column variant normalises: its first column and its width (both
/// multiples of 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColBlock {
    pub first: usize,
    pub width: usize,
}

/// Vertex words after the shared layout: the deviation word (always 0), then (FP8) the format
/// and scale CSR values.
const V_DEV: usize = V_END;
const V_NFMT: usize = V_END + 1;
const V_SCL: usize = V_END + 2;
/// The column variants' words: the block's x, its width, its split.
const V_X_OWN: usize = V_END + 3;
const V_N_OWN: usize = V_END + 4;
/// The block's split table starts here (words 26..37).
#[cfg(test)]
const V_SPLIT_OWN: usize = V_END + 5;

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
        match (self.cols, self.fp8) {
            (false, false) => "layernorm_h_f16",
            (false, true) => "layernorm_h_fp8",
            (true, false) => "layernorm_h_cols_f16",
            (true, true) => "layernorm_h_cols_fp8",
        }
    }

    /// Builds the case of `spec`: its gamma and beta rounded to f16 (RNE). The spec must carry
    /// FP8 settings exactly when this kernel is FP8, a width that is a multiple of 4, and no
    /// deviation buffer.
    pub fn make_case(&self, spec: LnSpec) -> Case {
        assert!(
            !self.cols,
            "a column variant's case needs its block (make_cols_case)"
        );
        self.build_case(spec, None)
    }

    /// Builds a column variant's case: `spec` as for [`LayerNormH::make_case`] (gamma and beta
    /// of the whole width), normalising columns `block` of each row; the block's x is its own
    /// buffer holding x from the block's first column on (rows n apart, as in x).
    pub fn make_cols_case(&self, spec: LnSpec, block: ColBlock) -> Case {
        assert!(self.cols, "only the column variants take a block");
        self.build_case(spec, Some(block))
    }

    fn build_case(&self, spec: LnSpec, block: Option<ColBlock>) -> Case {
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
        let ColBlock { first, width } = block.unwrap_or(ColBlock { first: 0, width: n });
        assert!(
            first.is_multiple_of(4) && width.is_multiple_of(4) && width >= 4 && first + width <= n,
            "columns {first}..+{width} of {n}"
        );
        let out_bytes = if self.fp8 {
            rows * width
        } else {
            rows * width * 2
        };
        let [rx, rgb, rout, rscratch] = spec.regions;
        let (gamma, beta) = (
            halves(&spec.gamma[first..first + width]),
            halves(&spec.beta[first..first + width]),
        );
        // Buffers: x, gamma, beta, out, scratch (vertex words 0..4), then the block's x.
        let mut buffers = vec![
            Buffer::input("x", bytes::from_u16(&spec.x), rx, None),
            Buffer::input("gamma", bytes::from_u16(&gamma), rgb, None),
            Buffer::input("beta", bytes::from_u16(&beta), rgb, None),
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
        if self.cols {
            name = format!("{name} cols {first}..+{width}");
        }
        match spec.fp8 {
            Some(f) => {
                vertex.push(VertexWord::Value(f.format.format_bit() << 1));
                vertex.push(VertexWord::Value(scale_to_field(f.scl)));
                if f.nanoo {
                    supervisor_csrs.push((index::FP_ICTL, field::FP_CTL_NANOO));
                }
                name = format!("{name} {} scl={} nanoo={}", f.format.name(), f.scl, f.nanoo);
            }
            None if self.cols => vertex.extend([VertexWord::Value(0), VertexWord::Value(0)]),
            None => {}
        }
        if self.cols {
            // The block's own x: what a compiled call binds to x at the block's offset, as far
            // as the kernel reads (the last row's block).
            let own = spec.x[first..first + (rows - 1) * n + width].to_vec();
            buffers.insert(1, Buffer::input("x_own", bytes::from_u16(&own), rx, None));
            // Buffer indices after the insertion: x 0, x_own 1, gamma 2, beta 3, out 4, scratch 5.
            for (word, buffer) in vertex.iter_mut().take(5).zip([0, 2, 3, 4, 5]) {
                *word = VertexWord::Address { buffer, offset: 0 };
            }
            debug_assert_eq!(vertex.len(), V_X_OWN);
            vertex.push(VertexWord::Address {
                buffer: 1,
                offset: 0,
            });
            vertex.push(VertexWord::Value(width as u32));
            for (start, count) in crate::split::worker_split((width / 4) as u32) {
                vertex.extend([VertexWord::Value(start), VertexWord::Value(count)]);
            }
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
        match (self.cols, self.fp8) {
            (false, true) => concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_fp8.S"),
                include_str!("../../asm/layernorm_h_body.S")
            ),
            (false, false) => concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_f16.S"),
                include_str!("../../asm/layernorm_h_body.S")
            ),
            (true, true) => concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_cols_fp8.S"),
                include_str!("../../asm/layernorm_h_body.S")
            ),
            (true, false) => concat!(
                include_str!("../../asm/layernorm_stats.S"),
                include_str!("../../asm/layernorm_h_cols_f16.S"),
                include_str!("../../asm/layernorm_h_body.S")
            ),
        }
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Supervisor
    }

    fn abi(&self) -> &'static str {
        if self.cols {
            return "supervisor; vertex: x (f16 rows x n), gamma, beta (f16[n_own]: the block's), out (rows x n_own, f16 or FP8), scratch (48 B/row), rows, n (% 4 == 0), inv_n (f32), eps (f32), split[6] of n/4 groups, 0, nfmt, scl (0, 0 for f16), x_own (the block's first column of x), n_own (% 4 == 0), split[6] of n_own/4 groups; any region";
        }
        if self.fp8 {
            "supervisor; vertex: x (f16 rows x n), gamma (f16[n]), beta (f16[n]), out (FP8 rows x n), scratch (48 B/row), rows, n (% 4 == 0), inv_n (f32), eps (f32), split[6] of n/4 groups, 0, nfmt ($FP_NFMT: 2 F143, 0 F152), scl ($FP_SCL); NANOO from $FP_ICTL; any region"
        } else {
            "supervisor; vertex: x (f16 rows x n), gamma (f16[n]), beta (f16[n]), out (f16 rows x n), scratch (48 B/row), rows, n (% 4 == 0), inv_n (f32), eps (f32), split[6] of n/4 groups, 0; any region"
        }
    }

    fn cases(&self) -> Vec<Case> {
        if self.cols {
            return self.cols_cases();
        }
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
        if self.cols {
            let groups = n / 4;
            let width = 4 * rng.range(1, groups as u64) as usize;
            let first = 4 * rng.range(0, (groups - width / 4) as u64) as usize;
            return self.make_cols_case(spec, ColBlock { first, width });
        }
        self.make_case(spec)
    }

    /// Per row: the mean exactly as the statistics pass computes it, m16 = f16(mean), rstd
    /// from the f16 deviations ([`row_stats_h`]), r16 = f16(rstd); then per element in f16
    /// RNE: d = x − m16; t = d · r16; u = t · gamma; y = u + beta. FP8: f16_to_fp8(y, format,
    /// scl, nanoo).
    /// The column variants: the statistics of x's rows as above; the affine steps on the
    /// block's x (`x_own`: its rows n apart) and the block's gamma and beta.
    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let shape = Shape::of(case);
        let x = bytes::to_u16(&case.buffer("x").bytes);
        let gamma = bytes::to_u16(&case.buffer("gamma").bytes);
        let beta = bytes::to_u16(&case.buffer("beta").bytes);
        let fp8 = self.fp8.then(|| Fp8Out::of_case(case, V_NFMT, V_SCL));
        let own = if self.cols {
            bytes::to_u16(&case.buffer("x_own").bytes)
        } else {
            Vec::new()
        };
        let width = if self.cols {
            case.word(V_N_OWN) as usize
        } else {
            shape.n
        };
        let mut out = Vec::new();
        for (r, row) in x.chunks_exact(shape.n).enumerate() {
            let (m16, rstd) = row_stats_h(&shape, row);
            let r16 = f32_to_f16(rstd);
            let normalised = if self.cols {
                &own[r * shape.n..r * shape.n + width]
            } else {
                row
            };
            for (i, &xi) in normalised.iter().enumerate() {
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
        let shape = Shape::of(case);
        let mut own = shape;
        if self.cols {
            own.n = case.word(V_N_OWN) as usize;
        }
        estimate(&shape, self.cols.then_some(&own), self.fp8)
    }
}

impl LayerNormH {
    /// The column variants' cases: blocks at the start, the middle and the end of a row, one
    /// group wide to most of the row, one row and several, every region, FP8 formats and scales,
    /// and x's block holding other values than x (the statistics must come from x, the affine
    /// steps from the block).
    fn cols_cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(if self.fp8 { 0xc018 } else { 0xc016 });
        let fp8 = self.fp8_default();
        let normal = Dist::Normal {
            mean: 0.2,
            std: 1.5,
        };
        let mut cases = Vec::new();
        for (i, &(rows, n, first, width)) in [
            (1usize, 1152usize, 0usize, 32usize),
            (1, 1152, 1120, 32),
            (1, 1152, 576, 576),
            (1, 1152, 4, 1148),
            (1, 1152, 0, 4),
            (1, 4352, 128, 128),
            (2, 1152, 64, 64),
            (3, 64, 16, 16),
            (6, 1152, 32, 96),
            (7, 24, 8, 12),
            (13, 256, 128, 128),
            (2, 4352, 4224, 128),
            (1, 2152, 1000, 1152),
            (1, 4304, 2152, 2152),
            (5, 8, 4, 4),
        ]
        .iter()
        .enumerate()
        {
            for (j, regions) in [STD, INTER, MIXED].into_iter().enumerate() {
                let mut spec = self.spec(&mut rng, (rows, n), normal, regions, fp8);
                spec.label = format!("{} #{}", spec.label, 3 * i + j);
                cases.push(self.make_cols_case(spec, ColBlock { first, width }));
            }
        }
        for &(rows, n, dist) in &[
            (1usize, 1152usize, Dist::Constant(0.75)),
            (1, 1152, Dist::LargeMean),
            (3, 1152, Dist::Specials),
            (2, 1152, Dist::Wide),
            (1, 1152, Dist::AnyBits),
        ] {
            for (first, width) in [(0usize, 32usize), (256, 64), (1088, 64)] {
                let spec = self.spec(&mut rng, (rows, n), dist, STD, fp8);
                cases.push(self.make_cols_case(spec, ColBlock { first, width }));
            }
        }
        // NaN and inf in the block's gamma and beta; other eps.
        let mut s = self.spec(&mut rng, (1, 1152), normal, INTER, fp8);
        s.gamma[35] = f32::NAN;
        s.gamma[40] = f32::INFINITY;
        s.beta[33] = f32::NEG_INFINITY;
        s.label = "NaN/inf in gamma/beta".into();
        cases.push(self.make_cols_case(
            s,
            ColBlock {
                first: 32,
                width: 32,
            },
        ));
        for eps in [1e-5f32, 0.25] {
            let mut s = self.spec(&mut rng, (3, 1152), normal, STD, fp8);
            s.eps = eps;
            cases.push(self.make_cols_case(
                s,
                ColBlock {
                    first: 64,
                    width: 128,
                },
            ));
        }
        // The block's x differs from x's columns: only the block's own values are normalised.
        for regions in [STD, INTER] {
            let spec = self.spec(&mut rng, (2, 1152), normal, regions, fp8);
            let mut case = self.make_cols_case(
                spec,
                ColBlock {
                    first: 96,
                    width: 32,
                },
            );
            let own = case
                .buffers
                .iter_mut()
                .find(|b| b.name == "x_own")
                .expect("the block's x");
            for (i, b) in own.bytes.iter_mut().enumerate() {
                *b = b.wrapping_add((i % 7) as u8);
            }
            case.name = format!("{} (block unlike x)", case.name);
            cases.push(case);
        }
        if self.fp8 {
            for format in [Fp8Format::F143, Fp8Format::F152] {
                for &(scl, nanoo) in &[(0, true), (3, false)] {
                    let mut s = self.spec(
                        &mut rng,
                        (1, 1152),
                        normal,
                        INTER,
                        Some(Fp8Out { format, scl, nanoo }),
                    );
                    s.gamma = f32s(&mut rng, 1152, 0.0, 12.0);
                    cases.push(self.make_cols_case(
                        s,
                        ColBlock {
                            first: 32,
                            width: 32,
                        },
                    ));
                }
            }
        }
        cases
    }
}

/// m16 = f16(mean) of a row (the mean of `layernorm_stats.S`'s pass 1) and its rstd from the
/// variance pass of `layernorm_h_body.S`: each worker's groups in pairs, d = f16(x − m16), the
/// squares added as f16v8sqacc adds them (lane j += h[j]² over the quad {d_a, d_b}, a lone last
/// group with zeros), the eight lanes folded (`fold_eight_lanes`), the six partials combined,
/// times inv_n; rstd = f32oorx(var + eps).
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
        let mut acc = [0.0f32; 8];
        for pair in groups.chunks(2) {
            let mut quad = [0u16; 8];
            for (k, &g) in pair.iter().enumerate() {
                for i in 0..4 {
                    quad[4 * k + i] = f16_sub(row[4 * g + i], m16);
                }
            }
            for (a, &h) in acc.iter_mut().zip(&quad) {
                *a = f32_add(*a, square(h));
            }
        }
        *partial = fold_eight_lanes(acc);
    }
    let var = f32_mul(combine_partials(&squares), shape.inv_n);
    (m16, f32_oorx(f32_add(var, shape.eps)))
}

/// Cycle estimate from the loop structure (see [`super::stats::cycles`]): the two statistics
/// passes over `shape`, then the normalising pass over `own` (a column variant's block; else
/// `shape`): 20 (FP8 23; the column variants 2 more) set-up bundles, per row 4 (FP8 5) bundles
/// a group and 23 around them, 17 for a worker without groups.
fn estimate(shape: &Shape, own: Option<&Shape>, fp8: bool) -> u64 {
    let f = u64::from(fp8);
    let c = u64::from(own.is_some());
    let norm = cycles::busiest(
        own.unwrap_or(shape),
        20 + 3 * f + 2 * c,
        &|c| if c > 0 { (4 + f) * c + 23 } else { 17 },
        0,
    );
    // The variance pass: 19 set-up bundles (fitted: the listing has 20); per row 9 for the mean and m16, 3 a pair of
    // groups and 2 around them, 1 + 3 for a lone last group, 11 for the partial (four
    // `f32v2gina` and three adds).
    let var = cycles::busiest(
        shape,
        19,
        &|c| {
            let (pairs, lone) = (c / 2, c % 2);
            9 + if pairs > 0 { 3 * pairs + 2 } else { 0 } + 1 + 3 * lone + 11
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

    /// The column variants' words sit where their headers read them (`NORM_X` 24, `V_N_OWN`
    /// 25, `NORM_SPLIT` 26), the block's split covers its groups in order, and x's block is x
    /// from the block's first column as far as the kernel reads.
    #[test]
    fn a_column_case_carries_its_block() {
        assert_eq!((V_X_OWN, V_N_OWN, V_SPLIT_OWN), (24, 25, 26));
        for header in [
            include_str!("../../asm/layernorm_h_cols_f16.S"),
            include_str!("../../asm/layernorm_h_cols_fp8.S"),
        ] {
            assert!(header.contains("#define NORM_X          24"));
            assert!(header.contains("#define V_N_OWN   25"));
            assert!(header.contains("#define NORM_SPLIT      26"));
        }
        let mut rng = Rng::new(3);
        let spec = LAYERNORM_H_COLS_F16.spec(&mut rng, (3, 64), Dist::Constant(1.0), STD, None);
        let x = spec.x.clone();
        let block = ColBlock {
            first: 16,
            width: 24,
        };
        let case = LAYERNORM_H_COLS_F16.make_cols_case(spec, block);
        assert_eq!(case.word(V_N_OWN), 24);
        let mut next = 0;
        for w in 0..WORKERS {
            let (first, count) = (
                case.word(V_SPLIT_OWN + 2 * w),
                case.word(V_SPLIT_OWN + 2 * w + 1),
            );
            assert_eq!(first, next);
            next += count;
        }
        assert_eq!(next, 6);
        let own = bytes::to_u16(&case.buffer("x_own").bytes);
        assert_eq!(own, x[16..16 + 2 * 64 + 24].to_vec());
        assert_eq!(case.buffer("out").bytes.len(), 3 * 24 * 2);
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
