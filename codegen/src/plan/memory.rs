//! What the search knows of a tile's memory beside an op's working set: the reserves for what it
//! does not model, each op's share of the weight memory, and the weights later ops will add.

use super::compute_kind;
use super::forms::{BaseKind, Form};
use crate::graph::{Graph, ValueHandle};

/// Bytes of every tile a plan without SRAM-saving strategies leaves to kernel code, vertex
/// state, supervisor and exchange programs, copy tables and scratch (what it does not model).
pub const PROGRAM_RESERVE: u32 = 160 * 1024;

/// The same for an SRAM-saving plan, from what the busiest tile of the 12-layer So400m loop
/// held beside weights and activations: 57 KiB of code (kernels, supervisor and exchange
/// programs), 15 KiB of constants, 5 KiB of vertex state, 1 KiB of worker scratch — 78 KiB —
/// and 50 KiB of margin. Smaller than [`PROGRAM_RESERVE`]: these plans are the ones that did not
/// fit, and every byte goes to the weights a loop keeps resident (27 So400m layers are ~280 KiB
/// of every tile). Should placement still fail, the compiler plans again with less
/// ([`crate::compile`]).
pub const SRAM_SAVING_RESERVE: u32 = 128 * 1024;

/// Every op's share of the weight memory: bytes of its weight operands over all ops', of the
/// part of a tile's budget weights may take, with some slack. A strategy pinning more than its
/// op's share on a tile is kept only when no strategy of the op fits its share: otherwise early
/// ops would replicate their weights freely and leave nothing for the later ones.
pub(super) fn weight_allowances(graph: &Graph, forms: &[Form], budget: u32) -> Vec<u64> {
    let mut bytes = vec![0u64; graph.nodes.len()];
    for (h, node) in graph.nodes.iter() {
        if compute_kind(graph, h).is_none() {
            continue;
        }
        for (_, x) in node.op.operands() {
            if forms[x.index()].kind == BaseKind::Weight {
                let t = &graph.nodes[x].ty;
                let copies = loop_copies(graph, forms[x.index()].base) as u64;
                bytes[h.index()] += t.shape.numel() as u64 * t.dtype.size_bytes() as u64 * copies;
            }
        }
    }
    let total: u64 = bytes.iter().sum::<u64>().max(1);
    // Weights may take half the budget; the rest is activations (attention keys and values
    // for a whole head on every query tile) and exchange buffers.
    let for_weights = budget as u64 / 2;
    bytes
        .into_iter()
        .map(|b| b * for_weights * 13 / 10 / total + 16 * 1024)
        .collect()
}

/// Copies of weight node `weight` on a tile: one per iteration for a loop body's per-iteration
/// weight, else one.
pub fn loop_copies(graph: &Graph, weight: ValueHandle) -> u32 {
    match (&graph.looped, graph.nodes[weight].op.tensor_name()) {
        (Some(l), Some(name)) if l.weights.contains_key(name) => l.count,
        _ => 1,
    }
}

/// Per node: the bytes per tile, at the least (spread evenly over `tiles`), of the weights no
/// compute op up to that node reads. Every weight is resident from the start of the run, so an
/// op's working set shares its tiles with them too; the search sees only the weights already
/// placed, and this floor keeps it from accepting an op that later weights crowd out (a loop's
/// 27 layers of weights are most of the chip).
pub(super) fn weights_to_come(graph: &Graph, forms: &[Form], tiles: u32) -> Vec<u64> {
    let mut seen = std::collections::HashSet::new();
    let mut read_by: Vec<u64> = vec![0; graph.nodes.len()];
    for (h, node) in graph.nodes.iter() {
        if compute_kind(graph, h).is_none() {
            continue;
        }
        for (_, x) in node.op.operands() {
            let form = &forms[x.index()];
            if form.kind == BaseKind::Weight && seen.insert(form.base) {
                read_by[h.index()] += resident_bytes(graph, form.base);
            }
        }
    }
    let mut after = vec![0u64; read_by.len()];
    let mut later = 0u64;
    for i in (0..read_by.len()).rev() {
        after[i] = later.div_ceil(tiles.max(1) as u64);
        later += read_by[i];
    }
    after
}

/// The bytes weight `h` takes on the chip: all its loop copies.
pub fn resident_bytes(graph: &Graph, h: ValueHandle) -> u64 {
    let ty = &graph.nodes[h].ty;
    ty.shape.0.iter().map(|&d| d as u64).product::<u64>()
        * ty.dtype.size_bytes() as u64
        * loop_copies(graph, h) as u64
}
