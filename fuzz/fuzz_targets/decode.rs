//! Fuzzes the instruction decoder and disassembler on arbitrary little-endian 32-bit words.
//! Checks: `decode`, `decode_bundle` and `disassemble` never panic; the disassembler consumes
//! every whole word; a word that decodes encodes back to itself (co-issue bit aside), and its
//! canonical text (`format_inst`) parses back to the same instruction and assembles to the same
//! word; a bundle that decodes encodes back to its one or two words, and its text
//! (`format_bundle`) parses back to it and assembles to those words.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_isa::asm::{assemble_str, disassemble, format_bundle, format_inst, parse_bundle};
use tessera_isa::inst::emit::{decode, decode_bundle, encode, encode_bundle, CO_ISSUE_BIT};
use tessera_isa::inst::Bundle;

fn assembled_words(text: &str) -> Vec<u32> {
    let object = assemble_str(text).unwrap_or_else(|e| panic!("`{text}` does not assemble: {e}"));
    object
        .sections
        .iter()
        .flat_map(|s| s.bytes.chunks_exact(4))
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .take(64)
        .collect();
    for &word in &words {
        match decode(word) {
            Ok(inst) => {
                assert_eq!(encode(&inst), Ok(word & !CO_ISSUE_BIT), "{word:#010x}: {inst:?}");
                let text = format_inst(&inst);
                let parsed = parse_bundle(&text)
                    .unwrap_or_else(|e| panic!("{word:#010x}: `{text}` does not parse: {e}"));
                assert_eq!(parsed, Bundle::single(inst), "{word:#010x}: `{text}`");
                assert_eq!(assembled_words(&text), vec![word & !CO_ISSUE_BIT], "`{text}`");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
    let mut i = 0;
    while i < words.len() {
        match decode_bundle(&words[i..]) {
            Ok((bundle, used)) => {
                assert!(used == 1 || used == 2, "used {used} words");
                let expected = &words[i..i + used];
                assert_eq!(encode_bundle(&bundle).as_deref(), Ok(expected), "{bundle:?}");
                let text = format_bundle(&bundle);
                let parsed = parse_bundle(&text)
                    .unwrap_or_else(|e| panic!("`{text}` does not parse: {e}"));
                assert_eq!(parsed, bundle, "`{text}`");
                assert_eq!(assembled_words(&text), expected, "`{text}`");
                i += used;
            }
            Err(_) => i += 1,
        }
    }
    let address = words.first().copied().unwrap_or(0);
    let lines = disassemble(data, address, None);
    let consumed: usize = lines.iter().map(|l| 4 * l.words.len()).sum();
    assert_eq!(consumed, data.len() / 4 * 4);
});
