//! Multi-tile images from assembled objects and whole-chip runs with `.npy` inputs and outputs:
//! the library form of `tessera asm image` and `tessera sim run`.

use crate::npy::{DType, NpyArray};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::BTreeSet;
use tessera_isa::asm::object::Object;
use tessera_isa::image::{
    Dtype, ElementOrder, HostDirection, HostPiece, HostTensor, Image, ObjectRules, RegionChoice,
    SramCategory,
};
use tessera_sim::chip::{Chip, RunOptions, RunReport};
use tessera_sim::MachineDescription;

/// Parses a tile set: `all`, `N`, `A-B` (inclusive), or a comma-separated list of those.
pub fn parse_tiles(text: &str, tiles: u32) -> Result<Vec<u32>> {
    let mut set = BTreeSet::new();
    for part in text.split(',').map(str::trim) {
        let (first, last) = if part == "all" {
            (0, tiles.saturating_sub(1))
        } else if let Some((a, b)) = part.split_once('-') {
            (parse_tile(a)?, parse_tile(b)?)
        } else {
            let tile = parse_tile(part)?;
            (tile, tile)
        };
        if first > last {
            bail!("tile range `{part}` is empty (first {first} > last {last})");
        }
        if last >= tiles {
            bail!(
                "tile range `{part}` goes past the machine's last tile {}",
                tiles.saturating_sub(1)
            );
        }
        set.extend(first..=last);
    }
    Ok(set.into_iter().collect())
}

fn parse_tile(text: &str) -> Result<u32> {
    text.trim()
        .parse()
        .with_context(|| format!("`{text}` is not a tile number"))
}

/// A host tensor given as one symbol on every tile that defines it: `COUNT` elements of `DTYPE`
/// per tile, concatenated in tile order (shape `[tiles, COUNT]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolTensor {
    pub name: String,
    pub direction: HostDirection,
    pub symbol: String,
    pub dtype: Dtype,
    pub count: u32,
}

impl SymbolTensor {
    /// Parses `NAME=SYMBOL:DTYPE:COUNT`.
    pub fn parse(text: &str, direction: HostDirection) -> Result<SymbolTensor> {
        let (name, rest) = text
            .split_once('=')
            .ok_or_else(|| anyhow!("`{text}` should look like NAME=SYMBOL:DTYPE:COUNT"))?;
        let mut parts = rest.split(':');
        let (Some(symbol), Some(dtype), Some(count), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            bail!("`{text}` should look like NAME=SYMBOL:DTYPE:COUNT");
        };
        let dtype = Dtype::from_name(dtype).ok_or_else(|| anyhow!("unknown dtype `{dtype}` (f16, f32, u8, i8, u16, i16, u32, i32 or their NumPy names)"))?;
        let count = count
            .parse()
            .with_context(|| format!("count `{count}` in `{text}`"))?;
        Ok(SymbolTensor {
            name: name.into(),
            direction,
            symbol: symbol.into(),
            dtype,
            count,
        })
    }
}

/// Everything `asm image` needs besides the assembled objects.
#[derive(Clone, Debug)]
pub struct ImageRequest {
    /// Symbol of every tile's supervisor entry.
    pub entry: String,
    /// Symbol whose address becomes `$mvertex_base` (0 without one).
    pub vertex: Option<String>,
    pub tensors: Vec<SymbolTensor>,
    /// Scratch bytes per worker (`$mworker_base`); 0 = none.
    pub worker_scratch: u32,
}

/// Builds an image: each object on its tiles (code → `code`, sections holding a host tensor →
/// `host-data`, other data → `constants`), worker scratch, entries, and the host tensors.
pub fn build_image(
    machine: &MachineDescription,
    groups: &[(Vec<u32>, Object)],
    request: &ImageRequest,
) -> Result<Image> {
    let mut builder = machine.image_builder()?;
    let mut seen = BTreeSet::new();
    for (tiles, object) in groups {
        for &tile in tiles {
            if !seen.insert(tile) {
                bail!("tile {tile} is in two tile groups");
            }
        }
        let mut rules = ObjectRules::default();
        for tensor in &request.tensors {
            if let Some(section) = object
                .symbol(&tensor.symbol)
                .and_then(|s| object.sections.get(s.section))
            {
                if !section.has_code {
                    rules = rules.section(section.name.clone(), SramCategory::HostData);
                }
            }
        }
        builder.add_object(tiles, object, &rules)?;
        for &tile in tiles {
            builder.set_entry_symbol(tile, &request.entry, request.vertex.as_deref())?;
            if request.worker_scratch > 0 {
                builder.alloc_worker_scratch(tile, request.worker_scratch, &RegionChoice::Any)?;
            }
        }
    }
    for tensor in &request.tensors {
        let bytes = tensor
            .count
            .checked_mul(tensor.dtype.size())
            .ok_or_else(|| anyhow!("{}: too large", tensor.name))?;
        let tiles: Vec<(u32, u32)> = seen
            .iter()
            .filter_map(|&tile| builder.symbol(tile, &tensor.symbol).map(|a| (tile, a)))
            .collect();
        if tiles.is_empty() {
            bail!(
                "host tensor {}: no tile defines symbol `{}`",
                tensor.name,
                tensor.symbol
            );
        }
        let pieces = tiles
            .iter()
            .enumerate()
            .map(|(i, &(tile, address))| HostPiece {
                tile,
                address,
                tensor_byte_offset: u64::from(bytes) * i as u64,
                bytes,
                element_order: ElementOrder::RowMajor,
            })
            .collect();
        builder.add_host_tensor(HostTensor {
            name: tensor.name.clone(),
            direction: tensor.direction,
            dtype: tensor.dtype,
            shape: vec![tiles.len() as u64, u64::from(tensor.count)],
            pieces,
        })?;
    }
    Ok(builder.finish()?)
}

