//! A redistribution as planned by its `Movement`: destination buffers (or the source's, where
//! the bytes stay put), staging and send buffers, source-side copies, the exchange transfers,
//! and destination-side copies.

use super::in_consumer::{whole_block_offset, InConsumer};
use super::rebalance::MovableCopy;
use super::steps::{compute_vstep, exchange_vstep};
use super::zero_tails::{tailed_copy, TailedCopy};
use super::{copies, Lower, LowerError, LowerFailure};
use crate::mid::MidId;
use crate::redist::after::{behind_covers, tile_copies};
use crate::redist::{Buf, Movement};
use crate::tile::{BufferCategory, BufferId, SymbolicTransfer};
use std::collections::HashMap;

/// Most words of one transfer to a single receiver: a longer one goes as several, each its own
/// receive, so the scheduler may interleave a tile's receives from several senders where whole
/// transfers would leave one side waiting (with timed receives a receive costs a cycle or two
/// beside its words). Transfers to several receivers stay whole: each piece must find all its
/// receivers free at once. Measured on one So400m/14 layer with the head, batch 1 (`tessera
/// estimate`): the QKV product's K-split partial sums to their adders, 11,033 transfers of up to
/// ~200 words, 3,337 → 2,690 cycles; the layer 270,961 → 270,326 (pieces of 32: 270,546; 128
/// with multicasts cut as well: 270,876, every large broadcast longer).
pub const UNICAST_PIECE_WORDS: u32 = 64;

