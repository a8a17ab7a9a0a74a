//! Canonical text of instructions and bundles; it re-assembles to the same bits.
//!
//! Operands print by kind: registers through `registers.rs` (`$mzero`, `$azeros`, `$a0:1`,
//! `$a4:7`, `$m1+=`, `$a2:BL`), signed immediates in decimal, unsigned ones in decimal below 4096 and in
//! hex above, code and data addresses in hex, and CSRs by name when `csr.rs` has exactly one
//! name for the index in that space (over both contexts), else by number.

use crate::csr::{CsrSpace, CSRS};
use crate::inst::{Bundle, Inst, OperandKind};
use crate::registers::{group_name, register_name, REGISTER_COUNT};

/// Unsigned immediates at or above this print in hex.
pub const HEX_THRESHOLD: u32 = 4096;

/// `mnemonic op, op, ...`.
pub fn format_inst(inst: &Inst) -> String {
    let desc = inst.desc();
    let mut out = desc.mnemonic.to_string();
    for (index, operand) in desc.operands.iter().enumerate() {
        out.push_str(if index == 0 { " " } else { ", " });
        out.push_str(&format_operand(
            operand.kind,
            inst.operands.get(index).copied().unwrap_or(0),
        ));
    }
    out
}

/// `{ main ; aux }` for a pair, the instruction alone otherwise.
pub fn format_bundle(bundle: &Bundle) -> String {
    match (&bundle.main, &bundle.aux) {
        (Some(main), Some(aux)) => format!("{{ {} ; {} }}", format_inst(main), format_inst(aux)),
        (Some(only), None) | (None, Some(only)) => format_inst(only),
        (None, None) => "{ }".to_string(),
    }
}

fn unsigned(value: u32) -> String {
    if value < HEX_THRESHOLD {
        value.to_string()
    } else {
        format!("{value:#x}")
    }
}

/// The canonical text of one operand value of a kind.
pub fn format_operand(kind: OperandKind, value: u32) -> String {
    let register = |suffix: &str| -> String {
        let Some(file) = kind.register_file() else {
            return value.to_string();
        };
        let width = kind.register_width();
        let text = if value as u64 + width as u64 > REGISTER_COUNT as u64 {
            // Not a valid register group: print something readable (it will not re-assemble).
            format!("${}{}?", file.prefix(), value)
        } else if width == 1 {
            register_name(file, value as u8)
        } else {
            group_name(file, value as u8, width)
        };
        text + suffix
    };
    match kind {
        OperandKind::MReg
        | OperandKind::AReg
        | OperandKind::MPair
        | OperandKind::APair
        | OperandKind::AQuad => register(""),
        OperandKind::MRegPostInc | OperandKind::MPairPostInc => register("+="),
        OperandKind::MRegIncrement => register("++"),
        OperandKind::MRegDelta => register("@"),
        OperandKind::ABroadcast => register(":B"),
        OperandKind::ABroadcastLo => register(":BL"),
        OperandKind::ABroadcastHi => register(":BU"),
        OperandKind::Signed => (value as i32).to_string(),
        OperandKind::Unsigned => unsigned(value),
        OperandKind::Target | OperandKind::WordAddress => format!("{value:#x}"),
        OperandKind::LowerCsr => csr_text(CsrSpace::Lower, value),
        OperandKind::UpperCsr => csr_text(CsrSpace::Upper, value),
    }
}

fn csr_text(space: CsrSpace, value: u32) -> String {
    let mut names = CSRS
        .iter()
        .filter(|c| c.space == space && c.index as u32 == value);
    match (names.next(), names.next()) {
        (Some(only), None) => only.name.to_string(),
        _ => unsigned(value),
    }
}

/// How an operand kind is written, for "expects" messages: `$mN`, `$aN:N+1`, `imm`, ...
pub fn kind_syntax(kind: OperandKind) -> &'static str {
    match kind {
        OperandKind::MReg => "$mN",
        OperandKind::AReg => "$aN",
        OperandKind::MPair => "$mN:N+1",
        OperandKind::APair => "$aN:N+1",
        OperandKind::AQuad => "$aN:N+3",
        OperandKind::MRegPostInc => "$mN+=",
        OperandKind::MPairPostInc => "$mN:N+1+=",
        OperandKind::MRegIncrement => "$mN++",
        OperandKind::MRegDelta => "$mN@",
        OperandKind::ABroadcast => "$aN:B",
        OperandKind::ABroadcastLo => "$aN:BL",
        OperandKind::ABroadcastHi => "$aN:BU",
        OperandKind::Unsigned | OperandKind::Signed => "imm",
        OperandKind::Target => "label",
        OperandKind::LowerCsr | OperandKind::UpperCsr => "$CSR",
        OperandKind::WordAddress => "addr",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inst::Opcode;

    #[test]
    fn canonical_forms() {
        assert_eq!(
            format_inst(&Inst::new(Opcode::Ld32StepA, &[0, 15, 1, 1])),
            "ld32step $a0, $mzero, $m1+=, 1"
        );
        assert_eq!(
            format_inst(&Inst::new(Opcode::AddImm, &[1, 2, (-5i32) as u32])),
            "add $m1, $m2, -5"
        );
        assert_eq!(
            format_inst(&Inst::new(Opcode::Brnzdec, &[2, 0x4c010])),
            "brnzdec $m2, 0x4c010"
        );
        assert_eq!(
            format_inst(&Inst::new(Opcode::Uput, &[9, 0])),
            "uput $FP_NFMT, $a0"
        );
        assert_eq!(format_inst(&Inst::new(Opcode::Get, &[0, 1])), "get $m0, 1");
        assert_eq!(
            format_inst(&Inst::new(Opcode::F16v4add, &[14, 4, 0])),
            "f16v4add $azeros, $a4:5, $a0:1"
        );
        assert_eq!(
            format_inst(&Inst::new(Opcode::Setzi, &[0, 0xfffff])),
            "setzi $m0, 0xfffff"
        );
    }
}
