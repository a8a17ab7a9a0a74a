//! Accumulator instructions (aux, worker `$AACC`, f32): `f32v2axpy`, `f16v4mix`, `f32v4acc`,
//! `f16v4acc`, `f16v8acc`, their square and absolute-value forms (`*sqacc`, `*absacc`), the
//! multiply-accumulates `f32mac`, `f32v2mac`, `f16v2cmac`, `f16v4cmac`, `f16v4gacc`, and the
//! `gina` read-and-push queue.
//!
//! All arithmetic is f32 round-to-nearest-even through [`crate::numerics`]. Project assumptions \[A\]:
//! * `f32v2axpy $aD, x, y`: `$aD` = (AACC\[0\], AACC\[2\]) as they were; then
//!   AACC\[0\] = (TAS × x0) + y0 and AACC\[2\] = (TAS × x1) + y1 with two roundings (multiply, then
//!   add), TAS being the f32 in `$TAS`.
//! * `f32v4acc q`: AACC\[0\] += q0, AACC\[2\] += q1, AACC\[4\] += q2, AACC\[6\] += q3.
//! * `f16v8acc q` (8 halves, h\[j\] = half j of the quad): AACC\[2j\] += h\[j\] for j in 0..8, each
//!   widened exactly: eight sums, one a half \[I\]. POPLIBS `poplin/codelets/asm/ReduceAdd.S`
//!   (`ReduceAdd<float,half>`, production code for convolution reductions) sums 8 columns of
//!   halves with one `f16v8acc` a row and stores "the independent sums of 8 columns" with four
//!   `f32v2gina`, which read AACC\[0, 2\], \[4, 6\], \[8, 10\], \[12, 14\] in turn
//!   (`scripts/poplibs_calibration.py` runs it exact). Until 2026-12-07 the model added the
//!   halves in pairs into AACC\[0\] .. \[6\], which that codelet contradicts.
//! * `f16v4acc x`: AACC\[2i\] += x\[i\] widened, for the four halves.
//! * `f32v4sqacc`, `f16v8sqacc`, `f32v4absacc`, `f16v8absacc`, `f16v4absacc` (ASM-DOC: "accumulation
//!   of squares" / "of absolute values" to single precision \[C\]) use the same entries as
//!   `f32v4acc`, `f16v8acc` and `f16v4acc` and add x × x (rounded to f32; exact for f16 inputs) or
//!   |x| in place of x.
//! * `f16v4gacc $aD` ("read 4 internal accumulator values as a half-precision vector" \[C\])
//!   reads AACC\[0\], \[2\], \[4\], \[6\] (the entries `f16v4acc` adds to), each f32 → f16
//!   RNE, and leaves the accumulators as they are.
//! * `f16v4mix $aD, x, y`: `$aD` = the four halves of (AACC\[0\], \[2\], \[4\], \[6\]) as
//!   they were (each f32 → f16 RNE); then AACC\[2i\] = (a × x\[i\]) + (b × y\[i\]) with a, b
//!   the halves of `$TAS`, each product rounded to f32, then the sum. That `a` is `$TAS`
//!   bits \[15:0\] and multiplies the first source \[I\]: PopLibs' `ScaledAdd2DXminusaXPlusbY`
//!   packs {−A, B} with `sort4x16lo` for −A·x + B·y. It also adds x with `f16v4acc` between
//!   two `f16v4mix`, so both use the same four accumulators \[I\], and `f16v4mix` replaces
//!   their contents rather than adding to them \[I\] (its result is x − A·x + B·y).
//! * `f32mac a, b`: AACC\[0\] += a × b; `f32v2mac`: AACC\[0\] += a0 × b0, AACC\[2\] += a1 × b1;
//!   each product rounded to f32, then the sum. `f16v2cmac a, b`: AACC\[0\] += (a0b0 + a1b1);
//!   `f16v4cmac`: AACC\[0\] += (a0b0 + a1b1), AACC\[2\] += (a2b2 + a3b3); the f16 products
//!   are exact in f32, their lateral sum is rounded to f32, then added to the accumulator.
//!   The entries are \[I\]: PopLibs reads each result with `f32v2gina … , 0` and adds the two
//!   halves (`conv_hzmac_*.S`, `SparseDenseMatMulGradW*`), and reads only the first for
//!   `f16v2cmac` and `f32mac`.
//! * `f32v2gina $aD, $aS, zimm12` (the shift pattern is \[C\] from TESS): zimm bit 0 = e selects
//!   even (0) or odd (1) entries, every other bit must be 0 (`BadFlags`). `$aD` = (AACC\[e\],
//!   AACC\[2+e\]); then for i in 4, 8, 12: AACC\[i−4+e\] = AACC\[i+e\], AACC\[i−2+e\] = AACC\[i+2+e\];
//!   then AACC\[12+e\] = in0, AACC\[14+e\] = in1. `f16v2gina` is the same with two f16 in (widened)
//!   and two f16 out (RNE), lane 0 first. Only the first AMP set's 16 entries take part.

