//! End to end: the SigLIP MLP block (small shapes) compiled for the small machine, simulated on
//! every tile, bit-exact against the plan's reference and within FP8 tolerance of f32.

use tessera::model_run::{compile_graph, run_mlp_block, GraphSpec};
use tessera_codegen::plan::PlanOptions;
use tessera_models::siglip::config::SiglipVisionConfig;
use tessera_sim::MachineDescription;

fn spec(tokens: usize, hidden: usize, mlp: usize) -> GraphSpec {
    let mut config = SiglipVisionConfig::tiny();
    config.hidden_size = hidden;
    config.intermediate_size = mlp;
    GraphSpec {
        config,
        tokens,
        seed: 3,
    }
}

#[test]
fn mlp_block_on_the_small_machine_is_bit_exact_to_its_plan() {
    let machine = MachineDescription::builtin("small").unwrap();
    let spec = spec(24, 64, 128);
    let (graph, store) = spec.mlp_block().unwrap();
    let target = tessera::target::target_of(&machine);
    let compiled =
        compile_graph(&machine, &graph, &store, &PlanOptions::for_target(&target)).unwrap();
    println!("{}", compiled.plan.report.text());
    let run = run_mlp_block(&machine, &spec, &compiled, &store, Some(2), None).unwrap();
    println!(
        "cycles {} (estimate {}), error {:?}",
        run.report.total_cycles, compiled.plan.estimate.cycles, run.error
    );
    assert_eq!(
        run.plan_mismatches, 0,
        "simulated outputs differ from the plan's bit-exact reference"
    );
    // FP8 activations and weights: a few percent of the block's output scale.
    assert!(run.error.relative_rms < 0.05, "{:?}", run.error);
}
