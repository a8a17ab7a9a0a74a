//! The assembled result: placed sections with their bytes, the symbol table and a source listing.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

/// Which context code is written for (`.worker` / `.supervisor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CodeContext {
    Worker,
    Supervisor,
}

/// `.type` of a symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SymbolKind {
    Function,
    Object,
    NoType,
}

/// One placed section. Sections with the same name in several files are concatenated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    pub name: String,
    /// Byte address of the first byte.
    pub address: u32,
    pub bytes: Vec<u8>,
    /// Whether the section holds instructions (it is then padded with `nop`s and 8-byte aligned).
    pub has_code: bool,
    /// The context of its code, when every `.worker`/`.supervisor` in it agrees.
    pub context: Option<CodeContext>,
    /// Alignment of the section start (its largest `.align`; at least 8 for code).
    pub align: u32,
}

impl Section {
    /// Address one past the last byte.
    pub fn end(&self) -> u64 {
        self.address as u64 + self.bytes.len() as u64
    }

    pub fn contains(&self, address: u32) -> bool {
        (self.address as u64..self.end()).contains(&(address as u64))
    }
}

/// A label. Numeric local labels (`1:`) and `.equ` constants are not in the table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    pub address: u32,
    /// Index into [`Object::sections`].
    pub section: usize,
    pub global: bool,
    pub kind: SymbolKind,
    pub size: Option<u32>,
    /// The `.worker`/`.supervisor` mode in force where the label was defined.
    pub context: Option<CodeContext>,
}

/// One assembled instruction or bundle, for listings and for mapping addresses back to source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListingLine {
    pub address: u32,
    /// One word, or two for a bundle (main first, co-issue bit set on it).
    pub words: Vec<u32>,
    /// Canonical text ([`super::print::format_bundle`]).
    pub text: String,
    pub file: String,
    pub line: u32,
}

/// The output of [`super::assemble`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Object {
    /// In order of first appearance in the sources.
    pub sections: Vec<Section>,
    /// Labels by name. A file-local label whose name is also defined in another file is keyed
    /// `file:name`; global labels and unique names are keyed by their name.
    pub symbols: BTreeMap<String, Symbol>,
    /// Every instruction and bundle in source order, including the `nop`s that pad `.align`.
    pub listing: Vec<ListingLine>,
}

impl Object {
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.get(name)
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The section holding an address.
    pub fn section_at(&self, address: u32) -> Option<&Section> {
        self.sections.iter().find(|s| s.contains(address))
    }

    /// Address ranges of the sections that hold code, sorted by address (empty ones left out).
    pub fn code_ranges(&self) -> Vec<Range<u32>> {
        let mut ranges: Vec<Range<u32>> = self
            .sections
            .iter()
            .filter(|s| s.has_code && !s.bytes.is_empty())
            .map(|s| s.address..s.end().min(u32::MAX as u64) as u32)
            .collect();
        ranges.sort_by_key(|r| (r.start, r.end));
        ranges
    }

    /// The best name for an address: a global label first, then any label (by name order).
    pub fn label_at(&self, address: u32) -> Option<&str> {
        let mut best: Option<(&str, bool)> = None;
        for (name, symbol) in &self.symbols {
            if symbol.address == address && best.is_none_or(|(_, global)| symbol.global && !global)
            {
                best = Some((name, symbol.global));
            }
        }
        best.map(|(name, _)| name)
    }

    /// The listing line of the instruction at an address.
    pub fn source_at(&self, address: u32) -> Option<&ListingLine> {
        self.listing
            .iter()
            .find(|l| l.address == address || (l.words.len() == 2 && l.address + 4 == address))
    }

