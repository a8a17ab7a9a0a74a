//! Control flow: branches, `call`, `brnzdec`, `rpt` loops and the worker `exit*` instructions.
//!
//! Targets are byte addresses (the operand value; the encoding holds word addresses), checked
//! 4-byte aligned. Integer tests treat 0x80000000 (−0.0) as non-zero \[C\]. `call $m, target`
//! stores the address of the next bundle (pc + bundle size).
//!
//! `rpt` \[C\] isa.md §3.6, with project choices \[A\]:
//! * The body is the next (zimm8 + 1) × 8 bytes after the `rpt` bundle and must start 8-byte
//!   aligned (else `MisalignedRepeatBody`; [`crate::inst::REPEAT_BODY_ALIGN`] states the rule;
//!   the `rpt` bundle itself may sit at 4 mod 8). The count is `$m & 0xffff` or zimm12; count 0
//!   jumps to the end of the body. Otherwise the context's [`RepeatState`] and `$REPEAT_COUNT`,
//!   `$REPEAT_FIRST`, `$REPEAT_END` are set and execution continues at the body.
//! * The per-bundle bookkeeping (loop back, `$REPEAT_COUNT` tracking the iterations left,
//!   overrun and forbidden instructions) is in `execute`. Neither entering nor leaving nor
//!   looping counts as a taken branch (`branch_taken` stays false: the loop is zero-overhead).

use super::regs::{write_m, Flow};
use super::state::{ContextState, RepeatState};
use super::{Effect, Trap, TrapKind};
use crate::csr::{field, index};
use crate::inst::Inst;

/// `br $m`.
pub(super) fn br(inst: &Inst, ctx: &ContextState, flow: &mut Flow) -> Result<(), Trap> {
    flow.branch(ctx.read_m(inst.reg(0)))
}

/// `bri target`.
pub(super) fn bri(inst: &Inst, flow: &mut Flow) -> Result<(), Trap> {
    flow.branch(inst.imm(0))
}

/// `brz`, `brnz`, `brpos`, `brneg`: branch to operand 1 if `taken($m)`.
pub(super) fn branch_if(
    inst: &Inst,
    ctx: &ContextState,
    flow: &mut Flow,
    taken: impl Fn(u32) -> bool,
) -> Result<(), Trap> {
    if taken(ctx.read_m(inst.reg(0))) {
        flow.branch(inst.imm(1))?;
    }
    Ok(())
}

/// `brnzdec $m, target`: if $m != 0 { $m -= 1; branch } else fall through.
pub(super) fn brnzdec(inst: &Inst, ctx: &mut ContextState, flow: &mut Flow) -> Result<(), Trap> {
    let value = ctx.read_m(inst.reg(0));
    if value != 0 {
        flow.branch(inst.imm(1))?;
        write_m(ctx, inst.reg(0), value.wrapping_sub(1));
    }
    Ok(())
}

/// `call $m, target`: $m = pc + bundle size; branch.
pub(super) fn call(
    inst: &Inst,
    ctx: &mut ContextState,
    pc: u32,
    size: u32,
    flow: &mut Flow,
) -> Result<(), Trap> {
    flow.branch(inst.imm(1))?;
    write_m(ctx, inst.reg(0), pc.wrapping_add(size));
    Ok(())
}

/// `rpt` with its count already read (`$m & 0xffff` or zimm12) and the body-size immediate.
pub(super) fn rpt(
    ctx: &mut ContextState,
    pc: u32,
    size: u32,
    count: u32,
    body_imm: u32,
    flow: &mut Flow,
) -> Result<(), Trap> {
    let first = pc.wrapping_add(size);
    if !first.is_multiple_of(crate::inst::REPEAT_BODY_ALIGN) {
        return Err(TrapKind::MisalignedRepeatBody { body: first }.into());
    }
    let end = first.wrapping_add((body_imm + 1) * 8);
    if count == 0 {
        flow.next_pc = end;
        return Ok(());
    }
    ctx.repeat = RepeatState {
        active: true,
        remaining: count,
        first,
        end,
    };
    ctx.csr[index::REPEAT_COUNT as usize] = count;
    ctx.csr[index::REPEAT_FIRST as usize] = first;
    ctx.csr[index::REPEAT_END as usize] = end;
    flow.next_pc = first;
    Ok(())
}

