//! Encoding and decoding of instructions and bundles, derived entirely from the table rows.

use super::{Bundle, Inst, InstDesc, Opcode, OperandDesc, INSTRUCTIONS, MAX_OPERANDS};
use crate::table::{CoIssue, Pipe};
use thiserror::Error;

/// Bit 31: the next word is the second instruction of the bundle. [C]
pub const CO_ISSUE_BIT: u32 = 1 << 31;

/// Why an instruction could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    #[error("E-ENC-001: operand {index} of `{mnemonic}` is {kind}, but {value:#x} does not fit: {reason}")]
    OperandOutOfRange {
        mnemonic: &'static str,
        index: usize,
        kind: &'static str,
        value: u32,
        reason: String,
    },
    #[error("E-ENC-002: `{first}` and `{second}` cannot share a bundle: {reason}")]
    BadBundle {
        first: &'static str,
        second: &'static str,
        reason: &'static str,
    },
    #[error("E-ENC-003: empty bundle")]
    EmptyBundle,
    #[error("E-ENC-004: `{mnemonic}` is a two-word instruction and shares its bundle with nothing; encode it as a bundle of its own")]
    TwoWords { mnemonic: &'static str },
}

/// Why a word could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("E-DEC-001: unknown instruction word {word:#010x}")]
    Unknown { word: u32 },
    #[error("E-DEC-002: word {word:#010x} decodes as `{mnemonic}` but operand {index} is invalid: {reason}")]
    InvalidOperand {
        word: u32,
        mnemonic: &'static str,
        index: usize,
        reason: &'static str,
    },
    #[error("E-DEC-003: bundle {first:#010x} {second:#010x}: {reason}")]
    BadBundle {
        first: u32,
        second: u32,
        reason: &'static str,
    },
    #[error("E-DEC-004: word {word:#010x} sets the co-issue bit but no second word follows")]
    TruncatedBundle { word: u32 },
    /// The word is `row`'s, but its text names the earlier row `named`, which holds the same
    /// operand values (`inst::canonical`): an alias, which the project does not decode [A].
    #[error("E-DEC-005: word {word:#010x} is `{mnemonic}` in the encoding of {row:?}, but its operands fit {named:?}, which its text names; this alias encoding is not decoded (inst::canonical)")]
    Alias {
        word: u32,
        mnemonic: &'static str,
        row: Opcode,
        named: Opcode,
    },
}

/// Checks one operand value against its kind and field and returns the encoded field value.
pub fn encode_operand(desc: &InstDesc, index: usize, value: u32) -> Result<u64, EncodeError> {
    let operand: &OperandDesc = &desc.operands[index];
    let width = operand.field.width();
    let shift = operand.field.shift as u32;
    let fail = |reason: String| EncodeError::OperandOutOfRange {
        mnemonic: desc.mnemonic,
        index,
        kind: operand.kind.describe(),
        value,
        reason,
    };
    let alignment = operand.kind.alignment();
    if operand.kind.is_register() && value >= 16 {
        return Err(fail("register numbers are 0..15".into()));
    }
    if !value.is_multiple_of(alignment) {
        return Err(fail(format!("must be a multiple of {alignment}")));
    }
    let encoded = if operand.kind.is_signed() {
        let signed = value as i32;
        let lo = -(1i64 << (width - 1));
        let hi = (1i64 << (width - 1)) - 1;
        if (signed as i64) < lo || (signed as i64) > hi {
            return Err(fail(format!("signed {width}-bit range is {lo}..={hi}")));
        }
        (signed as u32) & (((1u64 << width) - 1) as u32)
    } else {
        let encoded = value >> shift;
        if (encoded as u64) >= (1u64 << width) {
            return Err(fail(format!("{width}-bit field (after >> {shift})")));
        }
        if encoded << shift != value {
            return Err(fail(format!("low {shift} bits must be zero")));
        }
        encoded
    };
    Ok(operand.field.insert(encoded))
}

/// Encodes one instruction's bits: the first word in bits 0..31 (the co-issue bit clear), a
/// two-word row's inline word in bits 32..63.
fn encode_bits(inst: &Inst) -> Result<u64, EncodeError> {
    let desc = inst.desc();
    let mut bits = u64::from(desc.value);
    for index in 0..desc.operands.len() {
        bits |= encode_operand(desc, index, inst.operands[index])?;
    }
    Ok(bits)
}

