//! Whole-chip runs through the public API: images built with `ImageBuilder` from assembly written
//! here per tile group, run on `Chip`. Covers the rotate test (`tessera_sim::rotate`: compute on
//! local data, rotate to the neighbour through the exchange, several supersteps, compared with a
//! host computation) on
//! the small machine and on ipu21, broadcast, paired receive, data used in the superstep it
//! arrives, every exchange fault with its message, syncs that cannot complete, determinism for
//! 1..4 host threads, host I/O checks, SRAM accounting, and images on the wrong machine.

use tessera_isa::asm::{assemble, LayoutOptions, Object};
use tessera_isa::image::{HostDirection, Image, ImageBuilder, RegionChoice, SramCategory};
use tessera_sim::chip::RunReport;
use tessera_sim::profile::PhaseKind;
use tessera_sim::rotate::{
    per_tile_tensor, rotate_image, rotate_input, rotate_object_rules as rules, rotate_reference,
};
use tessera_sim::{Chip, MachineDescription, RunOptions, SimError};

pub(super) fn machine(name: &str) -> MachineDescription {
    MachineDescription::builtin(name).expect("built-in machine")
}

pub(super) fn assemble_text(machine: &MachineDescription, name: &str, text: &str) -> Object {
    assemble(&[(name, text)], &LayoutOptions::at(machine.sram.base))
        .unwrap_or_else(|errors| panic!("{name} does not assemble:\n{errors}\n{text}"))
}

