//! One tile: SRAM, pre-decoded code, the supervisor and six workers in a six-slot barrel, and the
//! issue loop that turns executed bundles into cycles.
//!
//! Timing rules (each from `docs/reference/isa.md` §1 and §6, numbers from the machine file):
//! - Tile cycle `c` belongs to issue slot `c % 6`. Worker `n` always runs in slot `n` [A: the
//!   slot assignment is not public]. A running worker issues one bundle each time its slot comes
//!   round, so it issues every 6 cycles whatever the others do. [C]
//! - The supervisor issues in every slot no running worker holds, one bundle per cycle, and is
//!   suspended while all six workers run. [C]
//! - A worker's bundle completes at the end of its six-cycle round, so a worker that issues N
//!   bundles is busy for 6N cycles. [I] A bundle with `f32div` (timing class `Divide`) takes
//!   `worker.divide_rounds` rounds (3) instead, its slot held meanwhile. [C] (see the machine
//!   file's basis table) An `rpt` bundle takes `worker.repeat_rounds` rounds (1: no set-up cost,
//!   the body's first bundle issues the next round; the basis table weighs PopLibs' estimators).
//!   The body's bundles then cost one round each, with no cycle for looping back. [S]
//! - Supervisor stalls: a taken branch, a CSR write, `run`/`runall` and a released `sync` delay
//!   the supervisor's next issue to `stall` cycles after the instruction. [C] An instruction
//!   reading an MRF register that a supervisor instruction wrote — a load's destination, an ALU
//!   result or a post-incremented address — waits until `result_use` cycles after that
//!   instruction, however many lie between them (each register remembers when its last write is
//!   ready). [I] For loads [C] isa §6; for every write from PopLibs' scheduling, which spaces an
//!   ALU result and its reader six instructions apart with nops ("keep nop for 6 instructions
//!   pipeline", `conv_partial_1x1_supervisor.S`: `shr $outstride_s` … `and $temp_s,
//!   $outstride_s`) and counts "6 cycles" for readers of an `and` result and of a
//!   post-incremented pointer (`EncodeOneHot.S`); the calibration harness measures both codelets
//!   (`scripts/poplibs_calibration.py`).
//! - `send` occupies the supervisor one cycle per word; `delay n` for n cycles. [A]
//! - Exchange (see `crate::chip::exchange` for the rules): in one cycle the bundle issued in it
//!   executes first, then the words arriving in it are written. So a `put $INCOMING_MUX` issued
//!   at `c` selects the source for words arriving at `c`, and a load issued at `c` does not see a
//!   word arriving at `c` (it sees it from `c + 1`). [A]

mod code;
mod env;
mod exchange_effects;
mod incoming;
mod supervisor;
mod watch;
mod worker;

pub use code::{decode_words, CodeCache, CodeSlot, DecodedBundle, DecodedRange, RawCode};
pub use incoming::{AcceptedRun, ExchangeView, IncomingPort, MuxSwitch, PairSelection};
pub use watch::WriteWatch;

use crate::error::{SimError, TrapSite};
use crate::machine::{ExchangeDescription, MachineDescription, SupervisorStalls};
use crate::memory::{MemoryLayout, TileMemory};
use exchange_effects::send_words;
use std::sync::Arc;
use tessera_isa::csr::{self, index};
use tessera_isa::semantics::{step_prepared, ContextKind, ContextState, Effect, Trap};
use tessera_isa::table::TimingClass;

/// First exchange CSR index (`$INCOMING_MUX`).
const EXCHANGE_CSR_FIRST: u8 = index::INCOMING_MUX;

/// Number of worker contexts (and issue slots).
pub const WORKERS: usize = 6;

/// `running_mask` with every worker running.
const ALL_WORKERS: u8 = (1 << WORKERS) - 1;

/// Branching here from the supervisor returns control to the host: the tile program ends.
/// The loader puts it in `$m10` (the link register), so a supervisor entry ends with `br $m10`. [A]
pub const HOST_RETURN_ADDRESS: u32 = 0;

/// `sync` zones the simulator models. [S] numbering
pub mod sync_zone {
    /// ANS: what tiles with no part in an exchange phase run after `sans 0` on the hardware
    /// (docs/reference/hardware-ipu-stack.md §1.1); here it joins the chip-wide barrier as
    /// `sync 3` does, which is what lets the phase's active tiles go on [A].
    pub const ANS: u32 = 1;
    pub const LOCAL: u32 = 2;
    pub const INTERNAL: u32 = 3;
    /// "All": the hardware's zone around host operations; here the chip-wide barrier [A].
    pub const ALL: u32 = 7;
}

