//! `gemm_fp8` and `gemm_f16`: C = A × B (+ C0) on the AMP, one supervisor kernel per precision.
//!
//! ABI (vertex words; `kernels/asm/gemm_fp8.S` is the full description):
//! `0 A, 1 B, 2 C, 3 C0, 4 S, 5 M, 6 kbs, 7 nbs, 8 flags, 9..15 zero`, then at word 16 + 8w the
//! record of worker w for its rows `first .. first + count` ([`worker_split`]):
//! `A + 32·first, C + RS·first, C0 + RS·first, count − 3, pace stride (RS/8 − 3, bit 31 when
//! count < 3), S, RS, count`.
//!
//! * A: AMP-left panels ([`layout::fp8_to_panels`] / [`layout::f16_to_panels`], m_padded = M).
//! * B: weights in `$CWEI` block order ([`layout::weights_to_cwei_blocks`]), interleaved
//!   memory, 16-byte aligned.
//! * C: M rows × Np = 16·nbs halves (RS = 2·Np bytes), interleaved memory. Columns N..Np hold
//!   what their zero weights give (the partial, passed through the AMP).
//! * C0 (flags bit 0): partial sums in, same layout as C. Without it the partials are +0.
//! * S: 16 bytes of scratch (the launch record the supervisor writes for the workers).
//! * 20 bytes of per-worker scratch at `$mworker_base`, kept from K-block 0 to the later ones.
//! * A, C0 and C in three different element slots (one `ld2xst64pace` touches all three).
//!
//! Reference numerics (the documented AMP model, `tessera_isa::numerics::amp`), mirroring the
//! data flow: for every output (m, n) the running sum starts as the f16 partial (C0 or +0); for
//! each K-block in order it enters an f32 accumulator exactly (`amp_partial_in`), the four
//! phases in order add their lanes' products (`amp_phase_fp8` with the `$FP_INFMT` formats and
//! the `$FP_ISCL` scale, or `amp_phase_f16`), and the sum leaves rounded to f16
//! (`amp_result_out`) — because between K-blocks the partial sum lives in C as f16.

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::layout::{self, AMP_CHANNELS, PANEL_ROW_BYTES, WEIGHT_BLOCK_BYTES};
use crate::rng::Rng;
use crate::split::{worker_split, WORKERS};
use crate::{EntryKind, Kernel};
use tessera_isa::csr::index;
use tessera_isa::numerics::{
    amp_partial_in, amp_phase_f16, amp_phase_fp8, amp_result_out, f16_to_fp8, f32_to_f16,
    scale_from_field, scale_to_field, Fp8Format, FP8_NAN,
};

/// Which AMP instruction the kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `f8v8hihov4amp`: 32 FP8 values per K-block.
    Fp8,
    /// `f16v4hihov4amp`: 16 f16 values per K-block.
    F16,
}

impl Precision {
    /// Values per K-block.
    pub fn block(self) -> usize {
        match self {
            Precision::Fp8 => layout::FP8_BLOCK,
            Precision::F16 => layout::F16_BLOCK,
        }
    }

    fn element_bytes(self) -> usize {
        match self {
            Precision::Fp8 => 1,
            Precision::F16 => 2,
        }
    }

    /// Multiply-accumulates one AMP call does (16 channels × values per phase).
    pub fn macs_per_call(self) -> u64 {
        (AMP_CHANNELS * self.block() / 4) as u64
    }
}

/// One of the two AMP GEMM kernels.
pub struct AmpGemm {
    pub precision: Precision,
}

pub static GEMM_FP8: AmpGemm = AmpGemm {
    precision: Precision::Fp8,
};
pub static GEMM_F16: AmpGemm = AmpGemm {
    precision: Precision::F16,
};