/// The count of `rpt $m, zimm8` (16 bits on ipu21).
pub(super) fn rpt_count_reg(inst: &Inst, ctx: &ContextState) -> u32 {
    ctx.read_m(inst.reg(0)) & field::REPEAT_COUNT_MASK
}

/// `exitz`/`exitnz`/`exitpos`/`exitneg $m`: ends the worker with `status($m)`.
pub(super) fn exit(inst: &Inst, ctx: &ContextState, flow: &mut Flow, status: impl Fn(u32) -> bool) {
    flow.effect = Effect::Exit {
        status: status(ctx.read_m(inst.reg(0))),
    };
}

#[cfg(test)]
mod tests {
    use crate::csr::index;
    use crate::inst::Opcode::{self, *};
    use crate::semantics::test_env::*;
    use crate::semantics::{Effect, TrapKind};

    const TARGET: u32 = 0x4C400;

    fn taken(op: Opcode, value: u32) -> bool {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = value;
        let outcome = ok(&mut ctx, &mut env, one(op, &[1, TARGET]));
        let expected_pc = if outcome.branch_taken {
            TARGET
        } else {
            CODE + 4
        };
        assert_eq!((outcome.next_pc, ctx.pc), (expected_pc, expected_pc));
        outcome.branch_taken
    }

    #[test]
    fn conditional_branches() {
        let table: [(Opcode, [bool; 5]); 4] = [
            // values:  0,     1,     0x80000000 (-0.0), 0xffffffff, 0x7fffffff
            (Brz, [true, false, false, false, false]),
            (Brnz, [false, true, true, true, true]),
            (Brpos, [false, true, false, false, true]),
            (Brneg, [false, false, true, true, false]),
        ];
        for (op, expected) in table {
            for (value, want) in [0, 1, 0x8000_0000, 0xffff_ffff, 0x7fff_ffff]
                .into_iter()
                .zip(expected)
            {
                assert_eq!(taken(op, value), want, "{op:?} {value:#x}");
            }
        }
    }