use super::regs::{
    halves, halves4, join_halves, join_halves4, join_singles, read_quad, singles, Pending,
};
use super::state::ContextState;
use super::Trap;
use crate::csr::index;
use crate::inst::Inst;
use crate::numerics::{f16_to_f32, f32_add, f32_mul, f32_to_f16};

/// `f32v2axpy $aD:D+1, $aX:X+1, $aY:Y+1`.
pub(super) fn f32v2axpy(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let tas = f32::from_bits(ctx.ucsr[index::TAS as usize]);
    let x = singles(ctx.read_a64(inst.reg(1)));
    let y = singles(ctx.read_a64(inst.reg(2)));
    let acc = out.aacc(ctx);
    let previous = [acc[0], acc[2]];
    acc[0] = f32_add(f32_mul(tas, x[0]), y[0]);
    acc[2] = f32_add(f32_mul(tas, x[1]), y[1]);
    out.write_a64(inst.reg(0), join_singles(previous));
}

/// `f16v4mix $aD:D+1, $aX:X+1, $aY:Y+1`.
pub(super) fn f16v4mix(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let [a, b] = halves(ctx.ucsr[index::TAS as usize]).map(f16_to_f32);
    let x = halves4(ctx.read_a64(inst.reg(1)));
    let y = halves4(ctx.read_a64(inst.reg(2)));
    let acc = out.aacc(ctx);
    let mut previous = [0u16; 4];
    for i in 0..4 {
        previous[i] = f32_to_f16(acc[2 * i]);
        let ax = f32_mul(a, f16_to_f32(x[i]));
        let by = f32_mul(b, f16_to_f32(y[i]));
        acc[2 * i] = f32_add(ax, by);
    }
    out.write_a64(inst.reg(0), join_halves4(previous));
}

/// `f16v4acc $aS:S+1`.
pub(super) fn f16v4acc(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let x = halves4(ctx.read_a64(inst.reg(0)));
    let acc = out.aacc(ctx);
    for (i, &h) in x.iter().enumerate() {
        acc[2 * i] = f32_add(acc[2 * i], f16_to_f32(h));
    }
}

/// `f32mac $aA, $aB`.
pub(super) fn f32mac(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let a = f32::from_bits(ctx.read_a(inst.reg(0)));
    let b = f32::from_bits(ctx.read_a(inst.reg(1)));
    let acc = out.aacc(ctx);
    acc[0] = f32_add(acc[0], f32_mul(a, b));
}

/// `f32v2mac $aA:A+1, $aB:B+1`.
pub(super) fn f32v2mac(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let a = singles(ctx.read_a64(inst.reg(0)));
    let b = singles(ctx.read_a64(inst.reg(1)));
    let acc = out.aacc(ctx);
    for i in 0..2 {
        acc[2 * i] = f32_add(acc[2 * i], f32_mul(a[i], b[i]));
    }
}

