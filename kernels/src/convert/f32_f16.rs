//! `cast_f32_f16`: n float32 values → float16 (round to nearest even, IEEE specials, NaN → the
//! canonical 0x7e00), written as whole groups of four halves (the padding halves are +0).

use super::groups::{self, Costs, Placement, PLACEMENTS};
use crate::case::{bytes, Case};
use crate::error::ParamError;
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::f32_to_f16;
use tessera_isa::rng::Rng;

pub struct CastF32F16;

const NAME: &str = "cast_f32_f16";
const GROUP: u32 = 4;
const V_N: usize = 2;
const V_SPLIT: usize = 3;

const COSTS: Costs = Costs {
    setup: 13,
    tail: |t| if t == 0 { 3 } else { 10 + 3 * t },
};

/// The shape of a compiler call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CastF32F16Params {
    /// Values (at least 1).
    pub n: u32,
    pub placement: Placement,
}

/// Output bytes for `n` values: whole groups of four halves.
pub fn output_bytes(n: u32) -> usize {
    n.div_ceil(GROUP) as usize * 8
}

/// The specification: f32 → f16 per value (RNE, overflow → ±inf, NaN → 0x7e00), then +0 halves
/// up to a multiple of four.
pub fn cast_f32_f16_reference(values: &[u32]) -> Vec<u16> {
    let mut out: Vec<u16> = values
        .iter()
        .map(|&v| f32_to_f16(f32::from_bits(v)))
        .collect();
    out.resize(values.len().div_ceil(4) * 4, 0);
    out
}

fn make_case(name: &str, values: &[u32], placement: Placement) -> Case {
    let n = values.len() as u32;
    Case {
        kernel: NAME.into(),
        name: format!("n={n} {} {name}", placement.describe()),
        buffers: placement.buffers(bytes::from_u32(values), output_bytes(n)),
        vertex: groups::vertex(n, GROUP, placement.fast(), &[]),
        supervisor_csrs: vec![],
    }
}

/// The case of a compiler call (a template: the input holds zeros). Buffers: 0 `in` (n f32,
/// 8-byte aligned), 1 `out` (`ceil(n / 4) * 4` halves, 8-byte aligned, the padding written +0);
/// with [`Placement::Paced`] `in` must be interleaved and the two carry element slots 0 and 1.
/// Errors: n = 0, buffers larger than a tile.
pub fn compiler_case(params: CastF32F16Params) -> Result<Case, ParamError> {
    ParamError::check_at_least_one(NAME, "n", params.n.into())?;
    ParamError::check_fits(NAME, "in", u64::from(params.n) * 4)?;
    Ok(make_case(
        "compiled",
        &vec![0; params.n as usize],
        params.placement,
    ))
}

/// f32 edge values: zeros, infinities, NaNs (quiet, signalling, payloads, negative), the f16
/// overflow boundary (65504, 65519.99, 65520), the normal / subnormal boundary, subnormal
/// results, ties to even at 1 and at 2048, results that underflow to zero, f32 subnormals.
pub const F32_SPECIALS: [u32; 40] = [
    0x0000_0000,
    0x8000_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0x7fa1_2345,
    0xffc1_2345,
    0x7fff_ffff,
    0x477f_e000,
    0x477f_efff,
    0x477f_f000,
    0xc77f_f000,
    0x4780_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x3880_0000,
    0x387f_e000,
    0x387f_f000,
    0x3380_0000,
    0x3300_0000,
    0x3300_0001,
    0x33c0_0000,
    0x3280_0000,
    0xb300_0000,
    0xb300_0001,
    0x0000_0001,
    0x807f_ffff,
    0x3f80_1000,
    0x3f80_3000,
    0x3f80_1001,
    0x4500_1000,
    0x4500_3000,
    0x3f80_0fff,
    0xbf80_1000,
    0x3f80_0000,
    0xbf80_0000,
    0x3eaa_aaab,
    0x4049_0fdb,
];

fn normal_f32(rng: &mut Rng, n: usize, std: f64) -> Vec<u32> {
    (0..n)
        .map(|_| (rng.normal(0.0, std) as f32).to_bits())
        .collect()
}

fn with_specials(rng: &mut Rng, n: usize, std: f64, every: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            if rng.next_u64().is_multiple_of(every) {
                *rng.pick(&F32_SPECIALS)
            } else {
                (rng.normal(0.0, std) as f32).to_bits()
            }
        })
        .collect()
}

/// Every f16 value as f32 (exact), or the f32 at each midpoint between consecutive f16 values
/// plus `nudge` ulps (0: the ties themselves).
fn f16_grid(midpoints: bool, nudge: i32) -> Vec<u32> {
    (0..=u16::MAX)
        .map(|h| {
            let x = tessera_isa::numerics::f16_to_f32(h);
            if !midpoints || !x.is_finite() {
                return x.to_bits();
            }
            let bits = x.to_bits();
            // Half an f16 ulp above x: 2^13 f32 ulps for normals and subnormals alike (the f32
            // exponent of an f16 subnormal is its own, so the f32 spacing is finer).
            let mid = if h & 0x7c00 == 0 {
                // Subnormal f16: the f16 spacing is 2^-24; half of it is 2^-25.
                let half_ulp = f32::from_bits(0x3300_0000);
                (x.abs() + half_ulp).copysign(x).to_bits()
            } else {
                bits + (1 << 12)
            };
            (mid as i32 + nudge) as u32
        })
        .collect()
}

