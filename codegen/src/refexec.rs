//! The plan's bit-exact reference executor: runs a tile [`Program`] on the host with every
//! kernel's Rust reference, without the simulator and without a placement, and returns the host
//! outputs an image of the program must produce.
//!
//! State: per tile, one byte vector per alias root (aliases share their root's bytes), started
//! from `contents` (zeros elsewhere), then the host input pieces. Steps run in order:
//!
//! * compute: per tile, per call in order, the call's case template with every case buffer's
//!   bytes read from its binding, [`Kernel::reference`], and every output written back to its
//!   binding;
//! * exchange: every transfer's words are read from the sender (all reads see the state before
//!   the phase) and written to every delivery.
//!
//! A loop's steps run once per iteration, a binding into a layered buffer reading that
//! iteration's slice ([`Program::binding_offset`]).
//!
//! Memory: a buffer with contents reads them where the program holds them, and one never
//! written reads a shared block of zeros, until its first write makes it its own. [`execute`]
//! also releases every buffer after its last use (the output pieces' buffers are kept), so the
//! executor holds the live buffers only, not a second copy of every tile's data.
//!
//! Buffers that share memory in a placement are separate here, so a difference from the
//! simulator points at the placement, the schedule or the code, not at the plan. A kernel
//! reference given a malformed case may panic (kernel code, not input checking); cases built by
//! the kernels' own constructors are well-formed.

use crate::place::root_offset;
use crate::tile::verify::{verify, TileVerifyError};
use crate::tile::{BufferId, HostTensorPlan, Program, StepKind};
use std::borrow::Cow;
use tessera_isa::image::Dtype;
use tessera_kernels::Role;

/// Why the reference executor could not run a program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefExecError {
    #[error("E-REF-001 the tile program is malformed: {0}")]
    Verify(#[from] TileVerifyError),
    #[error("E-REF-002 tile {tile} step {step}: no kernel `{kernel}` in the library")]
    UnknownKernel {
        tile: u32,
        step: usize,
        kernel: String,
    },
    #[error("E-REF-003 input `{name}`: {reason}")]
    Input { name: String, reason: String },
    #[error("E-REF-004 tile {tile} step {step} `{kernel}`: the reference {reason}")]
    Reference {
        tile: u32,
        step: usize,
        kernel: String,
        reason: String,
    },
    #[error("E-REF-005 host tensor `{name}`: {reason}")]
    HostTensor { name: String, reason: String },
}

/// Bytes of a host tensor.
fn tensor_bytes(plan: &HostTensorPlan) -> Result<usize, RefExecError> {
    let fail = |reason: String| RefExecError::HostTensor {
        name: plan.name.clone(),
        reason,
    };
    let dtype = Dtype::from_name(&plan.dtype)
        .ok_or_else(|| fail(format!("unknown dtype `{}`", plan.dtype)))?;
    plan.shape
        .iter()
        .try_fold(dtype.size() as usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| fail("its size overflows".into()))
}

/// Zeros that buffers never written read (up to this size; larger ones get their own).
static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

/// The bytes of a buffer never written: `len` zeros, shared when small enough.
fn zeros(len: usize) -> Cow<'static, [u8]> {
    match ZEROS.get(..len) {
        Some(zeros) => Cow::Borrowed(zeros),
        None => Cow::Owned(vec![0; len]),
    }
}

/// A program being executed: the bytes of every buffer of every tile.
pub struct RefExec<'a> {
    program: &'a Program,
    /// Per tile: buffer → its alias root and where it starts in it.
    roots: Vec<Vec<(usize, u32)>>,
    /// Per tile, per root: the bytes (empty for non-roots and released roots); borrowed from
    /// the program's contents or [`ZEROS`] until first written.
    memory: Vec<Vec<Cow<'a, [u8]>>>,
    /// The steps as they run: (step, iteration).
    sequence: Vec<(usize, u32)>,
    next_step: usize,
    /// Per position of `sequence`: the (tile, root) pairs no later step touches, released after
    /// it runs (empty when not releasing; see [`RefExec::release_dead_buffers`]).
    releases: Vec<Vec<(u32, usize)>>,
}