// Vertex layout (mirrors the #defines in the .S files).
const V_A: usize = 0;
const V_B: usize = 1;
const V_C: usize = 2;
const V_C0: usize = 3;
const V_S: usize = 4;
const V_M: usize = 5;
const V_KBS: usize = 6;
const V_NBS: usize = 7;
const V_FLAGS: usize = 8;
const V_WORKERS: usize = 16;
const RECORD_WORDS: usize = 8;
/// Bytes of the scratch buffer S (the launch record and the supervisor's constants).
const SCRATCH_BYTES: usize = 16;
/// Bit 31 of a worker's stride word: fewer than 3 rows (the plain loop).
const SLOW_FLAG: u32 = 1 << 31;
/// flags bit 0: add C0.
const FLAG_PARTIALS: u32 = 1;
/// Largest row stride the 10-bit pace stride field allows: RS/8 − 3 ≤ 511.
pub const MAX_ROW_STRIDE_BYTES: usize = 8 * (511 + 3);

/// Element slots of the three streams (different slots = different memory elements).
const SLOT_A: u8 = 0;
const SLOT_C0: u8 = 1;
const SLOT_C: u8 = 2;

/// Data distributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    /// Moderate values (normal-ish), results well inside the f16 range.
    Normal,
    /// Any finite code / exponent: large dynamic range, some results overflow to ±inf.
    Wide,
    /// Large values (saturating at the FP8 maximum): sums near the f16 overflow boundary, a mix
    /// of large finite results and ±inf (which later K-blocks carry on).
    Large,
    /// Normal data with a few specials in A, B and C0: FP8 NaN / ±max / subnormals, f16 ±inf,
    /// NaN, ±max, subnormals, −0.
    Specials,
    /// All ones: exact integer sums, K tails visible in the result.
    Ones,
}

/// Everything a case is made from.
#[derive(Clone, Debug)]
pub struct GemmSpec {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// Add C0 (else zero partial sums).
    pub partials: bool,
    /// `$FP_INFMT` formats of A (inputs) and B (weights); FP8 only.
    pub x_format: Fp8Format,
    pub w_format: Fp8Format,
    /// `$FP_ISCL`; FP8 only (the f16 kernel's cases still set it, to show it is ignored).
    pub scale: i32,
    pub a_region: Region,
    pub c0_region: Region,
    /// Slot of B (it is only read by `ld128putcs`, so it may share any slot).
    pub b_slot: Option<u8>,
    pub data: Data,
    pub seed: u64,
}

impl GemmSpec {
    pub fn new(m: usize, k: usize, n: usize) -> GemmSpec {
        GemmSpec {
            m,
            k,
            n,
            partials: false,
            x_format: Fp8Format::F143,
            w_format: Fp8Format::F143,
            scale: -4,
            a_region: Region::Interleaved,
            c0_region: Region::Interleaved,
            b_slot: None,
            data: Data::Normal,
            seed: 1,
        }
    }

    fn n_blocks(&self) -> usize {
        self.n.div_ceil(AMP_CHANNELS)
    }

    fn row_stride(&self) -> usize {
        self.n_blocks() * AMP_CHANNELS * 2
    }
}

fn format_name(format: Fp8Format) -> &'static str {
    match format {
        Fp8Format::F143 => "F143",
        Fp8Format::F152 => "F152",
    }
}

fn region_name(region: Region) -> &'static str {
    match region {
        Region::Standard => "std",
        Region::Interleaved => "il",
    }
}

/// An FP8 code for a value (saturating, never NaN unless asked).
fn fp8_of(value: f64, format: Fp8Format) -> u8 {
    f16_to_fp8(tessera_isa::numerics::f64_to_f16(value), format, 0, false)
}

/// f16 specials placed by [`Data::Specials`]: ±inf, NaN, ±max, the smallest subnormal, −0, the
/// largest subnormal.
const F16_SPECIALS: [u16; 8] = [
    0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0x8000, 0x03ff,
];
/// FP8 specials: NaN, ±max, the smallest subnormals.
const FP8_SPECIALS: [u8; 5] = [FP8_NAN, 0x7f, 0xff, 0x01, 0x81];
/// Special values placed in each matrix by [`Data::Specials`] (few, so most outputs stay finite).
const SPECIALS_PER_MATRIX: usize = 3;

