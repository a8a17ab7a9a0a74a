//! The exchange scheduler's tests: schedules against a round-by-round reference, the
//! checker on emitted code, list scheduling, pausing and the timed-stream projection.
use super::super::{check::check, emit::emit, Delivery, Transfer};
use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The earliest common start computed round by round (every interval's earliest slot from
/// the same start, the start moved to the latest of them), the scheduler's first form: a
/// reference for the one-interval-at-a-time search.
fn reference(target: &Target, phase: &ExchangePhase) -> PhaseSchedule {
    let mut tiles = vec![TileResources::default(); target.tiles as usize];
    let (mut starts, mut length, mut needs) = (Vec::new(), 0, Vec::new());
    for transfer in &phase.transfers {
        needs.clear();
        requirements_into(
            target,
            ReceiveControls::SupervisorPuts,
            transfer,
            ORIGIN,
            &mut needs,
        );
        let mut start = 0;
        loop {
            let mut latest = start;
            for &(tile, resource, from, to) in &needs {
                let timeline = match resource {
                    Resource::Supervisor => &tiles[tile as usize].supervisor,
                    Resource::Port => &tiles[tile as usize].port,
                    Resource::Control => &tiles[tile as usize].control,
                };
                let offset = i64::from(from) - i64::from(ORIGIN);
                let at = (i64::from(start) + offset).max(0) as u32;
                let slot = timeline.earliest(at, to - from);
                latest = latest.max((i64::from(slot) - offset) as u32);
            }
            if latest == start {
                break;
            }
            start = latest;
        }
        for &(tile, resource, from, to) in &needs {
            let (a, b) = (start + from - ORIGIN, start + to - ORIGIN);
            match resource {
                Resource::Supervisor => tiles[tile as usize].supervisor.insert(a, b),
                Resource::Port => tiles[tile as usize].port.insert(a, b),
                Resource::Control => tiles[tile as usize].control.insert(a, b),
            }
            length = length.max(b);
        }
        starts.push(start);
    }
    let runs = phase
        .transfers
        .iter()
        .zip(&starts)
        .map(|(t, &s)| vec![(s, t.words)])
        .collect();
    PhaseSchedule {
        widths: vec![Width::Words; starts.len()],
        starts,
        runs,
        length,
        controls: ReceiveControls::SupervisorPuts,
    }
}

fn ipu21() -> Target {
    Target::test_ipu21()
}

/// A timed receive's three controls fall in three cycles, whatever its window and lead; the
/// pointer comes by the first word, the mux events `lead` before the words they bound.
#[test]
fn a_receives_timed_controls_never_share_a_cycle() {
    for lead in [0, 1, 6, 7, 52, 96] {
        for window in MIN_WINDOW..200 {
            let arrival = 300;
            let [pointer, on, off] = timed_control_cycles(arrival, window, lead);
            assert!(
                pointer != on && pointer != off && on != off,
                "{lead} {window}"
            );
            assert!(pointer <= arrival && pointer + SETUP_BEFORE_ARRIVAL > arrival);
            assert_eq!((on + lead, off + lead), (arrival, arrival + window));
            // Where the mux leads, the pointer is set at the first word, as the SDK's rows do.
            if lead >= 52 && window != lead {
                assert_eq!(pointer, arrival, "{lead} {window}");
            }
        }
    }
}

fn phases() -> impl Strategy<Value = ExchangePhase> {
    let transfer = (
        0u32..16,
        1u32..200,
        proptest::collection::vec(0u32..16, 1..6),
    );
    proptest::collection::vec(transfer, 1..60).prop_map(|list| {
        let mut transfers = Vec::new();
        for (i, (sender, words, receivers)) in list.into_iter().enumerate() {
            let mut tiles: Vec<u32> = receivers.into_iter().filter(|&t| t != sender).collect();
            tiles.sort_unstable();
            tiles.dedup();
            if tiles.is_empty() {
                continue;
            }
            let at = 0x90000 + 0x200 * i as u32;
            transfers.push(Transfer {
                sender,
                source: 0x80000,
                words,
                deliveries: tiles
                    .into_iter()
                    .map(|tile| Delivery {
                        tile,
                        destination: at,
                    })
                    .collect(),
                label: format!("t{i}"),
            });
        }
        ExchangePhase { transfers }
    })
}

/// Every one of 16 tiles sends a row of `words` to the next group of four tiles (a product's
/// operand broadcast from rows spread over the chip), so each tile receives its group's four.
fn rows_to_the_next_group(words: u32) -> ExchangePhase {
    let transfers = (0..16u32)
        .map(|r| Transfer {
            sender: r,
            source: 0x80000,
            words,
            deliveries: (0..4)
                .map(|i| Delivery {
                    tile: ((r / 4 + 1) % 4) * 4 + i,
                    destination: 0x90000 + 0x400 * (r % 4),
                })
                .collect(),
            label: format!("row {r}"),
        })
        .collect();
    ExchangePhase { transfers }
}

/// Every tile sends one long row to the next group of four tiles and receives its own
/// group's four rows (a product's operand broadcast from rows spread over the chip): a
/// sender busy receiving pauses for its set-ups instead of holding its receivers back, so
/// the phase takes about one group's rows, not a chain of groups.
#[test]
fn senders_that_also_receive_pause_instead_of_serialising_the_groups() {
    let target = Target::test_small();
    let phase = rows_to_the_next_group(200);
    let whole = schedule_with(&target, &phase, false).unwrap();
    let paused = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &paused).unwrap();
    check(&target, &phase, &code).unwrap();
    assert!(paused.runs.iter().any(|r| r.len() > 1), "nothing paused");
    // 1,512 cycles against 1,748 unbroken: each pause costs the row its sender's set-up
    // (14 cycles per put), and the last group still waits for its senders' first rows.
    assert!(
        paused.length * 10 < whole.length * 9,
        "paused {} against {} unbroken",
        paused.length,
        whole.length
    );
}

