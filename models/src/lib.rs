//! Models for Tessera: SigLIP vision-encoder graphs built with the codegen graph API, Hugging
//! Face `config.json` and `model.safetensors` loading, seeded synthetic weights and inputs,
//! image preprocessing, and a host f32 reference forward to measure error against.
//!
//! - [`siglip`]: configs ([`siglip::config`]), checkpoint directories as transformers writes
//!   them ([`siglip::checkpoint::load_checkpoint`], [`siglip::save::save_checkpoint`]), the
//!   weight store layout and synthetic weights ([`siglip::weights`]), graphs
//!   ([`siglip::graph`]).
//! - Inputs: [`pixels::PixelValues`] (transformers' `pixel_values`, validated, cut into
//!   patches), [`preprocess`] (image files → `pixel_values`, with [`resample`]'s Pillow-exact
//!   bicubic resize), [`input`] (seeded activations and images).
//! - [`reference`](mod@reference): the host forward, from single blocks to the whole tower with its pooling
//!   head ([`reference::vision_tower`]).
//!
//! Uses only `tessera_codegen::graph` (the graph IR and its weight store), never lowering
//! internals; from `tessera_isa`, only the FP8 format names and the seeded generator
//! ([`tessera_isa::rng`]).

pub mod input;
pub mod pixels;
pub mod preprocess;
pub mod reference;
pub mod resample;
pub mod siglip;
