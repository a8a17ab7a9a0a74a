//! What the whole-chip benches share: timing one run of a loaded chip with 1 and 2 host threads.

use criterion::{BenchmarkId, Criterion, Throughput};
use tessera::sim::{Chip, RunOptions};

/// Times `chip.run(inputs)` with 1 and 2 host threads in the criterion group `group` (10
/// samples), with `tile_cycles` (running tiles × cycles of one run) as the throughput.
pub fn run_by_threads(
    c: &mut Criterion,
    group: &str,
    tile_cycles: u64,
    chip: &mut Chip,
    inputs: &[(&str, Vec<u8>)],
) {
    let mut group = c.benchmark_group(group);
    group.sample_size(10);
    group.throughput(Throughput::Elements(tile_cycles));
    for threads in [1usize, 2] {
        group.bench_with_input(
            BenchmarkId::new("threads", threads),
            &threads,
            |b, &threads| {
                let options = RunOptions {
                    threads: Some(threads),
                    ..RunOptions::default()
                };
                b.iter(|| chip.run(inputs, &options).expect("run"));
            },
        );
    }
    group.finish();
}
