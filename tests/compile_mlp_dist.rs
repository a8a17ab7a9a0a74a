//! The MLP block through the graph and distributed levels: layouts, rewrites, verifier, dump.

use tessera_codegen::dist::{dump::dump, from_graph::distribute, rewrite, verify::verify, Grid};
use tessera_models::siglip::{config::SiglipVisionConfig, graph::mlp_block};

#[test]
fn mlp_block_distributes_and_rewrites() {
    let config = SiglipVisionConfig::tiny();
    let graph = mlp_block(&config, 16, 1).unwrap();
    let mut program = distribute(&graph, Grid::new(2, 4, 16)).unwrap();
    verify(&program).unwrap();
    let fused = rewrite::fuse_fp8_casts(&mut program);
    rewrite::prune(&mut program);
    verify(&program).unwrap();
    assert_eq!(fused.applied.len(), 2, "{fused:?}");
    println!("{}", dump(&program));
}

#[test]
fn the_planner_costs_candidates_and_places_the_best() {
    use tessera_codegen::graph::weights::fit_fp8_weight_scales;
    use tessera_codegen::plan::{plan, PlanOptions};
    use tessera_codegen::target::Target;
    use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
    let config = SiglipVisionConfig::tiny();
    let mut graph = mlp_block(&config, 16, 1).unwrap();
    let store = synthetic_weights(&config, &WeightSelection { layers: 1, embeddings: false, post_layernorm: false }, 1);
    fit_fp8_weight_scales(&mut graph, &store).unwrap();
    let target = Target::test_small();
    let plan = plan(&graph, &store, &target, &PlanOptions::for_target(&target)).unwrap();
    println!("{}", plan.report.text());
    println!("{:?}", plan.estimate);
}
