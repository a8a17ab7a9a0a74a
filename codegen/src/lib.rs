//! The Tessera compiler. Three levels, each its own type with a verifier (see
//! `docs/design.md`, "The compiler's shape"):
//!
//! * [`graph`] — ops on logical tensors, built by `tessera-models`.
//! * [`mid`] — the distributed level: per-value layouts over tiles ([`layout`]), explicit
//!   redistributions ([`redist`]), chosen by the [`plan`]ner.
//! * [`tile`] (low) — per-tile kernel calls, allocations, exchange phases; [`lower`] makes it
//!   from the distributed level, [`emit`] turns it into an image.
//!
//! Depends on `tessera-isa` and `tessera-kernels`, never on the simulator.

pub mod compile;
pub mod emit;
pub mod estimate;
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
pub mod trace;
