//! Machine descriptions (parsing, validation) and the tile SRAM model (elements, clashes,
//! faults, protection), through the public API only.

use std::sync::Arc;

use proptest::prelude::*;
use tessera_sim::machine::{MachineDescription, MachineError, BUILTIN_MACHINES};
use tessera_sim::memory::{MemoryFault, MemoryLayout, TileMemory};

const IPU21_RON: &str = include_str!("../../../machines/ipu21.ron");

fn ipu21() -> MachineDescription {
    MachineDescription::builtin("ipu21").expect("ipu21 is valid")
}

fn layout() -> Arc<MemoryLayout> {
    Arc::new(MemoryLayout::from_machine(&ipu21()).expect("ipu21 layout"))
}

fn memory() -> TileMemory {
    TileMemory::new(layout())
}

/// The ipu21 RON with one textual substitution, which must apply.
fn edited_ipu21(from: &str, to: &str) -> String {
    assert!(IPU21_RON.contains(from), "ipu21.ron has no `{from}`");
    IPU21_RON.replacen(from, to, 1)
}

fn validation_error(ron: &str) -> MachineError {
    MachineDescription::from_ron_str(ron).expect_err("description should be rejected")
}

// ---------------------------------------------------------------------------------------------
// Machine descriptions

#[test]
fn every_builtin_parses_and_validates() {
    for name in BUILTIN_MACHINES {
        let machine = MachineDescription::builtin(name).unwrap();
        assert_eq!(machine.name, *name);
        machine.validate().unwrap();
        assert_eq!(MachineDescription::load(name).unwrap(), machine);
    }
}

#[test]
fn ipu21_has_the_documented_parameters() {
    let machine = ipu21();
    assert_eq!(machine.tiles, 1472);
    assert_eq!(machine.clock_hz, 1_500_000_000);
    assert_eq!(machine.sram.base, 0x4C000);
    assert_eq!(machine.sram_end(), 0xE8000);
    assert_eq!(machine.sram_size(), 624 * 1024);
    let [standard, interleaved] = &machine.sram.regions[..] else {
        panic!("ipu21 has two regions");
    };
    assert_eq!(
        (
            standard.start,
            standard.size,
            standard.element_bytes,
            standard.interleave
        ),
        (0x4C000, 208 * 1024, 16 * 1024, 1)
    );
    assert_eq!(
        (
            interleaved.start,
            interleaved.size,
            interleaved.element_bytes,
            interleaved.interleave
        ),
        (0x80000, 416 * 1024, 16 * 1024, 2)
    );
    assert_eq!(
        (machine.contexts.workers, machine.contexts.issue_slots),
        (6, 6)
    );
    let stalls = &machine.stalls;
    assert_eq!(
        [
            stalls.taken_branch,
            stalls.csr_write,
            stalls.run,
            stalls.sync,
            stalls.result_use
        ],
        [6; 5]
    );
    assert_eq!(machine.worker.divide_rounds, 3);
    assert_eq!(machine.worker.repeat_rounds, 1);
    assert_eq!(
        (
            machine.amp.sets,
            machine.amp.channels_per_set,
            machine.amp.phases
        ),
        (2, 8, 4)
    );
    assert_eq!(machine.exchange.bytes_per_cycle_per_tile, 4);
    assert_eq!(machine.exchange.supertile_size, 2);
    assert_eq!(machine.tiles % machine.exchange.tiles_per_column, 0);
    assert_eq!(machine.sync.global_sync_latency_cycles, 90);
}

#[test]
fn small_shares_the_ipu21_tile() {
    let small = MachineDescription::builtin("small").unwrap();
    let big = ipu21();
    assert_eq!(small.tiles, 16);
    assert_eq!(small.sram, big.sram);
    assert_eq!(small.contexts, big.contexts);
    assert_eq!(small.stalls, big.stalls);
    assert_eq!(small.worker, big.worker);
    assert_eq!(small.amp, big.amp);
    assert_eq!(small.exchange.tiles_per_column, 4);
}

