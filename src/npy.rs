//! Reader and writer for NumPy `.npy` files (format 1.0, 2.0 and 3.0) holding plain little-endian numeric arrays in C order.
//!
//! The header is parsed with a small, non-recursive-bomb-safe parser for the subset of Python
//! literals NumPy writes (a dict with `'descr'`, `'fortran_order'` and `'shape'`, keys in any
//! order). Malformed input of any kind gives an [`NpyError`]; nothing here panics on bad bytes.
//!
//! The writer produces exactly the bytes `numpy.save` produces for the same array: keys sorted,
//! 21-digit growth space after the dict, padded with spaces and a final `\n` so that the data
//! starts at a multiple of 64 bytes, version 1.0 unless the header does not fit in 65535 bytes
//! (then 2.0).
#![allow(
    clippy::wildcard_enum_match_arm,
    reason = "header parser to be replaced by npyz (issue 14)"
)]

use std::fmt;
use std::path::{Path, PathBuf};

/// The six bytes every `.npy` file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Data offset alignment used by NumPy (`numpy.lib.format.ARRAY_ALIGN`).
const ARRAY_ALIGN: usize = 64;
/// Spare header space NumPy leaves so the first axis can grow in place
/// (`numpy.lib.format.GROWTH_AXIS_MAX_DIGITS`).
const GROWTH_AXIS_MAX_DIGITS: usize = 21;
/// Maximum nesting of brackets accepted in a header (guards the recursive parser's stack).
const MAX_NESTING: usize = 32;
/// Longest rendering of a header value quoted in an error message.
const MAX_ERROR_SNIPPET: usize = 120;

/// Element type of an array; all multi-byte types are little-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Float16,
    Float32,
    Float64,
    UInt8,
    Int8,
    UInt16,
    Int16,
    UInt32,
    Int32,
    UInt64,
    Int64,
    Bool,
}

impl DType {
    /// Every supported dtype.
    pub const ALL: [DType; 12] = [
        DType::Float16,
        DType::Float32,
        DType::Float64,
        DType::UInt8,
        DType::Int8,
        DType::UInt16,
        DType::Int16,
        DType::UInt32,
        DType::Int32,
        DType::UInt64,
        DType::Int64,
        DType::Bool,
    ];

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::UInt8 | DType::Int8 | DType::Bool => 1,
            DType::Float16 | DType::UInt16 | DType::Int16 => 2,
            DType::Float32 | DType::UInt32 | DType::Int32 => 4,
            DType::Float64 | DType::UInt64 | DType::Int64 => 8,
        }
    }

    /// The NumPy `descr` string NumPy writes for this dtype (`"<f4"`, `"|u1"`, `"|b1"`, ...).
    pub fn descr(self) -> &'static str {
        match self {
            DType::Float16 => "<f2",
            DType::Float32 => "<f4",
            DType::Float64 => "<f8",
            DType::UInt8 => "|u1",
            DType::Int8 => "|i1",
            DType::UInt16 => "<u2",
            DType::Int16 => "<i2",
            DType::UInt32 => "<u4",
            DType::Int32 => "<i4",
            DType::UInt64 => "<u8",
            DType::Int64 => "<i8",
            DType::Bool => "|b1",
        }
    }

    /// Parses a NumPy `descr` string.
    ///
    /// Accepts a byte-order character `<`, `|`, `=` or none, then kind and size (`f2`, `u1`,
    /// `b1`, ...). For one-byte types any byte order (`<u1`, `|i1`, `>u1`) is accepted. `=` and a
    /// missing byte-order character are read as little-endian (NumPy itself always writes `<` or
    /// `|`). A `>` on a multi-byte type gives [`NpyError::BigEndian`].
    pub fn from_descr(descr: &str) -> Result<Self, NpyError> {
        let (order, code) = match descr.as_bytes().first() {
            Some(&c @ (b'<' | b'>' | b'|' | b'=')) => (Some(c), &descr[1..]),
            _ => (None, descr),
        };
        let dtype = match code {
            "f2" => DType::Float16,
            "f4" => DType::Float32,
            "f8" => DType::Float64,
            "u1" => DType::UInt8,
            "i1" => DType::Int8,
            "u2" => DType::UInt16,
            "i2" => DType::Int16,
            "u4" => DType::UInt32,
            "i4" => DType::Int32,
            "u8" => DType::UInt64,
            "i8" => DType::Int64,
            "b1" | "?" => DType::Bool,
            _ => {
                return Err(NpyError::UnsupportedDescr {
                    descr: py_quote(descr),
                })
            }
        };
        if order == Some(b'>') && dtype.size() > 1 {
            return Err(NpyError::BigEndian {
                descr: descr.to_string(),
            });
        }
        Ok(dtype)
    }

    /// Looks up a dtype by its NumPy name (`"float16"`, `"uint8"`, `"bool"`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The NumPy name of this dtype (`"float32"`, `"int8"`, `"bool"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float16 => "float16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::UInt8 => "uint8",
            DType::Int8 => "int8",
            DType::UInt16 => "uint16",
            DType::Int16 => "int16",
            DType::UInt32 => "uint32",
            DType::Int32 => "int32",
            DType::UInt64 => "uint64",
            DType::Int64 => "int64",
            DType::Bool => "bool",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that can go wrong reading or writing a `.npy` file.
