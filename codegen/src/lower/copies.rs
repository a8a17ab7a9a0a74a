//! The kernel calls of one local copy (a list of runs from one buffer to another on a tile):
//! whole 32-bit words go to `copy_runs` (8-byte granules when everything allows), words only
//! partly covered by runs — element-granular pieces of f16 or FP8 data — to `gather_elements`,
//! which writes each such word whole from its lanes (lanes no run covers are zero). Every
//! destination word is written by exactly one of the two calls, so they never conflict.
//!
//! Tables repeat: when the run list is `p` runs shifted by a constant (source, destination)
//! step `n / p` times (rows into panels, a head's keys into `$CWEI` blocks), the table holds `p`
//! runs and the kernel's outer loop does the rest.

use crate::redist::Run;
use std::collections::BTreeMap;
use std::sync::Arc;
use tessera_kernels::movement::{Element, GatherWord, Granule, Lane, Run as TableRun, RunSource};
use tessera_kernels::table::KernelParams;

use super::copy_estimates::estimated;
use super::periods::{pieces, Shift};

/// Largest table a call may carry (bytes of the table constant on the tile).
pub const MAX_TABLE_BYTES: usize = 96 * 1024;

fn align_up(x: u32) -> u32 {
    x.div_ceil(4) * 4
}

fn align_down(x: u32) -> u32 {
    x / 4 * 4
}

/// Run `b` against run `a` for [`periodic_pieces`]: sizes, kinds and offset differences.
fn run_relation(a: &TableRun, b: &TableRun) -> (u32, u32, i64, Option<i64>) {
    use tessera_kernels::movement::RunSource;
    let ds = match (a.src, b.src) {
        (RunSource::Offset(x), RunSource::Offset(y)) => Some(y as i64 - x as i64),
        (RunSource::Zeros, RunSource::Zeros) => Some(0),
        _ => None,
    };
    (a.bytes, b.bytes, b.dst as i64 - a.dst as i64, ds)
}

/// Word `b` against word `a` for [`periodic_pieces`]: per lane, zero or the source
/// difference, and the destination difference.
fn word_relation(a: &GatherWord, b: &GatherWord) -> (i64, [Option<i64>; 4], [bool; 4]) {
    let mut ds = [None; 4];
    let mut zero = [false; 4];
    for (j, (x, y)) in a.lanes.iter().zip(&b.lanes).enumerate().take(4) {
        match (x, y) {
            (Lane::Src(p), Lane::Src(q)) => ds[j] = Some(*q as i64 - *p as i64),
            (Lane::Zero, Lane::Zero) => zero[j] = true,
            _ => {}
        }
    }
    (b.dst as i64 - a.dst as i64, ds, zero)
}

fn run_step(a: &TableRun, b: &TableRun) -> Option<Shift> {
    use tessera_kernels::movement::RunSource;
    if a.bytes != b.bytes {
        return None;
    }
    let ds = match (a.src, b.src) {
        (RunSource::Offset(x), RunSource::Offset(y)) => Some(y as i64 - x as i64),
        (RunSource::Zeros, RunSource::Zeros) => None,
        _ => return None,
    };
    Some((ds, b.dst as i64 - a.dst as i64))
}

fn word_step(a: &GatherWord, b: &GatherWord) -> Option<Shift> {
    let mut ds: Option<i64> = None;
    for (x, y) in a.lanes.iter().zip(&b.lanes) {
        match (x, y) {
            (Lane::Src(p), Lane::Src(q)) => {
                let d = *q as i64 - *p as i64;
                if ds.is_some_and(|e| e != d) {
                    return None;
                }
                ds = Some(d);
            }
            (Lane::Zero, Lane::Zero) => {}
            _ => return None,
        }
    }
    Some((ds, b.dst as i64 - a.dst as i64))
}

/// Bytes of one `copy_runs` table entry.
const RUN_BYTES: usize = 12;

/// Bytes of one `gather_elements` table entry of a word of `lanes` lanes: its destination and
/// one source offset per lane.
const fn gather_word_bytes(lanes: usize) -> usize {
    4 + 4 * lanes
}