impl<'a> RefExec<'a> {
    /// Verifies `program` and loads contents and host inputs (every input of the program, by
    /// name, as row-major bytes).
    pub fn new<N: AsRef<str>, B: AsRef<[u8]>>(
        program: &'a Program,
        inputs: &[(N, B)],
    ) -> Result<RefExec<'a>, RefExecError> {
        verify(program)?;
        let mut roots = Vec::with_capacity(program.tiles.len());
        let mut memory = Vec::with_capacity(program.tiles.len());
        for tile in &program.tiles {
            let tile_roots: Vec<(usize, u32)> = (0..tile.buffers.len())
                .map(|i| {
                    let (r, offset) = root_offset(tile, BufferId(i as u32));
                    (r.0 as usize, offset)
                })
                .collect();
            let mut sizes = vec![0usize; tile.buffers.len()];
            for (i, buffer) in tile.buffers.iter().enumerate() {
                let (r, offset) = tile_roots[i];
                sizes[r] = sizes[r].max(offset as usize + buffer.bytes as usize);
            }
            let mut bytes: Vec<Cow<'a, [u8]>> = sizes.iter().map(|&len| zeros(len)).collect();
            for (i, buffer) in tile.buffers.iter().enumerate() {
                if let Some(contents) = &buffer.contents {
                    let (r, offset) = tile_roots[i];
                    let offset = offset as usize;
                    let whole = offset == 0 && contents.len() == sizes[r];
                    match (whole, &bytes[r]) {
                        // The root's whole contents: read in place.
                        (true, Cow::Borrowed(current)) if current.iter().all(|&b| b == 0) => {
                            bytes[r] = Cow::Borrowed(contents.as_slice());
                        }
                        _ => bytes[r].to_mut()[offset..offset + contents.len()]
                            .copy_from_slice(contents),
                    }
                }
            }
            roots.push(tile_roots);
            memory.push(bytes);
        }
        let mut exec = RefExec {
            program,
            roots,
            memory,
            sequence: program.executed_steps(),
            next_step: 0,
            releases: Vec::new(),
        };
        exec.write_inputs(inputs)?;
        Ok(exec)
    }

    fn write_inputs<N: AsRef<str>, B: AsRef<[u8]>>(
        &mut self,
        inputs: &[(N, B)],
    ) -> Result<(), RefExecError> {
        for (name, _) in inputs {
            if !self.program.inputs.iter().any(|t| t.name == name.as_ref()) {
                return Err(RefExecError::Input {
                    name: name.as_ref().into(),
                    reason: "the program has no such input".into(),
                });
            }
        }
        for plan in &self.program.inputs {
            let fail = |reason: String| RefExecError::Input {
                name: plan.name.clone(),
                reason,
            };
            let data = inputs
                .iter()
                .find(|(n, _)| n.as_ref() == plan.name)
                .map(|(_, b)| b.as_ref())
                .ok_or_else(|| fail("not given".into()))?;
            let size = tensor_bytes(plan)?;
            if data.len() != size {
                return Err(fail(format!(
                    "{} bytes given, {size} expected for {} {:?}",
                    data.len(),
                    plan.dtype,
                    plan.shape
                )));
            }
            for piece in &plan.pieces {
                let from = piece.tensor_offset as usize;
                let source = data.get(from..from + piece.bytes as usize).ok_or_else(|| {
                    fail(format!("a piece reads tensor bytes {from}.. past its end"))
                })?;
                self.bytes_mut(piece.tile, piece.buffer, piece.offset, piece.bytes as usize)
                    .copy_from_slice(source);
            }
        }
        Ok(())
    }

    /// Bytes `[offset, offset + len)` of a buffer (through its alias root); in range after
    /// `verify`.
    fn bytes(&self, tile: u32, buffer: BufferId, offset: u32, len: usize) -> &[u8] {
        let (r, base) = self.roots[tile as usize][buffer.0 as usize];
        let at = (base + offset) as usize;
        &self.memory[tile as usize][r][at..at + len]
    }

    fn bytes_mut(&mut self, tile: u32, buffer: BufferId, offset: u32, len: usize) -> &mut [u8] {
        let (r, base) = self.roots[tile as usize][buffer.0 as usize];
        let at = (base + offset) as usize;
        &mut self.memory[tile as usize][r].to_mut()[at..at + len]
    }

    /// From now on, releases each buffer after the last step that reads or writes it (an
    /// output piece's buffer is kept): [`RefExec::buffer`] must not be asked for a released
    /// one. What [`execute`] does, so that the executor holds only live buffers.
    pub fn release_dead_buffers(&mut self) {
        let program = self.program;
        // The last position of each step in the sequence.
        let mut last_run = vec![None; program.steps.len()];
        for (position, &(step, _)) in self.sequence.iter().enumerate() {
            if let Some(last) = last_run.get_mut(step) {
                *last = Some(position);
            }
        }
        // Per tile, per root: the last position that touches it (`usize::MAX`: kept).
        let mut last_use: Vec<Vec<Option<usize>>> = self
            .memory
            .iter()
            .map(|roots| vec![None; roots.len()])
            .collect();
        let mut touch = |tile: u32, buffer: BufferId, position: usize| {
            let (r, _) = self.roots[tile as usize][buffer.0 as usize];
            let last = &mut last_use[tile as usize][r];
            *last = Some(last.map_or(position, |l: usize| l.max(position)));
        };
        for (step, kind) in program.steps.iter().enumerate() {
            let Some(position) = last_run[step] else {
                continue;
            };
            match kind {
                StepKind::Compute { .. } => {
                    for tile in &program.tiles {
                        for call in tile.calls.get(step).into_iter().flatten() {
                            for &(buffer, _) in &call.bindings {
                                touch(tile.tile, buffer, position);
                            }
                        }
                    }
                }
                StepKind::Exchange { phase, .. } => {
                    for transfer in program.phases.get(*phase).into_iter().flatten() {
                        touch(transfer.sender, transfer.source.0, position);
                        for &(tile, buffer, _) in &transfer.deliveries {
                            touch(tile, buffer, position);
                        }
                    }
                }
            }
        }
        for piece in program.outputs.iter().flat_map(|o| &o.pieces) {
            touch(piece.tile, piece.buffer, usize::MAX);
        }
        let mut releases = vec![Vec::new(); self.sequence.len()];
        for (tile, roots) in last_use.iter().enumerate() {
            for (r, last) in roots.iter().enumerate() {
                if let Some(list) = last.and_then(|position| releases.get_mut(position)) {
                    list.push((tile as u32, r));
                }
            }
        }
        self.releases = releases;
    }

    /// The current bytes of a buffer (`None` if it does not exist).
    pub fn buffer(&self, tile: u32, buffer: BufferId) -> Option<&[u8]> {
        let bytes = self
            .program
            .tiles
            .get(tile as usize)?
            .buffers
            .get(buffer.0 as usize)?
            .bytes as usize;
        Some(self.bytes(tile, buffer, 0, bytes))
    }

    /// Bytes the executor holds of its own: buffers written so far and not released (those
    /// read in place from the program's contents or the shared zeros count nothing).
    pub fn held_bytes(&self) -> usize {
        self.memory
            .iter()
            .flatten()
            .map(|bytes| match bytes {
                Cow::Owned(bytes) => bytes.len(),
                Cow::Borrowed(_) => 0,
            })
            .sum()
    }

    /// Steps run so far (a loop's steps once per iteration).
    pub fn steps_done(&self) -> usize {
        self.next_step
    }

    /// Runs the next step; `false` when every step has run.
    pub fn step(&mut self) -> Result<bool, RefExecError> {
        let Some(&(step, iteration)) = self.sequence.get(self.next_step) else {
            return Ok(false);
        };
        let Some(kind) = self.program.steps.get(step) else {
            return Ok(false);
        };
        match kind {
            StepKind::Compute { .. } => self.compute(step, iteration)?,
            StepKind::Exchange { phase, .. } => self.exchange(*phase),
        }
        for &(tile, r) in self.releases.get(self.next_step).into_iter().flatten() {
            self.memory[tile as usize][r] = Cow::Borrowed(&[]);
        }
        self.next_step += 1;
        Ok(true)
    }

    /// Runs every tile's calls of a compute step. Tiles share nothing in a compute step, so
    /// they run in parallel (on the current rayon pool); within a tile, calls run in order. The
    /// first failing tile in tile order reports, whatever the thread count.
    fn compute(&mut self, step: usize, iteration: u32) -> Result<(), RefExecError> {
        use rayon::prelude::*;
        let program = self.program;
        let results: Vec<Result<(), RefExecError>> = program
            .tiles
            .par_iter()
            .zip(self.memory.par_iter_mut())
            .zip(self.roots.par_iter())
            .map(|((tile, memory), roots)| {
                let at = |id: BufferId, offset: u32| {
                    program.binding_offset(tile.tile, id, offset, iteration)
                };
                compute_tile(tile, memory, roots, step, &at)
            })
            .collect();
        results.into_iter().collect()
    }

    fn exchange(&mut self, phase: usize) {
        let transfers = &self.program.phases[phase];
        let words: Vec<Vec<u8>> = transfers
            .iter()
            .map(|t| {
                self.bytes(t.sender, t.source.0, t.source.1, t.words as usize * 4)
                    .to_vec()
            })
            .collect();
        for (transfer, data) in transfers.iter().zip(&words) {
            for &(tile, buffer, offset) in &transfer.deliveries {
                self.bytes_mut(tile, buffer, offset, data.len())
                    .copy_from_slice(data);
            }
        }
    }

    /// Every output of the program, in program order: name and row-major bytes.
    pub fn outputs(&self) -> Result<Vec<(String, Vec<u8>)>, RefExecError> {
        let mut outputs = Vec::with_capacity(self.program.outputs.len());
        for plan in &self.program.outputs {
            let mut data = vec![0u8; tensor_bytes(plan)?];
            for piece in &plan.pieces {
                let from = piece.tensor_offset as usize;
                let target = data
                    .get_mut(from..from + piece.bytes as usize)
                    .ok_or_else(|| RefExecError::HostTensor {
                        name: plan.name.clone(),
                        reason: format!("a piece writes tensor bytes {from}.. past its end"),
                    })?;
                target.copy_from_slice(self.bytes(
                    piece.tile,
                    piece.buffer,
                    piece.offset,
                    piece.bytes as usize,
                ));
            }
            outputs.push((plan.name.clone(), data));
        }
        Ok(outputs)
    }
}

