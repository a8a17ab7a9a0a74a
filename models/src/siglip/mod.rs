//! SigLIP vision tower (So400m/14 and smaller SigLIP-shaped models).

pub mod config;
pub mod graph;
pub mod weights;

pub use config::{ConfigError, HiddenAct, SiglipVisionConfig};
pub use graph::{
    encoder, encoder_layer, encoder_layer_with, encoder_with, layer_prefix, mlp_block,
    mlp_block_with, ModelGraphError, Precision,
};
pub use weights::{
    load_safetensors, load_safetensors_file, names, store_tensors, synthetic_weights,
    to_safetensors, WeightError, WeightSelection,
};