#[derive(Debug)]
#[non_exhaustive]
pub enum NpyError {
    /// The file could not be read or written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file at `path` was read but its contents are not an acceptable `.npy` array.
    InFile {
        path: PathBuf,
        source: Box<NpyError>,
    },
    /// The input does not start with `\x93NUMPY`; `found` holds the first (up to six) bytes.
    BadMagic { found: Vec<u8> },
    /// The input ends before the part `what` is complete.
    Truncated {
        what: &'static str,
        needed: usize,
        found: usize,
    },
    /// The format version is not 1.0, 2.0 or 3.0.
    UnsupportedVersion { major: u8, minor: u8 },
    /// The header is not a Python dict literal; `detail` says where parsing stopped.
    HeaderNotDict { detail: String },
    /// The header dict lacks one of `'descr'`, `'fortran_order'`, `'shape'`.
    MissingKey { key: &'static str },
    /// A header key has a value of the wrong kind (e.g. `'shape': [2, 3]`).
    BadHeaderValue { key: &'static str, detail: String },
    /// The `descr` is not one of the supported plain numeric dtypes (structured, complex,
    /// strings, datetimes, ...). `descr` is its Python rendering.
    UnsupportedDescr { descr: String },
    /// The `descr` is a big-endian multi-byte type such as `'>f4'`.
    BigEndian { descr: String },
    /// `fortran_order` is `True` for a shape where Fortran and C order differ.
    FortranOrder { shape: Vec<usize> },
    /// The byte size of `shape` elements of `dtype` does not fit in `usize`.
    ShapeOverflow { dtype: DType, shape: Vec<usize> },
    /// The data does not hold exactly `shape` elements of `dtype`.
    DataLength {
        dtype: DType,
        shape: Vec<usize>,
        expected: usize,
        found: usize,
    },
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io { path, source } => write!(f, "{}: {}", path.display(), source),
            NpyError::InFile { path, source } => write!(f, "{}: {}", path.display(), source),
            NpyError::BadMagic { found } => write!(
                f,
                "not a .npy file: bad magic string (expected b\"\\x93NUMPY\", found b\"{}\")",
                found.escape_ascii()
            ),
            NpyError::Truncated {
                what,
                needed,
                found,
            } => write!(
                f,
                "truncated .npy file: {what} needs {needed} bytes, only {found} present"
            ),
            NpyError::UnsupportedVersion { major, minor } => write!(
                f,
                "unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)"
            ),
            NpyError::HeaderNotDict { detail } => {
                write!(f, "malformed .npy header: not a Python dict literal: {detail}")
            }
            NpyError::MissingKey { key } => {
                write!(f, "malformed .npy header: missing key '{key}'")
            }
            NpyError::BadHeaderValue { key, detail } => {
                write!(f, "malformed .npy header: '{key}' {detail}")
            }
            NpyError::UnsupportedDescr { descr } => write!(
                f,
                "unsupported dtype descr {descr} (supported: {})",
                DType::ALL.map(DType::descr).join(" ")
            ),
            NpyError::BigEndian { descr } => write!(
                f,
                "unsupported dtype descr '{descr}': big-endian data is not supported (only little-endian)"
            ),
            NpyError::FortranOrder { shape } => write!(
                f,
                "fortran_order True is not supported for shape {shape:?} (only C order)"
            ),
            NpyError::ShapeOverflow { dtype, shape } => write!(
                f,
                "shape {shape:?} of {dtype} is too large: its byte size overflows usize"
            ),
            NpyError::DataLength {
                dtype,
                shape,
                expected,
                found,
            } => write!(
                f,
                "data length does not match shape {shape:?} of {dtype}: expected {expected} bytes, found {found}"
            ),
        }
    }
}

