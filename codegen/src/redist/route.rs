//! How one sender's bytes for one destination block travel: the routes (direct, staged at the
//! destination, staged at the source, mixed), what each costs ([`RouteCost`]: receive windows,
//! local copies, buffer bytes) and the choice between them (`choose_route`). The movement
//! (`movement.rs`) turns the chosen route into moves and copies.

use super::mixed::{mixed_route, MixedRoute};
use super::movement::Run;
use super::segments::{Segment, Source};

/// Estimated tile cycles of the parts of a route, for choosing between routes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RouteCost {
    pub exchange: u64,
    pub copies: u64,
    /// Staging and send buffer bytes, weighed by the [`RoutePolicy`]:
    /// SRAM is the scarce resource of a full chip, so a route that doubles a large operand in
    /// staging must save real time to be taken.
    pub memory: u64,
}

/// How routes weigh SRAM against cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoutePolicy {
    /// Cycles one KiB of exchange buffer weighs as when routes are compared.
    pub cycles_per_kib_of_memory: u64,
    /// Whether a source-staged send may gather its short ranges into the receivers' staging
    /// ([`gathered`]).
    pub gathers: bool,
}

impl RoutePolicy {
    /// Buffers are cheap next to cycles: 64 bytes weigh one cycle.
    pub const DEFAULT: RoutePolicy = RoutePolicy {
        cycles_per_kib_of_memory: 16,
        gathers: true,
    };
    /// SRAM is what runs out (an SRAM-saving plan): a receiver's staging buffer as large as a
    /// product's operand costs about as much as the windows a direct or source-staged route
    /// takes instead (a cycle per byte; at 4 cycles per byte the copy tables of the extra
    /// windows crowd the tiles out instead, measured on So400m batch 2).
    pub const SRAM_SAVING: RoutePolicy = RoutePolicy {
        cycles_per_kib_of_memory: 1024,
        gathers: true,
    };
}

impl Default for RoutePolicy {
    fn default() -> RoutePolicy {
        RoutePolicy::DEFAULT
    }
}

impl RouteCost {
    fn total(self, policy: RoutePolicy) -> u64 {
        self.exchange + self.copies + self.memory * policy.cycles_per_kib_of_memory / 1024
    }
}

/// Receive-side cycles of one transfer of `words` words: the listening window (at least 7
/// cycles) and the pointer and mux set-up around it (see `exchange::schedule`).
pub fn transfer_cycles(words: u32) -> u64 {
    words.max(crate::exchange::schedule::MIN_WINDOW) as u64
        + crate::exchange::schedule::SETUP_BEFORE_ARRIVAL as u64
        + 12
        + WINDOW_CODE_CYCLES
}

/// What one more receive window costs beyond its cycles: the exchange program grows by six
/// instructions on the receiver and the schedule fragments; weighed as a few cycles.
pub const WINDOW_CODE_CYCLES: u64 = 4;

/// Bytes one more receive window adds to the receiver's exchange program (six instructions).
pub const WINDOW_CODE_BYTES: u64 = 24;

/// The cycles of a local copy as the planner prices a movement: [`copy_cycles`], but element
/// runs (runs of at most a word on average, a relayout such as values into `$CWEI` order) at
/// 3 cycles each, as `gather_elements` takes 2 to 3 bundles an element and whole 4 × 4
/// transposes under one, six workers issuing a bundle a cycle between them. At 16 a run the
/// planner priced the context product on the scores' tiles (`grid 144x10x1`, each tile
/// reading its block of values in `$CWEI` order) at 62.9k cycles against the 35k its program
/// estimates, and kept a plan 4.7k slower. Routes are still chosen by [`copy_cycles`]: there a
/// sender's element runs, reordered once for each block it serves, are weighed against its
/// receivers' windows, and at 3 a run a transpose from 8 senders into 32 row blocks was
/// reordered at the senders (496 runs on each) where each receiver reorders 16.
pub fn priced_copy_cycles(runs: usize, bytes: u64, word_aligned: bool) -> u64 {
    if !word_aligned && bytes <= 4 * runs as u64 {
        runs as u64 * 3 + bytes / 8
    } else {
        copy_cycles(runs, bytes, word_aligned)
    }
}

