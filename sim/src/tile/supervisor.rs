//! The supervisor's side of a tile: issuing its bundles (their stalls, sends, syncs and
//! launches; the timing rules are stated in the module above).

use super::*;

impl Tile {
    /// The outgoing stream (next address, send control) a supervisor `sendpic` or `sendoff`
    /// continues, or the trap for continuing none (`what` says which).
    fn outgoing_stream(
        &self,
        what: &'static str,
        pc: u32,
        decoded: &DecodedBundle,
        cycle: u64,
    ) -> Result<(u32, u32), SimError> {
        self.outgoing
            .ok_or_else(|| self.invalid_operation(what, pc, decoded, cycle))
    }

    /// The trap of a supervisor bundle at `pc` that the machine refuses (`what` says why).
    fn invalid_operation(
        &self,
        what: &'static str,
        pc: u32,
        decoded: &DecodedBundle,
        cycle: u64,
    ) -> SimError {
        self.trap(
            "supervisor",
            pc,
            decoded,
            cycle,
            tessera_isa::semantics::TrapKind::InvalidOperation { what }.into(),
        )
    }

    /// The cycle at which every register of `registers` (all with a pending write) is ready;
    /// forgets the writes that are ready by `cycle`.
    fn result_use_ready(
        result_ready: &[u64; 16],
        result_pending: &mut u16,
        registers: u16,
        cycle: u64,
    ) -> u64 {
        let mut ready = 0;
        let mut left = registers;
        while left != 0 {
            let r = left.trailing_zeros() as usize;
            left &= left - 1;
            if result_ready[r] <= cycle {
                *result_pending &= !(1 << r);
            } else {
                ready = ready.max(result_ready[r]);
            }
        }
        ready
    }

