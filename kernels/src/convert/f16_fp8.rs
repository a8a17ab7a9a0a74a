//! `cast_f16_fp8`: n float16 values → FP8 codes in flat (row-major) order under the FP8 CSRs
//! (format, scale, NANOO), written as whole 32-bit words (the padding codes are 0).

use super::groups::{self, Costs, Placement, PLACEMENTS};
use crate::case::{bytes, Case};
use crate::elementwise::common::{fp8_settings, halves_with_specials, normal_halves, Fp8Out};
use crate::error::ParamError;
use crate::{kernel_consts, Kernel};
use tessera_isa::numerics::Fp8Format;
use tessera_isa::rng::Rng;

pub struct CastF16Fp8;

const NAME: &str = "cast_f16_fp8";
const GROUP: u32 = 8;
const V_N: usize = 2;
const V_NFMT: usize = 3;
const V_SCL: usize = 4;
const V_SPLIT: usize = 5;

/// Worker 5's tail from `.Ltail_rest` for t = n % 8 halves.
fn tail_bundles(t: u64) -> u64 {
    if t == 0 {
        return 3;
    }
    let words = t / 2;
    2 + 4 + if words > 0 { 1 + 3 * words } else { 0 } + 2 + if t % 2 == 1 { 4 } else { 0 } + 4 + 2
}

const COSTS: Costs = Costs {
    setup: 15,
    tail: tail_bundles,
};

/// The shape and settings of a compiler call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CastF16Fp8Params {
    /// Values (at least 1).
    pub n: u32,
    /// Format, tensor scale (codes = x · 2^-scale) and NANOO (`$FP_ICTL`, set by the supervisor).
    pub fp8: Fp8Out,
    pub placement: Placement,
}

/// Output bytes for `n` values: whole 32-bit words.
pub fn output_bytes(n: u32) -> usize {
    n.div_ceil(4) as usize * 4
}

/// The specification: one FP8 code per value (`numerics::f16_to_fp8` with these settings), then
/// zero bytes up to a multiple of four.
pub fn cast_f16_fp8_reference(values: &[u16], fp8: Fp8Out) -> Vec<u8> {
    let mut out: Vec<u8> = values.iter().map(|&h| fp8.encode(h)).collect();
    out.resize(values.len().div_ceil(4) * 4, 0);
    out
}

fn make_case(name: &str, values: &[u16], fp8: Fp8Out, placement: Placement) -> Case {
    let n = values.len() as u32;
    Case {
        kernel: NAME.into(),
        name: format!("n={n} {} {} {name}", placement.describe(), fp8.describe()),
        buffers: placement.buffers(bytes::from_u16(values), output_bytes(n)),
        vertex: groups::vertex(
            n,
            GROUP,
            placement.fast(),
            &[fp8.nfmt_word(), fp8.scl_word()],
        ),
        supervisor_csrs: fp8.csrs(),
    }
}

/// The case of a compiler call (a template: the input holds zeros). Buffers: 0 `in` (n halves,
/// 8-byte aligned), 1 `out` (`ceil(n / 4) * 4` bytes, 8-byte aligned, the padding written 0);
/// with [`Placement::Paced`] `in` must be interleaved and the two carry element slots 0 and 1.
/// The supervisor must set `$FP_ICTL` as `Case::supervisor_csrs` says (NANOO). Errors: n = 0, a
/// scale outside the 6-bit `$FP_SCL` range (−31 ..= 32 as a tensor scale), buffers larger than
/// a tile.
pub fn compiler_case(params: CastF16Fp8Params) -> Result<Case, ParamError> {
    ParamError::check_at_least_one(NAME, "n", params.n.into())?;
    let scale = params.fp8.scale;
    if !(-31..=32).contains(&scale) {
        return Err(ParamError::Length {
            kernel: NAME,
            what: format!("the FP8 tensor scale {scale} (its negation fills the 6-bit $FP_SCL)"),
            value: scale.unsigned_abs().into(),
            min: 0,
            max: 32,
        });
    }
    ParamError::check_fits(NAME, "in", u64::from(params.n) * 2)?;
    Ok(make_case(
        "compiled",
        &vec![0; params.n as usize],
        params.fp8,
        params.placement,
    ))
}