/// Encodes one single-word instruction (the co-issue bit is left clear); a two-word row
/// (`sendpicp`) is refused, as only [`encode_bundle`] gives both its words.
pub fn encode(inst: &Inst) -> Result<u32, EncodeError> {
    let desc = inst.desc();
    if desc.words == 2 {
        return Err(EncodeError::TwoWords {
            mnemonic: desc.mnemonic,
        });
    }
    Ok(encode_bits(inst)? as u32)
}

/// Encodes a bundle into its words, main first, with the co-issue bit on the first of a pair;
/// a two-word instruction is its prefix word (bit 31 set) and its inline word.
pub fn encode_bundle(bundle: &Bundle) -> Result<Vec<u32>, EncodeError> {
    match (bundle.main, bundle.aux) {
        (None, None) => Err(EncodeError::EmptyBundle),
        (Some(only), None) | (None, Some(only)) => {
            if only.desc().words == 2 {
                let bits = encode_bits(&only)?;
                Ok(vec![bits as u32 | CO_ISSUE_BIT, (bits >> 32) as u32])
            } else {
                Ok(vec![encode(&only)?])
            }
        }
        (Some(main), Some(aux)) => {
            check_pair(main.desc(), aux.desc())?;
            Ok(vec![encode(&main)? | CO_ISSUE_BIT, encode(&aux)?])
        }
    }
}

fn check_pair(main: &InstDesc, aux: &InstDesc) -> Result<(), EncodeError> {
    let bad = |reason| EncodeError::BadBundle {
        first: main.mnemonic,
        second: aux.mnemonic,
        reason,
    };
    if main.pipe != Pipe::Main {
        return Err(bad(
            "the first instruction of a bundle must be a main-pipeline instruction",
        ));
    }
    if aux.pipe != Pipe::Aux {
        return Err(bad(
            "the second instruction of a bundle must be an aux-pipeline instruction",
        ));
    }
    if main.co_issue == CoIssue::Solo || aux.co_issue == CoIssue::Solo {
        return Err(bad("a solo instruction cannot be co-issued"));
    }
    Ok(())
}

/// Finds the table row a word (co-issue bit ignored) belongs to: the most specific row that
/// matches it (the most fixed bits), so a carve-out (`super::CARVE_OUTS`: `nop` is the word of
/// `setzi $m14, 0`) owns its word inside the general row.
pub fn find_row(word: u32) -> Option<&'static InstDesc> {
    let word = word & !CO_ISSUE_BIT;
    INSTRUCTIONS
        .iter()
        .filter(|row| row.words == 1 && word & row.mask == row.value)
        .max_by_key(|row| row.mask.count_ones())
}

/// The two-word row whose prefix `word` is: bit 31 set on a word of a solo instruction's
/// family, which no pair may start with (`sendpicp`'s `0xF…` prefix beside the `0x7…` sends).
fn find_wide_row(word: u32) -> Option<&'static InstDesc> {
    if word & CO_ISSUE_BIT == 0 {
        return None;
    }
    let word = word & !CO_ISSUE_BIT;
    INSTRUCTIONS
        .iter()
        .find(|row| row.words == 2 && word & row.mask == row.value)
}

/// Decodes one instruction word (the co-issue bit is ignored here).
pub fn decode(word: u32) -> Result<Inst, DecodeError> {
    let desc = find_row(word).ok_or(DecodeError::Unknown { word })?;
    decode_fields(desc, word, u64::from(word & !CO_ISSUE_BIT))
}

/// The operands of row `desc` from its encoding's bits (`word`, its first word, for errors).
fn decode_fields(desc: &'static InstDesc, word: u32, bits: u64) -> Result<Inst, DecodeError> {
    let mut operands = [0u32; MAX_OPERANDS];
    for (index, operand) in desc.operands.iter().enumerate() {
        let raw = operand.field.extract(bits);
        let width = operand.field.width();
        let value = if operand.kind.is_signed() {
            (((raw << (32 - width)) as i32) >> (32 - width)) as u32
        } else {
            raw << operand.field.shift
        };
        let invalid = |reason| DecodeError::InvalidOperand {
            word,
            mnemonic: desc.mnemonic,
            index,
            reason,
        };
        match operand.kind.register_width() {
            2 if value % 2 != 0 => return Err(invalid("register pairs start at an even register")),
            4 if value % 4 != 0 => return Err(invalid("register quads start at a multiple of 4")),
            _ => {}
        }
        operands[index] = value;
    }
    let inst = Inst {
        opcode: desc.opcode,
        operands,
    };
    let named = super::canonical::text_row(&inst);
    if named.opcode != desc.opcode {
        return Err(DecodeError::Alias {
            word,
            mnemonic: desc.mnemonic,
            row: desc.opcode,
            named: named.opcode,
        });
    }
    Ok(inst)
}

