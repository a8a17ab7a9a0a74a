//! One tile's SRAM occupancy for the image builder: sorted used ranges, first-fit allocation
//! with alignment, overlap checks, and free-space measures per region.

/// A used range `[start, end)` and the index of the segment that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Used {
    pub start: u64,
    pub end: u64,
    pub segment: usize,
}

/// The used ranges of one tile, sorted by start and disjoint.
#[derive(Clone, Debug, Default)]
pub(super) struct TileSpace {
    used: Vec<Used>,
}

impl TileSpace {
    /// The first used range that overlaps `[start, end)`, if any.
    pub fn overlap(&self, start: u64, end: u64) -> Option<Used> {
        let at = self.used.partition_point(|u| u.end <= start);
        self.used.get(at).copied().filter(|u| u.start < end)
    }

    /// Records `[start, end)` as used by `segment`; the caller has checked [`TileSpace::overlap`].
    pub fn insert(&mut self, start: u64, end: u64, segment: usize) {
        let at = self.used.partition_point(|u| u.start < start);
        self.used.insert(
            at,
            Used {
                start,
                end,
                segment,
            },
        );
    }

    /// The free gaps of `[lo, hi)`, in address order.
    fn gaps(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let first = self.used.partition_point(|u| u.end <= lo);
        let mut cursor = lo;
        let mut index = first;
        std::iter::from_fn(move || loop {
            if cursor >= hi {
                return None;
            }
            match self.used.get(index) {
                Some(u) if u.start < hi => {
                    index += 1;
                    let gap = (cursor, u.start.min(hi));
                    cursor = cursor.max(u.end);
                    if gap.0 < gap.1 {
                        return Some(gap);
                    }
                }
                _ => {
                    let gap = (cursor, hi);
                    cursor = hi;
                    return Some(gap);
                }
            }
        })
    }

    /// The lowest address in `[lo, hi)` where `bytes` fit at `align` (a power of two).
    pub fn first_fit(&self, lo: u64, hi: u64, bytes: u64, align: u64) -> Option<u64> {
        self.gaps(lo, hi).find_map(|(start, end)| {
            let aligned = start.checked_add(align - 1)? & !(align - 1);
            (aligned.checked_add(bytes)? <= end).then_some(aligned)
        })
    }

    /// Free bytes in `[lo, hi)` and the largest free range there.
    pub fn free(&self, lo: u64, hi: u64) -> (u64, u64) {
        self.gaps(lo, hi)
            .fold((0, 0), |(total, largest), (start, end)| {
                (total + (end - start), largest.max(end - start))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_skips_used_ranges_and_aligns() {
        let mut space = TileSpace::default();
        space.insert(0x100, 0x110, 0);
        space.insert(0x120, 0x200, 1);
        assert_eq!(space.first_fit(0x100, 0x300, 8, 8), Some(0x110));
        assert_eq!(space.first_fit(0x100, 0x300, 0x20, 8), Some(0x200));
        assert_eq!(space.first_fit(0x100, 0x300, 8, 0x40), Some(0x200));
        assert_eq!(space.first_fit(0x100, 0x210, 0x20, 8), None);
        assert_eq!(space.free(0x100, 0x300), (0x110, 0x100));
        assert_eq!(space.overlap(0x10f, 0x111).map(|u| u.segment), Some(0));
        assert_eq!(space.overlap(0x110, 0x120), None);
    }
}