/// The lateral sum of two exact f16 products, rounded once to f32.
fn lateral(a: [u16; 2], b: [u16; 2]) -> f32 {
    let p0 = f32_mul(f16_to_f32(a[0]), f16_to_f32(b[0]));
    let p1 = f32_mul(f16_to_f32(a[1]), f16_to_f32(b[1]));
    f32_add(p0, p1)
}

/// `f16v2cmac $aA, $aB`.
pub(super) fn f16v2cmac(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let a = halves(ctx.read_a(inst.reg(0)));
    let b = halves(ctx.read_a(inst.reg(1)));
    let acc = out.aacc(ctx);
    acc[0] = f32_add(acc[0], lateral(a, b));
}

/// `f16v4cmac $aA:A+1, $aB:B+1`.
pub(super) fn f16v4cmac(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let a = halves4(ctx.read_a64(inst.reg(0)));
    let b = halves4(ctx.read_a64(inst.reg(1)));
    let acc = out.aacc(ctx);
    acc[0] = f32_add(acc[0], lateral([a[0], a[1]], [b[0], b[1]]));
    acc[2] = f32_add(acc[2], lateral([a[2], a[3]], [b[2], b[3]]));
}

/// `f32v4acc $aS:S+3`.
pub(super) fn f32v4acc(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let q = read_quad(ctx, inst.reg(0));
    let acc = out.aacc(ctx);
    for (i, &s) in q.iter().enumerate() {
        acc[2 * i] = f32_add(acc[2 * i], f32::from_bits(s));
    }
}

/// The eight halves of a quad, in order.
fn halves8(q: [u32; 4]) -> [u16; 8] {
    std::array::from_fn(|j| halves(q[j / 2])[j % 2])
}

/// `f16v8acc $aS:S+3`: AACC\[2j\] += h\[j\].
pub(super) fn f16v8acc(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let h = halves8(read_quad(ctx, inst.reg(0)));
    let acc = out.aacc(ctx);
    for (j, &x) in h.iter().enumerate() {
        acc[2 * j] = f32_add(acc[2 * j], f16_to_f32(x));
    }
}

/// What an accumulate-into-even-entries instruction adds for each lane value.
#[derive(Clone, Copy)]
pub(super) enum Term {
    /// x × x, rounded to f32.
    Square,
    /// |x|.
    Abs,
}

impl Term {
    fn of(self, x: f32) -> f32 {
        match self {
            Term::Square => f32_mul(x, x),
            Term::Abs => x.abs(),
        }
    }
}

/// `f32v4sqacc` / `f32v4absacc $aS:S+3`: AACC\[2i\] += term(q\[i\]).
pub(super) fn f32v4termacc(inst: &Inst, ctx: &ContextState, out: &mut Pending, term: Term) {
    let q = read_quad(ctx, inst.reg(0));
    let acc = out.aacc(ctx);
    for (i, &s) in q.iter().enumerate() {
        acc[2 * i] = f32_add(acc[2 * i], term.of(f32::from_bits(s)));
    }
}

/// `f16v8sqacc` / `f16v8absacc $aS:S+3`: AACC\[2j\] += term(h\[j\]).
pub(super) fn f16v8termacc(inst: &Inst, ctx: &ContextState, out: &mut Pending, term: Term) {
    let h = halves8(read_quad(ctx, inst.reg(0)));
    let acc = out.aacc(ctx);
    for (j, &x) in h.iter().enumerate() {
        acc[2 * j] = f32_add(acc[2 * j], term.of(f16_to_f32(x)));
    }
}

/// `f16v4absacc $aS:S+1`: AACC\[2i\] += |x\[i\]|.
pub(super) fn f16v4absacc(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let x = halves4(ctx.read_a64(inst.reg(0)));
    let acc = out.aacc(ctx);
    for (i, &h) in x.iter().enumerate() {
        acc[2 * i] = f32_add(acc[2 * i], Term::Abs.of(f16_to_f32(h)));
    }
}