impl std::error::Error for NpyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NpyError::Io { source, .. } => Some(source),
            NpyError::InFile { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

/// An n-dimensional array as stored in a `.npy` file.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    pub dtype: DType,
    /// Extent of each axis; empty for a 0-d (scalar) array.
    pub shape: Vec<usize>,
    /// Little-endian raw element bytes in C (row-major) order.
    pub data: Vec<u8>,
}

/// Number of elements of `shape`, or `None` on overflow.
fn checked_element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Byte size of `shape` elements of `dtype`.
fn checked_byte_len(dtype: DType, shape: &[usize]) -> Result<usize, NpyError> {
    checked_element_count(shape)
        .and_then(|n| n.checked_mul(dtype.size()))
        .ok_or_else(|| NpyError::ShapeOverflow {
            dtype,
            shape: shape.to_vec(),
        })
}

macro_rules! typed_constructor {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $dtype:expr) => {
        $(#[$doc])*
        pub fn $name(shape: &[usize], values: &[$ty]) -> Result<Self, NpyError> {
            let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            NpyArray::new($dtype, shape.to_vec(), data)
        }
    };
}

impl NpyArray {
    /// Builds an array, checking that `data` holds exactly `shape` elements of `dtype`.
    pub fn new(dtype: DType, shape: Vec<usize>, data: Vec<u8>) -> Result<Self, NpyError> {
        let array = NpyArray { dtype, shape, data };
        array.check()?;
        Ok(array)
    }

    /// Checks that `data` holds exactly `shape` elements of `dtype` (the public fields may have
    /// been changed since construction).
    pub fn check(&self) -> Result<(), NpyError> {
        let expected = checked_byte_len(self.dtype, &self.shape)?;
        if self.data.len() != expected {
            return Err(NpyError::DataLength {
                dtype: self.dtype,
                shape: self.shape.clone(),
                expected,
                found: self.data.len(),
            });
        }
        Ok(())
    }

    /// Number of elements (product of the shape; 1 for a 0-d array). Saturates at `usize::MAX`
    /// if the fields were set to an overflowing shape by hand.
    pub fn element_count(&self) -> usize {
        checked_element_count(&self.shape).unwrap_or(usize::MAX)
    }

