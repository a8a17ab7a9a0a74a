//! Tessera ISA: the ipu21 tile's registers, CSRs, instruction table, encoding, assembler,
//! numerics and reference semantics. Knows no timing and no tiles.

pub mod asm;
pub mod csr;
pub mod inst;
pub mod numerics;
pub mod reference;
pub mod semantics;
pub mod registers;
pub mod table;