    /// A readable listing: labels, then `address  words  text` per instruction.
    pub fn listing_text(&self) -> String {
        let mut out = String::new();
        for line in &self.listing {
            for (name, symbol) in &self.symbols {
                if symbol.address == line.address
                    && self
                        .sections
                        .get(symbol.section)
                        .is_some_and(|s| s.has_code)
                {
                    let _ = writeln!(out, "{name}:");
                }
            }
            super::disasm::write_code_line(&mut out, line.address, &line.words, &line.text);
        }
        out
    }
}

/// Magic and version at the start of an object file.
pub const OBJECT_MAGIC: &[u8; 8] = b"TSROBJ01";

/// Why an object file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectFileError {
    #[error("E-OBJ-001: not a Tessera object file (bad magic; expected {expected:?})")]
    BadMagic { expected: &'static str },
    #[error("E-OBJ-002: object file truncated: {what}")]
    Truncated { what: &'static str },
    #[error("E-OBJ-003: object manifest is malformed: {0}")]
    Manifest(String),
    #[error(
        "E-OBJ-004: section {section} claims {claimed} bytes but the payload has {available} left"
    )]
    Payload {
        section: String,
        claimed: usize,
        available: usize,
    },
}

impl Object {
    /// Object file: magic, little-endian manifest length, RON manifest (the object with empty
    /// section bytes), then every section's bytes in order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut manifest = self.clone();
        let mut lengths = Vec::new();
        for section in &mut manifest.sections {
            lengths.push(section.bytes.len());
            section.bytes = Vec::new();
        }
        let text = ron::ser::to_string(&(manifest, lengths)).expect("objects always serialize");
        let mut out = Vec::with_capacity(
            16 + text.len() + self.sections.iter().map(|s| s.bytes.len()).sum::<usize>(),
        );
        out.extend_from_slice(OBJECT_MAGIC);
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        for section in &self.sections {
            out.extend_from_slice(&section.bytes);
        }
        out
    }

    /// Reads an object file written by [`Object::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Object, ObjectFileError> {
        let rest =
            bytes
                .strip_prefix(OBJECT_MAGIC.as_slice())
                .ok_or(ObjectFileError::BadMagic {
                    expected: "TSROBJ01",
                })?;
        let length_bytes = rest
            .first_chunk::<8>()
            .copied()
            .ok_or(ObjectFileError::Truncated {
                what: "manifest length",
            })?;
        let length = u64::from_le_bytes(length_bytes);
        let rest = &rest[8..];
        if length > rest.len() as u64 {
            return Err(ObjectFileError::Truncated { what: "manifest" });
        }
        let (manifest, mut payload) = rest.split_at(length as usize);
        let text =
            std::str::from_utf8(manifest).map_err(|e| ObjectFileError::Manifest(e.to_string()))?;
        let (mut object, lengths): (Object, Vec<usize>) =
            ron::from_str(text).map_err(|e| ObjectFileError::Manifest(e.to_string()))?;
        if lengths.len() != object.sections.len() {
            return Err(ObjectFileError::Manifest(
                "section count does not match the lengths".into(),
            ));
        }
        for (section, length) in object.sections.iter_mut().zip(lengths) {
            if length > payload.len() {
                return Err(ObjectFileError::Payload {
                    section: section.name.clone(),
                    claimed: length,
                    available: payload.len(),
                });
            }
            section.bytes = payload[..length].to_vec();
            payload = &payload[length..];
        }
        Ok(object)
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn object_files_round_trip_and_reject_garbage() {
        let object = crate::asm::assemble_str(
            ".text\nstart:\n  add $m0, $m1, 4\n  .section .data\nvalue: .int 7\n",
        )
        .unwrap();
        let bytes = object.to_bytes();
        assert_eq!(Object::from_bytes(&bytes).unwrap(), object);
        assert!(matches!(
            Object::from_bytes(b"nonsense"),
            Err(ObjectFileError::BadMagic { .. })
        ));
        assert!(Object::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        for cut in 0..bytes.len().min(64) {
            let _ = Object::from_bytes(&bytes[..cut]);
        }
    }
}