/// The same rows with receivers driving their mux and pointer as timed streams (the
/// hardware's protocol): no tile's sends wait for its own receive set-ups, so the phase is
/// about one tile's receives (four rows of 200 words and their windows), well under the
/// schedule with supervisor `put`s.
#[test]
fn timed_receive_streams_let_a_tile_send_while_it_receives() {
    let target = Target::test_small();
    let phase = rows_to_the_next_group(200);
    let puts = schedule(&target, &phase).unwrap();
    let streams = schedule_projected(&target, &phase, ReceiveControls::TimedStreams).unwrap();
    assert_eq!(
        schedule_projected(&target, &phase, ReceiveControls::SupervisorPuts).unwrap(),
        puts
    );
    assert_projection_is_feasible(&target, &phase, &streams);
    check(&target, &phase, &emit(&target, &phase, &streams).unwrap()).unwrap();
    let one_tile = 4 * (200 + SETUP_BEFORE_ARRIVAL + target.csr_write_stall);
    assert!(
        streams.length < one_tile + 200 && streams.length * 4 < puts.length * 3,
        "streams {} against {} with puts (one tile's receives {one_tile})",
        streams.length,
        puts.length
    );
}

/// With timed receive streams a tile's receives follow each other a cycle or two apart: 36
/// senders' 8 words each to one tile on the ipu21 (a sum's parts gathered on one tile) take
/// little more than the words and the longest route, where the supervisor's `put`s spend 8
/// cycles of set-up and a 6-cycle stall on each; the code passes the checker.
#[test]
fn timed_receives_follow_each_other_a_cycle_apart() {
    let target = ipu21();
    let transfers: Vec<Transfer> = (0..36u32)
        .map(|s| Transfer {
            sender: 40 * s + 3,
            source: 0x80000,
            words: 8,
            deliveries: vec![Delivery {
                tile: 1000,
                destination: 0x90000 + 32 * s,
            }],
            label: format!("part{s}"),
        })
        .collect();
    let phase = ExchangePhase { transfers };
    let streams = schedule_for_emission(&target, &phase).unwrap();
    assert_eq!(streams.controls, ReceiveControls::TimedStreams);
    assert_projection_is_feasible(&target, &phase, &streams);
    check(&target, &phase, &emit(&target, &phase, &streams).unwrap()).unwrap();
    let puts = schedule_projected(&target, &phase, ReceiveControls::SupervisorPuts).unwrap();
    let words = 36 * 8;
    let gaps = 36 * 3;
    assert!(
        streams.length <= words + gaps + target.max_latency() + MIN_WINDOW
            && streams.length + 36 * 10 <= puts.length,
        "streams {} against {} with puts",
        streams.length,
        puts.length
    );
}

