//! The hardware's timed receive controls on the chip: `delaypic` sets the incoming pointer and
//! `delayxpic` the mux in the last of their events, and `sendpic` carries a control on the first
//! word of a continued send, so a tile receives while it sends; the phase prologue the hardware
//! writes (`$INCOMING_DCOUNT`, `$OUTGOING_BASE`) runs.

use super::chip_exchange::{group_image, listen, machine, program, rbuf_of, run, BUF};
use tessera_sim::chip::RunReport;
use tessera_sim::{MachineDescription, SimError};

/// Runs groups whose programs name `RBUF_W`, the word address of `rbuf` (the same on every tile
/// of one program text): built once to find it, then again with it.
fn run_with_rbuf(
    machine: &MachineDescription,
    groups: &[(&[u32], &str)],
) -> Result<RunReport, SimError> {
    let texts = |rbuf: u32| -> Vec<(&[u32], String)> {
        groups
            .iter()
            .map(|&(tiles, body)| (tiles, program(&body.replace("RBUF_W", &rbuf.to_string()))))
            .collect()
    };
    let first = group_image(machine, &texts(0));
    let rbuf = first.symbol(groups[0].0[0], "rbuf").expect("rbuf") / 4;
    let image = group_image(machine, &texts(rbuf));
    assert_eq!(image.symbol(groups[0].0[0], "rbuf"), Some(rbuf * 4));
    run(machine, &image, &[], Some(2))
}

/// Tile 0 sends the eight words of `buf` at the release R; they reach tile 1 at R + 24..R + 31.
const SEND_EIGHT: &str = "    sync TEXCH_SYNCZONE_INTERNAL\n    send 7, buf, 3\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";

#[test]
fn timed_controls_receive_like_puts() {
    // The pointer at R, the mux at R + 1 + 22 = R + 23: every word lands.
    let receiver = "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic 22, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let report = run_with_rbuf(&machine("small"), &[(&[1], receiver), (&[0], SEND_EIGHT)]).unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF);
}

#[test]
fn a_timed_mux_applies_in_the_last_of_its_events() {
    // `delayxpic 23` issued at R + 1 lasts 24 events, R + 1..R + 24, and switches the mux in
    // the last: the first word (arriving at R + 24) is received. One event more and it is not.
    let on_time = "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic 23, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let report = run_with_rbuf(&machine("small"), &[(&[1], on_time), (&[0], SEND_EIGHT)]).unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF);
    let late = on_time.replace("delayxpic 23", "delayxpic 24");
    let report = run_with_rbuf(&machine("small"), &[(&[1], &late), (&[0], SEND_EIGHT)]).unwrap();
    assert_eq!(
        &rbuf_of(&report, 1)[..8],
        &[BUF[1], BUF[2], BUF[3], BUF[4], BUF[5], BUF[6], BUF[7], 0]
    );
    assert_eq!(
        report.profile.exchange[0].bytes_unheard, 4,
        "the first word"
    );
}

#[test]
fn a_tile_receives_while_it_sends() {
    // Tile 1 sends `buf` to tile 2 in two halves, at R + 16..R + 19 and R + 24..R + 27; the
    // second half is a `sendpic` that continues the stream and switches tile 1's own mux to
    // tile 0 at R + 24, when tile 0's words start to arrive. Both receivers get all of `buf`.
    let middle = "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delay 14\n    send 3, buf, 3\n    delay 3\n    sendpic 3, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let last = format!(
        "{}    sync TEXCH_SYNCZONE_INTERNAL\n    delay 60\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(2)
    );
    let report = run_with_rbuf(
        &machine("small"),
        &[(&[1], middle), (&[0], SEND_EIGHT), (&[2], &last)],
    )
    .unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF, "tile 1 from tile 0");
    assert_eq!(&rbuf_of(&report, 2)[..8], &BUF, "tile 2 from tile 1");
}

