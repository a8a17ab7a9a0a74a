//! Buffers and host tensors in the image: one segment per distinct address range of each tile
//! (buffers grouped by alias root, overlapping roots merged), with the initial contents, and the
//! host I/O map. Also refuses initial data or outputs that another buffer would overwrite.

use super::{sram_category, EmitError};
use crate::place::root;
use crate::tile::{BufferId, HostTensorPlan, Program, TileProgram};
use rayon::prelude::*;
use tessera_isa::image::{
    Dtype, ElementOrder, HostDirection, HostPiece, HostTensor, ImageBuilder, SramCategory,
};

/// The memory of one alias root.
struct Root {
    id: usize,
    start: u64,
    end: u64,
    live: (usize, usize),
    /// Holds data before step 0 (contents or a host input piece).
    initial: bool,
    /// Read by the host after the run.
    output: bool,
}

fn overlap(a: &Root, b: &Root) -> bool {
    a.start < b.end && b.start < a.end
}

fn roots(
    tile: &TileProgram,
    addresses: &[u32],
    inputs: &[BufferId],
    outputs: &[BufferId],
) -> Vec<Root> {
    let mut by_root: Vec<Option<Root>> = (0..tile.buffers.len()).map(|_| None).collect();
    for (i, buffer) in tile.buffers.iter().enumerate() {
        let r = root(tile, BufferId(i as u32)).0 as usize;
        let start = addresses[r] as u64;
        let entry = by_root[r].get_or_insert(Root {
            id: r,
            start,
            end: start,
            live: buffer.live,
            initial: false,
            output: false,
        });
        entry.end = entry.end.max(addresses[i] as u64 + buffer.bytes as u64);
        entry.live = (
            entry.live.0.min(buffer.live.0),
            entry.live.1.max(buffer.live.1),
        );
        entry.initial |= buffer.contents.is_some();
    }
    for (ids, input) in [(inputs, true), (outputs, false)] {
        for &id in ids {
            if let Some(Some(entry)) = by_root.get_mut(root(tile, id).0 as usize) {
                if input {
                    entry.initial = true;
                } else {
                    entry.output = true;
                }
            }
        }
    }
    by_root
        .into_iter()
        .flatten()
        .filter(|r| r.end > r.start)
        .collect()
}

/// Per tile: the buffers holding pieces of `tensors` (in tensor and piece order).
fn piece_buffers(tensors: &[HostTensorPlan], tiles: usize) -> Vec<Vec<BufferId>> {
    let mut by_tile = vec![Vec::new(); tiles];
    for piece in tensors
        .iter()
        .flat_map(|t| &t.pieces)
        .filter(|p| p.bytes > 0)
    {
        if let Some(list) = by_tile.get_mut(piece.tile as usize) {
            list.push(piece.buffer);
        }
    }
    by_tile
}

/// Refuses initial data written over by a buffer live before it, and outputs written over by
/// one live after them.
fn check_group(tile: &TileProgram, group: &[Root]) -> Result<(), EmitError> {
    for r in group {
        for s in group.iter().filter(|s| s.id != r.id && overlap(r, s)) {
            let fail = |what: &str| EmitError::Memory {
                tile: tile.tile,
                buffer: tile.buffers[r.id].name.clone(),
                reason: format!(
                    "{what} shares memory with `{}` (live {:?}; this one {:?})",
                    tile.buffers[s.id].name, s.live, r.live
                ),
            };
            if r.initial && s.live.0 < r.live.0 {
                return Err(fail(
                    "its initial data (contents or a host input) would be overwritten: it",
                ));
            }
            if r.output && s.live.1 > r.live.1 {
                return Err(fail("the host reads it after the run, but it"));
            }
        }
    }
    Ok(())
}

