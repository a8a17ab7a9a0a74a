//! Simulator speed: simulated bundles per host second on tight worker loops of one tile.
//!
//! - `rpt_ld64step_f16v4mul`: a zero-overhead `rpt` body of co-issued
//!   `{ ld64step ; f16v4mul }` bundles (the elementwise-kernel shape), inside an outer
//!   `brnzdec` loop that resets the pointer.
//! - `fp8_cast_kernel`: `kernels/asm/examples/f16_to_fp8.S` (a 7-bundle `brnzdec` loop) on all
//!   65,536 f16 patterns, run back to back on one tile.
//!
//! Throughput is reported per bundle issued (`Throughput::Elements`), counted by the tile, so
//! "elements/s" reads as simulated bundles per second. Tiles are built outside the timed part.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use tessera::isa::asm::{assemble, LayoutOptions, Object};
use tessera::sim::single::{load_object, run_tile, EntryMode};
use tessera::sim::tile::Tile;
use tessera::sim::MachineDescription;

const BUDGET: u64 = 1 << 40;
/// $mworker_base for the runs: the top of the interleaved region.
const SCRATCH: u32 = 0xE0000;

/// Inner `rpt` count and outer `brnzdec` iterations of the elementwise loop.
const RPT_COUNT: u32 = 4000;
const OUTER: u32 = 50;

fn elementwise_source() -> String {
    format!(
        "    .section .text.work, \"ax\", @progbits
    .align 8
work:
    setzi $m1, {outer}
    setzi $a4, 0x3c00
    setzi $a5, 0x3c00
    nop
.Louter:
    setzi $m0, buf
    rpt {RPT_COUNT}, 0
    {{ ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4mul $a2:3, $a0:1, $a4:5 }}
    brnzdec $m1, .Louter
    exitz $mzero

    .data
    .align 8
buf:
    .space {bytes}
",
        outer = OUTER - 1,
        bytes = RPT_COUNT * 8
    )
}

/// Bundles the elementwise loop issues: 4 set-up; per outer iteration setzi, rpt, the body
/// RPT_COUNT times and brnzdec; exitz.
const ELEMENTWISE_BUNDLES: u64 = 4 + OUTER as u64 * (3 + RPT_COUNT as u64) + 1;

const FP8_KERNEL: &str = include_str!("../kernels/asm/examples/f16_to_fp8.S");
/// 4-element groups: every f16 pattern.
const FP8_GROUPS: u32 = 16_384;
/// Kernel runs per timed iteration.
const FP8_REPEATS: u64 = 2;
/// Bundles one kernel run issues: 10 set-up, 7 per group, exitz.
const FP8_BUNDLES: u64 = 11 + 7 * FP8_GROUPS as u64;

fn machine() -> MachineDescription {
    MachineDescription::builtin("ipu21").expect("ipu21")
}

fn build(machine: &MachineDescription, source: &str) -> Object {
    let options = LayoutOptions {
        base: machine.sram.base,
        ..LayoutOptions::default()
    };
    assemble(&[("bench.S", source)], &options).unwrap_or_else(|e| panic!("{e}"))
}

fn address(object: &Object, name: &str) -> u32 {
    object
        .symbol(name)
        .unwrap_or_else(|| panic!("no symbol {name}"))
        .address
}

fn fp8_tile(machine: &MachineDescription, object: &Object) -> Tile {
    let mut tile = load_object(machine, object, 0).expect("load");
    let patterns: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
    tile.memory
        .load_unchecked(address(object, "f16_to_fp8_src"), &patterns)
        .unwrap();
    let vertex = address(object, "f16_to_fp8_vertex");
    tile.memory.write_u32(vertex + 8, FP8_GROUPS).unwrap();
    tile.memory.write_u32(vertex + 12, 1).unwrap();
    tile.memory.write_u32(vertex + 16, 0).unwrap();
    tile
}

fn bench_tile_loops(c: &mut Criterion) {
    let machine = machine();
    let mut group = c.benchmark_group("tile_loop");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));

    // Elementwise rpt loop.
    let object = build(&machine, &elementwise_source());
    let entry = address(&object, "work");
    let mode = EntryMode::Worker {
        entry,
        vertex: 0,
        worker_base: SCRATCH,
    };
    {
        let mut tile = load_object(&machine, &object, 0).unwrap();
        run_tile(&machine, &mut tile, mode, BUDGET).unwrap();
        assert_eq!(
            tile.counters.bundles, ELEMENTWISE_BUNDLES,
            "bundle count of the elementwise loop"
        );
        assert_eq!(tile.finished_at(), 6 * ELEMENTWISE_BUNDLES);
    }
    group.throughput(Throughput::Elements(ELEMENTWISE_BUNDLES));
    group.bench_function("rpt_ld64step_f16v4mul", |b| {
        b.iter_batched(
            || load_object(&machine, &object, 0).unwrap(),
            |mut tile| {
                let cycles = run_tile(&machine, &mut tile, mode, BUDGET).unwrap();
                black_box((cycles, tile))
            },
            BatchSize::PerIteration,
        )
    });

    // FP8 cast kernel, FP8_REPEATS runs on one tile.
    let object = build(&machine, FP8_KERNEL);
    let mode = EntryMode::Worker {
        entry: address(&object, "f16_to_fp8"),
        vertex: address(&object, "f16_to_fp8_vertex"),
        worker_base: SCRATCH,
    };
    let run_repeats = |tile: &mut Tile| {
        let mut cycles = 0;
        for _ in 0..FP8_REPEATS {
            cycles = run_tile(&machine, tile, mode, BUDGET).unwrap();
        }
        cycles
    };
    {
        let mut tile = fp8_tile(&machine, &object);
        run_repeats(&mut tile);
        assert_eq!(
            tile.counters.bundles,
            FP8_REPEATS * FP8_BUNDLES,
            "bundle count of the FP8 kernel"
        );
    }
    group.throughput(Throughput::Elements(FP8_REPEATS * FP8_BUNDLES));
    group.bench_function("fp8_cast_kernel", |b| {
        b.iter_batched(
            || fp8_tile(&machine, &object),
            |mut tile| {
                let cycles = run_repeats(&mut tile);
                black_box((cycles, tile))
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_tile_loops);
criterion_main!(benches);