    /// Parses the contents of a `.npy` file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, NpyError> {
        let (header, data_offset, utf8) = split_header(bytes)?;
        let (dtype, fortran_order, shape) = parse_header(header, utf8)?;
        let expected = checked_byte_len(dtype, &shape)?;
        // Fortran order only changes the layout when two or more axes have extent > 1 and the
        // array is not empty.
        if fortran_order && expected > 0 && shape.iter().filter(|&&d| d > 1).count() > 1 {
            return Err(NpyError::FortranOrder { shape });
        }
        let data = &bytes[data_offset..];
        if data.len() != expected {
            return Err(NpyError::DataLength {
                dtype,
                shape,
                expected,
                found: data.len(),
            });
        }
        Ok(NpyArray {
            dtype,
            shape,
            data: data.to_vec(),
        })
    }

    /// Serialises to the bytes `numpy.save` would write for the same array. Does not validate
    /// the fields; see [`NpyArray::check`].
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = header_bytes(self.dtype, &self.shape);
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads a `.npy` file. Every error names `path`.
    pub fn read(path: &Path) -> Result<Self, NpyError> {
        let bytes = std::fs::read(path).map_err(|source| NpyError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        NpyArray::from_bytes(&bytes).map_err(|e| NpyError::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })
    }

    /// Writes a `.npy` file, after checking that the data matches the shape. Every error names
    /// `path`.
    pub fn write(&self, path: &Path) -> Result<(), NpyError> {
        self.check().map_err(|e| NpyError::InFile {
            path: path.to_path_buf(),
            source: Box::new(e),
        })?;
        std::fs::write(path, self.to_bytes()).map_err(|source| NpyError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    typed_constructor!(
        /// A `float32` array from values in C order.
        from_f32, f32, DType::Float32
    );
    typed_constructor!(
        /// A `float64` array from values in C order.
        from_f64, f64, DType::Float64
    );
    typed_constructor!(
        /// A `float16` array from IEEE binary16 bit patterns in C order.
        from_f16_bits, u16, DType::Float16
    );
    typed_constructor!(
        /// A `uint8` array from values in C order.
        from_u8, u8, DType::UInt8
    );
    typed_constructor!(
        /// An `int8` array from values in C order.
        from_i8, i8, DType::Int8
    );
    typed_constructor!(
        /// A `uint16` array from values in C order.
        from_u16, u16, DType::UInt16
    );
    typed_constructor!(
        /// An `int16` array from values in C order.
        from_i16, i16, DType::Int16
    );
    typed_constructor!(
        /// A `uint32` array from values in C order.
        from_u32, u32, DType::UInt32
    );
    typed_constructor!(
        /// An `int32` array from values in C order.
        from_i32, i32, DType::Int32
    );
    typed_constructor!(
        /// A `uint64` array from values in C order.
        from_u64, u64, DType::UInt64
    );
    typed_constructor!(
        /// An `int64` array from values in C order.
        from_i64, i64, DType::Int64
    );

    /// A `bool` array from values in C order.
    pub fn from_bool(shape: &[usize], values: &[bool]) -> Result<Self, NpyError> {
        NpyArray::new(
            DType::Bool,
            shape.to_vec(),
            values.iter().map(|&b| u8::from(b)).collect(),
        )
    }

    /// The elements converted to `f32` in C order: exact for `float16`, `float32`, the 8- and
    /// 16-bit integers and `bool` (0.0 / 1.0, any non-zero byte is true); rounded to nearest for
    /// `float64` and the wider integers.
    pub fn to_f32_vec(&self) -> Result<Vec<f32>, NpyError> {
        self.check()?;
        let size = self.dtype.size();
        let convert: fn(&[u8]) -> f32 = match self.dtype {
            DType::Float16 => |b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32(),
            DType::Float32 => |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            DType::Float64 => |b| f64::from_le_bytes(le8(b)) as f32,
            DType::UInt8 => |b| f32::from(b[0]),
            DType::Int8 => |b| f32::from(b[0] as i8),
            DType::Bool => |b| if b[0] != 0 { 1.0 } else { 0.0 },
            DType::UInt16 => |b| f32::from(u16::from_le_bytes([b[0], b[1]])),
            DType::Int16 => |b| f32::from(i16::from_le_bytes([b[0], b[1]])),
            DType::UInt32 => |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
            DType::Int32 => |b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
            DType::UInt64 => |b| u64::from_le_bytes(le8(b)) as f32,
            DType::Int64 => |b| i64::from_le_bytes(le8(b)) as f32,
        };
        Ok(self.data.chunks_exact(size).map(convert).collect())
    }
}

fn le8(b: &[u8]) -> [u8; 8] {
    [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]
}

// ---------------------------------------------------------------------------------------------
// Writing

/// The Python `repr` of a shape tuple: `()`, `(5,)`, `(2, 3)`.
fn shape_repr(shape: &[usize]) -> String {
    match shape {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", dims.join(", "))
        }
    }
}

