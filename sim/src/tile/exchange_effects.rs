//! The exchange effects of supervisor instructions that the tile carries out: a `send`'s or
//! `sendpic`'s words (or 64-bit items) on the outgoing wires, and the exchange CSR write a timed incoming control
//! (`delayxpic`, `delaypic`, `sendpic`) stands for.

use super::{OutgoingWord, Tile};
use crate::memory::TileMemory;
use tessera_isa::csr::index;
use tessera_isa::fabric::FETCH_LOOKAHEAD_BYTES;
use tessera_isa::semantics::{IncomingControl, Trap, TrapKind};

/// Puts `words` words from `address` on the outgoing wires from `cycle` on, one a cycle, and
/// makes them the outgoing stream a `sendpic` continues. The supervisor fetches its code at
/// `fetch`: a word read from a memory element that fetch uses (`fetch` up to
/// [`FETCH_LOOKAHEAD_BYTES`] on) is an exchange conflict, as on the hardware.
pub(super) fn send_words(
    memory: &TileMemory,
    outbox: &mut Vec<OutgoingWord>,
    outgoing: &mut Option<(u32, u32)>,
    (address, words, mode): (u32, u32, u32),
    cycle: u64,
    fetch: u32,
) -> Result<(), Trap> {
    let layout = memory.layout();
    let fetched = [
        layout.element_of(fetch),
        layout.element_of(fetch.saturating_add(FETCH_LOOKAHEAD_BYTES)),
    ];
    // A 64-bit send (bit 2) puts one item of two words a cycle on the tile's lane and its
    // partner's.
    let item = if mode & tessera_isa::fabric::ITEMS_64 != 0 {
        8
    } else {
        4
    };
    // With no direction bit nothing goes on the fabric; the cycles pass all the same.
    let on_fabric =
        mode & (tessera_isa::fabric::DIRECTION_1 | tessera_isa::fabric::DIRECTION_2) != 0;
    let read = |at: u32| -> Result<u32, Trap> {
        let word = memory
            .read_u32(at)
            .map_err(|e| Trap::memory(e.to_string()))?;
        if let Some(element) = layout
            .element_of(at)
            .filter(|e| fetched.contains(&Some(*e)))
        {
            return Err(TrapKind::ExchangeConflict {
                address: at,
                element: element.index(),
                fetch,
            }
            .into());
        }
        Ok(word)
    };
    for i in (0..words).filter(|_| on_fabric) {
        let at = address.wrapping_add(item * i);
        let word = read(at)?;
        let high = if item == 8 {
            read(at.wrapping_add(4))?
        } else {
            0
        };
        outbox.push(OutgoingWord {
            cycle: cycle + i as u64,
            word,
            mode,
            high,
        });
    }
    *outgoing = Some((address.wrapping_add(item * words), mode));
    Ok(())
}

impl Tile {
    /// Cycles by which a timed control leads the words it is for: an XPIC selection on a fabric
    /// whose selections lead ([`crate::machine::ExchangeDescription::mux_lead_cycles`]); 0 for
    /// the pointer and the format, which apply to the words arriving in their own cycle.
    pub(super) fn control_lead(&self, control: IncomingControl) -> u64 {
        match control {
            IncomingControl::Source { paired: false, .. } => self.exchange.mux_lead_cycles(self.id),
            IncomingControl::Source { paired: true, .. } => {
                u64::from(self.exchange.fabric.paired_mux_lead(self.id))
            }
            IncomingControl::Pointer { .. } => 0,
            IncomingControl::Format { .. } => u64::from(self.exchange.fabric.format_lead()),
        }
    }

    /// The exchange CSR write a timed incoming control stands for (`crate::chip::exchange`): XPIC
    /// to `$INCOMING_MUX` / `$INCOMING_MUXPAIR` (the tile whose XPIC value is `v`, its physical
    /// id on the ipu21 ([`tessera_isa::fabric::Fabric::xpic`]), listens as tile + 1,
    /// [`tessera_isa::fabric::XPIC_NEUTRAL`] as 0), the PIC pointer to
    /// `$INCOMING_SINIT` (a word address, so × 4), the PIC format to `$INCOMING_FORMAT`.
    pub(super) fn incoming_csr(&self, control: IncomingControl) -> Result<(u8, u32), TrapKind> {
        let (index, value) = match control {
            IncomingControl::Source { paired, value } => {
                let csr = if paired {
                    index::INCOMING_MUXPAIR
                } else {
                    index::INCOMING_MUX
                };
                let fabric = self.exchange.fabric;
                // The paired stream's value names the sender XOR bit 1 of this tile's physical
                // id (`tessera_isa::fabric::Fabric::paired_xpic`).
                let tile = if paired {
                    fabric.tile_of_paired_xpic(value, self.id)
                } else {
                    fabric.tile_of_xpic(value)
                }
                .filter(|&tile| tile < self.tiles);
                let listen = match tile {
                    _ if value == tessera_isa::fabric::XPIC_NEUTRAL => 0,
                    Some(tile) => tile + 1,
                    None => {
                        return Err(TrapKind::Unmodelled {
                            what: format!(
                                "XPIC source {value:#x} (modelled: a tile's {} id below {} or {:#x}, none; not the host)",
                                match fabric {
                                    tessera_isa::fabric::Fabric::Ipu21 => "physical",
                                    tessera_isa::fabric::Fabric::Uniform => "own",
                                },
                                self.tiles,
                                tessera_isa::fabric::XPIC_NEUTRAL
                            ),
                        })
                    }
                };
                (csr, listen)
            }
            IncomingControl::Pointer { word } => (index::INCOMING_SINIT, word << 2),
            IncomingControl::Format { value } => (index::INCOMING_FORMAT, value),
        };
        Ok((index, value))
    }
}