pub(super) fn builder(machine: &MachineDescription) -> ImageBuilder {
    machine.image_builder().expect("builder")
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub(super) fn bytes_to_words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub(super) fn run(
    machine: &MachineDescription,
    image: &Image,
    inputs: &[(&str, Vec<u8>)],
    threads: Option<usize>,
) -> Result<RunReport, SimError> {
    let mut chip = Chip::new(machine)?;
    chip.load_image(image)?;
    let options = RunOptions {
        threads,
        max_cycles: 10_000_000,
        progress: None,
        record_kernel_spans: true,
        fast_paths: true,
    };
    chip.run(inputs, &options)
}

// ---------------------------------------------------------------------------------------------
// The rotate test

fn check_rotate(
    machine: &MachineDescription,
    words: u32,
    steps: u32,
    threads: Option<usize>,
) -> RunReport {
    let image = rotate_image(machine, words, steps);
    let input = rotate_input(machine.tiles, words);
    let report = run(machine, &image, &[("x", words_to_bytes(&input))], threads)
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = rotate_reference(&input, machine.tiles, words, steps);
    assert_eq!(
        bytes_to_words(report.output("y").unwrap()),
        expected,
        "outputs differ from the host computation"
    );
    assert_eq!(report.supersteps, 2 * u64::from(steps));
    report
}

#[test]
fn rotate_on_the_small_machine_matches_the_host() {
    let machine = machine("small");
    let report = check_rotate(&machine, 100, 4, None);
    let profile = &report.profile;
    assert_eq!(profile.syncs, 8);
    assert!(report.startup_cycles > 0 && report.cropped_cycles > 0);
    assert!(report.total_cycles > report.startup_cycles + report.cropped_cycles / 2);
    assert!(report.startup_cycles + report.cropped_cycles <= report.total_cycles);
    for tile in 0..machine.tiles as usize {
        let kinds: Vec<PhaseKind> = profile.phases[tile].iter().map(|p| p.kind).collect();
        let mut expected = vec![PhaseKind::Startup];
        for _ in 0..4 {
            expected.extend([
                PhaseKind::Compute,
                PhaseKind::Sync,
                PhaseKind::Exchange,
                PhaseKind::Sync,
            ]);
        }
        expected.push(PhaseKind::Compute);
        assert_eq!(kinds, expected, "tile {tile}");
        let spans = &profile.phases[tile];
        assert!(
            spans.windows(2).all(|w| w[0].end <= w[1].start),
            "phases in time order"
        );
        assert_eq!(profile.exchange[tile].bytes_sent, 4 * 100 * 4);
        assert_eq!(profile.exchange[tile].bytes_received, 4 * 100 * 4);
        assert_eq!(profile.kernels[tile].len(), 6 * 4);
        assert!(profile.kernels[tile]
            .iter()
            .all(|k| &*k.name == "scale_add"));
        let memory = &profile.memory[tile];
        assert_eq!(memory.categories["host-data"], 400);
        assert_eq!(memory.categories["tensor:buf"], 400);
        assert_eq!(memory.categories["vertex-state"], 6 * 16 + 4);
        assert_eq!(memory.categories["worker-scratch"], 6 * 64);
        assert!(memory.categories["code"] > 0);
        assert_eq!(memory.used + memory.free, u64::from(machine.sram_size()));
        assert_eq!(memory.largest_free["interleaved"], 0x68000);
        assert!(profile.bundles[tile] > 0);
    }
    // Every tile is released from each sync at the same cycle.
    let sync_ends: Vec<Vec<u64>> = profile
        .phases
        .iter()
        .map(|p| {
            p.iter()
                .filter(|s| s.kind == PhaseKind::Sync)
                .map(|s| s.end)
                .collect()
        })
        .collect();
    assert!(sync_ends.iter().all(|s| *s == sync_ends[0]));
}

/// All 1472 tiles; about a second at the test profile's opt-level, so it runs in CI.
#[test]
fn rotate_on_ipu21_matches_the_host() {
    let machine = machine("ipu21");
    let report = check_rotate(&machine, 64, 3, Some(1));
    assert_eq!(report.profile.phases.len(), 1472);
    assert_eq!(
        report.tile_cycles,
        1472 * (report.total_cycles - report.startup_cycles)
    );
    // Tile 1471 sends to tile 0 across 22 columns: the exchange phase is as long on every tile.
    let exchange: Vec<u64> = report
        .profile
        .phases
        .iter()
        .map(|p| {
            p.iter()
                .filter(|s| s.kind == PhaseKind::Exchange)
                .map(|s| s.end - s.start)
                .sum()
        })
        .collect();
    assert!(exchange.iter().all(|&c| c == exchange[0] && c > 0));
    assert_eq!(
        check_rotate(&machine, 64, 3, Some(2)),
        report,
        "1 and 2 host threads differ"
    );
}

/// Thread counts are bounded before a pool is built: 0 and 100,000 are typed errors.
#[test]
fn thread_counts_outside_the_limit_are_refused() {
    let machine = machine("small");
    let image = rotate_image(&machine, 8, 1);
    let input = words_to_bytes(&rotate_input(machine.tiles, 8));
    for threads in [0, 100_000] {
        let error = run(&machine, &image, &[("x", input.clone())], Some(threads)).unwrap_err();
        assert!(
            matches!(
                error,
                SimError::Limit {
                    what: "host threads",
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            error.to_string().starts_with("E-SIM-015 host threads"),
            "{error}"
        );
    }
}

#[test]
fn runs_are_identical_for_any_thread_count() {
    let machine = machine("small");
    let one = check_rotate(&machine, 72, 3, Some(1));
    for threads in 2..=4 {
        let many = check_rotate(&machine, 72, 3, Some(threads));
        assert_eq!(
            one, many,
            "{threads} threads: outputs, cycles or profile differ"
        );
    }
    // A chip runs its image again from scratch.
    let image = rotate_image(&machine, 72, 3);
    let input = words_to_bytes(&rotate_input(machine.tiles, 72));
    let mut chip = Chip::new(&machine).unwrap();
    chip.load_image(&image).unwrap();
    let first = chip
        .run(&[("x", input.clone())], &RunOptions::default())
        .unwrap();
    let second = chip.run(&[("x", input)], &RunOptions::default()).unwrap();
    assert_eq!(first, second);
    assert_eq!(first, one);
}

#[test]
fn image_files_run_like_the_image() {
    let machine = machine("small");
    let image = rotate_image(&machine, 16, 2);
    let bytes = image.to_bytes().unwrap();
    let read = Image::from_bytes(&bytes).unwrap();
    assert_eq!(read, image);
    assert!(
        image.blobs.len() < 10,
        "one object on 16 tiles is stored once: {} blobs",
        image.blobs.len()
    );
    let input = words_to_bytes(&rotate_input(machine.tiles, 16));
    assert_eq!(
        run(&machine, &read, &[("x", input.clone())], None).unwrap(),
        run(&machine, &image, &[("x", input)], None).unwrap()
    );
}

#[test]
fn progress_is_reported_per_superstep() {
    let machine = machine("small");
    let image = rotate_image(&machine, 8, 2);
    let mut chip = Chip::new(&machine).unwrap();
    chip.load_image(&image).unwrap();
    let seen = std::cell::RefCell::new(Vec::new());
    let callback = |p: &tessera_sim::RunProgress| seen.borrow_mut().push(p.supersteps);
    let options = RunOptions {
        progress: Some(&callback),
        ..RunOptions::default()
    };
    chip.run(&[("x", vec![0u8; 16 * 8 * 4])], &options).unwrap();
    assert_eq!(*seen.borrow(), vec![1, 2, 3, 4]);
}

// ---------------------------------------------------------------------------------------------
// Small exchange programs, one per tile group

const DATA: &str = "
    .section .data.buf
    // Off the code's memory element: a send from it would be an exchange conflict.
    .align 16384
buf:
    .int 0x11111111, 0x22222222, 0x33333333, 0x44444444, 0x55555555, 0x66666666, 0x77777777, 0x88888888
    .section .data.rbuf
    .align 8
rbuf:
    .space 64
";

/// A supervisor program: `body` between `main:` and `br $m10`, with the data above.
pub(super) fn program(body: &str) -> String {
    format!("    .section .text, \"ax\"\n    .supervisor\n    .align 8\n    .globl main\nmain:\n{body}    br $m10\n{DATA}")
}

/// An image with one program per group of tiles and output `rbuf` (16 words) of every tile.
pub(super) fn group_image(machine: &MachineDescription, groups: &[(&[u32], String)]) -> Image {
    let mut b = builder(machine);
    let mut all = Vec::new();
    for (tiles, text) in groups {
        let object = assemble_text(machine, "group.S", text);
        b.add_object(tiles, &object, &rules()).unwrap();
        for &tile in tiles.iter() {
            b.set_entry_symbol(tile, "main", None).unwrap();
            all.push(tile);
        }
    }
    all.sort_unstable();
    let y = per_tile_tensor(&b, "y", HostDirection::Output, "rbuf", &all, 16);
    b.add_host_tensor(y).unwrap();
    b.finish().unwrap()
}

pub(super) fn listen(sender_plus_one: u32) -> String {
    format!("    setzi $m1, {sender_plus_one}\n    setzi $m2, rbuf\n    put $INCOMING_SINIT, $m2\n    put $INCOMING_MUX, $m1\n")
}

pub(super) fn run_groups(
    machine: &MachineDescription,
    groups: &[(&[u32], String)],
) -> Result<RunReport, SimError> {
    run(machine, &group_image(machine, groups), &[], Some(2))
}

pub(super) fn rbuf_of(report: &RunReport, position: usize) -> Vec<u32> {
    bytes_to_words(&report.output("y").unwrap()[64 * position..64 * (position + 1)])
}

pub(super) const BUF: [u32; 8] = [
    0x11111111, 0x22222222, 0x33333333, 0x44444444, 0x55555555, 0x66666666, 0x77777777, 0x88888888,
];

#[test]
fn broadcast_from_one_tile_to_all() {
    let machine = machine("small");
    let others: Vec<u32> = (1..16).collect();
    let sender = program("    sync TEXCH_SYNCZONE_INTERNAL\n    send 7, buf, 3\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n");
    let receiver = program(&format!(
        "{}    sync TEXCH_SYNCZONE_INTERNAL\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(1)
    ));
    let report = run_groups(&machine, &[(&[0], sender), (&others, receiver)]).unwrap();
    assert_eq!(&rbuf_of(&report, 0)[..8], &[0; 8]);
    for position in 1..16 {
        assert_eq!(&rbuf_of(&report, position)[..8], &BUF, "tile {position}");
    }
    assert_eq!(report.profile.exchange[0].bytes_sent, 32);
    assert!(report.profile.exchange[1..]
        .iter()
        .all(|e| e.bytes_received == 32 && e.bytes_sent == 0));
    assert_eq!(report.profile.total_exchange_bytes(), 32);
}

#[test]
fn received_words_are_visible_from_their_arrival_cycle() {
    // Tile 1 listens to tile 0 (same column: 24 cycles). After the sync both run in lockstep:
    // tile 0 sends at R, the first word arrives at tile 1 at R + 24. Tile 1 loads it at R + 24
    // (too early: it sees 0) and again at R + 25 (it sees the word), in the same superstep.
    let machine = machine("small");
    let sender = program(
        "    sync TEXCH_SYNCZONE_INTERNAL\n    send 0, buf, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n",
    );
    let receiver = program(&format!(
        "{}    setzi $m3, rbuf\n    sync TEXCH_SYNCZONE_INTERNAL\n    delay 23\n    ld32 $m4, $m3, $mzero, 0\n    ld32 $m5, $m3, $mzero, 0\n    st32 $m4, $m3, $mzero, 4\n    st32 $m5, $m3, $mzero, 5\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(1)
    ));
    let report = run_groups(&machine, &[(&[0], sender), (&[1], receiver)]).unwrap();
    assert_eq!(
        &rbuf_of(&report, 1)[..6],
        &[0x11111111, 0, 0, 0, 0, 0x11111111]
    );
}

#[test]
fn a_64_bit_item_on_a_32_bit_mux_is_a_fault_and_its_lane_is_the_partners() {
    let machine = machine("small");
    // `send 3, buf / 2, 7`: four 64-bit items from `buf` (the field counts 8-byte units).
    let paired = program("    sync TEXCH_SYNCZONE_INTERNAL\n    send 3, buf / 2, 7\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n");
    let listener = program(&format!(
        "{}    sync TEXCH_SYNCZONE_INTERNAL\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(1)
    ));
    let err = run_groups(&machine, &[(&[0], paired.clone()), (&[2], listener)]).unwrap_err();
    assert!(
        matches!(
            err,
            SimError::ExchangePaired {
                receiver: 2,
                sender: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("a 64-bit item arrives on the 32-bit mux"),
        "{err}"
    );
    // Tile 1, tile 0's partner, sends in a cycle tile 0's items hold its lane.
    let partner = program("    sync TEXCH_SYNCZONE_INTERNAL\n    delay 1\n    send 0, buf, 3\n    delay 40\n    sync TEXCH_SYNCZONE_INTERNAL\n");
    let err = run_groups(&machine, &[(&[0], paired), (&[1], partner)]).unwrap_err();
    assert!(
        matches!(
            err,
            SimError::ExchangeLaneBusy {
                sender: 0,
                partner: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("E-SIM-016"), "{err}");
}

#[test]
fn a_word_nobody_listens_to_is_legal_and_counted() {
    // The hardware allows it (SDK rows leave sends unconsumed): the run goes on, and the
    // sender's profile counts the bytes.
    let machine = machine("small");
    let sender = program(
        "    sync TEXCH_SYNCZONE_INTERNAL\n    send 1, buf, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n",
    );
    let idle = program("    sync TEXCH_SYNCZONE_INTERNAL\n    sync TEXCH_SYNCZONE_INTERNAL\n");
    let report = run_groups(&machine, &[(&[3], sender), (&[0, 1, 2], idle)]).unwrap();
    assert_eq!(report.profile.exchange[3].bytes_sent, 8);
    assert_eq!(report.profile.exchange[3].bytes_unheard, 8);
    assert!(report.profile.exchange[..3]
        .iter()
        .all(|e| e.bytes_received == 0 && e.bytes_unheard == 0));
}

#[test]
fn a_late_listener_misses_words() {
    // The receiver stops listening at R + 28, as the fifth word arrives: it keeps four, and
    // the last four words are unheard.
    let machine = machine("small");
    let sender = program(
        "    sync TEXCH_SYNCZONE_INTERNAL\n    send 7, buf, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n",
    );
    let receiver = program(&format!("{}    sync TEXCH_SYNCZONE_INTERNAL\n    delay 27\n    put $INCOMING_MUX, $mzero\n    sync TEXCH_SYNCZONE_INTERNAL\n", listen(1)));
    let report = run_groups(&machine, &[(&[0], sender), (&[1], receiver)]).unwrap();
    assert_eq!(
        &rbuf_of(&report, 1)[..5],
        &[BUF[0], BUF[1], BUF[2], BUF[3], 0]
    );
    assert_eq!(report.profile.exchange[0].bytes_unheard, 16);
    assert_eq!(report.profile.exchange[1].bytes_received, 16);
}

#[test]
fn two_senders_in_one_cycle_collide() {
    // Tiles 0 and 1 send four words at the release cycle R; both reach tile 2 at R + 24..R + 27.
    // Tile 2 listens to tile 0 and switches to tile 1 at R + 25, when words of both arrive.
    let machine = machine("small");
    let sender = program(
        "    sync TEXCH_SYNCZONE_INTERNAL\n    send 3, buf, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n",
    );
    let switcher = program(&format!("{}    setzi $m3, 2\n    sync TEXCH_SYNCZONE_INTERNAL\n    delay 24\n    put $INCOMING_MUX, $m3\n    sync TEXCH_SYNCZONE_INTERNAL\n", listen(1)));
    let err = run_groups(&machine, &[(&[0, 1], sender), (&[2], switcher)]).unwrap_err();
    let SimError::ExchangeCollision {
        receiver: 2,
        cycle,
        first_sender: 0,
        second_sender: 1,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        err.to_string(),
        format!("E-SIM-008 exchange collision: two senders reach tile 2 in cycle {cycle}: $INCOMING_MUX switches from tile 0 to tile 1 in that cycle and words from both arrive in it")
    );
}

#[test]
fn receiving_outside_tile_memory_is_a_fault() {
    let machine = machine("small");
    let sender = program(
        "    sync TEXCH_SYNCZONE_INTERNAL\n    send 3, buf, 3\n    sync TEXCH_SYNCZONE_INTERNAL\n",
    );
    let receiver = program(&format!(
        "    setzi $m1, 1\n    setzi $m2, {:#x}\n    put $INCOMING_SINIT, $m2\n    put $INCOMING_MUX, $m1\n    sync TEXCH_SYNCZONE_INTERNAL\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        machine.sram_end() - 8
    ));
    let err = run_groups(&machine, &[(&[0], sender), (&[5], receiver)]).unwrap_err();
    let SimError::ExchangeReceive {
        receiver: 5,
        sender: 0,
        cycle,
        address: 0xE8000,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        err.to_string(),
        format!("E-SIM-009 exchange: tile 5 receives a word from tile 0 at cycle {cycle} into 0xe8000: 4-byte access at 0xe8000 is outside tile memory")
    );
}

#[test]
fn a_sync_some_tile_never_reaches_lists_the_stuck_tiles() {
    let machine = machine("small");
    let syncing = program("    sync TEXCH_SYNCZONE_INTERNAL\n");
    let quitting = program("    nop\n");
    let most: Vec<u32> = (0..16).filter(|&t| t != 5 && t != 9).collect();
    let err = run_groups(&machine, &[(&most, syncing), (&[5, 9], quitting)]).unwrap_err();
    let SimError::SyncNeverReached {
        sync: 1,
        waiting,
        halted,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(waiting.len(), 14);
    assert_eq!(
        halted.iter().map(|h| h.tile).collect::<Vec<_>>(),
        vec![5, 9]
    );
    let text = err.to_string();
    assert!(text.starts_with("E-SIM-011 global sync 1 can never complete: 14 tile(s) wait at it (tile 0 at pc 0x4c004 since cycle "), "{text}");
    assert!(
        text.contains(" and 6 more) but 2 tile(s) halted without reaching it (tile 5 at cycle "),
        "{text}"
    );
}

#[test]
fn a_run_past_its_budget_stops() {
    let machine = machine("small");
    let spinning = program("    sync TEXCH_SYNCZONE_INTERNAL\n1:\n    bri 1b\n");
    let image = group_image(&machine, &[(&[0, 1], spinning)]);
    let mut chip = Chip::new(&machine).unwrap();
    chip.load_image(&image).unwrap();
    let err = chip
        .run::<&str, Vec<u8>>(
            &[],
            &RunOptions {
                max_cycles: 5000,
                ..RunOptions::default()
            },
        )
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("E-SIM-004 cycle budget of 5000 cycles exceeded on tile 0 (at cycle "),
        "{text}"
    );
    // The report names the running context, its pc, its instruction and the cycle.
    assert!(
        text.ends_with(" (5000 after start-up): supervisor at pc 0x4c004 `bri 0x4c004`)"),
        "{text}"
    );
}

/// A one-tile image of `text` (entry `main`) on tile 0, with no host tensors.
fn one_tile_image(machine: &MachineDescription, text: &str) -> (Image, tessera_isa::asm::Object) {
    let object = assemble_text(machine, "one.S", text);
    let mut b = builder(machine);
    b.add_object(&[0], &object, &rules()).unwrap();
    b.set_entry_symbol(0, "main", None).unwrap();
    (b.finish().unwrap(), object)
}

/// Start-up cycles and cycles after start-up of `text` run as a one-tile chip image, with `budget`.
fn one_tile_chip_run(
    machine: &MachineDescription,
    text: &str,
    budget: u64,
) -> Result<(u64, u64), SimError> {
    let (image, _) = one_tile_image(machine, text);
    let mut chip = Chip::new(machine)?;
    chip.load_image(&image)?;
    let report = chip.run::<&str, Vec<u8>>(
        &[],
        &RunOptions {
            max_cycles: budget,
            threads: Some(1),
            ..RunOptions::default()
        },
    )?;
    Ok((
        report.startup_cycles,
        report.total_cycles - report.startup_cycles,
    ))
}

fn one_tile_chip_cycles(
    machine: &MachineDescription,
    text: &str,
    budget: u64,
) -> Result<u64, SimError> {
    one_tile_chip_run(machine, text, budget).map(|(_, cycles)| cycles)
}

/// Cycles of `text` run by the one-tile runner (`single::run_tile`) from `main`, the tile's
/// clock first moved to `start` (so worker slots fall as on a chip whose start-up ends there).
fn single_tile_cycles(machine: &MachineDescription, text: &str, start: u64) -> u64 {
    let (_, object) = one_tile_image(machine, text);
    let mut tile = tessera_sim::single::load_object(machine, &object, 0).unwrap();
    tile.advance_to(start);
    let main = object.symbol("main").unwrap().address;
    let mode = tessera_sim::single::EntryMode::Supervisor {
        entry: main,
        vertex: 0,
    };
    tessera_sim::single::run_tile(machine, &mut tile, mode, 10_000_000).unwrap() - start
}

/// A supervisor `body` then `br $m10`, and a worker `work` of `n` bundles (`n - 1` nops, exitz).
fn with_worker(body: &str, n: usize) -> String {
    let work = "    nop\n".repeat(n - 1);
    format!(
        "    .section .text, \"ax\"\n    .supervisor\n    .align 8\n    .globl main\nmain:\n{body}    br $m10\n\
         \n    .section .text.worker, \"ax\"\n    .worker\n    .align 8\nwork:\n{work}    exitz $mzero\n"
    )
}

#[test]
fn the_one_tile_runner_releases_global_syncs_as_the_chip_does() {
    for name in ["small", "ipu21"] {
        let machine = machine(name);
        let latency = u64::from(machine.sync.global_sync_latency_cycles);
        let programs = [
            // `sync 3` at 0, arrival 1, release 1 + latency, `br $m10` then: latency + 2.
            (program("    sync TEXCH_SYNCZONE_INTERNAL\n"), Some(latency + 2)),
            (program("    sync TEXCH_SYNCZONE_INTERNAL\n    nop\n    sync TEXCH_SYNCZONE_INTERNAL\n"), None),
            // A worker still running at the sync: the tile arrives when its last round ends.
            (with_worker("    setzi $m1, work\n    run $m1, $mzero, 0\n    sync TEXCH_SYNCZONE_INTERNAL\n", 10), None),
            (with_worker("    setzi $m1, work\n    run $m1, $mzero, 0\n    sync TEXCH_SYNCZONE_INTERNAL\n    run $m1, $mzero, 0\n    sync TEXCH_SYNCZONE_INTERNAL\n", 7), None),
        ];
        for (text, expected) in programs {
            let (startup, chip) = one_tile_chip_run(&machine, &text, 10_000_000).unwrap();
            if let Some(expected) = expected {
                assert_eq!(chip, expected, "{name}:\n{text}");
            }
            // The chip starts the tile at the end of start-up, which need not be a round
            // boundary; the single runner starting at that cycle sees the same worker slots.
            assert_eq!(
                single_tile_cycles(&machine, &text, startup),
                chip,
                "{name} (start-up {startup}):\n{text}"
            );
            for start in 0..6 {
                let single = single_tile_cycles(&machine, &text, start);
                if let Some(expected) = expected {
                    assert_eq!(single, expected, "{name} from {start}:\n{text}");
                }
            }
        }
    }
}

#[test]
fn the_chip_budget_bounds_the_run_length() {
    // The supervisor returns while worker 0 still runs: the run ends when the worker's last round
    // does, after the last issue. A budget one cycle short of that is exceeded.
    let machine = machine("small");
    let text = with_worker("    setzi $m1, work\n    run $m1, $mzero, 0\n", 20);
    let cycles = one_tile_chip_cycles(&machine, &text, 10_000_000).unwrap();
    assert_eq!(
        one_tile_chip_cycles(&machine, &text, cycles).unwrap(),
        cycles
    );
    let err = one_tile_chip_cycles(&machine, &text, cycles - 1).unwrap_err();
    let text_err = err.to_string();
    assert!(
        text_err.starts_with(&format!(
            "E-SIM-004 cycle budget of {} cycles exceeded on tile 0 (at cycle ",
            cycles - 1
        )),
        "{text_err}"
    );
    assert!(
        text_err.contains(" after start-up): worker 0 at pc ")
            && text_err.ends_with("`exitz $mzero`)"),
        "{text_err}"
    );
}

#[test]
fn unmodelled_exchange_settings_are_refused() {
    let machine = machine("small");
    let bad_csr = program("    setzi $m1, 1\n    put $EXCHANGE_CTL, $m1\n");
    let err = run_groups(&machine, &[(&[0], bad_csr)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("not modelled: writing $EXCHANGE_CTL"),
        "{err}"
    );
    let bad_mux = program("    setzi $m1, 17\n    put $INCOMING_MUX, $m1\n");
    let err = run_groups(&machine, &[(&[0], bad_mux)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("names a tile the chip does not have"),
        "{err}"
    );
    let mut wide = machine.clone();
    wide.exchange.bytes_per_cycle_per_tile = 8;
    let err = Chip::new(&wide).err().unwrap();
    assert_eq!(err.to_string(), "E-SIM-012 not modelled: exchange.bytes_per_cycle_per_tile = 8 (the exchange model sends one 4-byte word per cycle per tile)");
}

// ---------------------------------------------------------------------------------------------
// Host I/O, start-up, images and SRAM

#[test]
fn inputs_are_checked_against_the_image() {
    let machine = machine("small");
    let image = rotate_image(&machine, 8, 1);
    let err = run(&machine, &image, &[], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-SIM-013 host tensor `x`: input not given"
    );
    let err = run(&machine, &image, &[("x", vec![0; 12])], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-SIM-013 host tensor `x`: 12 bytes given, the image expects 512 (u32 [16, 8])"
    );
    let err = run(
        &machine,
        &image,
        &[("x", vec![0; 512]), ("z", vec![])],
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-SIM-013 host tensor `z`: the image has no such input (inputs: x)"
    );
    let err = run(&machine, &image, &[("y", vec![0; 512])], None).unwrap_err();
    assert!(
        err.to_string().contains("is an output of the image"),
        "{err}"
    );
}

#[test]
fn startup_counts_image_and_input_bytes() {
    let machine = machine("small");
    let image = rotate_image(&machine, 8, 1);
    let report = run(&machine, &image, &[("x", vec![0; 512])], None).unwrap();
    // `small` loads 24 GB/s at 1.5 GHz: 16 bytes a cycle.
    assert_eq!(machine.host.host_load_bytes_per_second, 24_000_000_000);
    assert_eq!(
        report.startup_cycles,
        (image.load_bytes() + 512).div_ceil(16)
    );
    assert!(report
        .profile
        .phases
        .iter()
        .all(|p| p[0].kind == PhaseKind::Startup && p[0].end == report.startup_cycles));
    // The last output write is the last word delivered in the final exchange.
    assert!(
        report.cropped_cycles > 0
            && report.startup_cycles + report.cropped_cycles < report.total_cycles
    );
}

#[test]
fn images_for_another_machine_are_refused() {
    let small = machine("small");
    let image = rotate_image(&small, 8, 1);
    let mut chip = Chip::new(&machine("ipu21")).unwrap();
    let err = chip.load_image(&image).unwrap_err();
    assert_eq!(err.to_string(), "E-SIM-014 image: E-IMG-006: image built for small (16 tiles), machine is ipu21 (1472 tiles)");
}

#[test]
fn an_image_that_does_not_fit_is_refused_with_the_numbers() {
    let machine = machine("small");
    let mut b = builder(&machine);
    b.alloc(
        3,
        SramCategory::Tensor("w".into()),
        "w",
        0x30000,
        8,
        &RegionChoice::standard(),
    )
    .unwrap();
    let err = b
        .alloc(
            3,
            SramCategory::HostData,
            "in",
            0x5000,
            8,
            &RegionChoice::standard(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "E-IMG-010: insufficient tile SRAM for 20480 host-data bytes on tile 3 (16384 free)"
    );
    let err = b
        .alloc(
            3,
            SramCategory::HostData,
            "in",
            0x100000,
            8,
            &RegionChoice::Any,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "insufficient tile SRAM for 1048576 host-data bytes on tile 3 ({} free)",
            0x4000 + 0x68000
        )),
        "{err}"
    );
}

#[test]
fn memory_usage_accounts_every_segment() {
    let machine = machine("small");
    let image = rotate_image(&machine, 8, 1);
    let usage = tessera_sim::chip::memory_usage(&machine, &image);
    assert_eq!(usage.len(), 16);
    for tile in &usage {
        let listed: u64 = tile.categories.values().sum();
        assert_eq!(listed, tile.used);
        let segments: u64 = image
            .tile(tile.tile)
            .unwrap()
            .segments
            .iter()
            .map(|s| u64::from(s.size))
            .sum();
        assert_eq!(tile.used, segments);
        assert_eq!(tile.free, u64::from(machine.sram_size()) - tile.used);
        // The code sits in the first 16 KiB element and the exchanged buffers start the next
        // one, so the largest free block is what follows them.
        assert!(
            tile.largest_free["standard"] <= 0x34000 - tile.used
                && tile.largest_free["standard"] > 0x2F000
        );
    }
}

/// On the ipu21 fabric a word reaches a tile only in the direction its send control names
/// (`tessera_isa::fabric`), and a send with no direction puts nothing on the fabric.
#[test]
fn a_send_reaches_only_the_directions_its_control_names() {
    use tessera_isa::fabric::{Fabric, DIRECTION_1, DIRECTION_2};
    let machine = machine("ipu21");
    let toward = Fabric::Ipu21.direction(0, 1).unwrap();
    let away = (DIRECTION_1 | DIRECTION_2) ^ toward;
    let receiver = program(&format!(
        "{}    sync TEXCH_SYNCZONE_INTERNAL\n    sync TEXCH_SYNCZONE_INTERNAL\n",
        listen(1)
    ));
    let sender = |sctl: u32| {
        program(&format!(
            "    sync TEXCH_SYNCZONE_INTERNAL\n    send 3, buf, {sctl}\n    sync TEXCH_SYNCZONE_INTERNAL\n"
        ))
    };
    for sctl in [toward, 3] {
        let report =
            run_groups(&machine, &[(&[0], sender(sctl)), (&[1], receiver.clone())]).unwrap();
        assert_eq!(rbuf_of(&report, 1)[0], 0x11111111, "sctl {sctl}");
    }
    // Away from the receiver: the words reach nobody (legal, and counted).
    let report = run_groups(&machine, &[(&[0], sender(away)), (&[1], receiver.clone())]).unwrap();
    assert_ne!(rbuf_of(&report, 1)[0], 0x11111111, "sctl {away}");
    assert_eq!(report.profile.exchange[0].bytes_unheard, 16, "sctl {away}");
    // No direction: nothing on the fabric, so nothing arrives and nothing is unheard.
    let report = run_groups(&machine, &[(&[0], sender(0)), (&[1], receiver)]).unwrap();
    assert_ne!(rbuf_of(&report, 1)[0], 0x11111111);
}
