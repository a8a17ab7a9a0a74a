//! Whole-chip simulator throughput: simulated tile-cycles per host second on the 1472-tile
//! rotate program (each tile computes on local data with six workers, then sends its buffer to
//! its right neighbour through the exchange; several supersteps), with 1 and 2 host threads.
//! Criterion's throughput figure ("elem/s") is tile-cycles per second: running tiles × cycles
//! after start-up. Each iteration runs the loaded image from scratch (tile set-up included).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tessera::isa::asm::{assemble, LayoutOptions};
use tessera::isa::image::{
    Dtype, ElementOrder, HostDirection, HostPiece, HostTensor, Image, ObjectRules, RegionChoice,
};
use tessera::sim::{Chip, MachineDescription, RunOptions};

const WORDS: u32 = 256;
const STEPS: u32 = 8;

/// The rotate program of `sim/tests/it/chip_exchange.rs`: buf = 3 * rbuf + tile id on six workers,
/// then buf goes to the right neighbour's rbuf.
fn rotate_program(machine: &MachineDescription) -> String {
    let wait = (0..machine.tiles)
        .map(|t| machine.exchange.latency_cycles(t, (t + 1) % machine.tiles))
        .max()
        .unwrap_or(0)
        + 2;
    let mut vertices = String::new();
    let mut offset = 0;
    for worker in 0..6 {
        let count = WORDS / 6 + u32::from(worker < WORDS % 6);
        vertices += &format!(
            "    .int rbuf + {}, buf + {}, {}, addend\n",
            4 * offset,
            4 * offset,
            count - 1
        );
        offset += count;
    }
    let sends: String = (0..WORDS / 64)
        .map(|i| format!("    send 63, buf + {}, 0\n", 256 * i))
        .collect();
    format!(
        "
    .section .text.worker, \"ax\"
    .worker
    .align 8
scale_add:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    ld32 $m2, $mvertex_base, $mzero, 2
    ld32 $m3, $mvertex_base, $mzero, 3
    ld32 $m3, $m3, $mzero, 0
.Lloop:
    ld32step $m4, $mzero, $m0+=, 1
    mul $m4, $m4, 3
    add $m4, $m4, $m3
    st32step $m4, $mzero, $m1+=, 1
    brnzdec $m2, .Lloop
    exitz $mzero

    .section .text.supervisor, \"ax\"
    .supervisor
    .align 8
main:
    get $m0, $TILE_ID
    setzi $m1, addend
    st32 $m0, $m1, $mzero, 0
    cmpeq $m2, $m0, 0
    mul $m2, $m2, {tiles}
    add $m5, $m0, $m2
    setzi $m6, rbuf
    setzi $m7, {last}
    setzi $m8, scale_add
    setzi $m9, vertices - TMEM_REGION0_BASE_ADDR
.Lstep:
    runall $m8, $m9, 4
    sync TEXCH_SYNCZONE_LOCAL
    sync TEXCH_SYNCZONE_INTERNAL
    put $INCOMING_SINIT, $m6
    put $INCOMING_MUX, $m5
{sends}    delay {wait}
    put $INCOMING_MUX, $mzero
    sync TEXCH_SYNCZONE_INTERNAL
    brnzdec $m7, .Lstep
    br $m10

    .section .data.vertices
    .align 4
vertices:
{vertices}addend:
    .int 0
    .section .data.buf
    .align 8
buf:
    .space {bytes}
    .section .data.rbuf
    .align 8
rbuf:
    .space {bytes}
",
        tiles = machine.tiles,
        last = STEPS - 1,
        bytes = 4 * WORDS,
    )
}

fn rotate_image(machine: &MachineDescription) -> Image {
    let object = assemble(
        &[("rotate.S", rotate_program(machine))],
        &LayoutOptions::at(machine.sram.base),
    )
    .expect("rotate program assembles");
    let tiles: Vec<u32> = (0..machine.tiles).collect();
    let mut builder = machine.image_builder().expect("builder");
    builder
        .add_object(&tiles, &object, &ObjectRules::default())
        .expect("object");
    for &tile in &tiles {
        builder.set_entry_symbol(tile, "main", None).expect("entry");
        builder
            .alloc_worker_scratch(tile, 64, &RegionChoice::Any)
            .expect("scratch");
    }
    let rbuf = builder.symbol(0, "rbuf").expect("rbuf");
    let tensor = |name: &str, direction| HostTensor {
        name: name.into(),
        direction,
        dtype: Dtype::U32,
        shape: vec![u64::from(machine.tiles), u64::from(WORDS)],
        pieces: tiles
            .iter()
            .map(|&tile| HostPiece {
                tile,
                address: rbuf,
                tensor_byte_offset: u64::from(4 * WORDS * tile),
                bytes: 4 * WORDS,
                element_order: ElementOrder::RowMajor,
            })
            .collect(),
    };
    builder
        .add_host_tensor(tensor("x", HostDirection::Input))
        .expect("x");
    builder
        .add_host_tensor(tensor("y", HostDirection::Output))
        .expect("y");
    builder.finish().expect("image")
}

fn chip_rotate(c: &mut Criterion) {
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let image = rotate_image(&machine);
    let input: Vec<u8> = (0..machine.tiles * WORDS)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
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