/// Decodes the bundle starting at `words[0]`; returns it and how many words it used.
pub fn decode_bundle(words: &[u32]) -> Result<(Bundle, usize), DecodeError> {
    let first = *words.first().ok_or(DecodeError::Unknown { word: 0 })?;
    if let Some(desc) = find_wide_row(first) {
        let inline = *words
            .get(1)
            .ok_or(DecodeError::TruncatedBundle { word: first })?;
        let bits = u64::from(first & !CO_ISSUE_BIT) | (u64::from(inline) << 32);
        return Ok((Bundle::single(decode_fields(desc, first, bits)?), 2));
    }
    let inst = decode(first)?;
    if first & CO_ISSUE_BIT == 0 {
        return Ok((Bundle::single(inst), 1));
    }
    let second = *words
        .get(1)
        .ok_or(DecodeError::TruncatedBundle { word: first })?;
    if second & CO_ISSUE_BIT != 0 {
        return Err(DecodeError::BadBundle {
            first,
            second,
            reason: "a bundle has at most two instructions",
        });
    }
    let aux = decode(second)?;
    check_pair(inst.desc(), aux.desc()).map_err(|_| DecodeError::BadBundle {
        first,
        second,
        reason:
            "a pair must be one pairable main instruction followed by one pairable aux instruction",
    })?;
    Ok((
        Bundle {
            main: Some(inst),
            aux: Some(aux),
        },
        2,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inst::Opcode;

    #[test]
    fn public_encodings_of_known_words() {
        // f16v2tof8 $a1, $a0 : aD[7:4] = 1, aS[23:20] = 0.
        let word = encode(&Inst::new(Opcode::F16v2tof8, &[1, 0])).unwrap();
        assert_eq!(word, 0x5200_6d10);
        assert_eq!(decode(word).unwrap(), Inst::new(Opcode::F16v2tof8, &[1, 0]));
        // brnzdec $m2, 0x4c010 : target word 0x13004.
        let word = encode(&Inst::new(Opcode::Brnzdec, &[2, 0x4c010])).unwrap();
        assert_eq!(word, 0x1328_0000 | (0x4c010 >> 2));
        // run $m1, $m2, 0x1234: imm[15:12] -> [19:16].
        let word = encode(&Inst::new(Opcode::Run, &[1, 2, 0x1234])).unwrap();
        assert_eq!(
            word,
            0x1400_0000 | (1 << 20) | (2 << 12) | (1 << 16) | 0x234
        );
    }

    #[test]
    fn rejects_out_of_range_operands() {
        assert!(encode(&Inst::new(Opcode::AddImm, &[0, 0, 40000])).is_err());
        assert!(encode(&Inst::new(Opcode::AddImm, &[0, 0, (-32768i32) as u32])).is_ok());
        assert!(encode(&Inst::new(Opcode::Ld64, &[1, 0, 0, 0])).is_err());
        assert!(encode(&Inst::new(Opcode::Ld128, &[2, 0, 0, 0])).is_err());
        assert!(encode(&Inst::new(Opcode::Bri, &[0x4c002])).is_err());
    }

    #[test]
    fn bundles_round_trip() {
        let bundle = Bundle {
            main: Some(Inst::new(Opcode::Ld32StepA, &[0, 15, 1, 1])),
            aux: Some(Inst::new(Opcode::F16v2tof8, &[1, 0])),
        };
        let words = encode_bundle(&bundle).unwrap();
        assert_eq!(words.len(), 2);
        assert_eq!(decode_bundle(&words).unwrap(), (bundle, 2));
    }

    #[test]
    fn rejects_bad_bundles() {
        let two_mains = Bundle {
            main: Some(Inst::new(Opcode::Nop, &[])),
            aux: Some(Inst::new(Opcode::Nop, &[])),
        };
        assert!(encode_bundle(&two_mains).is_err());
        let solo = Bundle {
            main: Some(Inst::new(Opcode::Exitz, &[0])),
            aux: Some(Inst::new(Opcode::Fnop, &[])),
        };
        assert!(encode_bundle(&solo).is_err());
        assert!(matches!(
            decode_bundle(&[0x19e0_0000 | CO_ISSUE_BIT]),
            Err(DecodeError::TruncatedBundle { .. })
        ));
        assert!(matches!(
            decode(0x7fff_ffff & 0x1f00_0000),
            Err(DecodeError::Unknown { .. })
        ));
    }
}