fn segment_name(tile: &TileProgram, group: &[Root]) -> String {
    let mut names: Vec<&str> = group
        .iter()
        .take(4)
        .map(|r| tile.buffers[r.id].name.as_str())
        .collect();
    if names.iter().all(|n| n.is_empty()) {
        names = vec!["buffer"];
    }
    let mut name = names.join(" | ");
    if group.len() > 4 {
        name.push_str(&format!(" (+{} more)", group.len() - 4));
    }
    name
}

/// Per root: the buffers of its alias group that have contents.
fn contents_by_root(tile: &TileProgram) -> Vec<Vec<usize>> {
    let mut by_root = vec![Vec::new(); tile.buffers.len()];
    for (i, buffer) in tile.buffers.iter().enumerate() {
        if buffer.contents.as_ref().is_some_and(|c| !c.is_empty()) {
            by_root[root(tile, BufferId(i as u32)).0 as usize].push(i);
        }
    }
    by_root
}

/// One segment of a tile: `size` bytes at `address`, with initial `data` or none.
struct Segment {
    address: u32,
    size: u32,
    data: Option<Vec<u8>>,
    category: SramCategory,
    name: String,
}

/// The segments of one group of address-overlapping buffers: the host writes only their
/// contents, so each run of contents is a segment with data of its own and the bytes between
/// and around them segments without (one segment without data where nothing has contents).
/// Writing the group's whole range, zeros and all, made start-up grow with every activation
/// buffer a placement put beside a constant (So400m/14: 150.8 M cycles → 166.7 M when sums
/// took fresh buffers in element slots).
fn group_segments(
    tile: &TileProgram,
    addresses: &[u32],
    contents: &[Vec<usize>],
    group: &[Root],
) -> Result<Vec<Segment>, EmitError> {
    check_group(tile, group)?;
    let start = group.iter().map(|r| r.start).min().unwrap_or(0);
    let end = group.iter().map(|r| r.end).max().unwrap_or(start);
    u32::try_from(end).map_err(|_| EmitError::BadPlacement {
        reason: format!("tile {}: a buffer ends past 4 GiB", tile.tile),
    })?;
    let largest = group
        .iter()
        .max_by_key(|r| (r.end - r.start, std::cmp::Reverse(r.id)))
        .map(|r| r.id)
        .unwrap_or(0);
    let category = sram_category(&tile.buffers[largest].category);
    let name = segment_name(tile, group);
    // The contents' spans (absolute addresses), refused where two overlap.
    let mut filled: Vec<(u64, u64, usize)> = Vec::new();
    for &i in group.iter().flat_map(|r| &contents[r.id]) {
        let buffer = &tile.buffers[i];
        let Some(bytes) = &buffer.contents else {
            continue;
        };
        let span = (
            addresses[i] as u64,
            addresses[i] as u64 + bytes.len() as u64,
        );
        if let Some(&(_, _, other)) = filled.iter().find(|&&(a, b, _)| a < span.1 && span.0 < b) {
            return Err(EmitError::Memory {
                tile: tile.tile,
                buffer: buffer.name.clone(),
                reason: format!(
                    "its contents overlap those of `{}`",
                    tile.buffers[other].name
                ),
            });
        }
        filled.push((span.0, span.1, i));
    }
    filled.sort_unstable();
    // Pieces covering the group in address order: the contents' spans and the gaps around them.
    let mut pieces: Vec<(u64, u64, Vec<usize>)> = Vec::with_capacity(2 * filled.len() + 1);
    let mut at = start;
    for &(from, to, i) in &filled {
        if from > at {
            pieces.push((at, from, Vec::new()));
        }
        pieces.push((from, to, vec![i]));
        at = to;
    }
    if end > at {
        pieces.push((at, end, Vec::new()));
    }
    // A host tensor's piece (an input the host writes, an output it reads) stays inside one
    // segment: pieces whose boundary falls inside one are merged.
    let host: Vec<(u64, u64)> = group
        .iter()
        .filter(|r| r.output || (r.initial && contents[r.id].is_empty()))
        .map(|r| (r.start, r.end))
        .collect();
    let mut merged: Vec<(u64, u64, Vec<usize>)> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match merged.last_mut() {
            Some(last) if host.iter().any(|&(a, b)| a < piece.0 && piece.0 < b) => {
                last.1 = piece.1;
                last.2.extend(piece.2);
            }
            _ => merged.push(piece),
        }
    }
    let mut segments = Vec::with_capacity(merged.len());
    for (from, to, with) in merged {
        let data = (!with.is_empty()).then(|| {
            let mut bytes = vec![0; (to - from) as usize];
            for &i in &with {
                if let Some(c) = &tile.buffers[i].contents {
                    let at = (addresses[i] as u64 - from) as usize;
                    bytes[at..at + c.len()].copy_from_slice(c);
                }
            }
            bytes
        });
        let (category, name) = match with.as_slice() {
            [only]
                if (to - from) as usize
                    == tile.buffers[*only].contents.as_ref().map_or(0, |c| c.len()) =>
            {
                (
                    sram_category(&tile.buffers[*only].category),
                    tile.buffers[*only].name.clone(),
                )
            }
            _ => (category.clone(), name.clone()),
        };
        segments.push(Segment {
            address: from as u32,
            size: (to - from) as u32,
            data,
            category,
            name,
        });
    }
    Ok(segments)
}