/// Rows multicast to whole pairs of partners on the ipu21 go as paired 64-bit items: every
/// receiver takes them in half the cycles, so the phase is shorter than with 32-bit words
/// alone; the code passes the checker; and code whose format or lane is wrong fails it.
#[test]
fn rows_to_pairs_go_as_paired_items_in_half_the_cycles() {
    let target = ipu21();
    // Eight senders, each a row of 512 words to the same four pairs (tiles 200..208).
    let transfers: Vec<Transfer> = (0..8u32)
        .map(|r| Transfer {
            sender: 400 + 40 * r,
            source: 0x80000,
            words: 512,
            deliveries: (200..208)
                .map(|tile| Delivery {
                    tile,
                    destination: 0x90000 + 2048 * r,
                })
                .collect(),
            label: format!("row{r}"),
        })
        .collect();
    let phase = ExchangePhase { transfers };
    let paired = schedule_for_emission(&target, &phase).unwrap();
    assert!(
        paired.widths.iter().all(|&w| w == Width::Paired),
        "{:?}",
        paired.widths
    );
    assert_projection_is_feasible(&target, &phase, &paired);
    let code = emit(&target, &phase, &paired).unwrap();
    check(&target, &phase, &code).unwrap();
    let words_only = Target {
        paired_exchange: false,
        ..ipu21()
    };
    let words = schedule_for_emission(&words_only, &phase).unwrap();
    assert!(words.widths.iter().all(|&w| w == Width::Words));
    // Each receiver takes 8 × 512 words: 4,096 cycles of words, 2,048 of items.
    assert!(
        words.length > 4096 && paired.length < 2600,
        "{} against {}",
        paired.length,
        words.length
    );
    // A format of the wrong direction, and a send on the borrowed lane, fail the check.
    let mut bad = code.clone();
    let formats: Vec<(usize, usize)> = bad
        .iter()
        .enumerate()
        .flat_map(|(t, c)| {
            c.instructions
                .iter()
                .enumerate()
                .filter(|(_, i)| {
                    i.opcode == tessera_isa::inst::Opcode::DelayPic
                        && i.imm(1) == 1
                        && i.imm(2) != 0
                })
                .map(move |(k, _)| (t, k))
        })
        .collect();
    let (t, k) = formats[0];
    let inst = bad[t].instructions[k];
    bad[t].instructions[k] = tessera_isa::inst::Inst::new(
        tessera_isa::inst::Opcode::DelayPic,
        &[inst.imm(0), 1, 3 - inst.imm(2)],
    );
    let err = check(&target, &phase, &bad).unwrap_err();
    assert!(err.to_string().contains("which come in direction"), "{err}");
    let partner = target.fabric.partner(400) as usize;
    let mut bad = code;
    bad[partner].instructions = vec![
        tessera_isa::inst::Inst::new(tessera_isa::inst::Opcode::Delay, &[paired.starts[0]]),
        tessera_isa::inst::Inst::new(tessera_isa::inst::Opcode::Send, &[0, 0x80000, 1]),
    ];
    let err = check(&target, &phase, &bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("a 64-bit item on the lane of tile"),
        "{err}"
    );
}

