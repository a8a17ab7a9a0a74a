//! The bitwise kernel checker: runs every case of every kernel on a simulated tile, compares
//! every output bit with the kernel's reference, and proves the kernel wrote nothing else
//! (all memory outside outputs and scratch is compared with its state before the run, and
//! memory that no buffer uses is filled with a pattern first, so stray writes anywhere show).

pub mod placement;
pub mod report;

use crate::isa::asm::object::Object;
use crate::isa::asm::{assemble, LayoutOptions};
use crate::kernels::{Case, EntryKind, Kernel, Role, VertexWord};
use crate::sim::memory::MemoryLayout;
use crate::sim::single::{run_tile, EntryMode};
use crate::sim::tile::Tile;
use crate::sim::MachineDescription;
use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use std::sync::Arc;

pub use report::{CaseResult, CheckReport, KernelSummary};

/// What to check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Only kernels whose name contains this.
    pub filter: Option<String>,
    /// At most this many default cases per kernel.
    pub cases_per_kernel: Option<usize>,
    /// Random cases per kernel, from `seed`.
    pub random_cases: usize,
    pub seed: u64,
    pub max_cycles: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            filter: None,
            cases_per_kernel: None,
            random_cases: 0,
            seed: 0x07e5_5e7a,
            max_cycles: 50_000_000,
        }
    }
}

/// The supervisor the checker wraps around a worker kernel.
fn worker_stub(entry: &str) -> String {
    format!(
        "    .section .text.check_supervisor
    .globl __check_supervisor
    .supervisor
    .align 8
__check_supervisor:
    setzi $m0, {entry}
    mov $m1, $mvertex_base
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
"
    )
}

/// A kernel assembled once for all its cases.
pub struct PreparedKernel {
    pub kernel: &'static dyn Kernel,
    pub object: Object,
    pub entry: u32,
    pub code_end: u32,
}

/// Assembles `kernel` (with the checker's supervisor stub for worker kernels).
pub fn prepare(
    machine: &MachineDescription,
    kernel: &'static dyn Kernel,
    source_override: Option<&str>,
) -> Result<PreparedKernel> {
    let source = source_override.unwrap_or(kernel.source());
    let mut sources = vec![(format!("{}.S", kernel.name()), source.to_string())];
    if kernel.entry_kind() == EntryKind::Worker {
        sources.push((
            "check_supervisor.S".to_string(),
            worker_stub(kernel.entry()),
        ));
    }
    let options = LayoutOptions {
        base: machine.sram.base,
        ..LayoutOptions::default()
    };
    let object = assemble(&sources, &options)
        .map_err(|e| anyhow!("assembling kernel {}:\n{e}", kernel.name()))?;
    let entry_symbol = match kernel.entry_kind() {
        EntryKind::Worker => "__check_supervisor",
        EntryKind::Supervisor => kernel.entry(),
    };
    let entry = object
        .symbol(entry_symbol)
        .ok_or_else(|| anyhow!("kernel {} has no symbol {entry_symbol}", kernel.name()))?
        .address;
    let code_end = object
        .sections
        .iter()
        .map(|s| s.address + s.bytes.len() as u32)
        .max()
        .unwrap_or(machine.sram.base);
    Ok(PreparedKernel {
        kernel,
        object,
        entry,
        code_end,
    })
}

/// A deterministic fill pattern for unused memory (distinct from zero and from poison).
fn pattern_byte(address: u32) -> u8 {
    let x = address.wrapping_mul(0x9E37_79B1);
    (x >> 24) as u8 ^ 0x5A
}

/// Poison written into outputs before a run, so bytes a kernel forgets to write are caught.
pub const POISON: u8 = 0xCD;

