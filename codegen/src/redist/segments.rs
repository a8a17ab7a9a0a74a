//! Where every byte of a destination block comes from: [`block_segments`] walks a destination
//! buffer in memory order and merges its elements into [`Segment`]s — runs of destination bytes
//! that read consecutive bytes of one source block, or are zero padding.

use crate::layout::{Distribution, Index, Order, ShardMap, View, MAX_RANK};

/// Where a segment's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// Zero bytes (the K-padding of AMP operands).
    Zero,
    /// `bytes` consecutive bytes of source block `block`'s buffer from `offset`.
    Block { block: u32, offset: u32 },
}

/// A run of destination bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    pub dst: u32,
    pub bytes: u32,
    pub src: Source,
}

/// The value on either side of a redistribution.
pub struct Side<'a> {
    pub dist: &'a Distribution,
    pub map: &'a ShardMap,
}

/// Whether a buffer of `order` starts zeroed (an input's): the AMP reads the K-padding of its
/// operands ([`padding_must_be_zero`] says which padding); row-major padding is never read as
/// data and is left undefined.
pub fn zero_padding(order: Order) -> bool {
    match order {
        Order::Panels | Order::Cwei => true,
        Order::RowMajor { .. } => false,
    }
}

/// Whether a destination element at `local`, outside its block's real `extent`, must be zero.
/// The AMP sums an operand's K-padding into real outputs, so a `Panels` buffer's real rows are
/// zero past the real K (its last dimension), and a `Cwei` buffer's real channels (its last
/// dimension) past the real K (the one before). A panel's padded rows, a `$CWEI` block's padded
/// channels (and both's leading entries) only reach the product's padded output rows and
/// columns, row-major padding which no one reads: they are left as they are. So a producer's
/// padded box is its consumer's operand where the two boxes agree (the last query block's
/// softmax panels, one row short of the box, were copied for a zero row), and no zeros travel
/// for a key block's padded keys as the scores' channels or a head's padded width as the
/// context's.
pub fn padding_must_be_zero(order: Order, local: &[u32], extent: &[u32]) -> bool {
    let real = |dims: std::ops::Range<usize>| dims.into_iter().all(|d| local[d] < extent[d]);
    let rank = extent.len();
    match order {
        Order::Panels => real(0..rank - 1),
        Order::Cwei => real(0..rank - 2) && real(rank - 1..rank),
        Order::RowMajor { .. } => false,
    }
}

