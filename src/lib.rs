//! Tessera: run and tune vision transformers on a simulated many-tile IPU-class processor.
//!
//! This package is the CLI and a facade over the workspace crates: [`isa`] (the tile ISA,
//! assembler, numerics and semantics) and [`sim`] (the cycle-accurate simulator), plus the
//! `.npy` reader and writer the CLI uses for inputs and outputs.

pub use tessera_isa as isa;
pub use tessera_kernels as kernels;
pub use tessera_sim as sim;

pub mod check;
pub mod chip_program;
pub mod pipeline;
pub mod random_graph;
pub mod report;

pub mod npy;
pub mod target;
pub mod tile_program;
