//! Executes a [`Movement`] on host bytes: the definition the tile-level lowering of a
//! redistribution is tested against (and a checker of [`plan_movement`] itself: the result must
//! be what reading every destination element through the view gives).

use super::movement::{Buf, LocalCopy, Movement};
use std::collections::BTreeMap;

/// The buffers of one tile during a movement.
#[derive(Clone, Debug, Default)]
pub struct TileBuffers {
    pub source: Vec<u8>,
    pub dest: Vec<u8>,
    pub staging: Vec<u8>,
    pub send: Vec<u8>,
}

impl TileBuffers {
    fn get(&self, buf: Buf) -> &Vec<u8> {
        match buf {
            Buf::Source => &self.source,
            Buf::Dest => &self.dest,
            Buf::Staging => &self.staging,
            Buf::Send => &self.send,
        }
    }

    fn get_mut(&mut self, buf: Buf) -> &mut Vec<u8> {
        match buf {
            Buf::Source => &mut self.source,
            Buf::Dest => &mut self.dest,
            Buf::Staging => &mut self.staging,
            Buf::Send => &mut self.send,
        }
    }
}

fn copy(tiles: &mut BTreeMap<u32, TileBuffers>, c: &LocalCopy) {
    let tile = tiles.entry(c.tile).or_default();
    for run in &c.runs {
        let bytes: Vec<u8> = match run.src {
            Some(at) => tile.get(c.from)[at as usize..(at + run.bytes) as usize].to_vec(),
            None => vec![0; run.bytes as usize],
        };
        tile.get_mut(c.to)[run.dst as usize..(run.dst + run.bytes) as usize]
            .copy_from_slice(&bytes);
    }
}

