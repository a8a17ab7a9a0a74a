//! Tessera ISA: the ipu21 tile's registers, CSRs, instruction table, encoding, assembler,
//! numerics, reference semantics and the executable image format, and the project's one seeded
//! generator ([`rng`]). Knows no timing; tiles and machines appear only as the plain numbers an
//! image records.

pub mod asm;
pub mod csr;
pub mod fabric;
pub mod image;
pub mod inst;
pub mod numerics;
pub mod reference;
pub mod registers;
pub mod rng;
pub mod semantics;
pub mod table;
