//! Conversions between f16, f32 and FP8 (aux), with the FP8 settings taken from the worker's CSRs.
//!
//! FP8 settings \[C\] isa.md §3.1, §4: format = `$FP_NFMT.ARF_FMT` (bit 1; 1 = F143, 0 = F152),
//! scale = `$FP_SCL` (6-bit two's complement, values are multiplied by 2^scale both ways),
//! overflow to NaN when `$FP_CTL.NANOO` (bit 20) is set, else saturation.
//!
//! Project assumptions \[A\]:
//! * `f16v2tof8` puts its two bytes in bits \[15:0\] (element 0 in byte 0) and **zeroes** the
//!   upper 16 bits of the destination (isa.md §9 item 1 leaves this open).
//! * `f16v8tof8`: quad lane order is register order, f16 lane 0 of each register first; byte i
//!   of the destination pair (lane 0 = least significant) is half i.
//! * `f16v4sufromui` / `f32v2sufromui` convert lane by lane with the rule of
//!   [`crate::numerics::random`], lane 0 the least significant.
//! * Stochastic rounding and the other `$FP_CTL.RND` modes are not modelled: every narrowing
//!   conversion is round-to-nearest-even (writes that enable them trap, see `csr_access`).

use super::regs::{halves, join_halves, join_halves4, read_quad, Pending};
use super::state::ContextState;
use crate::csr::{field, index};
use crate::inst::Inst;
use crate::numerics::random::{f16_sufromui, f32_sufromui};
use crate::numerics::{
    f16_to_f32, f16_to_fp8, f32_to_f16, fp8_to_f16, scale_from_field, Fp8Format,
};

/// The worker's ARF FP8 conversion settings.
#[derive(Clone, Copy)]
struct Fp8Settings {
    format: Fp8Format,
    scale: i32,
    nanoo: bool,
}

fn fp8_settings(ctx: &ContextState) -> Fp8Settings {
    let nfmt = ctx.ucsr[index::FP_NFMT as usize];
    Fp8Settings {
        format: Fp8Format::from_format_bit((nfmt & field::FP_NFMT_ARF_FMT) >> 1),
        scale: scale_from_field(ctx.ucsr[index::FP_SCL as usize]),
        nanoo: ctx.ucsr[index::FP_CTL as usize] & field::FP_CTL_NANOO != 0,
    }
}

impl Fp8Settings {
    fn to_fp8(self, h: u16) -> u32 {
        f16_to_fp8(h, self.format, self.scale, self.nanoo) as u32
    }

    fn to_f16(self, code: u32) -> u16 {
        fp8_to_f16(code as u8, self.format, self.scale)
    }
}

/// `f16v2tof32 $aD:D+1, $aS`: lane 0 to `$aD`, lane 1 to `$aD+1` (exact).
pub(super) fn f16v2tof32(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let h = halves(ctx.read_a(inst.reg(1)));
    out.write_a(inst.reg(0), f16_to_f32(h[0]).to_bits());
    out.write_a(inst.reg(0) + 1, f16_to_f32(h[1]).to_bits());
}

/// `f16tof32 $aD, $aS`: the low half (exact).
pub(super) fn f16tof32(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    out.write_a(
        inst.reg(0),
        f16_to_f32(ctx.read_a(inst.reg(1)) as u16).to_bits(),
    );
}

/// `f32v2tof16 $aD, $aS:S+1`: `$aS` to lane 0, `$aS+1` to lane 1 (RNE).
pub(super) fn f32v2tof16(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let s = inst.reg(1);
    let h = [
        f32_to_f16(f32::from_bits(ctx.read_a(s))),
        f32_to_f16(f32::from_bits(ctx.read_a(s + 1))),
    ];
    out.write_a(inst.reg(0), join_halves(h));
}

/// `f32tof16 $aD, $aS`: RNE, broadcast into both halves.
pub(super) fn f32tof16(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let h = f32_to_f16(f32::from_bits(ctx.read_a(inst.reg(1))));
    out.write_a(inst.reg(0), join_halves([h, h]));
}

/// `f32v4tof16 $aD:D+1, $aS:S+3`: register i of the quad becomes f16 lane i of the pair.
pub(super) fn f32v4tof16(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let q = read_quad(ctx, inst.reg(1)).map(|s| f32_to_f16(f32::from_bits(s)));
    out.write_a64(inst.reg(0), join_halves4(q));
}

/// `f16v2tof8 $aD, $aS`: two FP8 bytes in bits \[15:0\]; bits \[31:16\] zero \[A\].
pub(super) fn f16v2tof8(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let s = fp8_settings(ctx);
    let h = halves(ctx.read_a(inst.reg(1)));
    out.write_a(inst.reg(0), s.to_fp8(h[0]) | s.to_fp8(h[1]) << 8);
}

