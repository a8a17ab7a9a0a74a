//! SRAM placement: an address for every buffer of every tile, honouring regions (standard vs
//! interleaved), element separation between buffers a kernel touches in the same cycle,
//! alignment, lifetimes (buffers whose live steps do not overlap may share memory) and explicit
//! aliases. An independent checker (`check.rs`) re-verifies the result.

pub mod check;

use crate::target::{Target, TargetRegion};
use crate::tile::{BufferCategory, BufferId, RegionRequirement, SymbolicTransfer, TileProgram};
use rayon::prelude::*;
use tessera_isa::fabric::FETCH_LOOKAHEAD_BYTES;

/// Why placement failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("E-PLACE-001 insufficient tile SRAM for {bytes} {category} bytes on tile {tile} ({free} free; live then: {live})")]
    Insufficient {
        tile: u32,
        category: String,
        bytes: u32,
        free: u32,
        /// What else is live while the buffer is, by category (largest first).
        live: String,
    },
    #[error("E-PLACE-002 tile {tile} buffer `{name}`: {reason}")]
    Invalid {
        tile: u32,
        name: String,
        reason: String,
    },
    #[error("E-PLACE-003 check: tile {tile}: {reason}")]
    Check { tile: u32, reason: String },
}

/// Fixed areas every tile has before its buffers: code and worker scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reserved {
    /// `[program_start, code_end)` holds the tile's supervisor program, which runs its
    /// exchanges.
    pub program_start: u32,
    /// `[sram_base, code_end)` holds kernel code and the tile's supervisor program.
    pub code_end: u32,
    /// Six worker scratch areas of `worker_scratch_bytes` each, from this address.
    pub worker_scratch: u32,
    pub worker_scratch_bytes: u32,
}

impl Reserved {
    /// The first address past the memory elements the supervisor fetches its program from
    /// (with [`FETCH_LOOKAHEAD_BYTES`]) in `region`, or `None` when the program is not in it.
    /// On the hardware a `send` that reads such an element faults (`TEXCPT_CONFLICT`), and an
    /// incoming write there clashes with the fetch (receive error `CLASH_IFETCH`), so no
    /// buffer an exchange reads or writes lies below it (docs/reference/hardware-ipu-stack.md
    /// §1.6) \[S\].
    pub fn fetch_end(&self, region: &TargetRegion) -> Option<u32> {
        let end = self.code_end.saturating_add(FETCH_LOOKAHEAD_BYTES);
        let inside = self.program_start < region.end() && self.code_end > region.start;
        let segment = region.segment_bytes().max(1);
        inside.then(|| {
            let elements = (end - region.start).div_ceil(segment);
            (region.start + elements * segment).min(region.end())
        })
    }
}

/// Per tile, per buffer: whether an exchange sends from it or receives into it (or into the
/// buffer it aliases), in any phase.
pub fn exchanged(tiles: &[TileProgram], phases: &[Vec<SymbolicTransfer>]) -> Vec<Vec<bool>> {
    let mut exchanged: Vec<Vec<bool>> =
        tiles.iter().map(|t| vec![false; t.buffers.len()]).collect();
    let mut mark = |tile: u32, buffer: BufferId| {
        if let Some(program) = tiles.get(tile as usize) {
            let r = root(program, buffer).0 as usize;
            if let Some(flag) = exchanged[tile as usize].get_mut(r) {
                *flag = true;
            }
        }
    };
    for transfer in phases.iter().flatten() {
        mark(transfer.sender, transfer.source.0);
        for &(tile, buffer, _) in &transfer.deliveries {
            mark(tile, buffer);
        }
    }
    exchanged
}

/// Addresses of every buffer of every tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub addresses: Vec<Vec<u32>>,
    /// Per tile: the highest address in use + 1 in each region (for reports).
    pub reserved: Reserved,
}

pub fn category_name(category: &BufferCategory) -> String {
    match category {
        BufferCategory::Tensor(name) => format!("tensor:{name}"),
        BufferCategory::Weights(name) => format!("weights:{name}"),
        BufferCategory::VertexState => "vertex state".into(),
        BufferCategory::Scratch => "scratch".into(),
        BufferCategory::Constants => "constants".into(),
        BufferCategory::Exchange(name) => format!("exchange buffers:{name}"),
    }
}

/// Follows alias links to the buffer that owns the memory.
pub fn root(program: &TileProgram, id: BufferId) -> BufferId {
    root_offset(program, id).0
}

