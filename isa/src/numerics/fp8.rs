//! The ipu21 FP8 formats (F143 = E4M3, F152 = E5M2, both "FNUZ") and the scaled f16 ↔ FP8 conversions.
//!
//! Both formats have a single NaN (0x80, the code that would be −0), no infinities, one zero
//! (0x00) and subnormals. Conversions multiply by `2^scale` (the `$FP_SCL` field) *exactly* and
//! round once; see the crate-level contract in [`crate::numerics`].

use super::rounding::{round_to_target, Rounded, TargetFormat, F16_TARGET};

/// One of the two FP8 formats of the ipu21.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Fp8Format {
    /// 1 sign, 4 exponent (bias 8), 3 mantissa bits. Max 240.
    F143,
    /// 1 sign, 5 exponent (bias 16), 2 mantissa bits. Max 57344.
    F152,
}

impl Fp8Format {
    /// Decodes a one-bit format field of `$FP_NFMT` / `$FP_INFMT` (or bit 7 of the tensor
    /// metadata byte): 1 = F143, 0 = F152. Only bit 0 of `bit` is looked at.
    pub fn from_format_bit(bit: u32) -> Self {
        if bit & 1 == 1 {
            Fp8Format::F143
        } else {
            Fp8Format::F152
        }
    }

    /// The inverse of [`Fp8Format::from_format_bit`].
    pub fn format_bit(self) -> u32 {
        match self {
            Fp8Format::F143 => 1,
            Fp8Format::F152 => 0,
        }
    }

    pub const fn exponent_bits(self) -> u32 {
        match self {
            Fp8Format::F143 => 4,
            Fp8Format::F152 => 5,
        }
    }

    pub const fn mantissa_bits(self) -> u32 {
        match self {
            Fp8Format::F143 => 3,
            Fp8Format::F152 => 2,
        }
    }

    pub const fn bias(self) -> i32 {
        match self {
            Fp8Format::F143 => 8,
            Fp8Format::F152 => 16,
        }
    }

    /// Largest finite magnitude (code 0x7f): 240 for F143, 57344 for F152.
    pub fn max_finite(self) -> f32 {
        match self {
            Fp8Format::F143 => 240.0,
            Fp8Format::F152 => 57344.0,
        }
    }

    /// "F143" or "F152".
    pub fn name(self) -> &'static str {
        match self {
            Fp8Format::F143 => "F143",
            Fp8Format::F152 => "F152",
        }
    }

    /// The format as a rounding target. FNUZ formats have no infinity, so the all-ones exponent
    /// field still holds finite numbers.
    fn target(self) -> TargetFormat {
        TargetFormat {
            mantissa_bits: self.mantissa_bits(),
            bias: self.bias(),
            max_exponent_field: (1 << self.exponent_bits()) - 1,
        }
    }

    /// Splits a non-NaN code into `(negative, significand, exponent)` with
    /// `|value| = significand × 2^exponent` exactly.
    const fn split(self, code: u8) -> (bool, u32, i32) {
        let p = self.mantissa_bits();
        let negative = code & 0x80 != 0;
        let magnitude = (code & 0x7f) as u32;
        let exponent_field = magnitude >> p;
        let mantissa_field = magnitude & ((1 << p) - 1);
        // Subnormals share the scale of exponent field 1, without the hidden bit.
        // (`max` is not a const fn.)
        let scale_field = if exponent_field == 0 {
            1
        } else {
            exponent_field
        };
        let exponent = scale_field as i32 - self.bias() - p as i32;
        let significand = if exponent_field == 0 {
            mantissa_field
        } else {
            mantissa_field | (1 << p)
        };
        (negative, significand, exponent)
    }
}

/// The single FP8 NaN code (the bit pattern that would be −0).
pub const FP8_NAN: u8 = 0x80;

/// The NaN that every f16-producing operation of the model returns (quiet, positive, no payload).
pub const F16_CANONICAL_NAN: u16 = 0x7e00;

