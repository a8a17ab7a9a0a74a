//! [`plan_movement`]: how a redistribution moves its bytes — the local copies on source tiles
//! (into send buffers), the exchange transfers, and the local copies on destination tiles
//! (from staging buffers, from a source block the tile holds itself, and zero padding).
//!
//! For every destination block and every source tile it reads from, one of three routes:
//!
//! * **direct** — every segment is word aligned on both sides: one transfer per segment, from
//!   the source buffer straight into the destination buffer;
//! * **staged at the destination** — the source sends word-aligned covers of the bytes it
//!   provides (few, large transfers) into a staging buffer, and the destination reorders them
//!   locally (any granularity);
//! * **staged at the source** — the source first copies its bytes into a send buffer laid out as
//!   the destination ranges they fill, then sends each range as one transfer (used when the
//!   destination ranges are few but the source bytes are scattered, e.g. rows into `$CWEI`
//!   blocks).
//!
//! The route with the lowest estimated cost is taken ([`RouteCost`]). Every replica of a
//! destination block reads a source block from the same source replica (chosen by block), so a
//! transfer is sent once and received by all of them (a broadcast); a destination tile that
//! holds the source block itself copies locally. Replica choice, routes and ordering are
//! deterministic.

use super::mixed::MixedRoute;
use super::route::{choose_route, gathered, gathered_layout, Leg, Route};
pub use super::route::{
    copy_cycles, priced_copy_cycles, runs_word_aligned, transfer_cycles, RouteCost, RoutePolicy,
    WINDOW_CODE_BYTES, WINDOW_CODE_CYCLES,
};
use super::segments::{block_segments, Segment, Side, Source};
use crate::layout::{Distribution, ShardMap, View};
use std::collections::{BTreeMap, HashMap};

/// A buffer a movement refers to, on some tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Buf {
    /// The source value's shard on that tile.
    Source,
    /// The destination value's shard on that tile.
    Dest,
    /// The tile's staging buffer (received covers, before reordering).
    Staging,
    /// The tile's send buffer (reordered bytes, before sending).
    Send,
}

/// One run of a local copy: `bytes` bytes to offset `dst` of the copy's destination buffer,
/// from offset `src` of its source buffer (`None`: zeros).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    pub src: Option<u32>,
    pub dst: u32,
    pub bytes: u32,
}

/// A local copy on one tile between two of its buffers. A copy `from: Buf::Dest` holds only
/// zero runs (padding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalCopy {
    pub tile: u32,
    pub from: Buf,
    pub to: Buf,
    pub runs: Vec<Run>,
}

/// One exchange transfer: `words` words from `from` at `offset` on `sender` to every delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    pub sender: u32,
    pub from: Buf,
    pub offset: u32,
    pub words: u32,
    /// (receiver tile, buffer, byte offset).
    pub deliveries: Vec<(u32, Buf, u32)>,
}

/// Everything a redistribution does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Movement {
    /// Source-side copies into send buffers (before the exchange).
    pub before: Vec<LocalCopy>,
    pub moves: Vec<Move>,
    /// Destination-side copies (after the exchange): staging → dest, source → dest, zeros.
    pub after: Vec<LocalCopy>,
    /// Destination tiles whose shard is byte for byte the source shard on the same tile: they
    /// reuse the source buffer (no copy).
    pub aliases: Vec<u32>,
    /// Bytes of each tile's send buffer (tiles with none are absent).
    pub send_bytes: BTreeMap<u32, u32>,
    /// Bytes of each tile's staging buffer.
    pub staging_bytes: BTreeMap<u32, u32>,
}

impl Movement {
    /// Whether any byte crosses between tiles.
    pub fn has_exchange(&self) -> bool {
        !self.moves.is_empty()
    }
}

