//! `step_bundle`: the bundle checks, the aux → main → commit order around the one opcode
//! dispatch (`dispatch.rs`), and the per-bundle `rpt` bookkeeping.
//!
//! Order of one bundle (see the module doc of `semantics` for the parallel-semantics rule):
//! 1. Checks, before any state changes: each instruction sits in its pipeline's slot, may run
//!    in this context (`WrongContext`), is not a solo instruction in a pair; inside an active
//!    `rpt` body nothing of timing class Branch, Repeat, Exit, Launch, Sync, Exchange or Delay
//!    (`ControlInRepeatBody`) and no bundle that crosses the body's end (`RepeatBodyOverrun`);
//!    the main instruction names no read-only MRF register (`$m12..$m14`) as a destination
//!    (`ReadOnlyRegister`, even when a conditional write such as `brnzdec`'s would not happen).
//! 2. The aux instruction computes from the old registers into a [`Pending`] buffer. If it
//!    writes an ARF register the main instruction also writes, the bundle traps
//!    `InvalidOperation` (writes to `$a14`/`$a15` are discarded and never conflict).
//! 3. The main instruction executes fully (registers, memory, control flow, effect).
//! 4. The aux writes commit; then, inside a `rpt` body, the loop bookkeeping picks the next PC.
//!
//! A trapping bundle changes nothing: steps 1–2 write nothing, and every main instruction makes
//! all its checks and loads before its first store or register write. The PC moves on success only.
//!
//! The checks of step 1 depend on the bundle, the kind of context and the `rpt` state only, so a
//! [`PreparedBundle`] works them out once: executing it tests a few flags, and runs the full
//! checks (with the same traps in the same order) only when a flag says one of them may fail.

use super::dispatch::dispatch;
use super::regs::{Flow, Pending};
use super::{ContextKind, ContextState, ExecEnv, StepOutcome, Trap, TrapKind};
use crate::csr::index;
use crate::inst::{Access, Bundle, Inst};
use crate::registers::RegisterFile;
use crate::table::{CoIssue, Pipe, TimingClass};

/// Executes one bundle; see the module doc.
pub(super) fn step_bundle<E: ExecEnv>(
    bundle: &Bundle,
    size: u32,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<StepOutcome, Trap> {
    let main_arf_writes = full_checks(bundle, size, ctx)?;
    execute_checked(bundle, size, main_arf_writes, ctx, env)
}

/// A bundle with the outcome of its checks worked out in advance (see the module doc); made once,
/// for example when code is decoded, and executed with [`step_prepared`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreparedBundle {
    bundle: Bundle,
    size: u32,
    /// Every check passes for a supervisor / a worker outside a `rpt` body.
    ok_supervisor: bool,
    ok_worker: bool,
    /// Some instruction of the bundle may not appear inside a `rpt` body.
    forbidden_in_repeat: bool,
    /// The main instruction's ARF destinations (as [`main_destinations`] returns them).
    main_arf_writes: u16,
}

impl PreparedBundle {
    /// Prepares `bundle`, which occupies `size` bytes of code.
    pub fn new(bundle: Bundle, size: u32) -> PreparedBundle {
        let passes = |ctx: &ContextState| full_checks(&bundle, size, ctx).ok();
        let supervisor = passes(&ContextState::new(ContextKind::Supervisor));
        let worker = passes(&ContextState::new(ContextKind::Worker(0)));
        let forbidden_in_repeat = [&bundle.main, &bundle.aux]
            .into_iter()
            .flatten()
            .any(|inst| forbidden_in_repeat(inst.desc().timing));
        PreparedBundle {
            bundle,
            size,
            ok_supervisor: supervisor.is_some(),
            ok_worker: worker.is_some(),
            forbidden_in_repeat,
            main_arf_writes: supervisor.or(worker).unwrap_or(0),
        }
    }

    pub fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    /// Size in bytes of the bundle in code.
    pub fn size(&self) -> u32 {
        self.size
    }
}

