//! Why an image could not be read, built or run on a machine. Every message starts with its
//! stable id (`E-IMG-0xx`).

use super::{MachineFingerprint, SramCategory};
use thiserror::Error;

fn fingerprint_text(fp: &MachineFingerprint, other: &MachineFingerprint) -> String {
    if fp.name == other.name && fp.tiles == other.tiles {
        format!(
            "{} ({} tiles, SRAM {:#x}+{:#x})",
            fp.name, fp.tiles, fp.sram_base, fp.sram_size
        )
    } else {
        format!("{} ({} tiles)", fp.name, fp.tiles)
    }
}

/// An image problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImageError {
    #[error("E-IMG-001: not a Tessera image (bad magic; expected {expected:?})")]
    BadMagic { expected: &'static str },
    #[error("E-IMG-002: image format version {found} is not supported (this build reads version {supported})")]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("E-IMG-003: image manifest is malformed: {0}")]
    Manifest(String),
    #[error("E-IMG-004: image payload truncated: blob {blob} claims {claimed} bytes but {available} are left")]
    PayloadTruncated {
        blob: usize,
        claimed: u64,
        available: u64,
    },
    #[error("E-IMG-005: image payload has {extra} bytes after the last blob")]
    TrailingPayload { extra: u64 },
    #[error(
        "E-IMG-006: image built for {}, machine is {}",
        fingerprint_text(image, machine),
        fingerprint_text(machine, image)
    )]
    MachineMismatch {
        image: MachineFingerprint,
        machine: MachineFingerprint,
    },
    #[error("E-IMG-007: tile {tile} does not exist on {machine} ({tiles} tiles)")]
    TileOutOfRange {
        tile: u32,
        machine: String,
        tiles: u32,
    },
    #[error("E-IMG-008: segment `{segment}` on tile {tile} ({address:#x}, {size} bytes) lies outside tile SRAM {base:#x}..{end:#x}")]
    SegmentOutsideSram {
        tile: u32,
        segment: String,
        address: u32,
        size: u64,
        base: u32,
        end: u64,
    },
    #[error("E-IMG-009: on tile {tile}, segment `{second}` at {second_address:#x} overlaps segment `{first}` ({first_address:#x}..{first_end:#x})")]
    SegmentOverlap {
        tile: u32,
        first: String,
        first_address: u32,
        first_end: u64,
        second: String,
        second_address: u32,
    },
    #[error("E-IMG-010: insufficient tile SRAM for {bytes} {category} bytes on tile {tile} ({free} free{})", fragmented_note(*bytes, *free, *largest))]
    InsufficientSram {
        bytes: u64,
        category: SramCategory,
        tile: u32,
        free: u64,
        largest: u64,
    },
    #[error("E-IMG-011: no SRAM region named `{name}` (regions: {known})")]
    NoSuchRegion { name: String, known: String },
    #[error("E-IMG-012: alignment {align} is not a power of two")]
    BadAlignment { align: u32 },
    #[error("E-IMG-013: segment `{segment}` on tile {tile}: {problem}")]
    BadSegment {
        tile: u32,
        segment: String,
        problem: String,
    },
    #[error("E-IMG-014: piece {piece} of {tensor} on tile {tile} ({address:#x}, {bytes} bytes) lies outside the tile's SRAM")]
    PieceOutsideTile {
        tensor: String,
        piece: usize,
        tile: u32,
        address: u32,
        bytes: u32,
    },
    #[error("E-IMG-015: piece {piece} of {tensor} on tile {tile} ({address:#x}, {bytes} bytes) is not inside one segment of the tile")]
    PieceOutsideSegment {
        tensor: String,
        piece: usize,
        tile: u32,
        address: u32,
        bytes: u32,
    },
    #[error("E-IMG-016: piece {piece} of {tensor}: {problem}")]
    BadPiece {
        tensor: String,
        piece: usize,
        problem: String,
    },
    #[error("E-IMG-017: output {tensor}: {problem}")]
    OutputCoverage { tensor: String, problem: String },
    #[error("E-IMG-018: host tensor {name}: {problem}")]
    BadTensor { name: String, problem: String },
    #[error("E-IMG-019: tile {tile}: entry {entry:#x} is not in a code segment")]
    EntryNotCode { tile: u32, entry: u32 },
    #[error("E-IMG-020: tile {tile}: no symbol `{name}`")]
    UnknownSymbol { tile: u32, name: String },
    #[error("E-IMG-021: {path}: {message}")]
    Io { path: String, message: String },
    #[error("E-IMG-022: SRAM region `{name}` ({start:#x}, {size} bytes): {problem}")]
    BadRegion {
        name: String,
        start: u32,
        size: u32,
        problem: String,
    },
    #[error("E-IMG-023: tile {tile}: {problem}")]
    BadTile { tile: u32, problem: String },
}

fn fragmented_note(bytes: u64, free: u64, largest: u64) -> String {
    if free >= bytes {
        format!(", largest free range {largest}")
    } else {
        String::new()
    }
}
