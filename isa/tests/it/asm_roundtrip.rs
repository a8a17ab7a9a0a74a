//! Round trips over every row of the instruction table: encode/decode, and canonical text through
//! the assembler back to the same bits; random bundles; and robustness of the assembler and
//! disassembler on random and mutated input (they must never panic).

use proptest::prelude::*;
use tessera_isa::asm::*;
use tessera_isa::inst::emit::{decode, decode_bundle, encode, encode_bundle};
use tessera_isa::inst::{Bundle, Inst, InstDesc, OperandKind, INSTRUCTIONS, MAX_OPERANDS};
use tessera_isa::table::{CoIssue, Pipe};

const KERNEL: &str = include_str!("../../../kernels/asm/examples/f16_to_fp8.S");

fn make_inst(row: &InstDesc, raws: &[u32; MAX_OPERANDS]) -> Inst {
    let values: Vec<u32> = row
        .operands
        .iter()
        .zip(raws)
        .map(|(op, &raw)| op.fold_value(raw))
        .collect();
    Inst::new(row.opcode, &values)
}

/// Assembles one statement at the default base and returns its words.
fn assemble_words(text: &str) -> Result<Vec<u32>, String> {
    let object = assemble_str(text).map_err(|e| format!("{text}\n{e}"))?;
    let bytes = &object.sections[0].bytes;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Two rows of one mnemonic and shape whose immediate ranges overlap (`or $a0, $a1, 0` fits
/// both the zero-extended `zimm12` row and the zero-tailed `immz12` one) print the same text
/// for a value both take; the assembler picks the first row (`assemble::resolve`), so such a
/// text assembles to the other row's word: same mnemonic, operand kinds and values, same effect.
fn is_encoding_alias(inst: &Inst, word: u32) -> bool {
    let Ok(other) = decode(word) else {
        return false;
    };
    other.opcode != inst.opcode
        && other.desc().mnemonic == inst.desc().mnemonic
        && other.operands == inst.operands
        && other.desc().operands.len() == inst.desc().operands.len()
        && other
            .desc()
            .operands
            .iter()
            .zip(inst.desc().operands)
            .all(|(a, b)| same_kind(a.kind, b.kind) && a.access == b.access)
}

/// Operand kinds that hold the same operand value alike: equal kinds, or a signed and an
/// unsigned immediate (`add $m0, $m1, 5` fits the simm16 and the zimm16 row; the value is 5 in
/// both).
fn same_kind(a: OperandKind, b: OperandKind) -> bool {
    let immediate = |k: OperandKind| matches!(k, OperandKind::Signed | OperandKind::Unsigned);
    a == b || (immediate(a) && immediate(b))
}

/// Whether assembled `words` are `expected` (the words of `insts`), up to encoding aliases.
fn same_up_to_aliases(words: &[u32], expected: &[u32], insts: &[Inst]) -> bool {
    words.len() == expected.len()
        && words
            .iter()
            .zip(expected)
            .zip(insts)
            .all(|((&w, &e), inst)| w == e || is_encoding_alias(inst, w & 0x7fff_ffff))
}

fn check_inst(inst: &Inst) -> Result<(), String> {
    let word = encode(inst).map_err(|e| format!("{inst:?}: {e}"))?;
    let decoded = decode(word).map_err(|e| format!("{inst:?}: {e}"))?;
    if decoded != *inst {
        return Err(format!("decode(encode({inst:?})) = {decoded:?}"));
    }
    let text = format_inst(inst);
    let words = assemble_words(&text)?;
    if !same_up_to_aliases(&words, &[word], &[*inst]) {
        return Err(format!(
            "`{text}` assembled to {words:08x?}, expected {word:08x}"
        ));
    }
    let parsed = parse_bundle(&text).map_err(|e| format!("{text}: {e}"))?;
    let expected = decode(words[0]).map_err(|e| format!("{text}: {e}"))?;
    if parsed != Bundle::single(expected) {
        return Err(format!("parse_bundle(`{text}`) = {parsed:?}"));
    }
    Ok(())
}

/// Deterministic patterns: all-zero, all-ones (every field at its maximum), and alternating bits.
const PATTERNS: [[u32; MAX_OPERANDS]; 5] = [
    [0; MAX_OPERANDS],
    [u32::MAX; MAX_OPERANDS],
    [0x5555_5555; MAX_OPERANDS],
    [0xaaaa_aaaa; MAX_OPERANDS],
    [0x7fff_ffff, 0x8000_0000, 3, 0x0000_ffff, 0x1234_5678],
];

#[test]
fn every_row_round_trips() {
    for row in INSTRUCTIONS {
        for raws in &PATTERNS {
            let inst = make_inst(row, raws);
            if let Err(message) = check_inst(&inst) {
                panic!("{:?}: {message}", row.opcode);
            }
        }
    }
}

#[test]
fn every_row_in_one_program() {
    let insts: Vec<Inst> = INSTRUCTIONS
        .iter()
        .map(|row| make_inst(row, &PATTERNS[4]))
        .collect();
    let text: String = insts
        .iter()
        .map(|inst| format!("    {}\n", format_inst(inst)))
        .collect();
    let words = assemble_words(&text).unwrap();
    let expected: Vec<u32> = insts.iter().map(|inst| encode(inst).unwrap()).collect();
    assert!(
        same_up_to_aliases(&words, &expected, &insts),
        "{words:08x?} vs {expected:08x?}"
    );
    // And the disassembly of those bytes is the same text.
    let object = assemble_str(&text).unwrap();
    let lines = disassemble(&object.sections[0].bytes, object.sections[0].address, None);
    let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
    let formatted: Vec<String> = insts.iter().map(format_inst).collect();
    assert_eq!(texts, formatted);
}

#[test]
fn every_mnemonic_has_an_expects_message() {
    for row in INSTRUCTIONS {
        let message = expects_message(row.mnemonic);
        assert!(
            message.starts_with(&format!("`{}` expects: ", row.mnemonic)),
            "{message}"
        );
    }
    assert_eq!(
        expects_message("ld32step"),
        "`ld32step` expects: $mN|$aN, $mN, $mN+=, imm|$mN"
    );
}

fn pairable(pipe: Pipe) -> Vec<&'static InstDesc> {
    INSTRUCTIONS
        .iter()
        .filter(|r| r.pipe == pipe && r.co_issue == CoIssue::Pairable)
        .collect()
}

fn check_bundle(bundle: &Bundle) -> Result<(), String> {
    let words = encode_bundle(bundle).map_err(|e| format!("{bundle:?}: {e}"))?;
    let (decoded, used) = decode_bundle(&words).map_err(|e| format!("{bundle:?}: {e}"))?;
    if (decoded, used) != (*bundle, 2) {
        return Err(format!("decode_bundle gave {decoded:?}"));
    }
    let (main, aux) = (bundle.main.unwrap(), bundle.aux.unwrap());
    let text = format_bundle(bundle);
    let assembled = assemble_words(&text)?;
    if !same_up_to_aliases(&assembled, &words, &[main, aux]) {
        return Err(format!(
            "`{text}` assembled to {assembled:08x?}, expected {words:08x?}"
        ));
    }
    // Written aux first, over several lines: the main instruction is still emitted first.
    let swapped = format!("{{\n  {}\n  {}\n}}", format_inst(&aux), format_inst(&main));
    let assembled = assemble_words(&swapped)?;
    if !same_up_to_aliases(&assembled, &words, &[main, aux]) {
        return Err(format!(
            "`{swapped}` assembled to {assembled:08x?}, expected {words:08x?}"
        ));
    }
    Ok(())
}

#[test]
fn every_pairable_row_bundles() {
    let (mains, auxes) = (pairable(Pipe::Main), pairable(Pipe::Aux));
    for (i, main) in mains.iter().enumerate() {
        let aux = auxes[i % auxes.len()];
        let bundle = Bundle {
            main: Some(make_inst(main, &PATTERNS[4])),
            aux: Some(make_inst(aux, &PATTERNS[2])),
        };
        check_bundle(&bundle).unwrap();
    }
    for (i, aux) in auxes.iter().enumerate() {
        let main = mains[i % mains.len()];
        let bundle = Bundle {
            main: Some(make_inst(main, &PATTERNS[3])),
            aux: Some(make_inst(aux, &PATTERNS[1])),
        };
        check_bundle(&bundle).unwrap();
    }
}

#[test]
fn kernel_disassembly_reassembles_to_the_same_bytes() {
    let object = assemble(&[("f16_to_fp8.S", KERNEL)], &LayoutOptions::default()).unwrap();
    let text = object.section(".text.f16_to_fp8").unwrap();
    let lines = disassemble(&text.bytes, text.address, Some(&object));
    let source = render_source(&lines);
    let again = assemble(
        &[("again.S", source.as_str())],
        &LayoutOptions::at(text.address),
    )
    .unwrap();
    assert_eq!(again.sections[0].address, text.address);
    assert_eq!(again.sections[0].bytes, text.bytes, "{source}");
}

fn raws() -> impl Strategy<Value = [u32; MAX_OPERANDS]> {
    prop::array::uniform5(any::<u32>())
}

/// A small alphabet that hits the interesting lexer and parser paths often.
fn asm_like_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "$m1",
        "$a0:1",
        "$a1:2",
        "$azeros",
        "$m4:5+=",
        "$FP_NFMT",
        "+=",
        "ld32",
        "f16v2tof8",
        "add",
        "brnzdec",
        "{",
        "}",
        ";",
        ",",
        ":",
        "\n",
        " ",
        "1:",
        "1f",
        "1b",
        ".",
        ".align",
        ".int",
        ".section",
        ".text",
        ".equ",
        "x",
        "x:",
        "0x",
        "0b1",
        "-",
        "~",
        "(",
        ")",
        "<<",
        ">>",
        "*",
        "/",
        "%",
        "/*",
        "*/",
        "//",
        "#",
        "#define",
        "#if",
        "\"",
        "@function",
        "4294967296",
        "99999999999999999999",
        "1.5e3",
        "$",
        "$mzero",
        "exitz",
        "run",
        ".worker",
        ".supervisor",
        ".space",
        ".float",
        "inf",
        "\t",
        "é",
        "\0",
    ]);
    prop::collection::vec(pieces, 0..64).prop_map(|v| v.concat())
}

