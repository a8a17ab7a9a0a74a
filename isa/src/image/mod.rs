//! The executable image: what every tile's SRAM holds before a run, where each tile starts, the
//! symbols of its code, and where the host writes inputs and reads outputs.
//!
//! An [`Image`] is built for one machine ([`MachineFingerprint`]) and lists, per tile that takes
//! part in the run, its memory [`Segment`]s. Each segment has an SRAM category
//! ([`SramCategory`]) so that every allocated byte of every tile is accounted for. Segment
//! contents live in a table of deduplicated blobs: a thousand tiles running the same code share
//! one code blob (and one symbol table). A segment without a blob is reserved, zero-filled memory
//! (tile SRAM starts zeroed), which costs no host-link time at load.
//!
//! Host tensors ([`HostTensor`]) name the run's inputs and outputs: dtype, shape, and the
//! [`HostPiece`]s that say which tensor bytes live at which tile address. Element order within a
//! piece is [`ElementOrder::RowMajor`] (the only order for now).
//!
//! Images are made with [`ImageBuilder`] (`builder.rs`) and stored in one file (`file.rs`):
//! magic, version, RON manifest, binary payload. [`Image::validate`] checks every segment, entry
//! and piece; both the builder and the reader run it, so an image in memory is always valid.
//!
//! Tiles that have no [`TileImage::entry`] do not run: they take no part in global syncs.

mod alloc;
mod builder;
mod error;
mod file;
mod validate;

pub use builder::{ImageBuilder, ObjectRules, RegionChoice, SramRegion};
pub use error::ImageError;
pub use file::{IMAGE_MAGIC, IMAGE_VERSION};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Number of worker contexts whose scratch base an image can set.
pub const WORKER_CONTEXTS: usize = 6;

/// The machine an image was built for: enough to refuse running it on another.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MachineFingerprint {
    pub name: String,
    pub tiles: u32,
    /// First SRAM address of every tile.
    pub sram_base: u32,
    /// SRAM bytes per tile.
    pub sram_size: u32,
}

impl MachineFingerprint {
    /// One past the last SRAM address.
    pub fn sram_end(&self) -> u64 {
        u64::from(self.sram_base) + u64::from(self.sram_size)
    }
}

impl fmt::Display for MachineFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} tiles)", self.name, self.tiles)
    }
}

/// What a byte of tile SRAM is used for.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SramCategory {
    /// Supervisor and worker code (decoded and write-protected at load).
    Code,
    /// Vertex state: the per-kernel-call fields workers read at `$mvertex_base`.
    VertexState,
    /// A tensor (activations, weights, buffers) by name.
    Tensor(String),
    /// Supervisor code that performs exchanges (decoded and write-protected like code).
    ExchangeProgram,
    /// Worker scratch and stacks (`$mworker_base`).
    WorkerScratch,
    /// Buffers the host writes inputs to or reads outputs from.
    HostData,
    /// Constant data (lookup tables, data sections of assembled objects).
    Constants,
    /// Alignment padding and other bytes deliberately left unused.
    Padding,
}

impl SramCategory {
    /// The category's name in reports and errors: `code`, `vertex-state`, `tensor:NAME`,
    /// `exchange-program`, `worker-scratch`, `host-data`, `constants`, `padding`.
    pub fn name(&self) -> String {
        match self {
            SramCategory::Code => "code".into(),
            SramCategory::VertexState => "vertex-state".into(),
            SramCategory::Tensor(name) => format!("tensor:{name}"),
            SramCategory::ExchangeProgram => "exchange-program".into(),
            SramCategory::WorkerScratch => "worker-scratch".into(),
            SramCategory::HostData => "host-data".into(),
            SramCategory::Constants => "constants".into(),
            SramCategory::Padding => "padding".into(),
        }
    }

    /// Parses a [`SramCategory::name`].
    pub fn from_name(name: &str) -> Option<SramCategory> {
        Some(match name {
            "code" => SramCategory::Code,
            "vertex-state" => SramCategory::VertexState,
            "exchange-program" => SramCategory::ExchangeProgram,
            "worker-scratch" => SramCategory::WorkerScratch,
            "host-data" => SramCategory::HostData,
            "constants" => SramCategory::Constants,
            "padding" => SramCategory::Padding,
            other => SramCategory::Tensor(other.strip_prefix("tensor:")?.to_string()),
        })
    }

