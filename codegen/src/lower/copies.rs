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
use tessera_kernels::movement::{Element, GatherWord, Granule, Lane, Run as TableRun};
use tessera_kernels::table::KernelParams;

/// Largest table a call may carry (bytes of the table constant on the tile).
pub const MAX_TABLE_BYTES: usize = 96 * 1024;

fn align_up(x: u32) -> u32 {
    x.div_ceil(4) * 4
}

fn align_down(x: u32) -> u32 {
    x / 4 * 4
}

/// The smallest period `p` of `items` under `shift` (item `i + p` is item `i` shifted by a
/// constant step), with the step; `(items.len(), (0, 0))` when there is none.
fn period<T>(items: &[T], step: impl Fn(&T, &T) -> Option<(i64, i64)>) -> (usize, (i64, i64)) {
    let n = items.len();
    if n < 2 {
        return (n, (0, 0));
    }
    'candidates: for p in 1..n {
        if !n.is_multiple_of(p) || p > n / 2 {
            continue;
        }
        let Some(delta) = step(&items[0], &items[p]) else {
            continue;
        };
        if delta.0 < 0 || delta.1 <= 0 {
            continue;
        }
        for i in 0..n - p {
            if step(&items[i], &items[i + p]) != Some(delta) {
                continue 'candidates;
            }
        }
        return (p, delta);
    }
    (n, (0, 0))
}

/// The calls' pieces of `items`: one piece when the whole list has one period (or fits a
/// table), else [`periodic_pieces`].
fn pieces<T>(
    items: &[T],
    step: impl Fn(&T, &T) -> Option<(i64, i64)> + Copy,
    max_table: usize,
) -> Vec<Piece> {
    let (p, delta) = period(items, step);
    if p <= max_table {
        return vec![Piece {
            start: 0,
            table: p,
            outer: items.len() / p.max(1),
            step: delta,
        }];
    }
    periodic_pieces(items, step, max_table)
}

/// One call's share of a list: items `start..start + table * outer`, the first `table` of them
/// in the call's table and the rest the table shifted by `step` (source, destination) per
/// outer iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    start: usize,
    table: usize,
    outer: usize,
    step: (i64, i64),
}

/// `items` cut into pieces of one repeat each, for lists with no single period (a block
/// gathered from several tiles, where the first rows sit apart): greedily the longest
/// periodic stretch at each point, with the items between stretches as one-shot pieces.
/// Item `k + p` equals item `k` shifted by a constant exactly when the first differences
/// repeat with period `p`, so the smallest periods of every prefix come from the prefix
/// function of the differences (smallest period of a prefix only grows with its length);
/// periods over `max_table` items are not looked for.
fn periodic_pieces<T>(
    items: &[T],
    step: impl Fn(&T, &T) -> Option<(i64, i64)>,
    max_table: usize,
) -> Vec<Piece> {
    let n = items.len();
    let mut pieces = Vec::new();
    let mut literal: Option<usize> = None;
    let flush = |pieces: &mut Vec<Piece>, literal: &mut Option<usize>, end: usize| {
        if let Some(s) = literal.take() {
            pieces.push(Piece {
                start: s,
                table: end - s,
                outer: 1,
                step: (0, 0),
            });
        }
    };
    let mut i = 0;
    while i < n {
        // Differences d[j] = step(items[i + j], items[i + j + 1]); `None` ends the stretch.
        let mut d: Vec<(i64, i64)> = Vec::new();
        let mut pi: Vec<usize> = Vec::new();
        // Best (items covered, period) so far.
        let mut best: Option<(usize, usize)> = None;
        while i + d.len() + 1 < n {
            let Some(x) = step(&items[i + d.len()], &items[i + d.len() + 1]) else {
                break;
            };
            let l = d.len();
            d.push(x);
            let mut k = if l == 0 { 0 } else { pi[l - 1] };
            while k > 0 && d[k] != x {
                k = pi[k - 1];
            }
            if l > 0 && d[k] == x {
                k += 1;
            }
            pi.push(k);
            let len = l + 1;
            let p = len - pi[l];
            if p > max_table {
                break;
            }
            // `len` differences with period p: `len + 1` items repeat with period p.
            let covered = (len + 1) / p * p;
            if covered >= 2 * p && best.is_none_or(|(c, _)| covered > c) {
                best = Some((covered, p));
            }
        }
        let chosen = best.and_then(|(covered, p)| {
            let delta = step(&items[i], &items[i + p])?;
            (delta.0 >= 0 && delta.1 > 0).then_some((covered, p, delta))
        });
        match chosen {
            Some((covered, p, delta)) => {
                flush(&mut pieces, &mut literal, i);
                pieces.push(Piece {
                    start: i,
                    table: p,
                    outer: covered / p,
                    step: delta,
                });
                i += covered;
            }
            None => {
                literal.get_or_insert(i);
                i += 1;
            }
        }
    }
    flush(&mut pieces, &mut literal, n);
    pieces
}

