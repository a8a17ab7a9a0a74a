//! CSR access: `get`/`put` (lower space, MRF, both contexts) and `uget`/`uput` (upper space,
//! ARF, workers; an aux instruction, so its writes go through the pending buffer).
//!
//! An index must name a CSR of the executing context's view ([`crate::csr::csr_at`]), else
//! `NoSuchCsr`.
//!
//! Reads: `$PC` gives the bundle's own address; `$COUNT_L/U` the tile cycle counter;
//! `$VERTEX_BASE`/`$WORKER_BASE` the `$m13`/`$m12` values; `$TILE_ID` the environment's id; every
//! other CSR the context's stored value (the tile keeps `$CTXT_STS` and `$SSR` up to date in the
//! supervisor's `csr` array).
//!
//! Writes: `$PC`, `$TILE_ID`, `$COUNT_*`, `$CTXT_STS`, `$WSR`, `$VERTEX_BASE`, `$WORKER_BASE`
//! and `$REPEAT_*` are read-only (`ReadOnlyCsr`). Other writes are stored. `$CR` with ZCWEI
//! zeroes every `$CWEI`. A write to `$CR` or to an exchange CSR (index ≥ 0xA0) is reported as
//! [`Effect::CsrWritten`] so the tile can act on it.
//!
//! Not modelled (project choice, \[A\]): floating-point exceptions and their enables, rounding
//! modes other than round-to-nearest-even, and stochastic rounding. So a write to `$FP_ICTL`
//! or `$FP_CTL` that sets any bit other than NANOO traps `Unmodelled` naming the field, and the
//! model never raises `$FP_STS` flags: it reads 0 unless software writes it. `$FP_CLR` reads 0;
//! writing it clears the `$FP_STS` bits named by INV/DIV0/OFLO and, with ZAACC, zeroes the
//! accumulators and the AMP pipeline. `$PRNG_SEED` reads 0; writing v sets the PRNG state to
//! {v, !v, (v << 13) | (!v >> 19), (!v << 13) | (v >> 19)} (isa.md §2.2).

use super::regs::{write_m, Flow, Pending};
use super::state::{AmpState, ContextState, AACC_COUNT};
use super::{Effect, ExecEnv, Trap, TrapKind};
use crate::csr::{csr_at, field, index, CsrDesc, CsrSpace};
use crate::inst::Inst;

/// First exchange CSR index (supervisor).
const EXCHANGE_CSR_BASE: u8 = 0xA0;
/// `$FP_CLR` bits INV, DIV0, OFLO (they clear the same `$FP_STS` bits).
const FP_FLAG_BITS: u32 = 0x7;

fn lookup(space: CsrSpace, idx: u32, ctx: &ContextState) -> Result<&'static CsrDesc, Trap> {
    let supervisor = ctx.kind.is_supervisor();
    let idx = idx as u8;
    csr_at(space, idx, supervisor).ok_or_else(|| {
        let space = match space {
            CsrSpace::Lower => "lower",
            CsrSpace::Upper => "upper",
        };
        TrapKind::NoSuchCsr {
            space,
            index: idx,
            context: ctx.kind.name(),
        }
        .into()
    })
}

/// `get $mD, csr`.
pub(super) fn get<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &E,
    pc: u32,
) -> Result<(), Trap> {
    let desc = lookup(CsrSpace::Lower, inst.imm(1), ctx)?;
    let supervisor = ctx.kind.is_supervisor();
    let value = match desc.index {
        index::PC => pc,
        index::COUNT_L => env.cycle() as u32,
        index::COUNT_U => (env.cycle() >> 32) as u32,
        index::VERTEX_BASE if !supervisor => ctx.read_m(crate::registers::M_VERTEX_BASE as usize),
        index::WORKER_BASE if !supervisor => ctx.read_m(crate::registers::M_WORKER_BASE as usize),
        index::TILE_ID if supervisor => env.tile_id(),
        other => ctx.csr[other as usize],
    };
    write_m(ctx, inst.reg(0), value);
    Ok(())
}

fn read_only(desc: &CsrDesc, supervisor: bool) -> bool {
    match desc.index {
        index::PC | index::COUNT_L | index::COUNT_U => true,
        // Supervisor 3 is $TILE_ID; worker 1..=6 are $WSR, the bases and $REPEAT_*.
        index::TILE_ID if supervisor => true,
        index::CTXT_STS if supervisor => true,
        index::WSR..=index::REPEAT_END if !supervisor => true,
        _ => false,
    }
}