/// Bytes of the tables `calls` (from [`copy_params`]) carry as constants on their tile: what a
/// copy costs in SRAM beyond its buffers, for the planner.
pub fn table_bytes(calls: &[KernelParams]) -> u64 {
    calls
        .iter()
        .map(|call| {
            // Only the calls `copy_params` makes carry tables.
            if let KernelParams::CopyRuns { runs, .. } = call {
                (runs.len() * RUN_BYTES) as u64
            } else if let KernelParams::Gather { words, element, .. } = call {
                (words.len() * gather_word_bytes(element.lanes())) as u64
            } else if let KernelParams::Transpose4 { blocks, .. } = call {
                // The entries and the word the loop reads ahead.
                (blocks.len() * tessera_kernels::movement::BLOCK_ENTRY_BYTES + 4) as u64
            } else {
                0
            }
        })
        .sum()
}

/// [`run_step`] of two runs that both copy from a source: the (source, destination) step.
fn progression_step(a: &TableRun, b: &TableRun) -> Option<(i64, i64)> {
    match run_step(a, b)? {
        (Some(ds), dd) => Some((ds, dd)),
        (None, _) => None,
    }
}

/// Whether a copy's table is one progression of at least two equal runs (`copy_runs` walks it
/// with register strides): the tables the lowering lets load and store in one bundle, where
/// pacing halves the cost. (Other paced loops are bit-exact too — the checker runs them — but
/// save less; they are left for when the estimates are compared per call.)
pub fn is_progression(params: &KernelParams) -> bool {
    let KernelParams::CopyRuns { runs, .. } = params else {
        return false;
    };
    runs.len() >= 2
        && progression_step(&runs[0], &runs[1]).is_some_and(|s| {
            runs.windows(2)
                .all(|w| progression_step(&w[0], &w[1]) == Some(s))
        })
}

/// Most rows a one-run copy repeated by its outer loop is unrolled into a table of (12 bytes a
/// row; the STRIDED loops read two entries of it).
const MAX_UNROLLED_ROWS: usize = 128;

/// Most calls a table is cut into by [`progressions`].
const MAX_PROGRESSIONS: usize = 4;
/// Fewest runs of the longest progression for a cut to pay.
const MIN_PROGRESSION_RUNS: usize = 8;

/// `table` as a few arithmetic progressions of equal runs (each entry the one before shifted
/// by a constant step), one call each, when it is made of at most [`MAX_PROGRESSIONS`] of them
/// of at least [`MIN_PROGRESSION_RUNS`] runs: `copy_runs` walks a progression with register
/// strides (2 bundles per 8 bytes, 1 paced) where a list of runs costs a table read per run.
/// Rows of a block whose staging starts mid-way (the first row last) or that arrive from two
/// senders are such a table. Otherwise the table whole. The caller keeps the cut only where the
/// kernel's estimates favour it.
fn progressions(table: &[TableRun]) -> Vec<Vec<TableRun>> {
    let mut parts: Vec<Vec<TableRun>> = Vec::new();
    let mut at = 0;
    while at < table.len() {
        let mut end = at + 1;
        if end < table.len() {
            if let Some(s) = progression_step(&table[at], &table[end]) {
                while end + 1 < table.len()
                    && progression_step(&table[end], &table[end + 1]) == Some(s)
                {
                    end += 1;
                }
                end += 1;
            }
        }
        if parts.len() == MAX_PROGRESSIONS {
            return vec![table.to_vec()];
        }
        parts.push(table[at..end].to_vec());
        at = end;
    }
    if parts.len() <= 1 || parts.iter().all(|p| p.len() < MIN_PROGRESSION_RUNS) {
        return vec![table.to_vec()];
    }
    parts
}