/// What the supervisor is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SupervisorStatus {
    Running,
    /// `sync` local: waiting for every worker to exit.
    WaitingLocalSync,
    /// `sync` internal: waiting for every tile; the chip releases it.
    WaitingGlobalSync,
    /// Returned to the host (or never started, for a worker-only run).
    Halted,
}

/// An exchange CSR write: its index and value.
type ExchangeCsr = (u8, u32);

/// The decoded bundle at `pc` of tile `tile`'s code, or the error a fetch there raises.
#[inline]
fn fetch(
    code: &mut CodeCache,
    tile: u32,
    context: ContextKind,
    pc: u32,
    cycle: u64,
) -> Result<&DecodedBundle, SimError> {
    match code.get(pc) {
        CodeSlot::Bundle(decoded) => Ok(decoded),
        CodeSlot::NotCode => Err(SimError::NotCode {
            tile,
            context: context.name(),
            pc,
            cycle,
        }),
        CodeSlot::Invalid(error) => Err(SimError::Decode {
            tile,
            context: context.name(),
            pc,
            cycle,
            error: error.clone(),
        }),
    }
}

/// End of the six-cycle round of cycle `cycle`: when a worker bundle issued at `cycle` completes.
#[inline]
fn round_end(cycle: u64) -> u64 {
    cycle - cycle % WORKERS as u64 + WORKERS as u64
}

/// Where a tile stopped when its run loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileStatus {
    /// Nothing left to run.
    Halted,
    /// The supervisor waits for a global sync and no worker runs.
    WaitingGlobalSync,
    /// The cycle limit was reached first: the next issue is at or after the limit, or is a worker
    /// bundle that would complete after it (activity must end by the limit).
    CycleLimit,
    /// Exchange words that may reach this tile are not known yet (their senders have not been
    /// simulated far enough): run it again with a newer [`ExchangeView`].
    Blocked,
}

#[derive(Clone, Copy, Debug)]
struct WorkerSlot {
    running: bool,
    /// The cycle of the worker's next issue; `u64::MAX` while it does not run (so the earliest
    /// issue of all slots is a plain minimum).
    next_issue: u64,
    started: u64,
    entry: u32,
    vertex: u32,
}

impl Default for WorkerSlot {
    fn default() -> Self {
        WorkerSlot {
            running: false,
            next_issue: u64::MAX,
            started: 0,
            vertex: 0,
            entry: 0,
        }
    }
}

/// A worker's run from launch to exit, for profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerSpan {
    pub worker: u8,
    pub entry: u32,
    /// `$mvertex_base` at launch: which call's vertex state the worker ran on.
    pub vertex: u32,
    pub start: u64,
    pub end: u64,
    pub exit_status: bool,
}

/// One word put on the outgoing exchange wires, or one 64-bit item (`mode` has
/// [`tessera_isa::fabric::ITEMS_64`]: `word` on the tile's own lane, `high` on its partner's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingWord {
    pub cycle: u64,
    pub word: u32,
    pub mode: u32,
    /// The item's second word (0 for a 32-bit word).
    pub high: u32,
}

impl OutgoingWord {
    /// Whether it is a 64-bit item on two lanes.
    pub fn is_item64(&self) -> bool {
        self.mode & tessera_isa::fabric::ITEMS_64 != 0
    }

    /// Bytes it carries.
    pub fn bytes(&self) -> u64 {
        if self.is_item64() {
            8
        } else {
            4
        }
    }
}

/// A write to an exchange CSR, with its cycle (the incoming mux, pointers, format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeCsrWrite {
    pub cycle: u64,
    pub index: u8,
    pub value: u32,
}

/// Counters a run accumulates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileCounters {
    pub bundles: u64,
    pub supervisor_bundles: u64,
    pub worker_bundles: u64,
}

