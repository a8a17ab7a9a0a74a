//! The mixed route of a redistribution: a sender's destination ranges staged at the source
//! where they are whole words, at the destination at their ragged ends (see
//! `route::Route::Mixed`).

use super::route::covers;
use super::segments::{Segment, Source};

/// The two halves of a mixed route (`route::Route::Mixed`): each with its own segments (clipped at word
/// boundaries) and route.
pub(super) struct MixedRoute {
    /// The segments inside the ranges' whole words, the word-aligned ranges, the zeros the
    /// source fills in them.
    pub(super) inner: (Vec<Segment>, Vec<(u32, u32)>, Vec<Segment>),
    /// The segments in the ranges' partial words and their source covers.
    pub(super) edges: (Vec<Segment>, Vec<(u32, u32)>),
    /// Whether the short whole-word ranges travel together into the receivers' staging
    /// (`route::gathered`).
    pub(super) gathers: bool,
}

/// `s` clipped to the destination bytes `[lo, hi)`, if any remain.
fn clip(s: &Segment, lo: u32, hi: u32) -> Option<Segment> {
    let (a, b) = (s.dst.max(lo), (s.dst + s.bytes).min(hi));
    (a < b).then(|| Segment {
        dst: a,
        bytes: b - a,
        src: match s.src {
            Source::Block { block, offset } => Source::Block {
                block,
                offset: offset + (a - s.dst),
            },
            Source::Zero => Source::Zero,
        },
    })
}

/// Splits `segments` (and the `zeros` of `absorbed`) over `ranges` into a [`MixedRoute`]: the
/// whole words of every range, and its partial first and last words. `None` when no range has
/// a whole word or none is ragged (the plain routes then serve).
pub(super) fn mixed_route(
    segments: &[&Segment],
    zeros: &[Segment],
    absorbed: &[usize],
    ranges: &[(u32, u32)],
    source_bytes: u32,
) -> Option<MixedRoute> {
    let mut inner_ranges = Vec::new();
    let mut edge_spans = Vec::new();
    for &(s, e) in ranges {
        let (a, b) = (s.div_ceil(4) * 4, e / 4 * 4);
        if a < b {
            inner_ranges.push((a, b));
            if s < a {
                edge_spans.push((s, a));
            }
            if b < e {
                edge_spans.push((b, e));
            }
        } else {
            edge_spans.push((s, e));
        }
    }
    if inner_ranges.is_empty() || edge_spans.is_empty() {
        return None;
    }
    let pieces = |spans: &[(u32, u32)], of: &mut dyn Iterator<Item = &Segment>| -> Vec<Segment> {
        let mut out: Vec<Segment> = of
            .flat_map(|s| spans.iter().filter_map(move |&(lo, hi)| clip(s, lo, hi)))
            .collect();
        out.sort_unstable_by_key(|s| s.dst);
        out
    };
    let inner = pieces(&inner_ranges, &mut segments.iter().copied());
    let filled = pieces(&inner_ranges, &mut absorbed.iter().map(|&z| &zeros[z]));
    let edges = pieces(&edge_spans, &mut segments.iter().copied());
    let edge_refs: Vec<&Segment> = edges.iter().collect();
    let cover = covers(&edge_refs, source_bytes, 64);
    Some(MixedRoute {
        inner: (inner, inner_ranges, filled),
        edges: (edges, cover),
        gathers: false,
    })
}
