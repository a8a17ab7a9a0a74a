//! A global sync on one tile, released as on a one-tile chip (rule R7).

use super::supervisor::supervisor_cycles;
use super::*;

#[test]
fn a_one_tile_global_sync_is_released_as_on_a_one_tile_chip() {
    // `sync 3` issues at 0: the tile arrives at 1 and the sync is released at 1 + 90 = 91 (R7);
    // `br $m10` issues at 91, so the run takes 92 cycles.
    assert_eq!(supervisor_cycles("    sync 3\n"), 92);
    // Two syncs: the second issues at 91, is released at 92 + 90 = 182; br at 182: 183 cycles.
    assert_eq!(supervisor_cycles("    sync 3\n    sync 3\n"), 183);
    // With a worker still running when `sync 3` issues, the tile arrives when the worker's last
    // round ends: `run` reads `setzi`'s result at 6 (R5) and launches worker 0 at 7 (R6); it
    // first issues at 12 (R2) and its exitz (bundle n) at 6n + 6, completing at 6n + 12 (R3).
    // `sync 3` issues at 13 (R5; slot 0 is the worker's at 12). Release at 6n + 12 + 90,
    // `br $m10` then: 6n + 103 cycles.
    for n in [2u64, 10] {
        let source = format!(
            "    .text
    .align 8
sup:
    setzi $m1, work
    run $m1, $mzero, 0
    sync 3
    br $m10
    .align 8
work:
{}",
            worker_bundles(n as usize)
        );
        assert_eq!(run_supervisor(&source, "sup").0, 6 * n + 103, "{n} bundles");
    }
}