/// Value of a code, unscaled; NaN for 0x80. Subnormals supported; no infinities; no negative zero.
pub const fn fp8_decode(code: u8, format: Fp8Format) -> f32 {
    if code == FP8_NAN {
        return f32::NAN;
    }
    let (negative, significand, exponent) = format.split(code);
    // significand < 16 and 2^exponent is a normal f32 (-17 ≤ exponent ≤ 13), so this is exact.
    let magnitude = significand as f32 * f32::from_bits(((exponent + 127) as u32) << 23);
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// [`fp8_decode`] of every code, F152 then F143 (indexed by [`Fp8Format::format_bit`]).
static FP8_VALUES: [[f32; 256]; 2] = {
    let mut tables = [[0.0f32; 256]; 2];
    let mut code = 0;
    while code < 256 {
        tables[0][code] = fp8_decode(code as u8, Fp8Format::F152);
        tables[1][code] = fp8_decode(code as u8, Fp8Format::F143);
        code += 1;
    }
    tables
};

/// The values of all 256 codes of `format`, `fp8_values(f)[c] == fp8_decode(c, f)` (the same
/// bits; NaN at 0x80), computed once at compile time.
#[inline]
pub fn fp8_values(format: Fp8Format) -> &'static [f32; 256] {
    &FP8_VALUES[format.format_bit() as usize]
}

/// Scales beyond this make every f16 → FP8 (and FP8 → f16) result zero or overflow already, so
/// clamping to it changes nothing and keeps the exponent arithmetic far from i32 overflow.
const SCALE_CLAMP: i32 = 256;

/// f16 bit pattern -> FP8 code: the exact value f16(h) * 2^scale rounded ONCE to nearest, ties to even.
/// Overflow (beyond max finite after rounding rules): NaN (0x80) if nanoo, else saturate to ±max (0x7f/0xff).
/// NaN or ±inf input -> 0x80 always. Results that round to zero -> 0x00 whatever the sign.
///
/// "Overflow" means: the value rounded with an unbounded exponent range exceeds max. So for
/// F143 every |value| ≥ 248 (max + half an ulp; the tie goes to the even neighbour 256)
/// overflows and everything below rounds to at most 240; for F152 the boundary is 61440.
#[inline]
pub fn f16_to_fp8(h: u16, format: Fp8Format, scale: i32, nanoo: bool) -> u8 {
    if FAST_CAST_SCALES.contains(&scale) {
        f16_to_fp8_fast(h, format, scale, nanoo)
    } else {
        f16_to_fp8_general(h, format, scale, nanoo)
    }
}

/// Scales for which |f16| × 2^scale is a normal f32 (or zero) for every finite f16: the
/// magnitudes lie in [2^-24, 2^16), so the scaled ones lie in [2^-126, 2^127).
const FAST_CAST_SCALES: std::ops::RangeInclusive<i32> = -102..=111;

/// [`f16_to_fp8`] for a scale in [`FAST_CAST_SCALES`], in integers: the exact scaled value is
/// written as f32 bits (exact, normal), then rounded (nearest, ties to even) to the format by
/// integer shifts of those bits. The same rounding as [`round_to_target`], checked against it
/// for every input in the tests.
#[inline]
fn f16_to_fp8_fast(h: u16, format: Fp8Format, scale: i32, nanoo: bool) -> u8 {
    let magnitude = (h & 0x7fff) as i32;
    if magnitude >= 0x7c00 {
        return FP8_NAN;
    }
    if magnitude == 0 {
        return 0x00;
    }
    // f32 bits of |h| × 2^scale (f16 exponent bias 15, f32 bias 127).
    let bits = if magnitude >= 0x0400 {
        (magnitude << 13) + ((112 + scale) << 23)
    } else {
        // Subnormal: magnitude × 2^-24 with the leading one at bit `lead` (0..=9).
        let lead = 31 - magnitude.leading_zeros() as i32;
        ((lead - 24 + 127 + scale) << 23) | ((magnitude << (23 - lead)) & 0x7f_ffff)
    } as u32;
    let p = format.mantissa_bits();
    let bias = format.bias();
    // Max + half an ulp (248 for F143, 61440 for F152): the first magnitude that overflows.
    let emax = (1i32 << format.exponent_bits()) - 1;
    let overflow_bits = (((emax - bias + 127) as u32) << 23) | (((2u32 << p) - 1) << (22 - p));
    if bits >= overflow_bits {
        let sign_bit = (h >> 8) as u8 & 0x80;
        return if nanoo { FP8_NAN } else { sign_bit | 0x7f };
    }
    // Round-to-nearest-even right shift (no overflow: bits < 2^31, shift ≤ 31).
    let round_shift =
        |value: u32, shift: u32| (value + (1 << (shift - 1)) - 1 + ((value >> shift) & 1)) >> shift;
    let min_normal_bits = ((1 - bias + 127) as u32) << 23;
    let code = if bits >= min_normal_bits {
        // Re-bias the exponent (127 → bias) and keep p fraction bits; a carry moves to the
        // next binade, and below the overflow boundary it stays within 0x7f.
        round_shift(bits - (((127 - bias) as u32) << 23), 23 - p)
    } else {
        // Below the normal range the quantum is 2^(1 - bias - p): the f32 significand
        // (24 bits, value × 2^(150 - f32 exponent field)) shifted right by the difference.
        let significand = (bits & 0x7f_ffff) | 0x80_0000;
        let shift = (151 - bias - p as i32) as u32 - (bits >> 23);
        if shift >= 32 {
            0
        } else {
            round_shift(significand, shift)
        }
    };
    if code == 0 {
        // There is no −0 code (0x80 is NaN), so every zero is +0.
        0x00
    } else {
        (h >> 8) as u8 & 0x80 | code as u8
    }
}

