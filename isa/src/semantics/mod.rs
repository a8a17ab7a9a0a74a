//! Reference semantics: every instruction as a pure step over one context's architectural state,
//! the tile-shared state it may touch (through [`ExecEnv`]), and the effects only a tile can
//! carry out (launching workers, syncs, exchange), which are returned as values.
//!
//! Bundles have parallel semantics: the aux instruction reads its operands, the main instruction
//! executes, then the aux instruction's results are written. So both instructions of a bundle
//! see the registers as they were before the bundle. [A] (the public sources do not give the
//! sub-cycle write-back order; this is the order a compiler scheduling both lanes would assume.)

mod exception;
mod state;
mod trap;

pub use exception::{trap_examples, ExceptionType, ReceiveError};
pub use state::{AmpState, ContextKind, ContextState, RepeatState, AACC_COUNT, AMP_CHANNELS};
pub use trap::{Trap, TrapKind};

pub use amp::CweiLanes;

use crate::inst::Bundle;

/// `TMEM_REGION0_BASE_ADDR` on ipu2/ipu21: the first SRAM byte; `run` vertex offsets are relative to it. [C]
pub const TMEM_REGION0_BASE_ADDR: u32 = 0x4C000;

/// Tile state an instruction may touch that is not one context's registers.
///
/// The simulator implements it over its tile; a test can implement it over a flat array.
/// Every method is called from the hot loop: implementations must not allocate.
pub trait ExecEnv {
    /// Reads `out.len()` bytes (1, 2, 4, 8 or 16) at a naturally aligned address.
    fn load(&mut self, addr: u32, out: &mut [u8]) -> Result<(), Trap>;
    /// Writes `data.len()` bytes (4 or 8) at a naturally aligned address.
    fn store(&mut self, addr: u32, data: &[u8]) -> Result<(), Trap>;
    /// Checks that the memory accesses `(addr, size)` one instruction makes in one cycle touch
    /// distinct memory elements. Called before multi-access instructions (the pace family).
    fn check_parallel_accesses(&mut self, accesses: &[(u32, u32)]) -> Result<(), Trap>;
    /// The shared AMP weight registers `$CWEI_m_n`, indexed by [`crate::csr::cwei_index`].
    fn cwei(&self) -> &[u64; crate::csr::CWEI_COUNT];
    fn cwei_mut(&mut self) -> &mut [u64; crate::csr::CWEI_COUNT];
    /// Where the AMP keeps `$CWEI` decoded to f32 lanes between calls (see [`CweiLanes`]), if
    /// the environment keeps them; without it every call decodes its phase's weights. Results
    /// are the same either way.
    fn cwei_lanes(&mut self) -> Option<&mut CweiLanes> {
        None
    }
    /// A supervisor lower-space CSR value (workers' AMP reads `$FP_INFMT` and `$FP_ISCL`).
    fn supervisor_csr(&self, index: u8) -> u32;
    /// The tile's cycle counter (`$COUNT_L`/`$COUNT_U`).
    fn cycle(&self) -> u64;
    /// The tile's id (`$TILE_ID`).
    fn tile_id(&self) -> u32;
}

/// What a bundle asks the tile to do beyond its register and memory effects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    /// `run`: start one worker. `vertex_base` is absolute.
    Launch {
        entry: u32,
        vertex_base: u32,
    },
    /// `runall`: start all workers; worker n gets `vertex_base + n * stride`.
    LaunchAll {
        entry: u32,
        vertex_base: u32,
        stride: u32,
    },
    /// `exit*`: the worker ends with this status.
    Exit {
        status: bool,
    },
    /// `sync zone`.
    Sync {
        zone: u32,
    },
    /// `send`: `words` 32-bit words from `address` onto the outgoing wires.
    Send {
        address: u32,
        words: u32,
        mode: u32,
    },
    /// `delay N`: the supervisor waits this many cycles (N + 1).
    Delay {
        cycles: u32,
    },
    /// `delaypic` / `delayxpic`: the supervisor is busy for `events` cycles and `control`
    /// applies in the last of them.
    TimedControl {
        events: u32,
        control: IncomingControl,
    },
    /// `sendpic`: `words` more words of the outgoing stream (from where the last `send` or
    /// `sendpic` left off, with its send control), with `control` applied at the first.
    SendControl {
        words: u32,
        control: IncomingControl,
    },
    /// `sendpicp`: a `send` of `words` words (or 64-bit items) from `address` with send
    /// control `mode` (0: nothing goes out), with the XPIC setting `source` and the PIC setting
    /// `pic` applied at its first word.
    SendControls {
        address: u32,
        words: u32,
        mode: u32,
        source: IncomingControl,
        pic: IncomingControl,
    },
    /// `sendoff`: `words` more words of the outgoing stream, from where the last `send`,
    /// `sendpic` or `sendoff` left off plus `delta` words (or 64-bit items), with send control
    /// `mode`.
    SendOn {
        words: u32,
        delta: u32,
        mode: u32,
    },
    /// A CSR write the tile must act on (exchange set-up, `$CR`): index and value.
    CsrWritten {
        index: u8,
        value: u32,
    },
}

/// One setting of a receiver's incoming controls: the hardware's two timed streams, XPIC (which
/// sender the mux listens to) and PIC (the write pointer and the item format) \[S\]
/// (docs/reference/hardware-ipu-stack.md §1.1–1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncomingControl {
    /// XPIC: the mux (`paired`: the paired stream's mux) listens to tile `value`, or to none
    /// for [`crate::fabric::XPIC_NEUTRAL`].
    Source { paired: bool, value: u32 },
    /// PIC selector 0: the incoming write pointer, a word address.
    Pointer { word: u32 },
    /// PIC selector 1: the item format (0 = 32-bit items).
    Format { value: u32 },
}

/// The result of one bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepOutcome {
    /// Address of the next bundle this context issues.
    pub next_pc: u32,
    /// A branch was taken (the supervisor pays the taken-branch stall).
    pub branch_taken: bool,
    pub effect: Effect,
}

pub use execute::PreparedBundle;

/// Executes one bundle of the context at `ctx.pc` and advances its PC (including `rpt` loops).
pub fn step_bundle<E: ExecEnv>(
    bundle: &Bundle,
    size: u32,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<StepOutcome, Trap> {
    execute::step_bundle(bundle, size, ctx, env)
}

/// [`step_bundle`] for a bundle prepared once ([`PreparedBundle::new`]): the same outcome, with
/// the bundle checks reduced to a few flag tests. For hot loops that execute the same code often.
#[inline]
pub fn step_prepared<E: ExecEnv>(
    prepared: &PreparedBundle,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<StepOutcome, Trap> {
    execute::step_prepared(prepared, ctx, env)
}

mod accumulate;
mod amp;
mod bitwise;
mod broadcast;
mod clamp;
mod compare;
mod control;
mod convert;
mod csr_access;
mod dispatch;
mod execute;
mod float;
mod integer;
mod integral;
mod memory;
mod pace;
mod permute;
mod random;
mod regs;
mod slic;
mod stacc;
mod supervisor;
#[cfg(test)]
mod test_env;
