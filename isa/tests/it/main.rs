//! The ISA crate's integration tests, one binary: assembler round trips, snapshots and the macro corpus, exhaustive numerics against oracle tables, the generated reference being fresh.

mod asm_forms;
mod asm_macros;
mod asm_roundtrip;
mod asm_snapshots;
mod numerics_exhaustive;
mod reference_fresh;
