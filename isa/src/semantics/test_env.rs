//! Test support (cfg(test) only): a flat-memory [`ExecEnv`], context constructors, bundle
//! builders and a tiny program runner shared by the family tests.

use super::{
    step_bundle, step_prepared, ContextKind, ContextState, CweiLanes, Effect, ExecEnv,
    PreparedBundle, StepOutcome, Trap,
};
use crate::csr::CWEI_COUNT;
use crate::inst::{Bundle, Inst, Opcode};
use std::collections::BTreeMap;

/// First byte of tile memory (`TMEM_REGION0_BASE_ADDR`).
pub const MEM_BASE: u32 = 0x4C000;
/// 624 KiB of tile memory.
pub const MEM_SIZE: usize = 624 * 1024;
/// Start of the interleaved region (16-byte accesses allowed from here on).
pub const INTERLEAVED_BASE: u32 = 0x80000;

/// Flat tile memory with natural-alignment checks, `$CWEI`, supervisor CSRs, a cycle counter and an id.
pub struct TestEnv {
    pub mem: Vec<u8>,
    pub cwei: [u64; CWEI_COUNT],
    pub supervisor_csr: [u32; 256],
    pub cycle: u64,
    pub tile_id: u32,
    /// Every `check_parallel_accesses` call, in order.
    pub parallel: Vec<Vec<(u32, u32)>>,
    /// Decoded `$CWEI` kept between AMP calls (`None`: decoded per call), invalidated by
    /// `cwei_mut` as the simulator's environment does. Tests that write `cwei` directly
    /// between calls must call `invalidate` on it themselves.
    pub lanes: Option<CweiLanes>,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv {
            mem: vec![0; MEM_SIZE],
            cwei: [0; CWEI_COUNT],
            supervisor_csr: [0; 256],
            cycle: 0,
            tile_id: 0,
            parallel: Vec::new(),
            lanes: None,
        }
    }

    fn range(&self, addr: u32, size: usize) -> Result<std::ops::Range<usize>, Trap> {
        if !matches!(size, 1 | 2 | 4 | 8 | 16) {
            return Err(Trap::memory(format!("bad access size {size}")));
        }
        if !addr.is_multiple_of(size as u32) {
            return Err(Trap::memory(format!(
                "{addr:#x} is not {size}-byte aligned"
            )));
        }
        let offset = addr.wrapping_sub(MEM_BASE) as usize;
        if addr < MEM_BASE || offset + size > MEM_SIZE {
            return Err(Trap::memory(format!("{addr:#x} is outside tile memory")));
        }
        Ok(offset..offset + size)
    }

    /// The memory element of an address: 16 KiB elements below 0x80000, interleaved pairs of
    /// 32 KiB (bit 3 picks the element) above.
    fn element(addr: u32) -> u32 {
        if addr < INTERLEAVED_BASE {
            addr.wrapping_sub(MEM_BASE) / 0x4000
        } else {
            1000 + ((addr - INTERLEAVED_BASE) / 0x8000) * 2 + ((addr >> 3) & 1)
        }
    }

    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) {
        let offset = (addr - MEM_BASE) as usize;
        self.mem[offset..offset + data.len()].copy_from_slice(data);
    }

    pub fn read_bytes(&self, addr: u32, len: usize) -> &[u8] {
        let offset = (addr - MEM_BASE) as usize;
        &self.mem[offset..offset + len]
    }

    pub fn write_u32(&mut self, addr: u32, value: u32) {
        self.write_bytes(addr, &value.to_le_bytes());
    }

    pub fn write_u64(&mut self, addr: u32, value: u64) {
        self.write_bytes(addr, &value.to_le_bytes());
    }

    pub fn read_u32(&self, addr: u32) -> u32 {
        u32::from_le_bytes(self.read_bytes(addr, 4).try_into().unwrap())
    }

    pub fn read_u64(&self, addr: u32) -> u64 {
        u64::from_le_bytes(self.read_bytes(addr, 8).try_into().unwrap())
    }
}

impl ExecEnv for TestEnv {
    fn load(&mut self, addr: u32, out: &mut [u8]) -> Result<(), Trap> {
        if out.len() == 16 && addr < INTERLEAVED_BASE {
            return Err(Trap::memory(format!(
                "128-bit access at {addr:#x} outside interleaved memory"
            )));
        }
        let range = self.range(addr, out.len())?;
        out.copy_from_slice(&self.mem[range]);
        Ok(())
    }

    fn store(&mut self, addr: u32, data: &[u8]) -> Result<(), Trap> {
        if !matches!(data.len(), 4 | 8) {
            return Err(Trap::memory(format!("bad store size {}", data.len())));
        }
        let range = self.range(addr, data.len())?;
        self.mem[range].copy_from_slice(data);
        Ok(())
    }

