//! The exchange: how words move between tiles, when syncs release, and the faults a schedule can
//! commit. Public sources fix only the mechanism \[C\] (system §A2): "a sender puts a data word on
//! its output wires at a compile-time-known cycle with no destination id; the receiver switches
//! its input mux to the right wires at the predicted arrival cycle; no queues, arbiters or packet
//! headers", and the BSP shape {sync; exchange; compute}. Everything below that is marked \[A\] is
//! a project assumption; the CSR names are the ipu1 ones (isa §3.7) with chosen meanings.
//!
//! # Sending \[A\], its control \[S\]
//! `send COUNT-1, ADDRESS, SCTL` issued by the supervisor at cycle `c` puts `COUNT` 32-bit words,
//! read from `ADDRESS` when the `send` issues, on the tile's outgoing wires: word `i` in cycle
//! `c + i`. The supervisor is busy for `COUNT` cycles, so a tile sends at most 4 bytes per cycle
//! (`exchange.bytes_per_cycle_per_tile` must be 4; other values are refused as not modelled).
//! A word carries no destination. `SCTL` is the hardware's send control
//! (`tessera_isa::fabric`, \[S\] from osmarks/ipu-stack, run on a C600): bits 0 and 1 turn on
//! the two fabric directions, 3 both; a word reaches a tile only when a bit it sets is the
//! direction towards that tile on the machine's `exchange.fabric` (on a `Uniform` fabric either
//! bit reaches every tile). `SCTL` 0 puts nothing on the fabric: the cycles pass and no word is
//! sent. A listening tile that a word's directions miss sees nothing from it.
//!
//! # Paired 64-bit items \[S\]
//! (docs/reference/hardware-ipu-stack.md §1.4, from osmarks/ipu-stack's paired rows, run on a
//! C600.) With `SCTL` bit 2 a `send` puts `COUNT` 64-bit items on the wires, one a cycle, read
//! from `ADDRESS` (the field counts 8-byte units: the operand stands for twice its value): the
//! first word on the tile's own lane, the second on its partner's (`Fabric::partner`, physical
//! id XOR 2 on the ipu21). The partner must not send in those cycles (E-SIM-016); that it must
//! not receive either, as ipu-stack reserves it, is the compiler's rule, not checked here. The
//! receivers are a pair of partners, and both take every item:
//! - the pair shares one paired stream (XPIC stream 1). A timed selection on it by either
//!   member applies to both: `delayxpic N, 1, v` names the sender `v ^ (physical(me) & 2)`
//!   (`Fabric::paired_xpic`), for the items arriving from its event + 53 + 2·row on
//!   (`fabric::paired_mux_lead`); ipu-stack's rows have only the member with the smaller route
//!   time write it (`Fabric::paired_selector`). A `put $INCOMING_MUXPAIR` applies in its own
//!   cycle to its own tile only \[A\].
//! - each member takes items while its format (`delaypic N, 1, f`, or `$INCOMING_FORMAT`) is
//!   1 or 2, the direction the items come in (another value there is a fault, E-SIM-010); a
//!   timed format write applies to the items arriving 2 cycles later (`fabric::FORMAT_LEAD`:
//!   the rows turn it on 2 events before the first item lands and off `count` events later).
//!   An item is written, little-endian, at `pointer` and `pointer + 4`; then `pointer += 8 +
//!   DELTA`.
//! - an item lands `fabric::paired_latency` after it is sent: max(T(s, d), T(s, d ^ 2)) + 54 +
//!   2·row(d), the selection at the paired route time + 1 as in the 32-bit rows.
//!
//! A 64-bit item on a 32-bit mux, or a 32-bit word on the mux of a tile whose format is
//! paired, is a fault (E-SIM-010): what the hardware does then is not public.
//!
//! # Arrival
//! A word on `S`'s wires at cycle `c` arrives at every tile `R` at cycle
//! `c + latency(S, R)` ([`crate::machine::ExchangeDescription::latency_cycles`]). On the ipu21
//! \[S\] that is the hardware's route timing (osmarks/ipu-stack's `topology.rs`, whose rows run
//! on a C600 and match the SDK's vectors; docs/reference/hardware-ipu-stack.md §1.3 and
//! appendix A): T(s, d) + 53 + 2·row(d) for physical tiles s and d, 19 to 165 cycles; a
//! receiver's timed mux selection leads the words it is for by 52 + 2·row(d) (see Receiving).
//! On a `Uniform` fabric (the `small` machine) it is a base latency plus a cost per column of
//! distance, from the machine file \[A\]. Every tile listening to `S` at that cycle receives it,
//! so one sender with many listeners is a broadcast at no extra cost. The supertile's shared bus
//! (`exchange.supertile_size`) is not modelled.
//!
//! # Receiving \[A\]
//! - `put $INCOMING_MUX, v` issued at cycle `c`: for words arriving at `c` and later, the tile
//!   listens to tile `v - 1`; `v = 0` stops listening. A `v` larger than the tile count traps.
//!   Writing the value already there changes nothing.
//! - Each accepted word is written, little-endian, at `$INCOMING_BASE + pointer`; then
//!   `pointer += 4 + $INCOMING_DELTA` (wrapping). `put $INCOMING_SINIT, a` sets the pointer to
//!   `a`. BASE and DELTA start at 0, so SINIT normally takes an absolute address.
//! - `$INCOMING_FORMAT` 1 or 2 receives 64-bit items on the pair's paired stream (above);
//!   0, the start value, single 32-bit words on the mux; other values trap as not modelled.
//! - The hardware's timed controls \[S\] (osmarks/ipu-stack, run on a C600;
//!   docs/reference/hardware-ipu-stack.md §1.1–1.2) stand for these writes: `delayxpic N, s, v`
//!   keeps the supervisor N + 1 cycles and, in the last of them (event `e`), selects for the
//!   mux (stream `s` = 1: the pair's paired stream, above) tile `v`, or none for `0x640`
//!   (`tessera_isa::fabric::XPIC_NEUTRAL`). The selection applies to the words arriving from
//!   `e + lead` on, where `lead` is [`crate::machine::ExchangeDescription::mux_lead_cycles`]:
//!   52 + 2·row(d) on the ipu21 \[S\] (the SDK's rows select the sender at its first word's
//!   event + T + 1 and set the pointer, where the words land, 52 + 2·row(d) later), 0 on a
//!   `Uniform` fabric. A `put $INCOMING_MUX` applies in its own cycle (a Tessera convention;
//!   the hardware has no such write) \[A\];
//!   `delaypic N, 0, w` sets the pointer to the word address `w` the same way (`delaypic N, 1,
//!   f` the format); `sendpic N, sel, v` sends N + 1 more words of the outgoing
//!   stream (from where the last `send` or `sendpic` left off, with its send control) and
//!   applies one control (selector 0/1 XPIC, 2/3 PIC) at its first word. So a tile receives
//!   while it sends. XPIC names the sender by its physical id on the ipu21 \[S\]
//!   (`tessera_isa::fabric::Fabric::xpic`; by its own number on a `Uniform` fabric); `0x600 + x`,
//!   the host, traps here, and the two-word `sendpicp` and `sendoff` are not modelled.
//! - Within one cycle, the bundle issued in it executes first, then the words arriving in it are
//!   written: a `put` at `c` already steers a word arriving at `c`, and a load at `c` sees only
//!   words that arrived before `c`.
//! - Words are written at their arrival cycle while the receiver runs, so a tile may compute on
//!   data received earlier in the same superstep (on the chip no sync separates exchange from
//!   the compute after it).
//! - The incoming port works whatever the supervisor does: words keep arriving while it waits at
//!   a sync or after it halted.
//! - `$INCOMING_DCOUNT` and `$OUTGOING_BASE = 0`, which the hardware writes before every phase
//!   \[S\], are accepted and change nothing (the count only matters to `sync 0`, the host
//!   receive, which is not modelled; a non-zero `$OUTGOING_BASE` traps). The other exchange CSRs
//!   (`$OUTGOING_DELTA`, `$EXCHANGE_CTL`, `$ANS_DCOUNT`, `$EXCHANGE_ADJ`, `$SNOTIFY`) are not
//!   modelled: writing one traps. Reading an incoming CSR returns the value last written, not the live pointer.
//!
//! # Global sync \[A\]
//! `sync 3` (the internal zone) waits for every running tile (a tile whose image has an entry;
//! other tiles do not run and take no part). The sync is released at
//! `max(every tile's arrival, last word arrival + 1) + sync.global_sync_latency_cycles`, where a
//! tile arrives when its `sync` has issued and its workers have finished (`sync` issue + 1 or
//! the last worker's round end). Every tile continues from the release cycle, so tiles start each
//! superstep in lockstep and a schedule written in cycles holds on every tile. Every word sent
//! before a sync arrives before it is released: no word is in flight across a sync.
//!
//!
//! [`global_sync_release`] computes the release cycle; the chip and the one-tile runner
//! (`crate::single`) both use it, with arrivals from [`crate::tile::Tile::global_sync_arrival`].
//!
//! # Conflicts \[S\]
//! A `send` (or `sendpic`) that reads a word in a memory element the supervisor fetches its code
//! from (the element of its PC or of PC + 64, the look-ahead osmarks/ipu-stack keeps clear)
//! traps with E-TRAP-014, as the hardware raises `TEXCPT_CONFLICT` (ipu-stack's BRINGUP.md, run
//! on a C600; docs/reference/hardware-ipu-stack.md §1.6). A word received into such an element
//! while the supervisor runs is the receive error `CLASH_IFETCH` and stops the run (E-SIM-017).
//! A send and a receive sharing an element are not modelled; the compiler keeps every exchanged
//! buffer off the program's elements anyway.
//!
//! # Unheard words \[S\]
//! A word that no tile accepts, because no tile listens to its sender at the cycle it arrives
//! there, is legal: the hardware's SDK rows leave sends unconsumed on purpose (osmarks/ipu-stack's
//! EXCHANGE_INSTRUCTION_REFERENCE.md, after Graphcore's patent; docs/reference/hardware-ipu-stack.md
//! §1.6). The run goes on; each sender's unheard words are counted in its exchange profile
//! (`TileExchange::bytes_unheard`). The compiler's exchange checker still requires a listener for
//! every word it sends.
//!
//! # Faults (each stops the run with tiles and cycles)
//! - **Collision** (E-SIM-008), "two senders reach one receiver in the same cycle": (a) a mux
//!   switches from sender `A` to sender `B` in cycle `c` and words from both `A` and `B` arrive
//!   at the tile in `c` — which of the two the hardware latches depends on timing inside the cycle,
//!   which the model does not have, so it is a fault (the same on the paired stream). It is
//!   checked when the phase ends.
//! - **Receive outside memory** (E-SIM-009): an accepted word whose address is outside tile
//!   SRAM, misaligned, or in code.
//! - **Paired receive** (E-SIM-010): a 64-bit item on a 32-bit mux, a 32-bit word on the mux of a
//!   tile whose format is paired, or a format that is not the items' direction.
//! - **Borrowed lane busy** (E-SIM-016): a tile sends in a cycle its partner's 64-bit item holds
//!   its lane.
//! - **Sync never reached** (E-SIM-011): some running tiles wait at a global sync while others
//!   halted without reaching it; the message lists both, with pcs and cycles.
//!
//! # How the chip simulates it
//! Tiles are simulated in parallel in *rounds*. Before a round every tile's progress is noted:
//! the cycle up to which its sends are known (`u64::MAX` if it halted or waits at the sync and
//! can send nothing more this phase). In the round, each tile runs as far as every word that can
//! reach it is known: to `min(progress(S) + latency(S, R))` over the senders it listens to, or
//! without limit while it listens to none. After the round, the words each tile sent are added to
//! the phase's logs. A phase ends when every tile halted or waits at the sync and every word has
//! been delivered; the faults above are checked, and the sync is released. The rounds and their
//! results do not depend on the number of host threads, so runs are bit-identical for any count.

