//! Zero padding read from zeros behind an exchange's staged covers: where a destination-side
//! copy transposes f16 blocks out of its staging buffer (rows into `$CWEI` order) and the
//! destination is padded past the source's rows (a key block of 81 tokens padded to 96 for whole
//! AMP K-blocks), the padding's elements are given the sources the rows would have had if the
//! block went on — past the covers, in a tail of the staging buffer that the copy zeroes first —
//! so the transposes cover the padding too. Without it the last real row and the padding are
//! element-granular words (`gather_elements`) and word runs of zeros (`copy_runs`): two more
//! kernel calls, each with its set-up. The lowering keeps whichever the copy kernels' estimates
//! say is cheaper.

use super::copies::copy_params;
use super::copy_estimates::estimated;
use crate::redist::after::{Behind, TileCopy};
use crate::redist::{Buf, Run};
use std::collections::BTreeMap;
use tessera_kernels::table::KernelParams;

/// Most bytes of padding a copy turns into reads of a zero tail (a bound on the expansion into
/// elements and on the staging buffer's growth).
pub(super) const MAX_TAIL_BYTES: u32 = 4096;

/// A copy whose padding reads zeros behind the staged covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ZeroTail {
    /// The copy's runs, the padding's elements now reading the tail.
    pub runs: Vec<Run>,
    /// Staging offset of the tail (8-byte aligned, at or past the covers' end).
    pub start: u32,
    /// Bytes of the tail (a multiple of 8), zeroed before the copy.
    pub bytes: u32,
}

impl ZeroTail {
    /// The run that zeroes the tail (in the staging buffer itself).
    pub(super) fn zero_run(&self) -> Run {
        Run {
            src: None,
            dst: self.start,
            bytes: self.bytes,
        }
    }
}

/// Room kept between the covers and a tile's own source bytes while its tail is found (more
/// than any tail): the source bytes then go behind the tail.
const BEHIND_SHIFT: u32 = MAX_TAIL_BYTES + 8;

/// A tile's destination-side copy with its padding read from a zero tail.
pub(super) struct TailedCopy {
    pub tail: ZeroTail,
    /// The calls that zero the tail (in the staging buffer), then those that copy.
    pub zero: Vec<KernelParams>,
    pub copy: Vec<KernelParams>,
    /// Where the tile's own source bytes go: behind the tail, or among the covers.
    pub behind: Option<Behind>,
    /// `(at, by)`: the staged covers at or past staging offset `at` move up by `by` bytes, to
    /// make room for the own source bytes where the rows' progression expects them.
    pub gap: Option<(u32, u32)>,
}

impl TailedCopy {
    /// Bytes of the staging buffer: the covers, the tail and the own source bytes.
    pub(super) fn staging_bytes(&self) -> u32 {
        let tail_end = self.tail.start + self.tail.bytes;
        self.behind
            .map_or(tail_end, |b| tail_end.max(b.base + (b.hi - b.lo)))
    }

    /// Where a cover delivered at staging offset `offset` goes.
    pub(super) fn cover_offset(&self, offset: u32) -> u32 {
        match self.gap {
            Some((at, by)) if offset >= at => offset + by,
            Some(_) | None => offset,
        }
    }
}

/// `runs` with the sources in `from..from + len` moved to `to..`.
fn moved(runs: &[Run], from: u32, len: u32, to: u32) -> Vec<Run> {
    runs.iter()
        .map(|r| match r.src {
            Some(s) if (from..from + len).contains(&s) => Run {
                src: Some(to + (s - from)),
                ..*r
            },
            Some(_) | None => *r,
        })
        .collect()
}