impl Kernel for CastF16Fp8 {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/cast_f16_fp8.S"),
        entry_kind: Worker,
        abi: "vertex: in (f16), out (FP8, ceil(n/4)*4 bytes, padding 0), n (bit 31 FAST: in \
              interleaved, out in other memory elements -> ld2xst64pace, 1 bundle per 8 values; else \
              3), $FP_NFMT value, $FP_SCL value (-scale), split[6] (first group of 8, groups); tail \
              n % 8 by worker 5 through 16 bytes of scratch; NANOO from $FP_ICTL; 8-byte aligned",
    }

    fn cases(&self) -> Vec<Case> {
        let mut rng = Rng::new(0xf8f8);
        let r = &mut rng;
        let mut cases = Vec::new();
        // Every f16 bit pattern, both formats, scales 0, ±4, 7 and the extremes, NANOO on and off.
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let exhaustive = [
            (Fp8Format::F143, 0, true, PLACEMENTS[3]),
            (Fp8Format::F143, 0, false, PLACEMENTS[0]),
            (Fp8Format::F143, -4, true, PLACEMENTS[1]),
            (Fp8Format::F143, -4, false, PLACEMENTS[4]),
            (Fp8Format::F143, 4, true, PLACEMENTS[2]),
            (Fp8Format::F143, 7, false, PLACEMENTS[3]),
            (Fp8Format::F143, 32, true, PLACEMENTS[3]),
            (Fp8Format::F152, 0, true, PLACEMENTS[0]),
            (Fp8Format::F152, 0, false, PLACEMENTS[3]),
            (Fp8Format::F152, -4, true, PLACEMENTS[4]),
            (Fp8Format::F152, -4, false, PLACEMENTS[1]),
            (Fp8Format::F152, 7, true, PLACEMENTS[3]),
            (Fp8Format::F152, -31, false, PLACEMENTS[2]),
            (Fp8Format::F152, 15, true, PLACEMENTS[0]),
        ];
        for (format, scale, nanoo, p) in exhaustive {
            cases.push(make_case(
                "every f16",
                &all,
                Fp8Out::new(format, scale, nanoo),
                p,
            ));
        }
        // Sizes (tails 1..7 and none, idle workers, the model's widths) x placements x settings.
        let settings = fp8_settings();
        let sizes = [
            1usize, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 23, 47, 48, 49, 55, 96, 1152, 2152,
            2304, 2311, 4304,
        ];
        for (i, &n) in sizes.iter().enumerate() {
            for (j, &p) in PLACEMENTS.iter().enumerate() {
                if n > 64 && (i + j) % 2 == 1 {
                    continue;
                }
                let fp8 = settings[(i + 3 * j) % settings.len()];
                let std = [1.0, 30.0, 0.05, 500.0][(i + j) % 4];
                let values = if (i + j) % 3 == 0 {
                    halves_with_specials(r, n, std, 5)
                } else {
                    normal_halves(r, n, 0.0, std)
                };
                cases.push(make_case(&format!("normal({std})"), &values, fp8, p));
            }
        }
        // The compiler's template at the headline size.
        for placement in [PLACEMENTS[0], PLACEMENTS[3]] {
            let fp8 = Fp8Out::new(Fp8Format::F143, -4, false);
            let mut c = compiler_case(CastF16Fp8Params {
                n: 2304,
                fp8,
                placement,
            })
            .expect("2304 elements in a listed placement is a valid cast");
            c.buffers[0].bytes = bytes::from_u16(&normal_halves(r, 2304, 0.0, 0.5));
            cases.push(c);
        }
        cases
    }

    fn random_case(&self, seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let n = rng.range(1, 6000) as usize;
        let p = *rng.pick(&PLACEMENTS);
        let format = *rng.pick(&[Fp8Format::F143, Fp8Format::F152]);
        let scale = rng.range(0, 63) as i32 - 31;
        let fp8 = Fp8Out::new(format, scale, rng.next_u32().is_multiple_of(2));
        let values: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
        make_case(&format!("random seed={seed} any bits"), &values, fp8, p)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let values = bytes::to_u16(&case.buffer("in").bytes);
        let fp8 = Fp8Out::from_case(case, V_NFMT, V_SCL);
        vec![cast_f16_fp8_reference(&values, fp8)]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        groups::case_cycles(COSTS, GROUP, case, V_N, V_SPLIT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_encodes_and_pads() {
        // 1.0 in F143 at scale 0 is 0x40; at tensor scale -4 it is 16.0 = 0x60; padding is 0.
        let f143 = Fp8Out::new(Fp8Format::F143, 0, true);
        assert_eq!(cast_f16_fp8_reference(&[0x3c00], f143), vec![0x40, 0, 0, 0]);
        let scaled = Fp8Out::new(Fp8Format::F143, -4, true);
        assert_eq!(cast_f16_fp8_reference(&[0x3c00; 5], scaled)[..5], [0x60; 5]);
        assert_eq!(cast_f16_fp8_reference(&[0x3c00; 5], scaled).len(), 8);
        // inf and NaN are 0x80; overflow saturates without NANOO.
        let sat = Fp8Out::new(Fp8Format::F143, 0, false);
        let out = cast_f16_fp8_reference(&[0x7c00, 0x7e00, 0x7bff, 0xfbff], sat);
        assert_eq!(out, vec![0x80, 0x80, 0x7f, 0xff]);
    }

    #[test]
    fn bad_params_are_refused() {
        let fp8 = Fp8Out::new(Fp8Format::F143, 0, true);
        let p = |n, fp8| CastF16Fp8Params {
            n,
            fp8,
            placement: PLACEMENTS[0],
        };
        assert_eq!(compiler_case(p(0, fp8)).unwrap_err().id(), "E-KERNEL-001");
        let far = Fp8Out::new(Fp8Format::F143, 40, true);
        assert_eq!(compiler_case(p(8, far)).unwrap_err().id(), "E-KERNEL-003");
        assert!(compiler_case(p(8, fp8)).is_ok());
    }
}