impl Kernel for CastF32F16 {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/cast_f32_f16.S"),
        entry_kind: Worker,
        abi: "vertex: in (f32), out (f16, ceil(n/4)*4 halves, padding +0), n (bit 31 FAST: in \
              interleaved, out in other memory elements -> ld2xst64pace, 1 bundle per 4 values; else \
              3), split[6] (first group of 4, groups); tail n % 4 by worker 5 through 16 bytes of \
              scratch; 8-byte aligned buffers",
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(0xf32f);
        let r = &mut rng;
        let mut cases = Vec::new();
        let sizes = [
            1usize, 2, 3, 4, 5, 6, 7, 8, 9, 11, 23, 24, 25, 27, 48, 49, 50, 51, 100, 1152, 2304,
            2305, 2307, 4304,
        ];
        for (i, &n) in sizes.iter().enumerate() {
            for (j, &p) in PLACEMENTS.iter().enumerate() {
                if n > 64 && (i + j) % 2 == 1 {
                    continue;
                }
                let std = [1.0, 1e-3, 300.0, 3e4, 1e-6][(i + j) % 5];
                let values = if (i + j) % 3 == 0 {
                    with_specials(r, n, std, 4)
                } else {
                    normal_f32(r, n, std)
                };
                cases.push(make_case(&format!("normal({std:e})"), &values, p));
            }
        }
        // Every edge value in every lane position, and mixed with random bits.
        for (j, &p) in PLACEMENTS.iter().enumerate() {
            let mut values = F32_SPECIALS.to_vec();
            values.rotate_left(j);
            values.extend(F32_SPECIALS.iter().rev());
            values.push(F32_SPECIALS[j]);
            cases.push(make_case("edge values", &values, p));
            let bits: Vec<u32> = (0..1000 + j).map(|_| r.next_u32()).collect();
            cases.push(make_case("any bits", &bits, p));
        }
        // Exhaustive over f16: every f16 value, every tie, and one f32 ulp either side of it.
        let grid: [(&str, bool, i32, Placement); 4] = [
            ("every f16 value", false, 0, PLACEMENTS[3]),
            ("every f16 midpoint", true, 0, PLACEMENTS[1]),
            ("midpoints + 1 ulp", true, 1, PLACEMENTS[4]),
            ("midpoints - 1 ulp", true, -1, PLACEMENTS[1]),
        ];
        for (name, midpoints, nudge, p) in grid {
            cases.push(make_case(name, &f16_grid(midpoints, nudge), p));
        }
        // Every f32 exponent with random mantissas and signs.
        let sweep: Vec<u32> = (0..256u32)
            .flat_map(|e| (0..8).map(move |k| (k & 1) << 31 | e << 23))
            .map(|v| v | (r.next_u32() & 0x7f_ffff))
            .collect();
        cases.push(make_case("exponent sweep", &sweep, PLACEMENTS[3]));
        cases.push(make_case("exponent sweep", &sweep, PLACEMENTS[2]));
        // The compiler's template at the headline size.
        for placement in [PLACEMENTS[0], PLACEMENTS[3]] {
            let mut c = compiler_case(CastF32F16Params { n: 2304, placement })
                .expect("2304 elements in a listed placement is a valid cast");
            c.buffers[0].bytes = bytes::from_u32(&normal_f32(r, 2304, 2.0));
            cases.push(c);
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let n = rng.range(1, 5000) as usize;
        let p = *rng.pick(&PLACEMENTS);
        let values: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        make_case(&format!("random seed={seed} any bits"), &values, p)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let values = bytes::to_u32(&case.buffer("in").bytes);
        vec![bytes::from_u16(&cast_f32_f16_reference(&values))]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        groups::case_cycles(COSTS, GROUP, case, V_N, V_SPLIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_rounds_and_pads() {
        // 1 + 2^-11 ties to 1; 1 + 3 * 2^-11 ties up to 1 + 2^-9; 65520 overflows; NaN is canonical.
        let out = cast_f32_f16_reference(&[
            0x3f80_1000,
            0x3f80_3000,
            0x477f_f000,
            0x7f80_0001,
            0x3300_0000,
        ]);
        assert_eq!(out, vec![0x3c00, 0x3c02, 0x7c00, 0x7e00, 0x0000, 0, 0, 0]);
        // 2^-25 + tiny rounds up to the smallest subnormal; 1.5 * 2^-24 ties to 2^-23.
        let out = cast_f32_f16_reference(&[0x3300_0001, 0x33c0_0000, 0x8000_0000, 0x387f_f000]);
        assert_eq!(out, vec![0x0001, 0x0002, 0x8000, 0x0400]);
    }

    #[test]
    fn midpoints_are_ties() {
        // The midpoint grid rounds to even: for every finite f16 value h, the midpoint above it
        // rounds to whichever of h and its successor is even.
        let mids = f16_grid(true, 0);
        for h in [
            0x0000u16, 0x0001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bfe, 0x8001,
        ] {
            let want = if h & 1 == 0 { h } else { h + 1 };
            assert_eq!(
                f32_to_f16(f32::from_bits(mids[h as usize])),
                want,
                "{h:#06x}"
            );
        }
        assert!(compiler_case(CastF32F16Params {
            n: 0,
            placement: PLACEMENTS[0]
        })
        .is_err());
    }
}