/// One simulated tile.
pub struct Tile {
    pub id: u32,
    pub memory: TileMemory,
    code: CodeCache,
    pub supervisor: ContextState,
    pub workers: Vec<ContextState>,
    slots: [WorkerSlot; WORKERS],
    /// Bit n set while worker n runs (mirrors `slots[n].running`).
    running_mask: u8,
    status: SupervisorStatus,
    supervisor_next_issue: u64,
    /// Per MRF register: the cycle the value of its pending supervisor write is ready.
    result_ready: [u64; 16],
    /// MRF registers with a pending supervisor write (bit per register; `result_ready` is valid
    /// for these).
    result_pending: u16,
    /// `$CWEI` and its copy decoded for the AMP, written only through the tile's
    /// [`env::TileEnv`] (read it with [`Tile::cwei`]).
    weights: Box<env::AmpWeights>,
    /// The next cycle to simulate.
    cycle: u64,
    /// End of the last activity (a worker's round end or a supervisor issue).
    finished_at: u64,
    stalls: SupervisorStalls,
    /// Issue rounds a worker spends on a bundle of timing class `Divide`.
    divide_rounds: u64,
    /// Issue rounds a worker spends on an `rpt` bundle (timing class `Repeat`).
    repeat_rounds: u64,
    pub spans: Vec<WorkerSpan>,
    /// Whether worker exits are recorded in `spans`.
    pub record_spans: bool,
    /// Whether the shortcuts of [`crate::chip::RunOptions::fast_paths`] are taken.
    pub fast_paths: bool,
    pub outbox: Vec<OutgoingWord>,
    pub exchange_csr_writes: Vec<ExchangeCsrWrite>,
    pub counters: TileCounters,
    /// The receive side of the exchange.
    pub port: IncomingPort,
    /// Output ranges whose last write the tile notes.
    pub watch: WriteWatch,
    exchange: ExchangeDescription,
    tiles: u32,
    /// Instructions are fetched only below this address (`sram.executable_end`).
    executable_end: u32,
    /// Cycle of the last `sync` to the internal zone.
    global_sync_at: u64,
    /// An exchange CSR changed: the port must be refreshed against the view.
    port_dirty: bool,
    /// The outgoing stream a `sendpic` continues: the next word's address and the send control
    /// (set by every `send` and `sendpic`).
    outgoing: Option<(u32, u32)>,
    /// The supervisor waits out a `delaypic` / `delayxpic` and issues it again in the last of its
    /// events, where its control applies.
    timed_wait: bool,
}

impl Tile {
    pub fn new(id: u32, machine: &MachineDescription, layout: Arc<MemoryLayout>) -> Tile {
        let base = layout.base();
        let size = layout.size();
        Tile {
            id,
            memory: TileMemory::new(layout),
            code: CodeCache::new(base, size),
            supervisor: ContextState::new(ContextKind::Supervisor),
            workers: (0..WORKERS as u8)
                .map(|w| ContextState::new(ContextKind::Worker(w)))
                .collect(),
            slots: [WorkerSlot::default(); WORKERS],
            running_mask: 0,
            status: SupervisorStatus::Halted,
            supervisor_next_issue: 0,
            result_ready: [0; 16],
            result_pending: 0,
            weights: Box::default(),
            cycle: 0,
            finished_at: 0,
            stalls: machine.stalls.clone(),
            divide_rounds: machine.worker.divide_rounds.into(),
            repeat_rounds: machine.worker.repeat_rounds.into(),
            spans: Vec::new(),
            record_spans: true,
            fast_paths: true,
            outbox: Vec::new(),
            exchange_csr_writes: Vec::new(),
            counters: TileCounters::default(),
            port: IncomingPort::on(machine.exchange.fabric),
            watch: WriteWatch::default(),
            exchange: machine.exchange.clone(),
            tiles: machine.tiles,
            executable_end: machine.sram.executable_end(),
            global_sync_at: 0,
            port_dirty: false,
            outgoing: None,
            timed_wait: false,
        }
    }

    /// Marks `[start, start + slots.len() * 4)` as code already decoded (by [`decode_words`] of
    /// the bytes loaded there, possibly shared with other tiles) and write-protects it.
    pub fn load_decoded_code(&mut self, start: u32, slots: DecodedRange) -> Result<(), SimError> {
        let len = (slots.len() as u32).saturating_mul(4);
        self.check_executable(start, len)?;
        self.code.insert_shared(start, slots);
        self.memory
            .protect(start..start.saturating_add(len))
            .map_err(|e| SimError::Load {
                tile: self.id,
                message: e.to_string(),
            })
    }

    /// Moves an idle tile's clock to `cycle` (e.g. the end of start-up) before it starts.
    pub fn advance_to(&mut self, cycle: u64) {
        self.cycle = self.cycle.max(cycle);
        self.finished_at = self.finished_at.max(cycle);
        self.supervisor_next_issue = self.supervisor_next_issue.max(cycle);
    }

