//! Round trips over every row of the instruction table: encode/decode, and canonical text through
//! the assembler back to the same bits; random bundles; and robustness of the assembler and
//! disassembler on random and mutated input (they must never panic).

use proptest::prelude::*;
use tessera_isa::asm::*;
use tessera_isa::inst::canonical::text_row;
use tessera_isa::inst::emit::{decode, decode_bundle, encode, encode_bundle, DecodeError};
use tessera_isa::inst::{Bundle, Inst, InstDesc, CARVE_OUTS, INSTRUCTIONS, MAX_OPERANDS};
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

/// The instruction `inst`'s text names: itself, or for an alias (a later row of the same text
/// shape whose values an earlier row holds, `inst::canonical`) the earlier row's instruction.
fn named(inst: &Inst) -> Inst {
    Inst {
        opcode: text_row(inst).opcode,
        operands: inst.operands,
    }
}

/// The words `insts` assemble to: each one's own, or for an alias the named row's.
fn named_words(insts: &[Inst]) -> Vec<u32> {
    insts
        .iter()
        .flat_map(|i| encode_bundle(&Bundle::single(named(i))).unwrap())
        .collect()
}

/// The one instruction of a decoded single-instruction bundle (a two-word row's too).
fn decode_one(words: &[u32]) -> Result<Inst, DecodeError> {
    let (bundle, _) = decode_bundle(words)?;
    Ok(bundle
        .main
        .or(bundle.aux)
        .expect("a decoded bundle holds an instruction"))
}

/// Whether `word` of `inst` is a carve-out's (`inst::CARVE_OUTS`): the word of the specific row
/// inside `inst`'s row, which decodes as the specific row's instruction.
fn carved_out(inst: &Inst, word: u32) -> bool {
    CARVE_OUTS
        .iter()
        .any(|&(specific, general)| general == inst.opcode && specific.desc().value == word)
}