/// `f16v8tof8 $aD:D+1, $aS:S+3`: eight halves to eight bytes, half i to byte i.
pub(super) fn f16v8tof8(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let s = fp8_settings(ctx);
    let q = read_quad(ctx, inst.reg(1));
    let mut bytes = 0u64;
    for (k, &reg) in q.iter().enumerate() {
        let h = halves(reg);
        bytes |= ((s.to_fp8(h[0]) | s.to_fp8(h[1]) << 8) as u64) << (16 * k);
    }
    out.write_a64(inst.reg(0), bytes);
}

/// `f8v2tof16 $aD, $aS`: bytes 0 and 1 of `$aS` to f16 lanes 0 and 1.
pub(super) fn f8v2tof16(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let s = fp8_settings(ctx);
    let v = ctx.read_a(inst.reg(1));
    out.write_a(
        inst.reg(0),
        join_halves([s.to_f16(v & 0xff), s.to_f16((v >> 8) & 0xff)]),
    );
}

/// `f8v4tof16 $aD:D+1, $aS`: byte i of `$aS` to f16 lane i of the pair.
pub(super) fn f8v4tof16(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let s = fp8_settings(ctx);
    let v = ctx.read_a(inst.reg(1));
    let h = [0, 1, 2, 3].map(|i| s.to_f16((v >> (8 * i)) & 0xff));
    out.write_a64(inst.reg(0), join_halves4(h));
}

/// `f16v4sufromui` on a pair: four u16 lanes to four f16 lanes.
pub(super) fn f16v4sufromui(x: u64) -> u64 {
    let mut out = 0;
    for lane in 0..4 {
        out |= (f16_sufromui((x >> (16 * lane)) as u16) as u64) << (16 * lane);
    }
    out
}

/// `f32v2sufromui` on a pair: two u32 lanes to two f32 lanes.
pub(super) fn f32v2sufromui(x: u64) -> u64 {
    let lo = f32_sufromui(x as u32).to_bits() as u64;
    let hi = f32_sufromui((x >> 32) as u32).to_bits() as u64;
    lo | hi << 32
}

#[cfg(test)]
mod tests {
    use crate::csr::{field, index};
    use crate::inst::Opcode::*;
    use crate::numerics::{self as nx, scale_to_field, Fp8Format};
    use crate::semantics::test_env::*;
    use crate::semantics::ContextState;

    /// A worker with the FP8 CSRs set.
    fn fp8_worker(format: Fp8Format, scale: i32, nanoo: bool) -> ContextState {
        let mut ctx = worker();
        ctx.ucsr[index::FP_NFMT as usize] = format.format_bit() << 1;
        ctx.ucsr[index::FP_SCL as usize] = scale_to_field(scale);
        ctx.ucsr[index::FP_CTL as usize] = if nanoo { field::FP_CTL_NANOO } else { 0 };
        ctx
    }

    const HALVES: [f32; 8] = [1.0, -8.5, 0.001, 300.0, -1000.0, 3.0e-5, 57344.0, 0.0];

    #[test]
    fn f16_to_fp8_uses_the_csr_settings() {
        let mut env = TestEnv::new();
        for format in [Fp8Format::F143, Fp8Format::F152] {
            for scale in [-5, 0, 3] {
                for nanoo in [false, true] {
                    let mut ctx = fp8_worker(format, scale, nanoo);
                    let h = HALVES.map(nx::f32_to_f16);
                    let fp8 = |x: u16| nx::f16_to_fp8(x, format, scale, nanoo) as u32;
                    ctx.a[0] = 0xdead_beef;
                    ctx.a[1] = h[0] as u32 | (h[1] as u32) << 16;
                    ok(&mut ctx, &mut env, one(F16v2tof8, &[0, 1]));
                    assert_eq!(
                        ctx.a[0],
                        fp8(h[0]) | fp8(h[1]) << 8,
                        "upper 16 bits are zeroed"
                    );
                    for k in 0..4 {
                        ctx.a[4 + k] = h[2 * k] as u32 | (h[2 * k + 1] as u32) << 16;
                    }
                    ok(&mut ctx, &mut env, one(F16v8tof8, &[2, 4]));
                    let expected = (0..8).fold(0u64, |acc, k| acc | (fp8(h[k]) as u64) << (8 * k));
                    assert_eq!(
                        ctx.read_a64(2),
                        expected,
                        "{format:?} scale {scale} nanoo {nanoo}"
                    );
                }
            }
        }
        // NANOO chooses NaN or saturation on overflow (F143 max is 240).
        let big = nx::f32_to_f16(1000.0) as u32;
        let mut ctx = fp8_worker(Fp8Format::F143, 0, true);
        ctx.a[1] = big;
        ok(&mut ctx, &mut env, one(F16v2tof8, &[0, 1]));
        assert_eq!(ctx.a[0], 0x0080, "NaN in byte 0, +0 in byte 1");
        let mut ctx = fp8_worker(Fp8Format::F143, 0, false);
        ctx.a[1] = big;
        ok(&mut ctx, &mut env, one(F16v2tof8, &[0, 1]));
        assert_eq!(ctx.a[0], 0x7f);
    }

