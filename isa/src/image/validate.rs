//! [`Image::validate`]: every tile exists, every segment lies in SRAM without overlaps and matches
//! its blob, every entry is in code, and every host piece lies in its tile, in a segment and in its
//! tensor, with outputs covered exactly once.

use super::{HostDirection, HostTensor, Image, ImageError, TileImage};

impl Image {
    /// Checks the whole image; the builder and the reader call it.
    pub fn validate(&self) -> Result<(), ImageError> {
        let machine = &self.machine;
        if machine.name.is_empty() || machine.tiles == 0 || machine.sram_size == 0 {
            return Err(ImageError::Manifest(format!(
                "machine fingerprint {machine:?} is incomplete"
            )));
        }
        let mut previous: Option<u32> = None;
        for tile in &self.tiles {
            if tile.tile >= machine.tiles {
                return Err(ImageError::TileOutOfRange {
                    tile: tile.tile,
                    machine: machine.name.clone(),
                    tiles: machine.tiles,
                });
            }
            if previous.is_some_and(|p| p >= tile.tile) {
                return Err(ImageError::BadTile {
                    tile: tile.tile,
                    problem: "tiles must be listed once each, in increasing order".into(),
                });
            }
            previous = Some(tile.tile);
            self.validate_tile(tile)?;
        }
        for (index, tensor) in self.host_tensors.iter().enumerate() {
            if self.host_tensors[..index]
                .iter()
                .any(|t| t.name == tensor.name)
            {
                return Err(ImageError::BadTensor {
                    name: tensor.name.clone(),
                    problem: "declared twice".into(),
                });
            }
            self.validate_tensor(tensor)?;
        }
        Ok(())
    }

    fn validate_tile(&self, tile: &TileImage) -> Result<(), ImageError> {
        let base = self.machine.sram_base;
        let end = self.machine.sram_end();
        let mut previous_end: Option<(u64, &str, u32)> = None;
        for segment in &tile.segments {
            let bad = |problem: String| ImageError::BadSegment {
                tile: tile.tile,
                segment: segment.name.clone(),
                problem,
            };
            if segment.size == 0 {
                return Err(bad("a segment must have at least one byte".into()));
            }
            if segment.address < base || segment.end() > end {
                return Err(ImageError::SegmentOutsideSram {
                    tile: tile.tile,
                    segment: segment.name.clone(),
                    address: segment.address,
                    size: segment.size.into(),
                    base,
                    end,
                });
            }
            if let Some(blob) = segment.blob {
                match self.blobs.get(blob.0 as usize) {
                    None => {
                        return Err(bad(format!(
                            "blob {} does not exist ({} blobs)",
                            blob.0,
                            self.blobs.len()
                        )))
                    }
                    Some(bytes) if bytes.len() as u64 != u64::from(segment.size) => {
                        return Err(bad(format!(
                            "size {} but its blob has {} bytes",
                            segment.size,
                            bytes.len()
                        )))
                    }
                    Some(_) => {}
                }
            }
            if let Some((prev_end, prev_name, prev_address)) = previous_end {
                if u64::from(segment.address) < prev_end {
                    return Err(ImageError::SegmentOverlap {
                        tile: tile.tile,
                        first: prev_name.into(),
                        first_address: prev_address,
                        first_end: prev_end,
                        second: segment.name.clone(),
                        second_address: segment.address,
                    });
                }
            }
            previous_end = Some((segment.end(), &segment.name, segment.address));
        }
        if let Some(entry) = tile.entry {
            let in_code = tile
                .segments
                .iter()
                .any(|s| s.category.is_code() && s.contains_range(entry.supervisor, 4));
            if !in_code || entry.supervisor % 4 != 0 {
                return Err(ImageError::EntryNotCode {
                    tile: tile.tile,
                    entry: entry.supervisor,
                });
            }
        }
        for id in &tile.symbols {
            if id.0 as usize >= self.symbol_tables.len() {
                return Err(ImageError::BadTile {
                    tile: tile.tile,
                    problem: format!("symbol table {} does not exist", id.0),
                });
            }
        }
        Ok(())
    }

    fn validate_tensor(&self, tensor: &HostTensor) -> Result<(), ImageError> {
        let bad_tensor = |problem: &str| ImageError::BadTensor {
            name: tensor.name.clone(),
            problem: problem.into(),
        };
        if tensor.name.is_empty() {
            return Err(bad_tensor("the name is empty"));
        }
        let size = tensor
            .byte_size()
            .ok_or_else(|| bad_tensor("its byte size overflows"))?;
        let element = u64::from(tensor.dtype.size());
        let mut covered: Vec<(u64, u64)> = Vec::with_capacity(tensor.pieces.len());
        for (index, piece) in tensor.pieces.iter().enumerate() {
            let bad_piece = |problem: String| ImageError::BadPiece {
                tensor: tensor.name.clone(),
                piece: index,
                problem,
            };
            if piece.bytes == 0 {
                return Err(bad_piece("a piece must have at least one byte".into()));
            }
            if piece.tile >= self.machine.tiles {
                return Err(ImageError::TileOutOfRange {
                    tile: piece.tile,
                    machine: self.machine.name.clone(),
                    tiles: self.machine.tiles,
                });
            }
            let outside = ImageError::PieceOutsideTile {
                tensor: tensor.name.clone(),
                piece: index,
                tile: piece.tile,
                address: piece.address,
                bytes: piece.bytes,
            };
            if piece.address < self.machine.sram_base
                || u64::from(piece.address) + u64::from(piece.bytes) > self.machine.sram_end()
            {
                return Err(outside);
            }
            let in_segment = self.tile(piece.tile).is_some_and(|t| {
                t.segments
                    .iter()
                    .any(|s| s.contains_range(piece.address, piece.bytes.into()))
            });
            if !in_segment {
                return Err(ImageError::PieceOutsideSegment {
                    tensor: tensor.name.clone(),
                    piece: index,
                    tile: piece.tile,
                    address: piece.address,
                    bytes: piece.bytes,
                });
            }
            let piece_end = piece.tensor_byte_offset.saturating_add(piece.bytes.into());
            if piece_end > size {
                return Err(bad_piece(format!(
                    "tensor bytes {}..{piece_end} are past the tensor's {size} bytes",
                    piece.tensor_byte_offset
                )));
            }
            if piece.tensor_byte_offset % element != 0 || u64::from(piece.bytes) % element != 0 {
                return Err(bad_piece(format!(
                    "offset {} and size {} must be whole {} elements",
                    piece.tensor_byte_offset, piece.bytes, tensor.dtype
                )));
            }
            covered.push((piece.tensor_byte_offset, piece_end));
        }
        if tensor.direction == HostDirection::Output {
            covered.sort_unstable();
            let mut next = 0u64;
            for (start, end) in covered {
                if start < next {
                    return Err(ImageError::OutputCoverage {
                        tensor: tensor.name.clone(),
                        problem: format!("tensor byte {start} is written by two pieces"),
                    });
                }
                if start > next {
                    return Err(ImageError::OutputCoverage {
                        tensor: tensor.name.clone(),
                        problem: format!("tensor bytes {next}..{start} are in no piece"),
                    });
                }
                next = end;
            }
            if next < size {
                return Err(ImageError::OutputCoverage {
                    tensor: tensor.name.clone(),
                    problem: format!("tensor bytes {next}..{size} are in no piece"),
                });
            }
        }
        Ok(())
    }
}