/// The segments of destination block `block`, in destination memory order. `view` maps the
/// destination's global indices to the source's.
pub fn block_segments(source: &Side, dest: &Side, view: &View, block: usize) -> Vec<Segment> {
    let rank = dest.dist.rank();
    let boxes = dest.dist.block_box(block);
    let mut origin = [0u32; MAX_RANK];
    let mut extent = [0u32; MAX_RANK];
    for (d, r) in boxes.iter().enumerate() {
        origin[d] = r.start;
        extent[d] = r.end - r.start;
    }
    let element = dest.map.element_bytes();
    let mut out: Vec<Segment> = Vec::new();
    let mut global: Index = [0; MAX_RANK];
    let mut src_index: Index = [0; MAX_RANK];
    let mut src_local: Index = [0; MAX_RANK];
    let mut locator = source.dist.locator();
    dest.map.for_each(|local, offset| {
        let inside = (0..rank).all(|d| local[d] < extent[d]);
        let src = if inside {
            for d in 0..rank {
                global[d] = origin[d] + local[d];
            }
            if view.map(&global[..rank], &mut src_index) {
                let b = locator.locate(&src_index[..source.dist.rank()], &mut src_local);
                Source::Block {
                    block: b as u32,
                    offset: source.map.offset(&src_local),
                }
            } else {
                // A zero the view pads with: written whatever the order.
                Source::Zero
            }
        } else if padding_must_be_zero(dest.map.order, &local[..rank], &extent[..rank]) {
            Source::Zero
        } else {
            return;
        };
        if let Some(last) = out.last_mut() {
            if last.dst + last.bytes == offset {
                let extends = match (last.src, src) {
                    (Source::Zero, Source::Zero) => true,
                    (
                        Source::Block {
                            block: a,
                            offset: o,
                        },
                        Source::Block {
                            block: b,
                            offset: p,
                        },
                    ) => a == b && o + last.bytes == p,
                    _ => false,
                };
                if extends {
                    last.bytes += element;
                    return;
                }
            }
        }
        out.push(Segment {
            dst: offset,
            bytes: element,
            src,
        });
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Distribution, Order, ShardMap, View};

    /// The segments of block `block` of `dest` read from `source` through `view`, each side a
    /// distribution and its shard map.
    fn segments_of(
        source: (&Distribution, &ShardMap),
        dest: (&Distribution, &ShardMap),
        view: &View,
        block: usize,
    ) -> Vec<Segment> {
        block_segments(
            &Side {
                dist: source.0,
                map: source.1,
            },
            &Side {
                dist: dest.0,
                map: dest.1,
            },
            view,
            block,
        )
    }

    /// [`segments_of`] block 0.
    /// The bytes of `segs` that are zeros (`zero`) or copies of the source (`!zero`).
    fn bytes_of(segs: &[Segment], zero: bool) -> u32 {
        segs.iter()
            .filter(|s| (s.src == Source::Zero) == zero)
            .map(|s| s.bytes)
            .sum()
    }

    fn block_0_segments(
        source: (&Distribution, &ShardMap),
        dest: (&Distribution, &ShardMap),
        view: &View,
    ) -> Vec<Segment> {
        segments_of(source, dest, view, 0)
    }

    #[test]
    fn rows_to_panels_gives_one_segment_per_row_and_block() {
        // Source: [4, 64] FP8 in two row blocks; destination: all rows in panels on one tile.
        let src = Distribution::new(
            vec![4, 64],
            vec![vec![0, 2, 4], vec![0, 64]],
            vec![vec![0], vec![1]],
        )
        .unwrap();
        let src_map = ShardMap::new(Order::DENSE, &src.padded_box(), 1).unwrap();
        let dst = Distribution::replicated(vec![4, 64], vec![2]).unwrap();
        let dst_map = ShardMap::new(Order::Panels, &dst.padded_box(), 1).unwrap();
        let segs = block_0_segments(
            (&src, &src_map),
            (&dst, &dst_map),
            &View::identity(&[4, 64]),
        );
        // kb 0: rows 0..4 (two from each block), kb 1 likewise: 8 segments of 32 bytes.
        assert_eq!(segs.len(), 8);
        assert!(segs.iter().all(|s| s.bytes == 32));
        assert_eq!(
            segs[2].src,
            Source::Block {
                block: 1,
                offset: 0
            }
        );
        assert_eq!(
            segs[4],
            Segment {
                dst: 128,
                bytes: 32,
                src: Source::Block {
                    block: 0,
                    offset: 32
                }
            }
        );
    }

    #[test]
    fn padding_is_zero_only_for_amp_orders() {
        let src = Distribution::replicated(vec![2, 20], vec![0]).unwrap();
        let src_map = ShardMap::new(Order::DENSE, &[2, 20], 2).unwrap();
        let dst = Distribution::replicated(vec![2, 20], vec![1]).unwrap();
        let panels = ShardMap::new(Order::Panels, &[2, 20], 2).unwrap();
        let segs = block_0_segments((&src, &src_map), (&dst, &panels), &View::identity(&[2, 20]));
        assert_eq!(bytes_of(&segs, true), 2 * 12 * 2);
        let rows = ShardMap::new(Order::RowMajor { align: 16 }, &[2, 20], 2).unwrap();
        let segs = block_0_segments((&src, &src_map), (&dst, &rows), &View::identity(&[2, 20]));
        assert_eq!(segs.len(), 2);
        assert!(segs.iter().all(|s| s.src != Source::Zero && s.bytes == 40));
    }

    #[test]
    fn a_panel_block_short_of_its_box_zeroes_its_k_padding_not_its_rows() {
        // [5, 20] f16 in row blocks of 3 (the second holds 2 rows), panels of 32 columns: the
        // second block's third row is padding that only reaches padded output rows.
        let src = Distribution::new(
            vec![5, 20],
            vec![vec![0, 3, 5], vec![0, 20]],
            vec![vec![0], vec![1]],
        )
        .unwrap();
        let src_map = ShardMap::new(Order::DENSE, &src.padded_box(), 2).unwrap();
        let dst = Distribution::new(
            vec![5, 20],
            vec![vec![0, 3, 5], vec![0, 20]],
            vec![vec![2], vec![3]],
        )
        .unwrap();
        let panels = ShardMap::new(Order::Panels, &dst.padded_box(), 2).unwrap();
        let segs = segments_of(
            (&src, &src_map),
            (&dst, &panels),
            &View::identity(&[5, 20]),
            1,
        );
        // Per row: 16 + 4 real columns and 12 zeros; no byte of row 2 (offsets 64..96 and
        // 160..192 of the two K-blocks) is written.
        assert_eq!(bytes_of(&segs, true), 2 * 12 * 2);
        assert_eq!(bytes_of(&segs, false), 2 * 20 * 2);
        assert!(segs
            .iter()
            .all(|s| s.dst + s.bytes <= 64 || (96..160).contains(&s.dst)));
        assert!(segs.iter().all(|s| s.dst < 64 || s.dst >= 96));
    }

    #[test]
    fn a_cwei_block_zeroes_its_real_channels_k_padding_not_its_padded_channels() {
        // [20, 10] f16 (K × N) into one `$CWEI` block of 32 × 16: channels 10..16 only reach
        // padded output columns; rows 20..32 of the real channels are summed into real ones.
        let src = Distribution::replicated(vec![20, 10], vec![0]).unwrap();
        let src_map = ShardMap::new(Order::DENSE, &[20, 10], 2).unwrap();
        let dst = Distribution::replicated(vec![20, 10], vec![1]).unwrap();
        let cwei = ShardMap::new(Order::Cwei, &[20, 10], 2).unwrap();
        let segs = block_0_segments((&src, &src_map), (&dst, &cwei), &View::identity(&[20, 10]));
        assert_eq!(bytes_of(&segs, true), 12 * 10 * 2);
        assert_eq!(bytes_of(&segs, false), 20 * 10 * 2);
        // `$CWEI` order: [kb][channel][16 values of k], 32 bytes a channel: channels 10..16 of
        // both K-blocks are never written.
        assert!(segs
            .iter()
            .all(|s| (s.dst % 512) / 32 < 10 && (s.dst + s.bytes - 1) % 512 / 32 < 10));
    }

    #[test]
    fn a_transpose_gives_element_segments() {
        let src = Distribution::replicated(vec![3, 4], vec![0]).unwrap();
        let src_map = ShardMap::new(Order::DENSE, &[3, 4], 2).unwrap();
        let dst = Distribution::replicated(vec![4, 3], vec![0]).unwrap();
        let dst_map = ShardMap::new(Order::DENSE, &[4, 3], 2).unwrap();
        let segs = block_0_segments(
            (&src, &src_map),
            (&dst, &dst_map),
            &View::transpose(&[3, 4], &[1, 0]).unwrap(),
        );
        assert_eq!(segs.len(), 12);
        assert_eq!(
            segs[1],
            Segment {
                dst: 2,
                bytes: 2,
                src: Source::Block {
                    block: 0,
                    offset: 8
                }
            }
        );
    }
}