/// The segments of one tile's buffers in address order, up to the first refusal.
fn tile_segments(
    tile: &TileProgram,
    addresses: &[u32],
    inputs: &[BufferId],
    outputs: &[BufferId],
) -> (Vec<Segment>, Option<EmitError>) {
    let contents = contents_by_root(tile);
    let mut roots = roots(tile, addresses, inputs, outputs);
    roots.sort_by_key(|r| (r.start, r.end, r.id));
    let mut segments = Vec::new();
    let mut group: Vec<Root> = Vec::new();
    let mut group_end = 0u64;
    for r in roots {
        if !group.is_empty() && r.start >= group_end {
            match group_segments(tile, addresses, &contents, &group) {
                Ok(group_segments) => segments.extend(group_segments),
                Err(error) => return (segments, Some(error)),
            }
            group.clear();
        }
        group_end = if group.is_empty() {
            r.end
        } else {
            group_end.max(r.end)
        };
        group.push(r);
    }
    if !group.is_empty() {
        match group_segments(tile, addresses, &contents, &group) {
            Ok(group_segments) => segments.extend(group_segments),
            Err(error) => return (segments, Some(error)),
        }
    }
    (segments, None)
}

/// Tiles whose segments are made at once (in parallel) before they go into the image.
const TILES_PER_BATCH: usize = 64;

/// One segment per distinct address range of every tile's buffers.
pub(super) fn add_buffers(
    builder: &mut ImageBuilder,
    program: &Program,
    addresses: &[Vec<u32>],
) -> Result<(), EmitError> {
    let inputs = piece_buffers(&program.inputs, program.tiles.len());
    let outputs = piece_buffers(&program.outputs, program.tiles.len());
    for batch in program.tiles.chunks(TILES_PER_BATCH) {
        let made: Vec<(u32, Vec<Segment>, Option<EmitError>)> = batch
            .par_iter()
            .map(|tile| {
                let t = tile.tile as usize;
                let (segments, error) = tile_segments(tile, &addresses[t], &inputs[t], &outputs[t]);
                (tile.tile, segments, error)
            })
            .collect();
        for (tile, segments, error) in made {
            for segment in segments {
                match segment.data {
                    Some(bytes) => builder.place_bytes(
                        tile,
                        segment.address,
                        &bytes,
                        segment.category,
                        &segment.name,
                    )?,
                    None => builder.place(
                        tile,
                        segment.address,
                        segment.size,
                        segment.category,
                        &segment.name,
                    )?,
                }
            }
            if let Some(error) = error {
                return Err(error);
            }
        }
    }
    Ok(())
}