/// Runs one case and checks it.
pub fn run_case(
    machine: &MachineDescription,
    layout: &Arc<MemoryLayout>,
    prepared: &PreparedKernel,
    case: &Case,
    max_cycles: u64,
) -> CaseResult {
    let kernel = prepared.kernel;
    let estimate = kernel.estimate_cycles(case);
    let mut result = CaseResult {
        kernel: kernel.name().to_string(),
        case: case.name.clone(),
        passed: false,
        cycles: None,
        estimate,
        failure: None,
    };
    match check_case(machine, layout, prepared, case, max_cycles) {
        Ok(cycles) => {
            result.passed = true;
            result.cycles = Some(cycles);
        }
        Err(CaseFailure { cycles, message }) => {
            result.cycles = cycles;
            result.failure = Some(message);
        }
    }
    result
}

struct CaseFailure {
    cycles: Option<u64>,
    message: String,
}

impl From<anyhow::Error> for CaseFailure {
    fn from(error: anyhow::Error) -> Self {
        CaseFailure {
            cycles: None,
            message: format!("{error:#}"),
        }
    }
}

fn check_case(
    machine: &MachineDescription,
    layout: &Arc<MemoryLayout>,
    prepared: &PreparedKernel,
    case: &Case,
    max_cycles: u64,
) -> Result<u64, CaseFailure> {
    let placement = placement::place(machine, case, prepared.code_end)?;
    let mut tile = Tile::new(0, machine, layout.clone());
    // Fill everything with the pattern, then the program, then the case.
    let base = machine.sram.base;
    let fill: Vec<u8> = (base..machine.sram_end()).map(pattern_byte).collect();
    tile.memory
        .load_unchecked(base, &fill)
        .context("filling memory")?;
    for section in &prepared.object.sections {
        tile.memory
            .load_unchecked(section.address, &section.bytes)
            .context("loading code")?;
    }
    for section in &prepared.object.sections {
        if section.has_code && !section.bytes.is_empty() {
            tile.load_code(section.address, section.bytes.len() as u32)
                .context("decoding code")?;
        }
    }
    for (buffer, &address) in case.buffers.iter().zip(&placement.buffers) {
        let contents = match buffer.role {
            Role::Input => buffer.bytes.clone(),
            Role::Output | Role::Scratch => vec![POISON; buffer.len()],
        };
        tile.memory
            .load_unchecked(address, &contents)
            .context("writing buffers")?;
    }
    let vertex: Vec<u8> = case
        .vertex
        .iter()
        .flat_map(|word| {
            match *word {
                VertexWord::Value(v) => v,
                VertexWord::Address { buffer, offset } => placement.buffers[buffer] + offset,
            }
            .to_le_bytes()
        })
        .collect();
    tile.memory
        .load_unchecked(placement.vertex, &vertex)
        .context("writing the vertex")?;
    for worker in 0..6 {
        tile.supervisor.csr[crate::isa::csr::index::WORKER0_BASE as usize + worker] =
            placement.worker_scratch + worker as u32 * placement::WORKER_SCRATCH_BYTES;
    }
    // Workers start with garbage in every register and accumulator, so a kernel that relies on
    // state it did not set fails here instead of on hardware.
    for (w, worker) in tile.workers.iter_mut().enumerate() {
        for r in 0..12 {
            worker.m[r] = 0xBAD0_0000 | (w as u32) << 8 | r as u32;
        }
        for r in 0..14 {
            worker.a[r] = 0x7FBA_D000 | (w as u32) << 4 | r as u32;
        }
        for (i, acc) in worker.aacc.iter_mut().enumerate() {
            *acc = f32::from_bits(0x4B00_0000 + i as u32 * 977 + w as u32);
        }
    }
    for &(index, value) in &case.supervisor_csrs {
        tile.supervisor.csr[index as usize] = value;
    }
    let before = tile.memory.bytes().to_vec();
    let cycles = run_tile(
        machine,
        &mut tile,
        EntryMode::Supervisor {
            entry: prepared.entry,
            vertex: placement.vertex,
        },
        max_cycles,
    )
    .map_err(|e| CaseFailure {
        cycles: None,
        message: e.to_string(),
    })?;
    let fail = |message: String| CaseFailure {
        cycles: Some(cycles),
        message,
    };
    // Outputs, bit for bit.
    let expected = prepared.kernel.reference(case);
    let outputs = case.outputs();
    if expected.len() != outputs.len() {
        return Err(fail(format!(
            "reference gave {} outputs, case has {}",
            expected.len(),
            outputs.len()
        )));
    }
    let after = tile.memory.bytes();
    let offset = |address: u32| (address - base) as usize;
    for (&index, want) in outputs.iter().zip(&expected) {
        let buffer = &case.buffers[index];
        let start = offset(placement.buffers[index]);
        let got = &after[start..start + buffer.len()];
        if want.len() != buffer.len() {
            return Err(fail(format!(
                "reference output {} has {} bytes, buffer has {}",
                buffer.name,
                want.len(),
                buffer.len()
            )));
        }
        if got != want.as_slice() {
            let differing: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
            let first = differing[0];
            return Err(fail(format!(
                "output `{}`: {} of {} bytes differ; first at byte {first}: got {:#04x}, expected {:#04x}",
                buffer.name,
                differing.len(),
                got.len(),
                got[first],
                want[first]
            )));
        }
    }
    // Write guards: everything except outputs and scratch is unchanged.
    let mut writable: Vec<(usize, usize)> = case
        .buffers
        .iter()
        .zip(&placement.buffers)
        .filter(|(b, _)| b.role != Role::Input)
        .map(|(b, &a)| (offset(a), offset(a) + b.len()))
        .collect();
    writable.push((
        offset(placement.worker_scratch),
        offset(placement.worker_scratch) + 6 * placement::WORKER_SCRATCH_BYTES as usize,
    ));
    writable.sort();
    let mut cursor = 0;
    for &(start, end) in writable
        .iter()
        .chain(std::iter::once(&(before.len(), before.len())))
    {
        if let Some(i) = (cursor..start).find(|&i| before[i] != after[i]) {
            let address = base + i as u32;
            let owner = case
                .buffers
                .iter()
                .zip(&placement.buffers)
                .find(|(b, &a)| address >= a && address < a + b.len() as u32)
                .map(|(b, _)| format!("input `{}`", b.name))
                .unwrap_or_else(|| "memory outside every buffer".to_string());
            return Err(fail(format!(
                "write guard: byte at {address:#x} ({owner}) changed from {:#04x} to {:#04x}",
                before[i], after[i]
            )));
        }
        cursor = cursor.max(end);
    }
    Ok(cycles)
}