use crate::error::SimError;
use crate::machine::ExchangeDescription;
use crate::tile::{OutgoingWord, Tile};
use tessera_isa::fabric::Fabric;

/// The earliest switch collision of the phase (by cycle, then receiver), if any.
pub(super) fn switch_collision<'a>(
    tiles: impl IntoIterator<Item = &'a Tile>,
    sent: &[Vec<OutgoingWord>],
    exchange: &ExchangeDescription,
) -> Option<SimError> {
    // On the paired stream only 64-bit items count, at their own latency.
    let arrives_at = |sender: u32, receiver: u32, cycle: u64, pair: bool| {
        let latency = if pair {
            exchange.paired_latency_cycles(sender, receiver)
        } else {
            exchange.latency_cycles(sender, receiver)
        };
        let words = sent.get(sender as usize).map(Vec::as_slice).unwrap_or(&[]);
        let at = words.partition_point(|w| w.cycle + latency < cycle);
        words
            .get(at)
            .is_some_and(|w| w.cycle + latency == cycle && (!pair || w.is_item64()))
    };
    let mut found: Option<(u64, u32, SimError)> = None;
    for tile in tiles {
        for switch in &tile.port.switches {
            if found
                .as_ref()
                .is_some_and(|(cycle, receiver, _)| (*cycle, *receiver) <= (switch.cycle, tile.id))
            {
                continue;
            }
            if arrives_at(switch.from, tile.id, switch.cycle, switch.pair)
                && arrives_at(switch.to, tile.id, switch.cycle, switch.pair)
            {
                let mux = if switch.pair {
                    "the paired stream"
                } else {
                    "$INCOMING_MUX"
                };
                let error = SimError::ExchangeCollision {
                    receiver: tile.id,
                    cycle: switch.cycle,
                    first_sender: switch.from,
                    second_sender: switch.to,
                    detail: format!(
                        "{mux} switches from tile {} to tile {} in that cycle and words from both arrive in it",
                        switch.from, switch.to
                    ),
                };
                found = Some((switch.cycle, tile.id, error));
            }
        }
    }
    found.map(|(_, _, error)| error)
}

