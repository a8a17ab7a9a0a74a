//! [`Order`]: the order of a block's elements in a tile's buffer, and [`ShardMap`], the order
//! resolved for a padded box and element size into byte offsets.
//!
//! An order is a bijection between the padded box and the buffer's elements, written as digits:
//! every dimension's index is cut into mixed-radix digits, each with a byte stride, and an
//! element's offset is the sum of digit × stride. The orders the kernels read:
//!
//! | order | rank | buffer, outermost first | padded box |
//! |---|---|---|---|
//! | `RowMajor { align }` | any | row-major | last dimension up to a multiple of `align` |
//! | `Panels` (AMP left operand `[.., rows, k]`) | ≥ 2 | `[leading][kb][row][32 bytes of k]` | k up to whole 32-byte blocks |
//! | `Cwei` (AMP weights `[.., k, n]`) | ≥ 2 | `[leading][nb][kb][16 channels][32 bytes of k]` | k up to 32-byte blocks, n up to 16 |
//!
//! `Panels` and `Cwei` are `tessera_kernels::layout`'s panel and `$CWEI` orders (there for FP8
//! and f16, 32 bytes per K-block in both), generalised with leading dimensions.

use super::{LayoutError, MAX_RANK};

/// The element order of a value's shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    /// Row-major; the last dimension padded up to a multiple of `align` elements.
    RowMajor { align: u32 },
    /// AMP-left panels over the last two dimensions `[rows, k]`.
    Panels,
    /// AMP weight blocks (`$CWEI` order) over the last two dimensions `[k, n]`.
    Cwei,
}

impl Order {
    /// Dense row-major.
    pub const DENSE: Order = Order::RowMajor { align: 1 };

    /// Short name for dumps: `rows`, `rows/16`, `panels`, `cwei`.
    pub fn name(self) -> String {
        match self {
            Order::RowMajor { align: 1 } => "rows".into(),
            Order::RowMajor { align } => format!("rows/{align}"),
            Order::Panels => "panels".into(),
            Order::Cwei => "cwei".into(),
        }
    }
}

/// Bytes of one AMP K-block row (32 FP8 or 16 f16 values).
pub const AMP_BLOCK_BYTES: u32 = 32;
/// Output channels of one AMP weight block.
pub const AMP_CHANNELS: u32 = 16;

/// One digit of a dimension's index: `((i / div) % extent) * stride` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Digit {
    pub dim: u8,
    pub div: u32,
    pub extent: u32,
    pub stride: u32,
}

/// An order resolved for a padded box: every element's byte offset in the buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShardMap {
    pub order: Order,
    rank: usize,
    /// The padded extent of every dimension.
    padded: [u32; MAX_RANK],
    /// Digits in memory order (largest stride first).
    digits: Vec<Digit>,
    element_bytes: u32,
    bytes: u32,
}

