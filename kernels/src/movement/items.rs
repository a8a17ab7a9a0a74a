//! Items of the table-driven kernels: an item is one (outer iteration o, entry r) pair, numbered
//! o·R + r; the six workers split the items in order, and each worker walks its share as
//! segments, one per outer iteration it touches.

/// Most items a table-driven kernel accepts: a worker's first item packed as `(o << K) | r`
/// (`crate::split::packed_item`) stays below 2^21, and `transpose4x4_f16`'s O below 2^24.
pub const MAX_ITEMS: u64 = 1 << 20;

/// [`ParamError::TooManyItems`](crate::error::ParamError::TooManyItems) when `outer` outer
/// iterations of `entries` table entries are more items than [`MAX_ITEMS`].
pub fn check_items(
    kernel: &'static str,
    outer: u32,
    entries: usize,
) -> Result<(), crate::error::ParamError> {
    let items = u64::from(outer) * entries as u64;
    if items > MAX_ITEMS {
        return Err(crate::error::ParamError::TooManyItems {
            kernel,
            items,
            max: MAX_ITEMS,
        });
    }
    Ok(())
}

/// The entries `first_entry .. first_entry + len` of outer iteration `outer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub outer: u32,
    pub first_entry: u32,
    pub len: u32,
}

/// The segments of the items `first .. first + count` with `per_outer` entries per outer
/// iteration, in order.
pub fn segments(first: u32, count: u32, per_outer: u32) -> Vec<Segment> {
    let mut out = Vec::new();
    if per_outer == 0 {
        return out;
    }
    let (mut outer, mut entry, mut left) = (first / per_outer, first % per_outer, count);
    while left > 0 {
        let len = left.min(per_outer - entry);
        out.push(Segment {
            outer,
            first_entry: entry,
            len,
        });
        left -= len;
        outer += 1;
        entry = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_follow_outer_iterations() {
        assert_eq!(
            segments(5, 9, 4),
            vec![
                Segment {
                    outer: 1,
                    first_entry: 1,
                    len: 3
                },
                Segment {
                    outer: 2,
                    first_entry: 0,
                    len: 4
                },
                Segment {
                    outer: 3,
                    first_entry: 0,
                    len: 2
                },
            ]
        );
        assert!(segments(3, 0, 4).is_empty());
    }
}