    /// Whether segments of this category hold instructions (decoded and write-protected at load).
    pub fn is_code(&self) -> bool {
        matches!(self, SramCategory::Code | SramCategory::ExchangeProgram)
    }
}

impl fmt::Display for SramCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Index into [`Image::blobs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BlobId(pub u32);

/// Index into [`Image::symbol_tables`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SymbolTableId(pub u32);

/// A contiguous range of one tile's SRAM with one category.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    /// E.g. the section or tensor name.
    pub name: String,
    pub address: u32,
    /// Bytes; equal to the blob's length when there is one.
    pub size: u32,
    /// The initial contents; `None` = zero-filled (reserved) memory.
    pub blob: Option<BlobId>,
    pub category: SramCategory,
}

impl Segment {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        u64::from(self.address) + u64::from(self.size)
    }

    /// Whether `[address, address + bytes)` lies inside the segment.
    pub fn contains_range(&self, address: u32, bytes: u64) -> bool {
        address >= self.address && u64::from(address) + bytes <= self.end()
    }
}

/// Where a tile's supervisor starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileEntry {
    /// Supervisor entry address (it ends the program with `br $m10`).
    pub supervisor: u32,
    /// The value of `$mvertex_base` at entry.
    pub vertex_base: u32,
}

/// One tile's part of the image.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileImage {
    pub tile: u32,
    /// Sorted by address, non-overlapping.
    pub segments: Vec<Segment>,
    /// `None`: the tile does not run (and takes no part in global syncs).
    pub entry: Option<TileEntry>,
    /// `$WORKER0_BASE`..`$WORKER5_BASE` at entry (all 0 when `None`).
    pub worker_bases: Option<[u32; WORKER_CONTEXTS]>,
    /// The symbol tables of the code on this tile (shared between tiles).
    pub symbols: Vec<SymbolTableId>,
}

/// Names of addresses, shared by the tiles that load the same object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolTable {
    pub symbols: BTreeMap<String, u32>,
}

/// Element type of a host tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dtype {
    F16,
    F32,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
}

impl Dtype {
    pub const ALL: [Dtype; 8] = [
        Dtype::F16,
        Dtype::F32,
        Dtype::U8,
        Dtype::I8,
        Dtype::U16,
        Dtype::I16,
        Dtype::U32,
        Dtype::I32,
    ];

    /// Bytes per element.
    pub fn size(self) -> u32 {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::F16 | Dtype::U16 | Dtype::I16 => 2,
            Dtype::F32 | Dtype::U32 | Dtype::I32 => 4,
        }
    }

    /// Short name: `f16`, `f32`, `u8`, `i8`, `u16`, `i16`, `u32`, `i32`.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::F32 => "f32",
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
        }
    }

    /// The NumPy name: `float16`, `float32`, `uint8`, `int8`, `uint16`, `int16`, `uint32`, `int32`.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Dtype::F16 => "float16",
            Dtype::F32 => "float32",
            Dtype::U8 => "uint8",
            Dtype::I8 => "int8",
            Dtype::U16 => "uint16",
            Dtype::I16 => "int16",
            Dtype::U32 => "uint32",
            Dtype::I32 => "int32",
        }
    }

    /// Accepts the short and the NumPy names.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name() == name || d.numpy_name() == name)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the host writes a tensor before the run or reads it after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HostDirection {
    Input,
    Output,
}

impl HostDirection {
    pub fn name(self) -> &'static str {
        match self {
            HostDirection::Input => "input",
            HostDirection::Output => "output",
        }
    }
}

/// How a piece's bytes map to tensor elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ElementOrder {
    /// The piece holds tensor bytes `[tensor_byte_offset, tensor_byte_offset + bytes)` of the
    /// row-major tensor, in order, at consecutive tile addresses.
    #[default]
    RowMajor,
}

/// One contiguous part of a host tensor on one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPiece {
    pub tile: u32,
    pub address: u32,
    /// Offset of the piece's first byte in the row-major tensor.
    pub tensor_byte_offset: u64,
    pub bytes: u32,
    pub element_order: ElementOrder,
}

/// A named input or output of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTensor {
    pub name: String,
    pub direction: HostDirection,
    pub dtype: Dtype,
    pub shape: Vec<u64>,
    /// Inputs: every piece receives its tensor bytes (pieces may repeat bytes, e.g. to give every
    /// tile a copy). Outputs: the pieces cover every tensor byte exactly once.
    pub pieces: Vec<HostPiece>,
}

impl HostTensor {
    /// Number of elements (`None` if the product overflows).
    pub fn element_count(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
    }

    /// Bytes of the whole row-major tensor (`None` if it overflows).
    pub fn byte_size(&self) -> Option<u64> {
        self.element_count()?
            .checked_mul(u64::from(self.dtype.size()))
    }
}

/// A whole program image for one machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub machine: MachineFingerprint,
    /// Sorted by tile id, at most one per tile. Tiles not listed are empty and do not run.
    pub tiles: Vec<TileImage>,
    pub host_tensors: Vec<HostTensor>,
    pub symbol_tables: Vec<SymbolTable>,
    /// Deduplicated segment contents.
    pub blobs: Vec<Vec<u8>>,
}

impl Image {
    /// The image of one tile, if it has one.
    pub fn tile(&self, tile: u32) -> Option<&TileImage> {
        self.tiles
            .binary_search_by_key(&tile, |t| t.tile)
            .ok()
            .and_then(|i| self.tiles.get(i))
    }

    /// A blob's bytes (empty for an unknown id; validated images have none).
    pub fn blob(&self, id: BlobId) -> &[u8] {
        self.blobs
            .get(id.0 as usize)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// A segment's initial bytes, or `None` for zero-filled memory.
    pub fn segment_bytes(&self, segment: &Segment) -> Option<&[u8]> {
        segment.blob.map(|id| self.blob(id))
    }

    pub fn host_tensor(&self, name: &str) -> Option<&HostTensor> {
        self.host_tensors.iter().find(|t| t.name == name)
    }

    /// Host tensors in one direction, in image order.
    pub fn host_tensors_of(&self, direction: HostDirection) -> impl Iterator<Item = &HostTensor> {
        self.host_tensors
            .iter()
            .filter(move |t| t.direction == direction)
    }

    /// The address of a symbol on a tile (searching the tile's tables in order).
    pub fn symbol(&self, tile: u32, name: &str) -> Option<u32> {
        let tile = self.tile(tile)?;
        tile.symbols.iter().find_map(|id| {
            self.symbol_tables
                .get(id.0 as usize)?
                .symbols
                .get(name)
                .copied()
        })
    }

    /// Every `(name, address)` of a tile's symbol tables.
    pub fn symbols_of(&self, tile: u32) -> impl Iterator<Item = (&str, u32)> {
        self.tile(tile)
            .into_iter()
            .flat_map(|t| t.symbols.iter())
            .filter_map(|id| self.symbol_tables.get(id.0 as usize))
            .flat_map(|table| {
                table
                    .symbols
                    .iter()
                    .map(|(name, &address)| (name.as_str(), address))
            })
    }

    /// Bytes the host writes to load the image: every segment with contents, once per tile.
    pub fn load_bytes(&self) -> u64 {
        self.tiles
            .iter()
            .flat_map(|t| t.segments.iter())
            .filter(|s| s.blob.is_some())
            .map(|s| u64::from(s.size))
            .sum()
    }

    /// Tiles that run (have an entry).
    pub fn running_tiles(&self) -> impl Iterator<Item = u32> + '_ {
        self.tiles
            .iter()
            .filter(|t| t.entry.is_some())
            .map(|t| t.tile)
    }

    /// Refuses an image built for another machine.
    pub fn check_machine(&self, machine: &MachineFingerprint) -> Result<(), ImageError> {
        if &self.machine == machine {
            return Ok(());
        }
        Err(ImageError::MachineMismatch {
            image: self.machine.clone(),
            machine: machine.clone(),
        })
    }
}

#[cfg(test)]
mod tests;