/// Runs the checker over every selected kernel.
pub fn check_kernels(
    machine: &MachineDescription,
    options: &CheckOptions,
    kernels: &[&'static dyn Kernel],
) -> Result<CheckReport> {
    if let Some(filter) = &options.filter {
        if !kernels.iter().any(|k| k.name().contains(filter.as_str())) {
            let names: Vec<&str> = kernels.iter().map(|k| k.name()).collect();
            anyhow::bail!(
                "--filter `{filter}` matches no kernel (the kernels: {})",
                names.join(", ")
            );
        }
    }
    let layout = Arc::new(MemoryLayout::from_machine(machine)?);
    let mut jobs: Vec<(usize, Case)> = Vec::new();
    let mut prepared = Vec::new();
    for &kernel in kernels {
        if let Some(filter) = &options.filter {
            if !kernel.name().contains(filter.as_str()) {
                continue;
            }
        }
        let index = prepared.len();
        prepared.push(prepare(machine, kernel, None)?);
        let mut cases = kernel.cases();
        if let Some(limit) = options.cases_per_kernel {
            cases.truncate(limit);
        }
        for i in 0..options.random_cases {
            cases.push(kernel.random_case(options.seed.wrapping_add(i as u64 * 0x1_0000_0001)));
        }
        jobs.extend(cases.into_iter().map(|case| (index, case)));
    }
    let results: Vec<CaseResult> = jobs
        .par_iter()
        .map(|(index, case)| {
            run_case(
                machine,
                &layout,
                &prepared[*index],
                case,
                options.max_cycles,
            )
        })
        .collect();
    Ok(CheckReport::new(results))
}
