//! Encoder layers compiled as one loop: a four-layer tower whose layer is planned, lowered and
//! emitted once and run four times, bit-exact against the plan's reference and close to the
//! host f32 reference and the graph interpreter; and the structural promise behind it — the
//! supervisor programs, vertex state and exchange phases do not grow with the layer count.

use tessera::pipeline::{
    compile_graph, run_and_check, synthetic_pixels, tower_graph, Model, RunRecording, RunSpec,
};
use tessera_codegen::compile::CompiledGraph;
use tessera_codegen::graph::{evaluate, HostTensor};
use tessera_codegen::plan::PlanOptions;
use tessera_models::reference::compare;
use tessera_models::siglip::config::SiglipVisionConfig;
use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
use tessera_sim::MachineDescription;

/// A seeded tower the size of the transformers test checkpoints (56×56 pixels in patches of
/// 14: 16 tokens, hidden 64, MLP 256, 4 heads) with `layers` layers and the pooling head.
fn model(layers: usize) -> Model {
    let config = SiglipVisionConfig {
        intermediate_size: 256,
        num_hidden_layers: layers,
        ..SiglipVisionConfig::tiny()
    };
    let mut store = synthetic_weights(&config, &WeightSelection::full(&config), 7);
    tessera_models::siglip::add_derived_weights(&config, &mut store).unwrap();
    Model {
        layers,
        head: true,
        source: "test".into(),
        config,
        store,
        info: None,
    }
}

fn spec(layers: usize) -> RunSpec {
    RunSpec {
        batch: 2,
        layers,
        head: true,
        fp8: true,
        k_parts: None,
        key_blocks: Some(1),
        values_transposed: None,
    }
}

fn compiled(machine: &MachineDescription, model: &Model, layer_loop: bool) -> CompiledGraph {
    let graph = tower_graph(model, &spec(model.layers)).unwrap();
    let mut options = PlanOptions::for_target(&tessera::target::target_of(machine));
    options.layer_loop = layer_loop;
    compile_graph(machine, &graph, &model.store, &options, None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_four_layer_tower_compiled_as_a_loop_runs_bit_exactly() {
    let machine = MachineDescription::builtin("small").unwrap();
    let model = model(4);
    let compiled = compiled(&machine, &model, true);
    let program = &compiled.lowered.program;
    let looped = program.looped.as_ref().expect("the layers are a loop");
    assert_eq!(looped.count, 4);
    assert!(
        looped.layered.iter().any(|l| !l.is_empty()),
        "no layered weights"
    );
    let pixels = synthetic_pixels(&model.config, 2, 3);
    let outcome = run_and_check(
        &machine,
        &model,
        &spec(4),
        &compiled,
        &pixels,
        RunRecording {
            kernel_spans: true,
            ..RunRecording::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.bit_exact(), "{:?}", outcome.mismatches);
    // One superstep per step as it ran: the body's once per layer.
    assert_eq!(
        outcome.report.supersteps as usize,
        program.executed_steps().len()
    );
    assert_eq!(
        program.executed_steps().len(),
        program.steps.len() + 3 * (looped.last + 1 - looped.first)
    );
    for (name, error) in &outcome.errors {
        assert!(error.relative_rms < 0.15, "{name}: {}", error.relative_rms);
        assert_eq!(error.non_finite, 0, "{name}");
    }
    // Every layer's own weights were used: the graph interpreter (layers unrolled) agrees.
    let graph = tower_graph(&model, &spec(4)).unwrap();
    let input = HostTensor::new(pixels.shape().to_vec(), pixels.data().to_vec()).unwrap();
    let inputs = [("pixel_values".to_string(), input)].into_iter().collect();
    let interpreted = evaluate(&graph, &inputs, &model.store).unwrap();
    for (name, _, values) in &outcome.outputs {
        let error = compare(&interpreted[name].data, values);
        assert!(error.relative_rms < 8e-2, "{name}: {}", error.relative_rms);
    }
}

#[test]
fn a_loop_emits_code_vertex_state_and_exchange_programs_once() {
    let machine = MachineDescription::builtin("small").unwrap();
    let three = compiled(&machine, &model(3), true);
    let five = compiled(&machine, &model(5), true);
    let (a, b) = (&three.lowered.program, &five.lowered.program);
    assert_eq!(a.looped.as_ref().map(|l| l.count), Some(3));
    assert_eq!(b.looped.as_ref().map(|l| l.count), Some(5));
    // The same steps and exchange phases, the same supervisor program and vertex state on
    // every tile: only the weights grow.
    assert_eq!(a.steps, b.steps);
    assert_eq!(a.phases.len(), b.phases.len());
    assert_eq!(
        three.back.report.program_bytes,
        five.back.report.program_bytes
    );
    assert_eq!(
        three.back.report.vertex_bytes,
        five.back.report.vertex_bytes
    );
    assert_eq!(
        three.back.report.phase_cycles,
        five.back.report.phase_cycles
    );
    // Unrolled, the five layers' steps and programs are there five times.
    let unrolled = compiled(&machine, &model(5), false);
    assert!(unrolled.lowered.program.looped.is_none());
    assert!(unrolled.lowered.program.steps.len() > b.steps.len() + 3 * 4);
    let most = |c: &CompiledGraph| c.back.report.program_bytes.iter().map(|p| p.1).max();
    assert!(most(&unrolled) > most(&five).map(|m| m * 2));
    // The estimate counts the body once per layer.
    let l = b.looped.as_ref().unwrap();
    let body: u64 = five.estimate.steps[l.first..=l.last]
        .iter()
        .map(|s| s.1)
        .sum();
    assert_eq!(five.estimate.cycles - three.estimate.cycles, 2 * body);
}

/// The plan's reference executor releases each buffer after its last step (as `execute` runs
/// it): the outputs are the same bytes as when it keeps every buffer, over a loop whose
/// buffers are used once per layer, and what it holds at the end is the outputs' buffers only.
#[test]
fn the_reference_executor_releasing_dead_buffers_gives_the_same_outputs() {
    use tessera_codegen::refexec::RefExec;
    let machine = MachineDescription::builtin("small").unwrap();
    let model = model(3);
    let compiled = compiled(&machine, &model, true);
    let program = &compiled.lowered.program;
    let pixels = synthetic_pixels(&model.config, 2, 5);
    let input: Vec<u8> = pixels.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    let inputs = [("pixel_values", input)];
    let run = |release: bool| {
        let mut exec = RefExec::new(program, &inputs).unwrap();
        if release {
            exec.release_dead_buffers();
        }
        let mut peak = 0;
        while exec.step().unwrap() {
            peak = peak.max(exec.held_bytes());
        }
        (exec.outputs().unwrap(), peak, exec.held_bytes())
    };
    let (kept, kept_peak, kept_end) = run(false);
    let (released, released_peak, released_end) = run(true);
    assert_eq!(kept, released);
    let output_bytes: usize = program
        .outputs
        .iter()
        .flat_map(|o| &o.pieces)
        .map(|p| p.bytes as usize)
        .sum();
    assert!(
        released_peak < kept_peak,
        "peak {released_peak} bytes releasing, {kept_peak} keeping"
    );
    assert!(
        released_end < kept_end && released_end >= output_bytes,
        "at the end {released_end} bytes releasing ({kept_end} keeping, outputs {output_bytes})"
    );
    assert_eq!(
        tessera_codegen::refexec::execute(program, &inputs).unwrap(),
        released
    );
}