    /// The shared AMP weight registers `$CWEI`.
    pub fn cwei(&self) -> &[u64; csr::CWEI_COUNT] {
        self.weights.cwei()
    }

    /// Cycle at which the supervisor issued its last `sync` to the internal (all-tile) zone.
    pub fn global_sync_at(&self) -> u64 {
        self.global_sync_at
    }

    /// When the tile arrives at the global sync it waits on: its `sync` has issued and its
    /// workers have finished (`sync` issue + 1, or the end of the last activity if later).
    /// The release rule is [`crate::chip::exchange::global_sync_release`].
    pub fn global_sync_arrival(&self) -> u64 {
        (self.global_sync_at + 1).max(self.finished_at)
    }

    /// Every context still running — the supervisor unless it halted (with what it waits for)
    /// and each running worker — with its pc and the instruction there in assembly form, for
    /// reports such as a cycle budget running out. `None` when nothing runs.
    pub fn running_contexts(&self) -> Option<String> {
        let mut parts = Vec::new();
        let waiting = match self.status {
            SupervisorStatus::Halted => None,
            SupervisorStatus::Running => Some(""),
            SupervisorStatus::WaitingLocalSync => Some(" waiting at a local sync"),
            SupervisorStatus::WaitingGlobalSync => Some(" waiting at a global sync"),
        };
        if let Some(waiting) = waiting {
            parts.push(format!(
                "supervisor{waiting} at pc {:#x} {}",
                self.supervisor.pc,
                self.instruction_at(self.supervisor.pc)
            ));
        }
        for (worker, slot) in self.slots.iter().enumerate() {
            if slot.running {
                let context = &self.workers[worker];
                parts.push(format!(
                    "{} at pc {:#x} {}",
                    context.kind.name(),
                    context.pc,
                    self.instruction_at(context.pc)
                ));
            }
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// The bundle at `pc` in assembly form, between backticks (or why there is none).
    fn instruction_at(&self, pc: u32) -> String {
        match self.code.peek(pc) {
            CodeSlot::Bundle(decoded) => format!(
                "`{}`",
                tessera_isa::asm::print::format_bundle(decoded.bundle())
            ),
            CodeSlot::NotCode => "(not code)".into(),
            CodeSlot::Invalid(error) => format!("(undecodable: {error})"),
        }
    }

    /// Whether the tile can issue nothing more before a global sync is released: it halted or
    /// waits on a global sync, and no worker runs. (Words may still arrive.)
    pub fn is_parked(&self) -> bool {
        matches!(
            self.status,
            SupervisorStatus::Halted | SupervisorStatus::WaitingGlobalSync
        ) && !self.any_worker_running()
    }

    /// Refuses code at `[start, start + len)` that reaches past the machine's executable end.
    fn check_executable(&self, start: u32, len: u32) -> Result<(), SimError> {
        let end = u64::from(start) + u64::from(len);
        if end > u64::from(self.executable_end) {
            return Err(SimError::Load {
                tile: self.id,
                message: format!(
                    "code at {start:#x}..{end:#x} runs {} bytes past {:#x}: instructions are fetched only below it (sram.executable_end; the ipu21 runs code only below 0x80000)",
                    end - u64::from(self.executable_end).max(u64::from(start)).min(end),
                    self.executable_end
                ),
            });
        }
        Ok(())
    }

    /// Marks `[start, start + len)` as code, decoded when fetched (code only this tile runs;
    /// see [`CodeCache::insert_raw`]), and write-protects it; `bytes` is the memory there.
    pub fn load_raw_code(&mut self, start: u32, code: RawCode) -> Result<(), SimError> {
        let len = u32::try_from(code.bytes().len() / 4 * 4).unwrap_or(u32::MAX);
        self.check_executable(start, len)?;
        self.code.insert_raw(start, code);
        self.memory
            .protect(start..start.saturating_add(len))
            .map_err(|e| SimError::Load {
                tile: self.id,
                message: e.to_string(),
            })
    }

    /// Marks `[start, start + len)` as code: decodes it and write-protects it.
    pub fn load_code(&mut self, start: u32, len: u32) -> Result<(), SimError> {
        self.check_executable(start, len)?;
        let bytes = self
            .memory
            .read_range(start, len as usize)
            .map_err(|e| SimError::Load {
                tile: self.id,
                message: e.to_string(),
            })?
            .to_vec();
        self.code.decode_range(start, &bytes);
        self.memory
            .protect(start..start + len)
            .map_err(|e| SimError::Load {
                tile: self.id,
                message: e.to_string(),
            })
    }

    /// Starts the supervisor at `entry` with `$mvertex_base` = `vertex_base` and `$m10` = the host return address.
    pub fn start_supervisor(&mut self, entry: u32, vertex_base: u32) {
        self.supervisor.pc = entry;
        self.supervisor.m[tessera_isa::registers::M_VERTEX_BASE as usize] = vertex_base;
        self.supervisor.m[10] = HOST_RETURN_ADDRESS;
        self.supervisor.csr[index::TILE_ID as usize] = self.id;
        self.status = SupervisorStatus::Running;
        self.supervisor_next_issue = self.cycle;
    }

    /// Starts worker 0 directly from the host (the supervisor stays halted): a worker-only run.
    pub fn start_worker_from_host(&mut self, entry: u32, vertex_base: u32, worker_base: u32) {
        self.launch(0, entry, vertex_base, worker_base, self.cycle);
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Cycle at which the last activity ended: the tile's run time so far.
    pub fn finished_at(&self) -> u64 {
        self.finished_at
    }

    pub fn status(&self) -> SupervisorStatus {
        self.status
    }

    pub fn any_worker_running(&self) -> bool {
        self.running_mask != 0
    }

    /// Releases a supervisor waiting on a global sync at `cycle` (the chip calls this).
    pub fn release_global_sync(&mut self, cycle: u64) {
        if self.status == SupervisorStatus::WaitingGlobalSync {
            self.status = SupervisorStatus::Running;
            self.cycle = self.cycle.max(cycle);
            self.supervisor_next_issue = cycle;
            self.finished_at = self.finished_at.max(cycle);
        }
    }

    /// Runs until the tile halts, waits on a global sync, or reaches `limit` cycles, with no other
    /// tiles (nothing arrives from the exchange).
    pub fn run(&mut self, limit: u64) -> Result<TileStatus, SimError> {
        self.run_with(limit, &ExchangeView::NONE)
    }

    /// Runs until the tile halts, waits on a global sync (with every known arrival delivered),
    /// reaches `limit` cycles, or needs exchange words the view does not hold yet (`Blocked`).
    pub fn run_with(&mut self, limit: u64, view: &ExchangeView) -> Result<TileStatus, SimError> {
        self.port.refresh(view, self.id);
        self.port_dirty = false;
        loop {
            // The supervisor does not issue while it waits or halted, nor while all six
            // workers hold the slots.
            if self.fast_paths
                && self.running_mask != 0
                && (self.status != SupervisorStatus::Running || self.running_mask == ALL_WORKERS)
            {
                self.run_workers_only(limit)?;
            }
            // Slots without a running worker hold u64::MAX.
            let mut next = self
                .slots
                .iter()
                .fold(u64::MAX, |next, slot| next.min(slot.next_issue));
            if self.status == SupervisorStatus::Running {
                if let Some(c) = self.next_free_slot(self.supervisor_next_issue.max(self.cycle)) {
                    next = next.min(c);
                }
            }
            let arrival = self.port.next_arrival();
            let horizon = self.port.horizon();
            if arrival < next {
                // Words arriving before the next issue are written first.
                if arrival >= horizon {
                    if next != u64::MAX {
                        self.cycle = self.cycle.max(horizon);
                    }
                    return Ok(TileStatus::Blocked);
                }
                if arrival >= limit {
                    self.cycle = self.cycle.max(limit);
                    return Ok(TileStatus::CycleLimit);
                }
                let fetch = (self.status != SupervisorStatus::Halted).then_some(self.supervisor.pc);
                self.port.deliver(
                    arrival,
                    view,
                    (&mut self.memory, &mut self.watch),
                    self.id,
                    fetch,
                )?;
                continue;
            }
            if next == u64::MAX {
                return match self.status {
                    SupervisorStatus::Halted => Ok(TileStatus::Halted),
                    SupervisorStatus::WaitingGlobalSync => Ok(TileStatus::WaitingGlobalSync),
                    SupervisorStatus::WaitingLocalSync => Err(SimError::Deadlock {
                        tile: self.id,
                        pc: self.supervisor.pc,
                    }),
                    SupervisorStatus::Running => unreachable!(
                        "a running supervisor always has a free slot when no worker runs"
                    ),
                };
            }
            if next > horizon {
                // An issue at `next` needs every arrival before `next`.
                self.cycle = self.cycle.max(horizon);
                return Ok(TileStatus::Blocked);
            }
            if next >= limit {
                self.cycle = limit;
                return Ok(TileStatus::CycleLimit);
            }
            let slot = (next % WORKERS as u64) as usize;
            let worker_issues = self.slots[slot].running && self.slots[slot].next_issue == next;
            if worker_issues && round_end(next) > limit {
                // The bundle would complete after the limit: the run cannot end by then.
                self.cycle = limit;
                return Ok(TileStatus::CycleLimit);
            }
            self.cycle = next;
            if worker_issues {
                self.issue_worker(slot, next)?;
            } else {
                self.issue_supervisor(next)?;
                if self.port_dirty {
                    self.port_dirty = false;
                    self.port.refresh(view, self.id);
                }
            }
            self.cycle = next + 1;
        }
    }

    /// While the supervisor does not issue (it waits at a sync or halted, or all six workers
    /// hold the slots) and workers run,
    /// issues worker bundles in slot order as [`Tile::run_with`]'s general loop would, without
    /// re-examining the supervisor and the port for each one: nothing a worker does changes
    /// them, so the bound on issues (the next arrival, the horizon, the limit) is fixed. Returns
    /// at the first issue the general loop must decide (a bound reached, a worker's exit) with
    /// the tile exactly as the general loop would have left it there.
    ///
    /// The next issue is found from the running mask: every running worker's next issue is in
    /// its own slot of the six cycles after the last issue (it issues once per round, and a
    /// launch gives the first cycle of its slot after the `run`), so the next running slot in
    /// round-robin order issues next.
    #[inline]
    fn run_workers_only(&mut self, limit: u64) -> Result<(), SimError> {
        let bound = self.port.next_arrival().min(self.port.horizon());
        let mut next = self
            .slots
            .iter()
            .fold(u64::MAX, |next, slot| next.min(slot.next_issue));
        let mut slot = (next % WORKERS as u64) as usize;
        loop {
            // The general loop delivers an arrival before `next` first, stops at the horizon
            // and the limit, and stops where a worker bundle would complete after the limit.
            // (`next - slot + WORKERS` is `round_end(next)`: `next` is a cycle of `slot`.)
            if next > bound || next >= limit || next - slot as u64 + WORKERS as u64 > limit {
                return Ok(());
            }
            debug_assert!(self.slots[slot].running && self.slots[slot].next_issue == next);
            debug_assert_eq!(
                next,
                self.slots
                    .iter()
                    .fold(u64::MAX, |next, slot| next.min(slot.next_issue))
            );
            let mask = self.running_mask;
            self.cycle = next;
            self.issue_worker(slot, next)?;
            self.cycle = next + 1;
            if self.running_mask != mask {
                // A worker exited: the supervisor may run again.
                return Ok(());
            }
            if self.slots[slot].next_issue != next + WORKERS as u64 {
                // A bundle that keeps its worker several rounds (`Divide`): the general loop
                // finds the next issue.
                return Ok(());
            }
            // The next running slot after `slot` (the mask has at least this worker's bit).
            let shift = slot as u32 + 1;
            let rotated = ((u32::from(mask) >> shift)
                | (u32::from(mask) << (WORKERS as u32 - shift)))
                & ((1 << WORKERS) - 1);
            let distance = rotated.trailing_zeros() as usize + 1;
            slot += distance;
            if slot >= WORKERS {
                slot -= WORKERS;
            }
            next += distance as u64;
        }
    }

    fn trap(
        &self,
        context: &'static str,
        pc: u32,
        decoded: &DecodedBundle,
        cycle: u64,
        trap: Trap,
    ) -> SimError {
        Tile::trap_at(self.id, context, pc, decoded, cycle, trap)
    }

    /// [`Tile::trap`] of tile `tile`, for a caller that holds a borrow of the code cache.
    fn trap_at(
        tile: u32,
        context: &'static str,
        pc: u32,
        decoded: &DecodedBundle,
        cycle: u64,
        trap: Trap,
    ) -> SimError {
        SimError::Trap {
            site: TrapSite {
                tile,
                context,
                pc,
                instruction: tessera_isa::asm::print::format_bundle(decoded.bundle()),
                cycle,
            },
            kind: trap.kind,
        }
    }
}
