//! The ISA crate's integration tests, one binary: assembler round trips and snapshots, exhaustive numerics against oracle tables, the generated reference being fresh.

mod asm_roundtrip;
mod asm_snapshots;
mod numerics_exhaustive;
mod reference_fresh;
