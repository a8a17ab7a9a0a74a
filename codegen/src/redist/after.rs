//! A movement's destination-side copies as each tile runs them: one table per tile. A tile that
//! copies both from its own source block and from staging first copies the source block's
//! bytes (whole words) behind the staged covers, so one table reads both. The lowering emits
//! these copies and the planner sizes their tables from the same lists.

use super::movement::{Buf, Movement, Run};
use std::collections::{BTreeMap, HashMap};

/// Where a tile's source-block bytes go behind its staged covers: staging offset `base`,
/// source bytes `lo..hi` (word aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Behind {
    pub base: u32,
    pub lo: u32,
    pub hi: u32,
}

/// One tile's destination-side copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileCopy {
    pub tile: u32,
    /// The buffer every run reads (`Buf::Dest` for zero runs only). With [`TileCopy::behind`]
    /// it is the staging buffer, its source-block bytes copied in first.
    pub from: Buf,
    pub behind: Option<Behind>,
    /// The runs, by destination offset.
    pub runs: Vec<Run>,
}

/// For every tile copying from both its source block and staging: where the source bytes go.
pub fn behind_covers(movement: &Movement) -> HashMap<u32, Behind> {
    // Per tile: (copies from source, copies from staging, lowest and highest source byte).
    let mut from: BTreeMap<u32, (bool, bool, u32, u32)> = BTreeMap::new();
    for c in &movement.after {
        let e = from.entry(c.tile).or_insert((false, false, u32::MAX, 0));
        match c.from {
            Buf::Source => {
                e.0 = true;
                for r in &c.runs {
                    if let Some(s) = r.src {
                        e.2 = e.2.min(s / 4 * 4);
                        e.3 = e.3.max((s + r.bytes).div_ceil(4) * 4);
                    }
                }
            }
            Buf::Staging => e.1 = true,
            Buf::Dest | Buf::Send => {}
        }
    }
    let mut both = HashMap::new();
    for (t, (local, staged, lo, hi)) in from {
        if local && staged && lo < hi {
            let base = movement
                .staging_bytes
                .get(&t)
                .copied()
                .unwrap_or(0)
                .div_ceil(8)
                * 8;
            both.insert(t, Behind { base, lo, hi });
        }
    }
    both
}

/// Every tile's destination-side copy, by tile. `Err(tile)`: a tile copies from two buffers
/// with no room to put one behind the other.
pub fn tile_copies(
    movement: &Movement,
    behind: &HashMap<u32, Behind>,
) -> Result<Vec<TileCopy>, u32> {
    let mut by_tile: BTreeMap<u32, Vec<&super::LocalCopy>> = BTreeMap::new();
    for c in &movement.after {
        by_tile.entry(c.tile).or_default().push(c);
    }
    let mut out = Vec::with_capacity(by_tile.len());
    for (tile, list) in by_tile {
        let sources: Vec<Buf> = list
            .iter()
            .map(|c| c.from)
            .filter(|b| *b != Buf::Dest)
            .collect();
        let mut runs: Vec<Run>;
        let (from, at) = if sources.len() <= 1 {
            runs = list.iter().flat_map(|c| c.runs.iter().copied()).collect();
            (sources.first().copied().unwrap_or(Buf::Dest), None)
        } else {
            let b = *behind.get(&tile).ok_or(tile)?;
            runs = Vec::new();
            for c in &list {
                for r in &c.runs {
                    runs.push(match c.from {
                        Buf::Source => Run {
                            src: r.src.map(|s| b.base + (s - b.lo)),
                            ..*r
                        },
                        Buf::Staging | Buf::Dest | Buf::Send => *r,
                    });
                }
            }
            (Buf::Staging, Some(b))
        };
        runs.sort_by_key(|r| r.dst);
        out.push(TileCopy {
            tile,
            from,
            behind: at,
            runs,
        });
    }
    Ok(out)
}
