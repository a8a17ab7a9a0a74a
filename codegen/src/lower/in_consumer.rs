//! A producer's result written straight into its part of a consumer's operand: where a tile's
//! only destination-side copy of a redistribution moves its whole source block to one place in
//! the destination (a LayerNorm's row, whose other half arrives from the partner tile), the
//! source buffer becomes that part of the destination buffer (`alias_of` at an offset) and the
//! copy goes. [`Lower::place_in_consumers`] keeps only those the buffers' requirements allow,
//! after every call is bound.
//!
//! Invariant: neither buffer is written in place by a later op (both are marked shared when the
//! candidate is recorded), so the source's bytes stay in the destination for every reader of
//! either.

use super::Lower;
use crate::redist::Run;
use crate::tile::{BufferId, RegionRequirement};
use std::collections::HashSet;
use std::ops::Range;

/// A copy that may be replaced by placing its source buffer inside its destination buffer.
pub(super) struct InConsumer {
    pub tile: u32,
    pub source: BufferId,
    pub dest: BufferId,
    /// Where the source block starts in the destination.
    pub offset: u32,
    /// The copy's calls (indices into the lowering's calls).
    pub calls: Range<usize>,
}

/// Where `runs` put the whole of a `bytes`-byte source block in one piece of the destination:
/// runs contiguous in source and destination, from source offset 0, `bytes` in all (the
/// buffer's padding to whole 8-byte atoms aside).
pub(super) fn whole_block_offset(runs: &[Run], bytes: u32) -> Option<u32> {
    let first = runs.first()?;
    if first.src != Some(0) {
        return None;
    }
    let mut end = (0u32, first.dst);
    for r in runs {
        if r.src != Some(end.0) || r.dst != end.1 {
            return None;
        }
        end = (end.0 + r.bytes, end.1 + r.bytes);
    }
    (end.0 <= bytes && bytes - end.0 < 8).then_some(first.dst)
}

impl Lower<'_> {
    /// Places each candidate's source buffer inside its destination where both buffers allow
    /// it (the source aliases nothing, its offset keeps its alignment, it fits, their regions
    /// and element slots agree — the destination takes the source's where it has none), and
    /// drops the copy's calls. Returns the dropped calls.
    pub(super) fn place_in_consumers(&mut self, candidates: &[InConsumer]) -> HashSet<usize> {
        let mut dropped = HashSet::new();
        for c in candidates {
            let buffers = &self.program.tiles[c.tile as usize].buffers;
            let (src, dest) = (&buffers[c.source.0 as usize], &buffers[c.dest.0 as usize]);
            let aliased = buffers
                .iter()
                .any(|b| b.alias_of == Some(c.source) || b.alias_of == Some(c.dest));
            let region = match (src.region, dest.region) {
                (RegionRequirement::Any, r) => Some(r),
                (r, RegionRequirement::Any) => Some(r),
                (a, b) => (a == b).then_some(a),
            };
            let slot = match (src.slot, dest.slot) {
                (None, s) | (s, None) => Some(s),
                (Some(a), Some(b)) => (a == b).then_some(Some(a)),
            };
            let fits = src.alias_of.is_none()
                && dest.alias_of.is_none()
                && !aliased
                && src.contents.is_none()
                && !self.layered.contains_key(&(c.tile, c.source))
                && c.offset.is_multiple_of(src.align.max(8))
                && c.offset + src.bytes <= dest.bytes;
            let (Some(region), Some(slot), true) = (region, slot, fits) else {
                continue;
            };
            let align = src.align.max(dest.align);
            let buffers = &mut self.program.tiles[c.tile as usize].buffers;
            let dest = &mut buffers[c.dest.0 as usize];
            dest.region = region;
            dest.slot = slot;
            dest.align = align;
            let src = &mut buffers[c.source.0 as usize];
            src.alias_of = Some(c.dest);
            src.alias_offset = c.offset;
            dropped.extend(c.calls.clone());
        }
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_block_in_one_piece_has_an_offset() {
        let runs = [
            Run {
                src: Some(0),
                dst: 1152,
                bytes: 576,
            },
            Run {
                src: Some(576),
                dst: 1728,
                bytes: 576,
            },
        ];
        assert_eq!(whole_block_offset(&runs, 1152), Some(1152));
        // Padding of the source buffer to whole atoms is allowed, a missing byte is not.
        assert_eq!(whole_block_offset(&runs[..1], 580), Some(1152));
        assert_eq!(whole_block_offset(&runs[..1], 1152), None);
        // Not from the block's start, or not contiguous: no offset.
        let gap = [
            runs[0],
            Run {
                dst: 1736,
                ..runs[1]
            },
        ];
        assert_eq!(whole_block_offset(&gap, 1152), None);
        let late = [Run {
            src: Some(8),
            ..runs[0]
        }];
        assert_eq!(whole_block_offset(&late, 584), None);
        assert_eq!(whole_block_offset(&[], 8), None);
    }
}
