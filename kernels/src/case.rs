//! A kernel case: the buffers a kernel reads and writes (with their contents and where they must
//! live), the vertex state words, and the supervisor CSRs it needs. The harness that runs cases
//! on the simulator lives in the `tessera` package (`src/check/`), so this crate never links it.

use serde::{Deserialize, Serialize};

/// Which SRAM region a buffer must be placed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Region {
    /// The non-interleaved region (208 KiB from the SRAM base on ipu21).
    Standard,
    /// The interleaved region (needed by `ld128`, `ld128putcs`, and 3-access pace instructions).
    Interleaved,
}

impl Region {
    /// The letter case names use for the region: `S` (standard) or `I` (interleaved).
    pub fn letter(self) -> &'static str {
        match self {
            Region::Standard => "S",
            Region::Interleaved => "I",
        }
    }
}

/// What the kernel does with a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// Read only; must be unchanged after the run.
    Input,
    /// Written by the kernel; compared bit for bit with the reference; guarded by canaries.
    Output,
    /// Kernel-private working memory; contents are not checked.
    Scratch,
}

/// One buffer of a case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    pub name: String,
    pub role: Role,
    /// Inputs: the contents. Outputs and scratch: only the length matters (the harness fills
    /// them with a poison pattern so unwritten bytes are caught).
    pub bytes: Vec<u8>,
    /// Byte alignment (at least 8).
    pub align: u32,
    pub region: Region,
    /// Buffers with different slots are placed in different memory elements (different 32 KiB
    /// element pairs in the interleaved region, different 16 KiB elements in the standard one),
    /// which is what lets one instruction touch them in the same cycle. `None`: anywhere.
    pub element_slot: Option<u8>,
}

impl Buffer {
    pub fn input(name: &str, bytes: Vec<u8>, region: Region, element_slot: Option<u8>) -> Buffer {
        Buffer {
            name: name.into(),
            role: Role::Input,
            bytes,
            align: 8,
            region,
            element_slot,
        }
    }

    pub fn output(name: &str, len: usize, region: Region, element_slot: Option<u8>) -> Buffer {
        Buffer {
            name: name.into(),
            role: Role::Output,
            bytes: vec![0; len],
            align: 8,
            region,
            element_slot,
        }
    }

    pub fn scratch(name: &str, len: usize, region: Region) -> Buffer {
        Buffer {
            name: name.into(),
            role: Role::Scratch,
            bytes: vec![0; len],
            align: 8,
            region,
            element_slot: None,
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// One 32-bit word of vertex state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VertexWord {
    Value(u32),
    /// The address of buffer `buffer` plus `offset` bytes.
    Address {
        buffer: usize,
        offset: u32,
    },
}

impl VertexWord {
    /// The start addresses of buffers `0..count`: the words most vertices begin with.
    pub fn buffer_starts(count: usize) -> Vec<VertexWord> {
        (0..count)
            .map(|buffer| VertexWord::Address { buffer, offset: 0 })
            .collect()
    }
}

/// Everything needed to run one kernel invocation and check it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    pub kernel: String,
    /// Short description: shape, placement, format, data distribution.
    pub name: String,
    pub buffers: Vec<Buffer>,
    pub vertex: Vec<VertexWord>,
    /// Supervisor CSRs to set before the kernel starts (e.g. `$FP_ICTL` for NANOO, `$FP_INFMT`,
    /// `$FP_ISCL` for the FP8 AMP), as (lower-space index, value).
    pub supervisor_csrs: Vec<(u8, u32)>,
}

impl Case {
    /// Index of a buffer by name (panics in kernel code only, where names are static).
    pub fn buffer(&self, name: &str) -> &Buffer {
        self.buffers
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("case {} has no buffer {name}", self.name))
    }

    pub fn buffer_index(&self, name: &str) -> usize {
        self.buffers
            .iter()
            .position(|b| b.name == name)
            .unwrap_or_else(|| panic!("case {} has no buffer {name}", self.name))
    }

    /// A plain value word of the vertex state.
    pub fn word(&self, index: usize) -> u32 {
        match self.vertex[index] {
            VertexWord::Value(v) => v,
            VertexWord::Address { .. } => {
                panic!("vertex word {index} of {} is an address", self.name)
            }
        }
    }

    /// Indices of the output buffers, in order: the order of [`crate::Kernel::reference`]'s result.
    pub fn outputs(&self) -> Vec<usize> {
        self.buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.role == Role::Output)
            .map(|(i, _)| i)
            .collect()
    }
}

/// Little helpers to build buffer contents.
pub mod bytes {
    pub fn from_u16(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    pub fn from_u32(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    pub fn from_f32(values: &[f32]) -> Vec<u8> {
        values
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect()
    }

    pub fn to_u16(bytes: &[u8]) -> Vec<u16> {
        bytes
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    pub fn to_u32(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    pub fn to_f32(bytes: &[u8]) -> Vec<f32> {
        to_u32(bytes).into_iter().map(f32::from_bits).collect()
    }
}
