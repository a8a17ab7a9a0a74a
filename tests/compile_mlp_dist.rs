//! The MLP block through the graph and distributed levels: layouts, rewrites, the verifier (with
//! deliberately broken programs), the dump (snapshot) and the planner.

use expect_test::expect;
use tessera_codegen::dist::{
    dump::dump, from_graph::distribute, rewrite, verify::verify, Distribution, Grid, MidOp, Order,
};
use tessera_models::siglip::{config::SiglipVisionConfig, graph::mlp_block};

fn distributed() -> tessera_codegen::dist::MidProgram {
    let config = SiglipVisionConfig::tiny();
    let graph = mlp_block(&config, 16, 1).unwrap();
    let mut program = distribute(&graph, Grid::new(2, 4, 16)).unwrap();
    verify(&program).unwrap();
    let fused = rewrite::fuse_fp8_casts(&mut program);
    assert_eq!(fused.applied.len(), 2, "{fused:?}");
    rewrite::prune(&mut program);
    verify(&program).unwrap();
    program
}

#[test]
fn mlp_block_distributes_and_rewrites() {
    let program = distributed();
    expect![[r#"
        grid 2x4 (8 tiles), row blocks of 8..8
        %0: f16[16, 64] @ row-segments/rows/64 = input  "x"  // x
        %1: f32[1, 64] @ replicated/vector = weight  "vision_model.encoder.layers.0.layer_norm2.weight"  // vision_model.encoder.layers.0.layer_norm2.weight
        %2: f32[1, 64] @ replicated/vector = weight  "vision_model.encoder.layers.0.layer_norm2.bias"  // vision_model.encoder.layers.0.layer_norm2.bias
        %3: f143<-4>[16, 64] @ row-segments/rows/64 = layernorm %0, %1, %2, eps=1e-6  // fc1.in
        %4: f143<-4>[16, 64] @ row-blocks/rows/64 = gather %3  // fc1.in.gathered
        %5: f143<-4>[16, 64] @ row-blocks/panels = to_panels %4  // fc1.in.panels
        %6: f143<-10>[64, 128] @ weight-columns(32)/cwei = weight  "vision_model.encoder.layers.0.mlp.fc1.weight"  // vision_model.encoder.layers.0.mlp.fc1.weight
        %7: f16[16, 128] @ blocks(cols 32)/rows/32 = matmul %5, %6  // fc1
        %8: f16[1, 128] @ vector-columns(32)/vector = weight  "vision_model.encoder.layers.0.mlp.fc1.bias"  // vision_model.encoder.layers.0.mlp.fc1.bias
        %9: f16[16, 128] @ blocks(cols 32)/rows/32 = bias_add %7, %8  // fc1.bias
        %10: f143<-4>[16, 128] @ blocks(cols 32)/rows/32 = gelu %9  // fc2.in
        %11: f143<-4>[16, 128] @ blocks(cols 32)/panels = to_panels %10  // fc2.in.panels
        %12: f143<-4>[16, 128] @ row-blocks/panels = gather %11  // fc2.in.gathered
        %13: f143<-10>[128, 64] @ weight-columns(0..32)/cwei = weight  "vision_model.encoder.layers.0.mlp.fc2.weight"  // vision_model.encoder.layers.0.mlp.fc2.weight
        %14: f16[16, 64] @ blocks(cols 0..32)/rows/32 = matmul %12, %13  // fc2
        %15: f16[1, 64] @ vector-columns(0..32)/vector = weight  "vision_model.encoder.layers.0.mlp.fc2.bias"  // vision_model.encoder.layers.0.mlp.fc2.bias
        %16: f16[16, 64] @ blocks(cols 0..32)/rows/32 = bias_add %14, %15  // fc2.bias
        %17: f16[16, 64] @ blocks(cols 0..32)/rows/32 = input  "x"  // x
        %18: f16[16, 64] @ blocks(cols 0..32)/rows/32 = add %17, %16  // residual2
        %19: f16[16, 64] @ blocks(cols 0..32)/rows/32 = output %18 "y"  // y
    "#]]
    .assert_eq(&dump(&program));
}

#[test]
fn the_verifier_rejects_broken_programs() {
    // A matmul whose left operand is not in panels.
    let mut program = distributed();
    let a = program
        .ops
        .iter()
        .position(|op| matches!(op, MidOp::ToPanels { .. }))
        .unwrap();
    program.values[a].layout.order = Order::RowMajor { stride: 64 };
    let error = verify(&program).unwrap_err();
    assert!(
        error.to_string().contains("to_panels takes FP8 rows")
            || error.to_string().contains("a must be row blocks in panels"),
        "{error}"
    );
    // A matmul whose weights have the wrong inner dimension.
    let mut program = distributed();
    let w = program
        .ops
        .iter()
        .position(|op| matches!(op, MidOp::Weight { tensor } if tensor.ends_with("fc1.weight")))
        .unwrap();
    program.values[w].rows = 63;
    assert_eq!(verify(&program).unwrap_err().code, 23);
    // A gather of a layout it cannot gather.
    let mut program = distributed();
    let g = program
        .ops
        .iter()
        .position(|op| matches!(op, MidOp::Gather { .. }))
        .unwrap();
    program.values[g].layout.distribution = Distribution::Replicated;
    assert_eq!(verify(&program).unwrap_err().code, 13);
    // An operand used before it is defined.
    let mut program = distributed();
    program.ops.swap(3, 4);
    assert!(verify(&program).is_err());
}

#[test]
fn a_fusion_is_refused_when_the_f16_value_has_another_reader() {
    let config = SiglipVisionConfig::tiny();
    let graph = mlp_block(&config, 16, 1).unwrap();
    let mut program = distribute(&graph, Grid::new(2, 4, 16)).unwrap();
    // Give the LayerNorm's f16 result a second reader.
    let ln = program
        .ops
        .iter()
        .position(|op| matches!(op, MidOp::LayerNorm { .. }))
        .unwrap();
    let value = program.values[ln].clone();
    program.push(
        MidOp::Output {
            x: tessera_codegen::dist::ValueId(ln as u32),
            tensor: "ln".into(),
        },
        value,
    );
    let log = rewrite::fuse_fp8_casts(&mut program);
    assert_eq!(log.applied.len(), 1, "{log:?}");
    assert!(log.refused[0].contains("other readers"), "{log:?}");
}

#[test]
fn the_planner_costs_candidates_and_places_the_best() {
    use tessera_codegen::graph::weights::fit_fp8_weight_scales;
    use tessera_codegen::plan::{plan, PlanOptions};
    use tessera_codegen::target::Target;
    use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
    let config = SiglipVisionConfig::tiny();
    let mut graph = mlp_block(&config, 16, 1).unwrap();
    let store = synthetic_weights(
        &config,
        &WeightSelection {
            layers: 1,
            embeddings: false,
            post_layernorm: false,
        },
        1,
    );
    fit_fp8_weight_scales(&mut graph, &store).unwrap();
    let target = Target::test_small();
    let options = PlanOptions::for_target(&target);
    let first = plan(&graph, &store, &target, &options).unwrap();
    let report = first.report.text();
    assert!(report.contains("chosen"), "{report}");
    assert!(first.report.explored.len() <= options.max_candidates);
    assert!(!first.report.stop_reason.is_empty());
    // Deterministic.
    let second = plan(&graph, &store, &target, &options).unwrap();
    assert_eq!(report, second.report.text());
    assert_eq!(first.estimate, second.estimate);
}
