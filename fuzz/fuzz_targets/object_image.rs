//! Fuzzes the object-file reader (`Object::from_bytes`) and the image-file reader
//! (`Image::from_bytes`) on arbitrary bytes. Checks: neither panics; a read object or image
//! writes (`to_bytes`) to a file that reads back equal; the accessors and the disassembler
//! never panic on what was read; a read object loads and runs (supervisor at its first code
//! section, 20 000-cycle budget) on one tile of the built-in `small` machine without a panic;
//! and a read image built for `small` loads and runs on a `small` chip (inputs zero-filled,
//! one host thread, 20 000-cycle budget) without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tessera_isa::asm::{disassemble_object, Object};
use tessera_isa::image::{HostDirection, Image};
use tessera_sim::chip::{Chip, RunOptions};
use tessera_sim::single::{load_object, run_tile, EntryMode};
use tessera_sim::MachineDescription;

const MAX_CYCLES: u64 = 20_000;

fn small() -> &'static MachineDescription {
    static SMALL: OnceLock<MachineDescription> = OnceLock::new();
    SMALL.get_or_init(|| MachineDescription::builtin("small").expect("built-in machine"))
}

fn check_object(object: &Object) {
    let bytes = object.to_bytes();
    let again = Object::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a written object does not read back: {e}"));
    assert_eq!(&again, object, "object file round trip");
    let _ = object.listing_text();
    let _ = object.code_ranges();
    let _ = disassemble_object(object);
    for section in &object.sections {
        let _ = object.label_at(section.address);
        let _ = object.source_at(section.address);
        let _ = object.section_at(section.address);
    }
    let machine = small();
    if let Ok(mut tile) = load_object(machine, object, 0) {
        if let Some(code) = object.sections.iter().find(|s| s.has_code) {
            let mode = EntryMode::Supervisor {
                entry: code.address,
                vertex: 0,
            };
            let _ = run_tile(machine, &mut tile, mode, MAX_CYCLES);
        }
    }
}

fn check_image(image: &Image) {
    if let Ok(bytes) = image.to_bytes() {
        let again = Image::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("a written image does not read back: {e}"));
        assert_eq!(&again, image, "image file round trip");
    }
    let _ = image.load_bytes();
    let _ = image.running_tiles().count();
    for tile in &image.tiles {
        let _ = image.symbols_of(tile.tile).count();
        let _ = image.symbol(tile.tile, "main");
        for segment in &tile.segments {
            let _ = image.segment_bytes(segment);
            let _ = segment.category.name();
        }
    }
    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let mut input_bytes = 0u64;
    for tensor in &image.host_tensors {
        let _ = tensor.element_count();
        let size = tensor.byte_size();
        if tensor.direction == HostDirection::Input {
            let Some(size) = size.filter(|&s| s <= 1 << 20) else {
                return;
            };
            input_bytes += size;
            inputs.push((tensor.name.clone(), vec![0u8; size as usize]));
        }
    }
    let machine = small();
    if image.machine != machine.fingerprint() || input_bytes > 1 << 20 {
        return;
    }
    let mut chip = Chip::new(machine).expect("a chip of the built-in machine");
    if chip.load_image(image).is_ok() {
        let options = RunOptions {
            threads: Some(1),
            max_cycles: MAX_CYCLES,
            progress: None,
            record_kernel_spans: true,
            fast_paths: true,
        };
        let _ = chip.run(&inputs, &options);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(object) = Object::from_bytes(data) {
        check_object(&object);
    }
    match Image::from_bytes(data) {
        Ok(image) => check_image(&image),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