/// Random matrix entries (row-major, `count` values) in the precision's encoding: FP8 codes as
/// one byte, f16 as two little-endian bytes. `std` is the standard deviation of Normal data;
/// Large data have a standard deviation of `large_std` (sums near the f16 overflow boundary).
fn random_matrix(
    precision: Precision,
    format: Fp8Format,
    data: Data,
    count: usize,
    (std, large_std): (f64, f64),
    rng: &mut Rng,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(count * precision.element_bytes());
    for _ in 0..count {
        let normal = match data {
            Data::Large => rng.normal(0.0, large_std),
            Data::Normal | Data::Wide | Data::Specials | Data::Ones => rng.normal(0.0, std),
        };
        match precision {
            Precision::Fp8 => out.push(match data {
                Data::Wide => {
                    let code = rng.next_u32() as u8;
                    if code == FP8_NAN {
                        0
                    } else {
                        code
                    }
                }
                Data::Ones => fp8_of(1.0, format),
                Data::Normal | Data::Large | Data::Specials => fp8_of(normal, format),
            }),
            Precision::F16 => {
                let half = match data {
                    Data::Wide => {
                        let sign = (rng.next_u32() & 1) as u16;
                        let exponent = rng.range(1, 30) as u16;
                        let fraction = (rng.next_u32() & 0x3ff) as u16;
                        sign << 15 | exponent << 10 | fraction
                    }
                    Data::Ones => 0x3c00,
                    Data::Normal | Data::Large | Data::Specials => {
                        tessera_isa::numerics::f64_to_f16(normal)
                    }
                };
                out.extend(half.to_le_bytes());
            }
        }
    }
    if data == Data::Specials {
        for _ in 0..SPECIALS_PER_MATRIX {
            let at = rng.range(0, count as u64 - 1) as usize;
            match precision {
                Precision::Fp8 => out[at] = *rng.pick(&FP8_SPECIALS),
                Precision::F16 => {
                    out[2 * at..2 * at + 2].copy_from_slice(&rng.pick(&F16_SPECIALS).to_le_bytes())
                }
            }
        }
    }
    out
}

/// Random f16 partial sums (M × Np, padded columns included).
fn random_partials(data: Data, count: usize, rng: &mut Rng) -> Vec<u16> {
    let mut out: Vec<u16> = (0..count)
        .map(|_| match data {
            Data::Ones => 0x3c00,
            Data::Large => f32_to_f16(rng.normal(0.0, 20000.0) as f32),
            Data::Normal | Data::Wide | Data::Specials => f32_to_f16(rng.normal(0.0, 4.0) as f32),
        })
        .collect();
    if data == Data::Specials {
        for _ in 0..2 * SPECIALS_PER_MATRIX {
            let at = rng.range(0, count as u64 - 1) as usize;
            out[at] = *rng.pick(&F16_SPECIALS);
        }
    }
    out
}

