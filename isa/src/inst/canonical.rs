//! Which row an instruction's text names: rows of one mnemonic whose operands are written alike
//! differ only in the immediates they hold, and the text names the first row (in table order)
//! that holds them all.
//!
//! Some instructions have two encodings for one text: `min $m0, $m0, 864` fits the simm16 row
//! (`MinImm`) and the zimm16 row (`MinImmZ`), with the same effect. The assembler takes the first
//! row that holds the values (`asm::assemble::resolve`), so the other row's word with such a value
//! has no text of its own. The project's rule **\[A\]**: such a word is an *alias*, and the decoder
//! refuses it (`DecodeError::Alias`, naming the row its text names), so that exactly one row owns
//! every word the decoder accepts and every text names exactly one row. No code this project
//! assembles or emits contains an alias word; the hardware may well execute one as its canonical
//! twin, which a binary from another toolchain would need (then this rule must become a printed
//! spelling of its own).

use super::emit::encode_operand;
use super::{Inst, InstDesc, OperandKind, INSTRUCTIONS};

/// Whether two operand kinds are written the same way in assembly, so that the text of a value
/// of one can also be read as the other: the same register kind (file, width, `+=`/`++`/`@`
/// mark, broadcast), the same CSR space, or any two immediates (signed, unsigned, code or word
/// addresses are all numbers in text).
pub fn written_alike(a: OperandKind, b: OperandKind) -> bool {
    match (text_class(a), text_class(b)) {
        (TextClass::Register, TextClass::Register) | (TextClass::Csr, TextClass::Csr) => a == b,
        (TextClass::Number, TextClass::Number) => true,
        (TextClass::Register | TextClass::Csr | TextClass::Number, _) => false,
    }
}

/// How an operand kind appears in text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TextClass {
    Register,
    Csr,
    Number,
}

/// Derived from the kind: registers by `is_register`, the two CSR spaces, and every other kind a
/// number.
fn text_class(kind: OperandKind) -> TextClass {
    if kind.is_register() {
        TextClass::Register
    } else if matches!(kind, OperandKind::LowerCsr | OperandKind::UpperCsr) {
        TextClass::Csr
    } else {
        TextClass::Number
    }
}

/// Whether `other` is written like `row`: the same mnemonic, and operand by operand the same
/// way in text.
fn same_text_shape(row: &InstDesc, other: &InstDesc) -> bool {
    other.mnemonic == row.mnemonic
        && other.operands.len() == row.operands.len()
        && other
            .operands
            .iter()
            .zip(row.operands)
            .all(|(a, b)| written_alike(a.kind, b.kind))
}

/// The row the text of `inst` names: the first row of its mnemonic, written alike, whose fields
/// hold every operand value of `inst`. It is `inst`'s own row unless `inst` is an alias.
pub fn text_row(inst: &Inst) -> &'static InstDesc {
    let own = inst.desc();
    earlier_siblings(own)
        .iter()
        .find(|row| {
            (0..row.operands.len()).all(|i| encode_operand(row, i, inst.operands[i]).is_ok())
        })
        .copied()
        .unwrap_or(own)
}

/// The rows before `row` in table order that are written like it, computed once for the
/// table (most rows have none), so that the decoder's alias check is a lookup.
fn earlier_siblings(row: &InstDesc) -> &'static [&'static InstDesc] {
    type Siblings = Vec<Vec<&'static InstDesc>>;
    static SIBLINGS: std::sync::OnceLock<Siblings> = std::sync::OnceLock::new();
    let table = SIBLINGS.get_or_init(|| {
        INSTRUCTIONS
            .iter()
            .map(|own| {
                INSTRUCTIONS
                    .iter()
                    .take_while(|earlier| earlier.opcode != own.opcode)
                    .filter(|earlier| same_text_shape(own, earlier))
                    .collect()
            })
            .collect()
    });
    &table[row.opcode as usize]
}

/// The rows that share a text shape with an earlier row and so can hold aliases, with the row
/// whose text they share (for the reference and the table tests).
pub fn alias_rows() -> impl Iterator<Item = (&'static InstDesc, &'static InstDesc)> {
    INSTRUCTIONS
        .iter()
        .filter_map(|row| earlier_siblings(row).first().map(|earlier| (row, *earlier)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inst::emit::{decode, encode, DecodeError};
    use crate::inst::Opcode;

    #[test]
    fn min_with_a_small_zero_extended_immediate_is_an_alias_of_the_signed_form() {
        // The fuzzer's first find (issue 36): 0x31000360 is `min $m0, $m0, 864` in the zimm16
        // form, whose text assembles to the simm16 form.
        let error = decode(0x3100_0360).unwrap_err();
        assert_eq!(
            error,
            DecodeError::Alias {
                word: 0x3100_0360,
                mnemonic: "min",
                row: Opcode::MinImmZ,
                named: Opcode::MinImm,
            }
        );
        let canonical = Inst::new(Opcode::MinImm, &[0, 0, 864]);
        assert_eq!(decode(encode(&canonical).unwrap()), Ok(canonical));
        // Above the signed range the zimm16 form is the only one, and decodes.
        let high = Inst::new(Opcode::MinImmZ, &[0, 0, 0x8360]);
        assert_eq!(encode(&high), Ok(0x3100_8360));
        assert_eq!(decode(0x3100_8360), Ok(high));
    }

    #[test]
    fn the_zero_extended_add_and_min_rows_and_the_zero_tailed_ors_are_the_alias_rows() {
        let rows: Vec<(Opcode, Opcode)> = alias_rows().map(|(r, e)| (r.opcode, e.opcode)).collect();
        assert!(
            rows.contains(&(Opcode::MinImmZ, Opcode::MinImm)),
            "{rows:?}"
        );
        assert!(
            rows.contains(&(Opcode::AddImmZ, Opcode::AddImm)),
            "{rows:?}"
        );
        for (row, earlier) in alias_rows() {
            assert!(row
                .operands
                .iter()
                .any(|o| text_class(o.kind) == TextClass::Number));
            assert_eq!(row.mnemonic, earlier.mnemonic);
        }
    }
}
