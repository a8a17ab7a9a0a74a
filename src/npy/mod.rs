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
//!
//! Why not `npyz` (a dependency of the models crate, whose reader the tests compare with): on
//! hostile headers its reader panics (a shape whose element count overflows `u64`), the parser
//! it uses backtracks exponentially in bracket depth, and its writer does not write NumPy's
//! bytes. `tests.rs` pins each of these, so a release that fixes them shows.

mod header;
#[cfg(test)]
mod tests;

use header::{parse_header, py_quote, split_header};

use std::fmt;
use std::path::{Path, PathBuf};

/// The six bytes every `.npy` file starts with.
const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// Data offset alignment used by NumPy (`numpy.lib.format.ARRAY_ALIGN`).
const ARRAY_ALIGN: usize = 64;
/// Spare header space NumPy leaves so the first axis can grow in place
/// (`numpy.lib.format.GROWTH_AXIS_MAX_DIGITS`).
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

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
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file at `path` was read but its contents are not an acceptable `.npy` array.
    #[error("{}: {source}", path.display())]
    InFile {
        path: PathBuf,
        #[source]
        source: Box<NpyError>,
    },
    /// The input does not start with `\x93NUMPY`; `found` holds the first (up to six) bytes.
    #[error("not a .npy file: bad magic string (expected b\"\\x93NUMPY\", found b\"{}\")", found.escape_ascii())]
    BadMagic { found: Vec<u8> },
    /// The input ends before the part `what` is complete.
    #[error("truncated .npy file: {what} needs {needed} bytes, only {found} present")]
    Truncated {
        what: &'static str,
        needed: usize,
        found: usize,
    },
    /// The format version is not 1.0, 2.0 or 3.0.
    #[error("unsupported .npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)")]
    UnsupportedVersion { major: u8, minor: u8 },
    /// The header is not a Python dict literal; `detail` says where parsing stopped.
    #[error("malformed .npy header: not a Python dict literal: {detail}")]
    HeaderNotDict { detail: String },
    /// The header dict lacks one of `'descr'`, `'fortran_order'`, `'shape'`.
    #[error("malformed .npy header: missing key '{key}'")]
    MissingKey { key: &'static str },
    /// A header key has a value of the wrong kind (e.g. `'shape': [2, 3]`).
    #[error("malformed .npy header: '{key}' {detail}")]
    BadHeaderValue { key: &'static str, detail: String },
    /// The `descr` is not one of the supported plain numeric dtypes (structured, complex,
    /// strings, datetimes, ...). `descr` is its Python rendering.
    #[error("unsupported dtype descr {descr} (supported: {})", DType::ALL.map(DType::descr).join(" "))]
    UnsupportedDescr { descr: String },
    /// The `descr` is a big-endian multi-byte type such as `'>f4'`.
    #[error(
        "unsupported dtype descr '{descr}': big-endian data is not supported (only little-endian)"
    )]
    BigEndian { descr: String },
    /// `fortran_order` is `True` for a shape where Fortran and C order differ.
    #[error("fortran_order True is not supported for shape {shape:?} (only C order)")]
    FortranOrder { shape: Vec<usize> },
    /// The byte size of `shape` elements of `dtype` does not fit in `usize`.
    #[error("shape {shape:?} of {dtype} is too large: its byte size overflows usize")]
    ShapeOverflow { dtype: DType, shape: Vec<usize> },
    /// The data does not hold exactly `shape` elements of `dtype`.
    #[error("data length does not match shape {shape:?} of {dtype}: expected {expected} bytes, found {found}")]
    DataLength {
        dtype: DType,
        shape: Vec<usize>,
        expected: usize,
        found: usize,
    },
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
        let total =
            u32::try_from(total).expect("a header of a dtype and a shape is far under 4 GiB");
        out.extend_from_slice(&total.to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + pad, b' ');
    out.push(b'\n');
    out
}
