//! The models crate's integration tests, one binary (each `tests/*.rs` file would link the workspace again): checkpoints, images, graphs against the host reference, transformers' oracle data.

mod checkpoint_load;
mod graph_vs_reference;
mod hf_oracle;
mod image_preprocessing;
mod support;