/// One tile's calls of compute step `step`, on that tile's buffers (`memory` by alias root,
/// `roots` by buffer); `at` gives the offset a binding means in this iteration.
fn compute_tile(
    tile: &crate::tile::TileProgram,
    memory: &mut [Cow<'_, [u8]>],
    roots: &[(usize, u32)],
    step: usize,
    at: &dyn Fn(BufferId, u32) -> u32,
) -> Result<(), RefExecError> {
    let range = |id: BufferId, offset: u32, len: usize| {
        let (r, base) = roots[id.0 as usize];
        let offset = base + at(id, offset);
        (r, offset as usize..offset as usize + len)
    };
    for call in &tile.calls[step] {
        let fail = |reason: String| RefExecError::Reference {
            tile: tile.tile,
            step,
            kernel: call.name().into(),
            reason,
        };
        let operands: Vec<Vec<u8>> = call
            .spec
            .operands
            .iter()
            .zip(&call.bindings)
            .map(|(o, &(id, offset))| {
                let (r, bytes) = range(id, offset, o.bytes as usize);
                memory[r][bytes].to_vec()
            })
            .collect();
        let results = call
            .params
            .reference(operands)
            .map_err(|e| fail(e.to_string()))?;
        let outputs: Vec<usize> = call
            .spec
            .operands
            .iter()
            .enumerate()
            .filter(|(_, o)| o.role == Role::Output)
            .map(|(i, _)| i)
            .collect();
        if results.len() != outputs.len() {
            return Err(fail(format!(
                "gave {} outputs for {}",
                results.len(),
                outputs.len()
            )));
        }
        for (&k, result) in outputs.iter().zip(&results) {
            let operand = &call.spec.operands[k];
            if result.len() != operand.bytes as usize {
                return Err(fail(format!(
                    "gave {} bytes for `{}` ({} bytes)",
                    result.len(),
                    operand.name,
                    operand.bytes
                )));
            }
            let (id, offset) = call.bindings[k];
            let (r, bytes) = range(id, offset, result.len());
            memory[r].to_mut()[bytes].copy_from_slice(result);
        }
    }
    Ok(())
}

/// Runs every step of `program` with `inputs` and returns its outputs.
pub fn execute<N: AsRef<str>, B: AsRef<[u8]>>(
    program: &Program,
    inputs: &[(N, B)],
) -> Result<Vec<(String, Vec<u8>)>, RefExecError> {
    let mut exec = RefExec::new(program, inputs)?;
    exec.release_dead_buffers();
    while exec.step()? {}
    exec.outputs()
}
