//! Typed errors of the compiler-facing case constructors: a shape, table or setting a kernel's
//! ABI cannot express. Each has an `E-KERNEL-…` id; the constructors never panic on bad input.

use std::fmt;

/// Why a case constructor refused its parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// A count that must be at least 1 is 0 (no runs, no outer iterations, no elements).
    Empty {
        kernel: &'static str,
        what: &'static str,
    },
    /// A value is not a multiple of the granule the kernel moves.
    Misaligned {
        kernel: &'static str,
        what: String,
        value: u64,
        multiple: u32,
    },
    /// A length is outside what one loop of the kernel can do.
    Length {
        kernel: &'static str,
        what: String,
        value: u64,
        min: u64,
        max: u64,
    },
    /// Two runs or words write the same destination bytes.
    Overlap {
        kernel: &'static str,
        first: String,
        second: String,
    },
    /// More items (outer iterations × entries) than the kernel's split arithmetic allows.
    TooManyItems {
        kernel: &'static str,
        items: u64,
        max: u64,
    },
    /// A buffer would be larger than any tile's memory.
    TooLarge {
        kernel: &'static str,
        buffer: &'static str,
        bytes: u64,
    },
    /// A table entry has the wrong number of source lanes for the element size.
    Lanes {
        kernel: &'static str,
        entry: usize,
        lanes: usize,
        expected: usize,
    },
}

impl ParamError {
    /// [`ParamError::Empty`] when `count` is 0.
    pub fn check_at_least_one(
        kernel: &'static str,
        what: &'static str,
        count: u64,
    ) -> Result<(), ParamError> {
        if count == 0 {
            Err(ParamError::Empty { kernel, what })
        } else {
            Ok(())
        }
    }

    /// [`ParamError::Misaligned`] unless `value` is a multiple of `multiple`.
    pub fn check_aligned(
        kernel: &'static str,
        what: String,
        value: u32,
        multiple: u32,
    ) -> Result<(), ParamError> {
        if value.is_multiple_of(multiple) {
            Ok(())
        } else {
            Err(ParamError::Misaligned {
                kernel,
                what,
                value: value.into(),
                multiple,
            })
        }
    }

    /// [`ParamError::TooLarge`] when a buffer of `bytes` would be over [`MAX_BUFFER_BYTES`].
    pub fn check_fits(
        kernel: &'static str,
        buffer: &'static str,
        bytes: u64,
    ) -> Result<(), ParamError> {
        if bytes > MAX_BUFFER_BYTES {
            Err(ParamError::TooLarge {
                kernel,
                buffer,
                bytes,
            })
        } else {
            Ok(())
        }
    }

    /// The stable id of the error.
    pub fn id(&self) -> &'static str {
        match self {
            ParamError::Empty { .. } => "E-KERNEL-001",
            ParamError::Misaligned { .. } => "E-KERNEL-002",
            ParamError::Length { .. } => "E-KERNEL-003",
            ParamError::Overlap { .. } => "E-KERNEL-004",
            ParamError::TooManyItems { .. } => "E-KERNEL-005",
            ParamError::TooLarge { .. } => "E-KERNEL-006",
            ParamError::Lanes { .. } => "E-KERNEL-007",
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.id();
        match self {
            ParamError::Empty { kernel, what } => {
                write!(f, "{id} {kernel}: {what} must be at least 1")
            }
            ParamError::Misaligned {
                kernel,
                what,
                value,
                multiple,
            } => write!(
                f,
                "{id} {kernel}: {what} = {value} is not a multiple of {multiple}"
            ),
            ParamError::Length {
                kernel,
                what,
                value,
                min,
                max,
            } => write!(
                f,
                "{id} {kernel}: {what} = {value} is outside {min}..={max}"
            ),
            ParamError::Overlap {
                kernel,
                first,
                second,
            } => write!(
                f,
                "{id} {kernel}: {first} and {second} write the same destination bytes"
            ),
            ParamError::TooManyItems { kernel, items, max } => write!(
                f,
                "{id} {kernel}: {items} items (outer iterations x entries) exceed {max}"
            ),
            ParamError::TooLarge {
                kernel,
                buffer,
                bytes,
            } => write!(
                f,
                "{id} {kernel}: buffer `{buffer}` would need {bytes} bytes, more than a tile holds"
            ),
            ParamError::Lanes {
                kernel,
                entry,
                lanes,
                expected,
            } => write!(
                f,
                "{id} {kernel}: entry {entry} has {lanes} source lanes, the element size needs {expected}"
            ),
        }
    }
}

impl std::error::Error for ParamError {}

/// Largest buffer a constructor accepts (any tile's SRAM is smaller: 624 KiB on ipu21).
pub const MAX_BUFFER_BYTES: u64 = 1 << 21;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_the_id() {
        let e = ParamError::Empty {
            kernel: "copy_runs",
            what: "R",
        };
        assert_eq!(
            e.to_string(),
            "E-KERNEL-001 copy_runs: R must be at least 1"
        );
        let e = ParamError::Misaligned {
            kernel: "copy_runs",
            what: "run 3 bytes".into(),
            value: 12,
            multiple: 8,
        };
        assert!(e.to_string().starts_with("E-KERNEL-002 "));
    }
}
