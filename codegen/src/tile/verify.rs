//! The tile-level verifier: run after lowering and after every pass in tests.

use super::{Program, StepKind};

/// Why a tile-level program is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TileVerifyError {
    #[error("E-TILE-001 tile {tile}: {reason}")]
    Tile { tile: u32, reason: String },
    #[error("E-TILE-002 step {step}: {reason}")]
    Step { step: usize, reason: String },
}

/// Checks structure: steps agree across tiles, bindings and transfers refer to live buffers
/// of the right size, exchange steps have no calls, host pieces lie inside their buffers. A
/// loop lies within the steps; a buffer live both inside and outside it is live through all of
/// it (the loop runs its steps again); a binding into a layered buffer is in the loop and
/// within one slice, and no transfer or host piece names a layered buffer.
pub fn verify(program: &Program) -> Result<(), TileVerifyError> {
    let steps = program.steps.len();
    if let Some(l) = &program.looped {
        if l.count == 0 || l.first > l.last || l.last >= steps {
            return Err(TileVerifyError::Step {
                step: l.first,
                reason: format!(
                    "a loop over steps {}..={} of {steps}, {} times",
                    l.first, l.last, l.count
                ),
            });
        }
        if l.layered.len() > program.tiles.len() {
            return Err(TileVerifyError::Step {
                step: l.first,
                reason: format!("layered buffers for {} tiles", l.layered.len()),
            });
        }
    }
    let layered =
        |tile: u32, id: super::BufferId| program.looped.as_ref().and_then(|l| l.stride(tile, id));
    for tile in &program.tiles {
        let fail = |reason: String| TileVerifyError::Tile {
            tile: tile.tile,
            reason,
        };
        if tile.calls.len() != steps {
            return Err(fail(format!(
                "{} step call lists for {steps} steps",
                tile.calls.len()
            )));
        }
        for (i, buffer) in tile.buffers.iter().enumerate() {
            if buffer.live.0 > buffer.live.1 || buffer.live.1 >= steps.max(1) {
                return Err(fail(format!(
                    "buffer `{}` has life {:?} outside 0..{steps}",
                    buffer.name, buffer.live
                )));
            }
            if let Some(parent) = buffer.alias_of {
                if parent.0 as usize >= tile.buffers.len() || parent.0 as usize == i {
                    return Err(fail(format!(
                        "buffer `{}` aliases an invalid buffer",
                        buffer.name
                    )));
                }
                if !buffer.alias_offset.is_multiple_of(buffer.align.max(1)) {
                    return Err(fail(format!(
                        "buffer `{}` aliases `{}` at offset {}, not a multiple of its alignment {}",
                        buffer.name,
                        tile.buffer(parent).name,
                        buffer.alias_offset,
                        buffer.align
                    )));
                }
                if tile.buffer(parent).bytes < buffer.alias_offset.saturating_add(buffer.bytes) {
                    return Err(fail(format!(
                        "buffer `{}` is larger than `{}` it aliases",
                        buffer.name,
                        tile.buffer(parent).name
                    )));
                }
            }
            if let Some(l) = &program.looped {
                let (a, b) = buffer.live;
                let inside = a <= l.last && b >= l.first;
                if inside && (a < l.first || b > l.last) && !(a <= l.first && b >= l.last) {
                    return Err(fail(format!(
                        "buffer `{}` has life {:?}: it enters or leaves the loop over steps {}..={} without living through it",
                        buffer.name, buffer.live, l.first, l.last
                    )));
                }
                if let Some(stride) = l.stride(tile.tile, super::BufferId(i as u32)) {
                    if stride == 0
                        || !stride.is_multiple_of(8)
                        || (stride as u64) * (l.count as u64) > buffer.bytes as u64
                    {
                        return Err(fail(format!(
                            "layered buffer `{}` of {} bytes cannot hold {} slices of {stride}",
                            buffer.name, buffer.bytes, l.count
                        )));
                    }
                }
            }
            if let Some(contents) = &buffer.contents {
                if contents.len() > buffer.bytes as usize {
                    return Err(fail(format!(
                        "buffer `{}` has {} bytes of contents for {} bytes",
                        buffer.name,
                        contents.len(),
                        buffer.bytes
                    )));
                }
            }
        }
        for (step, calls) in tile.calls.iter().enumerate() {
            if matches!(program.steps[step], StepKind::Exchange { .. }) && !calls.is_empty() {
                return Err(fail(format!("kernel calls in exchange step {step}")));
            }
            for call in calls {
                if call.bindings.len() != call.spec.operands.len() {
                    return Err(fail(format!(
                        "step {step} `{}`: {} bindings for {} operands",
                        call.name(),
                        call.bindings.len(),
                        call.spec.operands.len()
                    )));
                }
                for (k, &(id, offset)) in call.bindings.iter().enumerate() {
                    let Some(buffer) = tile.buffers.get(id.0 as usize) else {
                        return Err(fail(format!(
                            "step {step} `{}` binds a missing buffer",
                            call.name()
                        )));
                    };
                    if offset as u64 + call.spec.operands[k].bytes as u64 > buffer.bytes as u64 {
                        return Err(fail(format!(
                            "step {step} `{}`: `{}` overruns `{}`",
                            call.name(),
                            call.spec.operands[k].name,
                            buffer.name
                        )));
                    }
                    if let Some(stride) = layered(tile.tile, id) {
                        let in_loop = program
                            .looped
                            .as_ref()
                            .is_some_and(|l| (l.first..=l.last).contains(&step));
                        if !in_loop
                            || offset as u64 + call.spec.operands[k].bytes as u64 > stride as u64
                        {
                            return Err(fail(format!(
                                "step {step} `{}`: `{}` binds layered `{}` outside the loop or across slices",
                                call.name(),
                                call.spec.operands[k].name,
                                buffer.name
                            )));
                        }
                    }
                    if !(buffer.live.0 <= step && step <= buffer.live.1) {
                        return Err(fail(format!(
                            "step {step} `{}` uses `{}` outside its life {:?}",
                            call.name(),
                            buffer.name,
                            buffer.live
                        )));
                    }
                }
            }
        }
    }
    for (step, kind) in program.steps.iter().enumerate() {
        let StepKind::Exchange { phase, .. } = kind else {
            continue;
        };
        let fail = |reason: String| TileVerifyError::Step { step, reason };
        for transfer in program
            .phases
            .get(*phase)
            .ok_or_else(|| fail("missing phase".into()))?
        {
            let bytes = transfer.words * 4;
            let check = |tile: u32,
                         id: super::BufferId,
                         offset: u32|
             -> Result<(), TileVerifyError> {
                let program_tile = program.tiles.get(tile as usize).ok_or_else(|| {
                    fail(format!("`{}`: tile {tile} does not exist", transfer.label))
                })?;
                let buffer = program_tile.buffers.get(id.0 as usize).ok_or_else(|| {
                    fail(format!(
                        "`{}`: missing buffer on tile {tile}",
                        transfer.label
                    ))
                })?;
                if offset + bytes > buffer.bytes || !offset.is_multiple_of(4) {
                    return Err(fail(format!("`{}`: {bytes} bytes at offset {offset} do not fit `{}` ({} bytes) on tile {tile}", transfer.label, buffer.name, buffer.bytes)));
                }
                if layered(tile, id).is_some() {
                    return Err(fail(format!(
                        "`{}`: `{}` on tile {tile} is layered (one slice per iteration)",
                        transfer.label, buffer.name
                    )));
                }
                if !(buffer.live.0 <= step && step <= buffer.live.1) {
                    return Err(fail(format!(
                        "`{}`: `{}` on tile {tile} is not live",
                        transfer.label, buffer.name
                    )));
                }
                Ok(())
            };
            check(transfer.sender, transfer.source.0, transfer.source.1)?;
            for &(tile, id, offset) in &transfer.deliveries {
                check(tile, id, offset)?;
            }
        }
    }
    for tensor in program.inputs.iter().chain(&program.outputs) {
        for piece in &tensor.pieces {
            let Some(buffer) = program
                .tiles
                .get(piece.tile as usize)
                .and_then(|t| t.buffers.get(piece.buffer.0 as usize))
            else {
                return Err(TileVerifyError::Tile {
                    tile: piece.tile,
                    reason: format!("host tensor `{}` names a missing buffer", tensor.name),
                });
            };
            if layered(piece.tile, piece.buffer).is_some() {
                return Err(TileVerifyError::Tile {
                    tile: piece.tile,
                    reason: format!(
                        "host tensor `{}` names layered `{}`",
                        tensor.name, buffer.name
                    ),
                });
            }
            if piece.offset + piece.bytes > buffer.bytes {
                return Err(TileVerifyError::Tile {
                    tile: piece.tile,
                    reason: format!(
                        "host tensor `{}` piece overruns `{}`",
                        tensor.name, buffer.name
                    ),
                });
            }
        }
    }
    Ok(())
}
