//! Tessera ISA: the ipu21 tile's registers, CSRs, instruction table, encoding, assembler,
//! numerics and reference semantics. Knows no timing and no tiles.

pub mod csr;
pub mod inst;
pub mod numerics;
pub mod registers;
pub mod table;