/// A projected schedule keeps the rules both protocols share: every transfer's runs carry
/// its words; a sender's runs never overlap; a receiver's windows (set-up to the end of
/// its last word) never overlap.
fn assert_projection_is_feasible(target: &Target, phase: &ExchangePhase, s: &PhaseSchedule) {
    let mut sends: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    let mut windows: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    for (i, (transfer, runs)) in phase.transfers.iter().zip(&s.runs).enumerate() {
        let paired = s.widths[i] == Width::Paired;
        let units = if paired {
            transfer.words / 2
        } else {
            transfer.words
        };
        assert_eq!(runs.iter().map(|r| r.1).sum::<u32>(), units);
        let (first, last) = (runs[0].0, runs.last().map_or(0, |&(c, n)| c + n));
        sends
            .entry(transfer.sender)
            .or_default()
            .extend(runs.iter().map(|&(c, n)| (c, c + n)));
        if paired {
            // The borrowed lane: the partner sends nothing meanwhile.
            sends
                .entry(target.fabric.partner(transfer.sender))
                .or_default()
                .extend(runs.iter().map(|&(c, n)| (c, c + n)));
        }
        for d in &transfer.deliveries {
            let latency = match paired {
                true => target.paired_latency(transfer.sender, d.tile).unwrap(),
                false => target.latency(transfer.sender, d.tile),
            };
            let arrival = first + latency;
            let end = arrival + (last - first).max(MIN_WINDOW);
            // A timed stream of words holds the port from its pointer's event; the others
            // from the set-up before the first word.
            let from = match (s.controls, paired) {
                (ReceiveControls::TimedStreams, false) => {
                    let lead = target.mux_lead(d.tile);
                    timed_control_cycles(arrival, end - arrival, lead)[0].min(arrival)
                }
                (ReceiveControls::TimedStreams, true) | (ReceiveControls::SupervisorPuts, _) => {
                    arrival - SETUP_BEFORE_ARRIVAL
                }
            };
            windows.entry(d.tile).or_default().push((from, end));
            assert!(end <= s.length, "a window ends after the phase");
        }
    }
    for spans in sends.values_mut().chain(windows.values_mut()) {
        spans.sort_unstable();
        assert!(
            spans.windows(2).all(|w| w[0].1 <= w[1].0),
            "overlapping spans {spans:?}"
        );
    }
}

