//! Helpers shared by the elementwise kernels: data generators, edge values, FP8 settings, and
//! the per-worker bundle-count arithmetic of the estimates.

use crate::case::Region;
use crate::split::WORKERS;
use tessera_isa::csr::{field, index};
use tessera_isa::numerics::{f64_to_f16, Fp8Format};
use tessera_isa::rng::Rng;

/// f16 edge values: NaNs, infinities, the largest finite values, the normal/subnormal boundary,
/// subnormals, signed zeros, ones, and values that overflow FP8 (above 240 / 57344).
pub const F16_SPECIALS: [u16; 24] = [
    0x7e00, 0xfe00, 0x7c01, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0400, 0x8400, 0x03ff, 0x0001, 0x8001,
    0x0000, 0x8000, 0x3c00, 0xbc00, 0x5bc0, 0xdbc0, 0x7a00, 0x7b00, 0x0200, 0x8200, 0x3555, 0xc8ff,
];

/// `n` halves drawn from N(mean, std), rounded to f16.
pub fn normal_halves(rng: &mut Rng, n: usize, mean: f64, std: f64) -> Vec<u16> {
    (0..n).map(|_| f64_to_f16(rng.normal(mean, std))).collect()
}

/// `n` halves of which roughly one in `every` is an edge value, the rest N(0, std).
pub fn halves_with_specials(rng: &mut Rng, n: usize, std: f64, every: u64) -> Vec<u16> {
    (0..n)
        .map(|_| {
            if rng.next_u64().is_multiple_of(every) {
                *rng.pick(&F16_SPECIALS)
            } else {
                f64_to_f16(rng.normal(0.0, std))
            }
        })
        .collect()
}

/// Any bit patterns at all.
pub fn random_bits(rng: &mut Rng, n: usize) -> Vec<u16> {
    (0..n).map(|_| rng.next_u32() as u16).collect()
}

/// Both regions.
pub const REGIONS: [Region; 2] = [Region::Standard, Region::Interleaved];

/// FP8 output settings of a case: format, the tensor scale (`$FP_SCL` is its negation), NANOO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Out {
    pub format: Fp8Format,
    /// Tensor scale: FP8 value × 2^scale = real value, so the cast multiplies by 2^-scale.
    pub scale: i32,
    pub nanoo: bool,
}

impl Fp8Out {
    pub fn new(format: Fp8Format, scale: i32, nanoo: bool) -> Fp8Out {
        Fp8Out {
            format,
            scale,
            nanoo,
        }
    }

    /// The `$FP_NFMT` value (ARF_FMT is bit 1).
    pub fn nfmt_word(self) -> u32 {
        self.format.format_bit() << 1
    }

    /// The `$FP_SCL` value: the negated tensor scale, 6-bit two's complement.
    pub fn scl_word(self) -> u32 {
        tessera_isa::numerics::scale_to_field(-self.scale)
    }

    /// The supervisor CSR the case sets: `$FP_ICTL` with NANOO as asked.
    pub fn csrs(self) -> Vec<(u8, u32)> {
        vec![(
            index::FP_ICTL,
            if self.nanoo { field::FP_CTL_NANOO } else { 0 },
        )]
    }

    /// Reads the settings back from a case's vertex words and CSRs.
    pub fn from_case(case: &crate::Case, nfmt_word: usize, scl_word: usize) -> Fp8Out {
        let format = Fp8Format::from_format_bit(case.word(nfmt_word) >> 1);
        let scale = -tessera_isa::numerics::scale_from_field(case.word(scl_word));
        Fp8Out {
            format,
            scale,
            nanoo: nanoo_of(case),
        }
    }

    /// f16 → FP8 code with these settings (multiply by 2^-scale, one RNE rounding).
    pub fn encode(self, h: u16) -> u8 {
        tessera_isa::numerics::f16_to_fp8(h, self.format, -self.scale, self.nanoo)
    }

    pub fn describe(self) -> String {
        format!(
            "{} scale {} nanoo {}",
            self.format.name(),
            self.scale,
            u8::from(self.nanoo)
        )
    }
}

/// Whether the case's `$FP_ICTL` (inherited as the workers' `$FP_CTL`) sets NANOO.
pub fn nanoo_of(case: &crate::Case) -> bool {
    case.supervisor_csrs
        .iter()
        .any(|&(i, v)| i == index::FP_ICTL && v & field::FP_CTL_NANOO != 0)
}

/// A handful of FP8 settings covering both formats, NANOO on and off, and scales 0, ±4, ±7.
pub fn fp8_settings() -> Vec<Fp8Out> {
    vec![
        Fp8Out::new(Fp8Format::F143, 0, true),
        Fp8Out::new(Fp8Format::F152, 0, false),
        Fp8Out::new(Fp8Format::F143, -4, false),
        Fp8Out::new(Fp8Format::F152, -4, true),
        Fp8Out::new(Fp8Format::F143, 4, true),
        Fp8Out::new(Fp8Format::F152, 7, false),
        Fp8Out::new(Fp8Format::F143, -7, true),
    ]
}

/// Cycles of a worker kernel whose workers issue `bundles[w]` bundles each (the `exitz`
/// included), under the checker's supervisor stub: `runall` waits for the vertex address its
/// `mov` wrote (a supervisor result is read 6 cycles after its instruction) and issues at cycle
/// 8, so worker w first issues at cycle w + 12 (w < 3) or w + 6 (w >= 3), one bundle every 6
/// cycles; the supervisor's `sync` is released 6 cycles after the last `exitz` issues and
/// `br $m10` ends the run one cycle later.
pub fn worker_cycles(bundles: &[u64; WORKERS]) -> u64 {
    let last_exit = bundles
        .iter()
        .enumerate()
        .filter(|(_, &b)| b > 0)
        .map(|(w, &b)| {
            let first = if w < 3 { w as u64 + 12 } else { w as u64 + 6 };
            first + 6 * (b - 1)
        })
        .max()
        .unwrap_or(0);
    last_exit + 7
}

/// A row-major elementwise kernel's split table: per worker (first row, first group of 4 in
/// that row, groups), the `rows * cols / 4` groups cut in order (`bias_add_f16`,
/// `add_bias_f16`).
pub fn row_group_split(rows: usize, cols: usize) -> Vec<(u32, u32, u32)> {
    let per_row = (cols / 4) as u32;
    crate::split::worker_split((rows * cols / 4) as u32)
        .iter()
        .map(|&(first, count)| {
            first
                .checked_div(per_row)
                .map_or((0, 0, 0), |row| (row, first % per_row, count))
        })
        .collect()
}
