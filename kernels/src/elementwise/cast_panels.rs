//! `cast_f16_fp8_panels`: f16 activations (row-major, or already in the f16 panel order) → FP8
//! codes in the AMP-left panel layout of [`crate::layout`], zero padded in K and in rows.

use super::common::{
    fp8_settings, halves_with_specials, normal_halves, worker_cycles, Fp8Out, F16_SPECIALS,
};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::layout::{k_blocks, panel_offset, F16_BLOCK, FP8_BLOCK, PANEL_ROW_BYTES};
use crate::split::{worker_split, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::Fp8Format;
use tessera_isa::rng::Rng;

pub struct CastPanels;

const NAME: &str = "cast_f16_fp8_panels";

// Vertex words (see kernels/asm/cast_f16_fp8_panels.S).
const V_M: usize = 2;
const V_K: usize = 3;
const V_MPAD: usize = 4;
const V_NFMT: usize = 5;
const V_SCL: usize = 6;
const V_MODE: usize = 7;
// 8..=13: rowstep, kbstep, extra, sc, sr, sr1 (see `Source::steps` and `derived_words`).
const V_SBT: usize = 14;
const V_SPLIT: usize = 15;
/// Informational words after the split table (not read by the kernel; the reference uses them).
const V_LAYOUT: usize = V_SPLIT + 4 * WORKERS;
const V_STRIDE: usize = V_LAYOUT + 1;
const V_KBPAD: usize = V_LAYOUT + 2;

/// How the f16 source is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Row-major with a row stride of `stride` halves (a multiple of 4, at least K).
    RowMajor { stride: usize },
    /// The f16 AMP-left panel order of [`crate::layout`] with `rows` panel rows (at least M).
    Packed { rows: usize },
}

impl Source {
    fn code(self) -> (u32, u32) {
        match self {
            Source::RowMajor { stride } => (0, stride as u32),
            Source::Packed { rows } => (1, rows as u32),
        }
    }

    fn from_code(layout: u32, stride: u32) -> Source {
        if layout == 0 {
            Source::RowMajor {
                stride: stride as usize,
            }
        } else {
            Source::Packed {
                rows: stride as usize,
            }
        }
    }

    /// Index (in halves) of x[m][k] in the source buffer: the specification of the layouts.
    pub fn index(self, m: usize, k: usize) -> usize {
        match self {
            Source::RowMajor { stride } => m * stride + k,
            Source::Packed { rows } => ((k / F16_BLOCK) * rows + m) * F16_BLOCK + k % F16_BLOCK,
        }
    }

    /// Halves of the source buffer for an M × K matrix.
    pub fn len(self, m: usize, k: usize) -> usize {
        match self {
            Source::RowMajor { stride } => m * stride,
            Source::Packed { rows } => k_blocks(k, F16_BLOCK) * rows * F16_BLOCK,
        }
    }

    /// (rowstep, kbstep, extra) in bytes: the address of x[m][32 kb + c] is
    /// `in + kbstep kb + rowstep m + 2c + (c >= 16 ? extra : 0)`.
    pub fn steps(self) -> (i64, i64, i64) {
        match self {
            Source::RowMajor { stride } => (2 * stride as i64, 64, 0),
            Source::Packed { rows } => (32, 64 * rows as i64, 32 * rows as i64 - 32),
        }
    }
}

/// A 10-bit two's-complement pace stride field, if the value fits.
fn field(v: i64) -> Option<u32> {
    (-512..=511).contains(&v).then_some((v as u32) & 0x3ff)
}

