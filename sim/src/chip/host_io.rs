//! Host inputs and outputs: before the run each input's bytes are written to its pieces; after
//! it each output is gathered from its pieces. Tensors are row-major bytes; the caller converts
//! to and from `.npy`.

use super::LoadedTile;
use crate::error::SimError;
use tessera_isa::image::{HostDirection, Image};

/// Checks that `inputs` name exactly the image's inputs with the right sizes; returns, in image
/// order, each input's bytes.
pub(super) fn match_inputs<'a, N: AsRef<str>, B: AsRef<[u8]>>(
    image: &Image,
    inputs: &'a [(N, B)],
) -> Result<Vec<&'a [u8]>, SimError> {
    for (index, (name, _)) in inputs.iter().enumerate() {
        let name = name.as_ref();
        if inputs[..index]
            .iter()
            .any(|(other, _)| other.as_ref() == name)
        {
            return Err(SimError::HostIo {
                name: name.into(),
                problem: "given twice".into(),
            });
        }
        match image.host_tensor(name) {
            Some(tensor) if tensor.direction == HostDirection::Input => {}
            Some(_) => {
                return Err(SimError::HostIo {
                    name: name.into(),
                    problem: "is an output of the image, not an input".into(),
                })
            }
            None => {
                let known: Vec<&str> = image
                    .host_tensors_of(HostDirection::Input)
                    .map(|t| t.name.as_str())
                    .collect();
                return Err(SimError::HostIo {
                    name: name.into(),
                    problem: format!("the image has no such input (inputs: {})", known.join(", ")),
                });
            }
        }
    }
    let mut matched = Vec::new();
    for tensor in image.host_tensors_of(HostDirection::Input) {
        let Some((_, bytes)) = inputs.iter().find(|(name, _)| name.as_ref() == tensor.name) else {
            return Err(SimError::HostIo {
                name: tensor.name.clone(),
                problem: "input not given".into(),
            });
        };
        let bytes = bytes.as_ref();
        let expected = tensor.byte_size().unwrap_or(u64::MAX);
        if bytes.len() as u64 != expected {
            return Err(SimError::HostIo {
                name: tensor.name.clone(),
                problem: format!(
                    "{} bytes given, the image expects {expected} ({} {:?})",
                    bytes.len(),
                    tensor.dtype,
                    tensor.shape
                ),
            });
        }
        matched.push(bytes);
    }
    Ok(matched)
}

/// Writes every input piece into its tile's memory.
pub(super) fn write_inputs(
    image: &Image,
    inputs: &[&[u8]],
    tiles: &mut [LoadedTile],
    slot_of: &[u32],
) -> Result<(), SimError> {
    for (tensor, bytes) in image.host_tensors_of(HostDirection::Input).zip(inputs) {
        for piece in &tensor.pieces {
            let start = piece.tensor_byte_offset as usize;
            let data = bytes
                .get(start..start + piece.bytes as usize)
                .ok_or_else(|| SimError::HostIo {
                    name: tensor.name.clone(),
                    problem: "a piece lies past the tensor".into(),
                })?;
            let tile = slot(slot_of, piece.tile)
                .and_then(|s| tiles.get_mut(s))
                .ok_or_else(|| SimError::HostIo {
                    name: tensor.name.clone(),
                    problem: format!("tile {} has no image", piece.tile),
                })?;
            tile.tile
                .memory
                .load_unchecked(piece.address, data)
                .map_err(|e| SimError::HostIo {
                    name: tensor.name.clone(),
                    problem: format!("writing tile {}: {e}", piece.tile),
                })?;
        }
    }
    Ok(())
}

/// Reads every output from its pieces, in image order.
pub(super) fn read_outputs(
    image: &Image,
    tiles: &[LoadedTile],
    slot_of: &[u32],
) -> Result<Vec<(String, Vec<u8>)>, SimError> {
    let mut outputs = Vec::new();
    for tensor in image.host_tensors_of(HostDirection::Output) {
        let size = tensor
            .byte_size()
            .and_then(|s| usize::try_from(s).ok())
            .ok_or_else(|| SimError::HostIo {
                name: tensor.name.clone(),
                problem: "too large".into(),
            })?;
        let mut bytes = vec![0u8; size];
        for piece in &tensor.pieces {
            let tile = slot(slot_of, piece.tile)
                .and_then(|s| tiles.get(s))
                .ok_or_else(|| SimError::HostIo {
                    name: tensor.name.clone(),
                    problem: format!("tile {} has no image", piece.tile),
                })?;
            let data = tile
                .tile
                .memory
                .read_range(piece.address, piece.bytes as usize)
                .map_err(|e| SimError::HostIo {
                    name: tensor.name.clone(),
                    problem: format!("reading tile {}: {e}", piece.tile),
                })?;
            let start = piece.tensor_byte_offset as usize;
            if let Some(target) = bytes.get_mut(start..start + data.len()) {
                target.copy_from_slice(data);
            }
        }
        outputs.push((tensor.name.clone(), bytes));
    }
    Ok(outputs)
}

fn slot(slot_of: &[u32], tile: u32) -> Option<usize> {
    slot_of
        .get(tile as usize)
        .copied()
        .filter(|&s| s != u32::MAX)
        .map(|s| s as usize)
}