#[test]
fn sendpic_without_a_stream_and_a_host_source_are_refused() {
    let cases = [
        ("    sync TEXCH_SYNCZONE_INTERNAL\n    sendpic 0, 0, 1600\n    sync TEXCH_SYNCZONE_INTERNAL\n", "sendpic with no outgoing stream"),
        ("    sync TEXCH_SYNCZONE_INTERNAL\n    delayxpic 0, 0, 1537\n    sync TEXCH_SYNCZONE_INTERNAL\n", "XPIC source 0x601"),
        ("    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 1, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n", "$INCOMING_FORMAT = 3"),
    ];
    for (body, message) in cases {
        let err = run_with_rbuf(&machine("small"), &[(&[0], body)]).unwrap_err();
        assert!(err.to_string().contains(message), "{message}: {err}");
    }
}

#[test]
fn the_hardware_phase_prologue_runs_and_a_moved_outgoing_base_is_refused() {
    // Every exchange phase on the hardware sets `$INCOMING_DCOUNT` = 1 and `$OUTGOING_BASE` = 0
    // before its `sync 3`; the receive is unchanged by them.
    let prologue =
        "    setzi $m6, 1\n    put $INCOMING_DCOUNT, $m6\n    put $OUTGOING_BASE, $mzero\n";
    let receiver = format!("{prologue}    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic 22, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n");
    let sender = format!("{prologue}{SEND_EIGHT}");
    let report = run_with_rbuf(&machine("small"), &[(&[1], &receiver), (&[0], &sender)]).unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF);
    let moved = "    setzi $m6, 0x100\n    put $OUTGOING_BASE, $m6\n    sync TEXCH_SYNCZONE_INTERNAL\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let err = run_with_rbuf(&machine("small"), &[(&[0], moved)]).unwrap_err();
    assert!(err.to_string().contains("$OUTGOING_BASE = 0x100"), "{err}");
}

/// The SDK's point-to-point rows on the ipu21 (docs/reference/hardware-ipu-stack.md §1.3 and
/// appendix A), the sender named by its physical id: the sender waits `111 − T` (`delay 111 − T`, so its first word goes out at event
/// 112 − T), the receiver selects it with XPIC at event 113 and its words land from XPIC + 52 +
/// 2·row(receiver) on. For the four SDK vectors (logical sender → receiver, sender delay), those
/// rows receive every word here, and a selection one event late loses the first.
#[test]
fn the_sdks_point_to_point_rows_receive_on_the_ipu21() {
    let machine = machine("ipu21");
    for (sender, receiver, delay) in [
        (0, 1286, 134),
        (736, 100, 62),
        (1286, 1471, 125),
        (32, 0, 108),
    ] {
        let send = format!(
            "    sync TEXCH_SYNCZONE_INTERNAL\n    delay {delay}\n    send 7, buf, 3\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n"
        );
        // XPIC names the sender by its physical id, as the SDK's rows do.
        let xpic = tessera_isa::fabric::physical(sender).unwrap();
        let receive = |xpic_event: u32| {
            format!(
                "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic {}, 0, {xpic}\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n",
                xpic_event - 1
            )
        };
        let position = usize::from(receiver > sender);
        let (on_time, late) = (receive(113), receive(114));
        let report = run_with_rbuf(
            &machine,
            &[(&[receiver], on_time.as_str()), (&[sender], send.as_str())],
        )
        .unwrap();
        assert_eq!(
            &rbuf_of(&report, position)[..8],
            &BUF,
            "{sender} -> {receiver}"
        );
        let report = run_with_rbuf(
            &machine,
            &[(&[receiver], late.as_str()), (&[sender], send.as_str())],
        )
        .unwrap();
        assert_eq!(
            &rbuf_of(&report, position)[..8],
            &[BUF[1], BUF[2], BUF[3], BUF[4], BUF[5], BUF[6], BUF[7], 0],
            "{sender} -> {receiver}, one event late"
        );
    }
}

