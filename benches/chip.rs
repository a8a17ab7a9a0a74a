//! Whole-chip simulator throughput: simulated tile-cycles per host second on the 1472-tile
//! rotate program of `tessera_sim::rotate` (each tile computes on local data with six workers,
//! then sends its buffer to its right neighbour through the exchange; several supersteps), with
//! 1 and 2 host threads.
//! Criterion's throughput figure ("elem/s") is tile-cycles per second: running tiles × cycles
//! after start-up. Each iteration runs the loaded image from scratch (tile set-up included).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
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
    let mut group = c.benchmark_group("chip_rotate_ipu21");
    group.sample_size(10);
    group.throughput(Throughput::Elements(probe.tile_cycles));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::new("threads", threads),
            &threads,
            |b, &threads| {
                let options = RunOptions {
                    threads: Some(threads),
                    ..RunOptions::default()
                };
                b.iter(|| chip.run(&inputs, &options).expect("run"));
            },
        );
    }
    group.finish();
}

criterion_group!(benches, chip_rotate);
criterion_main!(benches);
