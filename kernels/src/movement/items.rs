//! Items of the table-driven kernels: an item is one (outer iteration o, entry r) pair, numbered
//! o·R + r; the six workers split the items in order, and each worker walks its share as
//! segments, one per outer iteration it touches.

/// Most items a table-driven kernel accepts: its set-up divides the first item by R in f32,
/// exact only below 2^20 (see the header of `kernels/asm/copy_runs.S`).
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

/// `floor(first / r)` as the kernels' set-up computes it (f32 reciprocal, round, correct), so a
/// test can prove the arithmetic over the whole range they accept.
pub fn f32_divmod(first: u32, r: u32) -> (u32, u32) {
    let two23 = f32::from_bits(0x4B00_0000);
    let x = f32::from_bits(0x4B00_0000 | first) - two23;
    let d = f32::from_bits(0x4B00_0000 | r) - two23;
    let q = x * tessera_isa::numerics::f32_oox(d);
    let rounded = (q + two23).to_bits().wrapping_sub(0x4B00_0000);
    let rem = first.wrapping_sub(rounded.wrapping_mul(r)) as i32;
    let fix = (rem >> 31) as u32; // 0 or all ones
    (
        rounded.wrapping_add(fix),
        (rem as u32).wrapping_add(r & fix),
    )
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

    #[test]
    fn f32_divmod_is_exact_below_the_item_limit() {
        // Every divisor up to 4096 against a spread of numerators, and every numerator near the
        // limit for awkward divisors.
        for r in 1..=4096u32 {
            let mut first = 0u32;
            while u64::from(first) < MAX_ITEMS {
                assert_eq!(
                    f32_divmod(first, r),
                    (first / r, first % r),
                    "{first} / {r}"
                );
                first = first * 3 / 2 + r + 1;
            }
        }
        for r in [3u32, 7, 11, 13, 999, 1023, 1025, 65_537, 524_287, 1_048_575] {
            for first in (MAX_ITEMS as u32 - 3000)..(MAX_ITEMS as u32) {
                assert_eq!(
                    f32_divmod(first, r),
                    (first / r, first % r),
                    "{first} / {r}"
                );
            }
        }
    }
}