/// Follows alias links to the buffer that owns the memory, and where `id` starts in it.
pub fn root_offset(program: &TileProgram, mut id: BufferId) -> (BufferId, u32) {
    let (mut steps, mut offset) = (0, 0u32);
    while let Some(next) = program.buffer(id).alias_of {
        offset = offset.saturating_add(program.buffer(id).alias_offset);
        id = next;
        steps += 1;
        if steps > program.buffers.len() {
            break;
        }
    }
    (id, offset)
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// A placement order's sort key of a buffer from its live steps and size (smaller first).
type OrderKey = fn(&(usize, usize), u32) -> (u64, u64);

/// Places one tile's buffers.
pub fn place_tile(
    target: &Target,
    program: &TileProgram,
    exchanged: &[bool],
    reserved: &Reserved,
) -> Result<Vec<u32>, PlaceError> {
    let count = program.buffers.len();
    let mut live = vec![(usize::MAX, 0usize); count];
    let mut size = vec![0u32; count];
    let mut align = vec![8u32; count];
    for (i, buffer) in program.buffers.iter().enumerate() {
        let (r, offset) = root_offset(program, BufferId(i as u32));
        let r = r.0 as usize;
        if buffer.alias_of.is_some() && program.buffer(BufferId(r as u32)).alias_of.is_some() {
            return Err(PlaceError::Invalid {
                tile: program.tile,
                name: buffer.name.clone(),
                reason: "alias cycle".into(),
            });
        }
        live[r] = (live[r].0.min(buffer.live.0), live[r].1.max(buffer.live.1));
        size[r] = size[r].max(offset.saturating_add(buffer.bytes));
        align[r] = align[r].max(buffer.align).max(8);
    }
    // First fit in a few orders, the first that fits wins (all deterministic: ties by id).
    // Long-lived first, then large first, packs most tiles; when it leaves holes too small for
    // a late buffer, large-first or start-order first fit often does not.
    let roots: Vec<usize> = (0..count)
        .filter(|&i| program.buffers[i].alias_of.is_none())
        .collect();
    let orders: [OrderKey; 3] = [
        |l, s| (u64::MAX - (l.1 - l.0) as u64, u64::MAX - s as u64),
        |l, s| (u64::MAX - s as u64, u64::MAX - (l.1 - l.0) as u64),
        |l, s| (l.0 as u64, u64::MAX - s as u64),
    ];
    let mut first_error = None;
    for key in orders {
        let mut order = roots.clone();
        order.sort_by_key(|&i| (key(&live[i], size[i]), i));
        match place_in_order(
            target, program, exchanged, reserved, &live, &size, &align, &order,
        ) {
            Ok(addresses) => return Ok(addresses),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.expect("at least one order was tried"))
}

/// First-fit placement of a tile's root buffers in `order`; aliases take their root's address.
/// A buffer an exchange touches (`exchanged`) stays off the program's fetch elements
/// ([`Reserved::fetch_end`]).
#[expect(
    clippy::too_many_arguments,
    reason = "the tile, its buffers' facts and the order"
)]
fn place_in_order(
    target: &Target,
    program: &TileProgram,
    exchanged: &[bool],
    reserved: &Reserved,
    live: &[(usize, usize)],
    size: &[u32],
    align: &[u32],
    order: &[usize],
) -> Result<Vec<u32>, PlaceError> {
    let count = program.buffers.len();
    let mut addresses = vec![u32::MAX; count];
    let mut placed: Vec<usize> = Vec::new();
    for &i in order {
        let buffer = &program.buffers[i];
        let regions: Vec<&TargetRegion> = match buffer.region {
            RegionRequirement::Standard => target.region(false).into_iter().collect(),
            RegionRequirement::Interleaved => target.region(true).into_iter().collect(),
            RegionRequirement::Any => target
                .region(false)
                .into_iter()
                .chain(target.region(true))
                .collect(),
        };
        let mut chosen = None;
        let mut free_seen = 0;
        for region in regions {
            let start = if region.interleave == 1 {
                reserved.worker_scratch + 6 * reserved.worker_scratch_bytes
            } else {
                region.start
            };
            let mut start = start.max(region.start);
            if exchanged.get(i).copied().unwrap_or(false) {
                start = start.max(reserved.fetch_end(region).unwrap_or(region.start));
            }
            let segment = region.segment_bytes();
            let mut forbidden: Vec<(u32, u32)> = placed
                .iter()
                .filter(|&&j| overlaps(live[i], live[j]))
                .map(|&j| {
                    let (a, b) = (addresses[j], addresses[j] + size[j]);
                    let other_slot = program.buffers[j].slot;
                    if buffer.slot.is_some() && other_slot.is_some() && other_slot != buffer.slot {
                        // A different slot: keep out of its whole memory elements.
                        (a / segment * segment, b.div_ceil(segment) * segment)
                    } else {
                        (a, b)
                    }
                })
                .filter(|&(a, b)| b > region.start && a < region.end())
                .collect();
            forbidden.sort();
            let mut at = start.div_ceil(align[i]) * align[i];
            let mut used = 0u32;
            for &(a, b) in &forbidden {
                if at + size[i] <= a {
                    break;
                }
                if b > at {
                    used += b.min(region.end()) - a.max(at);
                    at = b.div_ceil(align[i]) * align[i];
                }
            }
            free_seen = free_seen.max(region.end().saturating_sub(start).saturating_sub(used));
            if at + size[i] <= region.end() {
                chosen = Some(at);
                break;
            }
        }
        let Some(address) = chosen else {
            let mut by: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
            // Constants (kernel tables) also by the op whose calls carry them, the largest
            // first: they are what a plan's copies cost beyond their buffers.
            let mut constants: std::collections::BTreeMap<&str, u64> = Default::default();
            for &j in placed.iter().filter(|&&j| overlaps(live[i], live[j])) {
                // Weights are summed over all layers and names; other categories by name.
                let buffer = &program.buffers[j];
                let name = match &buffer.category {
                    BufferCategory::Weights(_) => "weights".to_string(),
                    BufferCategory::Constants => {
                        let op = buffer.name.rsplit_once('.').map_or("", |(op, _)| op);
                        *constants.entry(op).or_default() += size[j] as u64;
                        "constants".to_string()
                    }
                    category @ (BufferCategory::Tensor(_)
                    | BufferCategory::VertexState
                    | BufferCategory::Scratch
                    | BufferCategory::Exchange(_)) => category_name(category),
                };
                *by.entry(name).or_default() += size[j] as u64;
            }
            let mut list: Vec<(String, u64)> = by.into_iter().collect();
            list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let mut constants: Vec<(&str, u64)> = constants.into_iter().collect();
            constants.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let live = list
                .iter()
                .take(8)
                .map(|(n, b)| {
                    let mut item = format!("{n} {}K", b / 1024);
                    if n == "constants" && !constants.is_empty() {
                        let ops: Vec<String> = constants
                            .iter()
                            .take(3)
                            .map(|(op, b)| format!("{op} {}K", b / 1024))
                            .collect();
                        item += &format!(" ({})", ops.join(", "));
                    }
                    item
                })
                .collect::<Vec<_>>()
                .join(", ");
            return Err(PlaceError::Insufficient {
                tile: program.tile,
                category: category_name(&buffer.category),
                bytes: size[i],
                free: free_seen,
                live,
            });
        };
        addresses[i] = address;
        placed.push(i);
    }
    for i in 0..count {
        if program.buffers[i].alias_of.is_some() {
            let (r, offset) = root_offset(program, BufferId(i as u32));
            addresses[i] = addresses[r.0 as usize] + offset;
        }
    }
    Ok(addresses)
}

