//! The `.npy` preamble and header: magic, version, header length, and a linear, depth-bounded parser for the Python literals NumPy writes in the header dict.
#![expect(
    clippy::wildcard_enum_match_arm,
    reason = "the header parser accepts the literal kinds each key allows and rejects the rest"
)]

use super::{DType, NpyError, MAGIC};
use std::fmt;

/// Maximum nesting of brackets accepted in a header (guards the recursive parser's stack).
const MAX_NESTING: usize = 32;
/// Longest rendering of a header value quoted in an error message.
const MAX_ERROR_SNIPPET: usize = 120;

/// Splits off the preamble: returns the header bytes, the offset of the data and whether the
/// header is UTF-8 (version 3.0) rather than Latin-1.
pub(super) fn split_header(bytes: &[u8]) -> Result<(&[u8], usize, bool), NpyError> {
    let magic_len = MAGIC.len();
    if bytes.len() < magic_len || &bytes[..magic_len] != MAGIC {
        if bytes.len() < magic_len && MAGIC.starts_with(bytes) {
            return Err(NpyError::Truncated {
                what: "magic string",
                needed: magic_len,
                found: bytes.len(),
            });
        }
        return Err(NpyError::BadMagic {
            found: bytes[..bytes.len().min(magic_len)].to_vec(),
        });
    }
    let Some(&[major, minor]) = bytes.get(magic_len..magic_len + 2) else {
        return Err(NpyError::Truncated {
            what: "magic string and version",
            needed: magic_len + 2,
            found: bytes.len(),
        });
    };
    let (len_size, utf8) = match (major, minor) {
        (1, 0) => (2, false),
        (2, 0) => (4, false),
        (3, 0) => (4, true),
        _ => return Err(NpyError::UnsupportedVersion { major, minor }),
    };
    let prefix = magic_len + 2 + len_size;
    let Some(len_bytes) = bytes.get(magic_len + 2..prefix) else {
        return Err(NpyError::Truncated {
            what: "header length field",
            needed: prefix,
            found: bytes.len(),
        });
    };
    let header_len = match *len_bytes {
        [a, b] => usize::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as usize,
        _ => unreachable!("length field is 2 or 4 bytes"),
    };
    let data_offset = prefix.saturating_add(header_len);
    let Some(header) = bytes.get(prefix..data_offset) else {
        return Err(NpyError::Truncated {
            what: "header",
            needed: data_offset,
            found: bytes.len(),
        });
    };
    Ok((header, data_offset, utf8))
}

