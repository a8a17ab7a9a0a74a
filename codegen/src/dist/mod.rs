//! The distributed level (mid IR): every value has a layout — how its shards spread over the
//! tiles (distribution), the order of elements in a shard, and the number format — and every
//! change of distribution, order or format is an explicit operation. Costed choices and rewrites
//! happen here (`rewrite.rs`); `verify.rs` checks a program after every pass.
//!
//! Distributions are stated on a *grid*: `tm` row blocks × `tn` column positions; grid tile
//! (i, j) is chip tile `i·tn + j`. Row block i covers rows `rows[i]` of every 2-D activation.
//!
//! | distribution | tile (i, j) holds |
//! |---|---|
//! | `RowSegments` | segment j of row block i (row block i split into tn contiguous segments) |
//! | `RowBlocks` | all of row block i (replicated over j) |
//! | `Blocks { cols }` | rows of block i × columns `cols[j]` |
//! | `WeightColumns { cols }` | all rows × columns `cols[j]` (replicated over i) |
//! | `VectorColumns { cols }` | elements `cols[j]` of a vector (replicated over i) |
//! | `Replicated` | everything |
//!
//! Rewrites compare *resolved* geometry ([`resolve`]: the list of (tile, row range, column range)
//! shards), never the descriptions, so two layouts written differently but placing the same
//! elements on the same tiles are compatible.

pub mod dump;
pub mod from_graph;
pub mod rewrite;
pub mod verify;

use serde::{Deserialize, Serialize};
use std::ops::Range;
use tessera_isa::numerics::Fp8Format;

/// The tile grid a program is laid out on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub tm: u32,
    pub tn: u32,
    /// Row range of each row block (`tm` of them).
    pub rows: Vec<Range<u32>>,
}

impl Grid {
    /// `rows` split into `tm` blocks as evenly as possible (larger blocks first).
    pub fn new(tm: u32, tn: u32, rows: u32) -> Grid {
        Grid {
            tm,
            tn,
            rows: split_even(rows, tm),
        }
    }

    pub fn tile(&self, i: u32, j: u32) -> u32 {
        i * self.tn + j
    }

    pub fn tiles(&self) -> u32 {
        self.tm * self.tn
    }

    /// Segment j of row block i (for `RowSegments`).
    pub fn segment(&self, i: u32, j: u32) -> Range<u32> {
        let block = &self.rows[i as usize];
        let parts = split_even(block.end - block.start, self.tn);
        let part = &parts[j as usize];
        block.start + part.start..block.start + part.end
    }
}

/// `total` split into `parts` contiguous ranges, sizes differing by at most one, larger first.
pub fn split_even(total: u32, parts: u32) -> Vec<Range<u32>> {
    let base = total / parts.max(1);
    let extra = total % parts.max(1);
    let mut next = 0;
    (0..parts)
        .map(|p| {
            let len = base + u32::from(p < extra);
            let range = next..next + len;
            next += len;
            range
        })
        .collect()
}

/// `total` split into `parts` ranges that are whole multiples of `granule` (except possibly the
/// last range's end, which is `total`), as evenly as possible.
pub fn split_granular(total: u32, parts: u32, granule: u32) -> Vec<Range<u32>> {
    let granules = total.div_ceil(granule);
    split_even(granules, parts)
        .into_iter()
        .map(|g| (g.start * granule).min(total)..(g.end * granule).min(total))
        .collect()
}

/// How a value's shards spread over the grid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Distribution {
    RowSegments,
    RowBlocks,
    Blocks { cols: Vec<Range<u32>> },
    WeightColumns { cols: Vec<Range<u32>> },
    VectorColumns { cols: Vec<Range<u32>> },
    Replicated,
}

/// Order of elements within a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Order {
    /// Rows of `stride` elements (stride ≥ shard columns; padding columns are zero or don't-care).
    RowMajor { stride: u32 },
    /// AMP-left panels (32 bytes per row per K-block; see `tessera_kernels::layout`).
    Panels,
    /// AMP weights in `$CWEI` block order.
    CweiBlocks,
    /// A plain vector.
    Vector,
}

/// Number format of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    F32,
    F16,
    Fp8 { format: Fp8Format, scale: i8 },
}

impl Format {
    pub fn bytes(self) -> u32 {
        match self {
            Format::F32 => 4,
            Format::F16 => 2,
            Format::Fp8 { .. } => 1,
        }
    }

    pub fn name(self) -> String {
        match self {
            Format::F32 => "f32".into(),
            Format::F16 => "f16".into(),
            Format::Fp8 { format, scale } => format!("{}<{scale}>", format.name().to_lowercase()),
        }
    }
}

/// A value's full layout.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    pub distribution: Distribution,
    pub order: Order,
    pub format: Format,
}

/// A handle to a mid-level value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

/// One mid-level value: a 2-D matrix `[rows, cols]` (vectors are `[1, n]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MidValue {
    pub name: String,
    pub rows: u32,
    pub cols: u32,
    pub layout: Layout,
}

