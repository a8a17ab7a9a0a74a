//! Fuzzes SigLIP `config.json` parsing and validation (`SiglipVisionConfig::from_json_str`) on
//! arbitrary bytes (UTF-8 only, as the file reader requires). Checks: it never panics; an
//! accepted config passes `validate` again and its derived sizes do not panic; it survives the
//! write/read round trip `save_checkpoint` and `read_config` rely on (`serde_json::to_value` →
//! `from_json_value` gives the same config); and for small configs (D ≤ 64, F ≤ 256, ≤ 2
//! layers, image ≤ 64, ≤ 4 channels) the graph builder does not panic and a graph it returns
//! passes the graph verifier, and synthetic weights written with `to_safetensors` load back
//! equal with `load_safetensors` (its documented inverse).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_codegen::graph::verify;
use tessera_models::siglip::{
    load_safetensors, synthetic_weights, to_safetensors, vision_tower, Precision,
    SiglipVisionConfig, TowerSpec, WeightSelection,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let config = match SiglipVisionConfig::from_json_str(text) {
        Ok(config) => config,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    config
        .validate()
        .unwrap_or_else(|e| panic!("an accepted config fails validate: {e}"));
    let _ = (
        config.head_dim(),
        config.patches_per_side(),
        config.num_patches(),
        config.patch_dim(),
        config.pixels_per_image(),
    );
    let value = serde_json::to_value(&config).expect("configs serialize");
    let again = SiglipVisionConfig::from_json_value(&value)
        .unwrap_or_else(|e| panic!("a written config does not read back: {e}\n{value}"));
    assert_eq!(again, config, "config.json round trip");

    let small = config.hidden_size <= 64
        && config.intermediate_size <= 256
        && config.num_hidden_layers <= 2
        && config.image_size <= 64
        && config.num_channels <= 4;
    if !small {
        return;
    }
    let spec = TowerSpec {
        batch: 1,
        layers: config.num_hidden_layers,
        head: config.vision_use_head,
        precision: Precision::f16(),
    };
    if let Ok(graph) = vision_tower(&config, &spec) {
        verify(&graph).unwrap_or_else(|e| panic!("vision_tower built an invalid graph: {e}"));
    }
    let selection = WeightSelection::full(&config);
    let store = synthetic_weights(&config, &selection, 7);
    let bytes = to_safetensors(&store, &config, &selection)
        .unwrap_or_else(|e| panic!("synthetic weights do not write: {e}"));
    let loaded = load_safetensors(&bytes, &config, &selection)
        .unwrap_or_else(|e| panic!("written weights do not load: {e}"));
    assert_eq!(loaded, store, "to_safetensors → load_safetensors round trip");
});
