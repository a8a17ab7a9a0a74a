//! The compiler-facing constructor of `copy_runs`: validation with typed errors, table
//! rewrites that keep the semantics (coalescing, balancing), and the choice of loop.

use super::cost::estimate;
use super::table::{CopyRunsSpec, Granule, Run, RunSource, Table};
use super::{make_case, Place, ANYWHERE, MAX_GRANULES, NAME, PACE, STRIDED, UNIFORM};
use crate::case::Case;
use crate::error::ParamError;
use crate::split::worker_split;

/// Checks a spec against the ABI (see the assembly header); returns the granule in bytes.
pub(super) fn validate(spec: &CopyRunsSpec) -> Result<u32, ParamError> {
    let kernel = NAME;
    ParamError::check_at_least_one(kernel, "the number of runs R", spec.runs.len() as u64)?;
    ParamError::check_at_least_one(
        kernel,
        "the number of outer iterations O",
        spec.outer.into(),
    )?;
    let g = spec.granule.bytes();
    let aligned = |what: String, value: u32| ParamError::check_aligned(kernel, what, value, g);
    aligned("src_stride".into(), spec.src_stride)?;
    aligned("dst_stride".into(), spec.dst_stride)?;
    for (i, run) in spec.runs.iter().enumerate() {
        if let RunSource::Offset(offset) = run.src {
            aligned(format!("run {i} src offset"), offset)?;
            if offset >= 1 << 31 {
                return Err(ParamError::Length {
                    kernel,
                    what: format!("run {i} src offset"),
                    value: offset.into(),
                    min: 0,
                    max: (1 << 31) - 1,
                });
            }
        }
        aligned(format!("run {i} dst offset"), run.dst)?;
        aligned(format!("run {i} bytes"), run.bytes)?;
        let max = u64::from(MAX_GRANULES * g);
        if run.bytes < g || u64::from(run.bytes) > max {
            return Err(ParamError::Length {
                kernel,
                what: format!("run {i} bytes"),
                value: run.bytes.into(),
                min: g.into(),
                max,
            });
        }
    }
    crate::movement::items::check_items(kernel, spec.outer, spec.runs.len())?;
    let table = Table {
        runs: spec.runs.clone(),
        outer: spec.outer,
        src_stride: spec.src_stride,
        dst_stride: spec.dst_stride,
        flags: 0,
    };
    for (buffer, bytes) in [("src", table.src_extent()), ("dst", table.dst_extent())] {
        ParamError::check_fits(kernel, buffer, bytes)?;
    }
    // No two runs (of any outer iterations) write the same dst byte.
    let mut spans: Vec<(u64, u64, u32, usize)> = (0..spec.outer)
        .flat_map(|o| {
            spec.runs.iter().enumerate().map(move |(i, run)| {
                let start = u64::from(o) * u64::from(spec.dst_stride) + u64::from(run.dst);
                (start, start + u64::from(run.bytes), o, i)
            })
        })
        .collect();
    spans.sort_unstable();
    for pair in spans.windows(2) {
        if pair[1].0 < pair[0].1 {
            let name =
                |s: &(u64, u64, u32, usize)| format!("run {} of outer iteration {}", s.3, s.2);
            return Err(ParamError::Overlap {
                kernel,
                first: name(&pair[0]),
                second: name(&pair[1]),
            });
        }
    }
    Ok(g)
}

/// Merges entry r + 1 into entry r when both are contiguous in dst and in src (or both zero
/// runs) and the merged run fits one loop.
pub(super) fn coalesce(runs: &[Run], g: u32) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    for &run in runs {
        if let Some(last) = out.last_mut() {
            let contiguous_src = match (last.src, run.src) {
                (RunSource::Offset(a), RunSource::Offset(b)) => {
                    u64::from(a) + u64::from(last.bytes) == u64::from(b)
                }
                (RunSource::Zeros, RunSource::Zeros) => true,
                (RunSource::Offset(_), RunSource::Zeros)
                | (RunSource::Zeros, RunSource::Offset(_)) => false,
            };
            let fits = u64::from(last.bytes) + u64::from(run.bytes) <= u64::from(MAX_GRANULES * g);
            if contiguous_src
                && u64::from(last.dst) + u64::from(last.bytes) == u64::from(run.dst)
                && fits
            {
                last.bytes += run.bytes;
                continue;
            }
        }
        out.push(run);
    }
    out
}

/// Items below which the constructor cuts runs into pieces so all six workers get work.
const BALANCE_ITEMS: u64 = 24;
/// The smallest pieces the balancing tries, largest first: it keeps the one the estimate says
/// is fastest (a piece's per-run overhead is 7 bundles against 2 a granule; nine rows of 264
/// bytes, a block's own rows into a product's operand, went 1,095 → 945 estimated cycles with
/// pieces of 64 bytes or more, where 256 left them whole).
const MIN_PIECE_BYTES: [u32; 3] = [256, 128, 64];