fn check_inst(inst: &Inst) -> Result<(), String> {
    let encoded = encode_bundle(&Bundle::single(*inst)).map_err(|e| format!("{inst:?}: {e}"))?;
    let word = encoded[0];
    let canonical = named(inst);
    match decode_one(&encoded) {
        Ok(decoded) if canonical == *inst && decoded == *inst => {}
        Ok(decoded) if carved_out(inst, word) && encode(&decoded) == Ok(word) => {}
        Err(DecodeError::Alias { named, row, .. })
            if canonical != *inst && named == canonical.opcode && row == inst.opcode => {}
        other => return Err(format!("decode(encode({inst:?})) = {other:?}")),
    }
    let text = format_inst(inst);
    let words = assemble_words(&text)?;
    let expected =
        encode_bundle(&Bundle::single(canonical)).map_err(|e| format!("{canonical:?}: {e}"))?;
    if words != expected {
        return Err(format!(
            "`{text}` assembled to {words:08x?}, expected {expected:08x?}"
        ));
    }
    let parsed = parse_bundle(&text).map_err(|e| format!("{text}: {e}"))?;
    if parsed != Bundle::single(canonical) {
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
    [
        0x7fff_ffff,
        0x8000_0000,
        3,
        0x0000_ffff,
        0x1234_5678,
        0x0f0f_0f0f,
    ],
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

/// Raw field values that sweep an operand: every value of a field up to 12 bits, else both ends,
/// both sides of the sign boundary and an even spread between.
fn sweep(width: u32) -> Vec<u32> {
    if width <= 12 {
        return (0..1u32 << width).collect();
    }
    let top = ((1u64 << width) - 1) as u32;
    let half = 1u32 << (width - 1);
    let mut raws = vec![0, 1, 2, half - 2, half - 1, half, half + 1, top - 1, top];
    raws.extend((0..4096u64).map(|i| ((i * (u64::from(top) + 1)) / 4096) as u32));
    raws
}

/// The table-level proof that one row owns every word the decoder accepts and that its text
/// names that row: for every row, every operand swept over its field (the others at two fixed
/// patterns), the word decodes to the same instruction whose canonical text parses back to it,
/// or is refused as an alias whose text names the earlier row that holds the same values.
#[test]
fn every_decodable_word_of_every_row_has_text_naming_its_row() {
    let mut checked = 0usize;
    for row in INSTRUCTIONS {
        for fixed in [&PATTERNS[0], &PATTERNS[4]] {
            for (index, operand) in row.operands.iter().enumerate() {
                for raw in sweep(operand.field.width()) {
                    let mut raws = *fixed;
                    raws[index] = raw;
                    let inst = make_inst(row, &raws);
                    let Ok(encoded) = encode_bundle(&Bundle::single(inst)) else {
                        continue; // not a valid operand combination (e.g. an odd pair)
                    };
                    let word = encoded[0];
                    let canonical = named(&inst);
                    let expected = match decode_one(&encoded) {
                        Ok(decoded) if carved_out(&inst, word) => {
                            assert_eq!(encode(&decoded), Ok(word), "{word:#010x}");
                            inst
                        }
                        Ok(decoded) => {
                            assert_eq!(decoded, inst, "{word:#010x}");
                            assert_eq!(canonical, inst, "{word:#010x} decodes but is an alias");
                            inst
                        }
                        Err(DecodeError::Alias { named, .. }) => {
                            assert_eq!(named, canonical.opcode, "{word:#010x}");
                            assert_ne!(canonical, inst, "{word:#010x} refused but canonical");
                            canonical
                        }
                        Err(e) => panic!("{:?} {word:#010x}: {e}", row.opcode),
                    };
                    let text = format_inst(&inst);
                    let parsed = parse_bundle(&text).unwrap_or_else(|e| panic!("`{text}`: {e}"));
                    assert_eq!(
                        parsed,
                        Bundle::single(expected),
                        "`{text}` from {word:#010x}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100_000, "only {checked} words checked");
}

#[test]
fn the_fuzzers_min_alias_assembles_to_the_signed_row() {
    // fuzz/regressions/decode/min-zimm16-alias: 0x31000360 is `min $m0, $m0, 864` in the
    // zimm16 encoding; the text names the simm16 row, whose word is what it assembles to.
    let Err(DecodeError::Alias { named, .. }) = decode(0x3100_0360) else {
        panic!("0x31000360 decodes");
    };
    let canonical = Inst::new(named, &[0, 0, 864]);
    assert_eq!(format_inst(&canonical), "min $m0, $m0, 864");
    assert_eq!(
        assemble_words("min $m0, $m0, 864").unwrap(),
        vec![encode(&canonical).unwrap()]
    );
    assert_eq!(
        assemble_words("min $m0, $m0, 33632").unwrap(),
        vec![0x3100_8360]
    );
}

#[test]
fn every_row_in_one_program() {
    // Two-word rows need 8-byte alignment (hardware_words_assemble_and_decode_as_on_the_chip
    // places them).
    let insts: Vec<Inst> = INSTRUCTIONS
        .iter()
        .filter(|row| row.words == 1)
        .map(|row| make_inst(row, &PATTERNS[4]))
        .collect();
    let text: String = insts
        .iter()
        .map(|inst| format!("    {}\n", format_inst(inst)))
        .collect();
    let words = assemble_words(&text).unwrap();
    assert_eq!(words, named_words(&insts));
    // And the disassembly of those bytes is the same text.
    let object = assemble_str(&text).unwrap();
    let lines = disassemble(&object.sections[0].bytes, object.sections[0].address, None);
    let texts: Vec<String> = lines.iter().map(|l| l.text.clone()).collect();
    let formatted: Vec<String> = insts.iter().map(|i| format_inst(&named(i))).collect();
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
    let (main, aux) = (bundle.main.unwrap(), bundle.aux.unwrap());
    let aliased = encode_bundle(bundle).map_err(|e| format!("{bundle:?}: {e}"))?;
    // A bundle with an alias in it does not decode; its text names the canonical bundle.
    let canonical = Bundle {
        main: Some(named(&main)),
        aux: Some(named(&aux)),
    };
    if canonical != *bundle && !matches!(decode_bundle(&aliased), Err(DecodeError::Alias { .. })) {
        return Err(format!("{bundle:?} holds an alias but decodes"));
    }
    let bundle = &canonical;
    let words = encode_bundle(bundle).map_err(|e| format!("{bundle:?}: {e}"))?;
    let (decoded, used) = decode_bundle(&words).map_err(|e| format!("{bundle:?}: {e}"))?;
    if (decoded, used) != (*bundle, 2) {
        return Err(format!("decode_bundle gave {decoded:?}"));
    }
    let (main, aux) = (bundle.main.unwrap(), bundle.aux.unwrap());
    let text = format_bundle(bundle);
    let assembled = assemble_words(&text)?;
    if assembled != words {
        return Err(format!(
            "`{text}` assembled to {assembled:08x?}, expected {words:08x?}"
        ));
    }
    // Written aux first, over several lines: the main instruction is still emitted first.
    let swapped = format!("{{\n  {}\n  {}\n}}", format_inst(&aux), format_inst(&main));
    let assembled = assemble_words(&swapped)?;
    if assembled != words {
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
    prop::array::uniform6(any::<u32>())
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
        // Whatever decodes re-assembles to the same bits (co-issue bit aside) and its text
        // parses back to the same instruction: one row owns the word, its text names that row.
        if let Ok(inst) = decode(word) {
            let text = format_inst(&inst);
            let words = assemble_words(&text).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&words, &vec![word & 0x7fff_ffff], "`{}`", text);
            prop_assert_eq!(parse_bundle(&text).map_err(|e| TestCaseError::fail(e.to_string()))?, Bundle::single(inst));
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

/// The words osmarks/ipu-stack emits and runs on a C600 (its `crates/ipu-target/src/ipu21/
/// instruction.rs` encoder and tests, checked there against the SDK's encoder and disassembler;
/// docs/reference/hardware-ipu-stack.md §1.1): Tessera assembles the same text to the same word
/// and decodes the word back to the same text.
#[test]
fn hardware_words_assemble_and_decode_as_on_the_chip() {
    let words = [
        ("ld32 $m8, $m11, $mzero, 1", 0x01b8_f001u32),
        ("st32 $m2, $m11, $mzero, 0", 0x4fb2_f000),
        ("add $m11, $m11, -32", 0x22bb_ffe0),
        ("and $m0, $m8, 1", 0x4280_0001),
        ("shl $m10, $m7, 2", 0x427a_a002),
        ("setzi $m1, 5", 0x1910_0005),
        ("nop", 0x19e0_0000),
        ("br $m10", 0x43a0_0000),
        ("brz $m0, 0x4c100", 0x1301_3040),
        ("call $m10, 0x4c100", 0x18a1_3040),
        ("put $INCOMING_MUX, $m8", 0x4380_80a0),
        ("get $m1, $DBG_DATA", 0x4101_0070),
        // The timed receive controls: the first is from an SDK-generated receiver row
        // (hardware-ipu-stack.md §1.1, EXCHANGE_INSTRUCTION_REFERENCE.md: `64000082`), the others
        // from the documented field positions at their extremes.
        ("delayxpic 0, 0, 130", 0x6400_0082),
        ("delayxpic 4095, 1, 1600", 0x67ff_e640),
        ("delaypic 127, 1, 2", 0x63fc_0002),
        ("delaypic 0, 0, 0x14048", 0x6001_4048),
        ("sendpic 51, 2, 0x14048", 0x7679_4048),
        ("sendpic 63, 1, 1600", 0x77f4_0640),
        // `sendoff`: words − 1 split low six at [26:21], high six at [19:14] (ipu-stack's
        // `send_off(count − 65, …)` past a transfer's first 64 words).
        ("sendoff 64, 0, 1", 0x7000_4001),
        ("sendoff 4095, 2047, 7", 0x77ef_ffff),
        // What idle tiles run before `sync 1`, and the patched breakpoint (§1.1).
        ("sans 0", 0x40c0_0000),
        ("trap 0", 0x4180_1000),
    ];
    // `sendpicp`, two words: the SDK's example row (§1.1: `f54a0109 19015000`, 43 words from
    // 0x50084 in direction 1, XPIC 0x640 and the PIC pointer 0x15000), and the fields at their
    // extremes.
    let pairs = [
        (
            "sendpicp 42, 0x50084, 1, 1600, 0, 0x15000",
            [0xf54a_0109u32, 0x1901_5000],
        ),
        (
            "sendpicp 63, 0xffffc, 7, 0x3fff, 1, 0x3ffff",
            [0xffff_ffff, 0xffff_ffff],
        ),
        ("sendpicp 0, 0x0, 0, 0, 0, 0", [0xf000_0000, 0]),
    ];
    for (text, pair) in pairs {
        let object = assemble_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let bytes = &object.sections[0].bytes;
        let got: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(got, pair, "`{text}`");
        let (bundle, used) = decode_bundle(&pair).unwrap_or_else(|e| panic!("{pair:x?}: {e}"));
        assert_eq!(used, 2);
        assert_eq!(bundle.size(), 8);
        assert_eq!(format_bundle(&bundle), text, "{pair:x?}");
        assert!(decode_bundle(&pair[..1]).is_err(), "one word of two");
    }
    for (text, word) in words {
        let object = assemble_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let bytes = &object.sections[0].bytes;
        let got = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        assert_eq!(got, word, "`{text}` assembles to {got:#010x}");
        let inst = decode(word).unwrap_or_else(|e| panic!("{word:#010x}: {e}"));
        assert_eq!(format_inst(&inst), text, "{word:#010x}");
    }
}
