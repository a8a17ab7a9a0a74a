//! The workers' side of a tile: launching a worker into a free slot and issuing its bundles
//! (the timing rules are stated in the module above).

use super::*;

impl Tile {
    pub(super) fn launch(
        &mut self,
        worker: usize,
        entry: u32,
        vertex_base: u32,
        worker_base: u32,
        cycle: u64,
    ) {
        let fp_ictl = self.supervisor.csr[index::FP_ICTL as usize];
        self.workers[worker].launch(entry, vertex_base, worker_base, fp_ictl);
        // First issue: the worker's slot at or after `cycle`.
        let slot = worker as u64;
        let round = cycle - cycle % WORKERS as u64;
        let first = if round + slot >= cycle {
            round + slot
        } else {
            round + WORKERS as u64 + slot
        };
        self.slots[worker] = WorkerSlot {
            running: true,
            next_issue: first,
            started: cycle,
            entry,
            vertex: vertex_base,
        };
        self.running_mask |= 1 << worker;
    }

    /// Earliest cycle at or after `from` whose slot no running worker holds.
    #[inline]
    pub(super) fn next_free_slot(&self, from: u64) -> Option<u64> {
        if self.running_mask == (1 << WORKERS) - 1 {
            return None;
        }
        let mut slot = (from % WORKERS as u64) as usize;
        for offset in 0..WORKERS as u64 {
            if !self.slots[slot].running {
                return Some(from + offset);
            }
            slot = if slot + 1 == WORKERS { 0 } else { slot + 1 };
        }
        None
    }

    /// Issues worker `worker`'s next bundle at `cycle`, a cycle of its slot.
    pub(super) fn issue_worker(&mut self, worker: usize, cycle: u64) -> Result<(), SimError> {
        debug_assert_eq!(cycle % WORKERS as u64, worker as u64);
        let kind = self.workers[worker].kind;
        let pc = self.workers[worker].pc;
        // Borrowed from the code cache (a field the issue does not change), not copied.
        let decoded = fetch(&mut self.code, self.id, kind, pc, cycle)?;
        let outcome = {
            let (fp_infmt, fp_iscl) = (
                self.supervisor.csr[index::FP_INFMT as usize],
                self.supervisor.csr[index::FP_ISCL as usize],
            );
            let mut env = env::TileEnv::new(
                self.id,
                cycle,
                &mut self.memory,
                &mut self.weights,
                fp_infmt,
                fp_iscl,
                &mut self.watch,
            )
            .with_amp_lanes(self.fast_paths);
            step_prepared(&decoded.prepared, &mut self.workers[worker], &mut env)
        };
        let id = self.id;
        let outcome =
            outcome.map_err(|trap| Tile::trap_at(id, kind.name(), pc, decoded, cycle, trap))?;
        self.counters.bundles += 1;
        self.counters.worker_bundles += 1;
        self.workers[worker].pc = outcome.next_pc;
        // A `Divide` bundle keeps its worker (and its slot) for `divide_rounds` rounds, an `rpt`
        // bundle for `repeat_rounds` (the longer if one bundle is both).
        let mut rounds = if decoded.divide {
            self.divide_rounds
        } else {
            1
        };
        if decoded.timing == TimingClass::Repeat {
            rounds = rounds.max(self.repeat_rounds);
        }
        // `round_end(cycle)`, the cycle being in the worker's own slot, plus the extra rounds.
        let round_end = cycle - worker as u64 + WORKERS as u64 * rounds;
        debug_assert_eq!(
            round_end,
            self::round_end(cycle) + WORKERS as u64 * (rounds - 1)
        );
        self.finished_at = self.finished_at.max(round_end);
        match outcome.effect {
            Effect::Exit { status } => {
                let slot = self.slots[worker];
                self.slots[worker] = WorkerSlot::default();
                self.running_mask &= !(1 << worker);
                if self.record_spans {
                    self.spans.push(WorkerSpan {
                        worker: worker as u8,
                        entry: slot.entry,
                        vertex: slot.vertex,
                        start: slot.started,
                        end: round_end,
                        exit_status: status,
                    });
                }
                if self.status == SupervisorStatus::WaitingLocalSync && !self.any_worker_running() {
                    self.status = SupervisorStatus::Running;
                    self.supervisor_next_issue = self
                        .supervisor_next_issue
                        .max(cycle + self.stalls.sync as u64);
                }
            }
            Effect::None => self.slots[worker].next_issue = cycle + WORKERS as u64 * rounds,
            other @ (Effect::Launch { .. }
            | Effect::LaunchAll { .. }
            | Effect::Sync { .. }
            | Effect::Send { .. }
            | Effect::Delay { .. }
            | Effect::TimedControl { .. }
            | Effect::SendControl { .. }
            | Effect::SendControls { .. }
            | Effect::SendOn { .. }
            | Effect::CsrWritten { .. }) => {
                // The table restricts these effects to the supervisor.
                return Err(Tile::trap_at(
                    self.id,
                    kind.name(),
                    pc,
                    decoded,
                    cycle,
                    Trap::unmodelled(format!("worker effect {other:?}")),
                ));
            }
        }
        Ok(())
    }
}
