//! Indexes over the instruction table, built once: the rows of each mnemonic.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{InstDesc, INSTRUCTIONS};

/// The rows of one mnemonic, in table order (empty for an unknown one): an index built once,
/// so that the assembler looks rows up instead of scanning the table for every statement.
pub fn rows_named(mnemonic: &str) -> &'static [&'static InstDesc] {
    static BY_MNEMONIC: OnceLock<HashMap<&'static str, Vec<&'static InstDesc>>> = OnceLock::new();
    let index = BY_MNEMONIC.get_or_init(|| {
        let mut index: HashMap<&'static str, Vec<&'static InstDesc>> = HashMap::new();
        for row in INSTRUCTIONS {
            index.entry(row.mnemonic).or_default().push(row);
        }
        index
    });
    index.get(mnemonic).map(Vec::as_slice).unwrap_or(&[])
}
