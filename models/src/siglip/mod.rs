//! SigLIP vision tower (So400m/14 and smaller SigLIP-shaped models).

mod attention;
pub mod checkpoint;
pub mod config;
pub mod derived;
pub mod graph;
mod head;
mod k_split;
mod layout;
mod projections;
pub mod save;
mod shard_index;
mod tensor_file;
pub mod weights;

pub use checkpoint::{
    load_checkpoint, read_config, Checkpoint, CheckpointError, CheckpointInfo, SourceDtype,
};
pub use config::{ConfigError, HiddenAct, SiglipVisionConfig};
pub use derived::{add_derived_weights, remove_derived_weights};
pub use graph::{
    encoder, encoder_layer, encoder_layer_with, encoder_with, layer_prefix, mlp_block,
    mlp_block_with, vision_tower, ModelGraphError, Precision, TowerSpec,
};
pub use save::{save_checkpoint, SaveOptions};
pub use weights::{
    load_safetensors, load_safetensors_file, names, store_tensors, synthetic_weights,
    to_safetensors, to_safetensors_prefixed, WeightError, WeightSelection,
};