fn host_tensor(
    plan: &HostTensorPlan,
    direction: HostDirection,
    addresses: &[Vec<u32>],
) -> Result<HostTensor, EmitError> {
    let fail = |reason: String| EmitError::HostTensor {
        name: plan.name.clone(),
        reason,
    };
    let dtype = Dtype::from_name(&plan.dtype)
        .ok_or_else(|| fail(format!("unknown dtype `{}`", plan.dtype)))?;
    let mut pieces = Vec::with_capacity(plan.pieces.len());
    for piece in plan.pieces.iter().filter(|p| p.bytes > 0) {
        let base = addresses
            .get(piece.tile as usize)
            .and_then(|a| a.get(piece.buffer.0 as usize))
            .ok_or_else(|| {
                fail(format!(
                    "tile {} buffer {} has no address",
                    piece.tile, piece.buffer.0
                ))
            })?;
        pieces.push(HostPiece {
            tile: piece.tile,
            address: base + piece.offset,
            tensor_byte_offset: piece.tensor_offset,
            bytes: piece.bytes,
            element_order: ElementOrder::RowMajor,
        });
    }
    Ok(HostTensor {
        name: plan.name.clone(),
        direction,
        dtype,
        shape: plan.shape.iter().map(|&d| d as u64).collect(),
        pieces,
    })
}

/// The program's inputs and outputs as host tensors.
pub(super) fn add_host_tensors(
    builder: &mut ImageBuilder,
    program: &Program,
    addresses: &[Vec<u32>],
) -> Result<(), EmitError> {
    for plan in &program.inputs {
        builder.add_host_tensor(host_tensor(plan, HostDirection::Input, addresses)?)?;
    }
    for plan in &program.outputs {
        builder.add_host_tensor(host_tensor(plan, HostDirection::Output, addresses)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tile::{BufferCategory, BufferDecl};
    use std::sync::Arc;

    fn buffer(name: &str, bytes: u32, live: (usize, usize), contents: Option<u8>) -> BufferDecl {
        let category = if contents.is_some() {
            BufferCategory::Weights(name.into())
        } else {
            BufferCategory::Tensor(name.into())
        };
        BufferDecl {
            contents: contents.map(|b| Arc::new(vec![b; bytes as usize])),
            ..crate::emit::example::buffer(name, bytes, category, live)
        }
    }

    /// A constant sharing its memory range with an activation placed over it: the host writes
    /// the constant's bytes only (one data segment exactly its size, the rest without data);
    /// an output that straddles the constant's end keeps one segment around both.
    #[test]
    fn the_host_writes_only_contents() {
        let tile = TileProgram {
            tile: 0,
            buffers: vec![
                buffer("weights", 64, (0, 1), Some(7)),
                buffer("activation", 256, (2, 3), None),
            ],
            calls: Vec::new(),
        };
        let (segments, error) = tile_segments(&tile, &[0x1040, 0x1000], &[], &[]);
        assert!(error.is_none());
        let spans: Vec<(u32, u32, bool)> = segments
            .iter()
            .map(|s| (s.address, s.size, s.data.is_some()))
            .collect();
        assert_eq!(
            spans,
            [
                (0x1000, 0x40, false),
                (0x1040, 0x40, true),
                (0x1080, 0x80, false)
            ]
        );
        assert_eq!(segments[1].data.as_deref(), Some(&[7u8; 64][..]));
        // The activation is an output now (read after the run): the constant and the bytes
        // after it stay one segment with it.
        let (segments, error) = tile_segments(&tile, &[0x1040, 0x1000], &[], &[BufferId(1)]);
        assert!(error.is_none());
        let spans: Vec<(u32, u32, bool)> = segments
            .iter()
            .map(|s| (s.address, s.size, s.data.is_some()))
            .collect();
        assert_eq!(spans, [(0x1000, 0x100, true)]);
    }
}