#[derive(Clone, Debug)]
enum Mutation {
    Insert(usize, char),
    Delete(usize),
    Replace(usize, char),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let c = prop::sample::select(vec![
        '{', '}', ';', ',', ':', '$', '#', '/', '*', '\n', ' ', '0', '9', 'a', 'x', '.', '-', '+',
        '=', '"', '(', ')',
    ]);
    prop_oneof![
        (any::<usize>(), c.clone()).prop_map(|(i, c)| Mutation::Insert(i, c)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), c).prop_map(|(i, c)| Mutation::Replace(i, c)),
        (any::<usize>(), 0usize..40).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for m in mutations {
        let len = chars.len().max(1);
        match *m {
            Mutation::Insert(i, c) => chars.insert(i % (len + 1).min(chars.len() + 1), c),
            Mutation::Delete(i) if !chars.is_empty() => {
                chars.remove(i % chars.len());
            }
            Mutation::Replace(i, c) if !chars.is_empty() => {
                let at = i % chars.len();
                chars[at] = c;
            }
            Mutation::Duplicate(i, n) if !chars.is_empty() => {
                let at = i % chars.len();
                let end = (at + n).min(chars.len());
                let copy: Vec<char> = chars[at..end].to_vec();
                chars.splice(at..at, copy);
            }
            // An empty text has nothing to delete, replace or duplicate.
            Mutation::Delete(_) | Mutation::Replace(..) | Mutation::Duplicate(..) => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_rows_round_trip(index in 0..INSTRUCTIONS.len(), raws in raws()) {
        let inst = make_inst(&INSTRUCTIONS[index], &raws);
        prop_assert_eq!(check_inst(&inst), Ok(()));
    }

    #[test]
    fn random_bundles_round_trip(m in any::<prop::sample::Index>(), a in any::<prop::sample::Index>(), raws_m in raws(), raws_a in raws()) {
        let (mains, auxes) = (pairable(Pipe::Main), pairable(Pipe::Aux));
        let bundle = Bundle {
            main: Some(make_inst(mains[m.index(mains.len())], &raws_m)),
            aux: Some(make_inst(auxes[a.index(auxes.len())], &raws_a)),
        };
        prop_assert_eq!(check_bundle(&bundle), Ok(()));
    }

    #[test]
    fn decodable_words_print_canonically(word in any::<u32>()) {
        // Whatever decodes re-assembles to the same bits (co-issue bit aside).
        if let Ok(inst) = decode(word) {
            let text = format_inst(&inst);
            let words = assemble_words(&text).map_err(TestCaseError::fail)?;
            prop_assert!(same_up_to_aliases(&words, &[word & 0x7fff_ffff], &[inst]), "`{}` assembled to {:08x?}", text, words);
        }
    }

    #[test]
    fn assembler_never_panics_on_random_text(text in asm_like_text()) {
        let _ = assemble(&[("fuzz.S", text.as_str()), ("other.S", "x: nop\n")], &LayoutOptions::default());
        let _ = parse_bundle(&text);
    }

    #[test]
    fn assembler_never_panics_on_arbitrary_strings(text in any::<String>()) {
        let _ = assemble(&[("fuzz.S", text.as_str())], &LayoutOptions::default());
    }

    #[test]
    fn assembler_never_panics_on_mutated_kernel(mutations in prop::collection::vec(mutation(), 1..8)) {
        let text = mutate(KERNEL, &mutations);
        if let Err(errors) = assemble(&[("f16_to_fp8.S", text.as_str())], &LayoutOptions::default()) {
            prop_assert!(!errors.is_empty());
            for error in errors.iter() {
                let line = error.to_string();
                prop_assert!(line.starts_with("f16_to_fp8.S:") || line.starts_with("<layout options>:"), "{}", line);
                prop_assert!(error.loc().line >= 1 && error.loc().col >= 1);
            }
        }
    }

    #[test]
    fn disassembler_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256), address in any::<u32>()) {
        let lines = disassemble(&bytes, address, None);
        let consumed: usize = lines.iter().map(|l| 4 * l.words.len()).sum();
        prop_assert_eq!(consumed, bytes.len() / 4 * 4);
    }
}