/// The source replica every replica of destination block `dest_block` reads source block
/// `source_block` from, unless it holds that block itself.
fn chosen_replica(source: &Distribution, source_block: usize, dest_block: usize) -> u32 {
    let replicas = source.tiles_of(source_block);
    replicas[(dest_block.wrapping_mul(7919) + source_block) % replicas.len()]
}

fn zero_run(z: &Segment) -> Run {
    Run {
        src: None,
        dst: z.dst,
        bytes: z.bytes,
    }
}

/// Plans the movement of a value from `source` to `dest` through `view`.
pub fn plan_movement(source: &Side, dest: &Side, view: &View) -> Movement {
    plan_movement_with(source, dest, view, RoutePolicy::DEFAULT)
}

/// [`plan_movement`] choosing routes by `policy`.
pub fn plan_movement_with(
    source: &Side,
    dest: &Side,
    view: &View,
    policy: RoutePolicy,
) -> Movement {
    let all: Vec<usize> = (0..dest.dist.block_count()).collect();
    let read = super::reach::read_source_blocks(source.dist, view).len();
    plan_blocks(source, dest, view, &all, policy, read)
}

/// 0 or 4: the bytes a receiver's staging offset `next` moves on before a sender's covers
/// (`cover`, placed at `positions` after it) so that the most bytes of `segs` sit at the
/// same offset modulo 8 as their destinations. A copy whose runs all agree moves 8-byte
/// words (`copy_runs` W8, paced): a K-chunk of 1076 FP8 bytes per row, staged end to end,
/// otherwise leaves every other row's runs 4 bytes off and the whole copy in 4-byte words,
/// at twice the bundles per byte or more.
fn eight_byte_pad(next: u32, cover: &[(u32, u32)], positions: &[u32], segs: &[&Segment]) -> u32 {
    let agreeing = |pad: u32| -> u64 {
        segs.iter()
            .filter_map(|s| match s.src {
                Source::Block { offset, .. } => {
                    let c = cover.partition_point(|c| c.1 <= offset);
                    let at = next + pad + positions.get(c)? + (offset - cover.get(c)?.0);
                    (at % 8 == s.dst % 8).then_some(u64::from(s.bytes))
                }
                Source::Zero => None,
            })
            .sum()
    };
    if agreeing(4) > agreeing(0) {
        4
    } else {
        0
    }
}