#[test]
fn load_reads_files_and_reports_missing_ones() {
    let path = std::env::temp_dir().join(format!("tessera-machine-{}.ron", std::process::id()));
    std::fs::write(
        &path,
        edited_ipu21("name: \"ipu21\"", "name: \"from-file\""),
    )
    .unwrap();
    let loaded = MachineDescription::load(path.to_str().unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(loaded.unwrap().name, "from-file");

    let err = MachineDescription::load("/nonexistent/machine.ron").unwrap_err();
    assert!(matches!(err, MachineError::Read { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/machine.ron"),
        "{err}"
    );
}

#[test]
fn unknown_builtin_is_an_error() {
    let err = MachineDescription::builtin("ipu3").unwrap_err();
    assert!(matches!(err, MachineError::UnknownBuiltin { ref name } if name == "ipu3"));
}

#[test]
fn unknown_field_is_rejected_by_name() {
    let top = validation_error(&edited_ipu21("tiles: 1472,", "tiles: 1472, tile_count: 3,"));
    assert!(matches!(top, MachineError::Parse { .. }), "{top:?}");
    assert!(top.to_string().contains("tile_count"), "{top}");

    let nested = validation_error(&edited_ipu21("sets: 2,", "sets: 2, lanes: 4,"));
    assert!(nested.to_string().contains("lanes"), "{nested}");

    let region = validation_error(&edited_ipu21("interleave: 1)", "interleave: 1, banks: 2)"));
    assert!(region.to_string().contains("banks"), "{region}");
}

#[test]
fn missing_field_is_rejected_by_name() {
    let err = validation_error(&edited_ipu21("result_use: 6", ""));
    assert!(err.to_string().contains("result_use"), "{err}");
    let err = validation_error(&edited_ipu21("divide_rounds: 3", "divide_rounds: 0"));
    assert!(err.to_string().contains("worker.divide_rounds"), "{err}");
    let err = validation_error(&edited_ipu21("repeat_rounds: 1", "repeat_rounds: 0"));
    assert!(err.to_string().contains("worker.repeat_rounds"), "{err}");
}

#[test]
fn invalid_region_layouts_are_rejected_naming_the_field() {
    let cases = [
        // A gap between the regions.
        (
            ("start: 0x80000", "start: 0x84000"),
            "sram.regions[1].start",
        ),
        // Overlapping regions.
        (
            ("start: 0x80000", "start: 0x7C000"),
            "sram.regions[1].start",
        ),
        // The first region must start at the base.
        (("base: 0x4C000", "base: 0x48000"), "sram.regions[0].start"),
        // Size not a multiple of the element size.
        (("size: 0x34000", "size: 0x35000"), "sram.regions[0].size"),
        // Interleaved size must be whole pairs: 0x64000 is 25 elements.
        (("size: 0x68000", "size: 0x64000"), "sram.regions[1].size"),
        (
            ("interleave: 2", "interleave: 4"),
            "sram.regions[1].interleave",
        ),
        (
            ("interleave: 1", "interleave: 0"),
            "sram.regions[0].interleave",
        ),
        (
            (
                "element_bytes: 0x4000, interleave: 1",
                "element_bytes: 0, interleave: 1",
            ),
            "sram.regions[0].element_bytes",
        ),
        (
            (
                "element_bytes: 0x4000, interleave: 1",
                "element_bytes: 12, interleave: 1",
            ),
            "sram.regions[0].element_bytes",
        ),
        (
            ("name: \"interleaved\"", "name: \"standard\""),
            "sram.regions[1].name",
        ),
        (
            (
                "interleave_granule_bytes: 8",
                "interleave_granule_bytes: 12",
            ),
            "sram.interleave_granule_bytes",
        ),
        (
            ("interleave_granule_bytes: 8", "interleave_granule_bytes: 4"),
            "sram.interleave_granule_bytes",
        ),
        (("regions: [", "regions: [], unused: ["), "unused"),
        (("base: 0x4C000", "base: 0x4C004"), "sram.base"),
    ];
    for ((from, to), field) in cases {
        let err = validation_error(&edited_ipu21(from, to));
        assert!(
            err.to_string().contains(field),
            "`{from}` -> `{to}`: expected an error naming {field}, got: {err}"
        );
    }
}

#[test]
fn region_running_past_the_address_space_is_rejected() {
    let err = validation_error(&edited_ipu21("size: 0x68000", "size: 0xFFFE0000"));
    assert!(
        matches!(err, MachineError::RegionOverflow { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("sram.regions[1].size"), "{err}");
}

#[test]
fn empty_region_list_is_rejected() {
    let mut machine = ipu21();
    machine.sram.regions.clear();
    let err = machine.validate().unwrap_err();
    assert_eq!(err.to_string(), "sram.regions must not be empty");
}

#[test]
fn invalid_chip_parameters_are_rejected_naming_the_field() {
    let cases = [
        (("tiles: 1472", "tiles: 0"), "tiles"),
        (("tiles: 1472", "tiles: 1400"), "tiles"),
        (("clock_hz: 1_500_000_000", "clock_hz: 0"), "clock_hz"),
        (("workers: 6", "workers: 0"), "contexts.workers"),
        (("issue_slots: 6", "issue_slots: 5"), "contexts.workers"),
        (("csr_write: 6", "csr_write: 0"), "stalls.csr_write"),
        (("phases: 4", "phases: 0"), "amp.phases"),
        (
            ("tiles_per_column: 64", "tiles_per_column: 0"),
            "exchange.tiles_per_column",
        ),
        (
            ("supertile_size: 2", "supertile_size: 3"),
            "exchange.tiles_per_column",
        ),
        (
            ("bytes_per_cycle_per_tile: 4", "bytes_per_cycle_per_tile: 0"),
            "exchange.bytes_per_cycle_per_tile",
        ),
        (
            (
                "host_load_bytes_per_second: 3_900_000_000",
                "host_load_bytes_per_second: 0",
            ),
            "host.host_load_bytes_per_second",
        ),
        (("name: \"ipu21\"", "name: \"\""), "name"),
    ];
    for ((from, to), field) in cases {
        let err = validation_error(&edited_ipu21(from, to));
        assert!(
            err.to_string().starts_with(field),
            "`{from}` -> `{to}`: expected an error naming {field}, got: {err}"
        );
    }
}

#[test]
fn validation_messages_are_specific() {
    let gap = validation_error(&edited_ipu21("start: 0x80000", "start: 0x84000"));
    assert_eq!(
        gap.to_string(),
        "sram.regions[1].start = 0x84000 leaves a gap: the previous region (or sram.base) ends \
         at 0x80000; regions must be contiguous"
    );
    let size = validation_error(&edited_ipu21("size: 0x34000", "size: 0x35000"));
    assert_eq!(
        size.to_string(),
        "sram.regions[0].size = 0x35000 must be a multiple of 0x4000 (element_bytes × interleave)"
    );
}

#[test]
fn a_description_round_trips_through_ron() {
    let machine = ipu21();
    let text = ron::ser::to_string_pretty(&machine, ron::ser::PrettyConfig::default()).unwrap();
    assert_eq!(MachineDescription::from_ron_str(&text).unwrap(), machine);
}

// ---------------------------------------------------------------------------------------------
// Element mapping

#[test]
fn standard_region_has_16_kib_linear_elements() {
    let layout = layout();
    let base = 0x4C000;
    for element in 0..13u32 {
        let start = base + element * 0x4000;
        let first = layout.element_of(start).unwrap();
        assert_eq!(layout.element_of(start + 0x3FFF), Some(first));
        assert_eq!(
            layout.element_of(start + 8),
            Some(first),
            "bit 3 does not matter here"
        );
        if element > 0 {
            assert_ne!(layout.element_of(start - 1), Some(first));
        }
    }
    assert!(!layout.is_interleaved(0x4C000));
    assert!(layout.element_of(0x4BFFF).is_none());
}

#[test]
fn interleaved_elements_alternate_on_bit_3_within_32_kib_pairs() {
    let layout = layout();
    let even = layout.element_of(0x80000).unwrap();
    let odd = layout.element_of(0x80008).unwrap();
    assert_ne!(even, odd);
    // Same pair, same parity: same element, anywhere in the 32 KiB pair.
    assert_eq!(layout.element_of(0x80010), Some(even));
    assert_eq!(layout.element_of(0x87FF0), Some(even));
    assert_eq!(layout.element_of(0x87FF8), Some(odd));
    // The next pair starts at 0x88000 (the segment boundary PopLibs tests use) with new elements.
    let next_even = layout.element_of(0x88000).unwrap();
    let next_odd = layout.element_of(0x88008).unwrap();
    assert!(![even, odd].contains(&next_even) && ![even, odd].contains(&next_odd));
    assert!(layout.element_of(0xE8000).is_none());
}

proptest! {
    #[test]
    fn interleaved_mapping_matches_the_rule(a in 0x80000u32..0xE8000, b in 0x80000u32..0xE8000) {
        let layout = layout();
        let same_pair = (a - 0x80000) / 0x8000 == (b - 0x80000) / 0x8000;
        let same_parity = (a >> 3) & 1 == (b >> 3) & 1;
        prop_assert_eq!(
            layout.element_of(a) == layout.element_of(b),
            same_pair && same_parity
        );
    }

    #[test]
    fn standard_mapping_matches_the_rule(a in 0x4C000u32..0x80000, b in 0x4C000u32..0x80000) {
        let layout = layout();
        prop_assert_eq!(
            layout.element_of(a) == layout.element_of(b),
            (a - 0x4C000) / 0x4000 == (b - 0x4C000) / 0x4000
        );
    }

    #[test]
    fn written_values_read_back(offset in 0u32..(624 * 1024 / 8), value: u64) {
        let mut memory = memory();
        let addr = 0x4C000 + offset * 8;
        memory.write_u64(addr, value).unwrap();
        prop_assert_eq!(memory.read_u64(addr).unwrap(), value);
        prop_assert_eq!(memory.read_u32(addr).unwrap(), value as u32);
        prop_assert_eq!(memory.read_u32(addr + 4).unwrap(), (value >> 32) as u32);
        prop_assert_eq!(memory.read_u16(addr + 6).unwrap(), (value >> 48) as u16);
        prop_assert_eq!(memory.read_u8(addr + 7).unwrap(), (value >> 56) as u8);
    }
}

// ---------------------------------------------------------------------------------------------
// Element clashes

#[test]
fn accesses_to_distinct_elements_do_not_clash() {
    let layout = layout();
    // ld2xst64pace-style: two loads and a store in different elements.
    layout
        .check_element_clash(&[(0x80000, 8), (0x80008, 8), (0x4C000, 8)])
        .unwrap();
    // Two standard-region elements.
    layout
        .check_element_clash(&[(0x4C000, 8), (0x50000, 8)])
        .unwrap();
    // A 16-byte access with an access in another pair.
    layout
        .check_element_clash(&[(0x80000, 16), (0x88000, 8)])
        .unwrap();
    layout.check_element_clash(&[]).unwrap();
    layout.check_element_clash(&[(0x80000, 16)]).unwrap();
}

#[test]
fn accesses_to_one_element_clash() {
    let layout = layout();
    let element = layout.element_of(0x80000).unwrap();
    assert_eq!(
        layout.check_element_clash(&[(0x80000, 8), (0x80010, 8)]),
        Err(MemoryFault::ElementClash {
            first: 0x80000,
            second: 0x80010,
            element
        })
    );
    // Anywhere in the same 16 KiB standard element.
    assert!(matches!(
        layout.check_element_clash(&[(0x4C000, 4), (0x4FFFC, 4)]),
        Err(MemoryFault::ElementClash { .. })
    ));
    // The third access clashes with the first.
    assert!(matches!(
        layout.check_element_clash(&[(0x4C000, 8), (0x80008, 8), (0x4C008, 8)]),
        Err(MemoryFault::ElementClash {
            first: 0x4C000,
            second: 0x4C008,
            ..
        })
    ));
}

/// The clash check as its doc defines it, byte by byte: every access valid (the first fault in
/// order), then the first pair (by the later access, then the earlier) touching one element,
/// named by the earlier access's first such element in address order.
fn clash_by_definition(layout: &MemoryLayout, accesses: &[(u32, u32)]) -> Result<(), MemoryFault> {
    for &(addr, size) in accesses {
        layout.check_access(addr, size)?;
    }
    let elements = |addr: u32, size: u32| {
        let mut list: Vec<_> = (addr..addr + size)
            .map(|a| layout.element_of(a).unwrap())
            .collect();
        list.dedup();
        list
    };
    for (index, &(second, second_size)) in accesses.iter().enumerate() {
        let theirs = elements(second, second_size);
        for &(first, first_size) in &accesses[..index] {
            if let Some(&element) = elements(first, first_size)
                .iter()
                .find(|e| theirs.contains(e))
            {
                return Err(MemoryFault::ElementClash {
                    first,
                    second,
                    element,
                });
            }
        }
    }
    Ok(())
}

proptest! {
    /// One to six accesses (the pace family makes up to three; longer lists take the general
    /// path), mostly valid and often sharing elements.
    #[test]
    fn clash_check_matches_its_definition(
        accesses in prop::collection::vec(
            (
                prop::sample::select(vec![0x4C000u32, 0x50000, 0x80000, 0x88000, 0xE7FF0]),
                0u32..64,
                prop::sample::select(vec![1u32, 2, 4, 8, 8, 8, 16, 3]),
                0u32..20,
            ),
            1..7,
        )
    ) {
        let layout = layout();
        let accesses: Vec<(u32, u32)> = accesses
            .iter()
            .map(|&(base, slot, size, skew)| {
                // Mostly aligned; now and then misaligned by a byte.
                let addr = base + slot * 8 + u32::from(skew == 0);
                (addr, size)
            })
            .collect();
        prop_assert_eq!(
            layout.check_element_clash(&accesses),
            clash_by_definition(&layout, &accesses)
        );
    }
}

#[test]
fn a_16_byte_access_uses_both_elements_of_its_pair() {
    let layout = layout();
    for other in [0x80020, 0x80028] {
        let err = layout
            .check_element_clash(&[(0x80000, 16), (other, 8)])
            .unwrap_err();
        assert_eq!(
            err.to_string().split(" in the same").next().unwrap(),
            format!("accesses at 0x80000 and {other:#x}")
        );
    }
}

#[test]
fn clash_check_validates_each_access_first() {
    let layout = layout();
    assert_eq!(
        layout.check_element_clash(&[(0x80000, 8), (0x80000, 8), (0x4C000, 16)]),
        Err(MemoryFault::NotInterleaved { addr: 0x4C000 })
    );
    assert_eq!(
        layout.check_element_clash(&[(0x80004, 8)]),
        Err(MemoryFault::Misaligned {
            addr: 0x80004,
            size: 8
        })
    );
}

#[test]
fn clash_message_gives_hex_addresses_and_the_element() {
    let err = layout()
        .check_element_clash(&[(0x80000, 8), (0x80010, 8)])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "accesses at 0x80000 and 0x80010 in the same cycle both use memory element 13"
    );
}

// ---------------------------------------------------------------------------------------------
// Faults

#[test]
fn out_of_range_accesses_fault() {
    let mut memory = memory();
    assert_eq!(
        memory.read(0x4BFFC, 4),
        Err(MemoryFault::OutOfRange {
            addr: 0x4BFFC,
            size: 4
        })
    );
    assert_eq!(
        memory.read_u64(0xE8000),
        Err(MemoryFault::OutOfRange {
            addr: 0xE8000,
            size: 8
        })
    );
    assert_eq!(
        memory.read(0xFFFF_FFF8, 8),
        Err(MemoryFault::OutOfRange {
            addr: 0xFFFF_FFF8,
            size: 8
        })
    );
    assert_eq!(
        memory.write_u32(0, 1),
        Err(MemoryFault::OutOfRange { addr: 0, size: 4 })
    );
    assert_eq!(memory.read_u64(0xE7FF8), Ok(0));
    assert_eq!(
        memory.read_u32(0xE8000).unwrap_err().to_string(),
        "4-byte access at 0xe8000 is outside tile memory"
    );
}

#[test]
fn misaligned_accesses_fault() {
    let mut memory = memory();
    for (addr, size) in [(0x4C002, 4), (0x4C004, 8), (0x4C001, 2), (0x80008, 16)] {
        assert_eq!(
            memory.read(addr, size),
            Err(MemoryFault::Misaligned { addr, size })
        );
    }
    assert_eq!(
        memory.write_u64(0x80004, 7),
        Err(MemoryFault::Misaligned {
            addr: 0x80004,
            size: 8
        })
    );
    assert_eq!(
        memory.read_u32(0x4C002).unwrap_err().to_string(),
        "4-byte access at 0x4c002 is not naturally aligned"
    );
    assert_eq!(memory.read_u8(0x4C003), Ok(0));
}

#[test]
fn unsupported_sizes_fault() {
    let memory = memory();
    for size in [0, 3, 6, 32] {
        assert_eq!(
            memory.read(0x80000, size),
            Err(MemoryFault::UnsupportedSize {
                addr: 0x80000,
                size
            })
        );
    }
}

#[test]
fn sixteen_byte_accesses_need_interleaved_memory() {
    let mut memory = memory();
    let data: Vec<u8> = (0u8..16).collect();
    assert_eq!(
        memory.write(0x7FFF0, &data),
        Err(MemoryFault::NotInterleaved { addr: 0x7FFF0 })
    );
    assert_eq!(
        memory.read(0x4C000, 16).unwrap_err().to_string(),
        "16-byte access at 0x4c000 is not in an interleaved region"
    );
    memory.write(0x80010, &data).unwrap();
    assert_eq!(memory.read(0x80010, 16).unwrap(), &data[..]);
}

// ---------------------------------------------------------------------------------------------
// Protection and loading

#[test]
fn writes_to_protected_memory_fault_but_reads_succeed() {
    let mut memory = memory();
    memory.load_unchecked(0x4C000, &[0xAA; 0x100]).unwrap();
    memory.protect(0x4C000..0x4C100).unwrap();
    assert_eq!(
        memory.write_u32(0x4C0FC, 1),
        Err(MemoryFault::WriteToProtected { addr: 0x4C0FC })
    );
    assert_eq!(
        memory.write_u64(0x4C000, 1).unwrap_err().to_string(),
        "write at 0x4c000 touches write-protected memory (code)"
    );
    assert_eq!(memory.read_u32(0x4C0FC), Ok(0xAAAA_AAAA));
    memory.write_u32(0x4C100, 5).unwrap();
    assert_eq!(memory.read_u32(0x4C100), Ok(5));
    // A write overlapping the end of a protected range faults too.
    memory.protect(0x4C204..0x4C208).unwrap();
    assert_eq!(
        memory.write_u64(0x4C200, 1),
        Err(MemoryFault::WriteToProtected { addr: 0x4C200 })
    );
}

#[test]
fn protecting_outside_sram_faults() {
    let mut memory = memory();
    assert!(matches!(
        memory.protect(0x40000..0x4C100),
        Err(MemoryFault::OutOfRange { addr: 0x40000, .. })
    ));
    assert!(matches!(
        memory.protect(0xE7000..0xE8001),
        Err(MemoryFault::OutOfRange { .. })
    ));
    memory.protect(0xE7000..0xE8000).unwrap();
}

#[test]
fn image_loading_bypasses_protection_and_alignment_but_not_bounds() {
    let mut memory = memory();
    memory.protect(0x4C000..0x4D000).unwrap();
    memory.load_unchecked(0x4C003, &[1, 2, 3, 4, 5]).unwrap();
    assert_eq!(memory.read_range(0x4C003, 5).unwrap(), &[1, 2, 3, 4, 5]);
    assert_eq!(
        memory.read_u32(0x4C004),
        Ok(u32::from_le_bytes([2, 3, 4, 5]))
    );
    // Exactly up to the end is fine; one byte past is not.
    memory.load_unchecked(0xE7FFC, &[9; 4]).unwrap();
    assert_eq!(
        memory.load_unchecked(0xE7FFC, &[9; 5]),
        Err(MemoryFault::OutOfRange {
            addr: 0xE7FFC,
            size: 5
        })
    );
    assert_eq!(
        memory.load_unchecked(0x4BFFF, &[9]),
        Err(MemoryFault::OutOfRange {
            addr: 0x4BFFF,
            size: 1
        })
    );
    assert!(memory.read_range(0xE7000, 0x1001).is_err());
}

/// The ipu21 fetches instructions only below 0x80000 (docs/reference/hardware-ipu-stack.md §2):
/// code that reaches past it is refused at load, saying by how much; a machine file may not
/// put the limit outside its SRAM.
#[test]
fn code_past_the_executable_end_is_refused_at_load() {
    let machine = ipu21();
    assert_eq!(machine.sram.executable_end(), 0x80000);
    let mut tile = tessera_sim::tile::Tile::new(0, &machine, layout());
    tile.load_code(0x80000 - 64, 64)
        .expect("code ending at the limit loads");
    let error = tile.load_code(0x80000 - 16, 32).unwrap_err().to_string();
    assert!(error.contains("16 bytes past 0x80000"), "{error}");
    let error = tile.load_code(0x90000, 8).unwrap_err().to_string();
    assert!(error.contains("8 bytes past 0x80000"), "{error}");
    for bad in ["Some(0x4C000)", "Some(0xE8008)"] {
        let error = validation_error(&edited_ipu21("Some(0x80000)", bad));
        assert!(error.to_string().contains("sram.executable_end"), "{error}");
    }
}

/// The ipu21's host link loads at the 3.9 GB/s osmarks/ipu-stack measured on a C600
/// (453,752,832 B in about 116 ms; docs/reference/hardware-ipu-stack.md §1.7): that upload
/// takes ~174 M cycles at 1.5 GHz, about 116 ms.
#[test]
fn the_host_link_loads_at_the_measured_rate() {
    let machine = ipu21();
    assert_eq!(machine.host_load_cycles(3_900_000_000), 1_500_000_000);
    let upload = machine.host_load_cycles(453_752_832);
    let ms = machine.cycles_to_seconds(upload) * 1e3;
    assert!((ms - 116.0).abs() < 1.0, "{ms} ms");
    assert_eq!(machine.host_load_cycles(1), 1, "a started cycle counts");
}