/// The calls copying `runs` (destination offsets sorted, not overlapping) of elements of
/// `element_bytes` bytes.
pub fn copy_params(runs: &[Run], element_bytes: u32) -> Result<Vec<KernelParams>, String> {
    let mut whole: Vec<TableRun> = Vec::new();
    let mut partial: PartialWords = BTreeMap::new();
    let e = element_bytes.max(1);
    for r in runs {
        let (start, end) = (r.dst, r.dst + r.bytes);
        let body = (align_up(start), align_down(end));
        let body_ok = body.0 < body.1
            && r.src
                .is_none_or(|s| (s + (body.0 - start)).is_multiple_of(4));
        let mut element = |at: u32| {
            let src = r.src.map(|s| s + (at - start));
            partial
                .entry(align_down(at))
                .or_default()
                .push((at % 4, src));
        };
        if body_ok {
            let mut at = start;
            while at < body.0 {
                element(at);
                at += e;
            }
            whole.push(match r.src {
                Some(s) => TableRun::copy(s + (body.0 - start), body.0, body.1 - body.0),
                None => TableRun::zeros(body.0, body.1 - body.0),
            });
            let mut at = body.1;
            while at < end {
                element(at);
                at += e;
            }
        } else {
            let mut at = start;
            while at < end {
                element(at);
                at += e;
            }
        }
    }
    let mut calls = Vec::new();
    if !whole.is_empty() {
        // Merge runs contiguous on both sides, then fold repeats into the outer loop.
        let mut merged: Vec<TableRun> = Vec::with_capacity(whole.len());
        for r in whole {
            if let Some(last) = merged.last_mut() {
                let contiguous = last.dst + last.bytes == r.dst
                    && match (last.src, r.src) {
                        (RunSource::Offset(a), RunSource::Offset(b)) => a + last.bytes == b,
                        (RunSource::Zeros, RunSource::Zeros) => true,
                        _ => false,
                    };
                if contiguous && last.bytes + r.bytes <= 0xFFFF * 4 {
                    last.bytes += r.bytes;
                    continue;
                }
            }
            merged.push(r);
        }
        let cut = pieces(&merged, run_relation, run_step, RUN_BYTES);
        for piece in cut {
            let (ds, dd) = piece.step;
            let table: Vec<TableRun> = merged[piece.start..piece.start + piece.table].to_vec();
            let eight = table.iter().all(|r| {
                r.dst % 8 == 0
                    && r.bytes % 8 == 0
                    && match r.src {
                        tessera_kernels::movement::RunSource::Offset(s) => s % 8 == 0,
                        tessera_kernels::movement::RunSource::Zeros => true,
                    }
            }) && ds % 8 == 0
                && dd % 8 == 0;
            if table.len() * RUN_BYTES > MAX_TABLE_BYTES {
                return Err(format!(
                    "a copy of {} runs needs a {}-byte table",
                    table.len(),
                    table.len() * RUN_BYTES
                ));
            }
            let call = |runs: Vec<TableRun>| KernelParams::CopyRuns {
                runs: Arc::new(runs),
                outer: piece.outer as u32,
                src_stride: ds as u32,
                dst_stride: dd as u32,
                granule: if eight {
                    Granule::Word8
                } else {
                    Granule::Word4
                },
                slots: None,
            };
            let parts: Vec<KernelParams> = progressions(&table).into_iter().map(call).collect();
            let whole = call(table.clone());
            // The cut only where the estimates say its calls are faster than the one (estimated
            // from the tables alone: a template case per candidate would be kept for the run).
            let cycles = |c: &KernelParams| {
                c.copy_spec()
                    .and_then(|spec| tessera_kernels::movement::copy_runs_estimate(&spec).ok())
                    .unwrap_or(u64::MAX)
            };
            // One run repeated by the outer loop (rows of a block) pays the loop's overhead
            // per row; the same rows as one progression of runs go through the STRIDED loops,
            // which have none. Taken where the estimates favour it and the table stays small.
            let unrolled = (table.len() == 1
                && piece.outer >= 2
                && piece.outer <= MAX_UNROLLED_ROWS
                && ds >= 0)
                .then(|| {
                    let runs: Vec<TableRun> = (0..piece.outer as i64)
                        .map(|o| {
                            let (first, (o_src, o_dst)) = (&table[0], (o * ds, o * dd));
                            let dst = (i64::from(first.dst) + o_dst) as u32;
                            match first.src {
                                RunSource::Offset(src) => TableRun::copy(
                                    (i64::from(src) + o_src) as u32,
                                    dst,
                                    first.bytes,
                                ),
                                RunSource::Zeros => TableRun::zeros(dst, first.bytes),
                            }
                        })
                        .collect();
                    KernelParams::CopyRuns {
                        runs: Arc::new(runs),
                        outer: 1,
                        src_stride: 0,
                        dst_stride: 0,
                        granule: if eight {
                            Granule::Word8
                        } else {
                            Granule::Word4
                        },
                        slots: None,
                    }
                });
            if parts.len() > 1 && parts.iter().map(cycles).sum::<u64>() < cycles(&whole) {
                calls.extend(parts);
            } else if let Some(u) = unrolled.filter(|u| cycles(u) < cycles(&whole)) {
                calls.push(u);
            } else {
                calls.push(whole);
            }
        }
    }
    if !partial.is_empty() {
        let all = gather_calls(&partial, e)?;
        let blocks = if e == 2 {
            super::block_transposes::transpose_blocks(&partial)
        } else {
            None
        };
        match blocks {
            Some(found) => {
                let mut rest = partial.clone();
                for word in &found.words {
                    rest.remove(word);
                }
                let mut with = found.calls;
                if !rest.is_empty() {
                    with.extend(gather_calls(&rest, e)?);
                }
                if estimated(&with) < estimated(&all) {
                    calls.extend(with);
                } else {
                    calls.extend(all);
                }
            }
            None => calls.extend(all),
        }
    }
    Ok(calls)
}

