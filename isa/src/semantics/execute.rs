//! `step_bundle`: the bundle checks, the aux → main → commit order, the one opcode dispatch, and
//! the per-bundle `rpt` bookkeeping.
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

use super::memory::{File, Mode};
use super::regs::{self, Flow, Pending};
use super::{
    accumulate, amp, bitwise, broadcast, clamp, compare, control, convert, csr_access, float,
    integer, integral, memory, pace, permute, random, slic, stacc, supervisor,
};
use super::{ContextKind, ContextState, ExecEnv, StepOutcome, Trap, TrapKind};
use crate::csr::index;
use crate::inst::{Access, Bundle, Inst, Opcode};
use crate::numerics as nx;
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

/// Executes one instruction: aux instructions read `ctx` and write `out`; main instructions
/// update `ctx`, `env` and `flow` directly. One arm per opcode, grouped by family.
#[inline]
fn dispatch<E: ExecEnv>(
    inst: &Inst,
    pc: u32,
    size: u32,
    ctx: &mut ContextState,
    env: &mut E,
    out: &mut Pending,
    flow: &mut Flow,
) -> Result<(), Trap> {
    use Opcode::*;
    match inst.opcode {
        // ---- integer (main) ----
        Setzi => integer::setzi(inst, ctx),
        Mov => integer::unary(inst, ctx, |a| a),
        Add => integer::reg_reg(inst, ctx, u32::wrapping_add),
        AddImm => integer::reg_imm(inst, ctx, u32::wrapping_add),
        AddImmZ => integer::reg_imm(inst, ctx, u32::wrapping_add),
        Sub => integer::reg_reg(inst, ctx, u32::wrapping_sub),
        SubImm => integer::reg_imm(inst, ctx, u32::wrapping_sub),
        SubImmRev => integer::imm_reg(inst, ctx, u32::wrapping_sub),
        And => integer::reg_reg(inst, ctx, |a, b| a & b),
        AndImm => integer::reg_imm(inst, ctx, |a, b| a & b),
        Or => integer::reg_reg(inst, ctx, |a, b| a | b),
        OrImm => integer::reg_imm(inst, ctx, |a, b| a | b),
        Andc => integer::reg_reg(inst, ctx, |a, b| a & !b),
        AndcImm => integer::reg_imm(inst, ctx, |a, b| a & !b),
        Xor => integer::reg_reg(inst, ctx, |a, b| a ^ b),
        OrImmHi => integer::reg_imm(inst, ctx, bitwise::or),
        Xnor => integer::reg_reg(inst, ctx, bitwise::xnor),
        Abs => integer::unary(inst, ctx, integer::abs),
        Popc => integer::unary(inst, ctx, integer::popc),
        Movnz => integer::movnz(inst, ctx),
        Shl => integer::reg_reg(inst, ctx, integer::shl),
        ShlImm => integer::reg_imm(inst, ctx, integer::shl),
        Shr => integer::reg_reg(inst, ctx, integer::shr),
        ShrImm => integer::reg_imm(inst, ctx, integer::shr),
        Shrs => integer::reg_reg(inst, ctx, integer::shrs),
        ShrsImm => integer::reg_imm(inst, ctx, integer::shrs),
        Mul => integer::reg_reg(inst, ctx, u32::wrapping_mul),
        MulImm => integer::reg_imm(inst, ctx, u32::wrapping_mul),
        Min => integer::reg_reg(inst, ctx, integer::min_signed),
        MinImm => integer::reg_imm(inst, ctx, integer::min_signed),
        MinImmZ => integer::reg_imm(inst, ctx, integer::min_signed),
        Max => integer::reg_reg(inst, ctx, integer::max_signed),
        MaxImm => integer::reg_imm(inst, ctx, integer::max_signed),
        Cmpeq => integer::reg_reg(inst, ctx, integer::cmpeq),
        CmpeqImm => integer::reg_imm(inst, ctx, integer::cmpeq),
        Cmpne => integer::reg_reg(inst, ctx, integer::cmpne),
        CmpneImm => integer::reg_imm(inst, ctx, integer::cmpne),
        Cmpslt => integer::reg_reg(inst, ctx, integer::cmpslt),
        CmpsltImm => integer::reg_imm(inst, ctx, integer::cmpslt),
        Cmpult => integer::reg_reg(inst, ctx, integer::cmpult),
        CmpultImm => integer::reg_imm(inst, ctx, integer::cmpult),
        Nop => {}

        // ---- permutes on the MRF (main) ----
        Sort4x16loM => integer::reg_reg(inst, ctx, permute::sort4x16lo),
        Sort4x16hiM => integer::reg_reg(inst, ctx, permute::sort4x16hi),
        Roll16M => integer::reg_reg(inst, ctx, permute::roll16),
        Swap16M => integer::unary(inst, ctx, permute::swap16),
        Sort8x8loM => integer::reg_reg(inst, ctx, permute::sort8x8lo),
        Sort8x8hiM => integer::reg_reg(inst, ctx, permute::sort8x8hi),
        Shuf8x8loM => integer::reg_reg(inst, ctx, permute::shuf8x8lo),
        Shuf8x8hiM => integer::reg_reg(inst, ctx, permute::shuf8x8hi),
        Roll8lM => integer::reg_reg(inst, ctx, permute::roll8l),
        Roll8rM => integer::reg_reg(inst, ctx, permute::roll8r),

        // ---- control (main) ----
        Br => control::br(inst, ctx, flow)?,
        Bri => control::bri(inst, flow)?,
        Brz => control::branch_if(inst, ctx, flow, |m| m == 0)?,
        Brnz => control::branch_if(inst, ctx, flow, |m| m != 0)?,
        Brpos => control::branch_if(inst, ctx, flow, |m| (m as i32) > 0)?,
        Brneg => control::branch_if(inst, ctx, flow, |m| (m as i32) < 0)?,
        Brnzdec => control::brnzdec(inst, ctx, flow)?,
        Call => control::call(inst, ctx, pc, size, flow)?,
        RptReg => {
            let count = control::rpt_count_reg(inst, ctx);
            control::rpt(ctx, pc, size, count, inst.imm(1), flow)?
        }
        RptImm => control::rpt(ctx, pc, size, inst.imm(0), inst.imm(1), flow)?,
        Exitz => control::exit(inst, ctx, flow, |m| m == 0),
        Exitnz => control::exit(inst, ctx, flow, |m| m != 0),
        Exitpos => control::exit(inst, ctx, flow, |m| (m as i32) > 0),
        Exitneg => control::exit(inst, ctx, flow, |m| (m as i32) < 0),

        // ---- CSRs ----
        Get => csr_access::get(inst, ctx, env, pc)?,
        Put => csr_access::put(inst, ctx, env, flow)?,
        Uget => csr_access::uget(inst, ctx, out)?,
        Uput => csr_access::uput(inst, ctx, out)?,
        Atom => integer::atom(inst, ctx),

        // ---- loads and stores: base + delta + scaled offset (main) ----
        Ld32M => memory::load32(inst, ctx, env, Mode::Imm, File::M, memory::word)?,
        Ld32A => memory::load32(inst, ctx, env, Mode::Imm, File::A, memory::word)?,
        Ld64 => memory::load64(inst, ctx, env, Mode::Imm)?,
        Ld128 => memory::load128(inst, ctx, env, Mode::Imm)?,
        Ldz8 => memory::load32(inst, ctx, env, Mode::Imm, File::M, memory::zext8)?,
        Lds8 => memory::load32(inst, ctx, env, Mode::Imm, File::M, memory::sext8)?,
        Ldz16 => memory::load32(inst, ctx, env, Mode::Imm, File::M, memory::zext16)?,
        Lds16 => memory::load32(inst, ctx, env, Mode::Imm, File::M, memory::sext16)?,
        Ldb16 => memory::load32(inst, ctx, env, Mode::Imm, File::A, memory::bcast16)?,
        Ldb8 => memory::load32(inst, ctx, env, Mode::Imm, File::A, memory::bcast8)?,
        St32M => memory::store32(inst, ctx, env, Mode::Imm, File::M)?,
        St32A => memory::store32(inst, ctx, env, Mode::Imm, File::A)?,
        St64 => memory::store64(inst, ctx, env, Mode::Imm)?,
        Stm32 => memory::stm32(inst, ctx, env)?,
        Ld32MReg => memory::load32(inst, ctx, env, Mode::Reg, File::M, memory::word)?,
        Ld32AReg => memory::load32(inst, ctx, env, Mode::Reg, File::A, memory::word)?,
        Ld64Reg => memory::load64(inst, ctx, env, Mode::Reg)?,
        Ld128Reg => memory::load128(inst, ctx, env, Mode::Reg)?,
        St32MReg => memory::store32(inst, ctx, env, Mode::Reg, File::M)?,
        St32AReg => memory::store32(inst, ctx, env, Mode::Reg, File::A)?,
        St64Reg => memory::store64(inst, ctx, env, Mode::Reg)?,
        Ldz8Reg => memory::load32(inst, ctx, env, Mode::Reg, File::M, memory::zext8)?,
        Lds8Reg => memory::load32(inst, ctx, env, Mode::Reg, File::M, memory::sext8)?,
        Ldz16Reg => memory::load32(inst, ctx, env, Mode::Reg, File::M, memory::zext16)?,
        Lds16Reg => memory::load32(inst, ctx, env, Mode::Reg, File::M, memory::sext16)?,
        Ldb16Reg => memory::load32(inst, ctx, env, Mode::Reg, File::A, memory::bcast16)?,
        Ldb8Reg => memory::load32(inst, ctx, env, Mode::Reg, File::A, memory::bcast8)?,

        // ---- step forms (main) ----
        Ld32StepM => memory::load32(inst, ctx, env, Mode::StepImm, File::M, memory::word)?,
        Ld32StepA => memory::load32(inst, ctx, env, Mode::StepImm, File::A, memory::word)?,
        Ld64Step => memory::load64(inst, ctx, env, Mode::StepImm)?,
        Ldd16a32 => {
            let data = memory::ldd16::<E, 4>(inst, ctx, env)?;
            ctx.write_a(inst.reg(0), memory::word(data));
        }
        Ldd16a64 => {
            let data = memory::ldd16::<E, 8>(inst, ctx, env)?;
            ctx.write_a64(inst.reg(0), u64::from_le_bytes(data));
        }
        Ldd16b16 => {
            let data = memory::ldd16::<E, 2>(inst, ctx, env)?;
            ctx.write_a(inst.reg(0), memory::bcast16(data));
        }
        Ld128Step => memory::load128(inst, ctx, env, Mode::StepImm)?,
        St32StepM => memory::store32(inst, ctx, env, Mode::StepImm, File::M)?,
        St32StepA => memory::store32(inst, ctx, env, Mode::StepImm, File::A)?,
        St64Step => memory::store64(inst, ctx, env, Mode::StepImm)?,
        Ldz8Step => memory::load32(inst, ctx, env, Mode::StepImm, File::M, memory::zext8)?,
        Ldz16Step => memory::load32(inst, ctx, env, Mode::StepImm, File::M, memory::zext16)?,
        Lds16Step => memory::load32(inst, ctx, env, Mode::StepImm, File::M, memory::sext16)?,
        Ldb16Step => memory::load32(inst, ctx, env, Mode::StepImm, File::A, memory::bcast16)?,
        Ld32StepMReg => memory::load32(inst, ctx, env, Mode::StepReg, File::M, memory::word)?,
        Ld32StepAReg => memory::load32(inst, ctx, env, Mode::StepReg, File::A, memory::word)?,
        Ld64StepReg => memory::load64(inst, ctx, env, Mode::StepReg)?,
        Ld128StepReg => memory::load128(inst, ctx, env, Mode::StepReg)?,
        St32StepMReg => memory::store32(inst, ctx, env, Mode::StepReg, File::M)?,
        St32StepAReg => memory::store32(inst, ctx, env, Mode::StepReg, File::A)?,
        St64StepReg => memory::store64(inst, ctx, env, Mode::StepReg)?,
        Ldz8StepMReg => memory::load32(inst, ctx, env, Mode::StepReg, File::M, memory::zext8)?,
        Ldz16StepMReg => memory::load32(inst, ctx, env, Mode::StepReg, File::M, memory::zext16)?,
        Lds16StepMReg => memory::load32(inst, ctx, env, Mode::StepReg, File::M, memory::sext16)?,
        Ldb16StepAReg => memory::load32(inst, ctx, env, Mode::StepReg, File::A, memory::bcast16)?,

        // ---- triple-packed addresses (main) ----
        Tapack => pace::tapack(inst, ctx)?,
        Ld2x64pace => pace::ld2x64pace(inst, ctx, env)?,
        Ldst64pace => pace::ldst64pace(inst, ctx, env)?,
        Ld2xst64pace => pace::ld2xst64pace(inst, ctx, env)?,
        St64pace => pace::st64pace(inst, ctx, env)?,

        // ---- aux: moves and immediates ----
        Fnop => {}
        SetziA => out.write_a(inst.reg(0), inst.imm(1)),
        MovA => regs::aux_unary(inst, ctx, out, |a| a),

        // ---- aux: bitwise on the ARF ----
        AndA => regs::aux_binary(inst, ctx, out, bitwise::and),
        AndImmA | AndImmHiA => regs::aux_reg_imm(inst, ctx, out, bitwise::and),
        AndcA => regs::aux_binary(inst, ctx, out, bitwise::andc),
        AndcImmA | AndcImmHiA => regs::aux_reg_imm(inst, ctx, out, bitwise::andc),
        OrA => regs::aux_binary(inst, ctx, out, bitwise::or),
        OrImmA | OrImmHiA => regs::aux_reg_imm(inst, ctx, out, bitwise::or),
        NotA => regs::aux_unary(inst, ctx, out, bitwise::not),
        And64 => regs::aux_binary64(inst, ctx, out, bitwise::and64),
        Andc64 => regs::aux_binary64(inst, ctx, out, bitwise::andc64),
        Or64 => regs::aux_binary64(inst, ctx, out, bitwise::or64),
        Not64 => regs::aux_unary64(inst, ctx, out, bitwise::not64),

        // ---- aux: f16 / f32 arithmetic and compares ----
        F16v2add => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_add)),
        F16v2sub => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_sub)),
        F16v2mul => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_mul)),
        F16v2max => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_max)),
        F16v2min => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_min)),
        F16v2cmpeq => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmpeq)),
        F16v2cmpne => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmpne)),
        F16v2cmplt => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmplt)),
        F16v2cmple => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmple)),
        F16v2cmpgt => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmpgt)),
        F16v2cmpge => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_cmpge)),
        F16v4add => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_add)),
        F16v4sub => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_sub)),
        F16v4mul => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_mul)),
        F16v4max => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_max)),
        F16v4min => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_min)),
        F16v4cmpeq => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmpeq)),
        F16v4cmpne => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmpne)),
        F16v4cmplt => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmplt)),
        F16v4cmple => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmple)),
        F16v4cmpgt => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmpgt)),
        F16v4cmpge => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_cmpge)),
        F32add => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_add)),
        F32sub => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_sub)),
        F32mul => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_mul)),
        F32max => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_max)),
        F32min => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_min)),
        F32cmpeq => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmpeq)),
        F32cmplt => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmplt)),
        F32cmpne => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmpne)),
        F32cmple => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmple)),
        F32cmpgt => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmpgt)),
        F32cmpge => regs::aux_binary(inst, ctx, out, float::f32cmp(nx::f32_cmpge)),
        F32absadd => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_absadd)),
        F32clamp => clamp::f32(inst, ctx, out),
        F32div => regs::aux_binary(inst, ctx, out, float::f32x1(nx::f32_div)),
        F32v2add => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_add)),
        F32v2sub => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_sub)),
        F32v2mul => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_mul)),
        F32v2max => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_max)),
        F32v2min => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_min)),
        F32v2cmpeq => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmpeq)),
        F32v2cmpne => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmpne)),
        F32v2cmplt => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmplt)),
        F32v2cmple => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmple)),
        F32v2cmpgt => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmpgt)),
        F32v2cmpge => regs::aux_binary64(inst, ctx, out, compare::f32x2(nx::f32_cmpge)),
        F32v2absadd => regs::aux_binary64(inst, ctx, out, float::f32x2(nx::f32_absadd)),
        F32v2clamp => regs::aux_binary64(inst, ctx, out, clamp::f32v2),
        F16v2absadd => regs::aux_binary(inst, ctx, out, float::f16x2(nx::f16_absadd)),
        F16v4absadd => regs::aux_binary64(inst, ctx, out, float::f16x4(nx::f16_absadd)),
        F16v2clamp => regs::aux_binary(inst, ctx, out, clamp::f16v2),
        F16v4clamp => clamp::f16v4(inst, ctx, out),

        // ---- aux: broadcast first sources ----
        F16v2addBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_add),
        F16v2addBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_add),
        F16v4addBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_add),
        F16v4addBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_add),
        F16v2subBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_sub),
        F16v2subBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_sub),
        F16v4subBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_sub),
        F16v4subBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_sub),
        F16v2mulBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_mul),
        F16v2mulBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_mul),
        F16v4mulBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_mul),
        F16v4mulBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_mul),
        F16v2cmpeqBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmpeq),
        F16v2cmpeqBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmpeq),
        F16v4cmpeqBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmpeq),
        F16v4cmpeqBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmpeq),
        F16v2cmpneBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmpne),
        F16v2cmpneBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmpne),
        F16v4cmpneBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmpne),
        F16v4cmpneBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmpne),
        F16v2cmpltBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmplt),
        F16v2cmpltBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmplt),
        F16v4cmpltBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmplt),
        F16v4cmpltBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmplt),
        F16v2cmpleBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmple),
        F16v2cmpleBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmple),
        F16v4cmpleBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmple),
        F16v4cmpleBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmple),
        F16v2cmpgtBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmpgt),
        F16v2cmpgtBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmpgt),
        F16v4cmpgtBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmpgt),
        F16v4cmpgtBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmpgt),
        F16v2cmpgeBl => broadcast::f16x2(inst, ctx, out, false, nx::f16_cmpge),
        F16v2cmpgeBu => broadcast::f16x2(inst, ctx, out, true, nx::f16_cmpge),
        F16v4cmpgeBl => broadcast::f16x4(inst, ctx, out, false, nx::f16_cmpge),
        F16v4cmpgeBu => broadcast::f16x4(inst, ctx, out, true, nx::f16_cmpge),
        F32v2addB => broadcast::f32x2(inst, ctx, out, float::f32x1(nx::f32_add)),
        F32v2subB => broadcast::f32x2(inst, ctx, out, float::f32x1(nx::f32_sub)),
        F32v2mulB => broadcast::f32x2(inst, ctx, out, float::f32x1(nx::f32_mul)),
        F32v2cmpeqB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmpeq)),
        F32v2cmpneB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmpne)),
        F32v2cmpltB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmplt)),
        F32v2cmpleB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmple)),
        F32v2cmpgtB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmpgt)),
        F32v2cmpgeB => broadcast::f32x2(inst, ctx, out, float::f32cmp(nx::f32_cmpge)),

        // ---- aux: accumulators ----
        F32v2axpy => accumulate::f32v2axpy(inst, ctx, out),
        F32v4acc => accumulate::f32v4acc(inst, ctx, out),
        F16v8acc => accumulate::f16v8acc(inst, ctx, out),
        F32v2gina => accumulate::f32v2gina(inst, ctx, out)?,
        F16v2gina => accumulate::f16v2gina(inst, ctx, out)?,
        F16v4acc => accumulate::f16v4acc(inst, ctx, out),
        F32mac => accumulate::f32mac(inst, ctx, out),
        F32v2mac => accumulate::f32v2mac(inst, ctx, out),
        F16v2cmac => accumulate::f16v2cmac(inst, ctx, out),
        F16v4cmac => accumulate::f16v4cmac(inst, ctx, out),
        F16v4mix => accumulate::f16v4mix(inst, ctx, out),
        F32v4sqacc => accumulate::f32v4termacc(inst, ctx, out, accumulate::Term::Square),
        F16v8sqacc => accumulate::f16v8termacc(inst, ctx, out, accumulate::Term::Square),
        F32v4absacc => accumulate::f32v4termacc(inst, ctx, out, accumulate::Term::Abs),
        F16v8absacc => accumulate::f16v8termacc(inst, ctx, out, accumulate::Term::Abs),
        F16v4absacc => accumulate::f16v4absacc(inst, ctx, out),
        F16v4gacc => accumulate::f16v4gacc(inst, ctx, out),
        F16v4istacc => stacc::f16v4istacc(inst, ctx, out)?,
        F16v4stacc => stacc::f16v4stacc(inst, ctx, out)?,

        // ---- aux: transcendental and special ----
        F32exp => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_exp)),
        F16v2exp => regs::aux_unary(inst, ctx, out, float::f16x2u(nx::f16_exp)),
        F32tanh => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_tanh)),
        F16v2tanh => regs::aux_unary(inst, ctx, out, float::f16x2u(nx::f16_tanh)),
        F32oorx => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_oorx)),
        F32sqrt => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_sqrt)),
        F32oox => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_oox)),
        F32sigm => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_sigm)),
        F16v2sigm => regs::aux_unary(inst, ctx, out, float::f16x2u(nx::f16_sigm)),
        F32ln => regs::aux_unary(inst, ctx, out, float::f32u(nx::f32_ln)),
        F16v2ln => regs::aux_unary(inst, ctx, out, float::f16x2u(nx::f16_ln)),
        F32class => regs::aux_unary(inst, ctx, out, |x| nx::f32_class(x) as u32),
        Urand32 => random::urand32(inst, ctx, out),
        Urand64 => random::urand64(inst, ctx, out),
        F16v2grand => random::f16v2grand(inst, ctx, out),
        F32v2grand => random::f32v2grand(inst, ctx, out),
        F16v4rmask => random::f16v4rmask(inst, ctx, out),
        F32v2rmask => random::f32v2rmask(inst, ctx, out),

        // ---- aux: conversions ----
        F16v2tof32 => convert::f16v2tof32(inst, ctx, out),
        F16tof32 => convert::f16tof32(inst, ctx, out),
        F32v2tof16 => convert::f32v2tof16(inst, ctx, out),
        F32tof16 => convert::f32tof16(inst, ctx, out),
        F32v4tof16 => convert::f32v4tof16(inst, ctx, out),
        F16v2tof8 => convert::f16v2tof8(inst, ctx, out),
        F16v8tof8 => convert::f16v8tof8(inst, ctx, out),
        F8v2tof16 => convert::f8v2tof16(inst, ctx, out),
        F8v4tof16 => convert::f8v4tof16(inst, ctx, out),
        F32toi32 => regs::aux_unary(inst, ctx, out, integral::f32toi32),
        F32toui32 => regs::aux_unary(inst, ctx, out, integral::f32toui32),
        F32fromi32 => regs::aux_unary(inst, ctx, out, integral::f32fromi32),
        F32fromui32 => regs::aux_unary(inst, ctx, out, integral::f32fromui32),
        F16v4sufromui => regs::aux_unary64(inst, ctx, out, convert::f16v4sufromui),
        F32v2sufromui => regs::aux_unary64(inst, ctx, out, convert::f32v2sufromui),
        F32int => integral::f32int(inst, ctx, out)?,

        // ---- aux: permutes ----
        Sort4x16loA => regs::aux_binary(inst, ctx, out, permute::sort4x16lo),
        Sort4x16hiA => regs::aux_binary(inst, ctx, out, permute::sort4x16hi),
        Roll16A => regs::aux_binary(inst, ctx, out, permute::roll16),
        Swap16A => regs::aux_unary(inst, ctx, out, permute::swap16),
        Sort4x32lo => regs::aux_binary64(inst, ctx, out, permute::sort4x32lo),
        Sort4x32hi => regs::aux_binary64(inst, ctx, out, permute::sort4x32hi),
        Sort8x8loA => regs::aux_binary(inst, ctx, out, permute::sort8x8lo),
        Sort8x8hiA => regs::aux_binary(inst, ctx, out, permute::sort8x8hi),
        Shuf8x8loA => regs::aux_binary(inst, ctx, out, permute::shuf8x8lo),
        Shuf8x8hiA => regs::aux_binary(inst, ctx, out, permute::shuf8x8hi),
        Roll8lA => regs::aux_binary(inst, ctx, out, permute::roll8l),
        Roll8rA => regs::aux_binary(inst, ctx, out, permute::roll8r),
        Roll32 => regs::aux_binary64(inst, ctx, out, permute::roll32),

        // ---- AMP (aux) ----
        F16v4hihov4amp => amp::f16v4hihov4amp(inst, ctx, env, out)?,
        F8v8hihov4amp => amp::f8v8hihov4amp(inst, ctx, env, out)?,
        F16v4sisoamp => amp::f16v4sisoamp(inst, ctx, env, out)?,
        F16v4hihoamp => amp::f16v4hihoamp(inst, ctx, env, out)?,
        F32sisoamp => amp::f32sisoamp(inst, ctx, env, out)?,
        F32sisov2amp => amp::f32sisov2amp(inst, ctx, env, out)?,
        F16v4sisoslic => slic::f16v4sisoslic(inst, ctx, env, out)?,
        F16v4hihoslic => slic::f16v4hihoslic(inst, ctx, env, out)?,
        F16v4hihov4slic => slic::f16v4hihov4slic(inst, ctx, env, out)?,

        // ---- supervisor (main) ----
        Run => supervisor::run(inst, ctx, flow)?,
        Runall => supervisor::runall(inst, ctx, flow)?,
        Sync => supervisor::sync(inst, flow),
        Send => supervisor::send(inst, flow),
        Delay => supervisor::delay(inst, flow),
        Ld64putcs => supervisor::ldputcs::<E, 8>(inst, ctx, env)?,
        Ld128putcs => supervisor::ldputcs::<E, 16>(inst, ctx, env)?,
    }
    Ok(())
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
