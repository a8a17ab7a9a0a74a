//! The GEMM kernels' cycle estimate: bundles per worker launch from the code structure of
//! `gemm_amp_body.S`, the supervisor's cost per launch, and the launches of a case.

use super::abi::{FLAG_CHAIN, FLAG_PARTIALS, V_FLAGS, V_KBS, V_M, V_NBS};
use crate::case::Case;
use crate::split::{worker_split, WORKERS};

/// The workers' rows `(first, count)` of a GEMM of `m` rows: as even as possible
/// ([`worker_split`]), except where some worker would have 1 or 2 rows (the plain loop, 13 to
/// 18 bundles a row after a longer set-up) and fewer workers with 3 rows or more each are no
/// slower in the first K-block's launch and in the later ones (16 rows: 4, 3, 3, 3, 3 and an
/// idle worker, where the even split's 2-row workers took 53 and 56 bundles a launch against
/// 41 and 35).
pub(super) fn rows_split(m: u32) -> [(u32, u32); WORKERS] {
    let even = worker_split(m);
    let used = (m / 3).min(WORKERS as u32);
    if m >= 3 * WORKERS as u32 || used == 0 {
        return even;
    }
    let mut compact = [(m, 0); WORKERS];
    let (base, extra) = (m / used, m % used);
    let mut next = 0;
    for (w, entry) in compact.iter_mut().enumerate().take(used as usize) {
        let count = base + u32::from((w as u32) < extra);
        *entry = (next, count);
        next += count;
    }
    let cost = |split: &[(u32, u32); WORKERS], launch: Launch| {
        split
            .iter()
            .map(|&(_, count)| worker_bundles(u64::from(count), launch))
            .max()
            .unwrap_or(0)
    };
    let no_slower = [Launch::FirstZero, Launch::First, Launch::Next]
        .into_iter()
        .all(|launch| cost(&compact, launch) <= cost(&even, launch));
    if no_slower {
        compact
    } else {
        even
    }
}

/// The worker entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Launch {
    /// K-block 0 with C0 (`*_worker`).
    First,
    /// K-block 0 with zero partials (`*_worker_z`).
    FirstZero,
    /// K-block 0 of column blocks 1.. with zero partials when M ≥ 18 (`*_worker_zr`: the
    /// state the worker's earlier launches left in its registers).
    FirstZeroRetained,
    /// The same when M < 18: a check first sends the workers with fewer than 3 rows to the
    /// plain loop, which starts from the state they retained too.
    FirstZeroRetainedChecked,
    /// K-blocks 1.. when some worker has fewer than 3 rows (`*_worker_n`).
    Next,
    /// K-blocks 1.. when M ≥ 18 (`*_worker_nf`, no row check).
    NextFast,
    /// Chained, K-block 1: from an empty pipeline, leaving it full (`*_worker_nfc`).
    ChainFirst,
    /// Chained, K-blocks 2 .. kbs−2: from the pipeline the last launch left, leaving it full
    /// (`*_worker_c`).
    Chained,
    /// Chained, K-block kbs−1: from the pipeline the last launch left, drained (`*_worker_cd`).
    ChainedDrain,
    /// Chained without C0, K-block 0 of column block 0: fresh, leaving the pipeline full
    /// (`*_worker_zc`).
    ChainZeroFirst,
    /// Chained without C0, K-block 0 of column blocks 1..: from the last column block's
    /// pipeline (`*_worker_zx`).
    ChainZeroNext,
    /// Chained without C0, K-block kbs−1 of a column block before the last: leaving zero
    /// partials pending for the next (`*_worker_cz`).
    ChainedZeroOut,
}

/// Cycles from the kernel start to the first launch's `sync`, and after the last launch.
const PROLOGUE_CYCLES: u64 = 35;
const EPILOGUE_CYCLES: u64 = 12;
/// Supervisor cycles per launch on the critical path: the `sync` release (6), 32
/// `ld128putcs`, one store, `runall`, and the wait for the workers' first slots.
const LAUNCH_CYCLES: u64 = 6 + 32 + 1 + 1 + 2;
/// Supervisor cycles per chained launch beyond [`LAUNCH_CYCLES`]: the next launch's entry
/// set after `runall` and, for the last one, between the `sync` and the weights (measured on the
/// checker's cases: the chained ones' estimate error moves by one cycle a launch).
const CHAINED_LAUNCH_EXTRA_CYCLES: u64 = 1;
/// The one chain's prologue beyond [`PROLOGUE_CYCLES`]: the test for C0 and the K-block step
/// stored for `*_worker_zc`.
const FULL_CHAIN_PROLOGUE_CYCLES: u64 = 8;
/// The chained prologue's test for C0 where there is C0 (its result read at once).
const CHAIN_TEST_CYCLES: u64 = 13;

