//! The SigLIP graphs, executed by the graph interpreter, against the independent f32 host
//! reference: f16 graphs must agree closely, FP8 graphs within the error FP8 brings.

use std::collections::BTreeMap;

use tessera_codegen::graph::{
    check_weights, evaluate, fit_fp8_weight_scales, verify, DType, Graph, HostTensor, WeightStore,
};
use tessera_models::input::synthetic_activations_f32;
use tessera_models::reference::{self, compare, ErrorReport};
use tessera_models::siglip::{
    encoder_layer_with, encoder_with, load_safetensors, mlp_block_with, synthetic_weights,
    to_safetensors, Precision, SiglipVisionConfig, WeightSelection,
};

fn run(graph: &Graph, x: &[f32], store: &WeightStore) -> Vec<f32> {
    let shape = graph
        .ty(graph.inputs().next().unwrap().0)
        .unwrap()
        .shape
        .clone();
    let inputs = BTreeMap::from([("x".to_string(), HostTensor::new(shape, x.to_vec()).unwrap())]);
    evaluate(graph, &inputs, store)
        .unwrap()
        .remove("y")
        .unwrap()
        .data
}

fn setup(layers: usize) -> (SiglipVisionConfig, WeightStore) {
    let c = SiglipVisionConfig::tiny();
    let mut store = synthetic_weights(&c, &WeightSelection::encoder(layers), 2024);
    // The padded heads' projections the graph reads (`derived::qkv_heads`).
    tessera_models::siglip::add_derived_weights(&c, &mut store).unwrap();
    (c, store)
}

fn fitted(mut graph: Graph, store: &WeightStore) -> Graph {
    check_weights(&graph, store).unwrap();
    fit_fp8_weight_scales(&mut graph, store).unwrap();
    verify(&graph).unwrap();
    graph
}

/// The error of the block's contribution `y − x` (the residual stream dominates `y`).
fn delta_report(x: &[f32], expect: &[f32], actual: &[f32]) -> ErrorReport {
    let d = |y: &[f32]| y.iter().zip(x).map(|(a, b)| a - b).collect::<Vec<f32>>();
    compare(&d(expect), &d(actual))
}

fn assert_within(report: ErrorReport, relative_rms: f64, what: &str) {
    eprintln!("{what}: {report}");
    assert_eq!(report.non_finite, 0, "{what}: {report}");
    assert!(report.relative_rms < relative_rms, "{what}: {report}");
}

#[test]
fn mlp_block_f16_and_fp8() {
    let (c, store) = setup(1);
    let t = c.num_patches();
    for batch in [1, 2] {
        let x = synthetic_activations_f32(batch * t, c.hidden_size, 7);
        let expect = reference::mlp_block(&c, &store, 0, &x, batch * t).unwrap();

        let g = fitted(
            mlp_block_with(&c, t, batch, &Precision::f16()).unwrap(),
            &store,
        );
        let y16 = run(&g, &x, &store);
        let r16 = compare(&expect, &y16);
        assert_within(r16, 2e-3, "mlp f16");
        assert_within(delta_report(&x, &expect, &y16), 2e-2, "mlp f16 delta");

        let g = fitted(
            mlp_block_with(&c, t, batch, &Precision::default()).unwrap(),
            &store,
        );
        let y8 = run(&g, &x, &store);
        let r8 = compare(&expect, &y8);
        // The residual dominates the output; FP8 error shows on top of f16's.
        assert_within(r8, 2e-2, "mlp fp8");
        assert_within(delta_report(&x, &expect, &y8), 6e-2, "mlp fp8 delta");
        assert!(r8.rms > r16.rms, "fp8 {r8} vs f16 {r16}");
    }
}

#[test]
fn encoder_layer_f16_and_fp8() {
    let (c, store) = setup(1);
    let t = c.num_patches();
    for batch in [1, 2] {
        let x = synthetic_activations_f32(batch * t, c.hidden_size, 8);
        let expect = reference::encoder_layer(&c, &store, 0, &x, t, batch).unwrap();
        let g = fitted(
            encoder_layer_with(&c, t, batch, &Precision::f16()).unwrap(),
            &store,
        );
        let y = run(&g, &x, &store);
        assert_within(compare(&expect, &y), 2e-3, "layer f16");
        assert_within(delta_report(&x, &expect, &y), 2e-2, "layer f16 delta");
        let g = fitted(
            encoder_layer_with(&c, t, batch, &Precision::default()).unwrap(),
            &store,
        );
        let y = run(&g, &x, &store);
        assert_within(compare(&expect, &y), 3e-2, "layer fp8");
        assert_within(delta_report(&x, &expect, &y), 6e-2, "layer fp8 delta");
    }
}

#[test]
fn encoder_repeat_matches_layer_by_layer_reference() {
    let (c, store) = setup(2);
    let t = c.num_patches();
    let x = synthetic_activations_f32(t, c.hidden_size, 9);
    let expect = reference::encoder(&c, &store, 2, &x, t, 1).unwrap();
    let g = fitted(
        encoder_with(&c, t, 1, 2, &Precision::f16()).unwrap(),
        &store,
    );
    assert_within(compare(&expect, &run(&g, &x, &store)), 3e-3, "encoder f16");
    let g = fitted(
        encoder_with(&c, t, 1, 2, &Precision::default()).unwrap(),
        &store,
    );
    assert_within(compare(&expect, &run(&g, &x, &store)), 4e-2, "encoder fp8");
}

#[test]
fn fitted_weight_scales_hold_the_largest_weight() {
    let (c, store) = setup(2);
    let mut g = encoder_with(&c, c.num_patches(), 1, 2, &Precision::default()).unwrap();
    let choices = fit_fp8_weight_scales(&mut g, &store).unwrap();
    assert_eq!(choices.len(), 4); // qkv, out_proj, fc1, fc2
    for ch in &choices {
        let top = DType::f143(ch.scale).max_finite();
        assert!(
            ch.max_abs as f64 <= top && ch.max_abs as f64 > top / 2.0,
            "{ch:?}"
        );
        assert!(
            ch.name.starts_with("vision_model.encoder.layers.{i}."),
            "{ch:?}"
        );
    }
}

#[test]
fn checkpoint_to_graph_to_output() {
    // A checkpoint written in Hugging Face layout, loaded back, drives the graph.
    let (c, store) = setup(1);
    let c = SiglipVisionConfig {
        num_hidden_layers: 1,
        ..c
    };
    let sel = WeightSelection::encoder(1);
    let bytes = to_safetensors(&store, &c, &sel).unwrap();
    let mut loaded = load_safetensors(&bytes, &c, &sel).unwrap();
    tessera_models::siglip::add_derived_weights(&c, &mut loaded).unwrap();
    let t = c.num_patches();
    let x = synthetic_activations_f32(t, c.hidden_size, 10);
    let g = fitted(
        encoder_layer_with(&c, t, 1, &Precision::default()).unwrap(),
        &loaded,
    );
    assert_eq!(run(&g, &x, &loaded), run(&g, &x, &store));
}