/// `f16v4gacc $aD:D+1`.
pub(super) fn f16v4gacc(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let acc = &ctx.aacc;
    let h = [0, 2, 4, 6].map(|i| f32_to_f16(acc[i]));
    out.write_a64(inst.reg(0), join_halves4(h));
}

/// The shared `gina` step: returns the two entries read and pushes `input`.
fn gina(
    inst: &Inst,
    ctx: &ContextState,
    out: &mut Pending,
    input: [f32; 2],
) -> Result<[f32; 2], Trap> {
    let flags = inst.imm(2);
    if flags & !1 != 0 {
        return Err(Trap::bad_flags(
            inst,
            flags,
            "only bit 0 (odd entries) is defined; the other bits must be 0",
        ));
    }
    let e = (flags & 1) as usize;
    let acc = out.aacc(ctx);
    let read = [acc[e], acc[2 + e]];
    for i in [4, 8, 12] {
        acc[i - 4 + e] = acc[i + e];
        acc[i - 2 + e] = acc[i + 2 + e];
    }
    acc[12 + e] = input[0];
    acc[14 + e] = input[1];
    Ok(read)
}

/// `f32v2gina $aD:D+1, $aS:S+1, zimm12`.
pub(super) fn f32v2gina(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let input = singles(ctx.read_a64(inst.reg(1)));
    let read = gina(inst, ctx, out, input)?;
    out.write_a64(inst.reg(0), join_singles(read));
    Ok(())
}