/// Mode, `sc`, `sr` and `sr1` words for a source (see the assembly header).
pub fn derived_words(source: Source, distinct: bool) -> (u32, u32, u32, u32) {
    let (rowstep, kbstep, extra) = source.steps();
    let sc_f0 = field(rowstep / 8);
    let f1 = field(2 + extra / 8);
    let f2 = field((rowstep - 48 - extra) / 8);
    let f2_blocks = field((kbstep - 48 - extra) / 8);
    let sc = sc_f0.unwrap_or(0) | 4 << 10;
    let pack = |f1: Option<u32>, f2: Option<u32>| match (f1, f2) {
        (Some(f1), Some(f2)) => 2 | f1 << 10 | f2 << 20,
        _ => 0,
    };
    let (sr, sr1) = (pack(f1, f2), pack(f1, f2_blocks));
    // Mode 2 also runs single-row matrices block after block with sr1.
    let rowwise = f1.is_some() && f2.is_some() && f2_blocks.is_some();
    let mode = match (distinct, sc_f0.is_some(), rowwise) {
        (false, _, _) | (true, false, _) => 0,
        (true, true, false) => 1,
        (true, true, true) => 2,
    };
    (mode, sc, sr, sr1)
}

/// The `sbt` word: pace strides of the row-wise loop of a boundary block of `k % 32` = 8, 16 or
/// 24 values (g = 1, 2, 3 loaded slots per row), 0 when the slot loops must be used.
pub fn boundary_word(source: Source, k: usize) -> u32 {
    let (rowstep, _, extra) = source.steps();
    let fields: Vec<Option<u32>> = match k % 32 {
        8 => vec![field(rowstep / 8)],
        16 => vec![field(2), field((rowstep - 16) / 8)],
        24 => vec![
            field(2),
            field(2 + extra / 8),
            field((rowstep - 32 - extra) / 8),
        ],
        _ => return 0,
    };
    fields
        .iter()
        .enumerate()
        .try_fold(0u32, |word, (i, f)| f.map(|f| word | f << (10 * i)))
        .unwrap_or(0)
}

/// Everything that defines one cast.
#[derive(Clone, Copy, Debug)]
pub struct CastParams {
    pub m: usize,
    pub k: usize,
    pub m_padded: usize,
    pub kb_padded: usize,
    pub source: Source,
    pub fp8: Fp8Out,
    pub in_region: Region,
    pub out_region: Region,
    /// Different element slots for `in` and `out` (and the fast modes).
    pub distinct: bool,
}

/// The output panels from the row-major matrix `x` (M × K), per the panel specification.
pub fn cast_reference(
    x: impl Fn(usize, usize) -> u16,
    m: usize,
    k: usize,
    m_padded: usize,
    kb_padded: usize,
    fp8: Fp8Out,
) -> Vec<u8> {
    let mut out = vec![0u8; kb_padded * m_padded * PANEL_ROW_BYTES];
    for row in 0..m {
        for col in 0..k {
            out[panel_offset(col / FP8_BLOCK, row, m_padded) + col % FP8_BLOCK] =
                fp8.encode(x(row, col));
        }
    }
    out
}

