//! The data of the GEMM cases: the distributions ([`Data`]) and the random operands A, B and
//! partial sums C0 drawn from them, in each precision's encoding.

use super::{GemmSpec, Precision};
use tessera_isa::numerics::{f16_to_fp8, f32_to_f16, Fp8Format, FP8_NAN};
use tessera_isa::rng::Rng;

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
    /// All zeros, drawn without the generator: a call's template, whose operands its caller
    /// supplies (the compiler's estimates and references), not a test case.
    Zeros,
}

/// The operands of a case: A (M × K) and B (K × N), row-major, from `rng`.
pub(super) fn random_operands(p: Precision, spec: &GemmSpec, rng: &mut Rng) -> (Vec<u8>, Vec<u8>) {
    let (m, k, n) = (spec.m, spec.k, spec.n);
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
    let a = random_matrix(p, spec.x_format, spec.data, m * k, x_std, rng);
    let b = random_matrix(p, spec.w_format, spec.data, k * n, w_std, rng);
    (a, b)
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
    if data == Data::Zeros {
        return vec![0; count * precision.element_bytes()];
    }
    let mut out = Vec::with_capacity(count * precision.element_bytes());
    for _ in 0..count {
        let normal = match data {
            Data::Large => rng.normal(0.0, large_std),
            Data::Normal | Data::Wide | Data::Specials | Data::Ones | Data::Zeros => {
                rng.normal(0.0, std)
            }
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
                Data::Zeros => 0,
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
                    Data::Zeros => 0,
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
pub(super) fn random_partials(data: Data, count: usize, rng: &mut Rng) -> Vec<u16> {
    let mut out: Vec<u16> = (0..count)
        .map(|_| match data {
            Data::Ones => 0x3c00,
            Data::Zeros => 0,
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
