//! Paired 64-bit transfers ([`Width::Paired`]): when a transfer may go as items on its sender's
//! lane and its partner's, the cycles of its receivers' controls, and the intervals it holds.

use super::{
    unbroken_with, Placement, ReceiveControls, Resource, Scratch, TileResources, ORIGIN,
    SETUP_BEFORE_ARRIVAL,
};
use crate::exchange::Transfer;
use crate::target::Target;

/// Fewest words a transfer sends as paired 64-bit items ([`Width::Paired`]): osmarks/ipu-stack
/// offers the paired form from 128 words, and the hardware's pair rows need at least 64 items
/// (docs/reference/hardware-ipu-stack.md §1.4) \[S\].
pub const PAIRED_MIN_WORDS: u32 = 128;

/// Cycles after a paired send's last item for which the sender's partner receives nothing: the
/// sender's row on the hardware lasts to its last event + 7, and its partner is reserved for all
/// of it (hardware-ipu-stack.md §1.4) \[S\].
pub const PAIRED_PARTNER_TAIL: u32 = 7;

/// How one transfer's words travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// 32-bit words, one a cycle.
    Words,
    /// 64-bit items, one a cycle on the sender's lane and its partner's, to receivers in whole
    /// pairs of partners, which both take every item (`sim/src/chip/exchange.rs`, "Paired 64-bit
    /// items"): half the cycles of [`Width::Words`] on every receiver; the sender's partner
    /// neither sends nor receives meanwhile. Only with [`ReceiveControls::TimedStreams`] on the
    /// ipu21, for transfers of at least [`PAIRED_MIN_WORDS`] words, 8-byte aligned.
    Paired,
}

/// Whether `transfer` may go as paired 64-bit items ([`Width::Paired`]) with `controls`: the
/// ipu21 and timed streams, an even count of at least [`PAIRED_MIN_WORDS`], its source and
/// every destination 8-byte aligned, its receivers whole pairs of partners that do not include
/// the sender's partner, and no two of one receiver's controls in one cycle (the hardware's pair
/// rows fault where the format switches in the cycle of a selection; ipu-stack sends 32-bit
/// words then).
pub fn pairable(target: &Target, controls: ReceiveControls, transfer: &Transfer) -> bool {
    let fabric = target.fabric;
    if controls != ReceiveControls::TimedStreams
        || transfer.words < PAIRED_MIN_WORDS
        || !transfer.words.is_multiple_of(2)
        || !transfer.source.is_multiple_of(8)
        || target
            .paired_latency(transfer.sender, transfer.sender ^ 1)
            .is_none()
    {
        return false;
    }
    let tiles: std::collections::HashSet<u32> =
        transfer.deliveries.iter().map(|d| d.tile).collect();
    let partner = fabric.partner(transfer.sender);
    transfer.deliveries.iter().all(|d| {
        d.destination.is_multiple_of(8)
            && tiles.contains(&fabric.partner(d.tile))
            && d.tile != partner
            && target.paired_latency(transfer.sender, d.tile).is_some()
    }) && transfer.deliveries.iter().all(|d| {
        let cycles =
            paired_control_cycles(target, transfer.sender, d.tile, transfer.words / 2, 1000);
        let mut sorted: Vec<u32> = cycles.iter().map(|c| c.0).collect();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    })
}

/// One paired receive control: at its cycle, the pointer, the format or the pair's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairedControl {
    /// The write pointer to the destination (at the first item's cycle).
    Pointer,
    /// The format: on (the route's direction, `Some`) or off.
    Format(Option<u32>),
    /// The pair's paired stream (only on the member that selects it,
    /// `tessera_isa::fabric::Fabric::paired_selector`): on the sender or to neutral.
    Source(bool),
}

/// The cycles of one paired delivery's controls, for its first item arriving at `arrival` and
/// `items` items, as ipu-stack's pair rows place them (hardware-ipu-stack.md §1.4): the format on
/// 2 cycles before the first item (`tessera_isa::fabric::FORMAT_LEAD`) and off `items` later,
/// the pointer at the first item, and on the selecting member the stream on
/// `paired_mux_lead` before the first item and to neutral `items` later.
pub fn paired_control_cycles(
    target: &Target,
    sender: u32,
    receiver: u32,
    items: u32,
    arrival: u32,
) -> Vec<(u32, PairedControl)> {
    let fabric = target.fabric;
    let format = fabric.format_lead();
    let direction = fabric.direction(sender, receiver);
    let mut controls = vec![
        (arrival - format, PairedControl::Format(direction)),
        (arrival, PairedControl::Pointer),
        (arrival + items - format, PairedControl::Format(None)),
    ];
    if fabric.paired_selector(sender, receiver) {
        let lead = fabric.paired_mux_lead(receiver);
        controls.push((arrival - lead, PairedControl::Source(true)));
        controls.push((arrival + items - lead, PairedControl::Source(false)));
    }
    controls
}

/// The intervals a paired transfer occupies if it starts at `start`, appended to `needs`: the
/// sender's supervisor for its items and the first as a control; its partner's supervisor
/// (no sends) and port (no receives) until [`PAIRED_PARTNER_TAIL`] after; every receiver's
/// port from its set-up to its last item and its controls' cycles.
fn requirements_into(
    target: &Target,
    transfer: &Transfer,
    start: u32,
    needs: &mut Vec<(u32, Resource, u32, u32)>,
) {
    let items = transfer.words / 2;
    let partner = target.fabric.partner(transfer.sender);
    needs.push((transfer.sender, Resource::Supervisor, start, start + items));
    needs.push((transfer.sender, Resource::Control, start, start + 1));
    needs.push((partner, Resource::Supervisor, start, start + items));
    needs.push((
        partner,
        Resource::Port,
        start,
        start + items + PAIRED_PARTNER_TAIL,
    ));
    for delivery in &transfer.deliveries {
        let latency = target
            .paired_latency(transfer.sender, delivery.tile)
            .unwrap_or_else(|| target.latency(transfer.sender, delivery.tile) + 1);
        let arrival = start + latency;
        for (at, _) in paired_control_cycles(target, transfer.sender, delivery.tile, items, arrival)
        {
            needs.push((delivery.tile, Resource::Control, at, at + 1));
        }
        needs.push((
            delivery.tile,
            Resource::Port,
            arrival - SETUP_BEFORE_ARRIVAL,
            arrival + items + target.csr_write_stall,
        ));
    }
}

/// The transfer as paired 64-bit items ([`pairable`]), unbroken, at the earliest start every
/// resource allows.
pub(super) fn paired(
    target: &Target,
    tiles: &[TileResources],
    transfer: &Transfer,
    scratch: &mut Scratch,
) -> Placement {
    unbroken_with(tiles, scratch, Width::Paired, transfer.words / 2, |needs| {
        requirements_into(target, transfer, ORIGIN, needs)
    })
}
