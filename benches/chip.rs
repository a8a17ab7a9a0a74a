//! Whole-chip simulator throughput, with 1 and 2 host threads:
//!
//! - `chip_rotate_ipu21`: the 1472-tile rotate program of `tessera_sim::rotate` (each tile
//!   computes on local data with six workers, then sends its buffer to its right neighbour
//!   through the exchange; several supersteps);
//! - `chip_model_ipu21`: a compiled model step, the built-in SigLIP tower of `tessera run`
//!   (its GEMMs on the AMP, attention, LayerNorm, GELU and every exchange between them) on
//!   1408 tiles, compiled once outside the timed part.
//!
//! Criterion's throughput figure ("elem/s") is tile-cycles per second: running tiles × cycles
//! after start-up. Each iteration runs the loaded image from scratch (tile set-up included).

use criterion::{criterion_group, criterion_main, Criterion};

mod common;
use tessera::pipeline::{compile_graph, synthetic_pixels, tower_graph, Model, RunSpec};
use tessera::sim::rotate::{rotate_image, rotate_input};
use tessera::sim::{Chip, MachineDescription, RunOptions};

const WORDS: u32 = 256;
const STEPS: u32 = 8;

fn chip_rotate(c: &mut Criterion) {
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let image = rotate_image(&machine, WORDS, STEPS);
    let input: Vec<u8> = rotate_input(machine.tiles, WORDS)
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    let inputs = [("x", input)];
    let mut chip = Chip::new(&machine).expect("chip");
    chip.load_image(&image).expect("load");
    let probe = chip.run(&inputs, &RunOptions::default()).expect("run");
    println!(
        "rotate on ipu21: {} words x {} steps, {} cycles after start-up ({} total), {} tile-cycles per run",
        WORDS,
        STEPS,
        probe.total_cycles - probe.startup_cycles,
        probe.total_cycles,
        probe.tile_cycles
    );
    common::run_by_threads(
        c,
        "chip_rotate_ipu21",
        probe.tile_cycles,
        &mut chip,
        &inputs,
    );
}

fn chip_model(c: &mut Criterion) {
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let model = Model::builtin(1);
    let spec = RunSpec {
        batch: 2,
        layers: model.layers,
        head: true,
        fp8: true,
        k_parts: None,
        key_blocks: Some(1),
        values_transposed: None,
    };
    let graph = tower_graph(&model, &spec).expect("the built-in tower");
    let options =
        tessera_codegen::plan::PlanOptions::for_target(&tessera::target::target_of(&machine));
    let compiled =
        compile_graph(&machine, &graph, &model.store, &options, None).expect("it compiles");
    let pixels = synthetic_pixels(&model.config, spec.batch, 1);
    let input: Vec<u8> = pixels.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    let inputs = [("pixel_values", input)];
    let mut chip = Chip::new(&machine).expect("chip");
    chip.load_image(&compiled.back.image).expect("load");
    let probe = chip.run(&inputs, &RunOptions::default()).expect("run");
    println!(
        "built-in SigLIP tower on ipu21: {} cropped cycles, {} tile-cycles per run",
        probe.cropped_cycles, probe.tile_cycles
    );
    common::run_by_threads(c, "chip_model_ipu21", probe.tile_cycles, &mut chip, &inputs);
}

criterion_group!(benches, chip_rotate, chip_model);
criterion_main!(benches);