impl Lower<'_> {
    /// A redistribution of `x` into this node, as planned by `movement`.
    pub(super) fn lower_movement(
        &mut self,
        x: MidId,
        movement: &Movement,
        dest_bytes: u32,
        element: u32,
    ) -> Result<(), LowerError> {
        let id = self.node;
        let label = self.label().to_string();
        let exchange = movement.has_exchange();
        let after = self.late[id.index()];
        let step = if exchange { after - 1 } else { after };
        // Destination buffers (or the source's, where the bytes stay put).
        let dest_tiles: Vec<u32> = self.layout(id).dist.all_tiles().collect();
        for t in dest_tiles {
            let b = if movement.aliases.contains(&t) {
                let b = self.shard_of(x, t)?;
                self.shared.insert((t, b));
                b
            } else {
                self.new_buffer(
                    t,
                    &label,
                    dest_bytes,
                    BufferCategory::Tensor(label.clone()),
                    None,
                )
            };
            self.shard[id.index()].insert(t, b);
        }
        // Tiles copying both from their own source block and from staging get room behind the
        // staged covers for the source block's bytes (whole words), so one table reads both.
        let both = behind_covers(movement);
        // Destination-side copies: one table per tile (see `redist::after`).
        let per_tile = tile_copies(movement, &both).map_err(|tile| {
            self.fail(
                LowerFailure::CopyRoom,
                format!("tile {tile} copies from two buffers without room"),
            )
        })?;
        let covers_end = |t: u32| match both.get(&t) {
            Some(b) => b.base + (b.hi - b.lo),
            None => movement.staging_bytes.get(&t).copied().unwrap_or(0),
        };
        // Padding read from a zero tail behind the covers where that is cheaper (see
        // `zero_tails`).
        let mut covers: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
        for m in &movement.moves {
            for &(tile, buf, offset) in &m.deliveries {
                if buf == Buf::Staging {
                    covers
                        .entry(tile)
                        .or_default()
                        .push((offset, offset + 4 * m.words));
                }
            }
        }
        let mut tails: HashMap<u32, TailedCopy> = HashMap::new();
        for copy in &per_tile {
            let staged = movement.staging_bytes.get(&copy.tile).copied().unwrap_or(0);
            let covers = covers.get(&copy.tile).map_or(&[][..], Vec::as_slice);
            if let Some(tailed) = tailed_copy(copy, staged, covers, element)
                .map_err(|e| self.fail(LowerFailure::CopyTable, e))?
            {
                tails.insert(copy.tile, tailed);
            }
        }
        let mut staging: HashMap<u32, BufferId> = HashMap::new();
        for &t in movement.staging_bytes.keys() {
            let bytes = tails
                .get(&t)
                .map_or_else(|| covers_end(t), TailedCopy::staging_bytes);
            let b = self.new_buffer(
                t,
                &format!("{label}.staging"),
                bytes,
                BufferCategory::Exchange(label.clone()),
                None,
            );
            staging.insert(t, b);
        }
        // A loop's exchange code is the same in every iteration, so it cannot name one
        // iteration's slice of a layered buffer: a sender copies its slice into a buffer of
        // its own first (the copy's binding moves on with the iterations), and sends that.
        let mut slices: HashMap<u32, BufferId> = HashMap::new();
        if exchange {
            let senders: std::collections::BTreeSet<u32> = movement
                .moves
                .iter()
                .filter(|m| m.from == Buf::Source)
                .map(|m| m.sender)
                .collect();
            for t in senders {
                let layered = self.shard_of(x, t)?;
                let Some(&stride) = self.layered.get(&(t, layered)) else {
                    continue;
                };
                let slice = self.new_buffer(
                    t,
                    &format!("{label}.slice"),
                    stride,
                    BufferCategory::Exchange(label.clone()),
                    None,
                );
                self.copy_into(compute_vstep(step), t, layered, slice, stride)?;
                slices.insert(t, slice);
            }
        }
        let mut send: HashMap<u32, BufferId> = HashMap::new();
        for (&t, &bytes) in &movement.send_bytes {
            let b = self.new_buffer(
                t,
                &format!("{label}.send"),
                bytes,
                BufferCategory::Exchange(label.clone()),
                None,
            );
            send.insert(t, b);
        }
        let buffer = |me: &Self, tile: u32, buf: Buf| -> Result<BufferId, LowerError> {
            match buf {
                Buf::Source => match slices.get(&tile) {
                    Some(&slice) => Ok(slice),
                    None => me.shard_of(x, tile),
                },
                Buf::Dest => me.shard_of(id, tile),
                Buf::Staging => staging.get(&tile).copied().ok_or_else(|| {
                    me.fail(
                        LowerFailure::ExchangeBuffer,
                        format!("no staging buffer on tile {tile}"),
                    )
                }),
                Buf::Send => send.get(&tile).copied().ok_or_else(|| {
                    me.fail(
                        LowerFailure::ExchangeBuffer,
                        format!("no send buffer on tile {tile}"),
                    )
                }),
            }
        };
        for copy in &movement.before {
            let (from, to) = (
                buffer(self, copy.tile, copy.from)?,
                buffer(self, copy.tile, copy.to)?,
            );
            // A sender's rows out of a product's result into its send buffer: a paced copy if
            // asked for, the send buffer in an element of its own (the result keeps the slot
            // its product gave it).
            let paced_send = self.options.paced_copies
                && copy.to == Buf::Send
                && self.program.tiles[copy.tile as usize].buffers[from.0 as usize].slot
                    == Some(tessera_kernels::gemm::SLOT_C);
            for mut params in copies::copy_params(&copy.runs, element)
                .map_err(|e| self.fail(LowerFailure::CopyTable, e))?
            {
                if paced_send && copies::is_progression(&params) {
                    if let tessera_kernels::table::KernelParams::CopyRuns { slots, .. } =
                        &mut params
                    {
                        *slots = Some((tessera_kernels::gemm::SLOT_C, super::PACED_SOURCE_SLOT));
                    }
                }
                self.call(
                    compute_vstep(step),
                    copy.tile,
                    params,
                    &[(from, 0), (to, 0)],
                )?;
            }
        }
        if exchange {
            let v = exchange_vstep(step);
            let mut list = Vec::with_capacity(movement.moves.len());
            for m in &movement.moves {
                let source = buffer(self, m.sender, m.from)?;
                self.touch(m.sender, source, v);
                let mut deliveries = Vec::with_capacity(m.deliveries.len());
                for &(tile, buf, offset) in &m.deliveries {
                    let b = buffer(self, tile, buf)?;
                    // Covers moved up the staging buffer (see `zero_tails`).
                    let offset = match tails.get(&tile).filter(|_| buf == Buf::Staging) {
                        Some(t) => t.cover_offset(offset),
                        None => offset,
                    };
                    self.touch(tile, b, v);
                    deliveries.push((tile, b, offset));
                }
                // A unicast goes in pieces of at most `UNICAST_PIECE_WORDS` (see there).
                let piece = if deliveries.len() == 1 {
                    UNICAST_PIECE_WORDS
                } else {
                    m.words
                };
                let mut at = 0;
                while at < m.words {
                    let words = (m.words - at).min(piece);
                    list.push(SymbolicTransfer {
                        sender: m.sender,
                        source: (source, m.offset + 4 * at),
                        words,
                        deliveries: deliveries
                            .iter()
                            .map(|&(t, b, o)| (t, b, o + 4 * at))
                            .collect(),
                        label: format!("{label} from tile {}", m.sender),
                    });
                    at += words;
                }
            }
            self.transfers.entry(step).or_default().extend(list);
            let ops = self.step_ops.entry(v).or_default();
            if ops.last() != Some(&label) {
                ops.push(label.clone());
            }
        }
        for copy in per_tile {
            let tile = copy.tile;
            let dest = buffer(self, tile, Buf::Dest)?;
            let tailed = tails.remove(&tile);
            let behind = tailed.as_ref().map_or(copy.behind, |t| t.behind);
            let from = match behind {
                None if copy.from == Buf::Dest => dest,
                None => buffer(self, tile, copy.from)?,
                Some(b) => {
                    // The source block's bytes go behind the staged covers first.
                    let bigger = buffer(self, tile, Buf::Staging)?;
                    let src = self.shard_of(x, tile)?;
                    let pre = vec![crate::redist::Run {
                        src: Some(b.lo),
                        dst: b.base,
                        bytes: b.hi - b.lo,
                    }];
                    for params in copies::copy_params(&pre, 4)
                        .map_err(|e| self.fail(LowerFailure::CopyTable, e))?
                    {
                        self.call(compute_vstep(after), tile, params, &[(src, 0), (bigger, 0)])?;
                    }
                    bigger
                }
            };
            let calls = match tailed {
                Some(tailed) => {
                    // The tail zeroed first, in the staging buffer itself.
                    for params in tailed.zero {
                        self.call(compute_vstep(after), tile, params, &[(from, 0), (from, 0)])?;
                    }
                    tailed.copy
                }
                None => copies::copy_params(&copy.runs, element)
                    .map_err(|e| self.fail(LowerFailure::CopyTable, e))?,
            };
            // A copy from the tile's own source block alone waits for no exchange: it may also
            // run in the step its source is ready in (`rebalance`), or, when it moves the whole
            // block to one place, go (`in_consumer`).
            let first = self.calls.len();
            let whole_block = (copy.from == Buf::Source && behind.is_none() && exchange)
                .then(|| {
                    let source = self.shard_of(x, tile).ok()?;
                    let bytes = self.program.tiles[tile as usize].buffers[source.0 as usize].bytes;
                    whole_block_offset(&copy.runs, bytes).map(|offset| (source, offset))
                })
                .flatten();
            // Into a product's panels from the exchange's staging: a paced copy if asked for.
            let paced = self.options.paced_copies
                && from != dest
                && copy.from == Buf::Staging
                && self.layout(id).order == crate::layout::Order::Panels;
            for mut params in calls {
                if paced && copies::is_progression(&params) {
                    if let tessera_kernels::table::KernelParams::CopyRuns { slots, .. } =
                        &mut params
                    {
                        *slots = Some((super::PACED_SOURCE_SLOT, tessera_kernels::gemm::SLOT_A));
                    }
                }
                self.call(compute_vstep(after), tile, params, &[(from, 0), (dest, 0)])?;
            }
            if let Some((source, offset)) = whole_block.filter(|_| self.options.own_blocks_early) {
                // Neither buffer is written in place from now on (see `in_consumer`).
                self.shared.insert((tile, source));
                self.shared.insert((tile, dest));
                self.in_consumer.push(InConsumer {
                    tile,
                    source,
                    dest,
                    offset,
                    calls: first..self.calls.len(),
                });
            } else if copy.from == Buf::Source && behind.is_none() && exchange {
                self.movable.push(MovableCopy {
                    calls: first..self.calls.len(),
                    tile,
                    early: compute_vstep(self.ready[x.index()]),
                });
            }
        }
        self.ready[id.index()] = after;
        Ok(())
    }
}
