//! Cutting a copy kernel's table into periodic pieces: where item `i + p` is item `i` shifted
//! by a constant (source, destination) step, a call's table holds `p` items and the kernel's
//! outer loop does the rest. Generic over the table's items (`copy_runs` runs,
//! `gather_elements` words, `transpose4x4_f16` blocks); `copies.rs` and `block_transposes.rs`
//! say how two items relate.

use super::copies::MAX_TABLE_BYTES;

/// How item `i + p` sits against item `i`: the source offset's difference (`None`: any, for
/// items that read nothing, zeros) and the destination offset's difference.
pub(super) type Shift = (Option<i64>, i64);

/// Folds `x` into the shift `acc` every pair so far agrees on; false when it disagrees.
fn unify(acc: &mut Option<Shift>, x: Shift) -> bool {
    match acc {
        None => {
            *acc = Some(x);
            true
        }
        Some((src, dst)) => {
            if *dst != x.1 {
                return false;
            }
            match (*src, x.0) {
                (Some(a), Some(b)) => a == b,
                (None, b) => {
                    *src = b;
                    true
                }
                (Some(_), None) => true,
            }
        }
    }
}

/// The (source, destination) strides a table's outer loop can take for the agreed shift.
fn strides(shift: Shift) -> Option<(i64, i64)> {
    let src = shift.0.unwrap_or(0);
    (src >= 0 && shift.1 > 0).then_some((src, shift.1))
}

/// The shift every pair `(items[k], items[k + p])` for `k` in `range` agrees on, or the first
/// `k` where they stop agreeing.
fn agreed<T>(
    items: &[T],
    p: usize,
    range: std::ops::Range<usize>,
    step: impl Fn(&T, &T) -> Option<Shift>,
) -> Result<Option<Shift>, usize> {
    let mut acc = None;
    for k in range {
        match step(&items[k], &items[k + p]) {
            Some(x) if unify(&mut acc, x) => {}
            _ => return Err(k),
        }
    }
    Ok(acc)
}

/// The smallest period `p` of `items` under `step` (item `i + p` is item `i` shifted by a
/// constant step), with the step; `(items.len(), (0, 0))` when there is none.
fn period<T>(items: &[T], step: impl Fn(&T, &T) -> Option<Shift> + Copy) -> (usize, (i64, i64)) {
    let n = items.len();
    if n < 2 {
        return (n, (0, 0));
    }
    for p in 1..=n / 2 {
        if !n.is_multiple_of(p) {
            continue;
        }
        if let Ok(Some(shift)) = agreed(items, p, 0..n - p, step) {
            if let Some(delta) = strides(shift) {
                return (p, delta);
            }
        }
    }
    (n, (0, 0))
}

/// What one more call weighs, in table bytes, when one literal table is weighed against
/// several periodic pieces: its vertex state and launch instructions (~64 bytes) and its
/// launch cycles (~100). A piece must save this much table to be worth its call (cutting
/// every list by bytes alone cost the built-in model 2.8% more cycles for tables it had room
/// for).
const CALL_WEIGHT_BYTES: usize = 1024;

/// The calls' pieces of `items` (`item_bytes` bytes each in a table): one piece when the whole
/// list has one period, else whichever of one literal table (when it fits) and
/// [`periodic_pieces`] takes fewer bytes. A list that is periodic except for a few items (a
/// block whose first row arrived from another sender) then costs a few tables of one period
/// each, not every item.
pub(super) fn pieces<T, R: PartialEq>(
    items: &[T],
    relation: impl Fn(&T, &T) -> R,
    step: impl Fn(&T, &T) -> Option<Shift> + Copy,
    item_bytes: usize,
) -> Vec<Piece> {
    let max_table = MAX_TABLE_BYTES / item_bytes.max(1);
    let (p, delta) = period(items, step);
    let whole = Piece {
        start: 0,
        table: p,
        outer: items.len() / p.max(1),
        step: delta,
    };
    if p < items.len() || items.len() < MIN_CUT_ITEMS {
        return vec![whole];
    }
    let cut = periodic_pieces(items, relation, step, max_table);
    let bytes = |ps: &[Piece]| {
        ps.iter()
            .map(|q| q.table * item_bytes + CALL_WEIGHT_BYTES)
            .sum::<usize>()
    };
    if p <= max_table && bytes(std::slice::from_ref(&whole)) <= bytes(&cut) {
        vec![whole]
    } else {
        cut
    }
}

/// One call's share of a list: items `start..start + table * outer`, the first `table` of them
/// in the call's table and the rest the table shifted by `step` (source, destination) per
/// outer iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Piece {
    pub(super) start: usize,
    pub(super) table: usize,
    pub(super) outer: usize,
    pub(super) step: (i64, i64),
}

/// Longest period [`periodic_pieces`] looks for: a table's repeat is a few destination blocks
/// (a head's 16 keys × 5 K-blocks and their tails is 112 runs); longer periods would cost the
/// search more than their tables save.
const MAX_PIECE_PERIOD: usize = 512;

/// Lists shorter than this stay one literal table when they have no single period.
const MIN_CUT_ITEMS: usize = 32;

/// `items` cut into pieces of one repeat each, for lists with no single period (a block
/// gathered from several tiles, where the first rows sit apart): greedily the longest
/// periodic stretch at each point, with the items between stretches as one-shot pieces.
/// `relation(a, b)` describes item `b` relative to item `a` (its size and kind, and its
/// offsets' differences); item `k + p` is item `k` shifted by a constant when the relations
/// repeat with period `p`, so the smallest periods of every prefix come from the prefix
/// function of the relations (smallest period of a prefix only grows with its length). Every
/// stretch is then checked item by item with `step`. Periods over `max_table` items (or
/// [`MAX_PIECE_PERIOD`]) are not looked for.
fn periodic_pieces<T, R: PartialEq>(
    items: &[T],
    relation: impl Fn(&T, &T) -> R,
    step: impl Fn(&T, &T) -> Option<Shift>,
    max_table: usize,
) -> Vec<Piece> {
    let n = items.len();
    let max_period = max_table.min(MAX_PIECE_PERIOD);
    let relations: Vec<R> = items.windows(2).map(|w| relation(&w[0], &w[1])).collect();
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
    let mut pi: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        // Relations d[j] = relations[i + j] (item i + j + 1 against item i + j).
        let d = &relations[i.min(relations.len())..];
        pi.clear();
        // Best (items covered, period) so far.
        let mut best: Option<(usize, usize)> = None;
        for l in 0..d.len() {
            let mut k = if l == 0 { 0 } else { pi[l - 1] };
            while k > 0 && d[k] != d[l] {
                k = pi[k - 1];
            }
            if l > 0 && d[k] == d[l] {
                k += 1;
            }
            pi.push(k);
            let len = l + 1;
            let p = len - pi[l];
            if p > max_period {
                break;
            }
            // `len` relations with period p: `len + 1` items repeat with period p.
            let covered = (len + 1) / p * p;
            if covered >= 2 * p && best.is_none_or(|(c, _)| covered > c) {
                best = Some((covered, p));
            }
        }
        let chosen = best.and_then(|(covered, p)| {
            // The relations say so; the items must agree (the first item's relation to what
            // came before the stretch is not compared).
            let (covered, shift) = match agreed(items, p, i..i + covered - p, &step) {
                Ok(shift) => (covered, shift?),
                Err(k) => {
                    let covered = (k - i + p) / p * p;
                    (covered, agreed(items, p, i..i + covered - p, &step).ok()??)
                }
            };
            let delta = strides(shift)?;
            (covered >= 2 * p).then_some((covered, p, delta))
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