impl AmpGemm {
    /// Builds a case from its spec (the data come from `spec.seed`).
    pub fn make_case(&self, spec: &GemmSpec) -> Case {
        let p = self.precision;
        let (m, k, n) = (spec.m, spec.k, spec.n);
        assert!(m >= 1 && k >= 1 && n >= 1, "empty GEMM");
        let nbs = spec.n_blocks();
        let kbs = layout::k_blocks(k, p.block());
        let np = nbs * AMP_CHANNELS;
        let rs = spec.row_stride();
        assert!(
            rs <= MAX_ROW_STRIDE_BYTES,
            "N too large for the pace stride field"
        );
        let mut rng = Rng::new(spec.seed);
        // Standard deviations: Normal sums stay moderate; Large sums have a standard deviation
        // near the f16 maximum, so some overflow to ±inf and some stay finite.
        let product_scale = match p {
            Precision::Fp8 => 2f64.powi(spec.scale),
            Precision::F16 => 1.0,
        };
        let large = (60000.0 / product_scale / (k as f64).sqrt()).sqrt();
        let (x_std, w_std) = match p {
            Precision::Fp8 => ((2.0, large), (1.0, large)),
            Precision::F16 => ((1.0, large), (1.0 / (k as f64).sqrt().max(1.0), large)),
        };
        let a = random_matrix(p, spec.x_format, spec.data, m * k, x_std, &mut rng);
        let b = random_matrix(p, spec.w_format, spec.data, k * n, w_std, &mut rng);
        let panels = match p {
            Precision::Fp8 => layout::fp8_to_panels(&a, m, k, m),
            Precision::F16 => layout::f16_to_panels(&bytes::to_u16(&a), m, k, m),
        };
        let blocks = layout::weights_to_cwei_blocks(&b, k, n, p.element_bytes());
        let mut buffers = vec![
            Buffer::input("a", panels, spec.a_region, Some(SLOT_A)),
            Buffer {
                align: 16,
                ..Buffer::input("b", blocks, Region::Interleaved, spec.b_slot)
            },
        ];
        if spec.partials {
            let c0 = random_partials(spec.data, m * np, &mut rng);
            buffers.push(Buffer::input(
                "c0",
                bytes::from_u16(&c0),
                spec.c0_region,
                Some(SLOT_C0),
            ));
        }
        buffers.push(Buffer {
            align: 16,
            ..Buffer::output("c", m * rs, Region::Interleaved, Some(SLOT_C))
        });
        buffers.push(Buffer::scratch("s", SCRATCH_BYTES, Region::Standard));
        let index_of = |name: &str| buffers.iter().position(|b| b.name == name).unwrap();
        let address = |name: &str| VertexWord::Address {
            buffer: index_of(name),
            offset: 0,
        };
        let mut vertex = vec![VertexWord::Value(0); V_WORKERS];
        vertex[V_A] = address("a");
        vertex[V_B] = address("b");
        vertex[V_C] = address("c");
        vertex[V_C0] = if spec.partials {
            address("c0")
        } else {
            VertexWord::Value(0)
        };
        vertex[V_S] = address("s");
        vertex[V_M] = VertexWord::Value(m as u32);
        vertex[V_KBS] = VertexWord::Value(kbs as u32);
        vertex[V_NBS] = VertexWord::Value(nbs as u32);
        vertex[V_FLAGS] = VertexWord::Value(if spec.partials { FLAG_PARTIALS } else { 0 });
        let stride = (rs / 8 - 3) as u32 & 0x3ff;
        for (first, count) in worker_split(m as u32) {
            let at = |name: &str, offset: u32| VertexWord::Address {
                buffer: index_of(name),
                offset,
            };
            vertex.extend([
                at("a", first * PANEL_ROW_BYTES as u32),
                at("c", first * rs as u32),
                if spec.partials {
                    at("c0", first * rs as u32)
                } else {
                    VertexWord::Value(0)
                },
                VertexWord::Value(count.wrapping_sub(3)),
                VertexWord::Value(stride | if count < 3 { SLOW_FLAG } else { 0 }),
                address("s"),
                VertexWord::Value(rs as u32),
                VertexWord::Value(count),
            ]);
        }
        debug_assert_eq!(vertex.len(), V_WORKERS + WORKERS * RECORD_WORDS);
        let infmt = spec.x_format.format_bit() << 1 | spec.w_format.format_bit();
        let mut name = format!("m={m} k={k} n={n}");
        if p == Precision::Fp8 {
            name += &format!(
                " {}x{} scale={}",
                format_name(spec.x_format),
                format_name(spec.w_format),
                spec.scale
            );
        }
        name += if spec.partials {
            " +C0"
        } else {
            " zero-partials"
        };
        name += &format!(" {:?} A:{}", spec.data, region_name(spec.a_region));
        if spec.partials {
            name += &format!(" C0:{}", region_name(spec.c0_region));
        }
        if let Some(slot) = spec.b_slot {
            name += &format!(" B-slot={slot}");
        }
        Case {
            kernel: self.name().into(),
            name,
            buffers,
            vertex,
            supervisor_csrs: vec![
                (index::FP_INFMT, infmt),
                (index::FP_ISCL, scale_to_field(spec.scale)),
            ],
        }
    }