/// Builds a case from the row-major matrix `x`; bytes of the source that are not data (the K and
/// row padding) are filled with `junk`, which must never reach the output.
fn make_case(name: &str, p: CastParams, x: &[u16], junk: u16) -> Case {
    assert_eq!(p.k % 4, 0, "K % 4 == 0");
    assert!(p.m_padded >= p.m && p.kb_padded >= k_blocks(p.k, FP8_BLOCK));
    assert_eq!(x.len(), p.m * p.k);
    match p.source {
        Source::RowMajor { stride } => assert!(stride % 4 == 0 && stride >= p.k),
        Source::Packed { rows } => assert!(rows >= p.m),
    }
    let mut src = vec![junk; p.source.len(p.m, p.k)];
    for row in 0..p.m {
        for col in 0..p.k {
            src[p.source.index(row, col)] = x[row * p.k + col];
        }
    }
    let (rowstep, kbstep, extra) = p.source.steps();
    let (mode, sc, sr, sr1) = derived_words(p.source, p.distinct);
    let slot = |s: u8| if p.distinct { Some(s) } else { None };
    let mut vertex = VertexWord::buffer_starts(2);
    vertex.extend([
        VertexWord::Value(p.m as u32),
        VertexWord::Value(p.k as u32),
        VertexWord::Value(p.m_padded as u32),
        VertexWord::Value(p.fp8.nfmt_word()),
        VertexWord::Value(p.fp8.scl_word()),
        VertexWord::Value(mode),
        VertexWord::Value(rowstep as u32),
        VertexWord::Value(kbstep as u32),
        VertexWord::Value(extra as u32),
        VertexWord::Value(sc),
        VertexWord::Value(sr),
        VertexWord::Value(sr1),
        VertexWord::Value(boundary_word(p.source, p.k)),
    ]);
    for (first, count) in worker_split((p.kb_padded * p.m_padded) as u32) {
        let (kb, m) = (first / p.m_padded as u32, first % p.m_padded as u32);
        vertex.extend([
            VertexWord::Value(kb),
            VertexWord::Value(m),
            VertexWord::Value(count),
            VertexWord::Address {
                buffer: 1,
                offset: first * PANEL_ROW_BYTES as u32,
            },
        ]);
    }
    let (layout, stride) = p.source.code();
    vertex.extend([
        VertexWord::Value(layout),
        VertexWord::Value(stride),
        VertexWord::Value(p.kb_padded as u32),
    ]);
    let src_desc = match p.source {
        Source::RowMajor { stride } => format!("rowmajor S={stride}"),
        Source::Packed { rows } => format!("packed P={rows}"),
    };
    Case {
        kernel: NAME.into(),
        name: format!(
            "{}x{} pad {}x{} {src_desc} {}{} {} mode {mode} {} {name}",
            p.m,
            p.k,
            p.m_padded,
            32 * p.kb_padded,
            p.in_region.letter(),
            p.out_region.letter(),
            if p.distinct { "distinct" } else { "shared" },
            p.fp8.describe()
        ),
        buffers: vec![
            Buffer::input("in", bytes::from_u16(&src), p.in_region, slot(0)),
            Buffer::output(
                "out",
                p.kb_padded * p.m_padded * PANEL_ROW_BYTES,
                p.out_region,
                slot(1),
            ),
        ],
        vertex,
        supervisor_csrs: p.fp8.csrs(),
    }
}

fn params(
    m: usize,
    k: usize,
    source: Source,
    fp8: Fp8Out,
    regions: (Region, Region),
    distinct: bool,
) -> CastParams {
    CastParams {
        m,
        k,
        m_padded: m,
        kb_padded: k_blocks(k, FP8_BLOCK),
        source,
        fp8,
        in_region: regions.0,
        out_region: regions.1,
        distinct,
    }
}

const II: (Region, Region) = (Region::Interleaved, Region::Interleaved);
const IS: (Region, Region) = (Region::Interleaved, Region::Standard);
const SS: (Region, Region) = (Region::Standard, Region::Standard);
const SI: (Region, Region) = (Region::Standard, Region::Interleaved);