/// The first unmodelled `$FP_CTL`/`$FP_ICTL` field a value sets, if any.
fn unmodelled_fp_ctl(csr: &str, value: u32) -> Result<(), Trap> {
    let other = value & !field::FP_CTL_NANOO;
    if other == 0 {
        return Ok(());
    }
    let what = if other & 0x7 != 0 {
        format!("{csr}.INV/DIV0/OFLO (floating-point exception enables) in {value:#x}")
    } else if other & field::FP_CTL_ESR != 0 {
        format!("{csr}.ESR (stochastic rounding) in {value:#x}")
    } else if other & (0x7 << 16) != 0 {
        format!("{csr}.RND (rounding modes other than round-to-nearest-even) in {value:#x}")
    } else {
        format!("{csr} reserved bits {other:#x} in {value:#x}")
    };
    Err(TrapKind::Unmodelled { what }.into())
}

/// `put csr, $mS`.
pub(super) fn put<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
    flow: &mut Flow,
) -> Result<(), Trap> {
    let desc = lookup(CsrSpace::Lower, inst.imm(0), ctx)?;
    let supervisor = ctx.kind.is_supervisor();
    if read_only(desc, supervisor) {
        return Err(TrapKind::ReadOnlyCsr { name: desc.name }.into());
    }
    let value = ctx.read_m(inst.reg(1));
    if supervisor {
        match desc.index {
            index::FP_ICTL => unmodelled_fp_ctl("$FP_ICTL", value)?,
            index::CR => {
                if value & field::CR_ZCWEI != 0 {
                    *env.cwei_mut() = [0; crate::csr::CWEI_COUNT];
                }
                flow.effect = Effect::CsrWritten {
                    index: desc.index,
                    value,
                };
            }
            i if i >= EXCHANGE_CSR_BASE => flow.effect = Effect::CsrWritten { index: i, value },
            _ => {}
        }
    }
    ctx.csr[desc.index as usize] = value;
    Ok(())
}

/// `uget $aD, csr`.
pub(super) fn uget(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let desc = lookup(CsrSpace::Upper, inst.imm(1), ctx)?;
    let value = match desc.index {
        index::FP_CLR | index::PRNG_SEED => 0,
        other => ctx.ucsr[other as usize],
    };
    out.write_a(inst.reg(0), value);
    Ok(())
}

