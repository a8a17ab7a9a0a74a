//! f32 ↔ 32-bit integer conversions and rounding to an integral value (aux): `f32toi32`,
//! `f32toui32`, `f32fromi32`, `f32fromui32`, `f32int`. The rules are in
//! [`crate::numerics::intconv`]; an `f32int` mode the model does not define (4..15) traps
//! `BadFlags`.

use super::regs::Pending;
use super::state::ContextState;
use super::Trap;
use crate::inst::Inst;
use crate::numerics::{
    f32_round_integral, f32_to_i32, f32_to_u32, i32_to_f32, u32_to_f32, IntegralRounding,
};

pub(super) fn f32toi32(a: u32) -> u32 {
    f32_to_i32(f32::from_bits(a))
}

pub(super) fn f32toui32(a: u32) -> u32 {
    f32_to_u32(f32::from_bits(a))
}

pub(super) fn f32fromi32(a: u32) -> u32 {
    i32_to_f32(a).to_bits()
}

pub(super) fn f32fromui32(a: u32) -> u32 {
    u32_to_f32(a).to_bits()
}

/// `f32int $aD, $aS, mode`.
pub(super) fn f32int(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let mode = inst.imm(2);
    let Some(rounding) = IntegralRounding::from_immediate(mode) else {
        return Err(Trap::bad_flags(
            inst,
            mode,
            "rounding modes 0..3 are defined (nearest even, up, down, toward zero)",
        ));
    };
    let x = f32::from_bits(ctx.read_a(inst.reg(1)));
    out.write_a(inst.reg(0), f32_round_integral(x, rounding).to_bits());
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::numerics::F32_CANONICAL_NAN;
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;
    use proptest::prelude::*;

    fn unary(op: Opcode, a: u32) -> u32 {
        let mut ctx = worker();
        ctx.a[1] = a;
        ok(&mut ctx, &mut TestEnv::new(), one(op, &[0, 1]));
        ctx.a[0]
    }

    fn int(a: f32, mode: u32) -> f32 {
        let mut ctx = worker();
        ctx.a[1] = a.to_bits();
        ok(&mut ctx, &mut TestEnv::new(), one(F32int, &[0, 1, mode]));
        f32::from_bits(ctx.a[0])
    }

    /// Nearest-even rounding on the exact (f64) value, then saturation: the specification.
    fn to_int_reference(x: f32, min: f64, max: f64) -> i64 {
        if x.is_nan() {
            return 0;
        }
        let v = x as f64;
        let below = v.floor();
        let (down, up) = (v - below, below + 1.0 - v);
        let rounded = if down < up || (down == up && below % 2.0 == 0.0) {
            below
        } else {
            below + 1.0
        };
        rounded.clamp(min, max) as i64
    }

    proptest! {
        #[test]
        fn conversions_match_the_reference(bits in any::<u32>(), small in -1.0e6f32..1.0e6) {
            for x in [f32::from_bits(bits), small, small.trunc() + 0.5] {
                let signed = unary(F32toi32, x.to_bits()) as i32 as i64;
                prop_assert_eq!(signed, to_int_reference(x, i32::MIN as f64, i32::MAX as f64), "{}", x);
                let unsigned = unary(F32toui32, x.to_bits()) as i64;
                prop_assert_eq!(unsigned, to_int_reference(x, 0.0, u32::MAX as f64), "{}", x);
            }
            // Integer → f32: the f64 value (exact) rounded once to f32 is the reference.
            prop_assert_eq!(unary(F32fromui32, bits), (bits as f64 as f32).to_bits());
            prop_assert_eq!(unary(F32fromi32, bits), (bits as i32 as f64 as f32).to_bits());
        }

        #[test]
        fn f32int_rounds_to_an_integral_value(x in -1.0e7f32..1.0e7) {
            let (n, u, d, z) = (int(x, 0), int(x, 1), int(x, 2), int(x, 3));
            prop_assert!(n.fract() == 0.0 && (n - x).abs() <= 0.5);
            prop_assert!(u >= x && u - x < 1.0 && u.fract() == 0.0);
            prop_assert!(d <= x && x - d < 1.0 && d.fract() == 0.0);
            prop_assert!(z.abs() <= x.abs() && (x - z).abs() < 1.0 && z.fract() == 0.0);
        }
    }

    #[test]
    fn f32int_edges_and_bad_modes() {
        assert_eq!(int(2.5, 0), 2.0);
        assert_eq!(int(-2.5, 2), -3.0);
        assert_eq!(int(-0.5, 3).to_bits(), (-0.0f32).to_bits());
        assert_eq!(int(f32::NAN, 1).to_bits(), F32_CANONICAL_NAN);
        let mut ctx = worker();
        let kind = traps(&mut ctx, &mut TestEnv::new(), one(F32int, &[0, 1, 4]));
        assert!(
            matches!(kind, TrapKind::BadFlags { flags: 4, .. }),
            "{kind:?}"
        );
    }
}
