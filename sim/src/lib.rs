//! Tessera simulator: a cycle-accurate model of an ipu21-class tile and chip. Depends only on
//! the ISA crate; knows nothing of graphs, kernels or planners: it runs programs.
pub mod chip;
pub mod error;
pub mod machine;
pub mod memory;
pub mod profile;
pub mod rotate;
pub mod single;
pub mod tile;

pub use chip::{Chip, RunOptions, RunProgress, RunReport};
pub use error::SimError;
pub use machine::MachineDescription;