    #[test]
    fn fp8_to_f16_uses_the_csr_settings() {
        let mut env = TestEnv::new();
        for format in [Fp8Format::F143, Fp8Format::F152] {
            for scale in [-4, 0, 2] {
                let mut ctx = fp8_worker(format, scale, false);
                let f16 = |code: u32| nx::fp8_to_f16(code as u8, format, scale) as u32;
                ctx.a[1] = 0xa5c3_3c80; // bytes 0x80 (NaN), 0x3c, 0xc3, 0xa5
                ok(&mut ctx, &mut env, one(F8v2tof16, &[0, 1]));
                assert_eq!(
                    ctx.a[0],
                    f16(0x80) | f16(0x3c) << 16,
                    "upper bytes are ignored"
                );
                ok(&mut ctx, &mut env, one(F8v4tof16, &[2, 1]));
                let expected = [0x80, 0x3c, 0xc3, 0xa5]
                    .iter()
                    .enumerate()
                    .fold(0u64, |acc, (k, &c)| acc | (f16(c) as u64) << (16 * k));
                assert_eq!(ctx.read_a64(2), expected);
            }
        }
        // Round trip with the scale negated, as software does.
        let mut ctx = fp8_worker(Fp8Format::F143, -7, true);
        ctx.a[1] = nx::f32_to_f16(128.0) as u32;
        ok(&mut ctx, &mut env, one(F16v2tof8, &[0, 1]));
        assert_eq!(ctx.a[0] & 0xff, 0x40, "128 x 2^-7 = 1.0");
        ctx.ucsr[index::FP_SCL as usize] = scale_to_field(7);
        ok(&mut ctx, &mut env, one(F8v2tof16, &[2, 0]));
        assert_eq!(ctx.a[2] & 0xffff, nx::f32_to_f16(128.0) as u32);
    }

    #[test]
    fn f16_f32_conversions() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let h = |x: f32| nx::f32_to_f16(x) as u32;
        ctx.a[1] = h(1.5) | h(-2.0) << 16;
        ok(&mut ctx, &mut env, one(F16v2tof32, &[2, 1]));
        assert_eq!(
            (f32::from_bits(ctx.a[2]), f32::from_bits(ctx.a[3])),
            (1.5, -2.0)
        );
        ok(&mut ctx, &mut env, one(F16tof32, &[4, 1]));
        assert_eq!(f32::from_bits(ctx.a[4]), 1.5);
        ctx.a[5] = (1.0f32 + 1.0 / 4096.0).to_bits(); // a tie: rounds to even 1.0
        ok(&mut ctx, &mut env, one(F32tof16, &[6, 5]));
        assert_eq!(
            ctx.a[6],
            h(1.0) | h(1.0) << 16,
            "broadcast into both halves"
        );
        ctx.a[2] = 3.0f32.to_bits();
        ctx.a[3] = 1.0e6f32.to_bits();
        ok(&mut ctx, &mut env, one(F32v2tof16, &[6, 2]));
        assert_eq!(ctx.a[6], h(3.0) | 0x7c00 << 16);
        for (k, x) in [0.5f32, -0.25, 7.0, 1.0e-8].iter().enumerate() {
            ctx.a[8 + k] = x.to_bits();
        }
        ok(&mut ctx, &mut env, one(F32v4tof16, &[0, 8]));
        assert_eq!(
            ctx.read_a64(0),
            h(0.5) as u64
                | (h(-0.25) as u64) << 16
                | (h(7.0) as u64) << 32
                | (h(1.0e-8) as u64) << 48
        );
    }

    #[test]
    fn sufromui_and_class_through_the_instructions() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.write_a64(2, 0xffff_8000_7fff_0000);
        ok(&mut ctx, &mut env, one(F16v4sufromui, &[4, 2]));
        let got = ctx.read_a64(4);
        let lanes: Vec<f32> = (0..4)
            .map(|i| nx::f16_to_f32((got >> (16 * i)) as u16))
            .collect();
        let tiny = 2f32.powi(-17);
        assert_eq!(
            lanes,
            [nx::f16_to_f32(nx::f32_to_f16(-0.5)), -tiny, tiny, 0.5]
        );
        ctx.write_a64(2, 0x8000_0000_7fff_ffff);
        ok(&mut ctx, &mut env, one(F32v2sufromui, &[6, 2]));
        assert_eq!(f32::from_bits(ctx.a[6]), -(2f32.powi(-33)));
        assert_eq!(f32::from_bits(ctx.a[7]), 2f32.powi(-33));
        for (bits, class) in [(0x7fc0_0000u32, 2u32), (0xff80_0000, 3), (0x3f80_0000, 9)] {
            ctx.a[1] = bits;
            ok(&mut ctx, &mut env, one(F32class, &[0, 1]));
            assert_eq!(ctx.a[0], class, "{bits:#x}");
        }
    }
}