/// The runs with the tile's own source bytes (`b`, behind the covers) where the rows'
/// progression expects them: an own element next to a staged one in destination order reads
/// one row step after (or before) it. Staged bytes at or past the gap move up by the own bytes
/// (whole 8-byte atoms). `None` when no own element has a staged neighbour, the gap is not
/// 8-byte aligned, or a cover (`covers`: staging ranges) straddles it.
fn own_in_place(
    runs: &[Run],
    b: Behind,
    covers: &[(u32, u32)],
    element: u32,
) -> Option<(Vec<Run>, Behind, (u32, u32))> {
    let len = b.hi - b.lo;
    let own = b.base..b.base + len;
    let by = len.div_ceil(8) * 8;
    let row = i64::from(row_step(runs, element)?);
    let staged = |r: &Run| r.src.filter(|s| !own.contains(s));
    let mine = |r: &Run| r.src.filter(|s| own.contains(s));
    // Every own element's expected place, from each staged neighbour; the most common valid one.
    let mut places: BTreeMap<u32, u32> = BTreeMap::new();
    for w in runs.windows(2) {
        if w[0].dst + w[0].bytes != w[1].dst {
            continue;
        }
        let at = match (staged(&w[0]), mine(&w[0]), staged(&w[1]), mine(&w[1])) {
            // A staged element, then an own one: the own one a row step after it.
            (Some(p), _, _, Some(s)) => {
                let p = i64::from(p + w[0].bytes - element);
                p + row - i64::from(s - b.base)
            }
            // An own element, then a staged one (moved up by the gap): a row step before it.
            (_, Some(s), Some(n), _) => {
                let last = i64::from(s + w[0].bytes - element - b.base);
                i64::from(n) + i64::from(by) - row - last
            }
            _ => continue,
        };
        if let Ok(at) = u32::try_from(at) {
            if at % 8 == 0 && !covers.iter().any(|&(lo, hi)| lo < at && at < hi) {
                *places.entry(at).or_default() += 1;
            }
        }
    }
    let at = places
        .iter()
        .max_by_key(|(at, count)| (**count, std::cmp::Reverse(**at)))
        .map(|(at, _)| *at)?;
    let placed = runs
        .iter()
        .map(|r| Run {
            src: r.src.map(|s| {
                if own.contains(&s) {
                    at + (s - b.base)
                } else if s >= at {
                    s + by
                } else {
                    s
                }
            }),
            ..*r
        })
        .collect();
    Some((placed, Behind { base: at, ..b }, (at, by)))
}