    fn check_parallel_accesses(&mut self, accesses: &[(u32, u32)]) -> Result<(), Trap> {
        self.parallel.push(accesses.to_vec());
        for (i, &(a, _)) in accesses.iter().enumerate() {
            for &(b, _) in &accesses[i + 1..] {
                if Self::element(a) == Self::element(b) {
                    return Err(Trap::memory(format!(
                        "{a:#x} and {b:#x} are in the same memory element"
                    )));
                }
            }
        }
        Ok(())
    }

    fn cwei(&self) -> &[u64; CWEI_COUNT] {
        &self.cwei
    }

    fn cwei_mut(&mut self) -> &mut [u64; CWEI_COUNT] {
        if let Some(lanes) = &mut self.lanes {
            lanes.invalidate();
        }
        &mut self.cwei
    }

    fn cwei_lanes(&mut self) -> Option<&mut CweiLanes> {
        self.lanes.as_mut()
    }

    fn supervisor_csr(&self, index: u8) -> u32 {
        self.supervisor_csr[index as usize]
    }

    fn cycle(&self) -> u64 {
        self.cycle
    }

    fn tile_id(&self) -> u32 {
        self.tile_id
    }
}

/// Code address used by single-bundle tests.
pub const CODE: u32 = 0x4C100;

pub fn worker() -> ContextState {
    let mut ctx = ContextState::new(ContextKind::Worker(0));
    ctx.pc = CODE;
    ctx
}

pub fn supervisor() -> ContextState {
    let mut ctx = ContextState::new(ContextKind::Supervisor);
    ctx.pc = CODE;
    ctx
}

pub fn i(opcode: Opcode, operands: &[u32]) -> Inst {
    Inst::new(opcode, operands)
}

/// A bundle of one instruction (placed in its pipeline's slot).
pub fn one(opcode: Opcode, operands: &[u32]) -> Bundle {
    Bundle::single(i(opcode, operands))
}

/// `{ main ; aux }`.
pub fn pair(main: Inst, aux: Inst) -> Bundle {
    Bundle {
        main: Some(main),
        aux: Some(aux),
    }
}

/// Executes one bundle at `ctx.pc`, prepared as the simulator does (`step_prepared`; the
/// equivalence with `step_bundle` is tested in `execute`).
pub fn step(
    ctx: &mut ContextState,
    env: &mut TestEnv,
    bundle: Bundle,
) -> Result<StepOutcome, Trap> {
    step_prepared(&PreparedBundle::new(bundle, bundle.size()), ctx, env)
}

/// Executes one bundle at `ctx.pc` with the unprepared `step_bundle`.
pub fn step_unprepared(
    ctx: &mut ContextState,
    env: &mut TestEnv,
    bundle: Bundle,
) -> Result<StepOutcome, Trap> {
    step_bundle(&bundle, bundle.size(), ctx, env)
}

/// Executes one bundle that must not trap.
pub fn ok(ctx: &mut ContextState, env: &mut TestEnv, bundle: Bundle) -> StepOutcome {
    step(ctx, env, bundle).unwrap_or_else(|trap| panic!("{:?}: {trap}", bundle))
}

/// Executes one bundle that must trap, and checks the state did not change.
pub fn traps(ctx: &mut ContextState, env: &mut TestEnv, bundle: Bundle) -> super::TrapKind {
    let before = ctx.clone();
    let mem_before = env.mem.clone();
    let trap = step(ctx, env, bundle).expect_err("expected a trap");
    assert_eq!(*ctx, before, "a trapping bundle changed the context");
    assert!(env.mem == mem_before, "a trapping bundle changed memory");
    trap.kind
}

/// A program laid out from an address: bundles at increasing addresses.
pub struct Program {
    pub bundles: BTreeMap<u32, Bundle>,
    pub next: u32,
}

impl Program {
    pub fn new(start: u32) -> Program {
        Program {
            bundles: BTreeMap::new(),
            next: start,
        }
    }

    /// Appends a bundle and returns its address.
    pub fn push(&mut self, bundle: Bundle) -> u32 {
        let at = self.next;
        self.bundles.insert(at, bundle);
        self.next += bundle.size();
        at
    }

    /// Runs from `ctx.pc` until an `exit*` (returns its status) or a PC with no bundle; panics
    /// after `limit` bundles. Returns the trace of executed PCs and the exit status.
    pub fn run(
        &self,
        ctx: &mut ContextState,
        env: &mut TestEnv,
        limit: usize,
    ) -> Result<(Vec<u32>, Option<bool>), Trap> {
        let mut trace = Vec::new();
        for _ in 0..limit {
            let Some(bundle) = self.bundles.get(&ctx.pc).copied() else {
                return Ok((trace, None));
            };
            trace.push(ctx.pc);
            let outcome = step(ctx, env, bundle)?;
            if let Effect::Exit { status } = outcome.effect {
                return Ok((trace, Some(status)));
            }
        }
        panic!("program did not finish in {limit} bundles");
    }
}
