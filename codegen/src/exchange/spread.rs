//! Multicasts sent as unicasts where that schedules shorter: a multicast must find every
//! receiver's port free at once, at arrivals staggered by the routes' latencies (19 to 165
//! cycles on the ipu21), where unicasts fill each receiver's gaps one by one. Splitting costs
//! the sender the multicast's words once more for every receiver but one, so only senders that
//! stay within the phase's busiest receiver's words split theirs; and a phase keeps its
//! unicasts only where its schedule is shorter with them ([`spread_multicasts`]).
//!
//! Measured on one So400m/14 layer with the head, batch 1 (`tessera estimate`): the head's
//! all-gather of its output projection's sums (36 tiles, 16 words each to the 35 others)
//! 1,071 → 710 cycles, its scores' operands 1,702 → 1,586; every multicast of the layer split
//! lengthened the queries' and keys' broadcast 10,431 → 13,449.

use rayon::prelude::*;

use super::schedule::schedule_for_emission;
use super::{ExchangeError, ExchangePhase};
use crate::target::Target;
use crate::tile::{resolve_transfers, Program, SymbolicTransfer};
use std::collections::HashMap;

/// Largest words of a multicast [`Split::Small`] splits.
pub const SMALL_MULTICAST_WORDS: u32 = 16;

/// Which multicasts a variant of a phase splits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Every multicast whose sender has the time.
    All,
    /// Those of at most [`SMALL_MULTICAST_WORDS`] words.
    Small,
}

/// Replaces each phase of `program` by the variant with multicasts split into unicasts
/// ([`Split`]) whose schedule for emission is shortest, the phase as it is on a tie. Phases are
/// weighed in parallel, each independently, so the result is the same for any thread count.
pub fn spread_multicasts(target: &Target, program: &mut Program) -> Result<(), ExchangeError> {
    let placeholder: Vec<Vec<u32>> = program
        .tiles
        .iter()
        .map(|t| vec![target.sram_base; t.buffers.len()])
        .collect();
    let chosen: Vec<Option<Vec<SymbolicTransfer>>> = program
        .phases
        .par_iter()
        .map(
            |list| -> Result<Option<Vec<SymbolicTransfer>>, ExchangeError> {
                let mut best: Option<(u32, Vec<SymbolicTransfer>)> = None;
                for split in [Split::All, Split::Small] {
                    let Some(variant) = unicasts(list, split) else {
                        continue;
                    };
                    if best.as_ref().is_some_and(|(_, b)| *b == variant) {
                        continue;
                    }
                    let length = |l: &[SymbolicTransfer]| -> Result<u32, ExchangeError> {
                        let phase = ExchangePhase {
                            transfers: resolve_transfers(l, &placeholder),
                        };
                        Ok(schedule_for_emission(target, &phase)?.length)
                    };
                    let base = match &best {
                        Some((l, _)) => *l,
                        None => length(list)?,
                    };
                    let with = length(&variant)?;
                    if with < base {
                        best = Some((with, variant));
                    } else if best.is_none() {
                        best = Some((base, list.clone()));
                    }
                }
                Ok(best.map(|(_, l)| l).filter(|l| l != list))
            },
        )
        .collect::<Result<_, _>>()?;
    for (phase, variant) in chosen.into_iter().enumerate() {
        if let Some(list) = variant {
            program.phases[phase] = list;
        }
    }
    Ok(())
}

