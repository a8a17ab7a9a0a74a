//! The cost model: cycles per step from the kernels' own estimates and the exchange estimate,
//! plus a global sync per step; peak SRAM per tile from the placement.

use crate::exchange::schedule::{MIN_WINDOW, SETUP_BEFORE_ARRIVAL};
use crate::place::Placement;
use crate::target::Target;
use crate::tile::{Program, StepKind};

/// Supervisor cycles around one kernel call (CSR writes, launch, local sync) beyond the kernel's estimate.
pub const CALL_OVERHEAD_CYCLES: u64 = 24;

/// A plan's estimated cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub cycles: u64,
    /// (label, cycles) per step.
    pub steps: Vec<(String, u64)>,
    /// Highest byte in use on any tile, relative to the SRAM base.
    pub peak_sram: u32,
}

/// Estimates a lowered, placed program.
pub fn estimate(target: &Target, program: &Program, placement: &Placement) -> Estimate {
    let kernels = tessera_kernels::all_kernels();
    let mut steps = Vec::new();
    for (step, kind) in program.steps.iter().enumerate() {
        let (label, cycles) = match kind {
            StepKind::Compute { label } => {
                let busiest = program
                    .tiles
                    .iter()
                    .map(|tile| {
                        tile.calls[step]
                            .iter()
                            .map(|call| {
                                kernels
                                    .iter()
                                    .find(|k| k.name() == call.kernel)
                                    .map(|k| k.estimate_cycles(&call.case))
                                    .unwrap_or(0)
                                    + CALL_OVERHEAD_CYCLES
                            })
                            .sum::<u64>()
                    })
                    .max()
                    .unwrap_or(0);
                (label.clone(), busiest)
            }
            StepKind::Exchange { phase, label } => {
                let mut sent = vec![0u64; program.tiles.len()];
                let mut received = vec![0u64; program.tiles.len()];
                for t in &program.phases[*phase] {
                    sent[t.sender as usize] += t.words.max(MIN_WINDOW) as u64;
                    for &(tile, _, _) in &t.deliveries {
                        received[tile as usize] += t.words.max(MIN_WINDOW) as u64
                            + (SETUP_BEFORE_ARRIVAL + 2 * target.csr_write_stall) as u64;
                    }
                }
                let busiest = sent
                    .iter()
                    .zip(&received)
                    .map(|(s, r)| *s.max(r))
                    .max()
                    .unwrap_or(0);
                let columns = target.tiles.div_ceil(target.tiles_per_column.max(1));
                (
                    label.clone(),
                    busiest
                        + target.exchange_base_latency as u64
                        + target.exchange_cycles_per_column_hop as u64 * columns as u64,
                )
            }
        };
        steps.push((label, cycles + target.global_sync_latency as u64));
    }
    let reserved = placement.reserved.worker_scratch + 6 * placement.reserved.worker_scratch_bytes
        - target.sram_base;
    let peak_sram = program
        .tiles
        .iter()
        .map(|tile| {
            (0..program.steps.len())
                .map(|step| {
                    tile.buffers
                        .iter()
                        .filter(|b| b.alias_of.is_none() && b.live.0 <= step && step <= b.live.1)
                        .map(|b| b.bytes)
                        .sum::<u32>()
                })
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
        + reserved;
    Estimate {
        cycles: steps.iter().map(|s| s.1).sum(),
        steps,
        peak_sram,
    }
}
