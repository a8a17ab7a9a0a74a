//! The tile level (low IR): for every tile, its buffers (with sizes, placement requirements,
//! lifetimes in steps and explicit aliases) and, for every superstep, the kernel calls it makes;
//! for the whole program, the exchange phases between steps and the host I/O map.
//!
//! All tiles run the same sequence of steps (bulk-synchronous): a step is either a compute step
//! (each tile runs its own kernel calls; a tile with none idles) or an exchange step (the phase's
//! transfers). Every step ends with a global sync. A [`StepLoop`] runs a range of steps several
//! times (a model's layers): the same calls and transfers in every iteration, except that a
//! binding into a *layered* buffer (one slice per iteration, such as a layer's weights) reads
//! iteration `i`'s slice.

pub mod verify;

use crate::exchange::Transfer;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tessera_kernels::table::{CallSpec, KernelId, KernelParamError, KernelParams};

/// A buffer of one tile's program (an index into [`TileProgram::buffers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BufferId(pub u32);

/// Which region a buffer must be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RegionRequirement {
    Standard,
    Interleaved,
    Any,
}

/// What a buffer holds, for SRAM accounting.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BufferCategory {
    /// An activation tensor (or a piece of one).
    Tensor(String),
    /// Constant weights and biases.
    Weights(String),
    /// Per-call vertex state.
    VertexState,
    /// Kernel scratch.
    Scratch,
    /// Kernel tables and other constants of a call.
    Constants,
    /// Staging and send buffers of a redistribution.
    Exchange(String),
}

/// One buffer of a tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferDecl {
    pub name: String,
    pub bytes: u32,
    pub align: u32,
    pub region: RegionRequirement,
    /// Buffers whose slots differ must be in different memory elements (kernel requirement).
    pub slot: Option<u8>,
    pub category: BufferCategory,
    /// First and last step (inclusive) the buffer is live in. Constants and host inputs are
    /// live from step 0; host outputs to the last step.
    pub live: (usize, usize),
    /// `Some(b)`: this buffer is the same memory as `b` (an in-place result), at
    /// [`BufferDecl::alias_offset`] bytes into it; `b` must hold it whole.
    pub alias_of: Option<BufferId>,
    /// With `alias_of`: where this buffer starts in the one it aliases (a multiple of its
    /// alignment; 0 for an in-place result, else a producer's result written straight into
    /// its part of a consumer's operand).
    #[serde(default)]
    pub alias_offset: u32,
    /// Initial contents (weights, constants); `None` = uninitialised.
    #[serde(skip)]
    pub contents: Option<Arc<Vec<u8>>>,
}

/// One kernel invocation: its typed parameters, what the kernel table derives from them
/// (operands, vertex words, CSRs; shared by every call with equal params), where each operand
/// lives on the tile, and the label of the op it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelCall {
    pub params: Arc<KernelParams>,
    pub spec: Arc<CallSpec>,
    /// For each operand: the tile buffer and byte offset in it.
    pub bindings: Vec<(BufferId, u32)>,
    /// The op this call runs for (`fc1`, `k.t`, …).
    pub label: Arc<str>,
}

impl KernelCall {
    /// A call of `params` with operands at `bindings`.
    pub fn new(
        params: Arc<KernelParams>,
        bindings: Vec<(BufferId, u32)>,
        label: Arc<str>,
    ) -> Result<KernelCall, KernelParamError> {
        let spec = params.spec()?;
        Ok(KernelCall {
            params,
            spec,
            bindings,
            label,
        })
    }

    pub fn kernel(&self) -> KernelId {
        self.spec.kernel
    }

    pub fn name(&self) -> &'static str {
        self.spec.kernel.name()
    }
}

/// The program of one tile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileProgram {
    pub tile: u32,
    pub buffers: Vec<BufferDecl>,
    /// Per step: the kernel calls (empty for exchange steps and idle tiles).
    pub calls: Vec<Vec<KernelCall>>,
}

impl TileProgram {
    pub fn add_buffer(&mut self, buffer: BufferDecl) -> BufferId {
        self.buffers.push(buffer);
        BufferId(self.buffers.len() as u32 - 1)
    }

    pub fn buffer(&self, id: BufferId) -> &BufferDecl {
        &self.buffers[id.0 as usize]
    }

    /// Every call with its step, in step and call order (the order of vertex records).
    pub fn calls_by_step(&self) -> impl Iterator<Item = (usize, &KernelCall)> {
        self.calls
            .iter()
            .enumerate()
            .flat_map(|(step, calls)| calls.iter().map(move |call| (step, call)))
    }
}

/// What a step does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepKind {
    Compute {
        label: String,
    },
    /// Index into [`Program::phases`].
    Exchange {
        phase: usize,
        label: String,
    },
}

/// A transfer whose addresses are still buffer references.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolicTransfer {
    pub sender: u32,
    pub source: (BufferId, u32),
    pub words: u32,
    pub deliveries: Vec<(u32, BufferId, u32)>,
    pub label: String,
}