/// [`plan_movement`] for the destination blocks `blocks` only (the planner's cost model samples
/// a few blocks of a large value); `read_blocks` is how many source blocks the whole movement
/// reads ([`read_source_blocks`](super::reach::read_source_blocks)).
pub fn plan_blocks(
    source: &Side,
    dest: &Side,
    view: &View,
    blocks: &[usize],
    policy: RoutePolicy,
    read_blocks: usize,
) -> Movement {
    let mut movement = Movement::default();
    let source_bytes = source.map.buffer_bytes();
    // Per tile, the next free offset of its staging and send buffers.
    let mut staging: BTreeMap<u32, u32> = BTreeMap::new();
    let mut send: BTreeMap<u32, u32> = BTreeMap::new();
    let mut before: BTreeMap<u32, Vec<Run>> = BTreeMap::new();
    // Per destination tile and source buffer: the runs of its after-copies.
    let mut after: BTreeMap<(u32, Buf), Vec<Run>> = BTreeMap::new();
    // The moves already made for what a sender sends ([`SendKey`]): another destination block
    // that reads the same bytes the same way (the blocks of a broadcast view) joins their
    // deliveries, so the sender reorders and sends them once.
    let mut sent: HashMap<SendKey, Vec<usize>> = HashMap::new();
    for &block in blocks {
        let segments = block_segments(source, dest, view, block);
        let receivers = dest.dist.tiles_of(block);
        // Segments by the source replica the block's replicas read from; padding apart.
        let mut by_source: BTreeMap<u32, Vec<&Segment>> = BTreeMap::new();
        let mut zeros: Vec<Segment> = Vec::new();
        for s in &segments {
            match s.src {
                Source::Zero => zeros.push(*s),
                Source::Block { block: b, .. } => by_source
                    .entry(chosen_replica(source.dist, b as usize, block))
                    .or_default()
                    .push(s),
            }
        }
        // Zero segments a sender fills for its takers (they need no zero copy of their own).
        let mut claimed = vec![false; zeros.len()];
        let mut claimed_for: BTreeMap<u32, Vec<bool>> = BTreeMap::new();
        // Receivers holding a source block read its segments locally.
        for &tile in receivers {
            let Some(b) = source.dist.block_on(tile) else {
                continue;
            };
            let mine: Vec<&Segment> = segments
                .iter()
                .filter(|s| matches!(s.src, Source::Block { block, .. } if block as usize == b))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let identity = zeros.is_empty()
                && mine.len() == segments.len()
                && mine
                    .iter()
                    .all(|s| matches!(s.src, Source::Block { offset, .. } if offset == s.dst))
                && dest.map.buffer_bytes() <= source_bytes;
            if identity {
                movement.aliases.push(tile);
                continue;
            }
            after
                .entry((tile, Buf::Source))
                .or_default()
                .extend(mine.iter().map(|s| Run {
                    src: match s.src {
                        Source::Block { offset, .. } => Some(offset),
                        Source::Zero => None,
                    },
                    dst: s.dst,
                    bytes: s.bytes,
                }));
        }
        let fan_in = by_source.len();
        // The blocks a sender serves, on average over the movement (the same whether all
        // blocks are planned or the cost model's sample): every block's senders spread over
        // the source blocks the movement reads (a third of a fused QKV's for V: counting all
        // of them made a value's reorder at its senders look three times cheaper than it is).
        let fan_out = (dest.dist.block_count() * fan_in).div_ceil(read_blocks.max(1));
        for (sender, segs) in by_source {
            let Source::Block { block: sblock, .. } = segs[0].src else {
                continue;
            };
            // A tile holds one block, so every segment of `segs` reads `sblock`; receivers
            // holding that block themselves read it locally.
            let takers: Vec<u32> = receivers
                .iter()
                .copied()
                .filter(|t| source.dist.block_on(*t) != Some(sblock as usize))
                .collect();
            if takers.is_empty() {
                continue;
            }
            let before_claims = claimed.clone();
            let legs: Vec<(Vec<Segment>, Leg)> = match choose_route(
                &segs,
                &zeros,
                &mut claimed,
                source_bytes,
                (fan_in, fan_out),
                policy,
            ) {
                Route::Single(leg) => vec![(segs.iter().map(|s| **s).collect(), leg)],
                Route::Mixed(MixedRoute {
                    inner: (inner, ranges, filled),
                    edges: (edges, cover),
                    gathers,
                }) => vec![
                    (inner, Leg::StagedAtSource(ranges, filled, gathers)),
                    (edges, Leg::StagedAtDest(cover)),
                ],
            };
            for (leg_segments, leg) in legs {
                let segs: Vec<&Segment> = leg_segments.iter().collect();
                match leg {
                    Leg::Direct => {
                        let key = SendKey::new(sender, RouteKind::Direct, &segs, &[], &[]);
                        if let Some(moves) = sent.get(&key) {
                            let data = segs
                                .iter()
                                .filter(|s| matches!(s.src, Source::Block { .. }));
                            for (&m, s) in moves.iter().zip(data) {
                                let d = &mut movement.moves[m].deliveries;
                                d.extend(takers.iter().map(|&t| (t, Buf::Dest, s.dst)));
                            }
                            continue;
                        }
                        let first = movement.moves.len();
                        for s in &segs {
                            let Source::Block { offset, .. } = s.src else {
                                continue;
                            };
                            movement.moves.push(Move {
                                sender,
                                from: Buf::Source,
                                offset,
                                words: s.bytes / 4,
                                deliveries: takers.iter().map(|&t| (t, Buf::Dest, s.dst)).collect(),
                            });
                        }
                        sent.insert(key, (first..movement.moves.len()).collect());
                    }
                    Leg::StagedAtDest(cover) => {
                        let mut positions = Vec::with_capacity(cover.len());
                        let mut total = 0u32;
                        for &(start, end) in &cover {
                            positions.push(total);
                            total += end - start;
                        }
                        // Each receiver places the covers at its own next staging offset, moved on
                        // a word when that puts more of the segments' bytes at the same offset
                        // modulo 8 as their destinations (the copies after then move 8 bytes a
                        // step; see `eight_byte_pad`).
                        let mut bases: Vec<u32> = Vec::with_capacity(takers.len());
                        for &t in &takers {
                            let next = staging.entry(t).or_insert(0);
                            *next += eight_byte_pad(*next, &cover, &positions, &segs);
                            bases.push(*next);
                            *next += total;
                        }
                        let key = SendKey::new(sender, RouteKind::StagedAtDest, &[], &cover, &[]);
                        let mut within = 0u32;
                        match sent.get(&key) {
                            Some(moves) => {
                                for (&m, &(start, end)) in moves.iter().zip(&cover) {
                                    let d = &mut movement.moves[m].deliveries;
                                    d.extend(
                                        takers
                                            .iter()
                                            .zip(&bases)
                                            .map(|(&t, &base)| (t, Buf::Staging, base + within)),
                                    );
                                    within += end - start;
                                }
                            }
                            None => {
                                let first = movement.moves.len();
                                for &(start, end) in &cover {
                                    movement.moves.push(Move {
                                        sender,
                                        from: Buf::Source,
                                        offset: start,
                                        words: (end - start) / 4,
                                        deliveries: takers
                                            .iter()
                                            .zip(&bases)
                                            .map(|(&t, &base)| (t, Buf::Staging, base + within))
                                            .collect(),
                                    });
                                    within += end - start;
                                }
                                sent.insert(key, (first..movement.moves.len()).collect());
                            }
                        }
                        for (&t, &base) in takers.iter().zip(&bases) {
                            let runs = after.entry((t, Buf::Staging)).or_default();
                            for s in &segs {
                                let Source::Block { offset, .. } = s.src else {
                                    continue;
                                };
                                let c = cover.partition_point(|c| c.1 <= offset);
                                let at = base + positions[c] + (offset - cover[c].0);
                                runs.push(Run {
                                    src: Some(at),
                                    dst: s.dst,
                                    bytes: s.bytes,
                                });
                            }
                        }
                    }
                    Leg::StagedAtSource(ranges, filled, gathers) => {
                        // The takers get the zeros the sender fills with the transfer.
                        let newly: Vec<bool> = claimed
                            .iter()
                            .zip(&before_claims)
                            .map(|(&now, &was)| now && !was)
                            .collect();
                        let key = SendKey::new(
                            sender,
                            if gathers {
                                RouteKind::StagedAtSourceGathered
                            } else {
                                RouteKind::StagedAtSource
                            },
                            &segs,
                            &ranges,
                            &filled,
                        );
                        // The short ranges travel together into the takers' staging.
                        let gather = if gathers {
                            gathered(&ranges)
                        } else {
                            vec![false; ranges.len()]
                        };
                        let (group_at, group_bytes) = gathered_layout(&ranges, &gather);
                        let group = Gathered {
                            ranges: &ranges,
                            gather: &gather,
                            at: &group_at,
                            bytes: group_bytes,
                        };
                        if let Some(moves) = sent.get(&key) {
                            let whole = ranges.iter().zip(&gather).filter(|(_, &g)| !g);
                            for (&m, (&(start, _), _)) in moves.iter().zip(whole) {
                                let d = &mut movement.moves[m].deliveries;
                                d.extend(takers.iter().map(|&t| (t, Buf::Dest, start)));
                            }
                            if group_bytes > 0 {
                                let m = *moves.last().expect("a gathered send has its move");
                                group.deliver(
                                    &mut movement.moves[m],
                                    &takers,
                                    &mut staging,
                                    &mut after,
                                );
                            }
                            for &t in &takers {
                                let mine = claimed_for
                                    .entry(t)
                                    .or_insert_with(|| vec![false; zeros.len()]);
                                for (m, &n) in mine.iter_mut().zip(&newly) {
                                    *m |= n;
                                }
                            }
                            continue;
                        }
                        let first = movement.moves.len();
                        let next = send.entry(sender).or_insert(0);
                        let base = *next;
                        let mut within = 0u32;
                        let mut positions = vec![0u32; ranges.len()];
                        for (r, &(start, end)) in ranges.iter().enumerate() {
                            if gather[r] {
                                continue;
                            }
                            // Each range at its destination's offset modulo 8, so the copy
                            // into the send buffer keeps the 8-byte alignment its 4 × 4
                            // transposes and 8-byte moves need.
                            within += (start % 8 + 8 - (base + within) % 8) % 8;
                            positions[r] = within;
                            movement.moves.push(Move {
                                sender,
                                from: Buf::Send,
                                offset: base + within,
                                words: (end - start) / 4,
                                deliveries: takers.iter().map(|&t| (t, Buf::Dest, start)).collect(),
                            });
                            within += end - start;
                        }
                        if group_bytes > 0 {
                            within += (8 - (base + within) % 8) % 8;
                            for (r, &g) in gather.iter().enumerate() {
                                if g {
                                    positions[r] = within + group_at[r];
                                }
                            }
                            let mut m = Move {
                                sender,
                                from: Buf::Send,
                                offset: base + within,
                                words: group_bytes.div_ceil(4),
                                deliveries: Vec::new(),
                            };
                            group.deliver(&mut m, &takers, &mut staging, &mut after);
                            movement.moves.push(m);
                            within += group_bytes.div_ceil(4) * 4;
                        }
                        *next = base + within;
                        sent.insert(key, (first..movement.moves.len()).collect());
                        let at = |dst: u32| {
                            let r = ranges.partition_point(|r| r.1 <= dst);
                            base + positions[r] + (dst - ranges[r].0)
                        };
                        let runs = before.entry(sender).or_default();
                        for s in &segs {
                            let Source::Block { offset, .. } = s.src else {
                                continue;
                            };
                            runs.push(Run {
                                src: Some(offset),
                                dst: at(s.dst),
                                bytes: s.bytes,
                            });
                        }
                        runs.extend(filled.iter().map(|z| Run {
                            src: None,
                            dst: at(z.dst),
                            bytes: z.bytes,
                        }));
                        for &t in &takers {
                            let mine = claimed_for
                                .entry(t)
                                .or_insert_with(|| vec![false; zeros.len()]);
                            for (m, &n) in mine.iter_mut().zip(&newly) {
                                *m |= n;
                            }
                        }
                    }
                }
            }
        }
        if !zeros.is_empty() {
            for &tile in receivers {
                if movement.aliases.contains(&tile) {
                    continue;
                }
                let got = claimed_for.get(&tile);
                let left: Vec<Run> = zeros
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !got.is_some_and(|g| g[*i]))
                    .map(|(_, z)| zero_run(z))
                    .collect();
                if !left.is_empty() {
                    after.entry((tile, Buf::Dest)).or_default().extend(left);
                }
            }
        }
    }
    movement.before = before
        .into_iter()
        .map(|(tile, mut runs)| {
            runs.sort_by_key(|r| r.dst);
            LocalCopy {
                tile,
                from: Buf::Source,
                to: Buf::Send,
                runs,
            }
        })
        .collect();
    movement.after = after
        .into_iter()
        .filter(|(_, runs)| !runs.is_empty())
        .map(|((tile, from), mut runs)| {
            runs.sort_by_key(|r| r.dst);
            LocalCopy {
                tile,
                from,
                to: Buf::Dest,
                runs,
            }
        })
        .collect();
    movement.send_bytes = send
        .into_iter()
        .map(|(t, b)| (t, b.div_ceil(8) * 8))
        .collect();
    movement.staging_bytes = staging
        .into_iter()
        .map(|(t, b)| (t, b.div_ceil(8) * 8))
        .collect();
    movement
}