    /// The default case specs.
    pub fn specs(&self) -> Vec<GemmSpec> {
        match self.precision {
            Precision::Fp8 => fp8_specs(),
            Precision::F16 => f16_specs(),
        }
    }

    /// Bundles a worker with `count` rows issues in one launch, from the code structure of the
    /// .S file: setup, the 4·count + 7 bundles from b = 3 to the last store, the `rpt` bubble
    /// and the exit (the first K-block also runs b = -1..2 and a branch); or the plain loop for
    /// fewer than 3 rows: 18 bundles per row (13 without partials).
    fn worker_bundles(count: u64, launch: Launch) -> u64 {
        match (launch, count) {
            (Launch::First, 0) => 25,
            (Launch::First, 1..=2) => 26 + 18 * count,
            (Launch::First, _) => 4 * count + 33,
            (Launch::FirstZero, 0) => 22,
            (Launch::FirstZero, 1..=2) => 23 + 13 * count,
            (Launch::FirstZero, _) => 4 * count + 25,
            (Launch::Next, 0) => 15,
            (Launch::Next, 1..=2) => 16 + 18 * count,
            (Launch::Next, _) => 4 * count + 19,
            (Launch::NextFast, _) => 4 * count + 18,
        }
    }
}

/// The worker entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Launch {
    /// K-block 0 with C0 (`*_worker`).
    First,
    /// K-block 0 with zero partials (`*_worker_z`).
    FirstZero,
    /// K-blocks 1.. when some worker has fewer than 3 rows (`*_worker_n`).
    Next,
    /// K-blocks 1.. when M ≥ 18 (`*_worker_nf`, no row check).
    NextFast,
}

/// Cycles from the kernel start to the first launch's `sync`, and after the last launch.
const PROLOGUE_CYCLES: u64 = 34;
const EPILOGUE_CYCLES: u64 = 12;
/// Supervisor cycles per launch on the critical path: the `sync` release (6), 32
/// `ld128putcs`, one store, `runall`, and the wait for the workers' first slots.
const LAUNCH_CYCLES: u64 = 6 + 32 + 1 + 1 + 2;

/// The reference: C (M × Np f16 bits), from the spec of the kernel (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn reference_gemm(
    precision: Precision,
    m: usize,
    kbs: usize,
    nbs: usize,
    panels: &[u8],
    blocks: &[u8],
    partials: Option<&[u16]>,
    x_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> Vec<u16> {
    let np = nbs * AMP_CHANNELS;
    let mut out = vec![0u16; m * np];
    for row in 0..m {
        for col in 0..np {
            let (nb, channel) = (col / AMP_CHANNELS, col % AMP_CHANNELS);
            let mut sum = partials.map_or(0x0000, |c0| c0[row * np + col]);
            for kb in 0..kbs {
                let mut acc = amp_partial_in(sum);
                for phase in 0..4 {
                    let x_at = layout::panel_offset(kb, row, m) + 8 * phase;
                    let w_at = (nb * kbs + kb) * WEIGHT_BLOCK_BYTES + (4 * channel + phase) * 8;
                    let x: [u8; 8] = panels[x_at..x_at + 8].try_into().unwrap();
                    let w: [u8; 8] = blocks[w_at..w_at + 8].try_into().unwrap();
                    acc = match precision {
                        Precision::Fp8 => amp_phase_fp8(acc, x, w, x_format, w_format, scale),
                        Precision::F16 => amp_phase_f16(acc, halves(x), halves(w)),
                    };
                }
                sum = amp_result_out(acc);
            }
            out[row * np + col] = sum;
        }
    }
    out
}

fn halves(v: [u8; 8]) -> [u16; 4] {
    std::array::from_fn(|i| u16::from_le_bytes([v[2 * i], v[2 * i + 1]]))
}