/// Destination word → its lanes (byte offset in the word → source offset or zero).
pub(super) type PartialWords = BTreeMap<u32, Vec<(u32, Option<u32>)>>;

/// The `gather_elements` calls writing `partial` (words of `e`-byte elements).
fn gather_calls(partial: &PartialWords, e: u32) -> Result<Vec<KernelParams>, String> {
    let mut calls = Vec::new();
    let element = match e {
        1 => Element::Byte,
        2 => Element::Half,
        other => return Err(format!("a partial word of {other}-byte elements")),
    };
    let lanes = element.lanes();
    let words: Vec<GatherWord> = partial
        .iter()
        .map(|(dst, have)| {
            let mut l = vec![Lane::Zero; lanes];
            for &(byte, src) in have {
                if let Some(s) = src {
                    l[(byte / e) as usize] = Lane::Src(s);
                }
            }
            GatherWord {
                dst: *dst,
                lanes: l,
            }
        })
        .collect();
    let word_bytes = gather_word_bytes(lanes);
    // The calls of one list of words, cut into pieces.
    let gathers = |words: &[GatherWord]| -> Result<Vec<KernelParams>, String> {
        let mut out = Vec::new();
        for piece in pieces(words, word_relation, word_step, word_bytes) {
            let (ds, dd) = piece.step;
            let table: Vec<GatherWord> = words[piece.start..piece.start + piece.table].to_vec();
            if table.len() * word_bytes > MAX_TABLE_BYTES {
                return Err(format!(
                    "a gather of {} words needs a table over {MAX_TABLE_BYTES} bytes",
                    table.len()
                ));
            }
            out.push(KernelParams::Gather {
                words: Arc::new(table),
                outer: piece.outer as u32,
                src_stride: ds as u32,
                dst_stride: dd as u32,
                element,
            });
        }
        Ok(out)
    };
    // Words with a zero lane (a block's padding next to its last values) apart, where the
    // estimates say so: the words every lane of which has a source then run the kernel's
    // loops without zero tests (6 bundles a word, 4 as a strided transpose, against 9), for
    // one more call.
    let (full, padded): (Vec<GatherWord>, Vec<GatherWord>) = words
        .iter()
        .cloned()
        .partition(|w| w.lanes.iter().all(|l| matches!(l, Lane::Src(_))));
    let whole = gathers(&words)?;
    let mut split = Vec::new();
    for part in [&full, &padded] {
        if !part.is_empty() {
            split.extend(gathers(part)?);
        }
    }
    if !full.is_empty() && !padded.is_empty() && estimated(&split) < estimated(&whole) {
        calls.extend(split);
    } else {
        calls.extend(whole);
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_into_panels_fold_into_the_outer_loop() {
        // 4 rows of 64 FP8 bytes (stride 64) into panels [kb][row][32]: 8 runs of 32 bytes.
        let mut runs = Vec::new();
        for kb in 0..2u32 {
            for row in 0..4u32 {
                runs.push(Run {
                    src: Some(row * 64 + kb * 32),
                    dst: (kb * 4 + row) * 32,
                    bytes: 32,
                });
            }
        }
        let calls = copy_params(&runs, 1).unwrap();
        assert_eq!(calls.len(), 1);
        let KernelParams::CopyRuns {
            runs,
            outer,
            src_stride,
            dst_stride,
            granule,
            ..
        } = &calls[0]
        else {
            panic!()
        };
        assert_eq!(
            (runs.len(), *outer, *src_stride, *dst_stride, *granule),
            (4, 2, 32, 128, Granule::Word8)
        );
    }

    /// Every destination byte the calls write, with the source byte it comes from (`None`:
    /// zero), from the calls' definition (table runs and words shifted by the outer loop).
    fn written(calls: &[KernelParams]) -> BTreeMap<u32, Option<u32>> {
        use tessera_kernels::movement::RunSource;
        let mut out = BTreeMap::new();
        for call in calls {
            if let KernelParams::CopyRuns {
                runs,
                outer,
                src_stride,
                dst_stride,
                ..
            } = call
            {
                for o in 0..*outer {
                    for r in runs.iter() {
                        for b in 0..r.bytes {
                            let src = match r.src {
                                RunSource::Offset(s) => Some(s + o * src_stride + b),
                                RunSource::Zeros => None,
                            };
                            let fresh = out.insert(r.dst + o * dst_stride + b, src);
                            assert!(fresh.is_none(), "a byte written twice");
                        }
                    }
                }
            } else if let Some(g) = call.gather_spec() {
                let e = g.element.bytes();
                let (src_stride, dst_stride) = (g.src_stride, g.dst_stride);
                for o in 0..g.outer {
                    for w in g.words.iter() {
                        for (k, lane) in w.lanes.iter().enumerate() {
                            for b in 0..e {
                                let src = match lane {
                                    Lane::Src(s) => Some(s + o * src_stride + b),
                                    Lane::Zero => None,
                                };
                                let at = w.dst + o * dst_stride + k as u32 * e + b;
                                assert!(out.insert(at, src).is_none(), "a byte written twice");
                            }
                        }
                    }
                }
            } else if let Some(t) = call.transpose4_spec() {
                // Quad c of a block is column c of its source rows (the kernel's definition).
                let (src_stride, dst_stride, row, col) = (t.src_stride, t.dst_stride, t.row, t.col);
                for o in 0..t.outer {
                    for blk in t.blocks.iter() {
                        for c in 0..4u32 {
                            for i in 0..4u32 {
                                for b in 0..2u32 {
                                    let src = blk.src + o * src_stride + i * row + 2 * c + b;
                                    let at = blk.dst + o * dst_stride + c * col + 2 * i + b;
                                    assert!(
                                        out.insert(at, Some(src)).is_none(),
                                        "a byte written twice"
                                    );
                                }
                            }
                        }
                    }
                }
            } else {
                panic!("an unexpected call {call:?}");
            }
        }
        out
    }

    /// A row-major block of values (`keys` × `width` f16, row stride `row` bytes) into `$CWEI`
    /// order as element runs: every 2-byte element where `layout.rs` puts it, zero padding to
    /// whole K-blocks and channel blocks.
    fn values_into_cwei(keys: u32, width: u32, row: u32) -> Vec<Run> {
        let kbs = keys.div_ceil(16);
        let mut runs = Vec::new();
        for nb in 0..width.div_ceil(16) {
            for kb in 0..kbs {
                for m in 0..16 {
                    for p in 0..4 {
                        for j in 0..4 {
                            let (key, ch) = (kb * 16 + p * 4 + j, nb * 16 + m);
                            let dst = (nb * kbs + kb) * 512 + (4 * m + p) * 8 + 2 * j;
                            let src = (key < keys && ch < width).then_some(key * row + 2 * ch);
                            runs.push(Run { src, dst, bytes: 2 });
                        }
                    }
                }
            }
        }
        runs
    }

    #[test]
    fn values_into_cwei_go_through_whole_block_transposes() {
        // So400m's key block of 81 keys × 72 columns: 20 × 18 whole blocks, the 81st key and
        // the padding by the other kernels.
        let runs = values_into_cwei(81, 72, 144);
        let calls = copy_params(&runs, 2).unwrap();
        assert_eq!(written(&calls), expected(&runs));
        let blocks: usize = calls
            .iter()
            .map(|c| {
                if let KernelParams::Transpose4 { blocks, outer, .. } = c {
                    blocks.len() * *outer as usize
                } else {
                    0
                }
            })
            .sum();
        assert_eq!(blocks, 20 * 18);
        // Against element gathers of every word (the padding too, here).
        let gathers = gather_calls(
            &runs
                .iter()
                .map(|r| (r.dst / 4 * 4, vec![(r.dst % 4, r.src)]))
                .fold(PartialWords::new(), |mut m, (w, l)| {
                    m.entry(w).or_default().extend(l);
                    m
                }),
            2,
        )
        .unwrap();
        let (with, without) = (estimated(&calls), estimated(&gathers));
        assert!(with < without, "{with} against {without}");
    }

    fn expected(runs: &[Run]) -> BTreeMap<u32, Option<u32>> {
        runs.iter()
            .flat_map(|r| (0..r.bytes).map(move |b| (r.dst + b, r.src.map(|s| s + b))))
            .collect()
    }

    /// A head's keys into `$CWEI` blocks as staged on a tile whose first key's tail came from
    /// another sender: 8 blocks of 16 keys × (two 32-byte K-blocks, a 16-byte tail and 16
    /// bytes of zeros), one tail out of place.
    fn keys_with_one_stray_tail() -> Vec<Run> {
        let mut runs = Vec::new();
        for nb in 0..8u32 {
            for kb in 0..3u32 {
                for ch in 0..16u32 {
                    let key = nb * 16 + ch;
                    let dst = nb * 1536 + kb * 512 + ch * 32;
                    if kb < 2 {
                        runs.push(Run {
                            src: Some(key * 80 + kb * 32),
                            dst,
                            bytes: 32,
                        });
                    } else {
                        let src = if key == 0 { 90_000 } else { key * 80 + 64 };
                        runs.push(Run {
                            src: Some(src),
                            dst,
                            bytes: 16,
                        });
                        runs.push(Run {
                            src: None,
                            dst: dst + 16,
                            bytes: 16,
                        });
                    }
                }
            }
        }
        runs
    }

    #[test]
    fn a_periodic_list_with_one_stray_item_folds_around_it() {
        let runs = keys_with_one_stray_tail();
        let calls = copy_params(&runs, 2).unwrap();
        assert_eq!(written(&calls), expected(&runs));
        // One literal table would hold all 512 runs (6 KiB); the pieces hold about one
        // block's period of 64 runs and the few around the stray tail.
        let bytes = table_bytes(&calls);
        assert!(
            bytes < 1600,
            "{bytes} bytes of tables in {} calls",
            calls.len()
        );
    }

    /// A list of `blocks` repeats of `pattern` (runs at increasing destinations, shifted by
    /// `(src_step, dst_step)` per repeat), some items then moved elsewhere.
    fn almost_periodic(
        pattern: &[(u16, u8, bool)],
        blocks: u32,
        src_step: u32,
        stray: &[(usize, u32)],
    ) -> Vec<Run> {
        let mut runs = Vec::new();
        let mut dst = 0u32;
        let mut layout = Vec::new();
        for &(src, words, zero) in pattern {
            layout.push((src as u32 * 4, dst, words as u32 * 4 + 4, zero));
            dst += words as u32 * 4 + 4;
        }
        let dst_step = dst;
        for b in 0..blocks {
            for &(src, at, bytes, zero) in &layout {
                runs.push(Run {
                    src: (!zero).then_some(src + b * src_step),
                    dst: at + b * dst_step,
                    bytes,
                });
            }
        }
        for &(i, to) in stray {
            let i = i % runs.len();
            if runs[i].src.is_some() {
                runs[i].src = Some(1 << 20 | to);
            }
        }
        runs
    }

    proptest::proptest! {
        #[test]
        fn pieces_copy_exactly_what_the_runs_say(
            pattern in proptest::collection::vec((0u16..64, 0u8..6, proptest::bool::weighted(0.2)), 1..12),
            blocks in 1u32..24,
            src_step in 0u32..1024,
            stray in proptest::collection::vec((0usize..10_000, 0u32..4096), 0..4),
            element in proptest::sample::select(vec![1u32, 2]),
        ) {
            let runs = almost_periodic(&pattern, blocks, src_step * 4, &stray);
            let calls = copy_params(&runs, element).unwrap();
            proptest::prop_assert_eq!(written(&calls), expected(&runs));
        }
    }

    #[test]
    fn odd_f16_runs_split_into_words_and_lanes() {
        // 9 halves (18 bytes) then 7 zero halves: 16 bytes whole, one word of (data, zero) and
        // 12 bytes of zeros.
        let runs = [
            Run {
                src: Some(100),
                dst: 0,
                bytes: 18,
            },
            Run {
                src: None,
                dst: 18,
                bytes: 14,
            },
        ];
        let calls = copy_params(&runs, 2).unwrap();
        assert_eq!(calls.len(), 2);
        let KernelParams::Gather { words, outer, .. } = &calls[1] else {
            panic!()
        };
        assert_eq!(*outer, 1);
        assert_eq!(
            words[0],
            GatherWord {
                dst: 16,
                lanes: vec![Lane::Src(116), Lane::Zero]
            }
        );
    }

    /// Rows into panels whose staging holds the first row last: one run out of step, then a
    /// progression. The copy is cut into progressions, each walked with register strides,
    /// because the estimates favour it; a table of short progressions stays whole.
    #[test]
    fn a_table_of_progressions_is_cut_where_it_pays() {
        // 36 K-blocks of 64 rows (a panel of 2048 bytes each), as `qkv.in` on a tile.
        let rows = 64u32;
        let mut runs = Vec::new();
        for kb in 0..36u32 {
            let row = |r: u32, src_row: u32| Run {
                src: Some(src_row * 1152 + 32 * kb),
                dst: 2048 * kb + 32 * r,
                bytes: 32,
            };
            runs.push(row(0, rows - 1));
            runs.extend((1..rows).map(|r| row(r, r - 1)));
        }
        let calls = copy_params(&runs, 1).unwrap();
        let lens: Vec<usize> = calls
            .iter()
            .map(|c| {
                let KernelParams::CopyRuns { runs, .. } = c else {
                    panic!("{c:?}")
                };
                runs.len()
            })
            .collect();
        // Greedy from the first run: the step out and the first row make a progression of two.
        assert_eq!(lens, [2, 62]);
        // Runs two by two out of step: no progression of 8; one call.
        let zigzag: Vec<Run> = (0..16u32)
            .map(|r| Run {
                src: Some(if r % 2 == 0 { 4096 + 64 * r } else { 64 * r }),
                dst: 32 * r,
                bytes: 32,
            })
            .collect();
        assert_eq!(copy_params(&zigzag, 1).unwrap().len(), 1);
    }

    /// A block's rows out of wider rows (61 rows of 32 bytes at a 128-byte stride, a sum's
    /// operand from a product's block on the same tile): one run the outer loop repeats pays
    /// the loop's overhead per row, so the copy becomes one progression of 61 runs where the
    /// kernel's estimate favours it, copying exactly the same bytes.
    #[test]
    fn rows_repeated_by_the_outer_loop_unroll_into_a_progression() {
        let runs: Vec<Run> = (0..61u32)
            .map(|r| Run {
                src: Some(128 * r + 64),
                dst: 32 * r,
                bytes: 32,
            })
            .collect();
        let calls = copy_params(&runs, 2).unwrap();
        let [KernelParams::CopyRuns {
            runs: table, outer, ..
        }] = &calls[..]
        else {
            panic!("{calls:?}")
        };
        assert_eq!((table.len(), *outer), (61, 1));
        assert_eq!(written(&calls), expected(&runs));
    }
}