/// `copy` (from staging whose covers take `staged` bytes, delivered as `covers`) with its
/// padding read from a zero tail, when the copy kernels' estimates say the tail's zeroing and
/// the copy cost less than the copy as it is. A tile's own source bytes, behind the covers, go
/// behind the tail or among the covers where the rows' progression expects them, whichever is
/// cheaper.
pub(super) fn tailed_copy(
    copy: &TileCopy,
    staged: u32,
    covers: &[(u32, u32)],
    element: u32,
) -> Result<Option<TailedCopy>, String> {
    if copy.from != Buf::Staging {
        return Ok(None);
    }
    let mut candidates = Vec::with_capacity(2);
    match copy.behind {
        None => candidates.extend(zero_tail(&copy.runs, staged, element).map(|t| (t, None, None))),
        Some(b) => {
            let len = b.hi - b.lo;
            // Behind the tail: the own bytes out of the way while the tail is found.
            let runs = moved(&copy.runs, b.base, len, b.base + BEHIND_SHIFT);
            if let Some(mut tail) = zero_tail(&runs, staged, element) {
                let base = (tail.start + tail.bytes).div_ceil(8) * 8;
                tail.runs = moved(&tail.runs, b.base + BEHIND_SHIFT, len, base);
                candidates.push((tail, Some(Behind { base, ..b }), None));
            }
            if let Some((runs, behind, gap)) = own_in_place(&copy.runs, b, covers, element) {
                if let Some(tail) = zero_tail(&runs, staged + gap.1, element) {
                    candidates.push((tail, Some(behind), Some(gap)));
                }
            }
        }
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    let plain = estimated(&copy_params(&copy.runs, element)?);
    let mut best: Option<(u64, TailedCopy)> = None;
    for (tail, behind, gap) in candidates {
        let zero = copy_params(&[tail.zero_run()], 4)?;
        let with = copy_params(&tail.runs, element)?;
        let cost = estimated(&zero) + estimated(&with);
        if cost < plain && best.as_ref().is_none_or(|(c, _)| cost < *c) {
            best = Some((
                cost,
                TailedCopy {
                    tail,
                    zero,
                    copy: with,
                    behind,
                    gap,
                },
            ));
        }
    }
    Ok(best.map(|(_, t)| t))
}

/// The most common source step between destination neighbours of `element` bytes that are not
/// contiguous in the source (the row step of a transposing copy).
fn row_step(runs: &[Run], element: u32) -> Option<u32> {
    let mut steps: BTreeMap<i64, u32> = BTreeMap::new();
    for w in runs.windows(2) {
        let (Some(a), Some(b)) = (w[0].src, w[1].src) else {
            continue;
        };
        if w[0].dst + w[0].bytes != w[1].dst {
            continue;
        }
        let step = i64::from(b) - (i64::from(a) + i64::from(w[0].bytes - element));
        if step > i64::from(element) {
            *steps.entry(step).or_default() += 1;
        }
    }
    steps
        .iter()
        .max_by_key(|(step, count)| (**count, std::cmp::Reverse(**step)))
        .and_then(|(step, _)| u32::try_from(*step).ok())
}

/// The padding of a copy of `element`-byte elements (f16 only) from a staging buffer whose
/// covers end at `staging_end`, read from a zero tail: every padding element directly after an
/// element with a source (in destination order) reads that source plus the copy's most common
/// row step (the source distance between destination neighbours that are not contiguous in the
/// source), provided that lands past the covers. `None` when the copy has no padding, no such
/// step, no element can be given a source, or the tail would exceed [`MAX_TAIL_BYTES`].
pub(super) fn zero_tail(runs: &[Run], staging_end: u32, element: u32) -> Option<ZeroTail> {
    if element != 2 {
        return None;
    }
    let zero_bytes: u32 = runs
        .iter()
        .filter(|r| r.src.is_none())
        .map(|r| r.bytes)
        .sum();
    if zero_bytes == 0 || zero_bytes > MAX_TAIL_BYTES {
        return None;
    }
    // Destination element → its source (None: padding). Runs are element aligned.
    let mut elements: BTreeMap<u32, Option<u32>> = BTreeMap::new();
    for r in runs {
        if r.dst % element != 0 || r.bytes % element != 0 {
            return None;
        }
        match r.src {
            Some(s) if r.bytes == element => {
                elements.insert(r.dst, Some(s));
            }
            // Longer runs copy contiguously: only their ends meet other runs.
            Some(s) => {
                elements.insert(r.dst, Some(s));
                elements.insert(r.dst + r.bytes - element, Some(s + r.bytes - element));
            }
            None => {
                for at in (r.dst..r.dst + r.bytes).step_by(element as usize) {
                    elements.insert(at, None);
                }
            }
        }
    }
    let mut sorted = runs.to_vec();
    sorted.sort_by_key(|r| r.dst);
    let row = row_step(&sorted, element)?;
    let start = staging_end.div_ceil(8) * 8;
    let mut virtual_sources: BTreeMap<u32, u32> = BTreeMap::new();
    let mut last: Option<(u32, u32)> = None;
    for (&d, &s) in &elements {
        let source = match s {
            Some(s) => Some(s),
            None => last
                .filter(|&(pd, _)| pd + element == d)
                .and_then(|(_, ps)| ps.checked_add(row))
                .filter(|&v| v >= start),
        };
        if let (None, Some(v)) = (s, source) {
            virtual_sources.insert(d, v);
        }
        last = source.map(|v| (d, v));
    }
    let end = virtual_sources.values().map(|&v| v + element).max()?;
    let bytes = (end - start).div_ceil(8) * 8;
    if bytes > MAX_TAIL_BYTES {
        return None;
    }
    let mut out = Vec::with_capacity(runs.len() + virtual_sources.len());
    for r in runs {
        match r.src {
            Some(_) => out.push(*r),
            None => {
                // The run's elements in order: those with a source each a run, the rest zero
                // runs as long as they go.
                let mut zeros: Option<Run> = None;
                for at in (r.dst..r.dst + r.bytes).step_by(element as usize) {
                    match virtual_sources.get(&at) {
                        Some(&v) => {
                            out.extend(zeros.take());
                            out.push(Run {
                                src: Some(v),
                                dst: at,
                                bytes: element,
                            });
                        }
                        None => match &mut zeros {
                            Some(z) => z.bytes += element,
                            None => {
                                zeros = Some(Run {
                                    src: None,
                                    dst: at,
                                    bytes: element,
                                })
                            }
                        },
                    }
                }
                out.extend(zeros);
            }
        }
    }
    out.sort_by_key(|r| r.dst);
    Some(ZeroTail {
        runs: out,
        start,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of `cols` f16 columns (`rows` real ones, row stride `2·cols`) into column-major
    /// groups of `padded` keys: destination `(c, k)` at `2 (c·padded + k)` reads row `k`,
    /// column `c`; keys past `rows` are padding.
    fn transpose_runs(rows: u32, cols: u32, padded: u32) -> Vec<Run> {
        let mut runs = Vec::new();
        for c in 0..cols {
            for k in 0..rows {
                runs.push(Run {
                    src: Some(2 * (k * cols + c)),
                    dst: 2 * (c * padded + k),
                    bytes: 2,
                });
            }
            runs.push(Run {
                src: None,
                dst: 2 * (c * padded + rows),
                bytes: 2 * (padded - rows),
            });
        }
        runs
    }

    #[test]
    fn the_padding_continues_the_rows_past_the_covers() {
        let (rows, cols, padded) = (81, 16, 96);
        let runs = transpose_runs(rows, cols, padded);
        let tail = zero_tail(&runs, 2 * rows * cols, 2).expect("a tail");
        assert_eq!(tail.start, 2 * rows * cols);
        // Rows 81..95 of 16 columns: 15 rows of 32 bytes.
        assert_eq!(tail.bytes, 2 * (padded - rows) * cols);
        assert!(tail.runs.iter().all(|r| r.src.is_some()));
        for c in 0..cols {
            for k in 0..padded {
                let dst = 2 * (c * padded + k);
                let run = tail
                    .runs
                    .iter()
                    .find(|r| r.dst == dst)
                    .expect("every element");
                assert_eq!(run.src, Some(2 * (k * cols + c)), "column {c}, key {k}");
            }
        }
    }

    #[test]
    fn padding_that_would_read_the_covers_stays_zero() {
        // The staged covers are larger than the rows: the continuation would land inside them.
        assert_eq!(zero_tail(&transpose_runs(5, 4, 8), 4096, 2), None);
        // Covers that end with the rows: the continuation lands past them, in the tail.
        let tail = zero_tail(&transpose_runs(5, 4, 8), 40, 2).expect("a tail");
        assert_eq!((tail.start, tail.bytes), (40, 24));
        assert!(tail.runs.iter().all(|r| r.src.is_some_and(|s| s < 64)));
    }

    /// [`transpose_runs`] with row `own` held by the tile itself: the other rows staged in
    /// order (one cover each), the own row behind them.
    fn runs_with_own_row(rows: u32, cols: u32, padded: u32, own: u32) -> TileCopy {
        let row = 2 * cols;
        let base = (rows - 1) * row;
        let staged = |k: u32| if k < own { k * row } else { (k - 1) * row };
        let runs = transpose_runs(rows, cols, padded)
            .into_iter()
            .map(|r| match r.src {
                Some(s) => {
                    let (k, c) = (s / row, s % row);
                    let src = if k == own { base + c } else { staged(k) + c };
                    Run {
                        src: Some(src),
                        ..r
                    }
                }
                None => r,
            })
            .collect();
        TileCopy {
            tile: 0,
            from: Buf::Staging,
            behind: Some(Behind {
                base,
                lo: 1024,
                hi: 1024 + row,
            }),
            runs,
        }
    }

    #[test]
    fn an_own_row_goes_where_the_rows_progression_expects_it() {
        let (rows, cols, padded) = (81, 16, 96);
        for own in [0, 44, 80] {
            let copy = runs_with_own_row(rows, cols, padded, own);
            let b = copy.behind.expect("own bytes");
            let covers: Vec<(u32, u32)> = (0..rows - 1).map(|i| (32 * i, 32 * (i + 1))).collect();
            let (runs, behind, gap) =
                own_in_place(&copy.runs, b, &covers, 2).expect("a place for the own row");
            assert_eq!(gap, (32 * own, 32), "own row {own}");
            assert_eq!(behind.base, 32 * own);
            // Every element now reads row k at 32 k: one progression.
            for r in runs.iter().filter(|r| r.src.is_some()) {
                let (c, k) = (r.dst / 2 / padded, r.dst / 2 % padded);
                assert_eq!(
                    r.src,
                    Some(32 * k + 2 * c),
                    "own row {own}: column {c}, key {k}"
                );
            }
            // And the copy takes the tail: transposes only, after the tail's zeroing.
            let tailed = tailed_copy(&copy, 32 * (rows - 1), &covers, 2)
                .expect("tables")
                .expect("cheaper with the tail");
            assert_eq!(tailed.gap, Some((32 * own, 32)));
            assert_eq!(tailed.tail.start, 32 * rows);
            assert!(tailed
                .copy
                .iter()
                .all(|c| matches!(c, KernelParams::Transpose4 { .. })));
            assert_eq!(tailed.cover_offset(32 * own), 32 * (own + 1));
            assert_eq!(tailed.staging_bytes(), 32 * padded);
        }
    }

    #[test]
    fn an_own_row_is_not_placed_inside_a_cover() {
        let copy = runs_with_own_row(81, 16, 96, 44);
        let b = copy.behind.expect("own bytes");
        // One cover holds all the staged rows: no gap can open at row 44.
        let covers = [(0, 32 * 80)];
        assert_eq!(own_in_place(&copy.runs, b, &covers, 2), None);
    }

    #[test]
    fn copies_without_padding_or_a_row_step_have_no_tail() {
        let contiguous = [
            Run {
                src: Some(0),
                dst: 0,
                bytes: 64,
            },
            Run {
                src: None,
                dst: 64,
                bytes: 16,
            },
        ];
        assert_eq!(zero_tail(&contiguous, 64, 2), None);
        let no_padding: Vec<Run> = transpose_runs(4, 4, 4)
            .into_iter()
            .filter(|r| r.bytes > 0 && r.src.is_some())
            .collect();
        assert_eq!(zero_tail(&no_padding, 32, 2), None);
        assert_eq!(zero_tail(&transpose_runs(81, 16, 96), 2592, 1), None);
    }
}