/// `list` with the multicasts `split` picks sent as unicasts, each to one of its receivers in
/// order, where their senders stay within the busiest receiver's words; `None` when none is.
fn unicasts(list: &[SymbolicTransfer], split: Split) -> Option<Vec<SymbolicTransfer>> {
    let mut received: HashMap<u32, u64> = HashMap::new();
    let mut sent: HashMap<u32, u64> = HashMap::new();
    for t in list {
        *sent.entry(t.sender).or_default() += u64::from(t.words);
        for d in &t.deliveries {
            *received.entry(d.0).or_default() += u64::from(t.words);
        }
    }
    let busiest = received.values().copied().max().unwrap_or(0);
    let mut out = Vec::with_capacity(list.len());
    let mut any = false;
    for t in list {
        let picked = match split {
            Split::All => true,
            Split::Small => t.words <= SMALL_MULTICAST_WORDS,
        };
        let extra = u64::from(t.words) * (t.deliveries.len() as u64).saturating_sub(1);
        let load = sent.entry(t.sender).or_default();
        if picked && t.deliveries.len() > 1 && *load + extra <= busiest {
            *load += extra;
            any = true;
            out.extend(t.deliveries.iter().map(|&d| SymbolicTransfer {
                deliveries: vec![d],
                ..t.clone()
            }));
        } else {
            out.push(t.clone());
        }
    }
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::example::buffer;
    use crate::tile::{BufferCategory, BufferId};
    use std::collections::BTreeSet;

    fn ipu21() -> Target {
        Target::test_ipu21()
    }

    /// A program of one phase: each of `senders` (tiles 0, 1, …) multicasts `words` words from
    /// its buffer 0 to every other sender's buffer 1, at the sender's slot.
    fn all_gather(senders: u32, words: u32) -> Program {
        let target = ipu21();
        let mut program = Program::new(target.tiles);
        let tiles: Vec<u32> = (0..senders).collect();
        for &t in &tiles {
            let category = || BufferCategory::Tensor("x".into());
            program.tiles[t as usize].add_buffer(buffer("x", 4 * words, category(), (0, 1)));
            program.tiles[t as usize].add_buffer(buffer(
                "all",
                4 * words * senders,
                category(),
                (0, 1),
            ));
        }
        let transfers = tiles
            .iter()
            .enumerate()
            .map(|(s, &sender)| SymbolicTransfer {
                sender,
                source: (BufferId(0), 0),
                words,
                deliveries: tiles
                    .iter()
                    .filter(|&&t| t != sender)
                    .map(|&t| (t, BufferId(1), 4 * words * s as u32))
                    .collect(),
                label: format!("x{s}"),
            })
            .collect();
        program.exchange_step("all-gather", transfers);
        program
    }

    /// Every (sender, source, receiver, destination, words) a phase moves, whatever the split.
    fn moved(list: &[SymbolicTransfer]) -> BTreeSet<(u32, u32, u32, u32, u32)> {
        list.iter()
            .flat_map(|t| {
                t.deliveries
                    .iter()
                    .map(move |d| (t.sender, t.source.1, d.0, d.2, t.words))
            })
            .collect()
    }

    fn length(target: &Target, program: &Program) -> u32 {
        let placeholder: Vec<Vec<u32>> = program
            .tiles
            .iter()
            .map(|t| vec![target.sram_base; t.buffers.len()])
            .collect();
        let phase = ExchangePhase {
            transfers: program.resolve_phase(0, &placeholder),
        };
        schedule_for_emission(target, &phase).unwrap().length
    }

    /// 36 tiles' 16 words each to the 35 others (the pooling head's all-gather): as unicasts
    /// the phase is shorter, moves the same words to the same places, and its senders send no
    /// more than its busiest receiver receives.
    #[test]
    fn a_small_all_gather_goes_as_unicasts_where_that_is_shorter() {
        let target = ipu21();
        let mut program = all_gather(36, 16);
        let before = program.phases[0].clone();
        let was = length(&target, &program);
        spread_multicasts(&target, &mut program).unwrap();
        let after = &program.phases[0];
        let now = length(&target, &program);
        assert!(
            after.iter().all(|t| t.deliveries.len() == 1),
            "{} transfers, {now} cycles against {was}",
            after.len()
        );
        assert_eq!(moved(&before), moved(after));
        assert!(now < was, "{now} against {was}");
        let mut sent: HashMap<u32, u32> = HashMap::new();
        for t in after {
            *sent.entry(t.sender).or_default() += t.words;
        }
        assert!(sent.values().all(|&w| w <= 35 * 16));
    }

    /// A phase whose multicasts would overload their senders stays as it is: one tile's 64
    /// words to 8 others, where each receiver takes 64 words in all.
    #[test]
    fn a_sender_past_the_busiest_receiver_keeps_its_multicast() {
        let target = ipu21();
        let mut program = all_gather(9, 64);
        program.phases[0].truncate(1);
        let before = program.phases[0].clone();
        spread_multicasts(&target, &mut program).unwrap();
        assert_eq!(program.phases[0], before);
    }
}