/// [`f16_to_fp8`] for every scale, by the shared rounding routine.
#[inline(never)]
fn f16_to_fp8_general(h: u16, format: Fp8Format, scale: i32, nanoo: bool) -> u8 {
    let negative = h & 0x8000 != 0;
    let exponent_field = ((h >> 10) & 0x1f) as i32;
    let fraction = (h & 0x3ff) as u64;
    if exponent_field == 0x1f {
        // ±inf and NaN both become the FP8 NaN, whatever NANOO says.
        return FP8_NAN;
    }
    // |h| = significand × 2^(exponent), exactly (f16 subnormals share exponent field 1's scale).
    let (significand, exponent) = if exponent_field == 0 {
        (fraction, -24)
    } else {
        (fraction | 0x400, exponent_field - 25)
    };
    let scale = scale.clamp(-SCALE_CLAMP, SCALE_CLAMP);
    let sign_bit = if negative { 0x80 } else { 0 };
    match round_to_target(significand, exponent + scale, format.target()) {
        // There is no −0 code (0x80 is NaN), so every zero is +0.
        Rounded::Zero => 0x00,
        Rounded::Finite {
            exponent_field,
            mantissa_field,
        } => sign_bit | ((exponent_field << format.mantissa_bits()) | mantissa_field) as u8,
        Rounded::Overflow => {
            if nanoo {
                FP8_NAN
            } else {
                sign_bit | 0x7f
            }
        }
    }
}

/// FP8 code -> f16 bits: value * 2^scale rounded to f16 RNE (overflow -> ±inf, tiny -> f16 subnormal/zero). NaN code -> F16_CANONICAL_NAN.
///
/// Exact whenever the scaled value is representable in f16 (the public fact); the rounding,
/// overflow and underflow behaviour outside that range is the project's IEEE-style choice.
/// A scaled value that underflows keeps its sign (f16, unlike FP8, has −0).
pub fn fp8_to_f16(code: u8, format: Fp8Format, scale: i32) -> u16 {
    if code == FP8_NAN {
        return F16_CANONICAL_NAN;
    }
    let (negative, significand, exponent) = format.split(code);
    let sign_bit = if negative { 0x8000 } else { 0 };
    let scale = scale.clamp(-SCALE_CLAMP, SCALE_CLAMP);
    match round_to_target(significand as u64, exponent + scale, F16_TARGET) {
        Rounded::Zero => sign_bit,
        Rounded::Finite {
            exponent_field,
            mantissa_field,
        } => sign_bit | ((exponent_field << 10) | mantissa_field) as u16,
        Rounded::Overflow => sign_bit | 0x7c00,
    }
}

/// `$FP_SCL` / `$FP_ISCL` scale fields are 6-bit two's complement (-32..31): decodes the low
/// 6 bits of a CSR value (higher bits are ignored).
pub fn scale_from_field(field: u32) -> i32 {
    // Move bit 5 to the i32 sign position and shift back arithmetically to sign-extend.
    (((field & 0x3f) << 26) as i32) >> 26
}

