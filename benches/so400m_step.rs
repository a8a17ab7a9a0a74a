//! One compiled So400m/14 step on the whole chip: the encoder's fc1 product at batch 1
//! (`[729, 1152] × [1152, 4304]`, activations cast to FP8 F143, weights FP8 F143 with their
//! fitted scale, f16 out), planned and lowered as `tessera run` plans it, on all 1472 tiles of
//! ipu21 — issue 33's bench of the simulator on a real workload's superstep.
//!
//! Printed once: the simulated cycles, supersteps, tile-cycles and bundles of one run, and
//! whether the outputs are bit-exact against the plan's reference executor. Timed by criterion
//! with 1 and 2 host threads: one run of the loaded image (tile set-up included); throughput in
//! tile-cycles per second.

use criterion::{criterion_group, criterion_main, Criterion};

mod common;
use tessera::pipeline::compile_graph;
use tessera::random_graph::random;
use tessera::sim::{Chip, MachineDescription, RunOptions};
use tessera_codegen::graph::weights::{fit_fp8_weight_scales, HostTensor, WeightStore};
use tessera_codegen::graph::{DType, GraphBuilder};
use tessera_codegen::refexec;
use tessera_isa::numerics::Fp8Format;

/// Tokens, hidden width and MLP width of So400m/14 at 378×378.
const TOKENS: usize = 729;
const HIDDEN: usize = 1152;
const MLP: usize = 4304;

fn so400m_fc1(c: &mut Criterion) {
    let machine = MachineDescription::builtin("ipu21").expect("ipu21");
    let fp8 = |scale| DType::Fp8 {
        format: Fp8Format::F143,
        scale,
    };
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F16, [TOKENS, HIDDEN]).expect("x");
    let x8 = b.cast("fc1.in", x, fp8(-4)).expect("cast");
    let w = b.weight("fc1.weight", fp8(0), [HIDDEN, MLP]).expect("w");
    let y = b.matmul("fc1", x8, w).expect("fc1");
    b.output("y", y).expect("output");
    let mut graph = b.finish().expect("a valid graph");
    let mut store = WeightStore::new();
    store.insert(
        "fc1.weight",
        HostTensor::new([HIDDEN, MLP], random(1, HIDDEN * MLP, 0.03)).expect("weight"),
    );
    fit_fp8_weight_scales(&mut graph, &store).expect("scales");
    let options =
        tessera_codegen::plan::PlanOptions::for_target(&tessera::target::target_of(&machine));
    let compiled = compile_graph(&machine, &graph, &store, &options, None).expect("it compiles");
    let input: Vec<u8> = random(2, TOKENS * HIDDEN, 1.0)
        .iter()
        .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
        .collect();
    let inputs = [("x", input)];
    let mut chip = Chip::new(&machine).expect("chip");
    chip.load_image(&compiled.back.image).expect("load");
    let probe = chip.run(&inputs, &RunOptions::default()).expect("run");
    let expected = refexec::execute(&compiled.lowered.program, &inputs).expect("reference");
    let exact = expected
        .iter()
        .all(|(name, want)| probe.output(name) == Some(want.as_slice()));
    println!(
        "So400m fc1 on ipu21: {} tiles, {} cycles after start-up, {} supersteps, {} tile-cycles, \
         {} bundles per run; bit-exact vs the plan's reference: {}",
        compiled.back.report.running_tiles.len(),
        probe.total_cycles - probe.startup_cycles,
        probe.supersteps,
        probe.tile_cycles,
        probe.profile.bundles.iter().sum::<u64>(),
        if exact { "yes" } else { "NO" }
    );
    assert!(exact, "the simulated product differs from its reference");
    common::run_by_threads(c, "so400m_fc1_ipu21", probe.tile_cycles, &mut chip, &inputs);
}

criterion_group!(benches, so400m_fc1);
criterion_main!(benches);