/// A 64-bit transfer to a receiving pair on the ipu21, as osmarks/ipu-stack's paired rows run it on
/// a C600 (docs/reference/hardware-ipu-stack.md §1.4): the sender sends 64-bit items (`sctl` =
/// direction | 4, the address in 8-byte units) `111 − Tp` events after the sync, Tp the later
/// of the two members' route times; the member with the smaller route time selects the pair's
/// paired stream (XPIC stream 1, the sender's physical id XOR bit 1 of its own) at event 113
/// and returns it to neutral `count` events later; both members turn their format on (the
/// route's direction) at the selection + 51 + 2·row and off `count` events later. Both members
/// receive every item; a selection one event late loses the first item on both; a wrong
/// format is a fault.
#[test]
fn paired_rows_deliver_64_bit_items_to_both_members_of_a_pair() {
    use tessera_isa::fabric::{direction, paired_route_time, physical, Fabric};
    let machine = machine("ipu21");
    let fabric = Fabric::Ipu21;
    for (sender, pair) in [(0u32, 1286u32), (736, 100), (1286, 1470), (33, 2)] {
        let (s, r) = (physical(sender).unwrap(), physical(pair).unwrap());
        let tp = paired_route_time(s, r);
        assert!(tp <= 111, "{sender} -> {pair}: Tp {tp}");
        let dir = direction(s, r);
        assert_eq!(dir, direction(s, r ^ 2), "both members in one direction");
        let row = r >> 6;
        let send = format!(
            "    sync TEXCH_SYNCZONE_INTERNAL\n    delay {}\n    send 3, buf / 2, {}\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n",
            111 - tp,
            dir | 4
        );
        let receive = |member: u32, xpic_event: u32, format: u32| {
            let selects = fabric.paired_selector(sender, member);
            let value = fabric.paired_xpic(sender, member).unwrap();
            let select = if selects {
                format!(
                    "    delayxpic {}, 1, {value}\n    delayxpic 3, 1, 0x640\n",
                    xpic_event - 1
                )
            } else {
                format!("    delay {}\n", xpic_event + 3)
            };
            // Format on at the selection + 51 + 2·row (always at 113 + ...: the late member
            // keeps the rows' timing whatever the selecting member does).
            format!(
                "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n{select}    delaypic {}, 1, {format}\n    delaypic 3, 1, 0\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n",
                113 + 51 + 2 * row - (xpic_event + 4) - 1
            )
        };
        let members = [pair & !1, pair | 1];
        let run_rows = |xpic_event: u32, format: u32| {
            let rows: Vec<String> = members
                .iter()
                .map(|&m| receive(m, xpic_event, format))
                .collect();
            run_with_rbuf(
                &machine,
                &[
                    (&[members[0]], rows[0].as_str()),
                    (&[members[1]], rows[1].as_str()),
                    (&[sender], send.as_str()),
                ],
            )
        };
        // Outputs in tile order.
        let position = |tile: u32| {
            [members[0], members[1], sender]
                .iter()
                .filter(|&&t| t < tile)
                .count()
        };
        let report = run_rows(113, dir).unwrap();
        for m in members {
            assert_eq!(&rbuf_of(&report, position(m))[..8], &BUF, "{sender} -> {m}");
        }
        let late = run_rows(114, dir).unwrap();
        for m in members {
            assert_eq!(
                &rbuf_of(&late, position(m))[..8],
                &[BUF[2], BUF[3], BUF[4], BUF[5], BUF[6], BUF[7], 0, 0],
                "{sender} -> {m}, selected one event late"
            );
        }
        let err = run_rows(113, 3 - dir).unwrap_err();
        assert!(
            matches!(err, SimError::ExchangePaired { sender: s, .. } if s == sender),
            "{err}"
        );
        assert!(err.to_string().contains("comes in direction"), "{err}");
    }
}

/// `sendoff` continues the outgoing stream where the `send` before it left off (ipu-stack sends
/// a transfer's words past its first 64 so): four words by `send`, four by `sendoff`, received
/// as the eight of `buf`; a `sendoff` with no stream before it is refused.
#[test]
fn sendoff_continues_the_outgoing_stream() {
    let send = "    sync TEXCH_SYNCZONE_INTERNAL\n    send 3, buf, 3\n    sendoff 3, 0, 3\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let receiver = "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic 22, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let report = run_with_rbuf(&machine("small"), &[(&[1], receiver), (&[0], send)]).unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF);
    let alone =
        "    sync TEXCH_SYNCZONE_INTERNAL\n    sendoff 3, 0, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let err = run_with_rbuf(&machine("small"), &[(&[0], alone)]).unwrap_err();
    assert!(
        err.to_string().contains("sendoff with no outgoing stream"),
        "{err}"
    );
}

