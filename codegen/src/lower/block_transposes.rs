//! Whole 4 × 4 transposes of f16 among a local copy's element-granular words, for
//! `transpose4x4_f16` (a block of values into `$CWEI` order, a matrix into its transpose):
//! 16 elements in 12 bundles where `gather_elements` spends 2 to 3 bundles an element.

use super::copies::PartialWords;
use super::periods::{pieces, Shift};
use std::collections::BTreeMap;
use std::sync::Arc;
use tessera_kernels::table::KernelParams;

/// The 4 × 4 blocks of f16 among a copy's element-granular words, for `transpose4x4_f16`, and
/// the words they write.
pub(super) struct FoundBlocks {
    pub(super) calls: Vec<KernelParams>,
    /// The destination words the calls write (whole).
    pub(super) words: Vec<u32>,
}

/// Fewest blocks worth a `transpose4x4_f16` call of their own.
const MIN_TRANSPOSE_BLOCKS: usize = 4;

/// Whole 4 × 4 transposes among `partial`: four destination quads (8-byte aligned, both words
/// with all lanes sourced), quad c at `d + c·col`, whose lanes i read `a + 2c + i·row` (a block of
/// 4 source rows, 8-byte aligned, `row` apart). Blocks of the most common (row, col) are taken
/// (a copy is one relayout, so its blocks share them), in destination order, cut into periodic
/// tables like the other kernels'. `None` when fewer than [`MIN_TRANSPOSE_BLOCKS`] are found.
pub(super) fn transpose_blocks(partial: &PartialWords) -> Option<FoundBlocks> {
    use tessera_kernels::movement::{TransposeBlock, BLOCK_ENTRY_BYTES};
    let lane = |word: u32, byte: u32| -> Option<u32> {
        partial
            .get(&word)?
            .iter()
            .find(|(b, _)| *b == byte)
            .and_then(|(_, s)| *s)
    };
    // (block source, row) → the destination of quad c.
    let mut candidates: BTreeMap<(u32, u32), [Option<u32>; 4]> = BTreeMap::new();
    for &q in partial.keys() {
        if q % 8 != 0 {
            continue;
        }
        let (Some(s0), Some(s1), Some(s2), Some(s3)) =
            (lane(q, 0), lane(q, 2), lane(q + 4, 0), lane(q + 4, 2))
        else {
            continue;
        };
        let row = s1.wrapping_sub(s0);
        if s1 <= s0 || s2.wrapping_sub(s1) != row || s3.wrapping_sub(s2) != row || row % 8 != 0 {
            continue;
        }
        let c = (s0 % 8) / 2;
        if s0 % 2 != 0 {
            continue;
        }
        let slot = &mut candidates.entry((s0 - 2 * c, row)).or_default()[c as usize];
        if slot.is_none() {
            *slot = Some(q);
        }
    }
    // Complete blocks by (row, col).
    let mut by_shape: BTreeMap<(u32, u32), Vec<TransposeBlock>> = BTreeMap::new();
    for ((src, row), quads) in candidates {
        let [Some(d0), Some(d1), Some(d2), Some(d3)] = quads else {
            continue;
        };
        let col = d1.wrapping_sub(d0);
        if d1 <= d0 || d2.wrapping_sub(d1) != col || d3.wrapping_sub(d2) != col || col % 8 != 0 {
            continue;
        }
        by_shape
            .entry((row, col))
            .or_default()
            .push(TransposeBlock { src, dst: d0 });
    }
    let ((row, col), mut blocks) = by_shape
        .into_iter()
        .max_by_key(|(shape, blocks)| (blocks.len(), std::cmp::Reverse(*shape)))?;
    if blocks.len() < MIN_TRANSPOSE_BLOCKS {
        return None;
    }
    blocks.sort_unstable_by_key(|b| b.dst);
    let words = blocks
        .iter()
        .flat_map(|b| (0..4).flat_map(move |c| [b.dst + c * col, b.dst + c * col + 4]))
        .collect();
    let relation = |a: &TransposeBlock, b: &TransposeBlock| {
        (b.dst as i64 - a.dst as i64, b.src as i64 - a.src as i64)
    };
    let step = |a: &TransposeBlock, b: &TransposeBlock| -> Option<Shift> {
        Some((
            Some(b.src as i64 - a.src as i64),
            b.dst as i64 - a.dst as i64,
        ))
    };
    let calls = pieces(&blocks, relation, step, BLOCK_ENTRY_BYTES)
        .into_iter()
        .map(|piece| KernelParams::Transpose4 {
            blocks: Arc::new(blocks[piece.start..piece.start + piece.table].to_vec()),
            outer: piece.outer as u32,
            src_stride: piece.step.0 as u32,
            dst_stride: piece.step.1 as u32,
            row,
            col,
        })
        .collect();
    Some(FoundBlocks { calls, words })
}