/// Parses the header dict into dtype, fortran order and shape.
pub(super) fn parse_header(
    header: &[u8],
    utf8: bool,
) -> Result<(DType, bool, Vec<usize>), NpyError> {
    let mut parser = Parser {
        s: header,
        pos: 0,
        utf8,
    };
    let value = parser.value(0)?;
    parser.skip_ws();
    if parser.pos < header.len() {
        return Err(parser.err("unexpected characters after the dict"));
    }
    let Lit::Dict(entries) = value else {
        return Err(NpyError::HeaderNotDict {
            detail: format!("found {}", snippet(&value)),
        });
    };
    // Like a Python dict literal, a repeated key takes its last value.
    let get = |key: &str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
            .map(|(_, v)| v)
    };
    let descr = get("descr").ok_or(NpyError::MissingKey { key: "descr" })?;
    let fortran = get("fortran_order").ok_or(NpyError::MissingKey {
        key: "fortran_order",
    })?;
    let shape = get("shape").ok_or(NpyError::MissingKey { key: "shape" })?;

    let dtype = match descr {
        Lit::Str(s) => DType::from_descr(s)?,
        other => {
            return Err(NpyError::UnsupportedDescr {
                descr: snippet(other),
            })
        }
    };
    let fortran_order = match fortran {
        Lit::Bool(b) => *b,
        other => {
            return Err(NpyError::BadHeaderValue {
                key: "fortran_order",
                detail: format!("must be True or False, found {}", snippet(other)),
            })
        }
    };
    let bad_shape = || NpyError::BadHeaderValue {
        key: "shape",
        detail: format!(
            "must be a tuple of non-negative ints, found {}",
            snippet(shape)
        ),
    };
    let Lit::Tuple(items) = shape else {
        return Err(bad_shape());
    };
    let dims = items
        .iter()
        .map(|item| match item {
            Lit::Int { neg, mag } if !*neg || *mag == 0 => usize::try_from(*mag).ok(),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(bad_shape)?;
    Ok((dtype, fortran_order, dims))
}

/// A Python literal, as far as `.npy` headers need them.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Int { neg: bool, mag: u64 },
    Bool(bool),
    None,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl fmt::Display for Lit {
    /// Python-like `repr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, items: &[Lit]) -> fmt::Result {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{item}")?;
            }
            Ok(())
        }
        match self {
            Lit::Str(s) => f.write_str(&py_quote(s)),
            Lit::Int { neg, mag } => write!(f, "{}{mag}", if *neg { "-" } else { "" }),
            Lit::Bool(true) => f.write_str("True"),
            Lit::Bool(false) => f.write_str("False"),
            Lit::None => f.write_str("None"),
            Lit::Tuple(items) => {
                f.write_str("(")?;
                seq(f, items)?;
                f.write_str(if items.len() == 1 { ",)" } else { ")" })
            }
            Lit::List(items) => {
                f.write_str("[")?;
                seq(f, items)?;
                f.write_str("]")
            }
            Lit::Dict(entries) => {
                f.write_str("{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A string quoted like Python's `repr` (single quotes, control characters escaped).
pub(super) fn py_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    truncate(out)
}

/// A literal's `repr`, shortened for error messages.
fn snippet(lit: &Lit) -> String {
    truncate(lit.to_string())
}

fn truncate(s: String) -> String {
    if s.chars().count() <= MAX_ERROR_SNIPPET {
        return s;
    }
    let mut short: String = s.chars().take(MAX_ERROR_SNIPPET).collect();
    short.push_str("...");
    short
}

/// Recursive-descent parser for Python literals, with a nesting limit.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    /// Header encoding: UTF-8 (format 3.0) or Latin-1 (1.0, 2.0).
    utf8: bool,
}

impl Parser<'_> {
    fn err(&self, msg: impl fmt::Display) -> NpyError {
        NpyError::HeaderNotDict {
            detail: format!("{msg} at header byte {}", self.pos),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(
            self.peek(),
            Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
        ) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), NpyError> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.err(format_args!("expected '{}'", c as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Lit, NpyError> {
        if depth > MAX_NESTING {
            return Err(self.err("brackets nested too deeply"));
        }
        self.skip_ws();
        match self.peek() {
            None => Err(self.err("unexpected end of header")),
            Some(b'{') => self.dict(depth),
            Some(b'(') => self.sequence(depth, b')'),
            Some(b'[') => self.sequence(depth, b']'),
            Some(b'\'' | b'"') => self.string(),
            Some(b'u' | b'U') if matches!(self.s.get(self.pos + 1), Some(b'\'' | b'"')) => {
                self.pos += 1;
                self.string()
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => self.int(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_') {
                    self.pos += 1;
                }
                match &self.s[start..self.pos] {
                    b"True" => Ok(Lit::Bool(true)),
                    b"False" => Ok(Lit::Bool(false)),
                    b"None" => Ok(Lit::None),
                    name => {
                        self.pos = start;
                        Err(self.err(format_args!(
                            "unexpected name '{}'",
                            truncate(String::from_utf8_lossy(name).into_owned())
                        )))
                    }
                }
            }
            Some(c) => Err(self.err(format_args!(
                "unexpected character '{}'",
                char::from(c).escape_default()
            ))),
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Lit, NpyError> {
        self.pos += 1; // '{'
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Lit::Dict(entries));
            }
            let key = self.value(depth + 1)?;
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            entries.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.err("expected ',' or '}' in dict")),
            }
        }
    }

    /// A tuple (`close == b')'`) or list (`close == b']'`). `(x)` without a comma is just `x`.
    fn sequence(&mut self, depth: usize, close: u8) -> Result<Lit, NpyError> {
        self.pos += 1; // opening bracket
        let mut items = Vec::new();
        let mut saw_comma = false;
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                break;
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    saw_comma = true;
                }
                Some(c) if c == close => {}
                _ => return Err(self.err(format_args!("expected ',' or '{}'", char::from(close)))),
            }
        }
        if close == b']' {
            Ok(Lit::List(items))
        } else if items.len() == 1 && !saw_comma {
            Ok(items.pop().unwrap_or(Lit::None))
        } else {
            Ok(Lit::Tuple(items))
        }
    }

    fn string(&mut self) -> Result<Lit, NpyError> {
        let start = self.pos;
        let quote = self.s[self.pos];
        self.pos += 1;
        let mut raw = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => {
                    self.pos = start;
                    return Err(self.err("unterminated string"));
                }
                Some(c) if c == quote => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    let Some(&escaped) = self.s.get(self.pos + 1) else {
                        self.pos = start;
                        return Err(self.err("unterminated string"));
                    };
                    raw.push(match escaped {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        other => other,
                    });
                    self.pos += 2;
                }
                Some(c) => {
                    raw.push(c);
                    self.pos += 1;
                }
            }
        }
        let text = if self.utf8 {
            String::from_utf8_lossy(&raw).into_owned()
        } else {
            raw.iter().map(|&b| char::from(b)).collect()
        };
        Ok(Lit::Str(text))
    }

    fn int(&mut self) -> Result<Lit, NpyError> {
        let start = self.pos;
        let mut neg = false;
        if let Some(sign @ (b'-' | b'+')) = self.peek() {
            neg = sign == b'-';
            self.pos += 1;
            self.skip_ws();
        }
        let mut mag: u64 = 0;
        let mut digits = 0usize;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() {
                mag = match mag
                    .checked_mul(10)
                    .and_then(|m| m.checked_add(u64::from(c - b'0')))
                {
                    Some(m) => m,
                    None => {
                        self.pos = start;
                        return Err(self.err("integer too large"));
                    }
                };
                digits += 1;
            } else if c != b'_' || digits == 0 {
                break;
            }
            self.pos += 1;
        }
        if digits == 0 {
            self.pos = start;
            return Err(self.err("expected a number"));
        }
        // Python 2 NumPy wrote long integers with an `L` suffix: `(3L, 4L)`.
        if matches!(self.peek(), Some(b'L' | b'l')) {
            self.pos += 1;
        }
        Ok(Lit::Int { neg, mag })
    }
}