/// Executes a prepared bundle: the same as [`step_bundle`] on its bundle and size.
#[inline]
pub(super) fn step_prepared<E: ExecEnv>(
    prepared: &PreparedBundle,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<StepOutcome, Trap> {
    let (bundle, size) = (&prepared.bundle, prepared.size);
    let context_ok = if ctx.kind.is_supervisor() {
        prepared.ok_supervisor
    } else {
        prepared.ok_worker
    };
    let repeat_ok =
        !ctx.repeat.active || (!prepared.forbidden_in_repeat && !crosses_repeat_end(ctx, size));
    let main_arf_writes = if context_ok && repeat_ok {
        // Every check would pass (see `PreparedBundle::new`).
        prepared.main_arf_writes
    } else {
        full_checks(bundle, size, ctx)?
    };
    execute_checked(bundle, size, main_arf_writes, ctx, env)
}

/// Step 1 of the module doc: every check; returns the main instruction's ARF destinations.
fn full_checks(bundle: &Bundle, size: u32, ctx: &ContextState) -> Result<u16, Trap> {
    check_bundle(bundle, size, ctx)?;
    match &bundle.main {
        Some(main) => main_destinations(main, ctx.kind.is_supervisor()),
        None => Ok(0),
    }
}

/// Steps 2–4 of the module doc, for a bundle that passed the checks.
#[inline(always)]
fn execute_checked<E: ExecEnv>(
    bundle: &Bundle,
    size: u32,
    main_arf_writes: u16,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<StepOutcome, Trap> {
    let pc = ctx.pc;
    let in_repeat = ctx.repeat.active;
    let mut flow = Flow::fall_through(pc.wrapping_add(size));
    let mut pending = Pending::new();
    if let Some(aux) = &bundle.aux {
        dispatch(aux, pc, size, ctx, env, &mut pending, &mut flow)?;
        if pending.arf_mask() & main_arf_writes != 0 {
            return Err(TrapKind::InvalidOperation {
                what: "the main and aux instructions of a bundle write the same ARF register",
            }
            .into());
        }
    }
    if let Some(main) = &bundle.main {
        dispatch(main, pc, size, ctx, env, &mut pending, &mut flow)?;
    }
    pending.commit(ctx);
    if in_repeat {
        flow.next_pc = repeat_next(ctx, pc, size);
    }
    ctx.pc = flow.next_pc;
    Ok(StepOutcome {
        next_pc: flow.next_pc,
        branch_taken: flow.branch_taken,
        effect: flow.effect,
    })
}

/// Timing classes that may not appear inside a `rpt` body.
fn forbidden_in_repeat(timing: TimingClass) -> bool {
    matches!(
        timing,
        TimingClass::Branch
            | TimingClass::Repeat
            | TimingClass::Exit
            | TimingClass::Launch
            | TimingClass::Sync
            | TimingClass::Exchange
            | TimingClass::Delay
    )
}

fn check_bundle(bundle: &Bundle, size: u32, ctx: &ContextState) -> Result<(), Trap> {
    let supervisor = ctx.kind.is_supervisor();
    let pair = bundle.main.is_some() && bundle.aux.is_some();
    if bundle.main.is_none() && bundle.aux.is_none() {
        return Err(TrapKind::InvalidOperation {
            what: "empty bundle",
        }
        .into());
    }
    for (slot, pipe) in [(&bundle.main, Pipe::Main), (&bundle.aux, Pipe::Aux)] {
        let Some(inst) = slot else { continue };
        let desc = inst.desc();
        if !desc.contexts.allows(supervisor) {
            return Err(TrapKind::WrongContext {
                mnemonic: desc.mnemonic,
                context: ctx.kind.name(),
            }
            .into());
        }
        if desc.pipe != pipe {
            return Err(TrapKind::InvalidOperation {
                what: "instruction in the other pipeline's bundle slot",
            }
            .into());
        }
        if pair && desc.co_issue == CoIssue::Solo {
            return Err(TrapKind::InvalidOperation {
                what: "a solo instruction cannot be co-issued",
            }
            .into());
        }
        if ctx.repeat.active && forbidden_in_repeat(desc.timing) {
            return Err(TrapKind::ControlInRepeatBody {
                mnemonic: desc.mnemonic,
            }
            .into());
        }
    }
    if ctx.repeat.active && crosses_repeat_end(ctx, size) {
        return Err(TrapKind::RepeatBodyOverrun {
            end: ctx.repeat.end,
        }
        .into());
    }
    Ok(())
}

/// Whether a bundle of `size` bytes at `ctx.pc` crosses the end of the active `rpt` body.
#[inline]
fn crosses_repeat_end(ctx: &ContextState, size: u32) -> bool {
    let (pc, end) = (ctx.pc, ctx.repeat.end);
    pc < end && pc.wrapping_add(size) > end
}

/// Checks the main instruction's MRF destinations and returns its ARF destinations as a mask.
///
/// `$m12`–`$m14` are read-only for workers. The supervisor may write `$m12` and `$m13` [A]: its
/// control code sets `$mvertex_base` before calling a supervisor kernel (the public sources say
/// only that the registers are read-only, which the worker-side vertex model needs).
fn main_destinations(inst: &Inst, supervisor: bool) -> Result<u16, Trap> {
    const READ_ONLY: [&str; 3] = ["$m12", "$m13", "$m14"];
    let mut arf = 0u16;
    for (i, operand) in inst.desc().operands.iter().enumerate() {
        if !matches!(operand.access, Access::Write | Access::ReadWrite) {
            continue;
        }
        let first = inst.reg(i);
        let registers = first..first + operand.kind.register_width() as usize;
        match operand.kind.register_file() {
            Some(RegisterFile::M) => {
                let first_read_only = if supervisor { 14 } else { 12 };
                if let Some(r) = registers
                    .into_iter()
                    .find(|r| (first_read_only..=14).contains(r))
                {
                    return Err(TrapKind::ReadOnlyRegister {
                        register: READ_ONLY[r - 12],
                    }
                    .into());
                }
            }
            Some(RegisterFile::A) => {
                for r in registers.filter(|&r| r < 14) {
                    arf |= 1 << r;
                }
            }
            None => {}
        }
    }
    Ok(arf)
}

/// The PC after a bundle inside an active `rpt` body: loop back at the body's end while
/// iterations remain (`$REPEAT_COUNT` follows the iterations left).
fn repeat_next(ctx: &mut ContextState, pc: u32, size: u32) -> u32 {
    let next = pc.wrapping_add(size);
    if next != ctx.repeat.end {
        return next;
    }
    ctx.repeat.remaining -= 1;
    ctx.csr[index::REPEAT_COUNT as usize] = ctx.repeat.remaining;
    if ctx.repeat.remaining > 0 {
        ctx.repeat.first
    } else {
        ctx.repeat.active = false;
        next
    }
}

#[cfg(test)]
mod tests {
    use crate::inst::{Bundle, Opcode::*};
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    const DATA: u32 = 0x5_0000;

    #[test]
    fn the_aux_instruction_reads_registers_from_before_the_bundle() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        env.write_u32(DATA, 5.0f32.to_bits());
        ctx.m[1] = DATA;
        ctx.a[0] = 1.5f32.to_bits();
        // { ld32 $a0, $m1, $mzero, 0 ; f32add $a1, $a0, $a0 }
        let outcome = ok(
            &mut ctx,
            &mut env,
            pair(i(Ld32A, &[0, 1, 15, 0]), i(F32add, &[1, 0, 0])),
        );
        assert_eq!(f32::from_bits(ctx.a[0]), 5.0);
        assert_eq!(f32::from_bits(ctx.a[1]), 3.0);
        assert_eq!((outcome.next_pc, ctx.pc), (CODE + 8, CODE + 8));
    }

    #[test]
    fn the_main_instruction_reads_registers_from_before_the_bundle() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = DATA;
        ctx.a[0] = 0x1111_1111;
        ctx.a[1] = 0x2222_2222;
        // { st32 $a0, … ; mov $a0, $a1 }: the store writes the old $a0.
        ok(
            &mut ctx,
            &mut env,
            pair(i(St32A, &[0, 1, 15, 0]), i(MovA, &[0, 1])),
        );
        assert_eq!((env.read_u32(DATA), ctx.a[0]), (0x1111_1111, 0x2222_2222));
        // { atom $m0, $a0 ; setzi $a0, 7 }: atom sees the old $a0.
        ok(
            &mut ctx,
            &mut env,
            pair(i(Atom, &[0, 0]), i(SetziA, &[0, 7])),
        );
        assert_eq!((ctx.m[0], ctx.a[0]), (0x2222_2222, 7));
    }

    #[test]
    fn both_pipelines_writing_one_arf_register_traps() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = DATA;
        let clash = pair(i(Ld32A, &[0, 1, 15, 0]), i(SetziA, &[0, 1]));
        assert!(matches!(
            traps(&mut ctx, &mut env, clash),
            TrapKind::InvalidOperation { .. }
        ));
        let pair_clash = pair(i(Ld64, &[2, 1, 15, 0]), i(F16v2add, &[3, 0, 0]));
        assert!(matches!(
            traps(&mut ctx, &mut env, pair_clash),
            TrapKind::InvalidOperation { .. }
        ));
        // Discarded writes to $azeros never clash.
        ok(
            &mut ctx,
            &mut env,
            pair(i(Ld64, &[14, 1, 15, 0]), i(SetziA, &[14, 1])),
        );
        // Different registers are fine.
        ok(
            &mut ctx,
            &mut env,
            pair(i(Ld64, &[2, 1, 15, 0]), i(SetziA, &[1, 1])),
        );
    }

    #[test]
    fn a_trap_in_either_pipeline_commits_nothing() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = DATA;
        ctx.m[2] = DATA + 2;
        // Aux traps: the main store must not happen.
        let bad_aux = pair(
            i(St32M, &[1, 1, 15, 0]),
            i(Uput, &[crate::csr::index::FP_CTL as u32, 0]),
        );
        ctx.a[0] = crate::csr::field::FP_CTL_ESR;
        assert!(matches!(
            traps(&mut ctx, &mut env, bad_aux),
            TrapKind::Unmodelled { .. }
        ));
        // Main traps: the aux write must not commit.
        let bad_main = pair(i(Ld32M, &[0, 2, 15, 0]), i(SetziA, &[1, 99]));
        assert!(matches!(
            traps(&mut ctx, &mut env, bad_main),
            TrapKind::Memory(_)
        ));
    }

    #[test]
    fn bundle_shape_and_context_checks() {
        let mut env = TestEnv::new();
        let mut sup = supervisor();
        let kind = traps(&mut sup, &mut env, one(F32add, &[0, 1, 2]));
        assert_eq!(
            kind,
            TrapKind::WrongContext {
                mnemonic: "f32add",
                context: "supervisor"
            }
        );
        let kind = traps(&mut worker(), &mut env, one(Sync, &[2]));
        assert_eq!(
            kind,
            TrapKind::WrongContext {
                mnemonic: "sync",
                context: "worker 0"
            }
        );
        let swapped = Bundle {
            main: Some(i(Fnop, &[])),
            aux: Some(i(Nop, &[])),
        };
        assert!(matches!(
            traps(&mut worker(), &mut env, swapped),
            TrapKind::InvalidOperation { .. }
        ));
        let empty = Bundle {
            main: None,
            aux: None,
        };
        assert!(matches!(
            traps(&mut worker(), &mut env, empty),
            TrapKind::InvalidOperation { .. }
        ));
        let solo = pair(i(Run, &[0, 0, 0]), i(Fnop, &[]));
        assert!(matches!(
            traps(&mut sup, &mut env, solo),
            TrapKind::InvalidOperation { .. }
        ));
    }

    /// `step_prepared` (the simulator's path) gives exactly what `step_bundle` gives — result,
    /// trap, registers and memory — for every opcode alone and in pairs, in both kinds of
    /// context, with read-only destinations, and outside, inside and across the end of a `rpt`
    /// body (so every check of the module doc fails somewhere and the fast path is exercised).
    #[test]
    fn prepared_bundles_execute_exactly_like_plain_ones() {
        use crate::inst::Opcode;
        let (mut env_plain, mut env_prepared) = (TestEnv::new(), TestEnv::new());
        let mut bundles = Vec::new();
        let patterns: [[u32; 5]; 5] = [[0; 5], [1, 2, 3, 4, 5], [12; 5], [13; 5], [14; 5]];
        for opcode in Opcode::all() {
            for operands in &patterns {
                bundles.push(one(opcode, operands));
            }
        }
        // Pairs: every main instruction with a few aux ones and every aux with a few main ones
        // (solo instructions, ARF clashes, the wrong pipeline in a slot).
        let some_main = [
            i(Nop, &[]),
            i(Ld64, &[2, 1, 15, 0]),
            i(Run, &[0, 0, 0]),
            i(Brnzdec, &[1, 0]),
            i(SetziA, &[0, 1]),
        ];
        let some_aux = [
            i(Fnop, &[]),
            i(F16v2add, &[3, 0, 0]),
            i(SetziA, &[2, 1]),
            i(Nop, &[]),
        ];
        for opcode in Opcode::all() {
            for operands in &patterns[..2] {
                let inst = i(opcode, operands);
                for aux in some_aux {
                    bundles.push(pair(inst, aux));
                }
                for main in some_main {
                    bundles.push(pair(main, inst));
                }
            }
        }
        for bundle in bundles {
            for kind in [
                crate::semantics::ContextKind::Supervisor,
                crate::semantics::ContextKind::Worker(3),
            ] {
                // No rpt; inside a body; the bundle is the body's last; it crosses the body's end.
                for repeat in [None, Some(64), Some(bundle.size()), Some(4)] {
                    let mut ctx = if kind.is_supervisor() {
                        supervisor()
                    } else {
                        worker()
                    };
                    ctx.kind = kind;
                    ctx.m[1] = DATA;
                    if let Some(body) = repeat {
                        ctx.repeat = crate::semantics::RepeatState {
                            active: true,
                            remaining: 3,
                            first: CODE,
                            end: CODE + body,
                        };
                    }
                    let mut prepared_ctx = ctx.clone();
                    let plain = step_unprepared(&mut ctx, &mut env_plain, bundle);
                    let prepared = step(&mut prepared_ctx, &mut env_prepared, bundle);
                    assert_eq!(prepared, plain, "{bundle:?} in {kind:?}, rpt {repeat:?}");
                    assert_eq!(prepared_ctx, ctx, "{bundle:?} in {kind:?}, rpt {repeat:?}");
                }
            }
        }
        assert!(env_plain.mem == env_prepared.mem, "memory differs");
        assert_eq!(env_plain.cwei, env_prepared.cwei);
    }

    #[test]
    fn every_opcode_executes_without_panicking() {
        // The match in `dispatch` is exhaustive by construction; run every row once with zero
        // operands in its own context to make sure no arm panics.
        for opcode in crate::inst::Opcode::all() {
            let desc = opcode.desc();
            let mut ctx = if desc.contexts.allows(false) {
                worker()
            } else {
                supervisor()
            };
            let mut env = TestEnv::new();
            ctx.m = [0; 16];
            let _ = step(&mut ctx, &mut env, one(opcode, &[0; 5]));
        }
    }
}