    #[test]
    fn unconditional_branches_and_call() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let outcome = ok(&mut ctx, &mut env, one(Bri, &[TARGET]));
        assert!(outcome.branch_taken);
        assert_eq!(ctx.pc, TARGET);
        ctx.m[3] = CODE;
        ok(&mut ctx, &mut env, one(Br, &[3]));
        assert_eq!(ctx.pc, CODE);
        ctx.m[3] = CODE + 2;
        assert_eq!(
            traps(&mut ctx, &mut env, one(Br, &[3])),
            TrapKind::MisalignedTarget { target: CODE + 2 }
        );
        // call in an 8-byte bundle links to pc + 8.
        let outcome = ok(
            &mut ctx,
            &mut env,
            pair(i(Call, &[10, TARGET]), i(Fnop, &[])),
        );
        assert!(outcome.branch_taken);
        assert_eq!((ctx.m[10], ctx.pc), (CODE + 8, TARGET));
        ok(&mut ctx, &mut env, one(Call, &[10, CODE]));
        assert_eq!(ctx.m[10], TARGET + 4);
        assert_eq!(
            traps(&mut ctx, &mut env, one(Call, &[13, CODE])),
            TrapKind::ReadOnlyRegister { register: "$m13" }
        );
        // Branches also run on the supervisor.
        let mut sup = supervisor();
        assert!(ok(&mut sup, &mut env, one(Bri, &[TARGET])).branch_taken);
    }

    #[test]
    fn brnzdec_counts_down_and_falls_through_at_zero() {
        let mut program = Program::new(CODE);
        let top = program.push(one(AddImm, &[1, 1, 1]));
        program.push(one(Brnzdec, &[0, top]));
        program.push(one(Exitz, &[15]));
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[0] = 3;
        let (trace, status) = program.run(&mut ctx, &mut env, 100).unwrap();
        assert_eq!(ctx.m[1], 4, "N-1 in the counter gives N iterations");
        assert_eq!(ctx.m[0], 0);
        assert_eq!(trace.len(), 9);
        assert_eq!(status, Some(true));
        // -0.0 is non-zero: it decrements and branches.
        ctx.pc = CODE + 4;
        ctx.m[0] = 0x8000_0000;
        let outcome = ok(&mut ctx, &mut env, one(Brnzdec, &[0, top]));
        assert!(outcome.branch_taken);
        assert_eq!(ctx.m[0], 0x7fff_ffff);
    }

    #[test]
    fn exits_report_their_status() {
        let table: [(Opcode, [bool; 4]); 4] = [
            (Exitz, [true, false, false, false]),
            (Exitnz, [false, true, true, true]),
            (Exitpos, [false, true, false, false]),
            (Exitneg, [false, false, true, true]),
        ];
        for (op, expected) in table {
            for (value, want) in [0, 1, 0x8000_0000, 0xffff_ffff].into_iter().zip(expected) {
                let (mut ctx, mut env) = (worker(), TestEnv::new());
                ctx.m[2] = value;
                let outcome = ok(&mut ctx, &mut env, one(op, &[2]));
                assert_eq!(
                    outcome.effect,
                    Effect::Exit { status: want },
                    "{op:?} {value:#x}"
                );
            }
        }
        let mut env = TestEnv::new();
        assert!(matches!(
            traps(&mut supervisor(), &mut env, one(Exitz, &[0])),
            TrapKind::WrongContext { .. }
        ));
        let co_issued = pair(i(Exitz, &[0]), i(Fnop, &[]));
        assert!(matches!(
            traps(&mut worker(), &mut env, co_issued),
            TrapKind::InvalidOperation { .. }
        ));
    }

    /// `nop; rpt …; body (two 8-byte bundles: $m1 += 1, $m2 += 2); exitz $mzero`, with the
    /// `rpt` bundle at CODE + 4 so the body starts 8-byte aligned.
    fn counting_loop(rpt: crate::inst::Bundle) -> Program {
        let mut program = Program::new(CODE);
        program.push(one(Nop, &[]));
        program.push(rpt);
        program.push(pair(i(AddImm, &[1, 1, 1]), i(Fnop, &[])));
        program.push(pair(i(AddImm, &[2, 2, 2]), i(Fnop, &[])));
        program.push(one(Exitz, &[15]));
        program
    }

    #[test]
    fn rpt_runs_the_body_count_times() {
        for count in [0u32, 1, 2, 7] {
            let program = counting_loop(one(RptImm, &[count, 1]));
            let (mut ctx, mut env) = (worker(), TestEnv::new());
            let (trace, status) = program.run(&mut ctx, &mut env, 1000).unwrap();
            assert_eq!(status, Some(true));
            assert_eq!((ctx.m[1], ctx.m[2]), (count, 2 * count), "count {count}");
            assert_eq!(trace.len(), 3 + 2 * count as usize);
            assert_eq!(
                trace.iter().filter(|&&pc| pc == CODE + 4).count(),
                1,
                "rpt itself runs once"
            );
            assert!(!ctx.repeat.active);
        }
    }

    #[test]
    fn rpt_state_and_register_count() {
        let program = counting_loop(one(RptReg, &[3, 1]));
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[3] = 0x1_0003; // 16-bit count: 3
        ok(&mut ctx, &mut env, program.bundles[&CODE]);
        let outcome = ok(&mut ctx, &mut env, program.bundles[&(CODE + 4)]);
        assert!(!outcome.branch_taken);
        assert_eq!(ctx.pc, CODE + 8);
        assert!(ctx.repeat.active);
        assert_eq!(
            (ctx.repeat.remaining, ctx.repeat.first, ctx.repeat.end),
            (3, CODE + 8, CODE + 24)
        );
        assert_eq!(ctx.csr[index::REPEAT_COUNT as usize], 3);
        assert_eq!(ctx.csr[index::REPEAT_FIRST as usize], CODE + 8);
        assert_eq!(ctx.csr[index::REPEAT_END as usize], CODE + 24);
        // After the first pass through the body $REPEAT_COUNT shows the iterations left.
        ok(&mut ctx, &mut env, program.bundles[&(CODE + 8)]);
        let outcome = ok(&mut ctx, &mut env, program.bundles[&(CODE + 16)]);
        assert_eq!((outcome.next_pc, outcome.branch_taken), (CODE + 8, false));
        assert_eq!(ctx.csr[index::REPEAT_COUNT as usize], 2);
        program.run(&mut ctx, &mut env, 100).unwrap();
        assert_eq!((ctx.m[1], ctx.csr[index::REPEAT_COUNT as usize]), (3, 0));
    }

    #[test]
    fn the_aux_instruction_of_the_rpt_bundle_runs_once() {
        let mut program = Program::new(CODE);
        // rpt bundle of 8 bytes at an aligned address: the body is aligned too.
        program.push(pair(i(RptImm, &[4, 0]), i(F32add, &[0, 0, 1])));
        program.push(pair(i(AddImm, &[1, 1, 1]), i(F32add, &[2, 2, 1])));
        program.push(one(Exitz, &[15]));
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[1] = 1.0f32.to_bits();
        program.run(&mut ctx, &mut env, 100).unwrap();
        assert_eq!(f32::from_bits(ctx.a[0]), 1.0);
        assert_eq!(f32::from_bits(ctx.a[2]), 4.0);
        assert_eq!(ctx.m[1], 4);
    }

    #[test]
    fn rpt_body_rules() {
        // Control inside the body.
        for forbidden in [
            one(Bri, &[CODE]),
            one(Brnzdec, &[0, CODE]),
            one(Exitz, &[0]),
            one(RptImm, &[1, 0]),
        ] {
            let mut program = Program::new(CODE);
            program.push(pair(i(RptImm, &[2, 0]), i(Fnop, &[])));
            program.push(forbidden);
            program.push(one(Nop, &[]));
            let (mut ctx, mut env) = (worker(), TestEnv::new());
            let trap = program.run(&mut ctx, &mut env, 100).unwrap_err();
            assert!(
                matches!(trap.kind, TrapKind::ControlInRepeatBody { .. }),
                "{trap}"
            );
            assert_eq!(ctx.pc, CODE + 8, "the PC stays at the offending bundle");
        }
        // A bundle that crosses the end of the body.
        let mut program = Program::new(CODE);
        program.push(pair(i(RptImm, &[2, 0]), i(Fnop, &[])));
        program.push(one(Nop, &[]));
        program.push(pair(i(Nop, &[]), i(Fnop, &[])));
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let trap = program.run(&mut ctx, &mut env, 100).unwrap_err();
        assert_eq!(trap.kind, TrapKind::RepeatBodyOverrun { end: CODE + 16 });
        // A body that does not start 8-byte aligned.
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        assert_eq!(
            traps(&mut ctx, &mut env, one(RptImm, &[2, 0])),
            TrapKind::MisalignedRepeatBody { body: CODE + 4 }
        );
        // Workers only.
        let mut sup = supervisor();
        assert!(matches!(
            traps(&mut sup, &mut env, one(RptImm, &[2, 0])),
            TrapKind::WrongContext { .. }
        ));
    }
}
