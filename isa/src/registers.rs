//! Register files of one context: the MRF (`$m`), the ARF (`$a`), their pairs and quads, and names.

/// Number of 32-bit registers in each file (encodings 0..15).
pub const REGISTER_COUNT: usize = 16;

/// `$m12`: read-only worker scratch base (`$WORKER_BASE`).
pub const M_WORKER_BASE: u8 = 12;
/// `$m13`: read-only vertex state pointer (`$VERTEX_BASE`).
pub const M_VERTEX_BASE: u8 = 13;
/// `$m14`: read-only, implementation specific; reads 0 here.
pub const M_RESERVED: u8 = 14;
/// `$m15`: reads 0, writes are discarded.
pub const M_ZERO: u8 = 15;
/// `$a15`: reads 0; `$a14:15` is the 64-bit zero pair `$azeros`.
pub const A_ZERO: u8 = 15;
/// `$a14` also reads 0 (it is the low half of `$azeros`).
pub const A_ZEROS_LOW: u8 = 14;

/// Which register file an operand names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterFile {
    /// Main register file: integers and addresses.
    M,
    /// Auxiliary register file: floating point.
    A,
}

impl RegisterFile {
    pub fn prefix(self) -> char {
        match self {
            RegisterFile::M => 'm',
            RegisterFile::A => 'a',
        }
    }
}

/// Canonical spelling of a single register (`$m13` prints as `$mvertex_base`).
pub fn register_name(file: RegisterFile, index: u8) -> String {
    match (file, index) {
        (RegisterFile::M, M_WORKER_BASE) => "$mworker_base".to_string(),
        (RegisterFile::M, M_VERTEX_BASE) => "$mvertex_base".to_string(),
        (RegisterFile::M, M_ZERO) => "$mzero".to_string(),
        (RegisterFile::A, A_ZERO) => "$azero".to_string(),
        (file, index) => format!("${}{}", file.prefix(), index),
    }
}

/// Canonical spelling of an aligned register group of `width` registers (2 = pair, 4 = quad).
pub fn group_name(file: RegisterFile, first: u8, width: u8) -> String {
    match (file, first, width) {
        (RegisterFile::A, 14, 2) => "$azeros".to_string(),
        (file, first, width) => format!("${}{}:{}", file.prefix(), first, first + width - 1),
    }
}

/// Parses a single-register name without the leading `$` (`m3`, `mzero`, `a15`, `azero`).
pub fn parse_register(name: &str) -> Option<(RegisterFile, u8)> {
    match name {
        "mzero" => return Some((RegisterFile::M, M_ZERO)),
        "mworker_base" => return Some((RegisterFile::M, M_WORKER_BASE)),
        "mvertex_base" => return Some((RegisterFile::M, M_VERTEX_BASE)),
        "azero" => return Some((RegisterFile::A, A_ZERO)),
        // ABI aliases of the current LLVM (LLVM-REG in the reference): sp, lr, fp.
        "sp" => return Some((RegisterFile::M, 11)),
        "lr" => return Some((RegisterFile::M, 10)),
        "fp" => return Some((RegisterFile::M, 9)),
        _ => {}
    }
    let (file, digits) = match name.as_bytes().first()? {
        b'm' => (RegisterFile::M, &name[1..]),
        b'a' => (RegisterFile::A, &name[1..]),
        _ => return None,
    };
    if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() == 2 && digits.starts_with('0') {
        return None;
    }
    let index: u8 = digits.parse().ok()?;
    (index < REGISTER_COUNT as u8).then_some((file, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for file in [RegisterFile::M, RegisterFile::A] {
            for index in 0..16u8 {
                let name = register_name(file, index);
                assert_eq!(parse_register(&name[1..]), Some((file, index)), "{name}");
            }
        }
    }

    #[test]
    fn rejects_bad_names() {
        for bad in ["m16", "a99", "m", "x1", "m01", "mzeroo", "a-1"] {
            assert_eq!(parse_register(bad), None, "{bad}");
        }
    }
}
