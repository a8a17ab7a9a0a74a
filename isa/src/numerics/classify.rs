//! `f32class`: the IEEE 754-2008 §5.7.2 class of an f32, as the number the instruction writes.
//!
//! ASM-DOC `f32class.md` names the classifier "IEEE 754-2008: 5.7.2" \[C\] and gives no numbers.
//! PopLibs' `HasNaN.S` turns an accumulated sum into a NaN and tests `f32class`'s result for 2
//! to find one, so a quiet NaN is 2 \[I\]. The rest is **\[A\]**: the ten classes numbered from
//! 1 in the order §5.7.2 lists them (signalling NaN 1, quiet NaN 2, −∞ 3, negative normal 4,
//! negative subnormal 5, −0 6, +0 7, positive subnormal 8, positive normal 9, +∞ 10), the
//! number in the whole 32-bit destination.

/// The class numbers, in §5.7.2 order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F32Class {
    SignalingNan = 1,
    QuietNan = 2,
    NegativeInfinity = 3,
    NegativeNormal = 4,
    NegativeSubnormal = 5,
    NegativeZero = 6,
    PositiveZero = 7,
    PositiveSubnormal = 8,
    PositiveNormal = 9,
    PositiveInfinity = 10,
}

/// The class of the f32 with bits `bits` (read as bits: a signalling NaN stays signalling).
pub fn f32_class(bits: u32) -> F32Class {
    let negative = bits >> 31 != 0;
    let exponent = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    let pick = |n: F32Class, p: F32Class| if negative { n } else { p };
    match (exponent, fraction) {
        (0xff, 0) => pick(F32Class::NegativeInfinity, F32Class::PositiveInfinity),
        (0xff, f) if f & 0x40_0000 != 0 => F32Class::QuietNan,
        (0xff, _) => F32Class::SignalingNan,
        (0, 0) => pick(F32Class::NegativeZero, F32Class::PositiveZero),
        (0, _) => pick(F32Class::NegativeSubnormal, F32Class::PositiveSubnormal),
        _ => pick(F32Class::NegativeNormal, F32Class::PositiveNormal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn specials_have_their_numbers() {
        let cases = [
            (0x7fa0_0000, 1),
            (0xffa0_0001, 1),
            (0x7fc0_0000, 2),
            (0xffc0_0000, 2),
            (0xff80_0000, 3),
            (0xbf80_0000, 4),
            (0x8000_0001, 5),
            (0x8000_0000, 6),
            (0x0000_0000, 7),
            (0x007f_ffff, 8),
            (0x3f80_0000, 9),
            (0x7f80_0000, 10),
        ];
        for (bits, class) in cases {
            assert_eq!(f32_class(bits) as u32, class, "{bits:#x}");
        }
    }

    proptest! {
        /// Agrees with the host's own classification on every pattern.
        #[test]
        fn agrees_with_the_host(bits in any::<u32>()) {
            use std::num::FpCategory::*;
            let x = f32::from_bits(bits);
            let class = f32_class(bits);
            let expected = match (x.classify(), x.is_sign_negative()) {
                (Nan, _) if bits & 0x40_0000 != 0 => F32Class::QuietNan,
                (Nan, _) => F32Class::SignalingNan,
                (Infinite, true) => F32Class::NegativeInfinity,
                (Infinite, false) => F32Class::PositiveInfinity,
                (Zero, true) => F32Class::NegativeZero,
                (Zero, false) => F32Class::PositiveZero,
                (Subnormal, true) => F32Class::NegativeSubnormal,
                (Subnormal, false) => F32Class::PositiveSubnormal,
                (Normal, true) => F32Class::NegativeNormal,
                (Normal, false) => F32Class::PositiveNormal,
            };
            prop_assert_eq!(class, expected);
        }
    }
}
