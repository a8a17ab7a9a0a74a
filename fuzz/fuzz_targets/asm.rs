//! Fuzzes the assembler (`tessera_isa::asm::assemble`, and `parse_bundle`) on arbitrary UTF-8
//! text, split at NUL characters into up to three source files. Checks: it never panics; an
//! `Err` holds at least one diagnostic; on success every listing line's canonical text parses
//! back (`parse_bundle`) and encodes to the listing's words; and an object that is one code
//! section at the default base, made only of instructions, disassembles (`render_source`) to
//! text that re-assembles to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_isa::asm::{
    assemble, assemble_str, disassemble, parse_bundle, render_source, LayoutOptions, Object,
    DEFAULT_BASE,
};
use tessera_isa::inst::emit::encode_bundle;

/// Whether the listing's words, in address order, are exactly the section's bytes.
fn only_instructions(object: &Object) -> bool {
    let section = &object.sections[0];
    let mut lines: Vec<_> = object.listing.iter().collect();
    lines.sort_by_key(|l| l.address);
    let mut at = section.address;
    let mut bytes = Vec::new();
    for line in lines {
        if line.address != at {
            return false;
        }
        for w in &line.words {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        at = at.wrapping_add(4 * line.words.len() as u32);
    }
    bytes == section.bytes
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_bundle(text);
    let files: Vec<(String, &str)> = text
        .splitn(3, '\0')
        .enumerate()
        .map(|(i, t)| (format!("f{i}.S"), t))
        .collect();
    let object = match assemble(&files, &LayoutOptions::default()) {
        Ok(object) => object,
        Err(errors) => {
            assert!(!errors.is_empty(), "Err without a diagnostic");
            let _ = errors.to_string();
            return;
        }
    };
    let _ = object.listing_text();
    for line in &object.listing {
        let bundle = parse_bundle(&line.text)
            .unwrap_or_else(|e| panic!("listing text `{}` does not parse: {e}", line.text));
        let words = encode_bundle(&bundle)
            .unwrap_or_else(|e| panic!("listing text `{}` does not encode: {e}", line.text));
        assert_eq!(
            words, line.words,
            "listing text `{}` encodes to other words",
            line.text
        );
    }
    if object.sections.len() == 1
        && object.sections[0].has_code
        && object.sections[0].address == DEFAULT_BASE
        && only_instructions(&object)
    {
        let section = &object.sections[0];
        let source = render_source(&disassemble(&section.bytes, section.address, None));
        let again = assemble_str(&source)
            .unwrap_or_else(|e| panic!("disassembly does not re-assemble:\n{source}\n{e}"));
        let bytes: Vec<u8> = again.sections.iter().flat_map(|s| s.bytes.clone()).collect();
        assert_eq!(bytes, section.bytes, "disassembly re-assembles to other bytes:\n{source}");
    }
});