fn run_step(a: &TableRun, b: &TableRun) -> Option<(i64, i64)> {
    use tessera_kernels::movement::RunSource;
    if a.bytes != b.bytes {
        return None;
    }
    let ds = match (a.src, b.src) {
        (RunSource::Offset(x), RunSource::Offset(y)) => Some(y as i64 - x as i64),
        (RunSource::Zeros, RunSource::Zeros) => None,
        _ => return None,
    };
    Some((ds.unwrap_or(0), b.dst as i64 - a.dst as i64))
}

fn word_step(a: &GatherWord, b: &GatherWord) -> Option<(i64, i64)> {
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
    Some((ds.unwrap_or(0), b.dst as i64 - a.dst as i64))
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
            // Only the two calls `copy_params` makes carry tables.
            if let KernelParams::CopyRuns { runs, .. } = call {
                (runs.len() * RUN_BYTES) as u64
            } else if let KernelParams::Gather { words, element, .. } = call {
                (words.len() * gather_word_bytes(element.lanes())) as u64
            } else {
                0
            }
        })
        .sum()
}

/// The calls copying `runs` (destination offsets sorted, not overlapping) of elements of
/// `element_bytes` bytes.
pub fn copy_params(runs: &[Run], element_bytes: u32) -> Result<Vec<KernelParams>, String> {
    let mut whole: Vec<TableRun> = Vec::new();
    // Destination word → its lanes (byte offset in the word → source offset or zero).
    let mut partial: BTreeMap<u32, Vec<(u32, Option<u32>)>> = BTreeMap::new();
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
            use tessera_kernels::movement::RunSource;
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
        let cut = pieces(&merged, run_step, MAX_TABLE_BYTES / RUN_BYTES);
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
            calls.push(KernelParams::CopyRuns {
                runs: Arc::new(table),
                outer: piece.outer as u32,
                src_stride: ds as u32,
                dst_stride: dd as u32,
                granule: if eight {
                    Granule::Word8
                } else {
                    Granule::Word4
                },
            });
        }
    }
    if !partial.is_empty() {
        let element = match e {
            1 => Element::Byte,
            2 => Element::Half,
            other => return Err(format!("a partial word of {other}-byte elements")),
        };
        let lanes = element.lanes();
        let words: Vec<GatherWord> = partial
            .into_iter()
            .map(|(dst, have)| {
                let mut l = vec![Lane::Zero; lanes];
                for (byte, src) in have {
                    if let Some(s) = src {
                        l[(byte / e) as usize] = Lane::Src(s);
                    }
                }
                GatherWord { dst, lanes: l }
            })
            .collect();
        let word_bytes = gather_word_bytes(lanes);
        let cut = pieces(&words, word_step, MAX_TABLE_BYTES / word_bytes);
        for piece in cut {
            let (ds, dd) = piece.step;
            let table: Vec<GatherWord> = words[piece.start..piece.start + piece.table].to_vec();
            if table.len() * word_bytes > MAX_TABLE_BYTES {
                return Err(format!(
                    "a gather of {} words needs a table over {MAX_TABLE_BYTES} bytes",
                    table.len()
                ));
            }
            calls.push(KernelParams::Gather {
                words: Arc::new(table),
                outer: piece.outer as u32,
                src_stride: ds as u32,
                dst_stride: dd as u32,
                element,
            });
        }
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
        } = &calls[0]
        else {
            panic!()
        };
        assert_eq!(
            (runs.len(), *outer, *src_stride, *dst_stride, *granule),
            (4, 2, 32, 128, Granule::Word8)
        );
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
}