/// The `.npy` dtype of an image dtype.
pub fn npy_dtype(dtype: Dtype) -> Result<DType> {
    DType::from_name(dtype.numpy_name()).ok_or_else(|| anyhow!("no .npy dtype for {dtype}"))
}

/// Checks an array against an input of the image and returns its bytes.
pub fn input_bytes(image: &Image, name: &str, array: &NpyArray) -> Result<Vec<u8>> {
    let tensor = image
        .host_tensor(name)
        .filter(|t| t.direction == HostDirection::Input)
        .ok_or_else(|| {
            let inputs: Vec<&str> = image
                .host_tensors_of(HostDirection::Input)
                .map(|t| t.name.as_str())
                .collect();
            anyhow!(
                "the image has no input `{name}` (inputs: {})",
                inputs.join(", ")
            )
        })?;
    let dtype = npy_dtype(tensor.dtype)?;
    if array.dtype != dtype {
        bail!(
            "input `{name}` is {} but the image expects {}",
            array.dtype.name(),
            dtype.name()
        );
    }
    let count = tensor.element_count().unwrap_or(u64::MAX);
    if array.element_count() as u64 != count {
        bail!(
            "input `{name}` has shape {:?} ({} elements) but the image expects {:?} ({count})",
            array.shape,
            array.element_count(),
            tensor.shape
        );
    }
    Ok(array.data.clone())
}

/// An output of a run as an array of the image's dtype and shape.
pub fn output_array(image: &Image, name: &str, bytes: &[u8]) -> Result<NpyArray> {
    let tensor = image
        .host_tensor(name)
        .ok_or_else(|| anyhow!("the image has no output `{name}`"))?;
    let shape = tensor
        .shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(NpyArray::new(
        npy_dtype(tensor.dtype)?,
        shape,
        bytes.to_vec(),
    )?)
}

/// Loads `image` on a chip of `machine` (shared, not copied) and runs it with `.npy` inputs.
pub fn run_image(
    machine: &MachineDescription,
    image: &std::sync::Arc<Image>,
    inputs: &[(String, NpyArray)],
    options: &RunOptions,
) -> Result<RunReport> {
    let mut bytes = Vec::new();
    for (name, array) in inputs {
        bytes.push((name.as_str(), input_bytes(image, name, array)?));
    }
    let mut chip = Chip::new(machine)?;
    chip.load_shared_image(std::sync::Arc::clone(image))?;
    Ok(chip.run(&bytes, options)?)
}

/// The sender of the broadcast example (built by the `tessera asm image` tests and the fuzz
/// seeds): in one superstep, sends its 8-word `src` to the tiles that listen to it.
pub const BROADCAST_SENDER: &str = "
    .section .text, \"ax\"
    .supervisor
    .align 8
    .globl main
main:
    sync TEXCH_SYNCZONE_INTERNAL
    send 7, src, 3
    delay 40
    sync TEXCH_SYNCZONE_INTERNAL
    br $m10
    .section .data
    // A memory element of its own: sending from the element the code is fetched from is an
    // exchange conflict (E-TRAP-014, the hardware's TEXCPT_CONFLICT).
    .align 16384
src:
    .space 32
dst:
    .space 32
";

/// The receiver of the broadcast example: listens on incoming mux 1 for one superstep and
/// receives 8 words into `dst`.
pub const BROADCAST_RECEIVER: &str = "
    .section .text, \"ax\"
    .supervisor
    .align 8
    .globl main
main:
    setzi $m1, 1
    setzi $m2, dst
    put $INCOMING_SINIT, $m2
    put $INCOMING_MUX, $m1
    sync TEXCH_SYNCZONE_INTERNAL
    delay 40
    sync TEXCH_SYNCZONE_INTERNAL
    br $m10
    .section .data
    // Received words stay off the code's memory element too, as on the hardware.
    .align 16384
dst:
    .space 32
";
