//! GeLU (tanh form, SigLIP's `gelu_pytorch_tanh`) on f16 vectors: `gelu_f16` (f16 out),
//! `gelu_fp8` (FP8 codes out, 4 per 32-bit store) and `gelu_fp8_panels` (FP8 codes written
//! straight into the AMP-left panel layout the next GEMM reads, zero padded). Sources: a header
//! per kernel (`kernels/asm/gelu_f16.S`, `gelu_fp8.S`, `gelu_fp8_panels.S`), the entry code
//! gelu_f16 and gelu_fp8 share (`gelu_body.S`), and the loops: gelu_f16's in f32
//! (`gelu_groups.S`, [`gelu_f16_value`]), the FP8 kernels' in f16 (`gelu_sigm_groups.S`,
//! [`gelu_sigm_f16`]).

use super::common::{
    fp8_settings, halves_with_specials, normal_halves, random_bits, worker_cycles, Fp8Out,
    F16_SPECIALS, REGIONS,
};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::layout::{k_blocks, panel_offset, FP8_BLOCK, PANEL_ROW_BYTES};
use crate::split::{split_words, worker_split, WORKERS};
use crate::{EntryKind, Kernel};
use tessera_isa::numerics::{
    f16_add, f16_mul, f16_sigm, f16_to_f32, f32_add, f32_mul, f32_tanh, f32_to_f16,
};
use tessera_isa::rng::Rng;

/// f32(2 sqrt(2/pi)): the linear coefficient of z in terms of h = x / 2.
pub const GELU_A: u32 = 0x3fcc_422a;
/// f32(8 * 0.044715 * sqrt(2/pi)): the cubic coefficient of z in terms of h = x / 2.
pub const GELU_B: u32 = 0x3e92_2279;

/// GeLU of one f16 as the kernels evaluate it (see the assembly headers), before the final
/// rounding: every step is one f32 operation rounded to nearest even.
pub fn gelu_f32(x: u16) -> f32 {
    let (a, b) = (f32::from_bits(GELU_A), f32::from_bits(GELU_B));
    let h = f32_mul(f16_to_f32(x), 0.5);
    let s = f32_mul(h, h);
    let p = f32_add(f32_mul(b, s), a);
    let z = f32_mul(p, h);
    let t = f32_tanh(z);
    f32_add(f32_mul(t, h), h)
}

/// GeLU rounded to f16 (RNE; NaN → 0x7e00).
pub fn gelu_f16_value(x: u16) -> u16 {
    f32_to_f16(gelu_f32(x))
}

/// f16(2 sqrt(2/pi)): the linear coefficient of w = 2u in the FP8 kernels' logistic form.
pub const GELU_SIGM_A: u16 = 0x3e62;
/// f16(2 * 0.044715 * sqrt(2/pi)): the cubic coefficient of w = 2u.
pub const GELU_SIGM_B: u16 = 0x2c91;

/// GeLU of one f16 as the FP8 kernels evaluate it (`kernels/asm/gelu_sigm_groups.S`): the tanh
/// form as `x sigm(2u)`, every step one f16 operation rounded to nearest even.
pub fn gelu_sigm_f16(x: u16) -> u16 {
    let s = f16_mul(x, x);
    let q = f16_mul(s, GELU_SIGM_B);
    let p = f16_add(q, GELU_SIGM_A);
    let w = f16_mul(p, x);
    f16_mul(f16_sigm(w), x)
}

/// Which output the kernel writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    F16,
    Fp8,
    Fp8Panels,
}

pub struct Gelu(pub Output);

impl Gelu {
    fn meta(&self) -> (&'static str, &'static str) {
        match self.0 {
            Output::F16 => (
                "gelu_f16",
                concat!(
                    include_str!("../../asm/gelu_f16.S"),
                    include_str!("../../asm/gelu_body.S"),
                    include_str!("../../asm/gelu_groups.S")
                ),
            ),
            Output::Fp8 => (
                "gelu_fp8",
                concat!(
                    include_str!("../../asm/gelu_fp8.S"),
                    include_str!("../../asm/gelu_body.S"),
                    include_str!("../../asm/gelu_sigm_groups.S")
                ),
            ),
            Output::Fp8Panels => (
                "gelu_fp8_panels",
                concat!(
                    include_str!("../../asm/gelu_fp8_panels.S"),
                    include_str!("../../asm/gelu_sigm_groups.S")
                ),
            ),
        }
    }
}