/// `f16v2gina $aD, $aS, zimm12`.
pub(super) fn f16v2gina(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let h = halves(ctx.read_a(inst.reg(1)));
    let read = gina(inst, ctx, out, [f16_to_f32(h[0]), f16_to_f32(h[1])])?;
    out.write_a(
        inst.reg(0),
        join_halves([f32_to_f16(read[0]), f32_to_f16(read[1])]),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::csr::index;
    use crate::inst::Opcode::*;
    use crate::numerics::{f32_add, f32_mul, f32_to_f16};
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    fn f2(lo: f32, hi: f32) -> u64 {
        lo.to_bits() as u64 | (hi.to_bits() as u64) << 32
    }

    #[test]
    fn axpy_is_a_one_stage_pipeline() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let tas = 1.1f32;
        ctx.ucsr[index::TAS as usize] = tas.to_bits();
        ctx.write_a64(2, f2(1.0, 2.0));
        ctx.write_a64(4, f2(10.0, 20.0));
        ok(&mut ctx, &mut env, one(F32v2axpy, &[0, 2, 4]));
        assert_eq!(
            ctx.read_a64(0),
            f2(0.0, 0.0),
            "the previous accumulators come out"
        );
        let expected = [
            f32_add(f32_mul(tas, 1.0), 10.0),
            f32_add(f32_mul(tas, 2.0), 20.0),
        ];
        assert_eq!((ctx.aacc[0], ctx.aacc[2]), (expected[0], expected[1]));
        ctx.write_a64(2, f2(3.0, 4.0));
        ctx.write_a64(4, f2(0.0, 0.0));
        ok(&mut ctx, &mut env, one(F32v2axpy, &[0, 2, 4]));
        assert_eq!(ctx.read_a64(0), f2(expected[0], expected[1]));
        // Two roundings: 0.1f × 3 then + 0.3f differs from a fused multiply-add.
        let (x, y) = (3.0f32, -0.3f32);
        ctx.ucsr[index::TAS as usize] = 0.1f32.to_bits();
        ctx.write_a64(2, f2(x, x));
        ctx.write_a64(4, f2(y, y));
        ok(&mut ctx, &mut env, one(F32v2axpy, &[0, 2, 4]));
        assert_eq!(ctx.aacc[0], f32_add(f32_mul(0.1, x), y));
        assert_ne!(ctx.aacc[0], 0.1f32.mul_add(x, y));
    }

    #[test]
    fn v4acc_and_v8acc_accumulate_into_even_entries() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (k, x) in [1.0f32, 2.0, 3.0, 16_777_216.0].iter().enumerate() {
            ctx.a[4 + k] = x.to_bits();
        }
        ok(&mut ctx, &mut env, one(F32v4acc, &[4]));
        ok(&mut ctx, &mut env, one(F32v4acc, &[4]));
        assert_eq!(
            &ctx.aacc[..8],
            &[2.0, 0.0, 4.0, 0.0, 6.0, 0.0, 33_554_432.0, 0.0]
        );
        // f16v8acc: half j into AACC[2j], eight sums (as PopLibs' ReduceAdd reads them).
        let h = |x: f32| f32_to_f16(x) as u32;
        ctx.a[4] = h(0.5) | h(0.25) << 16;
        ctx.a[5] = h(-1.0) | h(1.0) << 16;
        ctx.a[6] = h(0.0) | h(3.0) << 16;
        ctx.a[7] = h(2.0) | h(-2.0) << 16;
        ok(&mut ctx, &mut env, one(F16v8acc, &[4]));
        assert_eq!(
            &ctx.aacc[..16],
            &[
                2.5,
                0.0,
                4.25,
                0.0,
                5.0,
                0.0,
                f32_add(33_554_432.0, 1.0),
                0.0,
                0.0,
                0.0,
                3.0,
                0.0,
                2.0,
                0.0,
                -2.0,
                0.0
            ]
        );
    }

    #[test]
    fn gina_walks_the_accumulators_as_a_queue() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (k, acc) in ctx.aacc.iter_mut().enumerate().take(16) {
            *acc = k as f32;
        }
        // Even entries: (0,2), (4,6), (8,10), (12,14), then what was pushed.
        let mut reads = Vec::new();
        for n in 0..6 {
            ctx.write_a64(2, f2(100.0 + n as f32, 200.0 + n as f32));
            ok(&mut ctx, &mut env, one(F32v2gina, &[0, 2, 0]));
            let out = ctx.read_a64(0);
            reads.push((
                f32::from_bits(out as u32),
                f32::from_bits((out >> 32) as u32),
            ));
        }
        assert_eq!(
            reads,
            [
                (0.0, 2.0),
                (4.0, 6.0),
                (8.0, 10.0),
                (12.0, 14.0),
                (100.0, 200.0),
                (101.0, 201.0)
            ]
        );
        // Odd entries were untouched.
        for odd in (1..16).step_by(2) {
            assert_eq!(ctx.aacc[odd], odd as f32);
        }
        ok(&mut ctx, &mut env, one(F32v2gina, &[0, 14, 1]));
        assert_eq!(ctx.read_a64(0), f2(1.0, 3.0));
        assert_eq!(
            (ctx.aacc[13], ctx.aacc[15]),
            (0.0, 0.0),
            "$azeros pushes zeros"
        );
        let kind = traps(&mut ctx, &mut env, one(F32v2gina, &[0, 2, 2]));
        assert!(matches!(
            kind,
            TrapKind::BadFlags {
                mnemonic: "f32v2gina",
                flags: 2,
                ..
            }
        ));
    }

    #[test]
    fn f16v2gina_widens_in_and_rounds_out() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.aacc[1] = 1.0 + 1.0 / 4096.0;
        ctx.aacc[3] = 70000.0;
        let h = |x: f32| f32_to_f16(x) as u32;
        ctx.a[2] = h(0.5) | h(-3.0) << 16;
        ok(&mut ctx, &mut env, one(F16v2gina, &[0, 2, 1]));
        assert_eq!(ctx.a[0], h(1.0) | 0x7c00 << 16);
        assert_eq!((ctx.aacc[13], ctx.aacc[15]), (0.5, -3.0));
        assert!(matches!(
            traps(&mut ctx, &mut env, one(F16v2gina, &[0, 2, 0x10])),
            TrapKind::BadFlags { .. }
        ));
    }

    #[test]
    fn macs_accumulate_into_the_entries_gina_reads() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let h = |x: f32| f32_to_f16(x) as u32;
        ctx.a[0] = 3.0f32.to_bits();
        ctx.a[1] = 0.5f32.to_bits();
        ok(&mut ctx, &mut env, one(F32mac, &[0, 1]));
        ok(&mut ctx, &mut env, one(F32mac, &[0, 1]));
        assert_eq!(ctx.aacc[0], 3.0);
        ctx.write_a64(2, f2(2.0, -1.0));
        ctx.write_a64(4, f2(4.0, 8.0));
        ok(&mut ctx, &mut env, one(F32v2mac, &[2, 4]));
        assert_eq!((ctx.aacc[0], ctx.aacc[2]), (11.0, -8.0));
        ctx.a[6] = h(2.0) | h(3.0) << 16;
        ctx.a[7] = h(0.25) | h(-1.0) << 16;
        ok(&mut ctx, &mut env, one(F16v2cmac, &[6, 7]));
        assert_eq!(ctx.aacc[0], 11.0 + 0.5 - 3.0);
        ctx.write_a64(
            2,
            (h(1.0) | h(2.0) << 16) as u64 | ((h(3.0) | h(4.0) << 16) as u64) << 32,
        );
        ctx.write_a64(
            4,
            (h(5.0) | h(6.0) << 16) as u64 | ((h(7.0) | h(8.0) << 16) as u64) << 32,
        );
        ok(&mut ctx, &mut env, one(F16v4cmac, &[2, 4]));
        assert_eq!((ctx.aacc[0], ctx.aacc[2]), (8.5 + 17.0, -8.0 + 53.0));
        // The PopLibs read-out: gina AACC[0,2], then add the halves.
        ok(&mut ctx, &mut env, one(F32v2gina, &[0, 14, 0]));
        assert_eq!(ctx.read_a64(0), f2(25.5, 45.0));
        // f16 products are exact in f32 (4096 × 4096 = 2^24); their sum 2^24 + 1 is not, and
        // rounds to even.
        ctx.aacc[0] = 0.0;
        ctx.a[6] = h(4096.0) | h(1.0) << 16;
        ctx.a[7] = h(4096.0) | h(1.0) << 16;
        ok(&mut ctx, &mut env, one(F16v2cmac, &[6, 7]));
        assert_eq!(ctx.aacc[0], 16_777_216.0);
    }

    #[test]
    fn mix_is_a_one_stage_pipeline_over_four_halves() {
        // −A·x + B·y with {−A, B} in $TAS, then + x with f16v4acc: x − A·x + B·y (PopLibs).
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let h = |x: f32| f32_to_f16(x);
        let v4 = |l: [f32; 4]| {
            l.iter()
                .enumerate()
                .fold(0u64, |w, (i, &x)| w | (h(x) as u64) << (16 * i))
        };
        ctx.ucsr[index::TAS as usize] = h(-0.5) as u32 | (h(2.0) as u32) << 16;
        let x = [1.0, 2.0, -4.0, 8.0];
        let y = [0.25, 0.0, 1.0, -1.0];
        ctx.write_a64(2, v4(x));
        ctx.write_a64(4, v4(y));
        ok(&mut ctx, &mut env, one(F16v4mix, &[14, 2, 4]));
        ok(&mut ctx, &mut env, one(F16v4acc, &[2]));
        ok(&mut ctx, &mut env, one(F16v4mix, &[0, 14, 14]));
        let want = [0.5 + 0.5, 1.0, -2.0 + 2.0, 4.0 - 2.0];
        assert_eq!(ctx.read_a64(0), v4(want));
        assert_eq!(
            &ctx.aacc[..8],
            &[0.0; 8],
            "mixing zeros empties the accumulators"
        );
    }

    #[test]
    fn acc_then_gina_reads_the_sums_back() {
        // The PopLibs pattern: f32v4acc, then two f32v2gina to read AACC[0,2] and AACC[4,6].
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (k, x) in [1.0f32, 2.0, 3.0, 4.0].iter().enumerate() {
            ctx.a[4 + k] = x.to_bits();
        }
        ok(&mut ctx, &mut env, one(F32v4acc, &[4]));
        ok(&mut ctx, &mut env, one(F32v2gina, &[0, 14, 0]));
        ok(&mut ctx, &mut env, one(F32v2gina, &[2, 14, 0]));
        assert_eq!(
            (ctx.read_a64(0), ctx.read_a64(2)),
            (f2(1.0, 2.0), f2(3.0, 4.0))
        );
    }

    #[test]
    fn sqacc_and_absacc_add_squares_and_magnitudes_to_the_even_entries() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (k, x) in [-1.5f32, 2.0, -3.0, 0.1].iter().enumerate() {
            ctx.a[4 + k] = x.to_bits();
        }
        ok(&mut ctx, &mut env, one(F32v4sqacc, &[4]));
        let sq = [2.25, 4.0, 9.0, f32_mul(0.1, 0.1)];
        assert_eq!(
            &ctx.aacc[..8],
            &[sq[0], 0.0, sq[1], 0.0, sq[2], 0.0, sq[3], 0.0]
        );
        ok(&mut ctx, &mut env, one(F32v4absacc, &[4]));
        let abs = [1.5, 2.0, 3.0, 0.1];
        for i in 0..4 {
            assert_eq!(ctx.aacc[2 * i], f32_add(sq[i], abs[i]));
        }
        // f16v8: half j into AACC[2j]; squares of halves are exact in f32.
        let h = |x: f32| f32_to_f16(x) as u32;
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[8] = h(-0.5) | h(3.0) << 16;
        ctx.a[9] = h(1.0) | h(-1.0) << 16;
        ctx.a[10] = h(-2.0) | h(0.0) << 16;
        ctx.a[11] = h(65504.0) | h(0.0) << 16;
        ok(&mut ctx, &mut env, one(F16v8sqacc, &[8]));
        let big = 65504.0f32 * 65504.0;
        let squares = [0.25, 9.0, 1.0, 1.0, 4.0, 0.0, big, 0.0];
        for (j, &sq) in squares.iter().enumerate() {
            assert_eq!(ctx.aacc[2 * j], sq, "half {j}");
        }
        ok(&mut ctx, &mut env, one(F16v8absacc, &[8]));
        let abs = [0.5, 3.0, 1.0, 1.0, 2.0, 0.0, 65504.0, 0.0];
        for j in 0..8 {
            assert_eq!(ctx.aacc[2 * j], f32_add(squares[j], abs[j]), "half {j}");
        }
        // f16v4absacc: one half per even entry.
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[2] = h(-0.25) | h(0.5) << 16;
        ctx.a[3] = h(-8.0) | h(1.0) << 16;
        ok(&mut ctx, &mut env, one(F16v4absacc, &[2]));
        assert_eq!(&ctx.aacc[..8], &[0.25, 0.0, 0.5, 0.0, 8.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn gacc_reads_the_even_entries_as_halves_and_keeps_them() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let values = [1.0f32, 2.5, -3.0, 1.0e-3];
        for (i, v) in values.iter().enumerate() {
            ctx.aacc[2 * i] = *v;
            ctx.aacc[2 * i + 1] = 99.0;
        }
        let before = ctx.aacc;
        ok(&mut ctx, &mut env, one(F16v4gacc, &[4]));
        let got = ctx.read_a64(4);
        for (i, v) in values.iter().enumerate() {
            assert_eq!((got >> (16 * i)) as u16, f32_to_f16(*v), "lane {i}");
        }
        assert_eq!(ctx.aacc, before);
    }
}