impl Kernel for AmpGemm {
    fn name(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => "gemm_fp8",
            Precision::F16 => "gemm_f16",
        }
    }

    fn source(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => concat!(
                include_str!("../../asm/gemm_fp8.S"),
                include_str!("../../asm/gemm_amp_body.S")
            ),
            Precision::F16 => concat!(
                include_str!("../../asm/gemm_f16.S"),
                include_str!("../../asm/gemm_amp_body.S")
            ),
        }
    }

    fn entry(&self) -> &'static str {
        self.name()
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Supervisor
    }

    fn abi(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => {
                "supervisor; vertex: A (FP8 panels), B ($CWEI blocks, interleaved, 16-aligned), C (M x Np f16, \
                 interleaved, 16-aligned), C0, S (16 B scratch), M, kbs, nbs, flags (bit 0: add C0), 0 x7, 6 worker records \
                 (A+32*first, C+RS*first, C0+RS*first, count-3, RS/8-3 | bit 31 if count<3, S, RS, count); 20 B worker \
                 scratch; A, C0, C in different element slots; $FP_INFMT = fmt(A)<<1 | fmt(B), $FP_ISCL = scale"
            }
            Precision::F16 => {
                "supervisor; vertex: A (f16 panels), B ($CWEI blocks, interleaved, 16-aligned), C (M x Np f16, \
                 interleaved, 16-aligned), C0, S (16 B scratch), M, kbs, nbs, flags (bit 0: add C0), 0 x7, 6 worker records \
                 (A+32*first, C+RS*first, C0+RS*first, count-3, RS/8-3 | bit 31 if count<3, S, RS, count); 20 B worker \
                 scratch; A, C0, C in different element slots"
            }
        }
    }

    fn cases(&self) -> Vec<Case> {
        self.specs()
            .iter()
            .map(|spec| self.make_case(spec))
            .collect()
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        loop {
            let mut spec = GemmSpec::new(
                rng.range(1, 140) as usize,
                rng.range(
                    1,
                    if self.precision == Precision::Fp8 {
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
            if fits(self.precision, &spec) {
                let mut case = self.make_case(&spec);
                case.name = format!("random seed={seed} {}", case.name);
                return case;
            }
        }
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let (m, kbs, nbs) = (
            case.word(V_M) as usize,
            case.word(V_KBS) as usize,
            case.word(V_NBS) as usize,
        );
        let partials = (case.word(V_FLAGS) & FLAG_PARTIALS != 0)
            .then(|| bytes::to_u16(&case.buffer("c0").bytes));
        let csr = |i: u8| {
            case.supervisor_csrs
                .iter()
                .find(|&&(index, _)| index == i)
                .map_or(0, |&(_, v)| v)
        };
        let infmt = csr(index::FP_INFMT);
        let c = reference_gemm(
            self.precision,
            m,
            kbs,
            nbs,
            &case.buffer("a").bytes,
            &case.buffer("b").bytes,
            partials.as_deref(),
            Fp8Format::from_format_bit(infmt >> 1 & 1),
            Fp8Format::from_format_bit(infmt & 1),
            scale_from_field(csr(index::FP_ISCL)),
        );
        vec![bytes::from_u16(&c)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        let (m, kbs, nbs) = (
            case.word(V_M),
            case.word(V_KBS) as u64,
            case.word(V_NBS) as u64,
        );
        let partials = case.word(V_FLAGS) & FLAG_PARTIALS != 0;
        let launch = |launch: Launch| {
            let busiest = worker_split(m)
                .iter()
                .map(|&(_, count)| Self::worker_bundles(count as u64, launch))
                .max();
            LAUNCH_CYCLES + 6 * busiest.unwrap_or(0)
        };
        let first = launch(if partials {
            Launch::First
        } else {
            Launch::FirstZero
        });
        let next = launch(if m >= 18 {
            Launch::NextFast
        } else {
            Launch::Next
        });
        PROLOGUE_CYCLES + nbs * (first + (kbs - 1) * next) + EPILOGUE_CYCLES
    }
}

/// Whether a case fits one tile, counting buffers the way the checker places them (each change
/// of element slot starts a new 16 KiB element or 32 KiB pair; 16 KiB reserved in the standard
/// region for code, vertex and worker scratch).
pub fn fits(precision: Precision, spec: &GemmSpec) -> bool {
    let kbs = layout::k_blocks(spec.k, precision.block());
    let nbs = spec.n_blocks();
    let c_bytes = spec.m * spec.row_stride();
    let mut standard = 16 << 10;
    let mut interleaved = 0;
    let mut add = |region: Region, bytes: usize| match region {
        Region::Standard => standard += bytes.div_ceil(16 << 10) * (16 << 10),
        Region::Interleaved => interleaved += (bytes + 64).div_ceil(32 << 10) * (32 << 10),
    };
    add(spec.a_region, kbs * spec.m * PANEL_ROW_BYTES);
    add(Region::Interleaved, nbs * kbs * WEIGHT_BLOCK_BYTES);
    if spec.partials {
        add(spec.c0_region, c_bytes);
    }
    add(Region::Interleaved, c_bytes);
    spec.row_stride() <= MAX_ROW_STRIDE_BYTES && standard <= 208 << 10 && interleaved <= 416 << 10
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
    specs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Role;

    /// `gemm_f16.S` is `gemm_fp8.S` below this line (only the headers and #defines differ).
    const SHARED_CODE_MARKER: &str = "// ==== shared code of gemm_fp8 and gemm_f16";
    use tessera_isa::numerics::fp8_decode;

    fn one_value_gemm(
        precision: Precision,
        x: &[u8],
        w: &[u8],
        k: usize,
        partial: Option<u16>,
        scale: i32,
    ) -> u16 {
        let blocks = layout::weights_to_cwei_blocks(w, k, 1, precision.element_bytes());
        let panels = match precision {
            Precision::Fp8 => layout::fp8_to_panels(x, 1, k, 1),
            Precision::F16 => layout::f16_to_panels(&bytes::to_u16(x), 1, k, 1),
        };
        let partials = partial.map(|p| {
            let mut row = vec![0u16; 16];
            row[0] = p;
            row
        });
        let kbs = layout::k_blocks(k, precision.block());
        let c = reference_gemm(
            precision,
            1,
            kbs,
            1,
            &panels,
            &blocks,
            partials.as_deref(),
            F143,
            F143,
            scale,
        );
        assert_eq!(c.len(), 16);
        c[0]
    }

    #[test]
    fn fp8_single_product_and_padding() {
        // 0x40 = 1.0 and 0x48 = 2.0 in F143.
        assert_eq!(fp8_decode(0x48, F143), 2.0);
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40], &[0x48], 1, None, 0),
            0x4000
        );
        // The scale multiplies every product: 32 ones at 2^-4 = 2.0.
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40; 32], &[0x40; 32], 32, None, -4),
            0x4000
        );
        // The padded columns of C keep the partial (zero weights).
        let blocks = layout::weights_to_cwei_blocks(&[0x40], 1, 1, 1);
        let panels = layout::fp8_to_panels(&[0x40], 1, 1, 1);
        let c0: Vec<u16> = (0..16).map(|i| 0x3c00 + i).collect();
        let c = reference_gemm(
            Precision::Fp8,
            1,
            1,
            1,
            &panels,
            &blocks,
            Some(&c0),
            F143,
            F143,
            0,
        );
        assert_eq!(c[0], 0x4000); // 1 + 1
        assert_eq!(&c[1..], &c0[1..]);
    }

    #[test]
    fn each_k_block_rounds_to_f16() {
        // Partial 2048 (f16 ulp 2 there); two K-blocks each add 1.0: 2049 rounds to 2048 (ties to
        // even) after each block, so the result is 2048, not 2050.
        let mut x = vec![0u8; 64];
        let mut w = vec![0u8; 64];
        x[0] = 0x40;
        w[0] = 0x40;
        x[40] = 0x40;
        w[40] = 0x40;
        assert_eq!(
            one_value_gemm(Precision::Fp8, &x, &w, 64, Some(0x6800), 0),
            0x6800
        );
        // The same sum inside one K-block stays in f32: 2048 + 1 + 1 = 2050 (0x6801).
        x[40] = 0;
        w[40] = 0;
        x[9] = 0x40;
        w[9] = 0x40;
        assert_eq!(
            one_value_gemm(Precision::Fp8, &x, &w, 64, Some(0x6800), 0),
            0x6801
        );
    }

    #[test]
    fn f16_products_nan_and_overflow() {
        let x = bytes::from_u16(&[0x4000, 0x4200]); // 2, 3
        let w = bytes::from_u16(&[0x4400, 0xc000]); // 4, -2
        assert_eq!(
            one_value_gemm(Precision::F16, &x, &w, 2, Some(0x3c00), 0),
            0x4200
        ); // 1 + 2*4 + 3*(-2) = 3
        let nan_x = bytes::from_u16(&[0x7e00, 0]);
        assert_eq!(
            one_value_gemm(Precision::F16, &nan_x, &w, 2, None, 0),
            0x7e00
        );
        let big = bytes::from_u16(&[0x7bff, 0x7bff]);
        assert_eq!(
            one_value_gemm(
                Precision::F16,
                &big,
                &bytes::from_u16(&[0x4000, 0x4000]),
                2,
                None,
                0
            ),
            0x7c00
        );
        // An FP8 NaN code anywhere in the row makes the output NaN.
        assert_eq!(
            one_value_gemm(Precision::Fp8, &[0x40, FP8_NAN], &[0x40, 0x40], 2, None, 0),
            0x7e00
        );
    }

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

    #[test]
    fn the_two_sources_share_their_code() {
        let tail =
            |source: &'static str| &source[source.find(SHARED_CODE_MARKER).expect("marker")..];
        assert_eq!(tail(GEMM_FP8.source()), tail(GEMM_F16.source()));
        assert!(GEMM_FP8
            .source()
            .contains("#define AMP         f8v8hihov4amp"));
        assert!(GEMM_F16
            .source()
            .contains("#define AMP         f16v4hihov4amp"));
    }

    #[test]
    fn vertex_records_follow_the_split() {
        let case = GEMM_FP8.make_case(&GemmSpec::new(13, 40, 20));
        assert_eq!(case.vertex.len(), V_WORKERS + WORKERS * RECORD_WORDS);
        // 13 rows: 3, 2, 2, 2, 2, 2; Np = 32, RS = 64, row jump 64/8 - 3 = 5.
        let record = |w: usize, word: usize| case.vertex[V_WORKERS + RECORD_WORDS * w + word];
        let value = |w: usize, word: usize| case.word(V_WORKERS + RECORD_WORDS * w + word);
        assert_eq!((value(0, 3), value(0, 4), value(0, 7)), (0, 5, 3));
        assert_eq!(
            (value(1, 3) as i32, value(1, 4), value(1, 6), value(1, 7)),
            (-1, 5 | SLOW_FLAG, 64, 2)
        );
        let (a, c) = (case.buffer_index("a"), case.buffer_index("c"));
        assert_eq!(
            record(1, 0),
            VertexWord::Address {
                buffer: a,
                offset: 3 * 32
            }
        );
        assert_eq!(
            record(1, 1),
            VertexWord::Address {
                buffer: c,
                offset: 3 * 64
            }
        );
        assert_eq!(record(1, 2), VertexWord::Value(0), "no C0");
        assert_eq!(case.word(V_KBS), 2);
        assert_eq!(case.word(V_NBS), 2);
        assert!(case
            .buffers
            .iter()
            .any(|b| b.name == "c" && b.role == Role::Output && b.len() == 13 * 64));
    }
}
