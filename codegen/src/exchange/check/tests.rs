//! The exchange checker's tests: scheduled code passes, and every kind of wrong code fails.
use super::super::schedule::schedule;
use super::super::{emit::emit, Delivery, Transfer};
use super::*;

fn transfer(sender: u32, source: u32, words: u32, receivers: &[(u32, u32)]) -> Transfer {
    Transfer {
        sender,
        source,
        words,
        deliveries: receivers
            .iter()
            .map(|&(tile, destination)| Delivery { tile, destination })
            .collect(),
        label: format!("t{sender}"),
    }
}

fn phase() -> ExchangePhase {
    ExchangePhase {
        transfers: vec![
            transfer(
                0,
                0x80000,
                100,
                &[(1, 0x90000), (5, 0x90000), (15, 0x90100)],
            ),
            transfer(1, 0x80000, 3, &[(0, 0x91000)]),
            transfer(2, 0x80000, 70, &[(0, 0x92000)]),
            transfer(0, 0x80400, 9, &[(1, 0x93000)]),
            transfer(3, 0x80000, 20, &[(4, 0x94000), (0, 0x95000)]),
        ],
    }
}

#[test]
fn scheduled_code_passes_the_check() {
    let target = Target::test_small();
    let phase = phase();
    let schedule = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &schedule).unwrap();
    check(&target, &phase, &code).unwrap();
    assert!(schedule.length > 100);
}

/// On the ipu21 fabric the emitted send controls name the directions of their receivers,
/// and a control missing one is caught.
#[test]
fn send_controls_name_their_receivers_directions() {
    use tessera_isa::fabric::{Fabric, DIRECTION_1, DIRECTION_2};
    let target = Target {
        tiles: tessera_isa::fabric::IPU21_TILES,
        fabric: Fabric::Ipu21,
        ..Target::test_small()
    };
    // A sender with receivers both ways, and one with a receiver one way.
    let f = Fabric::Ipu21;
    let s = (0..target.tiles)
        .find(|&s| f.direction(s, 1471) != f.direction(s, s ^ 1))
        .unwrap();
    let phase = ExchangePhase {
        transfers: vec![
            transfer(s, 0x80000, 10, &[(s ^ 1, 0x90000), (1471, 0x90000)]),
            transfer(1471, 0x80000, 4, &[(s, 0x91000)]),
        ],
    };
    let schedule = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &schedule).unwrap();
    check(&target, &phase, &code).unwrap();
    let sends: Vec<(usize, usize)> = code
        .iter()
        .enumerate()
        .flat_map(|(t, c)| {
            c.instructions
                .iter()
                .enumerate()
                .filter(|(_, i)| i.opcode == Opcode::Send)
                .map(move |(k, _)| (t, k))
        })
        .collect();
    assert_eq!(sends.len(), 2);
    assert_eq!(code[s as usize].instructions[sends[0].1].operands[2], 3);
    for &(t, k) in &sends {
        let sctl = code[t].instructions[k].operands[2];
        for wrong in [0, DIRECTION_1, DIRECTION_2, 4 | sctl] {
            if wrong & sctl == sctl && wrong & 4 == 0 {
                continue; // names every direction needed
            }
            let mut changed = code.clone();
            changed[t].instructions[k].operands[2] = wrong;
            assert!(
                check(&target, &phase, &changed).is_err(),
                "tile {t}: sctl {wrong} for {sctl}"
            );
        }
    }
}

#[test]
fn the_check_catches_a_shifted_listen() {
    let target = Target::test_small();
    let phase = phase();
    let schedule = schedule(&target, &phase).unwrap();
    let mut code = emit(&target, &phase, &schedule).unwrap();
    // Tile 1 starts listening one cycle late: it misses the first word and that word has
    // no listener on tile 1 (tiles 5 and 15 still take it), so a delivery goes missing.
    let position = code[1]
        .instructions
        .iter()
        .position(|i| i.opcode == Opcode::Delay)
        .unwrap();
    code[1].instructions[position].operands[0] += 1;
    assert!(check(&target, &phase, &code).is_err());
}

