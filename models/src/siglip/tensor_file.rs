//! One `.safetensors` file on disk, opened by its header only: names, dtypes, shapes and
//! offsets are known without reading the data, and a tensor's bytes are read (by seeking)
//! when it is asked for. The header is parsed and validated by the `safetensors` crate
//! ([`Metadata`]); this module adds the file-level checks (header length against the file
//! length, data length against the header) before anything is allocated from the file's
//! numbers.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::Dtype;

use super::checkpoint::CheckpointError;

/// The largest header the `safetensors` format allows (100 MB).
const MAX_HEADER: u64 = 100_000_000;

/// An opened safetensors file.
#[derive(Debug)]
pub(crate) struct TensorFile {
    pub path: PathBuf,
    file: File,
    /// Offset of the data section (8 + header length).
    data_start: u64,
    metadata: Metadata,
}

fn corrupt(path: &Path, message: impl Into<String>) -> CheckpointError {
    CheckpointError::Corrupt {
        path: path.display().to_string(),
        message: message.into(),
    }
}

fn io(path: &Path, e: std::io::Error) -> CheckpointError {
    CheckpointError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl TensorFile {
    /// Opens `path` and reads and checks its header.
    pub fn open(path: &Path) -> Result<TensorFile, CheckpointError> {
        let mut file = File::open(path).map_err(|e| io(path, e))?;
        let len = file.metadata().map_err(|e| io(path, e))?.len();
        if len < 8 {
            return Err(corrupt(
                path,
                format!("the file is {len} bytes, shorter than the 8-byte header length"),
            ));
        }
        let mut n = [0u8; 8];
        file.read_exact(&mut n).map_err(|e| io(path, e))?;
        let n = u64::from_le_bytes(n);
        if n > MAX_HEADER || n > len - 8 {
            return Err(corrupt(
                path,
                format!(
                    "the header length {n} is larger than the file ({len} bytes) or the format's limit ({MAX_HEADER})"
                ),
            ));
        }
        // n ≤ 100 MB, so this fits in usize and the allocation is bounded by the file.
        let mut header = vec![0u8; n as usize];
        file.read_exact(&mut header).map_err(|e| io(path, e))?;
        let metadata: Metadata = match serde_json::from_slice(&header) {
            Ok(m) => m,
            Err(e) => return Err(explain_header(path, &header, e)),
        };
        let data_len = metadata.data_len() as u64;
        if (8 + n).checked_add(data_len) != Some(len) {
            return Err(corrupt(
                path,
                format!(
                    "the header describes {data_len} data bytes, but the file holds {} after the header",
                    len - 8 - n
                ),
            ));
        }
        Ok(TensorFile {
            path: path.to_path_buf(),
            file,
            data_start: 8 + n,
            metadata,
        })
    }

    /// The names of its tensors, in data order.
    pub fn names(&self) -> Vec<String> {
        self.metadata.offset_keys()
    }

    /// Dtype, shape and offsets of tensor `name`.
    pub fn info(&self, name: &str) -> Option<&TensorInfo> {
        self.metadata.info(name)
    }

    /// The raw bytes of tensor `name` (whose size the header validated against its dtype
    /// and shape, and the file length against the data section).
    pub fn read(&mut self, name: &str) -> Result<Vec<u8>, CheckpointError> {
        let (start, end) = match self.metadata.info(name) {
            Some(info) => info.data_offsets,
            None => {
                return Err(CheckpointError::Missing {
                    tensor: name.to_string(),
                    searched: self.path.display().to_string(),
                })
            }
        };
        let mut bytes = vec![0u8; end - start];
        self.file
            .seek(SeekFrom::Start(self.data_start + start as u64))
            .map_err(|e| io(&self.path, e))?;
        self.file
            .read_exact(&mut bytes)
            .map_err(|e| io(&self.path, e))?;
        Ok(bytes)
    }
}

/// Why a header did not parse: a dtype this version of `safetensors` does not know is named
/// as such (with its tensor); anything else is corruption.
fn explain_header(path: &Path, header: &[u8], e: serde_json::Error) -> CheckpointError {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(header) {
        for (name, entry) in &map {
            if name == "__metadata__" {
                continue;
            }
            if let Some(dtype) = entry.get("dtype") {
                if serde_json::from_value::<Dtype>(dtype.clone()).is_err() {
                    return CheckpointError::DType {
                        path: path.display().to_string(),
                        tensor: name.clone(),
                        dtype: dtype
                            .as_str()
                            .map_or_else(|| dtype.to_string(), str::to_string),
                    };
                }
            }
        }
    }
    corrupt(path, format!("bad header: {e}"))
}
