//! The generated ISA reference: one Markdown page per instruction family, a CSR page and an
//! index, all derived from the instruction and CSR tables. `docs/isa/` holds the committed copy;
//! a test fails when it is stale.

use crate::csr::{CsrContext, CsrSpace, CSRS};
use crate::inst::{Access, OperandKind, INSTRUCTIONS};
use crate::table::{Basis, CoIssue, Contexts, Family, Pipe};
use std::fmt::Write;

/// `(file name, contents)` of every page.
pub fn pages() -> Vec<(String, String)> {
    let mut pages = vec![("README.md".to_string(), index_page())];
    for family in Family::ALL {
        pages.push((format!("{}.md", family.slug()), family_page(family)));
    }
    pages.push(("csr-registers.md".to_string(), csr_page()));
    pages.push(("exceptions.md".to_string(), exceptions_page()));
    pages
}

/// The hardware's exception types and receive errors, with the traps that stand for them.
fn exceptions_page() -> String {
    use crate::semantics::{trap_examples, ExceptionType, ReceiveError};
    let mut out = String::new();
    out.push_str("# Exceptions and receive errors (generated)\n\n");
    out.push_str("Generated from `isa/src/semantics/exception.rs`. Codes and names are the SDK's metadata as osmarks/ipu-stack's driver decodes them [S]; ");
    out.push_str("which trap stands for which exception is the project's reading [A], except `trap` (PBRK0) and the exchange conflict (CONFLICT), shown on a C600 [S].\n\n");
    out.push_str("## Exception types (`$SSR` / `$WSR` bits [7:4])\n\n| code | name | Tessera traps |\n|---:|---|---|\n");
    let examples = trap_examples();
    for t in ExceptionType::ALL {
        let traps: Vec<&str> = examples
            .iter()
            .filter(|k| k.exception() == Some(t))
            .map(|k| k.code())
            .collect();
        let traps = if t == ExceptionType::None {
            "(no exception)".to_string()
        } else if traps.is_empty() {
            "none (not modelled)".to_string()
        } else {
            traps.join(", ")
        };
        let _ = writeln!(out, "| {} | `{}` | {} |", t.code(), t.name(), traps);
    }
    let unmodelled: Vec<&str> = examples
        .iter()
        .filter(|k| k.exception().is_none())
        .map(|k| k.code())
        .collect();
    let _ = writeln!(
        out,
        "\n{} (a behaviour the model does not cover) has no hardware exception: the run stops where the hardware would do something.\n",
        unmodelled.join(", ")
    );
    out.push_str(
        "## Receive errors (`CTXT_STS.ERERR`)\n\n| code | name | in Tessera |\n|---:|---|---|\n",
    );
    for e in ReceiveError::ALL {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} |",
            e.code(),
            e.name(),
            e.in_tessera()
        );
    }
    out
}

fn index_page() -> String {
    let mut out = String::new();
    out.push_str("# ipu21 tile ISA reference (generated)\n\n");
    out.push_str("Generated from the instruction table in `isa/src/inst/mod.rs` and the CSR table in `isa/src/csr.rs`; ");
    out.push_str("regenerate with `cargo run -- isa doc --out docs/isa`. Do not edit by hand.\n\n");
    out.push_str("Basis tags: [C] confirmed by a public source for ipu2/ipu21, [C-ipu1] confirmed for ipu1 only, ");
    out.push_str("[I] inferred, [S] secondary (reverse-engineered), [A] the project's own documented assumption. ");
    out.push_str("Every instruction has two tags: its encoding and its behaviour.\n\n");
    let assumed_encodings = INSTRUCTIONS
        .iter()
        .filter(|r| r.encoding_basis == Basis::Assumed)
        .count();
    let assumed_semantics = INSTRUCTIONS
        .iter()
        .filter(|r| r.semantics_basis == Basis::Assumed)
        .count();
    let _ = writeln!(
        out,
        "{} instructions; {} with project-assigned encodings, {} with project-defined behaviour.\n",
        INSTRUCTIONS.len(),
        assumed_encodings,
        assumed_semantics
    );
    out.push_str("| family | instructions |\n|---|---:|\n");
    for family in Family::ALL {
        let count = INSTRUCTIONS.iter().filter(|r| r.family == family).count();
        let _ = writeln!(
            out,
            "| [{}]({}.md) | {} |",
            family.title(),
            family.slug(),
            count
        );
    }
    out.push_str("| [Control and status registers (the registers)](csr-registers.md) | |\n");
    out.push_str("| [Exceptions and receive errors](exceptions.md) | |\n");
    out.push_str("\n## Encoding\n\nEvery instruction is one 32-bit little-endian word. Bit 31 set means the next word is the second ");
    out.push_str("instruction of a two-instruction bundle `{ main ; aux }` (the main-pipeline word comes first). ");
    out.push_str("A row matches a word when `word & mask == value` (bit 31 excluded); the mask is every bit no operand field uses. ");
    out.push_str("Instructions and bundles are 4-byte aligned (PopLibs places bundles at 4 mod 8); the body of an `rpt` must start 8-byte aligned [A].\n");
    out
}