// Vertex words of gelu_f16 / gelu_fp8.
const V_N: usize = 2;
const V_NFMT: usize = 3;
const V_SCL: usize = 4;
const V_SPLIT: usize = 5;

// Vertex words of gelu_fp8_panels.
const P_M: usize = 2;
const P_K: usize = 3;
const P_MPAD: usize = 4;
const P_NFMT: usize = 5;
const P_SCL: usize = 6;
const P_SPLIT: usize = 7;
const P_ZSPLIT: usize = P_SPLIT + 4 * WORKERS;

/// A flat case (gelu_f16, gelu_fp8).
fn flat_case(
    output: Output,
    name: &str,
    x: &[u16],
    fp8: Fp8Out,
    regions: (Region, Region),
) -> Case {
    let n = x.len();
    let kernel = Gelu(output).meta().0;
    let out_len = if output == Output::F16 { 2 * n } else { n };
    let mut vertex = VertexWord::buffer_starts(2);
    vertex.extend([
        VertexWord::Value(n as u32),
        VertexWord::Value(fp8.nfmt_word()),
        VertexWord::Value(fp8.scl_word()),
    ]);
    vertex.extend(split_words(n as u32 / 4));
    let fp8_desc = if output == Output::F16 {
        String::new()
    } else {
        format!(" {}", fp8.describe())
    };
    Case {
        kernel: kernel.into(),
        name: format!("n={n} {:?}->{:?}{fp8_desc} {name}", regions.0, regions.1),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(x), regions.0, None),
            Buffer::output("out", out_len, regions.1, None),
        ],
        vertex,
        supervisor_csrs: if output == Output::F16 {
            vec![]
        } else {
            fp8.csrs()
        },
    }
}

/// A panel case (gelu_fp8_panels): x is M × K row-major (K % 4 == 0).
fn panel_case(
    name: &str,
    x: &[u16],
    m: usize,
    k: usize,
    m_padded: usize,
    fp8: Fp8Out,
    regions: (Region, Region),
) -> Case {
    assert_eq!(k % 4, 0);
    assert!(m_padded >= m && m >= 1);
    assert_eq!(x.len(), m * k);
    let kbs = k_blocks(k, FP8_BLOCK);
    let quads_per_row = (k / 4) as u32;
    let mut vertex = VertexWord::buffer_starts(2);
    vertex.extend([
        VertexWord::Value(m as u32),
        VertexWord::Value(k as u32),
        VertexWord::Value(m_padded as u32),
        VertexWord::Value(fp8.nfmt_word()),
        VertexWord::Value(fp8.scl_word()),
    ]);
    for (first, count) in worker_split(m as u32 * quads_per_row) {
        let (row, q) = (first / quads_per_row, first % quads_per_row);
        let out = panel_offset(q as usize / 8, row as usize, m_padded) + 4 * (q as usize % 8);
        vertex.extend([
            VertexWord::Value(row),
            VertexWord::Value(q),
            VertexWord::Value(count),
            VertexWord::Address {
                buffer: 1,
                offset: out as u32,
            },
        ]);
    }
    let pad_rows = (m_padded - m) as u32;
    for (first, count) in worker_split(kbs as u32 * pad_rows) {
        let (kb, r) = first
            .checked_div(pad_rows)
            .map_or((0, 0), |kb| (kb, m as u32 + first % pad_rows));
        vertex.extend([
            VertexWord::Value(kb),
            VertexWord::Value(r),
            VertexWord::Value(count),
            VertexWord::Address {
                buffer: 1,
                offset: panel_offset(kb as usize, r as usize, m_padded) as u32,
            },
        ]);
    }
    Case {
        kernel: "gelu_fp8_panels".into(),
        name: format!(
            "{m}x{k} pad {m_padded} {:?}->{:?} {} {name}",
            regions.0,
            regions.1,
            fp8.describe()
        ),
        buffers: vec![
            Buffer::input("x", bytes::from_u16(x), regions.0, None),
            Buffer::output("out", kbs * m_padded * PANEL_ROW_BYTES, regions.1, None),
        ],
        vertex,
        supervisor_csrs: fp8.csrs(),
    }
}

