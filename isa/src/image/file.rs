//! The image file: `TSRIMAGE` magic, a little-endian `u32` format version, a little-endian `u64`
//! manifest length, the RON manifest (machine, tiles, segments, entries, symbols, host tensors,
//! blob lengths), then every blob's bytes in order. Reading checks each part and then validates
//! the image, so a malformed or inconsistent file is a typed error, never a panic.

use super::{Image, ImageError, MachineFingerprint};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// First eight bytes of every image file.
pub const IMAGE_MAGIC: &[u8; 8] = b"TSRIMAGE";
/// The format version this build writes and reads.
pub const IMAGE_VERSION: u32 = 1;

#[derive(Serialize)]
#[serde(rename = "Manifest")]
struct ManifestOut<'a> {
    machine: &'a MachineFingerprint,
    tiles: &'a [super::TileImage],
    host_tensors: &'a [super::HostTensor],
    symbol_tables: &'a [super::SymbolTable],
    blob_lengths: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(rename = "Manifest", deny_unknown_fields)]
struct ManifestIn {
    machine: MachineFingerprint,
    tiles: Vec<super::TileImage>,
    host_tensors: Vec<super::HostTensor>,
    symbol_tables: Vec<super::SymbolTable>,
    blob_lengths: Vec<u64>,
}

fn take<'a>(bytes: &mut &'a [u8], count: usize) -> Option<&'a [u8]> {
    if bytes.len() < count {
        return None;
    }
    let (head, tail) = bytes.split_at(count);
    *bytes = tail;
    Some(head)
}

impl Image {
    /// The file bytes of this image.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ImageError> {
        let manifest = ManifestOut {
            machine: &self.machine,
            tiles: &self.tiles,
            host_tensors: &self.host_tensors,
            symbol_tables: &self.symbol_tables,
            blob_lengths: self.blobs.iter().map(|b| b.len() as u64).collect(),
        };
        let text =
            ron::ser::to_string(&manifest).map_err(|e| ImageError::Manifest(e.to_string()))?;
        let payload: usize = self.blobs.iter().map(Vec::len).sum();
        let mut out = Vec::with_capacity(20 + text.len() + payload);
        out.extend_from_slice(IMAGE_MAGIC);
        out.extend_from_slice(&IMAGE_VERSION.to_le_bytes());
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
        for blob in &self.blobs {
            out.extend_from_slice(blob);
        }
        Ok(out)
    }

    /// Reads and validates an image from file bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Image, ImageError> {
        let mut rest = bytes;
        let magic = take(&mut rest, IMAGE_MAGIC.len());
        if magic != Some(IMAGE_MAGIC.as_slice()) {
            return Err(ImageError::BadMagic {
                expected: "TSRIMAGE",
            });
        }
        let version = take(&mut rest, 4)
            .ok_or_else(|| ImageError::Manifest("the file ends inside the version".into()))?;
        let version = u32::from_le_bytes([version[0], version[1], version[2], version[3]]);
        if version != IMAGE_VERSION {
            return Err(ImageError::UnsupportedVersion {
                found: version,
                supported: IMAGE_VERSION,
            });
        }
        let length = take(&mut rest, 8).ok_or_else(|| {
            ImageError::Manifest("the file ends inside the manifest length".into())
        })?;
        let mut length_bytes = [0u8; 8];
        length_bytes.copy_from_slice(length);
        let length = u64::from_le_bytes(length_bytes);
        let manifest = usize::try_from(length)
            .ok()
            .and_then(|length| take(&mut rest, length))
            .ok_or_else(|| {
                ImageError::Manifest(format!(
                    "the manifest claims {length} bytes but the file has {} left",
                    rest.len()
                ))
            })?;
        let text =
            std::str::from_utf8(manifest).map_err(|e| ImageError::Manifest(e.to_string()))?;
        let manifest: ManifestIn =
            ron::from_str(text).map_err(|e| ImageError::Manifest(e.to_string()))?;
        let mut blobs = Vec::with_capacity(manifest.blob_lengths.len());
        for (blob, &claimed) in manifest.blob_lengths.iter().enumerate() {
            let available = rest.len() as u64;
            let bytes = usize::try_from(claimed)
                .ok()
                .and_then(|length| take(&mut rest, length))
                .ok_or(ImageError::PayloadTruncated {
                    blob,
                    claimed,
                    available,
                })?;
            blobs.push(bytes.to_vec());
        }
        if !rest.is_empty() {
            return Err(ImageError::TrailingPayload {
                extra: rest.len() as u64,
            });
        }
        let image = Image {
            machine: manifest.machine,
            tiles: manifest.tiles,
            host_tensors: manifest.host_tensors,
            symbol_tables: manifest.symbol_tables,
            blobs,
        };
        image.validate()?;
        Ok(image)
    }

    /// Reads an image file.
    pub fn read(path: impl AsRef<Path>) -> Result<Image, ImageError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| ImageError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Image::from_bytes(&bytes)
    }

    /// Writes an image file.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), ImageError> {
        let path = path.as_ref();
        let bytes = self.to_bytes()?;
        std::fs::write(path, bytes).map_err(|e| ImageError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }
}