/// The first 64-bit item of the phase sent in a cycle in which the sender's partner, whose lane
/// it borrows, sends too (see "Paired 64-bit items").
pub(super) fn lane_conflict(sent: &[Vec<OutgoingWord>], fabric: Fabric) -> Option<SimError> {
    let mut found: Option<(u64, u32, u32)> = None;
    for (sender, words) in sent.iter().enumerate() {
        let sender = sender as u32;
        let partner = fabric.partner(sender);
        let Some(theirs) = sent.get(partner as usize) else {
            continue;
        };
        for item in words.iter().filter(|w| w.is_item64()) {
            let at = theirs.partition_point(|w| w.cycle < item.cycle);
            if theirs.get(at).is_some_and(|w| w.cycle == item.cycle)
                && found.is_none_or(|(cycle, s, _)| (item.cycle, sender) < (cycle, s))
            {
                found = Some((item.cycle, sender, partner));
                break;
            }
        }
    }
    found.map(|(cycle, sender, partner)| SimError::ExchangeLaneBusy {
        sender,
        partner,
        cycle,
    })
}

/// Per sender, the words of the phase no tile accepted (legal: see "Unheard words").
pub(super) fn unheard_words<'a>(
    tiles: impl IntoIterator<Item = &'a Tile>,
    sent: &[Vec<OutgoingWord>],
) -> Vec<u64> {
    let mut heard: Vec<Vec<(u32, u32)>> = vec![Vec::new(); sent.len()];
    for tile in tiles {
        for run in &tile.port.accepted {
            if let Some(runs) = heard.get_mut(run.sender as usize) {
                runs.push((run.first, run.first + run.count));
            }
        }
    }
    sent.iter()
        .zip(&mut heard)
        .map(|(words, runs)| {
            runs.sort_unstable();
            // Words covered by the union of the accepted runs.
            let (mut covered, mut next) = (0u64, 0u32);
            for &(first, end) in runs.iter() {
                let from = first.max(next);
                if end > from {
                    covered += u64::from(end - from);
                    next = end;
                }
            }
            words.len() as u64 - covered.min(words.len() as u64)
        })
        .collect()
}

/// The cycle a global sync is released at, from the latest tile arrival (see
/// [`crate::tile::Tile::global_sync_arrival`]) and the end of the last word arrival of the phase
/// (0 if none): `max(arrival, last word end) + latency`. See "Global sync" above.
pub fn global_sync_release(last_tile_arrival: u64, last_word_end: u64, latency_cycles: u32) -> u64 {
    last_tile_arrival.max(last_word_end) + u64::from(latency_cycles)
}