const RR: [(Region, Region); 4] = [
    (Region::Standard, Region::Standard),
    (Region::Interleaved, Region::Interleaved),
    (Region::Standard, Region::Interleaved),
    (Region::Interleaved, Region::Standard),
];

impl Kernel for Gelu {
    fn name(&self) -> &'static str {
        self.meta().0
    }

    fn source(&self) -> &'static str {
        self.meta().1
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Worker
    }

    fn abi(&self) -> &'static str {
        match self.0 {
            Output::F16 => "vertex: x, out, n, -, -, split[6] (first 4-group, groups); tail n % 4 by worker 5; any region",
            Output::Fp8 => "vertex: x, out (n FP8 codes), n, $FP_NFMT value, $FP_SCL value (-scale), split[6]; tail by worker 5; NANOO from $FP_ICTL; any region",
            Output::Fp8Panels => {
                "vertex: x (M x K row-major, K % 4 == 0), out (AMP-left FP8 panels, ceil(K/32) x m_padded x 32 bytes), \
                 M, K, m_padded, $FP_NFMT value, $FP_SCL value, split[6] (row, quad in row, quads, out address), \
                 zero split[6] (kb, row, padded rows, out address); NANOO from $FP_ICTL; any region"
            }
        }
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0x6e1u64 + self.0 as u64);
        let settings = fp8_settings();
        match self.0 {
            Output::F16 | Output::Fp8 => {
                let out = self.0;
                // The target shapes first, then tails and edge values.
                for (i, &n) in [
                    1152usize, 1728, 2152, 1, 2, 3, 4, 5, 6, 7, 23, 24, 25, 26, 27, 100, 1153,
                    1155, 4304,
                ]
                .iter()
                .enumerate()
                {
                    let regions = RR[i % 4];
                    let fp8 = settings[i % settings.len()];
                    let x = normal_halves(&mut rng, n, 0.0, 2.0);
                    cases.push(flat_case(out, "normal(0,2)", &x, fp8, regions));
                }
                for (i, &fp8) in settings.iter().enumerate() {
                    for (j, &regions) in RR.iter().enumerate() {
                        let n = 96 + 4 * i + j;
                        let x = halves_with_specials(&mut rng, n, 4.0, 4);
                        cases.push(flat_case(out, "edge mix", &x, fp8, regions));
                    }
                }
                // Every edge value, wide ranges, huge magnitudes, subnormals, any bits.
                let all_specials: Vec<u16> = F16_SPECIALS
                    .iter()
                    .chain(F16_SPECIALS.iter())
                    .copied()
                    .collect();
                for (i, &regions) in RR.iter().enumerate() {
                    cases.push(flat_case(
                        out,
                        "every edge value",
                        &all_specials[i..],
                        settings[i],
                        regions,
                    ));
                }
                for (i, (mean, std)) in [
                    (0.0, 0.5),
                    (0.0, 6.0),
                    (-3.0, 1.0),
                    (0.0, 30000.0),
                    (0.0, 1e-5),
                    (0.0, 100.0),
                ]
                .iter()
                .enumerate()
                {
                    let x = normal_halves(&mut rng, 300 + i, *mean, *std);
                    cases.push(flat_case(
                        out,
                        &format!("normal({mean},{std})"),
                        &x,
                        settings[(i + 2) % settings.len()],
                        RR[i % 4],
                    ));
                }
                let sweep: Vec<u16> = (0..2000u32).map(|i| (i * 33) as u16).collect();
                cases.push(flat_case(
                    out,
                    "bit-pattern sweep",
                    &sweep,
                    settings[0],
                    RR[1],
                ));
                for (i, &region) in REGIONS.iter().enumerate() {
                    let x = random_bits(&mut rng, 501 + i);
                    cases.push(flat_case(
                        out,
                        "any bits",
                        &x,
                        settings[4 + i],
                        (region, region),
                    ));
                }
            }
            Output::Fp8Panels => {
                // The MLP tail 1 x 2152, then several rows, padding, K % 32 tails.
                for (i, &fp8) in settings.iter().enumerate() {
                    let x = normal_halves(&mut rng, 2152, 0.0, 2.0);
                    cases.push(panel_case("normal(0,2)", &x, 1, 2152, 1, fp8, RR[i % 4]));
                }
                for (i, &(m, k, m_padded)) in [
                    (1usize, 4usize, 1usize),
                    (1, 32, 1),
                    (1, 36, 4),
                    (2, 8, 2),
                    (3, 40, 3),
                    (3, 1152, 4),
                    (4, 44, 8),
                    (5, 96, 5),
                    (6, 100, 6),
                    (7, 28, 9),
                    (2, 2152, 2),
                    (8, 4, 8),
                    (13, 64, 16),
                    (16, 80, 16),
                    (38, 80, 40),
                    (1, 1728, 1),
                    (1, 1152, 2),
                    (1, 2152, 3),
                    (5, 12, 6),
                    (9, 68, 10),
                    (1, 8, 1),
                    (12, 36, 12),
                    (6, 4, 6),
                ]
                .iter()
                .enumerate()
                {
                    for (j, &regions) in RR.iter().enumerate() {
                        if (i + j) % 2 == 1 {
                            continue;
                        }
                        let fp8 = settings[(i + j) % settings.len()];
                        let x = halves_with_specials(&mut rng, m * k, 3.0, 11);
                        cases.push(panel_case("mix", &x, m, k, m_padded, fp8, regions));
                    }
                }
                for (i, &fp8) in settings.iter().enumerate() {
                    let x: Vec<u16> = (0..4 * 48)
                        .map(|j| F16_SPECIALS[(j + i) % F16_SPECIALS.len()])
                        .collect();
                    cases.push(panel_case("edge values", &x, 4, 48, 5, fp8, RR[i % 4]));
                    let x = normal_halves(
                        &mut rng,
                        3 * 60,
                        0.0,
                        [1000.0, 0.01, 30.0, 5.0, 200.0, 1e-4, 3e4][i],
                    );
                    cases.push(panel_case("wide range", &x, 3, 60, 3, fp8, RR[(i + 1) % 4]));
                }
            }
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let fp8 = *rng.pick(&fp8_settings());
        let regions = *rng.pick(&RR);
        match self.0 {
            Output::F16 | Output::Fp8 => {
                let n = rng.range(1, 3000) as usize;
                let x = random_bits(&mut rng, n);
                flat_case(
                    self.0,
                    &format!("random seed={seed} any bits"),
                    &x,
                    fp8,
                    regions,
                )
            }
            Output::Fp8Panels => {
                let m = rng.range(1, 12) as usize;
                let k = 4 * rng.range(1, 120) as usize;
                let m_padded = m + rng.range(0, 4) as usize;
                let x = random_bits(&mut rng, m * k);
                panel_case(
                    &format!("random seed={seed} any bits"),
                    &x,
                    m,
                    k,
                    m_padded,
                    fp8,
                    regions,
                )
            }
        }
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let x = bytes::to_u16(&case.buffer("x").bytes);
        match self.0 {
            Output::F16 => vec![bytes::from_u16(
                &x.iter().map(|&v| gelu_f16_value(v)).collect::<Vec<_>>(),
            )],
            Output::Fp8 => {
                let fp8 = Fp8Out::from_case(case, V_NFMT, V_SCL);
                vec![x.iter().map(|&v| fp8.encode(gelu_sigm_f16(v))).collect()]
            }
            Output::Fp8Panels => {
                let fp8 = Fp8Out::from_case(case, P_NFMT, P_SCL);
                let (m, k, m_padded) = (
                    case.word(P_M) as usize,
                    case.word(P_K) as usize,
                    case.word(P_MPAD) as usize,
                );
                let mut out = vec![0u8; k_blocks(k, FP8_BLOCK) * m_padded * PANEL_ROW_BYTES];
                for row in 0..m {
                    for col in 0..k {
                        out[panel_offset(col / FP8_BLOCK, row, m_padded) + col % FP8_BLOCK] =
                            fp8.encode(gelu_sigm_f16(x[row * k + col]));
                    }
                }
                vec![out]
            }
        }
    }

    /// Bundles per worker, following the control flow of the assembly (counts from its listing).
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let mut bundles = [0u64; WORKERS];
        // The group loop: its set-up to the rpt, per_group bundles per group, the epilogue, br
        // (f32: brz, setzi, rpt, 20 a group, f32v4tof16 and the store; f16: brz, setzi, two
        // ld64 of the constants, setzi, rpt, 8 a group, f16v8tof8 and the store).
        let (setup, per_group, epilogue) = if self.0 == Output::F16 {
            (3, 20, 2)
        } else {
            (6, 8, 2)
        };
        // gelu_fp8 (K_PAIRS): two more bundles to choose; runs of PAIR_MIN groups or more go
        // a pair at a time: 10 to the rpt, 15 a pair, 4 after it, and for an odd count the
        // one-group loop's set-up, its group and epilogue (12).
        const PAIR_MIN: u64 = 32;
        let pairs = self.0 == Output::Fp8;
        let chain = |groups: u64| {
            if groups == 0 {
                2
            } else if pairs && groups >= PAIR_MIN {
                10 + 15 * (groups / 2) + 4 + 12 * (groups % 2) + 1
            } else {
                setup + per_group * groups + epilogue + 1 + 2 * u64::from(pairs)
            }
        };
        match self.0 {
            Output::F16 | Output::Fp8 => {
                let setup = if self.0 == Output::F16 { 13 } else { 16 };
                let tail = case.word(V_N) as u64 % 4;
                for (w, b) in bundles.iter_mut().enumerate() {
                    let groups = case.word(V_SPLIT + 2 * w + 1) as u64;
                    let mut total = setup + chain(groups) + 2;
                    if w == WORKERS - 1 {
                        total += 3;
                        if tail > 0 {
                            // Copy in, the one-group call, write back.
                            total += 3
                                + 3 * u64::from(tail >= 2)
                                + 4
                                + u64::from(tail == 3)
                                + 6
                                + chain(1);
                            total += if self.0 == Output::F16 {
                                4 + 3 * u64::from(tail >= 2) + 2 + 5 * (tail % 2)
                            } else {
                                10
                            };
                        }
                    }
                    *b = total + 1;
                }
            }
            Output::Fp8Panels => {
                let k = case.word(P_K) as u64;
                let m_padded = case.word(P_MPAD) as u64;
                let qpr = k / 4;
                let tail_words = (32 - k % 32) % 32 / 4;
                for (w, b) in bundles.iter_mut().enumerate() {
                    let (mut q, mut count) = (
                        case.word(P_SPLIT + 4 * w + 1) as u64,
                        case.word(P_SPLIT + 4 * w + 2) as u64,
                    );
                    let mut total = 19;
                    while count > 0 {
                        let mut run = count.min(qpr - q);
                        total += 7 + 3;
                        if m_padded != 1 {
                            run = run.min(8 - q % 8);
                            total += 4;
                        }
                        total += chain(run) + 2;
                        q += run;
                        count -= run;
                        if q == qpr {
                            total += 5 + 1 + tail_words + 4;
                            q = 0;
                        } else {
                            total += 2 + if q % 8 == 0 { 5 } else { 0 };
                        }
                        total += 1;
                    }
                    let zero_rows = case.word(P_ZSPLIT + 4 * w + 2) as u64;
                    total += 9;
                    if zero_rows > 0 {
                        let (mut row, mut left) =
                            (case.word(P_ZSPLIT + 4 * w + 1) as u64, zero_rows);
                        let m = case.word(P_M) as u64;
                        while left > 0 {
                            let n = left.min(m_padded - row);
                            total += 9 + 4 * n;
                            left -= n;
                            row = m;
                        }
                    }
                    *b = total + 1;
                }
            }
        }
        worker_cycles(&bundles)
    }
}