/// Encodes a scale into the 6-bit two's-complement field (the low 6 bits of the result).
///
/// # Panics
/// If `scale` is outside -32..=31: such a scale cannot be expressed by the hardware, and
/// silently wrapping it would turn a ×2^32 into a ×2^-32.
pub fn scale_to_field(scale: i32) -> u32 {
    assert!(
        (-32..=31).contains(&scale),
        "FP8 scale {scale} does not fit the 6-bit field (-32..=31)"
    );
    (scale as u32) & 0x3f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer fast path of [`f16_to_fp8`] against the general rounding, for every f16,
    /// both formats and NANOO settings, the `$FP_SCL` scales and the edges of
    /// [`FAST_CAST_SCALES`]. (`tests/it/numerics_exhaustive.rs` checks the decoding and every
    /// scale of the field against brute force and the oracle tables.)
    #[test]
    fn f16_to_fp8_fast_path_matches_the_general_rounding() {
        let mut scales: Vec<i32> = (-32..=31).collect();
        scales.extend([-102, -101, -100, -60, -40, 40, 60, 100, 110, 111]);
        for format in [Fp8Format::F143, Fp8Format::F152] {
            for &scale in &scales {
                assert!(FAST_CAST_SCALES.contains(&scale));
                for nanoo in [false, true] {
                    for h in 0..=u16::MAX {
                        assert_eq!(
                            f16_to_fp8(h, format, scale, nanoo),
                            f16_to_fp8_general(h, format, scale, nanoo),
                            "{format:?} scale {scale} nanoo {nanoo} h {h:#06x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn value_tables_are_the_decoded_codes() {
        for format in [Fp8Format::F143, Fp8Format::F152] {
            for code in 0..=255u8 {
                let (table, decoded) =
                    (fp8_values(format)[code as usize], fp8_decode(code, format));
                assert_eq!(
                    table.to_bits(),
                    decoded.to_bits(),
                    "{format:?} code {code:#04x}"
                );
            }
        }
    }

    #[test]
    fn format_parameters() {
        for format in [Fp8Format::F143, Fp8Format::F152] {
            assert_eq!(Fp8Format::from_format_bit(format.format_bit()), format);
            assert_eq!(1 + format.exponent_bits() + format.mantissa_bits(), 8);
            assert_eq!(fp8_decode(0x7f, format), format.max_finite());
            assert_eq!(fp8_decode(0xff, format), -format.max_finite());
        }
        assert_eq!(Fp8Format::from_format_bit(1), Fp8Format::F143);
        assert_eq!(Fp8Format::from_format_bit(0), Fp8Format::F152);
        // Smallest subnormals per isa.md §4.
        assert_eq!(fp8_decode(0x01, Fp8Format::F143), 2f32.powi(-10));
        assert_eq!(fp8_decode(0x01, Fp8Format::F152), 2f32.powi(-17));
    }

    #[test]
    fn known_conversions() {
        let f143 = Fp8Format::F143;
        // PopLibs' own example: half 8.5 → 0x58 (a tie, rounded to even 8.0).
        assert_eq!(f16_to_fp8(0x4840, f143, 0, true), 0x58);
        // 248 overflows, 247.875 does not (see the doc comment).
        assert_eq!(f16_to_fp8(0x5bc0, f143, 0, true), FP8_NAN);
        assert_eq!(f16_to_fp8(0x5bc0, f143, 0, false), 0x7f);
        assert_eq!(f16_to_fp8(0xdbc0, f143, 0, false), 0xff);
        assert_eq!(f16_to_fp8(0x5bbf, f143, 0, true), 0x7f);
        // ±inf / NaN → NaN regardless of NANOO; −0 → +0.
        for h in [0x7c00, 0xfc00, 0x7e00, 0xfe01] {
            assert_eq!(f16_to_fp8(h, f143, 0, false), FP8_NAN);
        }
        assert_eq!(f16_to_fp8(0x8000, f143, 0, true), 0x00);
        // A negative value that rounds to zero is +0, not the NaN code.
        assert_eq!(f16_to_fp8(0x8001, f143, 0, true), 0x00);
        // Scaling is exact before rounding: 1.0 × 2^7 = 128 = 0x78.
        assert_eq!(f16_to_fp8(0x3c00, f143, 7, true), 0x78);
        assert_eq!(fp8_to_f16(0x78, f143, -7), 0x3c00);
        // FP8 → f16 overflow and underflow.
        assert_eq!(fp8_to_f16(0x7f, Fp8Format::F152, 1), 0x7c00);
        assert_eq!(fp8_to_f16(0xff, Fp8Format::F152, 1), 0xfc00);
        assert_eq!(fp8_to_f16(0x01, Fp8Format::F152, -31), 0x0000);
        assert_eq!(fp8_to_f16(0x81, Fp8Format::F152, -31), 0x8000);
        assert_eq!(fp8_to_f16(FP8_NAN, f143, 0), F16_CANONICAL_NAN);
    }

    #[test]
    fn scale_fields() {
        for scale in -32..=31 {
            assert_eq!(scale_from_field(scale_to_field(scale)), scale);
            // Upper CSR bits do not matter.
            assert_eq!(scale_from_field(scale_to_field(scale) | 0xffff_ffc0), scale);
        }
        assert_eq!(scale_from_field(0x3f), -1);
        assert_eq!(scale_from_field(0x20), -32);
        assert_eq!(scale_from_field(0x1f), 31);
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn scale_to_field_rejects_out_of_range() {
        scale_to_field(32);
    }
}