/// The ranges of a source-staged send that travel together ([`gathered`]): their place in the
/// group ([`gathered_layout`]) and its bytes.
struct Gathered<'a> {
    ranges: &'a [(u32, u32)],
    gather: &'a [bool],
    at: &'a [u32],
    bytes: u32,
}

impl Gathered<'_> {
    /// Delivers the group by `m` to every taker: at an 8-byte aligned offset of its staging,
    /// then copied into place by its copy after the exchange.
    fn deliver(
        &self,
        m: &mut Move,
        takers: &[u32],
        staging: &mut BTreeMap<u32, u32>,
        after: &mut BTreeMap<(u32, Buf), Vec<Run>>,
    ) {
        for &t in takers {
            let next = staging.entry(t).or_insert(0);
            let at = next.div_ceil(8) * 8;
            *next = at + self.bytes.div_ceil(4) * 4;
            m.deliveries.push((t, Buf::Staging, at));
            let runs = after.entry((t, Buf::Staging)).or_default();
            for (r, &(start, end)) in self.ranges.iter().enumerate() {
                if self.gather[r] {
                    runs.push(Run {
                        src: Some(at + self.at[r]),
                        dst: start,
                        bytes: end - start,
                    });
                }
            }
        }
    }
}

/// Which route a [`SendKey`]'s moves took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum RouteKind {
    Direct,
    StagedAtDest,
    StagedAtSource,
    StagedAtSourceGathered,
}