/// Runs `movement` on `tiles` (whose `source` buffers hold the source shards and whose other
/// buffers are allocated by this function: `dest` of `dest_bytes` filled with `fill`, staging
/// and send buffers at the movement's sizes). Aliased tiles get their source bytes as `dest`.
pub fn execute(
    movement: &Movement,
    tiles: &mut BTreeMap<u32, TileBuffers>,
    dest_tiles: &[u32],
    dest_bytes: u32,
    fill: u8,
) {
    for &t in dest_tiles {
        tiles.entry(t).or_default().dest = vec![fill; dest_bytes as usize];
    }
    for (&t, &b) in &movement.staging_bytes {
        tiles.entry(t).or_default().staging = vec![fill; b as usize];
    }
    for (&t, &b) in &movement.send_bytes {
        tiles.entry(t).or_default().send = vec![fill; b as usize];
    }
    for c in &movement.before {
        copy(tiles, c);
    }
    // Every read of the exchange sees the state before it.
    let data: Vec<Vec<u8>> = movement
        .moves
        .iter()
        .map(|m| {
            let from = tiles[&m.sender].get(m.from);
            from[m.offset as usize..(m.offset + 4 * m.words) as usize].to_vec()
        })
        .collect();
    for (m, bytes) in movement.moves.iter().zip(&data) {
        for &(t, buf, at) in &m.deliveries {
            tiles
                .get_mut(&t)
                .expect("`tiles` holds every tile of the destination layout, which receives")
                .get_mut(buf)[at as usize..at as usize + bytes.len()]
                .copy_from_slice(bytes);
        }
    }
    for c in &movement.after {
        copy(tiles, c);
    }
    for &t in &movement.aliases {
        let tile = tiles
            .get_mut(&t)
            .expect("an aliased tile holds both a source and a destination block");
        let n = tile.dest.len();
        tile.dest = tile.source[..n].to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{even_bounds, Distribution, Order, ShardMap, TileGrid, View, MAX_RANK};
    use crate::redist::movement::{plan_movement, plan_movement_with, RoutePolicy};
    use crate::redist::segments::{padding_must_be_zero, Side};
    use proptest::prelude::*;
    use std::ops::Range;

    /// A value's bytes: element at global index i holds a tag of i (nonzero).
    fn tag(index: &[u32], e: usize) -> Vec<u8> {
        let mut h: u32 = 0x9e37_79b9;
        for &x in index {
            h = (h ^ x).wrapping_mul(0x0100_0193);
        }
        let mut bytes = h.to_le_bytes()[..e].to_vec();
        bytes[0] |= 1;
        bytes
    }

    /// The global index of shard position `local` of a block spanning `boxes`, or `None` where
    /// `local` lies in the shard's padding.
    fn global_index(boxes: &[Range<u32>], local: &[u32]) -> Option<Vec<u32>> {
        let inside = boxes
            .iter()
            .enumerate()
            .all(|(d, r)| local[d] < r.end - r.start);
        inside.then(|| {
            boxes
                .iter()
                .enumerate()
                .map(|(d, r)| r.start + local[d])
                .collect()
        })
    }

    fn shards(dist: &Distribution, map: &ShardMap, e: usize) -> BTreeMap<u32, TileBuffers> {
        let mut out = BTreeMap::new();
        for block in 0..dist.block_count() {
            let boxes = dist.block_box(block);
            let mut bytes = vec![0xAAu8; map.buffer_bytes() as usize];
            map.for_each(|local, offset| {
                if let Some(global) = global_index(&boxes, local) {
                    bytes[offset as usize..offset as usize + e].copy_from_slice(&tag(&global, e));
                }
            });
            for &t in dist.tiles_of(block) {
                out.insert(
                    t,
                    TileBuffers {
                        source: bytes.clone(),
                        ..TileBuffers::default()
                    },
                );
            }
        }
        out
    }

    /// Moves a tagged source into `dest` through `view` and checks every destination element.
    fn check(src: (&Distribution, Order), dst: (&Distribution, Order), view: &View, e: usize) {
        check_with(src, dst, view, e, RoutePolicy::DEFAULT);
    }

    /// [`check`] with routes chosen by `policy`; returns the movement.
    fn check_with(
        src: (&Distribution, Order),
        dst: (&Distribution, Order),
        view: &View,
        e: usize,
        policy: RoutePolicy,
    ) -> Movement {
        let src_map = ShardMap::new(src.1, &src.0.padded_box(), e as u32).unwrap();
        let dst_map = ShardMap::new(dst.1, &dst.0.padded_box(), e as u32).unwrap();
        let movement = plan_movement_with(
            &Side {
                dist: src.0,
                map: &src_map,
            },
            &Side {
                dist: dst.0,
                map: &dst_map,
            },
            view,
            policy,
        );
        for m in &movement.moves {
            assert!(m.words > 0 && m.offset % 4 == 0);
            for d in &m.deliveries {
                assert_ne!(d.0, m.sender, "a tile never sends to itself");
                assert_eq!(d.2 % 4, 0);
            }
        }
        let mut tiles = shards(src.0, &src_map, e);
        let dest_tiles: Vec<u32> = dst.0.all_tiles().collect();
        execute(
            &movement,
            &mut tiles,
            &dest_tiles,
            dst_map.buffer_bytes(),
            0x55,
        );
        for block in 0..dst.0.block_count() {
            let boxes = dst.0.block_box(block);
            for &t in dst.0.tiles_of(block) {
                let bytes = &tiles[&t].dest;
                dst_map.for_each(|local, offset| {
                    let at = offset as usize..offset as usize + e;
                    if let Some(global) = global_index(&boxes, local) {
                        let mut s = [0u32; MAX_RANK];
                        let want = if view.map(&global, &mut s) {
                            tag(&s[..src.0.rank()], e)
                        } else {
                            vec![0; e]
                        };
                        assert_eq!(&bytes[at], &want[..], "tile {t} element {global:?}");
                    } else if padding_must_be_zero(
                        dst.1,
                        &local[..boxes.len()],
                        &boxes.iter().map(|r| r.end - r.start).collect::<Vec<_>>(),
                    ) {
                        assert!(
                            bytes[at].iter().all(|&b| b == 0),
                            "padding of tile {t} at {offset}"
                        );
                    }
                });
            }
        }
        movement
    }

    #[test]
    fn row_blocks_gathered_into_panels() {
        let src = Distribution::on_grid(
            vec![12, 64],
            vec![even_bounds(12, 6, 1), vec![0, 64]],
            &TileGrid::new(vec![6], 0),
            &[Some(0), None],
        )
        .unwrap();
        let dst = Distribution::on_grid(
            vec![12, 64],
            vec![even_bounds(12, 2, 1), vec![0, 64]],
            &TileGrid::new(vec![2, 3], 0),
            &[Some(0), None],
        )
        .unwrap();
        check(
            (&src, Order::DENSE),
            (&dst, Order::Panels),
            &View::identity(&[12, 64]),
            1,
        );
    }

    #[test]
    fn rows_to_cwei_blocks_of_a_head() {
        // Keys [48, 40] f16 in 3 row blocks of 16 → one CWEI block on 4 replica tiles.
        let src = Distribution::on_grid(
            vec![48, 40],
            vec![even_bounds(48, 3, 16), vec![0, 40]],
            &TileGrid::new(vec![3], 0),
            &[Some(0), None],
        )
        .unwrap();
        let dst = Distribution::replicated(vec![40, 48], vec![3, 4, 5, 6]).unwrap();
        let view = View::transpose(&[48, 40], &[1, 0]).unwrap();
        check(
            (&src, Order::RowMajor { align: 16 }),
            (&dst, Order::Cwei),
            &view,
            2,
        );
    }

    #[test]
    fn an_sram_saving_route_stages_keys_at_their_senders() {
        // One head's keys (columns 72..144 of [256, 216] f16, held in 4 × 7 blocks of 64 rows
        // × 32 columns, so the head straddles column blocks) → its K^T `$CWEI` blocks on 4
        // tiles. Staged at the receivers, each of the 4 would hold all 12 senders' pieces
        // beside the blocks; when SRAM is what runs out, the receivers' staging counts for
        // every sender and most senders arrange their pieces themselves.
        let src = Distribution::on_grid(
            vec![256, 216],
            vec![even_bounds(256, 4, 16), even_bounds(216, 7, 32)],
            &TileGrid::new(vec![4, 7], 0),
            &[Some(0), Some(1)],
        )
        .unwrap();
        let receivers = 28..32;
        let dst = Distribution::replicated(vec![72, 256], receivers.clone().collect()).unwrap();
        let view = View::transpose(&[256, 72], &[1, 0])
            .and_then(|t| t.then(&View::slice(&[256, 216], 1, 72, 144)?))
            .unwrap();
        let (s, d) = ((&src, Order::RowMajor { align: 16 }), (&dst, Order::Cwei));
        let staged = |m: &Movement| -> u32 {
            receivers
                .clone()
                .map(|t| m.staging_bytes.get(&t).copied().unwrap_or(0))
                .sum()
        };
        let default = staged(&check_with(s, d, &view, 2, RoutePolicy::DEFAULT));
        let saving = staged(&check_with(s, d, &view, 2, RoutePolicy::SRAM_SAVING));
        let apart = |policy: RoutePolicy| RoutePolicy {
            gathers: false,
            ..policy
        };
        let default_apart = staged(&check_with(s, d, &view, 2, apart(RoutePolicy::DEFAULT)));
        let saving_apart = staged(&check_with(s, d, &view, 2, apart(RoutePolicy::SRAM_SAVING)));
        // Each sender's pieces as windows of their own: cheap buffers stage them at the
        // receivers (195,840 bytes), an SRAM-saving plan at the senders (65,536).
        assert!(default_apart > 0, "cheap buffers: the receivers stage");
        assert!(
            saving_apart * 2 < default_apart,
            "staged {saving_apart} of {default_apart} bytes"
        );
        // With a sender's short ranges gathered into one window, both arrange at the senders
        // and stage no more than the SRAM-saving plan did (61,440 each).
        assert!(
            default <= saving_apart && saving <= saving_apart,
            "staged {default} and {saving} against {saving_apart} bytes"
        );
    }

    #[test]
    fn values_padded_with_zero_rows_into_cwei_blocks() {
        // A key block's values [81, 40] f16 in 3 row blocks → padded to 96 rows (the graph's
        // pad) in `$CWEI` order on 2 replica tiles: rows 81..96 read zeros.
        let src = Distribution::on_grid(
            vec![81, 40],
            vec![vec![0, 27, 54, 81], vec![0, 40]],
            &TileGrid::new(vec![3], 0),
            &[Some(0), None],
        )
        .unwrap();
        let dst = Distribution::replicated(vec![96, 40], vec![5, 6]).unwrap();
        let view = View::pad(&[81, 40], 0, 96).unwrap();
        check(
            (&src, Order::RowMajor { align: 4 }),
            (&dst, Order::Cwei),
            &view,
            2,
        );
    }

    /// So400m's values in small: two key blocks of 81 keys, the second starting on a half word,
    /// read from 3 × 4 source tiles (rows of 54 keys, 16 channels) into `$CWEI` order on 6
    /// replicas each. A channel's keys from one sender start or end inside a word another
    /// sender shares, so no sender's ranges are whole words; the senders still reorder their
    /// whole words once (for all 6 replicas), the shared words' halves are staged at the
    /// receivers, and so are a sender's short ranges, in one window.
    #[test]
    fn key_blocks_starting_on_half_words_reorder_at_their_senders() {
        let src = Distribution::on_grid(
            vec![162, 64],
            vec![vec![0, 54, 108, 162], vec![0, 16, 32, 48, 64]],
            &TileGrid::new(vec![3, 4], 0),
            &[Some(0), Some(1)],
        )
        .unwrap();
        let dst = Distribution::new(
            vec![2, 96, 64],
            vec![vec![0, 1, 2], vec![0, 96], vec![0, 64]],
            vec![(20..26).collect(), (30..36).collect()],
        )
        .unwrap();
        let blocks = View::reshape(&[162, 64], &[2, 81, 64]).unwrap();
        let view = View::pad(&[2, 81, 64], 1, 96)
            .unwrap()
            .then(&blocks)
            .unwrap();
        let movement = check_with(
            (&src, Order::RowMajor { align: 4 }),
            (&dst, Order::Cwei),
            &view,
            2,
            RoutePolicy::DEFAULT,
        );
        let runs = |from: Buf| -> usize {
            let copies = movement.before.iter().chain(&movement.after);
            copies
                .filter(|c| c.from == from)
                .map(|c| c.runs.len())
                .sum()
        };
        // Every receiver of the second block gets its 64 channels' shared words (one per
        // channel, from each of its two senders) staged, and nothing else.
        assert!(runs(Buf::Source) > 0, "the senders reorder: {movement:?}");
        let windows = |m: &Movement, tile: u32| -> usize {
            m.moves
                .iter()
                .filter(|m| m.deliveries.iter().any(|d| d.0 == tile))
                .count()
        };
        let staged = |m: &Movement, tile: u32| -> usize {
            m.after
                .iter()
                .filter(|c| c.tile == tile && c.from == Buf::Staging)
                .map(|c| c.runs.len())
                .sum()
        };
        let apart = check_with(
            (&src, Order::RowMajor { align: 4 }),
            (&dst, Order::Cwei),
            &view,
            2,
            RoutePolicy {
                gathers: false,
                ..RoutePolicy::DEFAULT
            },
        );
        // Kept apart, a receiver stages only the shared words (2 senders × 64 channels), and
        // each sender's short ranges (a channel's 8 keys of a split 16-key group) take a window
        // each: 136 windows. Gathered, a sender's short ranges take one window (24 in all),
        // and the receiver places them (248 staged runs, none longer than a short range).
        assert!(staged(&apart, 30) <= 2 * 64, "{}", staged(&apart, 30));
        assert!(
            windows(&movement, 30) * 4 <= windows(&apart, 30),
            "{} windows gathered, {} apart",
            windows(&movement, 30),
            windows(&apart, 30)
        );
        let longest = movement
            .after
            .iter()
            .filter(|c| c.from == Buf::Staging)
            .flat_map(|c| &c.runs)
            .map(|r| r.bytes)
            .max();
        assert!(longest <= Some(4 * super::super::route::GATHERED_RANGE_WORDS));
    }

    #[test]
    fn whole_k_blocks_of_panels_are_an_alias() {
        // A softmax part's rows in panels, [73, 100] on 2 tiles → its first 96 columns in panels
        // (the exponentials' whole K-blocks): the same bytes where they lie.
        let src = Distribution::on_grid(
            vec![146, 100],
            vec![vec![0, 73, 146], vec![0, 100]],
            &TileGrid::new(vec![2], 0),
            &[Some(0), None],
        )
        .unwrap();
        let dst = Distribution::on_grid(
            vec![146, 96],
            vec![vec![0, 73, 146], vec![0, 96]],
            &TileGrid::new(vec![2], 0),
            &[Some(0), None],
        )
        .unwrap();
        let (sm, dm) = (
            ShardMap::new(Order::Panels, &src.padded_box(), 2).unwrap(),
            ShardMap::new(Order::Panels, &dst.padded_box(), 2).unwrap(),
        );
        let m = plan_movement(
            &Side {
                dist: &src,
                map: &sm,
            },
            &Side {
                dist: &dst,
                map: &dm,
            },
            &View::slice(&[146, 100], 1, 0, 96).unwrap(),
        );
        assert_eq!(m.aliases, vec![0, 1]);
        assert!(m.moves.is_empty() && m.after.is_empty() && m.before.is_empty());
    }

    #[test]
    fn an_identical_layout_is_an_alias() {
        let d = Distribution::on_grid(
            vec![8, 32],
            vec![even_bounds(8, 4, 1), vec![0, 32]],
            &TileGrid::new(vec![4], 0),
            &[Some(0), None],
        )
        .unwrap();
        let map = ShardMap::new(Order::DENSE, &d.padded_box(), 2).unwrap();
        let m = plan_movement(
            &Side {
                dist: &d,
                map: &map,
            },
            &Side {
                dist: &d,
                map: &map,
            },
            &View::identity(&[8, 32]),
        );
        assert_eq!(m.aliases, vec![0, 1, 2, 3]);
        assert!(m.moves.is_empty() && m.after.is_empty());
    }

    fn order_strategy() -> impl Strategy<Value = Order> {
        prop_oneof![
            Just(Order::DENSE),
            Just(Order::RowMajor { align: 4 }),
            Just(Order::RowMajor { align: 16 }),
            Just(Order::Panels),
            Just(Order::Cwei),
        ]
    }

    /// A distribution of `shape` in `parts` blocks per dimension, each on `replicas` tiles from
    /// `base` (modulo 16 tiles, never two blocks on a tile).
    fn make_dist(shape: &[u32], parts: &[u32], replicas: u32, base: u32) -> Distribution {
        let bounds: Vec<Vec<u32>> = shape
            .iter()
            .zip(parts)
            .map(|(&e, &p)| even_bounds(e, p, 1))
            .collect();
        let blocks: u32 = bounds.iter().map(|b| b.len() as u32 - 1).product();
        let replicas = replicas.min((16 / blocks).max(1));
        let span = (blocks * replicas).max(16);
        let tiles_of = (0..blocks)
            .map(|b| {
                (0..replicas)
                    .map(|r| (base + b * replicas + r) % span)
                    .collect()
            })
            .collect();
        Distribution::new(shape.to_vec(), bounds, tiles_of).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Any distribution and order to any other, through a transpose or a slice or the
        /// identity, f16 and FP8: every destination element is the source element the view reads.
        #[test]
        fn every_destination_element_is_read_through_the_view(
            rows in 1u32..40, cols in 1u32..70, e in prop_oneof![Just(1usize), Just(2usize)],
            src_order in order_strategy(), dst_order in order_strategy(),
            which in 0u8..3,
            src_parts in proptest::collection::vec(1u32..4, 2), dst_parts in proptest::collection::vec(1u32..4, 2),
            src_rep in 1u32..3, dst_rep in 1u32..4, src_base in 0u32..16, dst_base in 0u32..16,
        ) {
            let shape = vec![rows, cols];
            let (view, dshape) = match which {
                0 => (View::identity(&shape), shape.clone()),
                1 => (View::transpose(&shape, &[1, 0]).unwrap(), vec![cols, rows]),
                _ => {
                    let start = cols / 3;
                    (View::slice(&shape, 1, start, cols).unwrap(), vec![rows, cols - start])
                }
            };
            let src = make_dist(&shape, &src_parts, src_rep, src_base);
            let dst = make_dist(&dshape, &dst_parts, dst_rep, dst_base);
            check((&src, src_order), (&dst, dst_order), &view, e);
        }
    }
}
