//! The rounds of [`Order::Rounds`](super::Order::Rounds): a phase's transfers coloured so that no tile sends twice or
//! receives twice in a round, greedily or, for the transfers to one receiver, as a bipartite
//! edge colouring with König's alternating paths.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::Colouring;
use crate::exchange::{ExchangePhase, Transfer};

/// The transfers of `phase` in rounds ([`Order::Rounds`](super::Order::Rounds)): the rounds in order
/// ([`round_of`]), each in the phase's order.
/// `paired` marks the transfers that hold their sender's partner ([`Colouring::Paired`]).
pub(super) fn rounds(phase: &ExchangePhase, colouring: Colouring, paired: &[bool]) -> Vec<usize> {
    let round_of = round_of(phase, colouring, paired);
    let mut order: Vec<usize> = (0..phase.transfers.len()).collect();
    order.sort_by_key(|&i| (round_of[i], i));
    order
}

/// Each transfer's round ([`Colouring`]). With [`Colouring::Bipartite`] the transfers to one
/// receiver are coloured first as the edges of a bipartite graph of senders and receivers, in
/// as many rounds as the busiest tile has such transfers ([`unicast_rounds`], König's
/// alternating paths). Then every other transfer, largest first (ties: the phase's order),
/// takes the first round in which neither its sender sends nor any of its receivers receives.
/// A transfer marked in `paired` also holds its sender's partner (logical tile ^ 1), as sending
/// and receiving, in its round.
pub(super) fn round_of(phase: &ExchangePhase, colouring: Colouring, paired: &[bool]) -> Vec<usize> {
    let coloured = |t: &Transfer| match colouring {
        Colouring::Greedy | Colouring::Paired => false,
        Colouring::Bipartite => t.deliveries.len() == 1,
    };
    let mut round_of = match colouring {
        Colouring::Greedy | Colouring::Paired => vec![0; phase.transfers.len()],
        Colouring::Bipartite => unicast_rounds(phase),
    };
    let mut multicasts: Vec<usize> = (0..phase.transfers.len())
        .filter(|&i| !coloured(&phase.transfers[i]))
        .collect();
    multicasts.sort_by_key(|&i| (Reverse(phase.transfers[i].words), i));
    // Per tile, a bit per round: sends and receives apart (a tile sends and receives at once).
    let mut sends: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let mut receives: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    let bit = |bits: &[u64], r: usize| bits.get(r / 64).is_some_and(|w| w >> (r % 64) & 1 != 0);
    let set = |bits: &mut Vec<u64>, r: usize| {
        if bits.len() <= r / 64 {
            bits.resize(r / 64 + 1, 0);
        }
        bits[r / 64] |= 1 << (r % 64);
    };
    for (index, transfer) in phase.transfers.iter().enumerate() {
        if coloured(transfer) {
            set(sends.entry(transfer.sender).or_default(), round_of[index]);
            set(
                receives.entry(transfer.deliveries[0].tile).or_default(),
                round_of[index],
            );
        }
    }
    for index in multicasts {
        let transfer = &phase.transfers[index];
        let partner = paired
            .get(index)
            .copied()
            .unwrap_or(false)
            .then_some(transfer.sender ^ 1);
        let busy = |r: usize| {
            sends.get(&transfer.sender).is_some_and(|b| bit(b, r))
                || transfer
                    .deliveries
                    .iter()
                    .map(|d| d.tile)
                    .chain(partner)
                    .any(|tile| receives.get(&tile).is_some_and(|b| bit(b, r)))
                || partner.is_some_and(|p| sends.get(&p).is_some_and(|b| bit(b, r)))
        };
        let round = (0..).find(|&r| !busy(r)).unwrap_or(0);
        round_of[index] = round;
        set(sends.entry(transfer.sender).or_default(), round);
        for tile in transfer.deliveries.iter().map(|d| d.tile).chain(partner) {
            set(receives.entry(tile).or_default(), round);
        }
        if let Some(p) = partner {
            set(sends.entry(p).or_default(), round);
        }
    }
    round_of
}

/// Rounds of the transfers with one receiver (the others' entries are 0): a proper edge
/// colouring of the bipartite graph of senders and receivers with Δ colours, Δ the most such
/// transfers of one sender or one receiver. Each edge (s, r) in the phase's order takes a
/// colour a free at s; if a is taken at r, a colour b free at r is, and the path from r that
/// alternates a and b is swapped first, which frees a at r (the path cannot reach s in a
/// bipartite graph).
fn unicast_rounds(phase: &ExchangePhase) -> Vec<usize> {
    let n = phase.transfers.len();
    let mut round = vec![0usize; n];
    let unicast = |t: &Transfer| t.deliveries.len() == 1;
    let mut degree: BTreeMap<(bool, u32), usize> = BTreeMap::new();
    for t in phase.transfers.iter().filter(|t| unicast(t)) {
        *degree.entry((false, t.sender)).or_default() += 1;
        *degree.entry((true, t.deliveries[0].tile)).or_default() += 1;
    }
    let colours = degree.values().copied().max().unwrap_or(0);
    if colours == 0 {
        return round;
    }
    // Per vertex (receiver side?, tile): the edge of each colour.
    let mut at: BTreeMap<(bool, u32), Vec<Option<usize>>> = BTreeMap::new();
    let ends = |i: usize| {
        let t = &phase.transfers[i];
        ((false, t.sender), (true, t.deliveries[0].tile))
    };
    for i in (0..n).filter(|&i| unicast(&phase.transfers[i])) {
        let (s, r) = ends(i);
        let free = |v: &(bool, u32), at: &BTreeMap<(bool, u32), Vec<Option<usize>>>| {
            let slots = at.get(v);
            (0..colours).find(|&c| slots.is_none_or(|e| e[c].is_none()))
        };
        let (Some(a), Some(b)) = (free(&s, &at), free(&r, &at)) else {
            continue;
        };
        let taken_at_r = at.get(&r).is_some_and(|e| e[a].is_some());
        if taken_at_r {
            // The path from r alternating a, b, ...: collect, then swap its colours.
            let mut path = Vec::new();
            let (mut v, mut c) = (r, a);
            while let Some(e) = at.get(&v).and_then(|slots| slots[c]) {
                path.push((e, c));
                let (es, er) = ends(e);
                v = if es == v { er } else { es };
                c = if c == a { b } else { a };
            }
            for &(e, c) in &path {
                let (es, er) = ends(e);
                for v in [es, er] {
                    if let Some(slots) = at.get_mut(&v) {
                        if slots[c] == Some(e) {
                            slots[c] = None;
                        }
                    }
                }
            }
            for &(e, c) in &path {
                let swapped = if c == a { b } else { a };
                let (es, er) = ends(e);
                for v in [es, er] {
                    at.entry(v).or_insert_with(|| vec![None; colours])[swapped] = Some(e);
                }
                round[e] = swapped;
            }
        }
        for v in [s, r] {
            at.entry(v).or_insert_with(|| vec![None; colours])[a] = Some(i);
        }
        round[i] = a;
    }
    round
}