    pub(super) fn issue_supervisor(&mut self, cycle: u64) -> Result<(), SimError> {
        const CONTEXT: &str = "supervisor";
        let pc = self.supervisor.pc;
        // A copy: the borrow of the code cache must not outlive the fetch.
        let fetched = *fetch(&mut self.code, self.id, ContextKind::Supervisor, pc, cycle)?;
        let decoded = &fetched;
        let hazard = decoded.reads_m & self.result_pending;
        if hazard != 0 {
            let ready =
                Self::result_use_ready(&self.result_ready, &mut self.result_pending, hazard, cycle);
            if cycle < ready {
                // Result-use hazard: the slot goes unused until the written value is ready.
                self.supervisor_next_issue = ready;
                return Ok(());
            }
        }
        let outcome = {
            // The supervisor runs no AMP instruction: it reads no `$FP_INFMT`/`$FP_ISCL`.
            let mut env = env::TileEnv::new(
                self.id,
                cycle,
                &mut self.memory,
                &mut self.weights,
                0,
                0,
                &mut self.watch,
            );
            step_prepared(&decoded.prepared, &mut self.supervisor, &mut env)
        };
        let outcome = outcome.map_err(|trap| self.trap(CONTEXT, pc, decoded, cycle, trap))?;
        self.counters.bundles += 1;
        self.counters.supervisor_bundles += 1;
        self.supervisor.pc = outcome.next_pc;
        let stalls = &self.stalls;
        let mut next = cycle + 1;
        if outcome.branch_taken {
            next = next.max(cycle + stalls.taken_branch as u64);
        }
        match decoded.timing {
            TimingClass::CsrWrite => next = next.max(cycle + stalls.csr_write as u64),
            TimingClass::Launch => next = next.max(cycle + stalls.run as u64),
            TimingClass::Simple
            | TimingClass::Load
            | TimingClass::Branch
            | TimingClass::Sync
            | TimingClass::Exchange
            | TimingClass::Delay
            | TimingClass::Exit
            | TimingClass::Repeat
            | TimingClass::Divide => {}
        }
        if decoded.writes_m != 0 {
            let ready = cycle + stalls.result_use as u64;
            let mut written = decoded.writes_m;
            while written != 0 {
                self.result_ready[written.trailing_zeros() as usize] = ready;
                written &= written - 1;
            }
            self.result_pending |= decoded.writes_m;
        }
        // Exchange CSR writes (at most two: `sendpicp`'s XPIC and PIC), each with the cycles it
        // leads the words it is for (a timed XPIC control), and the words sent.
        let mut csr_writes: [Option<(ExchangeCsr, u64)>; 2] = [None, None];
        let mut send = None;
        match outcome.effect {
            Effect::None => {}
            Effect::Launch { entry, vertex_base } => {
                let Some(worker) = self.slots.iter().position(|s| !s.running) else {
                    return Err(self.invalid_operation(
                        "run with every worker busy",
                        pc,
                        decoded,
                        cycle,
                    ));
                };
                let worker_base = self.supervisor.csr[index::WORKER0_BASE as usize + worker];
                self.launch(worker, entry, vertex_base, worker_base, cycle + 1);
            }
            Effect::LaunchAll {
                entry,
                vertex_base,
                stride,
            } => {
                if self.any_worker_running() {
                    self.supervisor.csr[index::SSR as usize] |= csr::field::SSR_RAERR;
                    return Err(self.invalid_operation(
                        "runall while a worker is active ($SSR.RAERR)",
                        pc,
                        decoded,
                        cycle,
                    ));
                }
                for worker in 0..WORKERS {
                    let worker_base = self.supervisor.csr[index::WORKER0_BASE as usize + worker];
                    self.launch(
                        worker,
                        entry,
                        vertex_base + worker as u32 * stride,
                        worker_base,
                        cycle + 1,
                    );
                }
            }
            Effect::Exit { .. } => unreachable!("exit is worker-only in the table"),
            Effect::Sync { zone } => match zone {
                sync_zone::LOCAL => {
                    if self.any_worker_running() {
                        self.status = SupervisorStatus::WaitingLocalSync;
                    } else {
                        next = next.max(cycle + stalls.sync as u64);
                    }
                }
                sync_zone::INTERNAL | sync_zone::ANS | sync_zone::ALL => {
                    self.status = SupervisorStatus::WaitingGlobalSync;
                    self.global_sync_at = cycle;
                }
                other => {
                    return Err(self.trap(
                        CONTEXT,
                        pc,
                        decoded,
                        cycle,
                        Trap::unmodelled(format!(
                            "sync zone {other} (modelled: 1 ANS, 2 local, 3 internal, 7 all; the hardware's 0 waits on $INCOMING_DCOUNT and 15 on the host)"
                        )),
                    ));
                }
            },
            Effect::Send {
                address,
                words,
                mode,
            } => send = Some((address, words, mode)),
            Effect::SendControl { words, control } => {
                let (address, mode) = self.outgoing_stream(
                    "sendpic with no outgoing stream to continue (no send before it)",
                    pc,
                    decoded,
                    cycle,
                )?;
                csr_writes[0] = Some((
                    self.incoming_csr(control)
                        .map_err(|kind| self.trap(CONTEXT, pc, decoded, cycle, kind.into()))?,
                    self.control_lead(control),
                ));
                send = Some((address, words, mode));
            }
            Effect::SendControls {
                address,
                words,
                mode,
                source,
                pic,
            } => {
                for (slot, control) in csr_writes.iter_mut().zip([source, pic]) {
                    *slot = Some((
                        self.incoming_csr(control)
                            .map_err(|kind| self.trap(CONTEXT, pc, decoded, cycle, kind.into()))?,
                        self.control_lead(control),
                    ));
                }
                send = Some((address, words, mode));
            }
            Effect::SendOn { words, delta, mode } => {
                let (address, _) = self.outgoing_stream(
                    "sendoff with no outgoing stream to continue (no send before it)",
                    pc,
                    decoded,
                    cycle,
                )?;
                // The delta counts the stream's units: 8-byte items with bit 2, else words.
                let unit = if mode & tessera_isa::fabric::ITEMS_64 != 0 {
                    8
                } else {
                    4
                };
                send = Some((address.wrapping_add(unit * delta), words, mode));
            }
            Effect::TimedControl { events, control } => {
                if events > 1 && !self.timed_wait {
                    // Wait out the first events − 1 cycles, then issue again to apply it.
                    self.timed_wait = true;
                    self.supervisor.pc = pc;
                    next = next.max(cycle + events as u64 - 1);
                } else {
                    self.timed_wait = false;
                    csr_writes[0] = Some((
                        self.incoming_csr(control)
                            .map_err(|kind| self.trap(CONTEXT, pc, decoded, cycle, kind.into()))?,
                        self.control_lead(control),
                    ));
                }
            }
            Effect::Delay { cycles } => next = next.max(cycle + cycles as u64),
            Effect::CsrWritten { index, value } => {
                if index >= EXCHANGE_CSR_FIRST {
                    csr_writes[0] = Some(((index, value), 0));
                }
            }
        }
        // Words put on the outgoing wires by a `send` or a `sendpic`.
        if let Some((address, words, mode)) = send {
            let sent = send_words(
                &self.memory,
                &mut self.outbox,
                &mut self.outgoing,
                (address, words, mode),
                cycle,
                pc,
            );
            if let Err(trap) = sent {
                return Err(self.trap(CONTEXT, pc, decoded, cycle, trap));
            }
            next = next.max(cycle + words as u64);
        }
        // An exchange CSR written by a `put` or by a timed control standing for one.
        for ((index, value), lead) in csr_writes.into_iter().flatten() {
            let written = self.port.write_csr(
                index,
                value,
                cycle,
                lead,
                self.id,
                &self.exchange,
                self.tiles,
            );
            if let Err(kind) = written {
                return Err(self.trap(CONTEXT, pc, decoded, cycle, kind.into()));
            }
            self.port_dirty = true;
            self.exchange_csr_writes.push(ExchangeCsrWrite {
                cycle,
                index,
                value,
            });
        }
        self.supervisor_next_issue = next;
        self.finished_at = self.finished_at.max(cycle + 1);
        if outcome.branch_taken && outcome.next_pc == HOST_RETURN_ADDRESS {
            self.status = SupervisorStatus::Halted;
        }
        Ok(())
    }
}
