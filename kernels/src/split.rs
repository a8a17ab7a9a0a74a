//! Dividing work among the six workers: the split table kernels read from their vertex state.

/// Number of workers that share a kernel invocation.
pub const WORKERS: usize = 6;

/// `(first, count)` per worker covering `0..total` in order, as even as possible, with the
/// remainder on the *first* workers (so the last worker ends exactly at `total`).
pub fn worker_split(total: u32) -> [(u32, u32); WORKERS] {
    let base = total / WORKERS as u32;
    let extra = total % WORKERS as u32;
    let mut split = [(0, 0); WORKERS];
    let mut next = 0;
    for (w, entry) in split.iter_mut().enumerate() {
        let count = base + u32::from((w as u32) < extra);
        *entry = (next, count);
        next += count;
    }
    split
}

/// The split table as vertex words: first0, count0, first1, count1, …
pub fn split_words(total: u32) -> Vec<crate::VertexWord> {
    worker_split(total)
        .iter()
        .flat_map(|&(first, count)| {
            [
                crate::VertexWord::Value(first),
                crate::VertexWord::Value(count),
            ]
        })
        .collect()
}

/// Largest per-worker count of a split (what bounds the kernel's time).
pub fn busiest(total: u32) -> u32 {
    worker_split(total)
        .iter()
        .map(|&(_, count)| count)
        .max()
        .unwrap_or(0)
}

/// K: the fewest bits that hold every index below `per_outer` (`per_outer <= 2^K`).
pub fn index_bits(per_outer: u32) -> u32 {
    u32::BITS - per_outer.saturating_sub(1).leading_zeros()
}

/// Item `o·n + i` of items numbered over outer iterations of `n` (`per_outer`), as the table
/// kernels read a worker's first item: `(o << K) | i`, K = [`index_bits`]`(n)`, so their set-up
/// divides nothing.
pub fn packed_item(item: u32, per_outer: u32) -> u32 {
    let n = per_outer.max(1);
    ((item / n) << index_bits(n)) | (item % n)
}

/// [`packed_item`] undone, with its K.
pub fn unpacked_item(word: u32, per_outer: u32, k: u32) -> u32 {
    (word >> k) * per_outer + (word & ((1u32 << k) - 1))
}

/// [`split_words`] with each worker's first item packed ([`packed_item`]): first0, count0, …
pub fn packed_split_words(total: u32, per_outer: u32) -> Vec<crate::VertexWord> {
    worker_split(total)
        .iter()
        .flat_map(|&(first, count)| {
            [
                crate::VertexWord::Value(packed_item(first, per_outer)),
                crate::VertexWord::Value(count),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_cover_everything_in_order() {
        for total in [0u32, 1, 5, 6, 7, 100, 1153] {
            let split = worker_split(total);
            let mut next = 0;
            for (first, count) in split {
                assert_eq!(first, next);
                next += count;
            }
            assert_eq!(next, total);
            assert!(busiest(total) <= total.div_ceil(6));
        }
    }

    /// A packed first item unpacks to itself; K is the fewest bits that hold every index.
    #[test]
    fn first_items_pack_as_outer_and_index() {
        for n in [1u32, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 1000, 4096] {
            let k = index_bits(n);
            assert!(
                n <= 1 << k && (k == 0 || n > 1 << (k - 1)),
                "n = {n}, K = {k}"
            );
            for item in [0u32, 1, n - 1, n, n + 1, 7 * n + n / 2, (1 << 20) - 1] {
                let word = packed_item(item, n);
                assert_eq!((word >> k, word & ((1 << k) - 1)), (item / n, item % n));
                assert_eq!(unpacked_item(word, n, k), item);
            }
        }
    }
}