/// Bundles a worker with `count` rows issues in one launch, from the code structure of the
/// .S file: setup, the 4·count + 7 bundles from b = 3 to the last store, the `rpt` bubble
/// and the exit (the first K-block also runs b = -1..2 and a branch); or the plain loop for
/// fewer than 3 rows: 17 or 18 bundles per row (13 without partials), after a set-up that keeps
/// the rows, A's and C's rows and the strides for the later launches, which start from them.
/// Chained launches (4 rows or more): K-block 1 the warm-up, 5 bundles of the chained state
/// and b = 3 .. 10 but no drain (4·count + 13); the later ones 3 set-up bundles and no warm-up
/// (4·count + 5), the last one with the drain (4·count + 11). Chained without C0: K-block 0
/// of column block 0 reads every register of the chain from its record (4·count + 17), of the
/// others 5 set-up bundles and 8 more calls (4·count + 8), and the K-block before it leaves
/// zero partials pending (4·count + 5).
pub(super) fn worker_bundles(count: u64, launch: Launch) -> u64 {
    match (launch, count) {
        (Launch::First, 0) => 26,
        (Launch::First, 1..=2) => 32 + 18 * count,
        (Launch::First, _) => 4 * count + 33,
        (Launch::FirstZero, 0) => 23,
        (Launch::FirstZero, 1..=2) => 30 + 13 * count,
        (Launch::FirstZero, _) => 4 * count + 25,
        (Launch::FirstZeroRetained | Launch::FirstZeroRetainedChecked, 0) => 3,
        (Launch::FirstZeroRetained | Launch::FirstZeroRetainedChecked, 1..=2) => 8 + 13 * count,
        (Launch::FirstZeroRetained, _) => 4 * count + 12,
        (Launch::FirstZeroRetainedChecked, _) => 4 * count + 14,
        (Launch::Next, 0) => 3,
        (Launch::Next, 1..=2) => 8 + 17 * count,
        (Launch::Next, _) => 4 * count + 15,
        (Launch::NextFast, _) => 4 * count + 14,
        (Launch::ChainFirst, _) => 4 * count + 13,
        (Launch::Chained, _) => 4 * count + 5,
        (Launch::ChainedDrain, _) => 4 * count + 11,
        (Launch::ChainZeroFirst, _) => 4 * count + 17,
        (Launch::ChainZeroNext, _) => 4 * count + 8,
        (Launch::ChainedZeroOut, _) => 4 * count + 5,
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
        let busiest = rows_split(m)
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
    // Column blocks 1.. start from the registers the earlier launches left where there are no
    // partials to read.
    let later_first = if !partials {
        launch(if m >= 18 {
            Launch::FirstZeroRetained
        } else {
            Launch::FirstZeroRetainedChecked
        })
    } else {
        first
    };
    let next = launch(if m >= 18 {
        Launch::NextFast
    } else {
        Launch::Next
    });
    let chained = case.word(V_FLAGS) & FLAG_CHAIN != 0;
    if chained && !partials {
        // One chain over the call: K-block 0 of column block 0 fresh, of the others going on
        // from the last column block's last K-block; only the last column block drains.
        let launches = nbs * kbs - 1;
        return PROLOGUE_CYCLES
            + FULL_CHAIN_PROLOGUE_CYCLES
            + launch(Launch::ChainZeroFirst)
            + (nbs - 1) * (launch(Launch::ChainZeroNext) + launch(Launch::ChainedZeroOut))
            + nbs * (kbs - 2) * launch(Launch::Chained)
            + launch(Launch::ChainedDrain)
            + launches * CHAINED_LAUNCH_EXTRA_CYCLES
            + EPILOGUE_CYCLES;
    }
    let chain_test = if chained { CHAIN_TEST_CYCLES } else { 0 };
    let k_blocks = if chained {
        // K-block 1 leaves the pipeline full, 2 .. kbs−2 go on from it, kbs−1 drains it.
        launch(Launch::ChainFirst)
            + (kbs - 3) * launch(Launch::Chained)
            + launch(Launch::ChainedDrain)
            + (kbs - 1) * CHAINED_LAUNCH_EXTRA_CYCLES
    } else {
        (kbs - 1) * next
    };
    PROLOGUE_CYCLES
        + chain_test
        + first
        + (nbs - 1) * later_first
        + nbs * k_blocks
        + EPILOGUE_CYCLES
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every split covers the rows once and in order, and is never slower than the even one in
    /// any launch; from 3 rows up to 17 no worker is left with 1 or 2 rows where the even split
    /// had such a worker and the compact one is taken.
    #[test]
    fn the_rows_split_covers_the_rows_and_is_never_slower() {
        for m in 0..200u32 {
            let split = rows_split(m);
            let mut next = 0;
            for &(first, count) in &split {
                if count > 0 {
                    assert_eq!(first, next, "m = {m}: {split:?}");
                    next += count;
                }
            }
            assert_eq!(next, m, "m = {m}: {split:?}");
            let even = worker_split(m);
            // NextFast runs only from 18 rows, where the split is the even one.
            for launch in [Launch::First, Launch::FirstZero, Launch::Next] {
                let worst = |s: &[(u32, u32); WORKERS]| {
                    s.iter()
                        .map(|&(_, c)| worker_bundles(u64::from(c), launch))
                        .max()
                };
                assert!(worst(&split) <= worst(&even), "m = {m}, {launch:?}");
            }
        }
        assert_eq!(
            rows_split(16).map(|(_, c)| c),
            [4, 3, 3, 3, 3, 0],
            "16 rows: five workers"
        );
        assert_eq!(rows_split(18), worker_split(18));
    }
}