/// What one sender sends one destination block, as far as its moves depend on it: the route,
/// the segments (source offset, destination offset, bytes), the covers or destination ranges,
/// and the zeros a source-staged send fills. Two blocks with equal keys receive the same words
/// at the same offsets (or, staged at the destination, the same covers), so one set of moves
/// serves both.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SendKey {
    sender: u32,
    route: RouteKind,
    segments: Vec<(u32, u32, u32)>,
    spans: Vec<(u32, u32)>,
    zeros: Vec<(u32, u32)>,
}

impl SendKey {
    fn new(
        sender: u32,
        route: RouteKind,
        segments: &[&Segment],
        spans: &[(u32, u32)],
        zeros: &[Segment],
    ) -> SendKey {
        SendKey {
            sender,
            route,
            segments: segments
                .iter()
                .filter_map(|s| match s.src {
                    Source::Block { offset, .. } => Some((offset, s.dst, s.bytes)),
                    Source::Zero => None,
                })
                .collect(),
            spans: spans.to_vec(),
            zeros: zeros.iter().map(|z| (z.dst, z.bytes)).collect(),
        }
    }
}

/// The movement of `source` into `dest` when both are the layouts of values: a convenience for
/// tests and the cost model.
pub fn movement_between(
    source: (&Distribution, &ShardMap),
    dest: (&Distribution, &ShardMap),
    view: &View,
) -> Movement {
    plan_movement(
        &Side {
            dist: source.0,
            map: source.1,
        },
        &Side {
            dist: dest.0,
            map: dest.1,
        },
        view,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Order;
    use crate::plan::spread::rows;

    /// A transpose where each of 8 source tiles (8 rows each) feeds all 32 destination blocks
    /// (2 rows each) a few scattered elements: reordering at the sources would put 32 blocks'
    /// element runs on every sender, so the receivers reorder instead (their 8 senders' runs).
    #[test]
    fn a_sender_feeding_many_blocks_does_not_reorder_for_all_of_them() {
        let shape = [64u32, 64];
        let source = rows(&shape, 8, 1).unwrap();
        let dest = rows(&shape, 32, 1).unwrap();
        let map = |d: &Distribution| ShardMap::new(Order::DENSE, &d.padded_box(), 2).unwrap();
        let (source_map, dest_map) = (map(&source), map(&dest));
        let movement = movement_between(
            (&source, &source_map),
            (&dest, &dest_map),
            &View::transpose(&shape, &[1, 0]).unwrap(),
        );
        let most = |copies: &[LocalCopy]| copies.iter().map(|c| c.runs.len()).max().unwrap_or(0);
        let (sender_runs, receiver_runs) = (most(&movement.before), most(&movement.after));
        assert!(receiver_runs > 0, "{movement:?}");
        assert!(
            sender_runs <= receiver_runs,
            "a sender reorders {sender_runs} runs, a receiver {receiver_runs}"
        );
    }

    /// A broadcast view: every destination block reads the same rows of the same senders at the
    /// same offsets (a query block repeated for each key block), so the senders send each
    /// range once, to every block's tiles, and reorder once.
    #[test]
    fn blocks_reading_the_same_bytes_share_one_send() {
        let (rows_shape, blocks) = ([32u32, 40], 6u32);
        let shape = [blocks, 32, 40];
        let source = rows(&rows_shape, 4, 1).unwrap();
        // One block per tile, on tiles that hold no source rows.
        let dest = Distribution::new(
            shape.to_vec(),
            vec![(0..=blocks).collect(), vec![0, 32], vec![0, 40]],
            (0..blocks).map(|b| vec![100 + b]).collect(),
        )
        .unwrap();
        let view = View::broadcast(&rows_shape, &shape).unwrap();
        for order in [Order::DENSE, Order::Panels] {
            let source_map = ShardMap::new(Order::DENSE, &source.padded_box(), 2).unwrap();
            let dest_map = ShardMap::new(order, &dest.padded_box(), 2).unwrap();
            let movement = movement_between((&source, &source_map), (&dest, &dest_map), &view);
            for m in &movement.moves {
                let mut tiles: Vec<u32> = m.deliveries.iter().map(|d| d.0).collect();
                tiles.sort_unstable();
                tiles.dedup();
                assert_eq!(tiles.len(), blocks as usize, "{order:?}: {m:?}");
            }
            let mut sends: Vec<(u32, Buf, u32, u32)> = movement
                .moves
                .iter()
                .map(|m| (m.sender, m.from, m.offset, m.words))
                .collect();
            let count = sends.len();
            sends.sort_unstable();
            sends.dedup();
            assert_eq!(sends.len(), count, "{order:?}: a range sent twice");
        }
    }

    /// Rows of 1076 FP8 bytes (a K-chunk of So400m's fc2 in four), one per sender, staged on
    /// one receiver that reads them as AMP panels (32-byte runs at 32-byte offsets): each
    /// sender's covers start where every run agrees with its destination modulo 8, so the
    /// copies after the exchange can move 8-byte words.
    #[test]
    fn staged_rows_land_at_their_destinations_offsets_modulo_8() {
        let shape = [8u32, 1076];
        let source = rows(&shape, 8, 1).unwrap();
        let dest = rows(&shape, 1, 1).unwrap();
        let source_map = ShardMap::new(Order::DENSE, &source.padded_box(), 1).unwrap();
        let dest_map = ShardMap::new(Order::Panels, &dest.padded_box(), 1).unwrap();
        let movement = movement_between(
            (&source, &source_map),
            (&dest, &dest_map),
            &View::identity(&shape),
        );
        let staged: Vec<&Run> = movement
            .after
            .iter()
            .filter(|c| c.from == Buf::Staging)
            .flat_map(|c| &c.runs)
            .collect();
        // 8 senders, but the receiver may hold one row itself; 34 runs per row.
        assert!(staged.len() >= 7 * 34, "{movement:?}");
        for r in staged {
            assert_eq!(r.src.map(|s| s % 8), Some(r.dst % 8), "{r:?}");
        }
    }
}
