//! What the host does for a program: converts weights into the bytes of every shard (the plan's
//! numerics: f32 → f16 rounds to nearest even; f32 → FP8 goes through f16, one rounding each,
//! saturating — exactly a device cast from f16), and maps host tensors (row-major on the host)
//! onto the tiles' shards for inputs and outputs.

use crate::graph::{DType, HostTensor};
use crate::layout::{Distribution, Layout, Order, ShardMap, View, MAX_RANK};
use crate::redist::segments::{block_segments, Side, Source};
use rayon::prelude::*;
use std::sync::Arc;
use tessera_isa::numerics::{f16_to_fp8, f32_to_f16};

/// The tile id standing for the host in host-side layouts (never a real tile).
const HOST: u32 = u32::MAX;

/// The name of a dtype in host tensor plans (`float32`, `float16`, `uint8` for FP8 codes).
pub fn host_dtype(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "float32",
        DType::F16 => "float16",
        DType::Fp8 { .. } => "uint8",
    }
}

/// Encodes f32 host values into `dtype`.
struct Encoder {
    dtype: DType,
    /// f16 → FP8 code, for FP8 dtypes.
    table: Vec<u8>,
}

impl Encoder {
    fn new(dtype: DType) -> Encoder {
        let table = match dtype {
            DType::Fp8 { format, scale } => (0..=u16::MAX)
                .map(|h| f16_to_fp8(h, format, -(scale as i32), false))
                .collect(),
            DType::F32 | DType::F16 => Vec::new(),
        };
        Encoder { dtype, table }
    }

    #[inline]
    fn put(&self, value: f32, out: &mut [u8]) {
        match self.dtype {
            DType::F32 => out.copy_from_slice(&value.to_le_bytes()),
            DType::F16 => out.copy_from_slice(&f32_to_f16(value).to_le_bytes()),
            DType::Fp8 { .. } => out[0] = self.table[f32_to_f16(value) as usize],
        }
    }
}

/// Why host data does not fit a layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("E-HOST-001 tensor `{name}`: {reason}")]
pub struct HostError {
    pub name: String,
    pub reason: String,
}

/// The bytes of every block of `layout` for weight `tensor` read through `view` (zero padding).
pub fn weight_shards(
    name: &str,
    tensor: &HostTensor,
    view: &View,
    layout: &Layout,
) -> Result<Vec<Arc<Vec<u8>>>, HostError> {
    let fail = |reason: String| HostError {
        name: name.to_string(),
        reason,
    };
    let shape: Vec<u32> = tensor.shape.0.iter().map(|&d| d as u32).collect();
    if view.source_shape() != shape.as_slice() {
        return Err(fail(format!(
            "the store holds {shape:?}, the program reads {:?}",
            view.source_shape()
        )));
    }
    let map = layout.shard_map().map_err(|e| fail(e.to_string()))?;
    let encoder = Encoder::new(layout.dtype);
    let e = layout.dtype.size_bytes();
    let rank = layout.dist.rank();
    let strides: Vec<usize> = tensor.shape.strides();
    let blocks: Vec<Arc<Vec<u8>>> = (0..layout.dist.block_count())
        .into_par_iter()
        .map(|block| {
            let boxes = layout.dist.block_box(block);
            let mut bytes = vec![0u8; map.buffer_bytes() as usize];
            let mut global = [0u32; MAX_RANK];
            let mut src = [0u32; MAX_RANK];
            map.for_each(|local, offset| {
                for d in 0..rank {
                    if local[d] >= boxes[d].end - boxes[d].start {
                        return;
                    }
                    global[d] = boxes[d].start + local[d];
                }
                if !view.map(&global[..rank], &mut src) {
                    // Padding the view adds: zero, as the buffer starts.
                    return;
                }
                let flat: usize = (0..shape.len()).map(|d| src[d] as usize * strides[d]).sum();
                let at = offset as usize;
                encoder.put(tensor.data[flat], &mut bytes[at..at + e]);
            });
            Arc::new(bytes)
        })
        .collect();
    Ok(blocks)
}

/// One piece of a host tensor on a tile: (tile, block, offset in the shard, offset in the host
/// tensor, bytes).
pub type Piece = (u32, usize, u32, u64, u32);

/// The host side of a tensor of `shape`: one dense block.
fn host_side(shape: &[u32], dtype: DType) -> Result<(Distribution, ShardMap), String> {
    let dist = Distribution::replicated(shape.to_vec(), vec![HOST]).map_err(|e| e.to_string())?;
    let map =
        ShardMap::new(Order::DENSE, shape, dtype.size_bytes() as u32).map_err(|e| e.to_string())?;
    Ok((dist, map))
}

/// Where the host writes an input of shape `view.source_shape()` so that every tile's shard of
/// `layout` holds the input read through `view`. Padding is not written (the shard starts
/// zeroed when its order needs zero padding).
pub fn input_pieces(layout: &Layout, view: &View) -> Result<Vec<Piece>, String> {
    let (hd, hm) = host_side(view.source_shape(), layout.dtype)?;
    let map = layout.shard_map().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for block in 0..layout.dist.block_count() {
        let segments = block_segments(
            &Side {
                dist: &hd,
                map: &hm,
            },
            &Side {
                dist: &layout.dist,
                map: &map,
            },
            view,
            block,
        );
        for &tile in layout.dist.tiles_of(block) {
            for s in &segments {
                if let Source::Block { offset, .. } = s.src {
                    out.push((tile, block, s.dst, offset as u64, s.bytes));
                }
            }
        }
    }
    Ok(out)
}

/// Where the host reads an output of shape `view.shape()` (through `view` from the value in
/// `layout`): one piece per run, from the first replica of each block.
pub fn output_pieces(layout: &Layout, view: &View) -> Result<Vec<Piece>, String> {
    let (hd, hm) = host_side(view.shape(), layout.dtype)?;
    let map = layout.shard_map().map_err(|e| e.to_string())?;
    let segments = block_segments(
        &Side {
            dist: &layout.dist,
            map: &map,
        },
        &Side {
            dist: &hd,
            map: &hm,
        },
        view,
        0,
    );
    let mut out = Vec::with_capacity(segments.len());
    for s in segments {
        if let Source::Block { block, offset } = s.src {
            let tile = layout.dist.tiles_of(block as usize)[0];
            out.push((tile, block as usize, offset, s.dst as u64, s.bytes));
        }
    }
    Ok(out)
}