/// Magic, version, header length and padded header, exactly as `numpy.lib.format` writes them.
fn header_bytes(dtype: DType, shape: &[usize]) -> Vec<u8> {
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
        dtype.descr(),
        shape_repr(shape)
    );
    if let Some(first) = shape.first() {
        let digits = first.to_string().len();
        dict.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
    }
    // +1 for the terminating newline.
    let hlen = dict.len() + 1;
    let v1_pad = ARRAY_ALIGN - (MAGIC.len() + 2 + 2 + hlen) % ARRAY_ALIGN;
    let (version, pad) = if hlen + v1_pad <= usize::from(u16::MAX) {
        (1u8, v1_pad)
    } else {
        (
            2u8,
            ARRAY_ALIGN - (MAGIC.len() + 2 + 4 + hlen) % ARRAY_ALIGN,
        )
    };
    let mut out = Vec::with_capacity(MAGIC.len() + 6 + hlen + pad);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    let total = hlen + pad;
    if version == 1 {
        // Checked above: total fits in u16.
        out.extend_from_slice(&(total as u16).to_le_bytes());
    } else {
        let total = u32::try_from(total).expect(".npy header longer than 4 GiB");
        out.extend_from_slice(&total.to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + pad, b' ');
    out.push(b'\n');
    out
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Splits off the preamble: returns the header bytes, the offset of the data and whether the
/// header is UTF-8 (version 3.0) rather than Latin-1.
fn split_header(bytes: &[u8]) -> Result<(&[u8], usize, bool), NpyError> {
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
fn parse_header(header: &[u8], utf8: bool) -> Result<(DType, bool, Vec<usize>), NpyError> {
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
fn py_quote(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A `.npy` file with the given header dict text, v1.0, header padded like NumPy pads.
    fn with_header(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut h = dict.as_bytes().to_vec();
        let pad = ARRAY_ALIGN - (10 + h.len() + 1) % ARRAY_ALIGN;
        h.resize(h.len() + pad, b' ');
        h.push(b'\n');
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(&h);
        out.extend_from_slice(data);
        out
    }

    fn parse_dict(dict: &str, data: &[u8]) -> Result<NpyArray, NpyError> {
        NpyArray::from_bytes(&with_header(dict, data))
    }

    fn header_of(bytes: &[u8]) -> &[u8] {
        let end = bytes.iter().position(|&b| b == b'\n').unwrap();
        &bytes[..=end]
    }

    fn scratch_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("tessera-npy-{}-{}", std::process::id(), name))
    }

    #[test]
    fn reads_shared_f143_decode_table() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/testdata/fp8/f143_decode.npy"
        ));
        let array = NpyArray::read(path).unwrap();
        assert_eq!(array.dtype, DType::Float32);
        assert_eq!(array.shape, vec![256]);
        let v = array.to_f32_vec().unwrap();
        assert_eq!(v.len(), 256);
        assert_eq!(v[0x00], 0.0);
        assert_eq!(v[0x01], 2f32.powi(-10)); // smallest subnormal: 1/8 * 2^-7
        assert_eq!(v[0x07], 7.0 / 8.0 * 2f32.powi(-7)); // largest subnormal
        assert_eq!(v[0x08], 2f32.powi(-7)); // smallest normal, bias 8
        assert_eq!(v[0x40], 1.0);
        assert_eq!(v[0x7f], 240.0);
        assert!(v[0x80].is_nan());
        assert_eq!(v[0x81], -(2f32.powi(-10)));
        assert_eq!(v[0xc0], -1.0);
        assert_eq!(v[0xff], -240.0);
        // Round trip reproduces the file byte for byte (it was written by NumPy).
        assert_eq!(array.to_bytes(), std::fs::read(path).unwrap());
    }

    #[test]
    fn writes_exactly_what_numpy_writes() {
        // Headers copied from `numpy.save` output (NumPy 2.4).
        let cases: [(DType, Vec<usize>, &[u8]); 4] = [
            (DType::Float32, vec![2, 3], b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }                                                          \n"),
            (DType::Float64, vec![], b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (), }                                                              \n"),
            (DType::UInt8, vec![5], b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }                                                            \n"),
            (DType::Bool, vec![1, 2, 3, 4], b"\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2, 3, 4), }                                                    \n"),
        ];
        for (dtype, shape, expected) in cases {
            let n: usize = shape.iter().product();
            let array = NpyArray::new(dtype, shape, vec![0; n * dtype.size()]).unwrap();
            let bytes = array.to_bytes();
            assert_eq!(header_of(&bytes), expected);
            assert_eq!(bytes.len(), expected.len() + array.data.len());
            assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
        }
    }

    #[test]
    fn accepts_header_variants() {
        let f = 1.5f32.to_le_bytes();
        let two = [f, f].concat();
        let ok = |dict: &str, data: &[u8]| {
            parse_dict(dict, data).unwrap_or_else(|e| panic!("{dict}: {e}"))
        };
        let a = ok(
            "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
            &two,
        );
        assert_eq!((a.dtype, a.shape.clone()), (DType::Float32, vec![2]));
        ok(
            "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
            &two,
        );
        ok(
            "{ 'descr' :'<f4' ,\n 'fortran_order':False,'shape':( 2 , ) , }\r\n\t ",
            &two,
        );
        ok(
            "{u'descr': u'<f4', 'fortran_order': False, 'shape': (2L,), }",
            &two,
        );
        let a = ok(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
            &f,
        );
        assert_eq!((a.shape.clone(), a.element_count()), (vec![], 1));
        let a = ok(
            "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
            &[7; 12],
        );
        assert_eq!(a.shape, vec![2, 3]);
        let a = ok(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }",
            &[],
        );
        assert_eq!(a.element_count(), 0);
        for (descr, dtype) in [
            ("<u1", DType::UInt8),
            ("|u1", DType::UInt8),
            (">u1", DType::UInt8),
            ("u1", DType::UInt8),
            ("|i1", DType::Int8),
            ("<i1", DType::Int8),
            ("|b1", DType::Bool),
        ] {
            let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (3,), }}");
            assert_eq!(ok(&dict, &[1, 2, 3]).dtype, dtype, "{descr}");
        }
        // Fortran order is harmless when at most one axis has extent > 1.
        let a = ok(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 1), }",
            &two,
        );
        assert_eq!(a.shape, vec![1, 2, 1]);
        // Unknown extra keys and repeated keys (last wins, as in Python).
        let a = ok("{'descr': '<f2', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': [1, (None,)]}", &two);
        assert_eq!(a.dtype, DType::Float32);
    }

    #[test]
    fn reads_versions_2_and_3() {
        let dict = b"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n";
        for major in [2u8, 3] {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&[major, 0]);
            bytes.extend_from_slice(&(dict.len() as u32).to_le_bytes());
            bytes.extend_from_slice(dict);
            bytes.extend_from_slice(&[1, 0, 2, 0]);
            let a = NpyArray::from_bytes(&bytes).unwrap();
            assert_eq!(a.to_f32_vec().unwrap(), vec![1.0, 2.0]);
        }
    }

    #[test]
    fn writes_version_2_for_huge_headers() {
        let shape = vec![1usize; 30_000];
        let array = NpyArray::from_u8(&shape, &[42]).unwrap();
        let bytes = array.to_bytes();
        assert_eq!(&bytes[6..8], &[2, 0]);
        let hlen = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        assert!(hlen > 65535);
        assert_eq!((12 + hlen) % ARRAY_ALIGN, 0);
        assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
    }

    #[test]
    fn rejects_malformed_files_with_precise_errors() {
        let good = NpyArray::from_f32(&[2], &[1.0, 2.0]).unwrap().to_bytes();

        let e = NpyArray::from_bytes(b"PK\x03\x04zipfile").unwrap_err();
        assert!(
            matches!(&e, NpyError::BadMagic { found } if found == b"PK\x03\x04zi"),
            "{e}"
        );
        assert!(e.to_string().contains("bad magic"), "{e}");
        assert!(matches!(
            NpyArray::from_bytes(b""),
            Err(NpyError::Truncated { .. })
        ));
        assert!(matches!(
            NpyArray::from_bytes(b"\x93NUM"),
            Err(NpyError::Truncated { .. })
        ));
        assert!(matches!(
            NpyArray::from_bytes(&good[..7]),
            Err(NpyError::Truncated { .. })
        ));
        assert!(matches!(
            NpyArray::from_bytes(&good[..9]),
            Err(NpyError::Truncated { .. })
        ));
        let e = NpyArray::from_bytes(&good[..40]).unwrap_err();
        assert!(
            matches!(
                e,
                NpyError::Truncated {
                    what: "header",
                    needed: 128,
                    found: 40
                }
            ),
            "{e}"
        );

        let mut v4 = good.clone();
        v4[6] = 4;
        let e = NpyArray::from_bytes(&v4).unwrap_err();
        assert!(matches!(
            e,
            NpyError::UnsupportedVersion { major: 4, minor: 0 }
        ));
        assert_eq!(
            e.to_string(),
            "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)"
        );
        let mut v11 = good.clone();
        v11[7] = 1;
        assert!(matches!(
            NpyArray::from_bytes(&v11),
            Err(NpyError::UnsupportedVersion { major: 1, minor: 1 })
        ));

        let data = [0u8; 8];
        for dict in [
            "['descr', '<f4']",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
            "{'descr': '<f4' 'fortran_order': False}",
            "{'descr': <f4}",
            "{'descr': '<f4}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} extra",
            "{'shape': (2.5,)}",
            "{'shape': (99999999999999999999999,)}",
            "",
        ] {
            let e = parse_dict(dict, &data).unwrap_err();
            assert!(matches!(e, NpyError::HeaderNotDict { .. }), "{dict}: {e}");
            assert!(
                e.to_string()
                    .starts_with("malformed .npy header: not a Python dict literal"),
                "{e}"
            );
        }
        for (dict, key) in [
            ("{'fortran_order': False, 'shape': (2,)}", "descr"),
            ("{'descr': '<f4', 'shape': (2,)}", "fortran_order"),
            ("{'descr': '<f4', 'fortran_order': False}", "shape"),
        ] {
            let e = parse_dict(dict, &data).unwrap_err();
            assert!(
                matches!(e, NpyError::MissingKey { key: k } if k == key),
                "{dict}: {e}"
            );
            assert_eq!(
                e.to_string(),
                format!("malformed .npy header: missing key '{key}'")
            );
        }
        for dict in [
            "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}",
            "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
        ] {
            let e = parse_dict(dict, &data).unwrap_err();
            assert!(matches!(e, NpyError::BadHeaderValue { .. }), "{dict}: {e}");
        }
        for (dict, shown) in [
            (
                "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                "'<c8'",
            ),
            (
                "{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}",
                "'<U3'",
            ),
            (
                "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,)}",
                "[('a', '<f4'), ('b', '<i4')]",
            ),
        ] {
            let e = parse_dict(dict, &data).unwrap_err();
            assert!(
                matches!(&e, NpyError::UnsupportedDescr { descr } if descr == shown),
                "{dict}: {e}"
            );
            assert!(
                e.to_string().starts_with(&format!(
                    "unsupported dtype descr {shown} (supported: <f2 <f4"
                )),
                "{e}"
            );
        }
        let e = parse_dict(
            "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
            &data,
        )
        .unwrap_err();
        assert!(
            matches!(&e, NpyError::BigEndian { descr } if descr == ">f4"),
            "{e}"
        );
        assert!(e.to_string().contains("big-endian"), "{e}");
        let e = parse_dict(
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2)}",
            &[0; 16],
        )
        .unwrap_err();
        assert!(matches!(e, NpyError::FortranOrder { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "fortran_order True is not supported for shape [2, 1, 2] (only C order)"
        );
        let e = parse_dict(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
            &[0; 20],
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                NpyError::DataLength {
                    expected: 24,
                    found: 20,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "data length does not match shape [2, 3] of float32: expected 24 bytes, found 20"
        );
        let e = parse_dict(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
            &[0; 28],
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                NpyError::DataLength {
                    expected: 24,
                    found: 28,
                    ..
                }
            ),
            "{e}"
        );
        let e = parse_dict(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, NpyError::ShapeOverflow { .. }), "{e}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let dict = format!("{{'descr': {}", "(".repeat(100_000));
        let e = parse_dict(&dict, &[]).unwrap_err();
        assert!(e.to_string().contains("nested too deeply"), "{e}");
    }

    #[test]
    fn constructors_check_lengths() {
        let e = NpyArray::from_f32(&[2, 3], &[0.0; 5]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "data length does not match shape [2, 3] of float32: expected 24 bytes, found 20"
        );
        assert!(NpyArray::new(DType::UInt16, vec![3], vec![0; 5]).is_err());
        let mut a = NpyArray::from_u8(&[2], &[1, 2]).unwrap();
        a.data.push(3);
        assert!(matches!(a.to_f32_vec(), Err(NpyError::DataLength { .. })));
        assert!(matches!(
            a.write(&scratch_path("never")),
            Err(NpyError::InFile { .. })
        ));
    }

    #[test]
    fn converts_every_dtype_to_f32() {
        let cases: Vec<(NpyArray, Vec<f32>)> = vec![
            (
                NpyArray::from_f16_bits(&[3], &[0x3c00, 0xc000, 0x0001]).unwrap(),
                vec![1.0, -2.0, 2f32.powi(-24)],
            ),
            (
                NpyArray::from_f32(&[2], &[1.5, -0.25]).unwrap(),
                vec![1.5, -0.25],
            ),
            (
                NpyArray::from_f64(&[2], &[1.5, 0.1]).unwrap(),
                vec![1.5, 0.1],
            ),
            (
                NpyArray::from_u8(&[2], &[0, 255]).unwrap(),
                vec![0.0, 255.0],
            ),
            (
                NpyArray::from_i8(&[2], &[-128, 127]).unwrap(),
                vec![-128.0, 127.0],
            ),
            (NpyArray::from_u16(&[1], &[65535]).unwrap(), vec![65535.0]),
            (NpyArray::from_i16(&[1], &[-32768]).unwrap(), vec![-32768.0]),
            (
                NpyArray::from_u32(&[1], &[16_777_217]).unwrap(),
                vec![16_777_216.0],
            ),
            (
                NpyArray::from_i32(&[2], &[-7, 1 << 30]).unwrap(),
                vec![-7.0, 1073741824.0],
            ),
            (
                NpyArray::from_u64(&[1], &[u64::MAX]).unwrap(),
                vec![18446744073709551616.0],
            ),
            (NpyArray::from_i64(&[1], &[-3]).unwrap(), vec![-3.0]),
            (
                NpyArray::from_bool(&[3], &[true, false, true]).unwrap(),
                vec![1.0, 0.0, 1.0],
            ),
            (
                NpyArray::new(DType::Bool, vec![1], vec![7]).unwrap(),
                vec![1.0],
            ),
        ];
        for (array, expected) in cases {
            assert_eq!(array.to_f32_vec().unwrap(), expected, "{}", array.dtype);
        }
        let nan = NpyArray::from_f16_bits(&[], &[0x7e00])
            .unwrap()
            .to_f32_vec()
            .unwrap();
        assert!(nan[0].is_nan());
    }

    #[test]
    fn dtype_names_and_descrs_round_trip() {
        for dtype in DType::ALL {
            assert_eq!(DType::from_name(dtype.name()), Some(dtype));
            assert_eq!(DType::from_descr(dtype.descr()).unwrap(), dtype);
            assert_eq!(dtype.descr().len(), 3);
            assert_eq!(dtype.descr()[2..], dtype.size().to_string());
        }
        assert_eq!(DType::from_name("float128"), None);
        assert_eq!(DType::Float16.size(), 2);
        assert!(DType::from_descr("").is_err());
        assert!(DType::from_descr("<").is_err());
        assert!(DType::from_descr("é").is_err());
    }

    #[test]
    fn file_round_trip_and_errors_name_the_path() {
        let path = scratch_path("roundtrip.npy");
        let array = NpyArray::from_i32(&[2, 2], &[1, -2, 3, -4]).unwrap();
        array.write(&path).unwrap();
        assert_eq!(NpyArray::read(&path).unwrap(), array);

        std::fs::write(&path, b"not numpy").unwrap();
        let e = NpyArray::read(&path).unwrap_err();
        assert!(
            matches!(&e, NpyError::InFile { source, .. } if matches!(**source, NpyError::BadMagic { .. }))
        );
        assert!(
            e.to_string()
                .starts_with(&format!("{}: not a .npy file", path.display())),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some());
        std::fs::remove_file(&path).unwrap();

        let e = NpyArray::read(&path).unwrap_err();
        assert!(matches!(e, NpyError::Io { .. }));
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        let e = array
            .write(Path::new("/nonexistent-dir/x.npy"))
            .unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent-dir/x.npy: "), "{e}");
    }

    fn any_array() -> impl Strategy<Value = NpyArray> {
        (
            proptest::sample::select(DType::ALL.to_vec()),
            proptest::collection::vec(0usize..4, 0..4),
        )
            .prop_flat_map(|(dtype, shape)| {
                let len = shape.iter().product::<usize>() * dtype.size();
                proptest::collection::vec(any::<u8>(), len)
                    .prop_map(move |data| NpyArray::new(dtype, shape.clone(), data).unwrap())
            })
    }

    /// Bytes that matter to the header parser, to make mutations reach deep into it.
    const HEADER_ALPHABET: &[u8] = b"{}()[]'\":, \n\\-+_0123456789LuTrueFalsNonedscrfpa<>|=?iub";

    proptest! {
        #[test]
        fn round_trips_and_aligns(array in any_array()) {
            let bytes = array.to_bytes();
            let header = header_of(&bytes);
            prop_assert_eq!(header.len() % ARRAY_ALIGN, 0);
            prop_assert_eq!(bytes.len(), header.len() + array.data.len());
            prop_assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = NpyArray::from_bytes(&bytes);
        }

        #[test]
        fn random_headers_never_panic(
            major in 0u8..5,
            header in proptest::collection::vec(proptest::sample::select(HEADER_ALPHABET.to_vec()), 0..120),
            data in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut bytes = MAGIC.to_vec();
            bytes.extend_from_slice(&[major, 0]);
            if major == 1 {
                bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
            } else {
                bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
            }
            bytes.extend_from_slice(&header);
            bytes.extend_from_slice(&data);
            let _ = NpyArray::from_bytes(&bytes);
        }

        #[test]
        fn mutated_files_never_panic(
            array in any_array(),
            edits in proptest::collection::vec(
                (any::<prop::sample::Index>(), 0u8..4, any::<u8>(), proptest::sample::select(HEADER_ALPHABET.to_vec())),
                1..6,
            ),
        ) {
            let mut bytes = array.to_bytes();
            for (index, kind, byte, header_byte) in edits {
                if bytes.is_empty() {
                    break;
                }
                let at = index.index(bytes.len());
                match kind {
                    0 => bytes[at] = byte,
                    1 => bytes[at] = header_byte,
                    2 => bytes.insert(at, header_byte),
                    _ => { bytes.remove(at); }
                }
            }
            match NpyArray::from_bytes(&bytes) {
                Ok(parsed) => prop_assert!(parsed.check().is_ok()),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
