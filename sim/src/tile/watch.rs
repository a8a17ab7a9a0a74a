//! Watched address ranges: the chip marks where host outputs live, and the tile notes the cycle
//! of the last write into any of them (by a store or an exchange delivery), so a run knows when
//! its last output byte was written. Checking is a short scan of a few ranges and never
//! allocates; a tile with nothing to watch pays one length test per store.

/// Ranges `[start, end)` to watch and the end of the last cycle that wrote into one of them.
#[derive(Clone, Debug, Default)]
pub struct WriteWatch {
    ranges: Vec<(u32, u64)>,
    last_write_end: Option<u64>,
}

impl WriteWatch {
    /// Watches `[start, start + bytes)` (in addition to earlier ranges).
    pub fn add(&mut self, start: u32, bytes: u32) {
        if bytes > 0 {
            self.ranges
                .push((start, u64::from(start) + u64::from(bytes)));
        }
    }

    /// Notes a write of `len` bytes at `addr` in `cycle`.
    #[inline]
    pub fn note(&mut self, addr: u32, len: usize, cycle: u64) {
        if self.ranges.is_empty() {
            return;
        }
        let start = u64::from(addr);
        let end = start + len as u64;
        if self
            .ranges
            .iter()
            .any(|&(lo, hi)| start < hi && u64::from(lo) < end)
        {
            let written = cycle + 1;
            self.last_write_end = Some(
                self.last_write_end
                    .map_or(written, |last| last.max(written)),
            );
        }
    }

    /// End of the last cycle that wrote a watched byte, if any did.
    pub fn last_write_end(&self) -> Option<u64> {
        self.last_write_end
    }
}
