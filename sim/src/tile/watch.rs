//! Watched address ranges: the chip marks where host outputs live, and the tile notes the cycle
//! of the last write into any of them (by a store or an exchange delivery), so a run knows when
//! its last output byte was written. The ranges are kept sorted and merged, so a write is
//! checked by one comparison with their envelope and, inside it, a binary search (a tile may
//! hold hundreds of output pieces; every store and every received word is checked). Checking
//! never allocates; a tile with nothing to watch pays one comparison per write.

/// Ranges `[start, end)` to watch and the end of the last cycle that wrote into one of them.
#[derive(Clone, Debug)]
pub struct WriteWatch {
    /// Sorted by start, disjoint and not touching (adjacent ranges are merged).
    ranges: Vec<(u64, u64)>,
    /// The first watched byte and one past the last (`start >= end`: nothing watched).
    envelope: (u64, u64),
    last_write_end: Option<u64>,
}

impl Default for WriteWatch {
    fn default() -> Self {
        WriteWatch {
            ranges: Vec::new(),
            envelope: (u64::MAX, 0),
            last_write_end: None,
        }
    }
}

impl WriteWatch {
    /// Watches `[start, start + bytes)` (in addition to earlier ranges).
    pub fn add(&mut self, start: u32, bytes: u32) {
        if bytes == 0 {
            return;
        }
        let (mut lo, mut hi) = (u64::from(start), u64::from(start) + u64::from(bytes));
        // Ranges that overlap or touch the new one merge with it.
        let first = self.ranges.partition_point(|&(_, end)| end < lo);
        let last = self.ranges.partition_point(|&(begin, _)| begin <= hi);
        if first < last {
            lo = lo.min(self.ranges[first].0);
            hi = hi.max(self.ranges[last - 1].1);
        }
        self.ranges.splice(first..last, [(lo, hi)]);
        self.envelope = (self.envelope.0.min(lo), self.envelope.1.max(hi));
    }

    /// Notes a write of `len` bytes at `addr` in `cycle`.
    #[inline]
    pub fn note(&mut self, addr: u32, len: usize, cycle: u64) {
        let start = u64::from(addr);
        let end = start + len as u64;
        if end <= self.envelope.0 || start >= self.envelope.1 || !self.watches(start, end) {
            return;
        }
        let written = cycle + 1;
        self.last_write_end = Some(
            self.last_write_end
                .map_or(written, |last| last.max(written)),
        );
    }

    /// Whether `[start, end)` overlaps a watched range: the first range ending after `start` is
    /// the only candidate.
    fn watches(&self, start: u64, end: u64) -> bool {
        let index = self.ranges.partition_point(|&(_, hi)| hi <= start);
        self.ranges
            .get(index)
            .is_some_and(|&(lo, _)| lo < end && start < end)
    }

    /// End of the last cycle that wrote a watched byte, if any did.
    pub fn last_write_end(&self) -> Option<u64> {
        self.last_write_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The sorted, merged ranges answer as a scan of the ranges as added would: a write is
        /// noted exactly when some byte of it lies in some added range.
        #[test]
        fn noting_a_write_agrees_with_a_scan_of_the_added_ranges(
            ranges in proptest::collection::vec((0u32..512, 0u32..48), 0..24),
            writes in proptest::collection::vec((0u32..600, 0usize..20), 1..40),
        ) {
            let mut watch = WriteWatch::default();
            for &(start, bytes) in &ranges {
                watch.add(start, bytes);
            }
            for window in watch.ranges.windows(2) {
                prop_assert!(window[0].1 < window[1].0, "sorted, disjoint, not touching");
            }
            for (cycle, &(addr, len)) in writes.iter().enumerate() {
                let before = watch.last_write_end();
                watch.note(addr, len, cycle as u64);
                let (lo, hi) = (u64::from(addr), u64::from(addr) + len as u64);
                let hit = ranges.iter().any(|&(start, bytes)| {
                    bytes > 0
                        && lo < hi
                        && lo < u64::from(start) + u64::from(bytes)
                        && u64::from(start) < hi
                });
                let expected = if hit { Some(cycle as u64 + 1) } else { before };
                prop_assert_eq!(watch.last_write_end(), expected);
            }
        }
    }
}
