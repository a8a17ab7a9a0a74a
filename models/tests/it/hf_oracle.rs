//! Against transformers itself: the two checkpoints in `testdata/hf` are loaded and run
//! through the host reference on transformers' own `pixel_values`, and every intermediate
//! (embeddings, each layer, `last_hidden_state`, `pooler_output`) must match what transformers
//! computed, to float32 rounding.

use crate::support::{npy, oracle};

use tessera_models::pixels::PixelValues;
use tessera_models::reference::{compare, vision_tower};
use tessera_models::siglip::load_checkpoint;

/// Max |diff| allowed: float32 rounding of a few hundred accumulations on values of order 1
/// (measured: at most 2.8e-6, on `siglip-bf16-sharded`'s `last_hidden_state`).
const TOL: f64 = 1e-5;

fn check(case: &str) {
    let dir = oracle(case);
    let ck = load_checkpoint(&dir, None).unwrap();
    let (shape, data) = npy(&dir.join("pixel_values.npy"));
    let pixels = PixelValues::new(&shape, data).unwrap();
    let out = vision_tower(
        &ck.config,
        &ck.weights,
        &pixels,
        ck.selection.layers,
        ck.info.head,
    )
    .unwrap();
    let pooled = out
        .pooler_output
        .clone()
        .expect("the oracle models have a head");
    let layers = &out.layer_outputs;
    for (name, ours) in [
        ("embeddings", &out.embeddings),
        ("layer0_out", &layers[0]),
        ("layer1_out", &layers[1]),
        ("last_hidden_state", &out.last_hidden_state),
        ("pooler_output", &pooled),
    ] {
        let (shape, expected) = npy(&dir.join("expected").join(format!("{name}.npy")));
        assert_eq!(expected.len(), ours.len(), "{case} {name} {shape:?}");
        let r = compare(&expected, ours);
        eprintln!("{case} {name} {shape:?}: {r}");
        assert_eq!(r.non_finite, 0, "{case} {name}: {r}");
        assert!(r.max_abs <= TOL, "{case} {name}: {r}");
    }
}

#[test]
fn vision_f32_matches_transformers() {
    check("vision-f32");
}

#[test]
fn siglip_bf16_sharded_matches_transformers() {
    check("siglip-bf16-sharded");
}
