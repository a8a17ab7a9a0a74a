//! An independent checker of a placement: re-derives every constraint from the program and the
//! target, not from the allocator's state.

use super::{PlaceError, Placement};
use crate::target::Target;
use crate::tile::{BufferId, RegionRequirement, TileProgram};
use rayon::prelude::*;
use tessera_kernels::table::RegionNeed;

fn region_of(target: &Target, address: u32) -> Option<&crate::target::TargetRegion> {
    target
        .regions
        .iter()
        .find(|r| address >= r.start && address < r.end())
}

/// Segments (elements, or element pairs when interleaved) a byte range touches.
fn segments(target: &Target, start: u32, end: u32) -> (u32, u32) {
    let region = region_of(target, start).expect("checked before");
    let segment = region.segment_bytes();
    (
        (start - region.start) / segment + region.start,
        (end - 1 - region.start) / segment + region.start,
    )
}

/// Checks one tile.
pub fn check_tile(
    target: &Target,
    program: &TileProgram,
    addresses: &[u32],
    exchanged: &[bool],
    placement: &Placement,
) -> Result<(), PlaceError> {
    let tile = program.tile;
    let fail = |reason: String| PlaceError::Check { tile, reason };
    let reserved_end =
        placement.reserved.worker_scratch + 6 * placement.reserved.worker_scratch_bytes;
    for (i, buffer) in program.buffers.iter().enumerate() {
        let (start, end) = (addresses[i], addresses[i] + buffer.bytes);
        let Some(region) = region_of(target, start) else {
            return Err(fail(format!(
                "`{}` at {start:#x} is outside tile SRAM",
                buffer.name
            )));
        };
        if end > region.end() {
            return Err(fail(format!(
                "`{}` [{start:#x}, {end:#x}) crosses the end of region {}",
                buffer.name, region.name
            )));
        }
        if start < reserved_end && end > target.sram_base {
            return Err(fail(format!(
                "`{}` at {start:#x} overlaps code or worker scratch (ends {reserved_end:#x})",
                buffer.name
            )));
        }
        let root = super::root(program, BufferId(i as u32)).0 as usize;
        if let Some(fetch_end) = placement.reserved.fetch_end(region) {
            let below = end.min(fetch_end);
            if exchanged.get(root).copied().unwrap_or(false)
                && below > start.max(placement.reserved.program_start)
            {
                return Err(fail(format!(
                    "`{}` [{start:#x}, {end:#x}) is exchanged but shares a memory element with the supervisor program's fetch (up to {fetch_end:#x}): a send from it, or a word received into it, conflicts with the fetch",
                    buffer.name
                )));
            }
        }
        if start % buffer.align.max(1) != 0 {
            return Err(fail(format!(
                "`{}` at {start:#x} is not {}-byte aligned",
                buffer.name, buffer.align
            )));
        }
        let interleaved = region.interleave > 1;
        let wrong_region = match buffer.region {
            RegionRequirement::Standard => interleaved.then_some("standard"),
            RegionRequirement::Interleaved => (!interleaved).then_some("interleaved"),
            RegionRequirement::Any => None,
        };
        if let Some(wanted) = wrong_region {
            return Err(fail(format!(
                "`{}` must be in the {wanted} region",
                buffer.name
            )));
        }
        if let Some(parent) = buffer.alias_of {
            if addresses[parent.0 as usize] + buffer.alias_offset != start {
                return Err(fail(format!(
                    "`{}` aliases `{}` but is at another address",
                    buffer.name,
                    program.buffer(parent).name
                )));
            }
        }
    }
    // No two live buffers share bytes unless one aliases the other.
    let mut spans: Vec<(u32, u32, usize)> = program
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (addresses[i], addresses[i] + b.bytes, i))
        .collect();
    spans.sort();
    for (a, &(start_a, end_a, i)) in spans.iter().enumerate() {
        for &(start_b, _, j) in &spans[a + 1..] {
            if start_b >= end_a {
                break;
            }
            let (bi, bj) = (&program.buffers[i], &program.buffers[j]);
            let live = bi.live.0 <= bj.live.1 && bj.live.0 <= bi.live.1;
            let aliased = super::root(program, BufferId(i as u32))
                == super::root(program, BufferId(j as u32));
            if live && !aliased && start_a < end_a {
                return Err(fail(format!(
                    "`{}` and `{}` overlap at {start_b:#x} while both live",
                    bi.name, bj.name
                )));
            }
        }
    }
    // Every kernel call's memory requirements.
    for (step, calls) in program.calls.iter().enumerate() {
        for call in calls {
            for (k, case_buffer) in call.spec.operands.iter().enumerate() {
                let (id, offset) = call.bindings[k];
                let buffer = program.buffer(id);
                let start = addresses[id.0 as usize] + offset;
                let end = start + case_buffer.bytes;
                if offset + case_buffer.bytes > buffer.bytes {
                    return Err(fail(format!("step {step} `{}`: `{}` needs {} bytes at offset {offset} of `{}` ({} bytes)", call.name(), case_buffer.name, case_buffer.bytes, buffer.name, buffer.bytes)));
                }
                if !(buffer.live.0 <= step && step <= buffer.live.1) {
                    return Err(fail(format!(
                        "step {step} `{}` uses `{}` outside its life {:?}",
                        call.name(),
                        buffer.name,
                        buffer.live
                    )));
                }
                let interleaved = region_of(target, start)
                    .map(|r| r.interleave > 1)
                    .unwrap_or(false);
                if case_buffer.region == RegionNeed::Standard && interleaved {
                    return Err(fail(format!(
                        "step {step} `{}`: `{}` must be in standard memory",
                        call.name(),
                        case_buffer.name
                    )));
                }
                if case_buffer.region == RegionNeed::Interleaved && !interleaved {
                    return Err(fail(format!(
                        "step {step} `{}`: `{}` must be in interleaved memory",
                        call.name(),
                        case_buffer.name
                    )));
                }
                if case_buffer.bytes > 0 && !start.is_multiple_of(case_buffer.align.max(1)) {
                    return Err(fail(format!(
                        "step {step} `{}`: `{}` at {start:#x} is not {}-aligned",
                        call.name(),
                        case_buffer.name,
                        case_buffer.align
                    )));
                }
                for (l, other) in call.spec.operands.iter().enumerate().skip(k + 1) {
                    let (Some(slot_a), Some(slot_b)) = (case_buffer.slot, other.slot) else {
                        continue;
                    };
                    if slot_a == slot_b || case_buffer.bytes == 0 || other.bytes == 0 {
                        continue;
                    }
                    let (oid, ooffset) = call.bindings[l];
                    let ostart = addresses[oid.0 as usize] + ooffset;
                    let (a0, a1) = segments(target, start, end);
                    let (b0, b1) = segments(target, ostart, ostart + other.bytes);
                    if a0 <= b1 && b0 <= a1 {
                        return Err(fail(format!(
                            "step {step} `{}`: `{}` and `{}` must be in different memory elements",
                            call.name(),
                            case_buffer.name,
                            other.name
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks every tile (in parallel; a failure is that of the lowest failing tile).
pub fn check(
    target: &Target,
    tiles: &[TileProgram],
    phases: &[Vec<crate::tile::SymbolicTransfer>],
    placement: &Placement,
) -> Result<(), PlaceError> {
    let exchanged = super::exchanged(tiles, phases);
    let checked: Vec<Result<(), PlaceError>> = tiles
        .par_iter()
        .zip(&placement.addresses)
        .zip(&exchanged)
        .map(|((program, addresses), exchanged)| {
            check_tile(target, program, addresses, exchanged, placement)
        })
        .collect();
    checked.into_iter().collect()
}
