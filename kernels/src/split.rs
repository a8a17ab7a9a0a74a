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
}