impl Kernel for CastPanels {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/cast_f16_fp8_panels.S"),
        entry_kind: Worker,
        abi: "vertex: in, out, M, K (% 4 == 0), m_padded, $FP_NFMT value, $FP_SCL value (-scale), mode, \
              rowstep, kbstep, extra, sc, sr, sr1, sbt (layout words from Source::steps, derived_words, \
              boundary_word), \
              split[6] (kb, m, items, out address); source row-major (stride % 4 == 0) or f16 panels; \
              mode 1/2 need in and out in different memory elements, in interleaved for the fast loads; \
              NANOO from $FP_ICTL",
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        let mut rng = Rng::new(0xca57);
        let settings = fp8_settings();
        let f143 = Fp8Out::new(Fp8Format::F143, 0, true);
        // The published shape: 38 rows x 80 columns (two complete blocks and a 16-wide tail).
        for (i, &fp8) in settings.iter().enumerate() {
            let x = normal_halves(
                &mut rng,
                38 * 80,
                0.0,
                [1.0, 100.0, 0.1, 2000.0, 30.0, 5000.0, 0.02][i],
            );
            let p = params(38, 80, Source::RowMajor { stride: 80 }, fp8, II, true);
            cases.push(make_case("normal", p, &x, 0x7c00));
        }
        for (regions, distinct) in [(IS, true), (SS, true), (SI, true), (II, false), (SS, false)] {
            let x = normal_halves(&mut rng, 38 * 80, 0.0, 20.0);
            let p = params(
                38,
                80,
                Source::RowMajor { stride: 80 },
                f143,
                regions,
                distinct,
            );
            cases.push(make_case("normal", p, &x, 0x7c00));
        }
        for (source, regions, distinct) in [
            (Source::Packed { rows: 38 }, II, true),
            (Source::Packed { rows: 40 }, II, true),
            (Source::Packed { rows: 38 }, SS, false),
            (Source::RowMajor { stride: 96 }, II, true),
        ] {
            let x = normal_halves(&mut rng, 38 * 80, 0.0, 20.0);
            let mut p = params(38, 80, source, settings[3], regions, distinct);
            p.m_padded = 40;
            p.kb_padded = 4;
            cases.push(make_case("padded", p, &x, 0x7e00));
        }
        // Every boundary width K % 32 in 4 .. 28, both layouts, fast and general.
        for (t, &tail) in [4usize, 8, 12, 16, 20, 24, 28, 0].iter().enumerate() {
            let k = 64 + tail;
            for (source, regions, distinct) in [
                (
                    Source::RowMajor {
                        stride: k + 4 * (t % 3),
                    },
                    II,
                    true,
                ),
                (Source::Packed { rows: 7 + t % 2 }, II, true),
                (Source::RowMajor { stride: k }, SI, false),
                (Source::Packed { rows: 7 }, SS, true),
            ] {
                let fp8 = settings[(t + cases.len()) % settings.len()];
                let x = normal_halves(&mut rng, 7 * k, 0.0, 50.0);
                let p = params(7, k, source, fp8, regions, distinct);
                cases.push(make_case("tail", p, &x, 0x7c00));
            }
        }
        // One row, two rows (the one-row fallback of the fast slot loops), tiny shapes, idle workers.
        for (m, k) in [
            (1usize, 1152usize),
            (1, 80),
            (1, 4),
            (2, 44),
            (1, 36),
            (3, 4),
            (2, 1152),
            (1, 4304),
            (1, 2152),
            (1, 88),
        ] {
            for (source, regions, distinct) in [
                (Source::RowMajor { stride: k }, II, true),
                (Source::Packed { rows: m }, SS, false),
            ] {
                let x = normal_halves(&mut rng, m * k, 1.0, 8.0);
                let p = params(
                    m,
                    k,
                    source,
                    settings[(m + k) % settings.len()],
                    regions,
                    distinct,
                );
                cases.push(make_case("small", p, &x, 0x7c00));
            }
        }
        // A single row from padded f16 panels (P > M): block runs with the packed strides.
        for (k, rows) in [(1176usize, 3usize), (88, 2)] {
            let x = normal_halves(&mut rng, k, 0.0, 6.0);
            let mut p = params(1, k, Source::Packed { rows }, settings[5], II, true);
            p.kb_padded += 1;
            cases.push(make_case("one row", p, &x, 0x7c00));
        }
        // Row strides past the pace range (general mode), P beyond the row-wise range (mode 1).
        for (source, m, k) in [
            (Source::RowMajor { stride: 4304 }, 3usize, 80usize),
            (Source::RowMajor { stride: 2048 }, 4, 1152),
            (Source::Packed { rows: 130 }, 129, 48),
            (Source::Packed { rows: 128 }, 128, 32),
        ] {
            let x = normal_halves(&mut rng, m * k, 0.0, 3.0);
            let p = params(m, k, source, settings[1], II, true);
            cases.push(make_case("strides", p, &x, 0x7c00));
        }
        // Larger: 16 x 1152 (complete blocks only), padded to 24 rows and 40 blocks.
        {
            let x = normal_halves(&mut rng, 16 * 1152, 0.0, 4.0);
            let mut p = params(
                16,
                1152,
                Source::RowMajor { stride: 1152 },
                settings[2],
                II,
                true,
            );
            p.m_padded = 24;
            p.kb_padded = 40;
            cases.push(make_case("padded", p, &x, 0x7c00));
        }
        // Edge values (NaN, inf, overflow, subnormals, signed zeros) under every FP8 setting.
        for (i, &fp8) in settings.iter().enumerate() {
            let (m, k) = (6, 48 + 4 * (i % 3));
            let x: Vec<u16> = (0..m * k)
                .map(|j| F16_SPECIALS[(j * 7 + i) % F16_SPECIALS.len()])
                .collect();
            let source = if i % 2 == 0 {
                Source::RowMajor { stride: k }
            } else {
                Source::Packed { rows: m }
            };
            let p = params(
                m,
                k,
                source,
                fp8,
                if i % 3 == 0 { SS } else { II },
                i % 3 != 0,
            );
            cases.push(make_case("edge values", p, &x, 0x7e00));
            let x = halves_with_specials(&mut rng, m * k, 300.0, 3);
            cases.push(make_case("edge mix", p, &x, 0x7c00));
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        // A quarter of the cases are single rows (the block-run path).
        let m = if rng.next_u32().is_multiple_of(4) {
            1
        } else {
            rng.range(1, 48) as usize
        };
        let k = 4 * rng.range(1, 100) as usize;
        let source = if rng.next_u32().is_multiple_of(2) {
            Source::RowMajor {
                stride: k + 4 * rng.range(0, 3) as usize,
            }
        } else {
            Source::Packed {
                rows: m + rng.range(0, 3) as usize,
            }
        };
        let fp8 = *rng.pick(&fp8_settings());
        let regions = *rng.pick(&[II, IS, SS, SI]);
        let distinct = !rng.next_u32().is_multiple_of(3);
        let mut p = params(m, k, source, fp8, regions, distinct);
        if m > 1 || rng.next_u32().is_multiple_of(2) {
            p.m_padded += rng.range(0, 4) as usize;
        }
        p.kb_padded += rng.range(0, 2) as usize;
        let x: Vec<u16> = (0..m * k).map(|_| rng.next_u32() as u16).collect();
        make_case(&format!("random seed={seed} any bits"), p, &x, 0x7c00)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let src = bytes::to_u16(&case.buffer("in").bytes);
        let source = Source::from_code(case.word(V_LAYOUT), case.word(V_STRIDE));
        let (m, k) = (case.word(V_M) as usize, case.word(V_K) as usize);
        let fp8 = Fp8Out::from_case(case, V_NFMT, V_SCL);
        vec![cast_reference(
            |r, c| src[source.index(r, c)],
            m,
            k,
            case.word(V_MPAD) as usize,
            case.word(V_KBPAD) as usize,
            fp8,
        )]
    }