/// Two families of multicasts over a 4 × 4 block of tiles, as the scores' queries and keys
/// are: each tile sends a long row to its column and a short row to its row, so every
/// tile receives four of each. Any column's rows may go together and so may any row's,
/// but a column's and a row's rows share a tile. Placed in the phase's order (a column's
/// row, then a row's, in turn), the multicasts wait for all their receivers at once; list
/// scheduling takes whichever can start soonest.
#[test]
fn list_scheduling_packs_crossing_multicasts_tighter_than_the_given_order() {
    let target = Target::test_small();
    let mut transfers = Vec::new();
    for r in 0..16u32 {
        let (row, column) = (r / 4, r % 4);
        let others = |f: &dyn Fn(u32) -> u32| -> Vec<Delivery> {
            (0..4)
                .map(f)
                .filter(|&t| t != r)
                .map(|tile| Delivery {
                    tile,
                    destination: 0x90000 + 0x800 * (r % 8),
                })
                .collect()
        };
        transfers.push(Transfer {
            sender: r,
            source: 0x80000,
            words: 120,
            deliveries: others(&|i| i * 4 + column),
            label: format!("column {column} from {r}"),
        });
        transfers.push(Transfer {
            sender: r,
            source: 0x80000,
            words: 40,
            deliveries: others(&|i| row * 4 + i),
            label: format!("row {row} from {r}"),
        });
    }
    let phase = ExchangePhase { transfers };
    let given = schedule_with(&target, &phase, true).unwrap();
    let listed = schedule_ordered(
        &target,
        &phase,
        true,
        Order::List {
            window: LIST_WINDOW,
        },
    )
    .unwrap();
    for s in [&given, &listed] {
        let code = emit(&target, &phase, s).unwrap();
        check(&target, &phase, &code).unwrap();
    }
    assert!(
        listed.length < given.length,
        "listed {} against {} in the given order",
        listed.length,
        given.length
    );
    assert_eq!(schedule(&target, &phase).unwrap(), listed);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// List scheduling at any window places every transfer once, and its code passes the
    /// exchange checker; [`schedule`] is never longer than the given order.
    #[test]
    fn list_schedules_check_and_the_kept_one_is_never_longer(
        phase in phases(),
        window in 1usize..10,
    ) {
        let target = Target::test_small();
        let listed = schedule_ordered(&target, &phase, true, Order::List { window }).unwrap();
        prop_assert_eq!(listed.starts.len(), phase.transfers.len());
        let whole = listed
            .runs
            .iter()
            .zip(&phase.transfers)
            .all(|(runs, t)| runs.iter().map(|r| r.1).sum::<u32>() == t.words);
        prop_assert!(whole, "a transfer's runs do not add up to its words");
        let code = emit(&target, &phase, &listed).unwrap();
        prop_assert!(check(&target, &phase, &code).is_ok(), "{:?}", check(&target, &phase, &code));
        let given = schedule_with(&target, &phase, true).unwrap();
        prop_assert!(schedule(&target, &phase).unwrap().length <= given.length);
    }

    /// Rounds hold every transfer once, no tile sends twice or receives twice in a round (a
    /// paired transfer's sender's partner counting as both, with [`Colouring::Paired`]), and
    /// a schedule placed in rounds passes the exchange checker.
    #[test]
    fn rounds_share_no_tile_and_their_schedules_check(phase in phases(), which in 0u32..3) {
        let target = Target::test_small();
        let (colouring, bipartite) = match which {
            0 => (Colouring::Greedy, false),
            1 => (Colouring::Bipartite, true),
            _ => (Colouring::Paired, false),
        };
        // Every other transfer holds its sender's partner (where the partner does not receive
        // it, as for a pairable one).
        let paired: Vec<bool> = phase
            .transfers
            .iter()
            .enumerate()
            .map(|(i, t)| {
                colouring == Colouring::Paired
                    && i % 2 == 0
                    && !t.deliveries.iter().any(|d| d.tile == t.sender ^ 1)
            })
            .collect();
        let round_of = round_of(&phase, colouring, &paired);
        let mut order = rounds(&phase, colouring, &paired);
        prop_assert!(order.windows(2).all(|w| round_of[w[0]] <= round_of[w[1]]));
        order.sort_unstable();
        prop_assert_eq!(order, (0..phase.transfers.len()).collect::<Vec<_>>());
        let mut seen = std::collections::BTreeSet::new();
        for (i, t) in phase.transfers.iter().enumerate() {
            prop_assert!(seen.insert((round_of[i], "send", t.sender)), "tile {} sends twice in a round", t.sender);
            for d in &t.deliveries {
                prop_assert!(seen.insert((round_of[i], "receive", d.tile)), "tile {} receives twice in a round", d.tile);
            }
            if paired[i] {
                let p = t.sender ^ 1;
                prop_assert!(seen.insert((round_of[i], "send", p)), "held partner {} sends in its round", p);
                prop_assert!(seen.insert((round_of[i], "receive", p)), "held partner {} receives in its round", p);
            }
        }
        if bipartite {
            // As many rounds as the busiest tile's transfers to one receiver.
            let mut degree = std::collections::BTreeMap::new();
            for t in phase.transfers.iter().filter(|t| t.deliveries.len() == 1) {
                *degree.entry((0, t.sender)).or_insert(0usize) += 1;
                *degree.entry((1, t.deliveries[0].tile)).or_insert(0usize) += 1;
            }
            let most = degree.values().copied().max().unwrap_or(0);
            let unicast_rounds = phase
                .transfers
                .iter()
                .enumerate()
                .filter(|(_, t)| t.deliveries.len() == 1)
                .map(|(i, _)| round_of[i] + 1)
                .max()
                .unwrap_or(0);
            prop_assert!(unicast_rounds <= most, "{} rounds for degree {}", unicast_rounds, most);
        }
        let placed = schedule_ordered(&target, &phase, true, Order::Rounds(colouring)).unwrap();
        let code = emit(&target, &phase, &placed).unwrap();
        prop_assert!(check(&target, &phase, &code).is_ok(), "{:?}", check(&target, &phase, &code));
        let given = schedule_with(&target, &phase, true).unwrap();
        prop_assert!(list_improved(&target, &phase, &given).unwrap().length <= placed.length.min(given.length));
    }

    /// A schedule for timed receive streams keeps every rule both protocols share, leaves no
    /// control where no instruction can carry it (so it is what [`schedule_for_emission`]
    /// keeps), and its code (timed controls and `sendpic`s) passes the independent checker.
    #[test]
    fn timed_stream_schedules_emit_and_pass_the_checker(phase in phases()) {
        let target = Target::test_small();
        let streams =
            schedule_projected(&target, &phase, ReceiveControls::TimedStreams).unwrap();
        assert_projection_is_feasible(&target, &phase, &streams);
        let code = emit(&target, &phase, &streams);
        prop_assert!(code.is_ok(), "{:?}", code.err());
        let checked = check(&target, &phase, &code.unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
        let chosen = schedule_for_emission(&target, &phase).unwrap();
        prop_assert_eq!(chosen.controls, ReceiveControls::TimedStreams);
        let listed = list_improved(&target, &phase, &chosen).unwrap();
        let checked = check(&target, &phase, &emit(&target, &phase, &listed).unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// On the ipu21's fabric, where the route timing spans 19 to 165 cycles and a receiver's
    /// mux selection leads its words by 52 + 2·row (so it may come before the sender's first
    /// word), timed-stream schedules of the same phases spread over the chip are emittable
    /// (chosen by [`schedule_for_emission`]) and pass the checker, list-improved too.
    #[test]
    fn timed_stream_schedules_on_the_ipu21_emit_and_pass_the_checker(
        phase in phases(),
        spread in 1u32..92,
    ) {
        let target = ipu21();
        let tile = |t: u32| t * spread + (t * 7) % spread;
        let phase = ExchangePhase {
            transfers: phase
                .transfers
                .into_iter()
                .map(|t| Transfer {
                    sender: tile(t.sender),
                    deliveries: t
                        .deliveries
                        .iter()
                        .map(|d| Delivery { tile: tile(d.tile), ..*d })
                        .collect(),
                    ..t
                })
                .collect(),
        };
        let chosen = schedule_for_emission(&target, &phase).unwrap();
        prop_assert_eq!(chosen.controls, ReceiveControls::TimedStreams);
        assert_projection_is_feasible(&target, &phase, &chosen);
        let checked = check(&target, &phase, &emit(&target, &phase, &chosen).unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
        let listed = list_improved(&target, &phase, &chosen).unwrap();
        let checked = check(&target, &phase, &emit(&target, &phase, &listed).unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// Phases whose receivers come in whole pairs of partners, with long even rows, on the
    /// ipu21: the schedule mixes paired items and words, keeps the shared rules, and its code
    /// passes the checker.
    #[test]
    fn paired_schedules_on_the_ipu21_emit_and_pass_the_checker(
        phase in phases(),
        spread in 1u32..46,
        long in 0u32..4,
    ) {
        let target = ipu21();
        let tile = |t: u32| 2 * (t * spread + (t * 7) % spread);
        let phase = ExchangePhase {
            transfers: phase
                .transfers
                .into_iter()
                .map(|t| Transfer {
                    sender: tile(t.sender) + 1,
                    words: if t.words % 4 < long { 128 + 2 * t.words } else { t.words },
                    deliveries: t
                        .deliveries
                        .iter()
                        .flat_map(|d| {
                            [
                                Delivery { tile: tile(d.tile), ..*d },
                                Delivery { tile: tile(d.tile) + 1, ..*d },
                            ]
                        })
                        .collect(),
                    ..t
                })
                .collect(),
        };
        let chosen = schedule_for_emission(&target, &phase).unwrap();
        assert_projection_is_feasible(&target, &phase, &chosen);
        let checked = check(&target, &phase, &emit(&target, &phase, &chosen).unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
        let listed = list_improved(&target, &phase, &chosen).unwrap();
        assert_projection_is_feasible(&target, &phase, &listed);
        let checked = check(&target, &phase, &emit(&target, &phase, &listed).unwrap());
        prop_assert!(checked.is_ok(), "{:?}", checked);
    }

    /// The schedule is the round-by-round one, and its code passes the exchange checker.
    #[test]
    fn the_schedule_is_the_reference_one_and_checks(phase in phases()) {
        let target = Target::test_small();
        let got = schedule_with(&target, &phase, false).unwrap();
        prop_assert_eq!(&got, &reference(&target, &phase));
        let code = emit(&target, &phase, &got).unwrap();
        prop_assert!(check(&target, &phase, &code).is_ok());
        // With pausing, the code the schedule gives passes the checker too.
        let paused = schedule(&target, &phase).unwrap();
        let code = emit(&target, &phase, &paused).unwrap();
        prop_assert!(check(&target, &phase, &code).is_ok(), "{:?}", check(&target, &phase, &code));
    }
}