/// `uput csr, $aS`.
pub(super) fn uput(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let desc = lookup(CsrSpace::Upper, inst.imm(0), ctx)?;
    let value = ctx.read_a(inst.reg(1));
    match desc.index {
        index::FP_CLR => {
            let sts = ctx.ucsr[index::FP_STS as usize];
            out.write_ucsr(index::FP_STS, sts & !(value & FP_FLAG_BITS));
            if value & field::FP_CLR_ZAACC != 0 {
                out.aacc = Some([0.0; AACC_COUNT]);
                out.amp = Some(AmpState::default());
            }
        }
        index::FP_CTL => {
            unmodelled_fp_ctl("$FP_CTL", value)?;
            out.write_ucsr(index::FP_CTL, value);
        }
        index::PRNG_SEED => {
            let (v, n) = (value, !value);
            out.write_ucsr(index::PRNG_0_0, v);
            out.write_ucsr(index::PRNG_0_1, n);
            out.write_ucsr(index::PRNG_1_0, (v << 13) | (n >> 19));
            out.write_ucsr(index::PRNG_1_1, (n << 13) | (v >> 19));
        }
        other => out.write_ucsr(other, value),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::csr::{field, index};
    use crate::inst::Opcode::*;
    use crate::semantics::test_env::*;
    use crate::semantics::{Effect, TrapKind};

    #[test]
    fn worker_get() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.launch(CODE, 0x5_0000, 0x6_0000, 0);
        env.cycle = 0x1_2345_6789;
        let reads = [
            (index::PC, CODE),
            (index::COUNT_L, 0x2345_6789),
            (index::COUNT_U, 1),
            (index::VERTEX_BASE, 0x5_0000),
            (index::WORKER_BASE, 0x6_0000),
            (index::WSR, 0),
        ];
        for (csr, expected) in reads {
            let pc = ctx.pc;
            ok(&mut ctx, &mut env, one(Get, &[0, csr as u32]));
            let expected = if csr == index::PC { pc } else { expected };
            assert_eq!(ctx.m[0], expected, "csr {csr:#x}");
        }
        let mut w3 = crate::semantics::ContextState::new(crate::semantics::ContextKind::Worker(3));
        ok(&mut w3, &mut env, one(Get, &[0, index::WSR as u32]));
        assert_eq!(w3.m[0] & field::WSR_CTXTID_M1_MASK, 3);
        // Supervisor-only and unknown indices do not exist for a worker.
        for missing in [index::CCCSLOAD, 0x40, index::CTXT_STS] {
            let kind = traps(&mut ctx, &mut env, one(Get, &[0, missing as u32]));
            assert_eq!(
                kind,
                TrapKind::NoSuchCsr {
                    space: "lower",
                    index: missing,
                    context: "worker 0"
                }
            );
        }
    }

    #[test]
    fn supervisor_get_and_put() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        env.tile_id = 77;
        ok(&mut sup, &mut env, one(Get, &[0, index::TILE_ID as u32]));
        assert_eq!(sup.m[0], 77);
        sup.m[1] = 0x5_0000;
        let outcome = ok(&mut sup, &mut env, one(Put, &[index::CCCSLOAD as u32, 1]));
        assert_eq!(outcome.effect, Effect::None);
        ok(&mut sup, &mut env, one(Get, &[2, index::CCCSLOAD as u32]));
        assert_eq!(sup.m[2], 0x5_0000);
        // Index 4 is a worker CSR ($REPEAT_COUNT).
        assert!(matches!(
            traps(&mut sup, &mut env, one(Get, &[0, 4])),
            TrapKind::NoSuchCsr { .. }
        ));
    }

    #[test]
    fn read_only_csrs() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for (csr, name) in [
            (index::PC, "$PC"),
            (index::WSR, "$WSR"),
            (index::VERTEX_BASE, "$VERTEX_BASE"),
            (index::WORKER_BASE, "$WORKER_BASE"),
            (index::REPEAT_COUNT, "$REPEAT_COUNT"),
            (index::REPEAT_FIRST, "$REPEAT_FIRST"),
            (index::REPEAT_END, "$REPEAT_END"),
            (index::COUNT_L, "$COUNT_L"),
            (index::COUNT_U, "$COUNT_U"),
        ] {
            assert_eq!(
                traps(&mut ctx, &mut env, one(Put, &[csr as u32, 0])),
                TrapKind::ReadOnlyCsr { name }
            );
        }
        let mut sup = supervisor();
        for (csr, name) in [
            (index::TILE_ID, "$TILE_ID"),
            (index::CTXT_STS, "$CTXT_STS"),
            (index::PC, "$PC"),
        ] {
            assert_eq!(
                traps(&mut sup, &mut env, one(Put, &[csr as u32, 0])),
                TrapKind::ReadOnlyCsr { name }
            );
        }
        // $DBG_DATA is writable in both contexts.
        ctx.m[1] = 5;
        ok(&mut ctx, &mut env, one(Put, &[index::DBG_DATA as u32, 1]));
        assert_eq!(ctx.csr[index::DBG_DATA as usize], 5);
    }

    #[test]
    fn cr_and_exchange_writes_are_reported() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        env.cwei = [0x1234; crate::csr::CWEI_COUNT];
        sup.m[1] = field::CR_ZCWEI;
        sup.m[2] = 1;
        let outcome = ok(&mut sup, &mut env, one(Put, &[index::CR as u32, 2]));
        assert_eq!(
            outcome.effect,
            Effect::CsrWritten {
                index: index::CR,
                value: 1
            }
        );
        assert_eq!(env.cwei[0], 0x1234);
        let outcome = ok(&mut sup, &mut env, one(Put, &[index::CR as u32, 1]));
        assert_eq!(
            outcome.effect,
            Effect::CsrWritten {
                index: index::CR,
                value: field::CR_ZCWEI
            }
        );
        assert!(env.cwei.iter().all(|&w| w == 0));
        sup.m[3] = 0x8_0000;
        let outcome = ok(
            &mut sup,
            &mut env,
            one(Put, &[index::INCOMING_BASE as u32, 3]),
        );
        assert_eq!(
            outcome.effect,
            Effect::CsrWritten {
                index: index::INCOMING_BASE,
                value: 0x8_0000
            }
        );
        assert_eq!(sup.csr[index::INCOMING_BASE as usize], 0x8_0000);
    }

    #[test]
    fn fp_ictl_accepts_only_nanoo() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        sup.m[1] = field::FP_CTL_NANOO;
        ok(&mut sup, &mut env, one(Put, &[index::FP_ICTL as u32, 1]));
        assert_eq!(sup.csr[index::FP_ICTL as usize], field::FP_CTL_NANOO);
        for (value, name) in [
            (field::FP_CTL_ESR, "ESR"),
            (1 << 16, "RND"),
            (1, "INV"),
            (1 << 25, "reserved"),
        ] {
            sup.m[1] = value | field::FP_CTL_NANOO;
            let trap = traps(&mut sup, &mut env, one(Put, &[index::FP_ICTL as u32, 1]));
            let TrapKind::Unmodelled { what } = &trap else {
                panic!("{trap:?}")
            };
            assert!(what.contains(name) && what.contains("$FP_ICTL"), "{what}");
        }
    }

    #[test]
    fn upper_space() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        // $TAS round trip.
        ctx.a[1] = 2.5f32.to_bits();
        ok(&mut ctx, &mut env, one(Uput, &[index::TAS as u32, 1]));
        ok(&mut ctx, &mut env, one(Uget, &[2, index::TAS as u32]));
        assert_eq!(ctx.a[2], 2.5f32.to_bits());
        // $FP_CTL: NANOO only.
        ctx.a[1] = field::FP_CTL_NANOO;
        ok(&mut ctx, &mut env, one(Uput, &[index::FP_CTL as u32, 1]));
        assert_eq!(ctx.ucsr[index::FP_CTL as usize], field::FP_CTL_NANOO);
        ctx.a[1] = field::FP_CTL_ESR;
        let trap = traps(&mut ctx, &mut env, one(Uput, &[index::FP_CTL as u32, 1]));
        let TrapKind::Unmodelled { what } = &trap else {
            panic!("{trap:?}")
        };
        assert!(what.contains("$FP_CTL.ESR"), "{what}");
        // $PRNG_SEED sets the state and reads 0.
        let v = 0x1234_5678u32;
        ctx.a[1] = v;
        ok(&mut ctx, &mut env, one(Uput, &[index::PRNG_SEED as u32, 1]));
        let state = [v, !v, (v << 13) | (!v >> 19), (!v << 13) | (v >> 19)];
        assert_eq!(
            &ctx.ucsr[index::PRNG_0_0 as usize..=index::PRNG_1_1 as usize],
            &state
        );
        ok(&mut ctx, &mut env, one(Uget, &[2, index::PRNG_SEED as u32]));
        assert_eq!(ctx.a[2], 0);
        // FP_STS is never raised; FP_CLR reads 0 and clears flags.
        ctx.ucsr[index::FP_STS as usize] = 0b111;
        ctx.a[1] = 0b101;
        ok(&mut ctx, &mut env, one(Uput, &[index::FP_CLR as u32, 1]));
        assert_eq!(ctx.ucsr[index::FP_STS as usize], 0b010);
        ok(&mut ctx, &mut env, one(Uget, &[2, index::FP_CLR as u32]));
        assert_eq!(ctx.a[2], 0);
        // Unknown index; supervisor has no upper space.
        let kind = traps(&mut ctx, &mut env, one(Uget, &[2, 12]));
        assert_eq!(
            kind,
            TrapKind::NoSuchCsr {
                space: "upper",
                index: 12,
                context: "worker 0"
            }
        );
        assert!(matches!(
            traps(&mut supervisor(), &mut env, one(Uget, &[2, 8])),
            TrapKind::WrongContext { .. }
        ));
    }

    #[test]
    fn zaacc_clears_accumulators_and_the_amp_pipeline() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.aacc = [1.0; crate::semantics::AACC_COUNT];
        ctx.amp.pending[3] = 2.0;
        ctx.amp.accumulating[7] = 3.0;
        ctx.amp.finished[15] = 4.0;
        ctx.ucsr[index::FP_STS as usize] = 0b1;
        ctx.a[1] = field::FP_CLR_ZAACC;
        ok(&mut ctx, &mut env, one(Uput, &[index::FP_CLR as u32, 1]));
        assert!(ctx.aacc.iter().all(|&x| x == 0.0));
        assert_eq!(ctx.amp, crate::semantics::AmpState::default());
        assert_eq!(
            ctx.ucsr[index::FP_STS as usize],
            0b1,
            "ZAACC alone leaves the flags"
        );
    }
}