/// `sendpicp` (two words) applies an XPIC and a PIC setting at its first word and restarts the
/// outgoing stream: with send control 0 it only receives (the SDK's receiver-only event), with 3
/// it also sends. Tile 1 takes tile 0's eight words with one `sendpicp` at R + 1 that sends
/// nothing, then with one that also sends its own `buf` to tile 2.
#[test]
fn sendpicp_sets_both_controls_and_restarts_the_stream() {
    let receiver = "    sync TEXCH_SYNCZONE_INTERNAL\n    .balign 8\n    sendpicp 0, buf, 0, 0, 0, RBUF_W\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let report = run_with_rbuf(&machine("small"), &[(&[1], receiver), (&[0], SEND_EIGHT)]).unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF, "receiver-only sendpicp");
    // Tile 1 receives tile 0's words and, from R + 2, sends its own `buf` to tile 2 with the
    // same controls: both receivers get all of `buf`.
    let both = "    sync TEXCH_SYNCZONE_INTERNAL\n    .balign 8\n    sendpicp 7, buf, 3, 0, 0, RBUF_W\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let last = format!(
        "{}    sync TEXCH_SYNCZONE_INTERNAL\n    delay 60\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(2)
    );
    let report = run_with_rbuf(
        &machine("small"),
        &[(&[1], both), (&[0], SEND_EIGHT), (&[2], &last)],
    )
    .unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF, "tile 1 from tile 0");
    assert_eq!(&rbuf_of(&report, 2)[..8], &BUF, "tile 2 from tile 1");
}

/// A `send` that reads the memory element the supervisor fetches its code from (within 64 bytes
/// of look-ahead) raises `TEXCPT_CONFLICT` on the hardware (osmarks/ipu-stack's BRINGUP.md, run
/// on a C600): here it stops with E-TRAP-014, naming the address and the element.
#[test]
fn a_send_from_the_code_element_is_an_exchange_conflict() {
    let machine = machine("small");
    let near = "    sync TEXCH_SYNCZONE_INTERNAL\n    send 1, near, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n    br $m10\n    .section .data.near\n    .align 8\nnear:\n    .int 1, 2\n";
    let text = program(near);
    let err = super::chip_exchange::run_groups(&machine, &[(&[0], text)]).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("E-TRAP-014") && message.contains("memory element 0"),
        "{message}"
    );
}

/// osmarks/ipu-stack's bring-up multicast on a C600 (BRINGUP.md@4496cf6): physical tile 0 sends
/// one stream (`sctl` 3, both directions) that physical tiles 32 and 53 both receive. Each
/// receiver selects the sender at its own send + T(0, d) + 1 (T = −4 and −23): both take every
/// word, and one event late loses the first. The words land at send + 49 and send + 30 here, 19
/// cycles apart; the chip's worker-sampled intervals put receiver 32 18–24 cycles after
/// receiver 53 at every size from 1 to 4,148 words (in steps of 6), so the two agree.
#[test]
fn the_bring_up_multicast_reaches_both_receivers_as_on_the_chip() {
    use tessera_isa::fabric::{logical, route_latency, route_time};
    let machine = machine("ipu21");
    let sender = logical(0).unwrap();
    let (near, far) = (logical(53).unwrap(), logical(32).unwrap());
    assert_eq!(
        (route_time(0, 32), route_time(0, 53)),
        (-4, -23),
        "the route times the rows use"
    );
    let gap = route_latency(0, 32) - route_latency(0, 53);
    assert!((18..=24).contains(&gap), "{gap}");
    // The sender's first word goes out at event 112.
    let send = "    sync TEXCH_SYNCZONE_INTERNAL\n    delay 111\n    send 7, buf, 3\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let receive = |xpic_event: i64| {
        format!(
            "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic {}, 0, 0\n    delay 300\n    sync TEXCH_SYNCZONE_INTERNAL\n",
            xpic_event - 1
        )
    };
    for late in [0, 1] {
        let (on_near, on_far) = (
            receive(112 + route_time(0, 53) + 1 + late),
            receive(112 + route_time(0, 32) + 1 + late),
        );
        let report = run_with_rbuf(
            &machine,
            &[(&[near], &on_near), (&[far], &on_far), (&[sender], send)],
        )
        .unwrap();
        let mut tiles = [sender, near, far];
        tiles.sort_unstable();
        let position = |tile: u32| tiles.iter().position(|&t| t == tile).unwrap();
        let expected: &[u32] = if late == 0 {
            &BUF
        } else {
            &[BUF[1], BUF[2], BUF[3], BUF[4], BUF[5], BUF[6], BUF[7], 0]
        };
        assert_eq!(
            &rbuf_of(&report, position(near))[..8],
            expected,
            "53, late {late}"
        );
        assert_eq!(
            &rbuf_of(&report, position(far))[..8],
            expected,
            "32, late {late}"
        );
    }
}

