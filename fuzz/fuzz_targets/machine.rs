//! Fuzzes machine-description parsing and validation (`MachineDescription::from_ron_str`) on
//! arbitrary UTF-8 RON text. Checks: it never panics; a description it accepts passes
//! `validate` again, gives a `MemoryLayout` (validation "checks every invariant the simulator
//! relies on"), and its derived numbers, image builder and `Chip::new` do not panic; when its
//! SRAM is at most 8 MiB, a one-tile `br $m10` program loads and runs on it without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_isa::asm::{assemble, LayoutOptions};
use tessera_sim::chip::Chip;
use tessera_sim::memory::MemoryLayout;
use tessera_sim::single::{load_object, run_tile, EntryMode};
use tessera_sim::MachineDescription;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let machine = match MachineDescription::from_ron_str(text) {
        Ok(machine) => machine,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    machine
        .validate()
        .unwrap_or_else(|e| panic!("an accepted machine fails validate: {e}"));
    MemoryLayout::from_machine(&machine)
        .unwrap_or_else(|e| panic!("a validated machine has no memory layout: {e}"));
    let _ = machine.to_string();
    let _ = machine.cycles_to_seconds(u64::MAX);
    let _ = machine.sram_size();
    let _ = machine.sram_end();
    let _ = machine.fingerprint();
    let _ = machine.sram_regions();
    let _ = machine.image_builder();
    let _ = machine.amp.channels();
    for tile in [0, machine.tiles / 2, machine.tiles - 1, machine.tiles] {
        let _ = machine.exchange.latency_cycles(0, tile);
        let _ = machine.exchange.latency_cycles(tile, machine.tiles - 1);
    }
    if machine.sram_size() > 8 << 20 {
        return;
    }
    let _ = Chip::new(&machine);
    let source = "    .supervisor\n    .align 8\nmain:\n    br $m10\n";
    let Ok(object) = assemble(&[("main.S", source)], &LayoutOptions::at(machine.sram.base)) else {
        return;
    };
    if let Ok(mut tile) = load_object(&machine, &object, 0) {
        let mode = EntryMode::Supervisor {
            entry: machine.sram.base,
            vertex: 0,
        };
        let _ = run_tile(&machine, &mut tile, mode, 10_000);
    }
});
