//! Disassembler: decodes bytes bundle by bundle into canonical text; undecodable words become `.int`.

use super::object::Object;
use super::print::format_bundle;
use crate::inst::emit::decode_bundle;
use std::fmt::Write as _;

/// One disassembled bundle, word or trailing bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisasmLine {
    pub address: u32,
    /// The words consumed (empty for trailing bytes that do not fill a word).
    pub words: Vec<u32>,
    /// Canonical text: an instruction, `{ main ; aux }`, or `.int 0x...  // why` / `.byte ...`.
    pub text: String,
    /// A symbol of `symbols` at this address (a global one if there is one).
    pub label: Option<String>,
}

/// Decodes `bytes` (little-endian words) placed at `address`. Never panics.
pub fn disassemble(bytes: &[u8], address: u32, symbols: Option<&Object>) -> Vec<DisasmLine> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let label = |at: u32| symbols.and_then(|o| o.label_at(at)).map(str::to_string);
    let mut lines = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let at = address.wrapping_add(4 * i as u32);
        match decode_bundle(&words[i..]) {
            Ok((bundle, used)) => {
                let used = used.clamp(1, words.len() - i);
                lines.push(DisasmLine {
                    address: at,
                    words: words[i..i + used].to_vec(),
                    text: format_bundle(&bundle),
                    label: label(at),
                });
                i += used;
            }
            Err(error) => {
                let word = words[i];
                lines.push(DisasmLine {
                    address: at,
                    words: vec![word],
                    text: format!(".int {word:#010x}  // {error}"),
                    label: label(at),
                });
                i += 1;
            }
        }
    }
    let rest = &bytes[words.len() * 4..];
    if !rest.is_empty() {
        let at = address.wrapping_add(4 * words.len() as u32);
        let text = rest
            .iter()
            .map(|b| format!("{b:#04x}"))
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(DisasmLine {
            address: at,
            words: Vec::new(),
            text: format!(".byte {text}"),
            label: label(at),
        });
    }
    lines
}

/// Disassembles every code section of an object, with its labels.
pub fn disassemble_object(object: &Object) -> Vec<DisasmLine> {
    object
        .sections
        .iter()
        .filter(|s| s.has_code)
        .flat_map(|s| disassemble(&s.bytes, s.address, Some(object)))
        .collect()
}

/// Text of disassembled lines: `label:` lines, then `address  words  text`.
pub fn render(lines: &[DisasmLine]) -> String {
    let mut out = String::new();
    for line in lines {
        if let Some(label) = &line.label {
            let _ = writeln!(out, "{label}:");
        }
        write_code_line(&mut out, line.address, &line.words, &line.text);
    }
    out
}

/// One `address  words  text` line, as the disassembly and the assembler's listing print it.
pub(crate) fn write_code_line(out: &mut String, address: u32, words: &[u32], text: &str) {
    let words: Vec<String> = words.iter().map(|w| format!("{w:08x}")).collect();
    let _ = writeln!(out, "{address:08x}  {:<17}  {text}", words.join(" "));
}

/// Source text that re-assembles to the same bytes: labels and texts only.
pub fn render_source(lines: &[DisasmLine]) -> String {
    let mut out = String::new();
    for line in lines {
        if let Some(label) = &line.label {
            let _ = writeln!(out, "{label}:");
        }
        let _ = writeln!(out, "    {}", line.text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_panics_on_junk() {
        let bytes: Vec<u8> = (0..=255u8).chain([0xff, 0xff, 0xff, 0xff, 0x01]).collect();
        let lines = disassemble(&bytes, 0x4c000, None);
        assert_eq!(lines.last().unwrap().text, ".byte 0x01");
        // A trailing word with the co-issue bit set and nothing after it.
        let lines = disassemble(&(0x19e0_0000u32 | 1 << 31).to_le_bytes(), 0, None);
        assert!(
            lines[0].text.starts_with(".int 0x99e00000  // E-DEC-004"),
            "{}",
            lines[0].text
        );
    }
}