/// Tile cycles of a local copy of `runs` runs and `bytes` bytes (six workers): the shape of
/// `copy_runs` (word runs) or `gather_elements` (element granular).
pub fn copy_cycles(runs: usize, bytes: u64, word_aligned: bool) -> u64 {
    if word_aligned {
        runs as u64 * 6 + bytes / 8
    } else {
        // Whole words still go through copy_runs; the partial words (about one per run)
        // through gather_elements.
        runs as u64 * 16 + bytes / 8
    }
}

fn aligned(x: u32) -> bool {
    x.is_multiple_of(4)
}

/// Whether every run of a copy is whole words on both sides.
pub fn runs_word_aligned(runs: &[Run]) -> bool {
    runs.iter()
        .all(|r| aligned(r.dst) && aligned(r.bytes) && r.src.is_none_or(aligned))
}

/// Word-aligned covers of the source bytes of `segments` (offsets into the source buffer of
/// `buffer_bytes` bytes), merging covers less than `gap` bytes apart. Returns (start, end) pairs.
pub(super) fn covers(segments: &[&Segment], buffer_bytes: u32, gap: u32) -> Vec<(u32, u32)> {
    let mut spans: Vec<(u32, u32)> = segments
        .iter()
        .filter_map(|s| match s.src {
            Source::Block { offset, .. } => Some((
                offset / 4 * 4,
                (offset + s.bytes)
                    .div_ceil(4)
                    .saturating_mul(4)
                    .min(buffer_bytes),
            )),
            Source::Zero => None,
        })
        .collect();
    spans.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 + gap => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// How some of the segments one source tile provides to one destination block travel.
pub(super) enum Leg {
    Direct,
    StagedAtDest(Vec<(u32, u32)>),
    /// The destination ranges, the zero segments the source fills in its send buffer
    /// (padding inside those ranges, so each range is whole words), and whether the short
    /// ranges travel together into the receivers' staging ([`gathered`]).
    StagedAtSource(Vec<(u32, u32)>, Vec<Segment>, bool),
}

/// The routes for the segments one source tile provides to one destination block.
pub(super) enum Route {
    /// All of them by one leg.
    Single(Leg),
    /// Staged at the source where the destination ranges are whole words, at the destination
    /// at their ragged ends: a key block of 81 values starts on a half word at every other
    /// block, so each channel's run of keys from one sender begins or ends inside a word that
    /// another sender shares. The bulk is reordered once at the source and sent to every
    /// receiver of the block; only the shared words' halves are placed by the receivers.
    Mixed(MixedRoute),
}

fn segment_aligned(s: &Segment) -> bool {
    aligned(s.dst)
        && aligned(s.bytes)
        && match s.src {
            Source::Block { offset, .. } => aligned(offset),
            Source::Zero => true,
        }
}

/// Contiguous destination ranges of `segments` widened by the unclaimed `zeros` that touch
/// them; returns the ranges and the zeros they absorb.
fn ranges_with_zeros(
    segments: &[&Segment],
    zeros: &[Segment],
    claimed: &[bool],
) -> (Vec<(u32, u32)>, Vec<usize>) {
    let mut spans: Vec<(u32, u32, Option<usize>)> = segments
        .iter()
        .map(|s| (s.dst, s.dst + s.bytes, None))
        .collect();
    spans.extend(
        zeros
            .iter()
            .enumerate()
            .filter(|(i, _)| !claimed[*i])
            .map(|(i, z)| (z.dst, z.dst + z.bytes, Some(i))),
    );
    spans.sort_unstable();
    // Merge into runs of contiguous spans; keep those holding a data segment.
    let mut ranges = Vec::new();
    let mut absorbed = Vec::new();
    let mut i = 0;
    while i < spans.len() {
        let (start, mut end) = (spans[i].0, spans[i].1);
        let mut data = spans[i].2.is_none();
        let mut zs: Vec<usize> = spans[i].2.into_iter().collect();
        let mut j = i + 1;
        while j < spans.len() && spans[j].0 == end {
            end = spans[j].1;
            match spans[j].2 {
                Some(z) => zs.push(z),
                None => data = true,
            }
            j += 1;
        }
        if data {
            ranges.push((start, end));
            absorbed.extend(zs);
        }
        i = j;
    }
    (ranges, absorbed)
}

/// Destination ranges of a source-staged send this short or shorter travel together (see
/// [`gathered`]). A range's own window costs its receiver [`transfer_cycles`], ~24 cycles of
/// set-up beside its words; in a gathered transfer it costs its words and a run of the
/// receiver's copy out of staging (6 cycles and a cycle per 8 bytes): a saving below ~36 words.
/// The values' reorder into `$CWEI` order sent a key block's split 16-key groups as one window
/// of 4 words per channel (15 of a sender's 17 windows, 170 windows a receiver).
pub const GATHERED_RANGE_WORDS: u32 = 16;

/// Which destination ranges of a source-staged send travel together: one transfer from the
/// sender's send buffer into every taker's staging, each range then copied into place by the
/// taker. The ranges of at most [`GATHERED_RANGE_WORDS`] words, when there are two or more and
/// they hold at most half of the send's bytes: the stragglers beside a bulk sent in place. A
/// send of short ranges only is a relayout at the receivers, the route staged at the
/// destination, priced as such (gathering it doubled the staged bytes an SRAM-saving plan
/// keeps its senders arranging).
pub(super) fn gathered(ranges: &[(u32, u32)]) -> Vec<bool> {
    let small: Vec<bool> = ranges
        .iter()
        .map(|r| (r.1 - r.0) / 4 <= GATHERED_RANGE_WORDS)
        .collect();
    let bytes = |pick: bool| -> u32 {
        ranges
            .iter()
            .zip(&small)
            .filter(|(_, &s)| s == pick)
            .map(|(r, _)| r.1 - r.0)
            .sum()
    };
    if small.iter().filter(|&&s| s).count() >= 2 && bytes(true) <= bytes(false) {
        small
    } else {
        vec![false; ranges.len()]
    }
}

/// Where each gathered range sits in its group (0 for the others), from a group start that is
/// 8-byte aligned: at its destination's offset modulo 8, so the copies into and out of the
/// group move 8-byte words where the runs allow; and the group's bytes.
pub(super) fn gathered_layout(ranges: &[(u32, u32)], gather: &[bool]) -> (Vec<u32>, u32) {
    let mut at = vec![0u32; ranges.len()];
    let mut within = 0u32;
    for (r, &(start, end)) in ranges.iter().enumerate() {
        if gather[r] {
            within += (start % 8 + 8 - within % 8) % 8;
            at[r] = within;
            within += end - start;
        }
    }
    (at, within)
}

/// What a source-staged send of `ranges` costs each of its receivers: the windows' cycles,
/// the copies out of staging of the gathered ranges, their staging bytes, and the windows.
fn source_staged_receiving(ranges: &[(u32, u32)], gathers: bool) -> (u64, u64, u64, usize) {
    let gather = if gathers {
        gathered(ranges)
    } else {
        vec![false; ranges.len()]
    };
    let (_, group) = gathered_layout(ranges, &gather);
    let mut windows = ranges
        .iter()
        .zip(&gather)
        .filter(|(_, &g)| !g)
        .map(|(r, _)| transfer_cycles((r.1 - r.0) / 4))
        .sum::<u64>();
    let n = gather.iter().filter(|&&g| g).count();
    let mut copies = 0;
    if group > 0 {
        windows += transfer_cycles(group.div_ceil(4));
        copies = copy_cycles(n, u64::from(group), true);
    }
    let count = ranges.len() - n + usize::from(group > 0);
    (windows, copies, u64::from(group), count)
}

/// The cheapest route for one sender's segments of a destination block read from `fan_in`
/// senders in all. What a route costs the receiver (its windows, its copies) adds up over all
/// `fan_in` senders on every receiver, so it weighs `fan_in` times; a copy at the source is
/// made once for every receiver of the block.
pub(super) fn choose_route(
    segments: &[&Segment],
    zeros: &[Segment],
    claimed: &mut [bool],
    source_bytes: u32,
    (fan_in, fan_out): (usize, usize),
    policy: RoutePolicy,
) -> Route {
    let all_aligned = segments.iter().all(|s| segment_aligned(s));
    let bytes: u64 = segments.iter().map(|s| s.bytes as u64).sum();
    let mut best: Option<(u64, u8, bool)> = None;
    let mut consider = |cost: RouteCost, route: u8, gathers: bool| {
        if best.is_none_or(|(c, _, _)| cost.total(policy) < c) {
            best = Some((cost.total(policy), route, gathers));
        }
    };
    let fan_in = fan_in.max(1) as u64;
    // Every receive window grows the receiver's exchange program; like the receiver's other
    // costs it adds up over all `fan_in` senders.
    let window_code = |windows: usize| windows as u64 * WINDOW_CODE_BYTES * fan_in;
    if all_aligned {
        let exchange = segments
            .iter()
            .map(|s| transfer_cycles(s.bytes / 4))
            .sum::<u64>()
            * fan_in;
        consider(
            RouteCost {
                exchange,
                copies: 0,
                memory: window_code(segments.len()),
            },
            0,
            false,
        );
    }
    let covered = covers(segments, source_bytes, 64);
    let exchange = covered
        .iter()
        .map(|c| transfer_cycles((c.1 - c.0) / 4))
        .sum::<u64>()
        * fan_in;
    consider(
        RouteCost {
            exchange,
            copies: copy_cycles(segments.len(), bytes, all_aligned) * fan_in,
            // The receiver stages what every one of its senders sends.
            memory: covered.iter().map(|c| (c.1 - c.0) as u64).sum::<u64>() * fan_in
                + window_code(covered.len()),
        },
        1,
        false,
    );
    let (ranges, absorbed) = ranges_with_zeros(segments, zeros, claimed);
    let mixed = (!ranges.iter().all(|r| aligned(r.0) && aligned(r.1)))
        .then(|| mixed_route(segments, zeros, &absorbed, &ranges, source_bytes))
        .flatten();
    for gathers in [false, true] {
        let Some(m) = mixed.as_ref().filter(|_| !gathers || policy.gathers) else {
            break;
        };
        let (inner, inner_ranges, _) = &m.inner;
        let (edges, cover) = &m.edges;
        let inner_bytes: u64 = inner.iter().map(|s| s.bytes as u64).sum();
        let edge_bytes: u64 = edges.iter().map(|s| s.bytes as u64).sum();
        let (windows, staged_copies, staged, count) =
            source_staged_receiving(inner_ranges, gathers);
        let exchange = (windows
            + cover
                .iter()
                .map(|c| transfer_cycles((c.1 - c.0) / 4))
                .sum::<u64>())
            * fan_in;
        consider(
            RouteCost {
                exchange,
                copies: copy_cycles(inner.len(), inner_bytes, false) * fan_out.max(1) as u64
                    + (copy_cycles(edges.len(), edge_bytes, false) + staged_copies) * fan_in,
                memory: inner_ranges.iter().map(|r| (r.1 - r.0) as u64).sum::<u64>() / 4
                    + (cover.iter().map(|c| (c.1 - c.0) as u64).sum::<u64>() + staged) * fan_in
                    + window_code(count + cover.len()),
            },
            3,
            gathers,
        );
    }
    for gathers in [false, true] {
        if !ranges.iter().all(|r| aligned(r.0) && aligned(r.1)) || (gathers && !policy.gathers) {
            break;
        }
        let (windows, staged_copies, staged, count) = source_staged_receiving(&ranges, gathers);
        consider(
            RouteCost {
                exchange: windows * fan_in,
                // The sender reorders for every block it serves: like the receiver's copies
                // over its senders, they add up over the sender's `fan_out` blocks.
                copies: copy_cycles(segments.len(), bytes, all_aligned) * fan_out.max(1) as u64
                    + staged_copies * fan_in,
                // Shared by every receiver of the block (the gathered ranges' staging apart).
                memory: ranges.iter().map(|r| (r.1 - r.0) as u64).sum::<u64>() / 4
                    + staged * fan_in
                    + window_code(count),
            },
            2,
            gathers,
        );
    }
    let gathers = best.is_some_and(|(_, _, g)| g);
    match best.map(|(_, r, _)| r) {
        Some(1) => Route::Single(Leg::StagedAtDest(covered)),
        Some(2) => {
            let zs: Vec<Segment> = absorbed.iter().map(|&z| zeros[z]).collect();
            for z in absorbed {
                claimed[z] = true;
            }
            Route::Single(Leg::StagedAtSource(ranges, zs, gathers))
        }
        Some(3) => match mixed {
            Some(m) => {
                // The zeros wholly inside the whole words are the source's to fill.
                let (_, inner_ranges, _) = &m.inner;
                for &z in &absorbed {
                    let (a, b) = (zeros[z].dst, zeros[z].dst + zeros[z].bytes);
                    if inner_ranges.iter().any(|r| r.0 <= a && b <= r.1) {
                        claimed[z] = true;
                    }
                }
                Route::Mixed(MixedRoute { gathers, ..m })
            }
            None => Route::Single(Leg::Direct),
        },
        _ => Route::Single(Leg::Direct),
    }
}