/// One piece of a host tensor: `bytes` bytes of the tensor from `tensor_offset` live on `tile`
/// in `buffer` at `offset`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPiecePlan {
    pub tile: u32,
    pub buffer: BufferId,
    pub offset: u32,
    pub tensor_offset: u64,
    pub bytes: u32,
}

/// A named host input or output.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostTensorPlan {
    pub name: String,
    /// `float16`, `float32`, `uint8`, …
    pub dtype: String,
    pub shape: Vec<usize>,
    pub pieces: Vec<HostPiecePlan>,
}

/// Steps `first..=last` run `count` times, then the steps after them. On every tile, each
/// buffer in `layered` holds `count` slices `stride` bytes apart: a call's binding `(b, o)`
/// into one means `o + i × stride` in iteration `i` (transfers never name a layered buffer).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepLoop {
    pub first: usize,
    pub last: usize,
    pub count: u32,
    /// Per tile: layered buffer → stride in bytes.
    pub layered: Vec<std::collections::BTreeMap<BufferId, u32>>,
}

impl StepLoop {
    /// The stride of `buffer` on `tile` if it is layered.
    pub fn stride(&self, tile: u32, buffer: BufferId) -> Option<u32> {
        self.layered.get(tile as usize)?.get(&buffer).copied()
    }
}

/// The whole tile-level program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub tiles: Vec<TileProgram>,
    pub steps: Vec<StepKind>,
    pub phases: Vec<Vec<SymbolicTransfer>>,
    pub inputs: Vec<HostTensorPlan>,
    pub outputs: Vec<HostTensorPlan>,
    pub looped: Option<StepLoop>,
}

impl Program {
    pub fn new(tiles: u32) -> Program {
        Program {
            tiles: (0..tiles)
                .map(|tile| TileProgram {
                    tile,
                    ..TileProgram::default()
                })
                .collect(),
            ..Program::default()
        }
    }

    /// The steps as they run, in order: `(step, iteration)` (iteration 0 outside a loop).
    pub fn executed_steps(&self) -> Vec<(usize, u32)> {
        let n = self.steps.len();
        match &self.looped {
            None => (0..n).map(|s| (s, 0)).collect(),
            Some(l) => {
                let mut out: Vec<(usize, u32)> = (0..l.first.min(n)).map(|s| (s, 0)).collect();
                for i in 0..l.count {
                    out.extend((l.first..=l.last.min(n.saturating_sub(1))).map(|s| (s, i)));
                }
                out.extend((l.last + 1..n).map(|s| (s, 0)));
                out
            }
        }
    }

    /// How many times step `step` runs.
    pub fn runs_of(&self, step: usize) -> u32 {
        match &self.looped {
            Some(l) if (l.first..=l.last).contains(&step) => l.count,
            _ => 1,
        }
    }

    /// The byte offset a binding `(buffer, offset)` of `tile` means in iteration `iteration`.
    pub fn binding_offset(&self, tile: u32, buffer: BufferId, offset: u32, iteration: u32) -> u32 {
        match self.looped.as_ref().and_then(|l| l.stride(tile, buffer)) {
            Some(stride) => offset.wrapping_add(stride.wrapping_mul(iteration)),
            None => offset,
        }
    }

    /// Appends a compute step; every tile gets an empty call list to fill.
    pub fn compute_step(&mut self, label: &str) -> usize {
        self.steps.push(StepKind::Compute {
            label: label.into(),
        });
        for tile in &mut self.tiles {
            tile.calls.push(Vec::new());
        }
        self.steps.len() - 1
    }

    /// Appends an exchange step with its transfers.
    pub fn exchange_step(&mut self, label: &str, transfers: Vec<SymbolicTransfer>) -> usize {
        self.phases.push(transfers);
        self.steps.push(StepKind::Exchange {
            phase: self.phases.len() - 1,
            label: label.into(),
        });
        for tile in &mut self.tiles {
            tile.calls.push(Vec::new());
        }
        self.steps.len() - 1
    }

    /// Resolves a phase's transfers to addresses.
    pub fn resolve_phase(&self, phase: usize, addresses: &[Vec<u32>]) -> Vec<Transfer> {
        resolve_transfers(&self.phases[phase], addresses)
    }
}

/// Transfers resolved to addresses: `addresses[tile][buffer]` is where each buffer lies.
pub fn resolve_transfers(list: &[SymbolicTransfer], addresses: &[Vec<u32>]) -> Vec<Transfer> {
    {
        list.iter()
            .map(|t| Transfer {
                sender: t.sender,
                source: addresses[t.sender as usize][t.source.0 .0 as usize] + t.source.1,
                words: t.words,
                deliveries: t
                    .deliveries
                    .iter()
                    .map(|&(tile, buffer, offset)| crate::exchange::Delivery {
                        tile,
                        destination: addresses[tile as usize][buffer.0 as usize] + offset,
                    })
                    .collect(),
                label: t.label.clone(),
            })
            .collect()
    }
}
