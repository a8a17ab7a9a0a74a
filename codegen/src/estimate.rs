//! The compiler's cycle estimate of a lowered program, reported beside the simulated figure:
//! per compute step, the busiest tile's kernel estimates (each kernel's own formula) plus the
//! supervisor's cost per call; per exchange step, the length of its exact static schedule; a
//! global sync after every step. Also split per op label (on the busiest tile of each step), so
//! the profile's per-op table can show estimate and simulation side by side. A loop's steps count
//! once per iteration in the totals; per-step figures are one iteration's.

use crate::exchange::schedule::{schedule_projected, ReceiveControls};
use crate::exchange::{ExchangeError, ExchangePhase};
use crate::plan::cost::CALL_OVERHEAD_CYCLES;
use crate::target::Target;
use crate::tile::{Program, StepKind};
use std::collections::BTreeMap;

/// A program's estimated cycles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    pub cycles: u64,
    /// Per program step: (label, cycles including its sync, for one run of the step).
    pub steps: Vec<(String, u64)>,
    /// Per op label: estimated cycles over the whole run (compute on each step's busiest tile;
    /// exchange phases under `exchange: …` labels).
    pub ops: BTreeMap<String, u64>,
    /// Per step: its ops' estimated cycles (the busiest tile's, for compute steps).
    pub step_ops: Vec<Vec<(String, u64)>>,
}

/// Estimates `program`; `phase_cycles[p]` is the scheduled length of exchange phase `p`.
pub fn estimate(target: &Target, program: &Program, phase_cycles: &[u32]) -> Estimate {
    let mut out = Estimate::default();
    let sync = target.global_sync_latency as u64;
    for (step, kind) in program.steps.iter().enumerate() {
        let runs = program.runs_of(step) as u64;
        let (label, cycles) = match kind {
            StepKind::Compute { label } => {
                let mut busiest: (u64, BTreeMap<&str, u64>) = (0, BTreeMap::new());
                for tile in &program.tiles {
                    let mut per: BTreeMap<&str, u64> = BTreeMap::new();
                    let mut total = 0;
                    for call in &tile.calls[step] {
                        let c = call.spec.estimate_cycles + CALL_OVERHEAD_CYCLES;
                        total += c;
                        *per.entry(&call.label).or_default() += c;
                    }
                    if total > busiest.0 {
                        busiest = (total, per);
                    }
                }
                let mut mine = Vec::new();
                for (op, c) in busiest.1 {
                    *out.ops.entry(op.to_string()).or_default() += c * runs;
                    mine.push((op.to_string(), c));
                }
                out.step_ops.push(mine);
                (label.clone(), busiest.0)
            }
            StepKind::Exchange { phase, label } => {
                let c = phase_cycles.get(*phase).copied().unwrap_or(0) as u64;
                *out.ops.entry(label.clone()).or_default() += c * runs;
                out.step_ops.push(vec![(label.clone(), c)]);
                (label.clone(), c)
            }
        };
        out.steps.push((label, cycles + sync));
        out.cycles += (cycles + sync) * runs;
    }
    out
}

/// Every exchange phase of `program` scheduled as if receivers drove their incoming mux and
/// pointer with `controls` ([`crate::exchange::schedule::schedule_projected`]), in phase
/// order: with [`ReceiveControls::SupervisorPuts`], what the protocol before the hardware's
/// timed streams made of the same transfers, for [`estimate`] to total beside the emitted
/// schedule's figure.
/// Addresses do not change a schedule, so the phases are resolved with every buffer at 0.
pub fn projected_phase_cycles(
    target: &Target,
    program: &Program,
    controls: ReceiveControls,
) -> Result<Vec<u32>, ExchangeError> {
    let placeholder: Vec<Vec<u32>> = program
        .tiles
        .iter()
        .map(|t| vec![0; t.buffers.len()])
        .collect();
    (0..program.phases.len())
        .map(|phase| {
            let resolved = ExchangePhase {
                transfers: program.resolve_phase(phase, &placeholder),
            };
            schedule_projected(target, &resolved, controls).map(|s| s.length)
        })
        .collect()
}
