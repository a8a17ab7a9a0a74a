//! The GEMM kernels' cycle estimate: bundles per worker launch from the code structure of
//! `gemm_amp_body.S`, the supervisor's cost per launch, and the launches of a case.

use super::abi::{FLAG_PARTIALS, V_FLAGS, V_KBS, V_M, V_NBS};
use crate::case::Case;
use crate::split::worker_split;

/// The worker entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Launch {
    /// K-block 0 with C0 (`*_worker`).
    First,
    /// K-block 0 with zero partials (`*_worker_z`).
    FirstZero,
    /// K-blocks 1.. when some worker has fewer than 3 rows (`*_worker_n`).
    Next,
    /// K-blocks 1.. when M ≥ 18 (`*_worker_nf`, no row check).
    NextFast,
}

/// Cycles from the kernel start to the first launch's `sync`, and after the last launch.
const PROLOGUE_CYCLES: u64 = 35;
const EPILOGUE_CYCLES: u64 = 12;
/// Supervisor cycles per launch on the critical path: the `sync` release (6), 32
/// `ld128putcs`, one store, `runall`, and the wait for the workers' first slots.
const LAUNCH_CYCLES: u64 = 6 + 32 + 1 + 1 + 2;

/// Bundles a worker with `count` rows issues in one launch, from the code structure of the
/// .S file: setup, the 4·count + 7 bundles from b = 3 to the last store, the `rpt` bubble
/// and the exit (the first K-block also runs b = -1..2 and a branch); or the plain loop for
/// fewer than 3 rows: 18 bundles per row (13 without partials) after 4 that find A's row
/// stride.
fn worker_bundles(count: u64, launch: Launch) -> u64 {
    match (launch, count) {
        (Launch::First, 0) => 25,
        (Launch::First, 1..=2) => 30 + 18 * count,
        (Launch::First, _) => 4 * count + 33,
        (Launch::FirstZero, 0) => 22,
        (Launch::FirstZero, 1..=2) => 27 + 13 * count,
        (Launch::FirstZero, _) => 4 * count + 25,
        (Launch::Next, 0) => 15,
        (Launch::Next, 1..=2) => 20 + 18 * count,
        (Launch::Next, _) => 4 * count + 19,
        (Launch::NextFast, _) => 4 * count + 18,
    }
}

/// Estimated cycles of a case, from the supervisor's start to its return.
pub(super) fn estimate_cycles(case: &Case) -> u64 {
    let (m, kbs, nbs) = (
        case.word(V_M),
        case.word(V_KBS) as u64,
        case.word(V_NBS) as u64,
    );
    let partials = case.word(V_FLAGS) & FLAG_PARTIALS != 0;
    let launch = |launch: Launch| {
        let busiest = worker_split(m)
            .iter()
            .map(|&(_, count)| worker_bundles(count as u64, launch))
            .max();
        LAUNCH_CYCLES + 6 * busiest.unwrap_or(0)
    };
    let first = launch(if partials {
        Launch::First
    } else {
        Launch::FirstZero
    });
    let next = launch(if m >= 18 {
        Launch::NextFast
    } else {
        Launch::Next
    });
    PROLOGUE_CYCLES + nbs * (first + (kbs - 1) * next) + EPILOGUE_CYCLES
}
