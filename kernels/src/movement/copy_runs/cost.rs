//! Bundle counts of `copy_runs` per worker (from its assembly) and the estimate built on them.

use super::table::{Run, RunSource, Table};
use super::{PACE, STRIDED, UNIFORM, W8};
use crate::elementwise::common::worker_cycles;
use crate::movement::items::segments;
use crate::split::WORKERS;

/// Bundles of worker `w`'s share, following the kernel's control flow (counts from the
/// assembly; see its header).
pub(super) fn worker_bundles(table: &Table, first: u32, count: u32) -> u64 {
    if count == 0 {
        return 7;
    }
    let r_total = table.runs.len() as u32;
    let w8 = table.flags & W8 != 0;
    let pace = w8 && table.flags & PACE != 0;
    let uniform = table.flags & UNIFORM != 0;
    let granules = |run: &Run| u64::from(run.bytes / table.granule());
    let setup = 28;
    if table.flags & STRIDED != 0 {
        let n = granules(&table.runs[0]);
        let (init, go, per_column) = match pace {
            true => (26, 3, 6),
            false if w8 => (24, 2, 6),
            false => (26, 2, 6),
        };
        let mut total = setup + init;
        for (i, seg) in segments(first, count, r_total).iter().enumerate() {
            let len = u64::from(seg.len);
            total += if i == 0 { go } else { 8 + go };
            total += n * (per_column + if pace { len } else { 2 * len });
            total += 1;
        }
        return total + 1;
    }
    if uniform && r_total == 1 {
        let n = granules(&table.runs[0]);
        let count = u64::from(count);
        return if pace {
            setup + 6 + 6 + count * (6 + n) + 1
        } else {
            setup + 5 + 8 + count * (4 + 2 * n) + 1
        };
    }
    let init = match (uniform, pace) {
        (false, _) => 2,
        (true, false) => 7,
        (true, true) => 8,
    };
    let segs = segments(first, count, r_total);
    let mut total = setup + init;
    for (i, seg) in segs.iter().enumerate() {
        total += if i == 0 { 2 } else { 4 + 2 };
        for run in &table.runs[seg.first_entry as usize..(seg.first_entry + seg.len) as usize] {
            let n = granules(run);
            total += match (uniform, pace, run.src) {
                (false, _, RunSource::Zeros) => 7 + n,
                (false, false, RunSource::Offset(_)) => 7 + 2 * n,
                (false, true, RunSource::Offset(_)) => 12 + n,
                (true, false, _) => 4 + 2 * n,
                (true, true, _) => 8 + n,
            };
        }
        total += 1; // brnz items left
    }
    total + 1
}

pub(super) fn estimate(table: &Table, split: &[(u32, u32); WORKERS]) -> u64 {
    let mut bundles = [0u64; WORKERS];
    for (b, &(first, count)) in bundles.iter_mut().zip(split) {
        *b = worker_bundles(table, first, count);
    }
    worker_cycles(&bundles)
}