/// Code with timed receive controls passes, and the check catches each of them moved: a
/// mux switched on one event late (its first word unheard), a pointer one word off, and a
/// `sendpic`'s mux naming another tile.
#[test]
fn the_check_catches_moved_timed_controls() {
    use crate::exchange::schedule::{schedule_for_emission, ReceiveControls};
    use tessera_isa::fabric::XPIC_NEUTRAL;
    let target = Target::test_small();
    let phase = phase();
    let schedule = schedule_for_emission(&target, &phase).unwrap();
    assert_eq!(schedule.controls, ReceiveControls::TimedStreams);
    let code = emit(&target, &phase, &schedule).unwrap();
    check(&target, &phase, &code).unwrap();
    let mut moved = [0usize; 3];
    for tile in 0..code.len() {
        for (k, inst) in code[tile].instructions.iter().enumerate() {
            let mut changed = code.clone();
            let operands = &mut changed[tile].instructions[k].operands;
            let kind = match (inst.opcode, inst.imm(1)) {
                (Opcode::DelayXpic, _) if inst.imm(2) != XPIC_NEUTRAL => {
                    operands[0] += 1;
                    0
                }
                (Opcode::DelayPic, 0) | (Opcode::SendPic, 2) => {
                    operands[2] += 1;
                    1
                }
                (Opcode::SendPic, 0) if inst.imm(2) != XPIC_NEUTRAL => {
                    operands[2] = (operands[2] + 1) % target.tiles;
                    2
                }
                _ => continue,
            };
            moved[kind] += 1;
            assert!(
                check(&target, &phase, &changed).is_err(),
                "tile {tile}: {:?} moved is not caught",
                inst
            );
        }
    }
    assert!(moved[0] > 0 && moved[1] > 0, "{moved:?}");
}

/// The range check agrees with the word-by-word check on the scheduled code and on every
/// single-instruction perturbation of it (on the error itself when both stop at an
/// accepted word or an unheard send; which missing word is reported first may differ).
#[test]
fn the_range_check_agrees_with_the_word_check() {
    let target = Target::test_small();
    let phase = phase();
    let schedule = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &schedule).unwrap();
    let mut variants = vec![code.clone()];
    for tile in 0..code.len() {
        for (k, inst) in code[tile].instructions.iter().enumerate() {
            for delta in [1u32, 4] {
                let mut changed = code.clone();
                #[expect(clippy::wildcard_enum_match_arm, reason = "only these carry counts")]
                let operand = match inst.opcode {
                    Opcode::Delay => 0,
                    Opcode::Setzi | Opcode::Send => 1,
                    _ => continue,
                };
                changed[tile].instructions[k].operands[operand] += delta;
                variants.push(changed);
            }
            let mut removed = code.clone();
            removed[tile].instructions.remove(k);
            variants.push(removed);
        }
    }
    let mut failures = 0;
    for variant in &variants {
        let replays: Vec<Replay> = match variant
            .iter()
            .enumerate()
            .map(|(t, c)| replay(&target, t as u32, c))
            .collect::<Result<_, _>>()
        {
            Ok(replays) => replays,
            Err(_) => continue,
        };
        let planned = Planned::new(&phase, replays.len()).expect("no overlapping sources");
        let by_range = check_by_range(&target, &phase, &replays, &planned);
        let per_word = check_per_word(&target, &phase, &replays);
        assert_eq!(
            by_range.is_ok(),
            per_word.is_ok(),
            "{by_range:?} vs {per_word:?}"
        );
        if let Err(error) = &per_word {
            failures += 1;
            let ordered = matches!(error, ExchangeError::NoListener { .. })
                || matches!(error, ExchangeError::Check { cycle, .. } if *cycle != 0);
            if ordered {
                assert_eq!(&by_range, &per_word);
            }
        }
    }
    assert!(failures > 20, "{failures} perturbations failed the check");
}

#[test]
fn overlapping_sources_use_the_word_check() {
    let target = Target::test_small();
    let mut phase = phase();
    // A second, overlapping delivery of tile 0's words to tile 1.
    phase
        .transfers
        .push(transfer(0, 0x80010, 4, &[(1, 0x96000)]));
    assert!(Planned::new(&phase, target.tiles as usize).is_none());
    let schedule = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &schedule).unwrap();
    // The same words sent twice to one receiver, to two places: a valid plan the word
    // check accepts when the code delivers both…
    check(&target, &phase, &code).unwrap();
    // …and refuses when a pointer is off.
    let mut wrong = code.clone();
    let setzi = wrong[1]
        .instructions
        .iter()
        .rposition(|i| i.opcode == Opcode::Setzi && i.operands[0] == 1)
        .unwrap();
    wrong[1].instructions[setzi].operands[1] += 4;
    assert!(check(&target, &phase, &wrong).is_err());
}

#[test]
fn the_check_catches_a_wrong_pointer_and_an_unheard_send() {
    let target = Target::test_small();
    let phase = phase();
    let schedule = schedule(&target, &phase).unwrap();
    let code = emit(&target, &phase, &schedule).unwrap();
    let mut wrong_pointer = code.clone();
    let setzi = wrong_pointer[4]
        .instructions
        .iter()
        .position(|i| i.opcode == Opcode::Setzi && i.operands[0] == 1)
        .unwrap();
    wrong_pointer[4].instructions[setzi].operands[1] += 4;
    assert!(matches!(
        check(&target, &phase, &wrong_pointer),
        Err(ExchangeError::Check { tile: 4, .. })
    ));
    let mut deaf = code;
    deaf[0]
        .instructions
        .retain(|i| !(i.opcode == Opcode::Put && i.operands[0] == index::INCOMING_MUX as u32));
    assert!(check(&target, &phase, &deaf).is_err());
}