impl ShardMap {
    /// The map of `order` for blocks of at most `box_extents` elements of `element_bytes` bytes.
    pub fn new(
        order: Order,
        box_extents: &[u32],
        element_bytes: u32,
    ) -> Result<ShardMap, LayoutError> {
        let rank = box_extents.len();
        if rank == 0 || rank > MAX_RANK {
            return Err(LayoutError::Rank { rank });
        }
        let e = element_bytes.max(1);
        let mut padded = [1u32; MAX_RANK];
        padded[..rank].copy_from_slice(box_extents);
        // Digits from innermost to outermost, with their element-count multipliers.
        let mut inner: Vec<(u8, u32, u32)> = Vec::new(); // (dim, div, extent) innermost first
        match order {
            Order::RowMajor { align } => {
                let align = align.max(1);
                padded[rank - 1] = padded[rank - 1].div_ceil(align) * align;
                for d in (0..rank).rev() {
                    inner.push((d as u8, 1, padded[d]));
                }
            }
            Order::Panels | Order::Cwei => {
                if rank < 2 || !AMP_BLOCK_BYTES.is_multiple_of(e) {
                    return Err(LayoutError::OrderRank { order, rank });
                }
                let per_block = AMP_BLOCK_BYTES / e;
                let (a, b) = (rank - 2, rank - 1);
                if order == Order::Panels {
                    // [leading][kb][row][lane]: k = dim b.
                    let kbs = padded[b].div_ceil(per_block);
                    padded[b] = kbs * per_block;
                    inner.push((b as u8, 1, per_block));
                    inner.push((a as u8, 1, padded[a]));
                    inner.push((b as u8, per_block, kbs));
                } else {
                    // [leading][nb][kb][channel][lane]: k = dim a, n = dim b.
                    let kbs = padded[a].div_ceil(per_block);
                    let nbs = padded[b].div_ceil(AMP_CHANNELS);
                    padded[a] = kbs * per_block;
                    padded[b] = nbs * AMP_CHANNELS;
                    inner.push((a as u8, 1, per_block));
                    inner.push((b as u8, 1, AMP_CHANNELS));
                    inner.push((a as u8, per_block, kbs));
                    inner.push((b as u8, AMP_CHANNELS, nbs));
                }
                for d in (0..a).rev() {
                    inner.push((d as u8, 1, padded[d]));
                }
            }
        }
        let mut stride: u64 = e as u64;
        let mut digits = Vec::with_capacity(inner.len());
        for (dim, div, extent) in inner {
            if stride > u32::MAX as u64 {
                return Err(LayoutError::TooLarge { bytes: stride });
            }
            digits.push(Digit {
                dim,
                div,
                extent,
                stride: stride as u32,
            });
            stride *= extent as u64;
        }
        if stride > u32::MAX as u64 / 2 {
            return Err(LayoutError::TooLarge { bytes: stride });
        }
        digits.reverse();
        Ok(ShardMap {
            order,
            rank,
            padded,
            digits,
            element_bytes: e,
            bytes: stride as u32,
        })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Bytes of the elements (the padded box).
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    /// Bytes of a tile's buffer: [`bytes`](Self::bytes) rounded up to whole 8-byte atoms (every
    /// buffer is 8-aligned and whole atoms, so word covers never leave it).
    pub fn buffer_bytes(&self) -> u32 {
        self.bytes.div_ceil(8) * 8
    }

    pub fn element_bytes(&self) -> u32 {
        self.element_bytes
    }

    /// The padded extents.
    pub fn padded(&self) -> &[u32] {
        &self.padded[..self.rank]
    }

    /// Digits, largest stride first.
    pub fn digits(&self) -> &[Digit] {
        &self.digits
    }

    /// Byte offset of local index `index` (within the padded box).
    #[inline]
    pub fn offset(&self, index: &[u32]) -> u32 {
        let mut offset = 0u32;
        for digit in &self.digits {
            offset += ((index[digit.dim as usize] / digit.div) % digit.extent) * digit.stride;
        }
        offset
    }

    /// The row stride in elements of a row-major map (the padded last dimension).
    pub fn row_elements(&self) -> u32 {
        self.padded[self.rank - 1]
    }

    /// Calls `f(local_index, offset)` for every element in memory order.
    pub fn for_each(&self, mut f: impl FnMut(&[u32; MAX_RANK], u32)) {
        let n = self.digits.len();
        let mut counters = vec![0u32; n];
        let mut index = [0u32; MAX_RANK];
        let total = self.bytes / self.element_bytes;
        for k in 0..total {
            f(&index, k * self.element_bytes);
            // Increment the innermost digit, carrying outwards.
            let mut i = n;
            while i > 0 {
                i -= 1;
                let digit = self.digits[i];
                let d = digit.dim as usize;
                counters[i] += 1;
                index[d] += digit.div;
                if counters[i] < digit.extent {
                    break;
                }
                counters[i] = 0;
                index[d] -= digit.div * digit.extent;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_kernels::layout::{fp8_to_panels, weights_to_cwei_blocks};

    fn bytes_in_order(map: &ShardMap, value: impl Fn(&[u32]) -> u8) -> Vec<u8> {
        let mut out = vec![0u8; map.bytes() as usize];
        map.for_each(|index, offset| {
            assert_eq!(map.offset(index), offset);
            out[offset as usize] = value(index);
        });
        out
    }

    #[test]
    fn panels_and_cwei_are_the_kernels_layouts() {
        let (m, k) = (5u32, 70u32);
        let codes: Vec<u8> = (0..m * k).map(|i| (i % 251 + 1) as u8).collect();
        let map = ShardMap::new(Order::Panels, &[m, k], 1).unwrap();
        let ours = bytes_in_order(&map, |i| {
            if i[1] < k {
                codes[(i[0] * k + i[1]) as usize]
            } else {
                0
            }
        });
        assert_eq!(
            ours,
            fp8_to_panels(&codes, m as usize, k as usize, m as usize)
        );

        let (k, n) = (70u32, 40u32);
        let w: Vec<u8> = (0..k * n).map(|i| (i % 253 + 1) as u8).collect();
        let map = ShardMap::new(Order::Cwei, &[k, n], 1).unwrap();
        let ours = bytes_in_order(&map, |i| {
            if i[0] < k && i[1] < n {
                w[(i[0] * n + i[1]) as usize]
            } else {
                0
            }
        });
        assert_eq!(ours, weights_to_cwei_blocks(&w, k as usize, n as usize, 1));
    }

    #[test]
    fn row_major_pads_the_last_dimension() {
        let map = ShardMap::new(Order::RowMajor { align: 16 }, &[3, 2, 20], 2).unwrap();
        assert_eq!(map.padded(), &[3, 2, 32]);
        assert_eq!(map.bytes(), 3 * 2 * 32 * 2);
        assert_eq!(map.offset(&[1, 1, 5]), ((2 + 1) * 32 + 5) * 2);
        let mut count = 0;
        map.for_each(|_, _| count += 1);
        assert_eq!(count, 3 * 2 * 32);
    }

    #[test]
    fn panels_with_leading_dimensions() {
        let map = ShardMap::new(Order::Panels, &[2, 3, 20], 2).unwrap();
        // f16: 16 values per K-block, 2 kbs, 3 rows, 2 leading.
        assert_eq!(map.bytes(), 2 * 2 * 3 * 32);
        assert_eq!(map.offset(&[1, 2, 17]), 2 * 3 * 32 + 3 * 32 + 2 * 32 + 2);
    }
}