/// Places every tile (in parallel; a failure is that of the lowest failing tile).
pub fn place(
    target: &Target,
    tiles: &[TileProgram],
    phases: &[Vec<SymbolicTransfer>],
    reserved: Reserved,
) -> Result<Placement, PlaceError> {
    let exchanged = exchanged(tiles, phases);
    let placed: Vec<Result<Vec<u32>, PlaceError>> = tiles
        .par_iter()
        .zip(&exchanged)
        .map(|(t, exchanged)| place_tile(target, t, exchanged, &reserved))
        .collect();
    let addresses = placed.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(Placement {
        addresses,
        reserved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tile::BufferDecl;

    /// Four buffers that long-lived-first first fit fragments (a 1-unit buffer lands where the
    /// 6-unit one must go) but large-first places: the fallback order finds it, and the checker
    /// accepts the result.
    #[test]
    fn a_second_order_places_what_the_first_fragments() {
        let target = Target::test_small();
        let region = target.region(false).unwrap();
        let reserved = Reserved {
            program_start: region.start,
            code_end: region.start,
            worker_scratch: region.start,
            worker_scratch_bytes: 64,
        };
        let start = reserved.worker_scratch + 6 * reserved.worker_scratch_bytes;
        let unit = (region.end() - start) / 8 / 8 * 8;
        let buffer = |name: &str, live: (usize, usize), units: u32| BufferDecl {
            name: name.into(),
            bytes: units * unit,
            align: 8,
            region: RegionRequirement::Standard,
            slot: None,
            category: BufferCategory::Scratch,
            live,
            alias_of: None,
            alias_offset: 0,
            contents: None,
        };
        let program = TileProgram {
            tile: 0,
            buffers: vec![
                buffer("six", (2, 2), 6),
                buffer("five", (0, 1), 5),
                buffer("late five", (3, 3), 5),
                buffer("one", (1, 2), 1),
            ],
            calls: vec![Vec::new(); 4],
        };
        let addresses = place_tile(&target, &program, &[false; 4], &reserved).unwrap();
        // No two buffers live at once share a byte.
        for i in 0..4 {
            for j in i + 1..4 {
                let (a, b) = (&program.buffers[i], &program.buffers[j]);
                if overlaps(a.live, b.live) {
                    let (x, y) = (addresses[i], addresses[j]);
                    assert!(
                        x + a.bytes <= y || y + b.bytes <= x,
                        "{} and {}",
                        a.name,
                        b.name
                    );
                }
                assert!(addresses[i] + program.buffers[i].bytes <= region.end());
            }
        }
    }
}
