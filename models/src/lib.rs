//! Models for Tessera: SigLIP vision-encoder graphs built with the codegen graph API, Hugging
//! Face `config.json` and `model.safetensors` loading, seeded synthetic weights and inputs,
//! image preprocessing, and a host f32 reference forward to measure error against.
//!
//! Uses only `tessera_codegen::graph` (the graph IR and its weight store); never lowering
//! internals.

pub mod input;
pub mod pixels;
pub mod preprocess;
pub mod reference;
pub mod resample;
mod rng;
pub mod siglip;