/// The case of a compiler call: GeLU over `n` halves (flat), f16 or packed FP8 output. Data are zeros.
pub fn compiler_case(n: usize, output: Output, fp8: Fp8Out) -> Case {
    flat_case(
        output,
        "compiled",
        &vec![0; n],
        fp8,
        (Region::Standard, Region::Standard),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_rounded_coefficients() {
        let a = (2.0 / std::f64::consts::PI).sqrt();
        assert_eq!(GELU_A, ((2.0 * a) as f32).to_bits());
        assert_eq!(GELU_B, ((8.0 * 0.044715 * a) as f32).to_bits());
    }

    #[test]
    fn sigm_constants_are_the_rounded_coefficients() {
        let a = (2.0 / std::f64::consts::PI).sqrt();
        let f16 = |v: f64| half::f16::from_f64(v).to_bits();
        assert_eq!(GELU_SIGM_A, f16(2.0 * a));
        assert_eq!(GELU_SIGM_B, f16(2.0 * 0.044715 * a));
    }

    /// The f16 logistic form against the exact GeLU: within 2^-8 relative where |w| ≤ 1 (its
    /// five f16 roundings, each at most 2^-11, and the rounded coefficients), so far finer than
    /// the FP8 output's 2^-4; in the negative tail sigm(w) carries w's relative error times |w|,
    /// on results below 2^-4 |x|, and sigm(w) underflows f16 (subnormals step by 2^-24) far
    /// below any FP8 code; and its specials.
    #[test]
    fn sigm_form_values() {
        let h = |v: f32| half::f16::from_f32(v).to_bits();
        let val = |b: u16| half::f16::from_bits(b).to_f64();
        assert_eq!(gelu_sigm_f16(0x0000), 0x0000);
        assert_eq!(gelu_sigm_f16(0x8000), 0x8000, "-0 -> -0");
        assert_eq!(gelu_sigm_f16(0x7c00), 0x7c00);
        assert_eq!(gelu_sigm_f16(0xfc00), 0x7e00, "-inf -> 0 * -inf = NaN");
        assert!(half::f16::from_bits(gelu_sigm_f16(0x7e00)).is_nan());
        assert_eq!(
            gelu_sigm_f16(h(300.0)),
            h(300.0),
            "s overflows: sigm(+inf) = 1"
        );
        assert_eq!(gelu_sigm_f16(h(-300.0)), 0x8000, "sigm(-inf) = 0: -0");
        for i in -4000..4000 {
            let x = h(i as f32 / 500.0);
            let xf = val(x);
            let exact = 0.5
                * xf
                * (1.0
                    + ((2.0 / std::f64::consts::PI).sqrt() * (xf + 0.044715 * xf * xf * xf))
                        .tanh());
            let w = 2.0 * (2.0 / std::f64::consts::PI).sqrt() * (xf + 0.044715 * xf * xf * xf);
            let got = val(gelu_sigm_f16(x));
            assert!(
                (got - exact).abs()
                    <= exact.abs() * (1.0 + w.abs()) / 256.0 + 6e-8 * (1.0 + xf.abs()),
                "x={xf}: got {got}, exact {exact}"
            );
        }
    }

    #[test]
    fn reference_values() {
        let h = |v: f32| half::f16::from_f32(v).to_bits();
        assert_eq!(gelu_f16_value(0x0000), 0x0000);
        assert_eq!(gelu_f16_value(h(1.0)), h(0.8413)); // 0.841192 -> 0.8413 in f16 (0x3abb)
        assert_eq!(gelu_f16_value(h(-1.0)), h(-0.1588));
        assert_eq!(gelu_f16_value(h(3.0)), h(2.996));
        assert_eq!(gelu_f16_value(h(100.0)), h(100.0));
        assert_eq!(gelu_f16_value(0x7c00), 0x7c00);
        assert_eq!(gelu_f16_value(0xfc00), 0x7e00, "-inf -> NaN like -inf * 0");
        assert_eq!(gelu_f16_value(0x7e00), 0x7e00);
        assert_eq!(
            gelu_f16_value(h(-20.0)),
            0x0000,
            "tanh rounds to -1: h + h t = h - h = +0"
        );
        // Close to the exact GeLU over a range: within 2 f16 ulps, or 3e-7 absolute far in the
        // negative tail, where 1 + t cancels in f32 (t is within 2^-25 of -1) and the results
        // are f16 subnormals anyway.
        for i in -2000..2000 {
            let v = i as f32 / 250.0;
            let x = h(v);
            let xf = half::f16::from_bits(x).to_f64();
            let exact = 0.5
                * xf
                * (1.0
                    + ((2.0 / std::f64::consts::PI).sqrt() * (xf + 0.044715 * xf * xf * xf))
                        .tanh());
            let got = half::f16::from_bits(gelu_f16_value(x)).to_f64();
            assert!(
                (got - exact).abs() <= 2.0 * exact.abs() / 1024.0 + 3e-7,
                "x={xf}: got {got}, exact {exact}"
            );
        }
    }
}