fn syntax(row: &crate::inst::InstDesc) -> String {
    let operands: Vec<String> = row
        .operands
        .iter()
        .enumerate()
        .map(|(i, op)| match op.kind {
            OperandKind::MReg => format!("$m{}", letter(i)),
            OperandKind::AReg => format!("$a{}", letter(i)),
            OperandKind::MPair => format!("$m{0}:{0}+1", letter(i)),
            OperandKind::APair => format!("$a{0}:{0}+1", letter(i)),
            OperandKind::AQuad => format!("$a{0}:{0}+3", letter(i)),
            OperandKind::MRegPostInc => format!("$m{}+=", letter(i)),
            OperandKind::MPairPostInc => format!("$m{0}:{0}+1+=", letter(i)),
            OperandKind::MRegIncrement => format!("$m{}++", letter(i)),
            OperandKind::MRegDelta => format!("$m{}@", letter(i)),
            OperandKind::ABroadcast => format!("$a{}:B", letter(i)),
            OperandKind::ABroadcastLo => format!("$a{}:BL", letter(i)),
            OperandKind::ABroadcastHi => format!("$a{}:BU", letter(i)),
            OperandKind::Unsigned => format!("zimm{}", op.field.width()),
            OperandKind::Signed => format!("simm{}", op.field.width()),
            OperandKind::Target => "target".to_string(),
            OperandKind::LowerCsr => "CSR".to_string(),
            OperandKind::UpperCsr => "UCSR".to_string(),
            OperandKind::WordAddress => "address".to_string(),
        })
        .collect();
    if operands.is_empty() {
        row.mnemonic.to_string()
    } else {
        format!("{} {}", row.mnemonic, operands.join(", "))
    }
}

fn letter(i: usize) -> char {
    (b'A' + i as u8) as char
}

fn field_text(field: &crate::inst::Field) -> String {
    let pieces: Vec<String> = field
        .pieces
        .iter()
        .map(|&(lo, w)| format!("[{}:{}]", lo + w - 1, lo))
        .collect();
    let mut text = pieces.join("+");
    if field.shift > 0 {
        let _ = write!(text, " (value >> {})", field.shift);
    }
    text
}

fn family_page(family: Family) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {} (generated)\n", family.title());
    out.push_str("[Index](README.md)\n\n");
    out.push_str("| syntax | pipe | contexts | co-issue | timing | encoding | behaviour | mask / value |\n|---|---|---|---|---|---|---|---|\n");
    for row in INSTRUCTIONS.iter().filter(|r| r.family == family) {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {:?} | {} | {} | `{:08x}` / `{:08x}` |",
            syntax(row),
            match row.pipe {
                Pipe::Main => "main",
                Pipe::Aux => "aux",
            },
            match row.contexts {
                Contexts::Worker => "worker",
                Contexts::Supervisor => "supervisor",
                Contexts::Both => "both",
            },
            match row.co_issue {
                CoIssue::Pairable => "yes",
                CoIssue::Solo => "solo",
            },
            row.timing,
            row.encoding_basis.tag(),
            row.semantics_basis.tag(),
            row.mask,
            row.value
        );
    }
    out.push('\n');
    for row in INSTRUCTIONS.iter().filter(|r| r.family == family) {
        let _ = writeln!(out, "## `{}`\n\n{}\n", syntax(row), row.summary);
        if !row.operands.is_empty() {
            out.push_str("| operand | kind | access | bits |\n|---|---|---|---|\n");
            for (i, op) in row.operands.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    letter(i),
                    op.kind.describe(),
                    match op.access {
                        Access::Read => "read",
                        Access::Write => "write",
                        Access::ReadWrite => "read, write",
                        Access::Constant => "immediate",
                    },
                    field_text(&op.field)
                );
            }
            out.push('\n');
        }
    }
    out
}

fn csr_page() -> String {
    let mut out =
        String::from("# Control and status registers (generated)\n\n[Index](README.md)\n\n");
    out.push_str("Lower space: `get`/`put` (MRF). Upper space: `uget`/`uput` (ARF, worker only), numbered by offset from 0x100.\n\n");
    out.push_str(
        "| name | space | context | index | basis | meaning |\n|---|---|---|---:|---|---|\n",
    );
    for csr in CSRS {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {:#x} | {} | {} |",
            csr.name,
            match csr.space {
                CsrSpace::Lower => "lower",
                CsrSpace::Upper => "upper",
            },
            match csr.context {
                CsrContext::Worker => "worker",
                CsrContext::Supervisor => "supervisor",
                CsrContext::Both => "both",
            },
            csr.index,
            csr.basis.tag(),
            csr.summary
        );
    }
    out
}
