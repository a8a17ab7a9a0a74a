//! Assembler and disassembler for ipu21 tile code (PopLibs-style syntax), derived from the instruction table.
//!
//! Each file is scrubbed (`source`), expanded (`macros`: `.macro`, `.rept`, `.if`...), lexed
//! and parsed; `assemble` turns the files into an [`Object`] (placed sections, symbols, listing);
//! `format_inst`/`format_bundle` print the canonical text that re-assembles to the same bits;
//! `disassemble` decodes bytes back into that text. Nothing here is written per instruction:
//! operand syntax, overload choice, range checks and printing all come from the table rows.

pub mod assemble;
pub mod disasm;
pub mod error;
pub mod expr;
pub mod forms;
pub mod layout;
pub mod lexer;
pub mod macros;
pub mod object;
pub mod parser;
pub mod print;
pub mod source;
pub mod stmt;

pub use assemble::{assemble, assemble_str, assemble_with_warnings, expects_message, parse_bundle};
pub use disasm::{disassemble, disassemble_object, render, render_source, DisasmLine};
pub use error::{AsmError, AsmErrors, AsmWarning, Loc};
pub use layout::{LayoutOptions, DEFAULT_BASE, PREDEFINED_SYMBOLS};
pub use object::{CodeContext, ListingLine, Object, Section, Symbol, SymbolKind};
pub use print::{format_bundle, format_inst, format_operand};