/// The hardware's phase protocol: tiles with no part in an exchange phase run `sans 0; sync 1`
/// (ANS) where the active ones run `sync 3`, and all of them pass the phase together; zone 7
/// ("all") is the same barrier here. Zones 0 (receive) and 15 (host) are refused as unmodelled.
#[test]
fn idle_tiles_pass_a_phase_with_sans_and_the_ans_zone() {
    let idle = "    sans 0\n    sync 1\n    sans 0\n    sync 7\n";
    let receiver = "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, RBUF_W\n    delayxpic 22, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n";
    let report = run_with_rbuf(
        &machine("small"),
        &[(&[1], receiver), (&[0], SEND_EIGHT), (&[2, 3], idle)],
    )
    .unwrap();
    assert_eq!(&rbuf_of(&report, 1)[..8], &BUF);
    assert_eq!(report.supersteps, 2, "both barriers, idle tiles included");
    // An idle tile that comes late holds the phase back: the barrier waits for its `sync 1`.
    let late = format!("    delay 300\n{idle}");
    let held = run_with_rbuf(
        &machine("small"),
        &[(&[1], receiver), (&[0], SEND_EIGHT), (&[2, 3], &late)],
    )
    .unwrap();
    assert!(
        held.total_cycles >= report.total_cycles + 300,
        "{} against {}",
        held.total_cycles,
        report.total_cycles
    );
    assert_eq!(&rbuf_of(&held, 1)[..8], &BUF);
    for zone in [0, 15] {
        let text = format!("    sync {zone}\n");
        let err = run_with_rbuf(&machine("small"), &[(&[0], &text)]).unwrap_err();
        assert!(
            err.to_string().contains(&format!("sync zone {zone}")),
            "{err}"
        );
    }
}

/// A word received into the memory element the receiver's supervisor fetches its instructions
/// from is the hardware's receive error `CLASH_IFETCH` (docs/reference/hardware-ipu-stack.md
/// §1.6: send, receive and fetch must not share a 16 KiB element): E-SIM-017, naming the
/// address, the element and the fetch address. The same receive into another element is fine.
#[test]
fn a_receive_into_the_code_element_is_a_fetch_clash() {
    let machine = machine("small");
    let receiver = |pointer: &str| {
        program(&format!(
            "    sync TEXCH_SYNCZONE_INTERNAL\n    delaypic 0, 0, {pointer}\n    delayxpic 22, 0, 0\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n    br $m10\n    .section .data.near\n    .align 8\nnear:\n    .space 32\n"
        ))
    };
    // Find `near`'s address (the same in both texts: the operand does not change the layout).
    let first = super::chip_exchange::group_image(
        &machine,
        &[(&[1], receiver("0")), (&[0], program(SEND_EIGHT))],
    );
    let near = first.symbol(1, "near").expect("near") / 4;
    let err = super::chip_exchange::run_groups(
        &machine,
        &[
            (&[1], receiver(&near.to_string())),
            (&[0], program(SEND_EIGHT)),
        ],
    )
    .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("E-SIM-017") && message.contains("CLASH_IFETCH"),
        "{message}"
    );
    let rbuf = first.symbol(1, "rbuf").expect("rbuf") / 4;
    super::chip_exchange::run_groups(
        &machine,
        &[
            (&[1], receiver(&rbuf.to_string())),
            (&[0], program(SEND_EIGHT)),
        ],
    )
    .unwrap();
}
