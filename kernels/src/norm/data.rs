//! Row data for the norm cases: the distributions the default cases cover.

use half::f16;
use tessera_isa::rng::Rng;

/// f16 bits of `value` (RNE).
pub fn h(value: f64) -> u16 {
    f16::from_f64(value).to_bits()
}

/// What the values of a row look like.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Roughly normal.
    Normal { mean: f64, std: f64 },
    /// Every element of a row equal (the value differs per row): variance 0.
    Constant(f64),
    /// Mean 1000, small spread: the f16 values sit on a 0.5 grid, so the spread is a few
    /// ulps; the uncentred E[x²] − mean² would cancel catastrophically.
    LargeMean,
    /// Normal data with NaN, ±inf and the largest finite halves sprinkled in some rows.
    Specials,
    /// Tiny values, many of them f16 subnormals.
    Tiny,
    /// Uniformly random bit patterns (anything, including NaN and infinities).
    AnyBits,
    /// Magnitudes spread over 10^-3 .. 10^4.5 with random signs: f32 sums that round, so the
    /// summation order shows in the results.
    Wide,
}

impl Dist {
    pub fn label(self) -> String {
        match self {
            Dist::Normal { mean, std } => format!("normal({mean},{std})"),
            Dist::Constant(v) => format!("constant {v}"),
            Dist::LargeMean => "mean 1000 spread 0.5".into(),
            Dist::Specials => "NaN/inf".into(),
            Dist::Tiny => "tiny/subnormal".into(),
            Dist::AnyBits => "any bits".into(),
            Dist::Wide => "wide magnitudes".into(),
        }
    }

    /// `rows` rows of `n` halves.
    pub fn rows(self, rng: &mut Rng, rows: usize, n: usize) -> Vec<u16> {
        let mut out = Vec::with_capacity(rows * n);
        for r in 0..rows {
            match self {
                Dist::Normal { mean, std } => out.extend((0..n).map(|_| h(rng.normal(mean, std)))),
                Dist::Constant(v) => {
                    let value = h(v * (1.0 + r as f64 * 0.37));
                    out.extend(std::iter::repeat_n(value, n));
                }
                Dist::LargeMean => out.extend((0..n).map(|_| h(rng.normal(1000.0, 0.5)))),
                Dist::Tiny => out.extend((0..n).map(|_| h(rng.normal(0.0, 1e-5)))),
                Dist::AnyBits => out.extend((0..n).map(|_| rng.next_u32() as u16)),
                Dist::Wide => out.extend((0..n).map(|_| {
                    let magnitude = 10f64.powf(rng.unit() * 7.5 - 3.0);
                    h(if rng.next_u32().is_multiple_of(2) {
                        magnitude
                    } else {
                        -magnitude
                    })
                })),
                Dist::Specials => {
                    let mut row: Vec<u16> = (0..n).map(|_| h(rng.normal(0.0, 2.0))).collect();
                    // Row kinds by index: clean, one NaN, +inf, -inf, both infinities, huge.
                    let specials: &[u16] = match r % 6 {
                        0 => &[],
                        1 => &[0x7e00],
                        2 => &[0x7c00],
                        3 => &[0xfc00],
                        4 => &[0x7c00, 0xfc00],
                        _ => &[0x7bff, 0xfbff, 0x7bff],
                    };
                    for &s in specials {
                        let at = rng.range(0, n as u64 - 1) as usize;
                        row[at] = s;
                    }
                    out.extend(row);
                }
            }
        }
        out
    }
}

/// `n` f32 values around `mean` with spread `std`.
pub fn f32s(rng: &mut Rng, n: usize, mean: f64, std: f64) -> Vec<f32> {
    (0..n).map(|_| rng.normal(mean, std) as f32).collect()
}
