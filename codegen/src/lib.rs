//! The Tessera compiler. Three levels, each its own type with a verifier (see
//! `shared/DESIGN.md`, "The compiler's shape"):
//!
//! * [`graph`] — ops on logical tensors, built by `tessera-models`.
//! * distributed (mid) — per-value layouts over tiles, explicit redistributions and casts.
//! * tile (low) — per-tile kernel calls, allocations, exchange phases, supervisor code.
//!
//! Depends on `tessera-isa` and `tessera-kernels`, never on the simulator.

pub mod dist;
pub mod emit;
pub mod exchange;
pub mod graph;
pub mod layout;
pub mod lower;
pub mod mid;
pub mod place;
pub mod plan;
pub mod redist;
pub mod refexec;
pub mod target;
pub mod tile;