    /// Bundles per worker, following the kernel's control flow (counts from the assembly).
    fn estimate_cycles(&self, case: &Case) -> u64 {
        let m_total = case.word(V_M) as i64;
        let k = case.word(V_K) as i64;
        let m_padded = case.word(V_MPAD) as i64;
        let mode = case.word(V_MODE);
        let mut bundles = [0u64; WORKERS];
        for (w, b) in bundles.iter_mut().enumerate() {
            let base = V_SPLIT + 4 * w;
            let (mut kb, mut m, mut items) = (
                case.word(base) as i64,
                case.word(base + 1) as i64,
                case.word(base + 2) as i64,
            );
            if items == 0 {
                *b = 9;
                continue;
            }
            // The kernel drops to the general mode when `in` is not interleaved; the estimate
            // cannot see addresses, so it reads the region from the case.
            let mode = if case.buffer("in").region == Region::Interleaved {
                mode
            } else {
                0
            };
            let mut total: i64 = 17;
            while items > 0 {
                let n = items.min(m_padded - m);
                let rem = k - 32 * kb;
                let r = if rem > 0 {
                    (m_total - m).clamp(0, n)
                } else {
                    0
                };
                total += 13;
                if r > 0 {
                    // Source address, then the choice of loop.
                    total += 7 + 4;
                    let sbt = case.word(V_SBT) != 0;
                    let slots = if mode == 2 && rem >= 32 && m_padded == 1 {
                        // A run of complete blocks of the single row.
                        let blocks = items.min(rem / 32);
                        total += 2 + 3 + 10 + 4 * blocks + 3 + 1 + 5;
                        items -= blocks;
                        kb += blocks;
                        continue;
                    } else if mode == 2 && rem >= 32 {
                        total += 2 + 3 + 4 * r + 6 + 1;
                        false
                    } else if mode == 2 && rem % 8 == 0 && sbt {
                        total += 6
                            + 4 * r
                            + if rem == 16 {
                                9
                            } else {
                                [0, 9, 0, 11][(rem / 8) as usize]
                            };
                        false
                    } else if mode == 2 {
                        total += if rem % 8 != 0 { 4 } else { 6 };
                        true
                    } else {
                        true
                    };
                    if slots {
                        total += 2;
                        for j in 0..4 {
                            let v = rem - 8 * j;
                            total += if v >= 8 {
                                2 + if mode > 0 && r >= 2 {
                                    r + 12
                                } else {
                                    3 * r + 10 + i64::from(r >= 2) + 2
                                }
                            } else if v >= 4 {
                                4 + if mode > 0 && r >= 2 {
                                    r + 14
                                } else {
                                    2 * r + 9 + i64::from(r >= 2) + 2
                                }
                            } else {
                                5 + 1 + r + 2
                            };
                            total += 8 + if j == 1 { 2 } else { 0 };
                        }
                        total += 1;
                    }
                }
                total += 14 + 4 * (n - r);
                items -= n;
                kb += 1;
                m = 0;
            }
            *b = total as u64 + 1;
        }
        worker_cycles(&bundles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_steps_match_the_layouts() {
        // The kernel's address formula in the vertex words must agree with Source::index.
        for source in [Source::RowMajor { stride: 84 }, Source::Packed { rows: 5 }] {
            let (rowstep, kbstep, extra) = source.steps();
            for m in 0..5 {
                for kk in 0..80 {
                    let (kb, c) = ((kk / 32) as i64, (kk % 32) as i64);
                    let addr =
                        kbstep * kb + rowstep * m as i64 + 2 * c + if c >= 16 { extra } else { 0 };
                    assert_eq!(
                        addr,
                        2 * source.index(m, kk) as i64,
                        "{source:?} m={m} k={kk}"
                    );
                }
            }
        }
    }

    #[test]
    fn modes_and_stride_fields() {
        assert_eq!(derived_words(Source::RowMajor { stride: 80 }, true).0, 2);
        assert_eq!(derived_words(Source::RowMajor { stride: 80 }, false).0, 0);
        assert_eq!(derived_words(Source::RowMajor { stride: 4304 }, true).0, 0);
        assert_eq!(derived_words(Source::Packed { rows: 128 }, true).0, 2);
        assert_eq!(derived_words(Source::Packed { rows: 129 }, true).0, 1);
        // Packed P = 3: f1 = 4P - 2 = 10, f2 = 2 - 4P = -10.
        let (_, sc, sr, sr1) = derived_words(Source::Packed { rows: 3 }, true);
        assert_eq!(sc, 4 | 4 << 10);
        assert_eq!(sr, 2 | 10 << 10 | ((-10i32 as u32) & 0x3ff) << 20);
        // Block to block in one row: 64 P - 48 - (32 P - 32) bytes = 4 P - 2 atoms.
        assert_eq!(sr1, 2 | 10 << 10 | 10 << 20);
        assert_eq!(
            derived_words(Source::RowMajor { stride: 8 }, true).3,
            2 | 2 << 10 | 2 << 20
        );
    }

    #[test]
    fn reference_pads_with_zeros() {
        let fp8 = Fp8Out::new(Fp8Format::F143, 0, true);
        // 1 x 4 of 1.0 into 2 rows x 2 blocks: row 0 block 0 bytes 0..4 = 0x40, the rest zero.
        let out = cast_reference(|_, _| 0x3c00, 1, 4, 2, 2, fp8);
        assert_eq!(out.len(), 128);
        assert_eq!(&out[..5], &[0x40, 0x40, 0x40, 0x40, 0]);
        assert!(out[5..].iter().all(|&b| b == 0));
        // Scale: tensor scale -4 multiplies by 16 (1.0 -> 16.0 = 0x60 in F143).
        let fp8 = Fp8Out::new(Fp8Format::F143, -4, true);
        assert_eq!(cast_reference(|_, _| 0x3c00, 1, 4, 1, 1, fp8)[0], 0x60);
    }
}