/// Cuts every run into up to `pieces` parts of whole granules (at least `min_piece` bytes).
pub(super) fn split_runs(runs: &[Run], pieces: u32, g: u32, min_piece: u32) -> Vec<Run> {
    runs.iter()
        .flat_map(|run| {
            let granules = run.bytes / g;
            let k = pieces.min(granules / (min_piece / g).max(1)).max(1);
            let (base, extra) = (granules / k, granules % k);
            let mut at = 0u32;
            (0..k)
                .map(|i| {
                    let bytes = (base + u32::from(i < extra)) * g;
                    let piece = Run {
                        src: match run.src {
                            RunSource::Offset(offset) => RunSource::Offset(offset + at),
                            RunSource::Zeros => RunSource::Zeros,
                        },
                        dst: run.dst + at,
                        bytes,
                    };
                    at += bytes;
                    piece
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The flags the constructor picks for `runs`: the granule, UNIFORM when it holds, and of the
/// loops the table and `spec.distinct` allow (plain, PACE, STRIDED, STRIDED + PACE) the one
/// the estimate says is fastest.
pub(super) fn choose_flags(runs: &[Run], spec: &CopyRunsSpec) -> u32 {
    let base = spec.granule.flag() | if Table::uniform(runs) { UNIFORM } else { 0 };
    let split = worker_split(spec.outer * runs.len() as u32);
    let paced = spec.distinct && spec.granule == Granule::Word8;
    let mut candidates = vec![base];
    if paced {
        candidates.push(base | PACE);
    }
    if let Some((ds, dd)) = Table::progression(runs) {
        candidates.push(base | STRIDED);
        if paced && Table::pace_strides_fit(ds, dd) {
            candidates.push(base | STRIDED | PACE);
        }
    }
    let cost = |flags: u32| {
        let table = Table {
            runs: runs.to_vec(),
            outer: spec.outer,
            src_stride: spec.src_stride,
            dst_stride: spec.dst_stride,
            flags,
        };
        estimate(&table, &split)
    };
    // The first of the cheapest (ties keep the simpler loop and no element constraint).
    candidates
        .into_iter()
        .fold(None, |best: Option<(u32, u64)>, flags| {
            let c = cost(flags);
            match best {
                Some((_, b)) if b <= c => best,
                _ => Some((flags, c)),
            }
        })
        .map_or(base, |(flags, _)| flags)
}

/// The table a compiler call runs: the spec's runs coalesced, cut for balance, with the flags
/// the estimate picks.
fn compiler_table(spec: &CopyRunsSpec) -> Result<Table, ParamError> {
    let g = validate(spec)?;
    let mut runs = coalesce(&spec.runs, g);
    let items = u64::from(spec.outer) * runs.len() as u64;
    if items < BALANCE_ITEMS {
        let pieces = BALANCE_ITEMS.div_ceil(items) as u32;
        let cost = |runs: &[Run]| {
            let table = Table {
                runs: runs.to_vec(),
                outer: spec.outer,
                src_stride: spec.src_stride,
                dst_stride: spec.dst_stride,
                flags: choose_flags(runs, spec),
            };
            estimate(&table, &worker_split(spec.outer * table.runs.len() as u32))
        };
        // The first of the cheapest (ties keep the larger pieces).
        runs = MIN_PIECE_BYTES
            .iter()
            .map(|&min| split_runs(&runs, pieces, g, min))
            .fold(None, |best: Option<(Vec<Run>, u64)>, cut| {
                let c = cost(&cut);
                match best {
                    Some((_, b)) if b <= c => best,
                    _ => Some((cut, c)),
                }
            })
            .map_or(runs, |(cut, _)| cut);
    }
    let flags = choose_flags(&runs, spec);
    Ok(Table {
        runs,
        outer: spec.outer,
        src_stride: spec.src_stride,
        dst_stride: spec.dst_stride,
        flags,
    })
}

/// The cycle estimate of the compiler call `spec` ([`compiler_case`]'s, with the same table
/// and flags), without building the case's buffers: for comparing ways to cut a copy.
pub fn compiler_estimate(spec: &CopyRunsSpec) -> Result<u64, ParamError> {
    let table = compiler_table(spec)?;
    let split = worker_split(spec.outer * table.runs.len() as u32);
    Ok(estimate(&table, &split))
}

/// The case of a compiler call (a template: src holds zeros, the table buffer holds the encoded
/// runs, which the compiler loads as a constant). The constructor may rewrite the table without
/// changing what is copied: it merges runs contiguous in both src and dst, cuts long runs when
/// there are too few items for six workers, and picks the flags (UNIFORM when it holds; PACE
/// when `spec.distinct` allows it, STRIDED when the runs are a progression, each only when the
/// estimate says it is faster).
///
/// Buffers: 0 `src` (input, up to its last byte read), 1 `dst` (output, up to its last byte
/// written; bytes no run writes are left as they were), 2 `table` (input). With PACE src and
/// dst carry element slots 0 and 1, which the placement must honour; otherwise any region.
/// Errors: an empty table or O = 0, lengths, offsets or strides not multiples of the granule,
/// a run shorter than one granule or longer than 65535, more than 2^20 items, overlapping
/// destination runs, buffers larger than a tile.
pub fn compiler_case(spec: &CopyRunsSpec) -> Result<Case, ParamError> {
    let table = compiler_table(spec)?;
    let src = vec![0; table.src_extent() as usize];
    let place = Place {
        distinct: table.flags & PACE != 0,
        ..ANYWHERE
    };
    Ok(make_case("compiled".into(), &table, src, place))
}
