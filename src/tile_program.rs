//! Assemble-and-run on one tile: the library form of `tessera asm run`, shared by the CLI,
//! the tests and the built-in demo.

use crate::npy::{DType, NpyArray};
use anyhow::{anyhow, bail, Context, Result};
use tessera_isa::asm::object::Object;
use tessera_sim::single::{load_object, run_tile, EntryMode};
use tessera_sim::tile::Tile;
use tessera_sim::MachineDescription;

/// A symbol, optionally with a byte offset: `name` or `name+8`.
pub fn resolve_symbol(object: &Object, spec: &str) -> Result<u32> {
    let (name, offset) = match spec.split_once('+') {
        Some((name, offset)) => (name.trim(), parse_u32(offset.trim())?),
        None => (spec.trim(), 0),
    };
    let symbol = object
        .symbol(name)
        .ok_or_else(|| anyhow!("no symbol `{name}` in the program"))?;
    symbol.address.checked_add(offset).ok_or_else(|| {
        anyhow!(
            "`{spec}`: {:#x} + {offset:#x} is past the end of the 32-bit address space",
            symbol.address
        )
    })
}

pub fn parse_u32(text: &str) -> Result<u32> {
    let text = text.trim();
    let value = if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16)
    } else {
        text.parse::<i64>()
    }
    .with_context(|| format!("`{text}` is not an integer"))?;
    if value < i32::MIN as i64 || value > u32::MAX as i64 {
        bail!("`{text}` does not fit in 32 bits");
    }
    Ok(value as u32)
}

/// What to read back after a run.
#[derive(Clone, Debug)]
pub struct OutputSpec {
    pub symbol: String,
    pub dtype: DType,
    pub count: usize,
}

/// Everything `asm run` needs besides the assembled object.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub entry: String,
    pub worker: bool,
    pub vertex: Option<String>,
    pub inputs: Vec<(String, NpyArray)>,
    pub words: Vec<(String, u32)>,
    pub outputs: Vec<OutputSpec>,
    pub max_cycles: u64,
}

/// Scratch bytes given to each worker (`$mworker_base`) in a one-tile run.
pub const WORKER_SCRATCH_BYTES: u32 = 256;

/// Worker scratch for a one-tile run: six areas right after the program's highest section.
pub fn worker_scratch(machine: &MachineDescription, object: &Object) -> Result<u32> {
    let end = object
        .sections
        .iter()
        .map(|s| s.address as u64 + s.bytes.len() as u64)
        .max()
        .unwrap_or(machine.sram.base as u64);
    let start = (end + 15) & !15;
    let needed = WORKER_SCRATCH_BYTES as u64 * tessera_sim::tile::WORKERS as u64;
    if start + needed > machine.sram_end() as u64 {
        bail!("no room for worker scratch: the program ends at {end:#x} and {needed} bytes are needed before {:#x}", machine.sram_end());
    }
    Ok(start as u32)
}

/// The result of a one-tile run.
pub struct RunResult {
    pub cycles: u64,
    pub outputs: Vec<NpyArray>,
    pub tile: Tile,
}

/// Loads `object` on tile 0 of `machine`, writes the inputs, runs, and reads the outputs.
pub fn run_program(
    machine: &MachineDescription,
    object: &Object,
    request: &RunRequest,
) -> Result<RunResult> {
    let mut tile = load_object(machine, object, 0)?;
    for (symbol, array) in &request.inputs {
        let address = resolve_symbol(object, symbol)?;
        tile.memory
            .load_unchecked(address, &array.data)
            .with_context(|| {
                format!(
                    "writing input `{symbol}` ({} bytes) at {address:#x}",
                    array.data.len()
                )
            })?;
    }
    for (symbol, value) in &request.words {
        let address = resolve_symbol(object, symbol)?;
        tile.memory
            .load_unchecked(address, &value.to_le_bytes())
            .with_context(|| format!("setting `{symbol}` at {address:#x}"))?;
    }
    let entry = resolve_symbol(object, &request.entry)?;
    let vertex = match &request.vertex {
        Some(symbol) => resolve_symbol(object, symbol)?,
        None => 0,
    };
    let scratch = worker_scratch(machine, object)?;
    for worker in 0..tessera_sim::tile::WORKERS {
        tile.supervisor.csr[tessera_isa::csr::index::WORKER0_BASE as usize + worker] =
            scratch + worker as u32 * WORKER_SCRATCH_BYTES;
    }
    let mode = if request.worker {
        EntryMode::Worker {
            entry,
            vertex,
            worker_base: scratch,
        }
    } else {
        EntryMode::Supervisor { entry, vertex }
    };
    let cycles = run_tile(machine, &mut tile, mode, request.max_cycles)?;
    let mut outputs = Vec::new();
    for spec in &request.outputs {
        let address = resolve_symbol(object, &spec.symbol)?;
        let length = spec
            .count
            .checked_mul(spec.dtype.size())
            .filter(|&n| n <= u32::MAX as usize)
            .ok_or_else(|| {
                anyhow!(
                    "output `{}`: {} elements of {} do not fit in a tile's address space",
                    spec.symbol,
                    spec.count,
                    spec.dtype.name()
                )
            })?;
        let bytes = tile.memory.read_range(address, length).with_context(|| {
            format!(
                "reading output `{}` ({} x {})",
                spec.symbol,
                spec.count,
                spec.dtype.name()
            )
        })?;
        outputs.push(NpyArray::new(spec.dtype, vec![spec.count], bytes.to_vec())?);
    }
    Ok(RunResult {
        cycles,
        outputs,
        tile,
    })
}
