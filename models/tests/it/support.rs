//! Helpers the test modules share: paths into the oracle data and its `.npy` files.

use std::path::{Path, PathBuf};

/// `testdata/hf/<rel>`: data made outside the project by transformers.
pub fn oracle(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/hf")).join(rel)
}

/// A float32 `.npy` file: shape and data (read with npyz, not the project's reader).
pub fn npy(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let arr = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = arr.shape().iter().map(|&d| d as usize).collect();
    (shape, arr.into_vec::<f32>().unwrap())
}