/// Mid-level operations. Each produces one value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MidOp {
    /// A host input tensor (the host writes it in this layout).
    Input {
        tensor: String,
    },
    /// A constant from the weight store, converted on the host to the value's layout.
    Weight {
        tensor: String,
    },
    /// Row-wise LayerNorm; output format may be FP8 (direct producer output).
    LayerNorm {
        x: ValueId,
        gamma: ValueId,
        beta: ValueId,
        eps: f32,
    },
    /// Format change on the producer's shards (same distribution and order).
    Cast {
        x: ValueId,
    },
    /// Gathers shards so every tile of a grid row holds the row block (an exchange).
    Gather {
        x: ValueId,
    },
    /// RowMajor → Panels on each shard (a local reorder).
    ToPanels {
        x: ValueId,
    },
    /// FP8 matrix product on the AMP: a (RowBlocks, Panels) × w (WeightColumns, CweiBlocks).
    MatMul {
        a: ValueId,
        w: ValueId,
    },
    BiasAdd {
        x: ValueId,
        bias: ValueId,
    },
    /// tanh GeLU; output may be FP8 (direct producer output).
    Gelu {
        x: ValueId,
    },
    Add {
        a: ValueId,
        b: ValueId,
    },
    Output {
        x: ValueId,
        tensor: String,
    },
}

impl MidOp {
    pub fn operands(&self) -> Vec<ValueId> {
        match self {
            MidOp::Input { .. } | MidOp::Weight { .. } => vec![],
            MidOp::LayerNorm { x, gamma, beta, .. } => vec![*x, *gamma, *beta],
            MidOp::Cast { x }
            | MidOp::Gather { x }
            | MidOp::ToPanels { x }
            | MidOp::Gelu { x }
            | MidOp::Output { x, .. } => vec![*x],
            MidOp::MatMul { a, w } => vec![*a, *w],
            MidOp::BiasAdd { x, bias } => vec![*x, *bias],
            MidOp::Add { a, b } => vec![*a, *b],
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            MidOp::Input { .. } => "input",
            MidOp::Weight { .. } => "weight",
            MidOp::LayerNorm { .. } => "layernorm",
            MidOp::Cast { .. } => "cast",
            MidOp::Gather { .. } => "gather",
            MidOp::ToPanels { .. } => "to_panels",
            MidOp::MatMul { .. } => "matmul",
            MidOp::BiasAdd { .. } => "bias_add",
            MidOp::Gelu { .. } => "gelu",
            MidOp::Add { .. } => "add",
            MidOp::Output { .. } => "output",
        }
    }
}

/// A mid-level program: values and the ops that define them, in order (op k defines value k).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MidProgram {
    pub grid: Grid,
    pub values: Vec<MidValue>,
    pub ops: Vec<MidOp>,
}

impl MidProgram {
    pub fn new(grid: Grid) -> MidProgram {
        MidProgram {
            grid,
            values: Vec::new(),
            ops: Vec::new(),
        }
    }

    pub fn push(&mut self, op: MidOp, value: MidValue) -> ValueId {
        self.ops.push(op);
        self.values.push(value);
        ValueId(self.values.len() as u32 - 1)
    }

    pub fn value(&self, id: ValueId) -> &MidValue {
        &self.values[id.0 as usize]
    }

    /// Ops that read `id`.
    pub fn readers(&self, id: ValueId) -> Vec<usize> {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.operands().contains(&id))
            .map(|(i, _)| i)
            .collect()
    }
}

/// One shard of a value: `rows × cols` of the value on `tile`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub tile: u32,
    pub rows: Range<u32>,
    pub cols: Range<u32>,
}

/// The resolved geometry of a value: every shard, sorted.
pub fn resolve(grid: &Grid, value: &MidValue) -> Vec<Shard> {
    let mut shards = Vec::new();
    for i in 0..grid.tm {
        for j in 0..grid.tn {
            let tile = grid.tile(i, j);
            let (rows, cols) = match &value.layout.distribution {
                Distribution::RowSegments => (grid.segment(i, j), 0..value.cols),
                Distribution::RowBlocks => (grid.rows[i as usize].clone(), 0..value.cols),
                Distribution::Blocks { cols } => {
                    (grid.rows[i as usize].clone(), cols[j as usize].clone())
                }
                Distribution::WeightColumns { cols } => (0..value.rows, cols[j as usize].clone()),
                Distribution::VectorColumns { cols } => (0..1, cols[j as usize].clone()),
                Distribution::Replicated => (0..value.rows, 0..value.cols),
            };
            if !rows.is_empty() && !cols.is_empty() {
                shards.push(Shard { tile, rows, cols });
            }
        }
    }
    shards.sort_by_key(|s| (s.tile, s.rows.start, s.rows.end, s.cols.start, s.cols.end));
    shards
}
