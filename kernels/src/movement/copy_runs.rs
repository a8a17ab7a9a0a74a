//! `copy_runs`: the compiler's general local data movement. A table of R runs (src offset, dst
//! offset, bytes) is applied O times with outer strides: rows → AMP panels, padding (zero runs),
//! column slices, head-major → row-major, any reorder of 4- or 8-byte granules.

use super::items::{segments, MAX_ITEMS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::elementwise::common::worker_cycles;
use crate::error::{ParamError, MAX_BUFFER_BYTES};
use crate::rng::Rng;
use crate::split::{split_words, worker_split, WORKERS};
use crate::{EntryKind, Kernel};

pub struct CopyRuns;

const NAME: &str = "copy_runs";

const V_R: usize = 3;
const V_O: usize = 4;
const V_SSTRIDE: usize = 5;
const V_DSTRIDE: usize = 6;
const V_FLAGS: usize = 7;
const V_SPLIT: usize = 8;

/// Flag bit 0: 8-byte mode.
pub const W8: u32 = 1;
/// Flag bit 1 (8-byte mode only): src and dst are in different memory elements, so the kernel
/// may load and store in one bundle (`ldst64pace`).
pub const PACE: u32 = 2;
/// Flag bit 2: every entry has entry 0's length and none is a zero run.
pub const UNIFORM: u32 = 4;
/// Flag bit 3: R >= 2 and the entries are an arithmetic progression (entry r = entry 0 +
/// r·(entry 1 − entry 0)) of entry 0's length with no zero runs; the kernel then moves a
/// segment column by column (granule j of every run in one `rpt`). With [`PACE`] the two
/// strides must be within ±511 granules.
pub const STRIDED: u32 = 8;

/// Largest |stride| in 8-byte atoms of a PACE strided loop (a 10-bit two's-complement field).
const PACE_STRIDE_ATOMS: i64 = 511;

/// The source offset word of a zero run.
pub const ZERO_RUN: u32 = 0xFFFF_FFFF;

/// Longest run, in granules (the 16-bit `rpt` count).
pub const MAX_GRANULES: u32 = 0xFFFF;

/// Where a run's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunSource {
    /// `bytes` bytes from `src + o·src_stride + offset`.
    Offset(u32),
    /// `bytes` zero bytes.
    Zeros,
}

/// One table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    pub src: RunSource,
    /// Byte offset in dst (plus o·dst_stride).
    pub dst: u32,
    pub bytes: u32,
}

impl Run {
    pub fn copy(src: u32, dst: u32, bytes: u32) -> Run {
        Run {
            src: RunSource::Offset(src),
            dst,
            bytes,
        }
    }

    pub fn zeros(dst: u32, bytes: u32) -> Run {
        Run {
            src: RunSource::Zeros,
            dst,
            bytes,
        }
    }

    fn src_word(self) -> u32 {
        match self.src {
            RunSource::Offset(offset) => offset,
            RunSource::Zeros => ZERO_RUN,
        }
    }
}

/// The granule every address, stride and length is a multiple of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Granule {
    /// 4-byte mode: `ld32`/`st32`, 2 bundles per 4 bytes.
    Word4,
    /// 8-byte mode: `ld64`/`st64`, 2 bundles per 8 bytes (1 with [`PACE`]).
    Word8,
}

impl Granule {
    pub fn bytes(self) -> u32 {
        match self {
            Granule::Word4 => 4,
            Granule::Word8 => 8,
        }
    }

    fn flag(self) -> u32 {
        match self {
            Granule::Word4 => 0,
            Granule::Word8 => W8,
        }
    }
}

/// What a compiler call moves: for every o < `outer` and every run r, `runs[r].bytes` bytes from
/// `src + o·src_stride + runs[r].src` (or zeros) to `dst + o·dst_stride + runs[r].dst`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CopyRunsSpec {
    pub runs: Vec<Run>,
    pub outer: u32,
    pub src_stride: u32,
    pub dst_stride: u32,
    pub granule: Granule,
    /// The caller will place src and dst in different memory elements (the case then gives
    /// them element slots 0 and 1): lets the kernel use the one-bundle-per-8-bytes loop when
    /// that is faster for this table.
    pub distinct: bool,
}

/// The table and settings one invocation runs (what the vertex and the table buffer hold).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Table {
    runs: Vec<Run>,
    outer: u32,
    src_stride: u32,
    dst_stride: u32,
    flags: u32,
}

impl Table {
    fn granule(&self) -> u32 {
        if self.flags & W8 != 0 {
            8
        } else {
            4
        }
    }

    fn items(&self) -> u32 {
        self.outer * self.runs.len() as u32
    }

    /// Bytes of src the runs read (0 if every run is a zero run).
    fn src_extent(&self) -> u64 {
        self.runs
            .iter()
            .filter_map(|run| match run.src {
                RunSource::Offset(offset) => Some(
                    u64::from(self.outer - 1) * u64::from(self.src_stride)
                        + u64::from(offset)
                        + u64::from(run.bytes),
                ),
                RunSource::Zeros => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Bytes of dst up to the last byte written.
    fn dst_extent(&self) -> u64 {
        self.runs
            .iter()
            .map(|run| {
                u64::from(self.outer - 1) * u64::from(self.dst_stride)
                    + u64::from(run.dst)
                    + u64::from(run.bytes)
            })
            .max()
            .unwrap_or(0)
    }

    /// The (src, dst) byte strides when the runs are an arithmetic progression the STRIDED
    /// loops can run (R >= 2, one length, no zero runs).
    fn progression(runs: &[Run]) -> Option<(i64, i64)> {
        if runs.len() < 2 || !Table::uniform(runs) {
            return None;
        }
        let offsets = |run: &Run| match run.src {
            RunSource::Offset(offset) => (i64::from(offset), i64::from(run.dst)),
            RunSource::Zeros => (-1, -1),
        };
        let (s0, d0) = offsets(&runs[0]);
        let (s1, d1) = offsets(&runs[1]);
        let (ds, dd) = (s1 - s0, d1 - d0);
        runs.iter()
            .enumerate()
            .all(|(r, run)| offsets(run) == (s0 + r as i64 * ds, d0 + r as i64 * dd))
            .then_some((ds, dd))
    }

    /// Whether the PACE strided loop can take these strides (bytes).
    fn pace_strides_fit(ds: i64, dd: i64) -> bool {
        (-PACE_STRIDE_ATOMS * 8..=PACE_STRIDE_ATOMS * 8).contains(&ds)
            && (-PACE_STRIDE_ATOMS * 8..=PACE_STRIDE_ATOMS * 8).contains(&dd)
    }

    fn uniform(runs: &[Run]) -> bool {
        runs.iter()
            .all(|r| r.bytes == runs[0].bytes && r.src != RunSource::Zeros)
    }

    fn encode(&self) -> Vec<u8> {
        let words: Vec<u32> = self
            .runs
            .iter()
            .flat_map(|run| [run.src_word(), run.dst, run.bytes])
            .collect();
        bytes::from_u32(&words)
    }
}

/// The specification: dst after the copy (bytes no run writes are 0; the checker's cases cover
/// dst completely).
pub fn copy_runs_reference(
    runs: &[Run],
    outer: u32,
    src_stride: u32,
    dst_stride: u32,
    src: &[u8],
    dst_len: usize,
) -> Vec<u8> {
    let mut out = vec![0u8; dst_len];
    for o in 0..outer as usize {
        for run in runs {
            let to = o * dst_stride as usize + run.dst as usize;
            let n = run.bytes as usize;
            match run.src {
                RunSource::Offset(offset) => {
                    let from = o * src_stride as usize + offset as usize;
                    out[to..to + n].copy_from_slice(&src[from..from + n]);
                }
                RunSource::Zeros => out[to..to + n].fill(0),
            }
        }
    }
    out
}

/// Buffer placement of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    src: Region,
    dst: Region,
    table: Region,
    /// src and dst in element slots 0 and 1 (needed by [`PACE`]).
    distinct: bool,
}

const ANYWHERE: Place = Place {
    src: Region::Standard,
    dst: Region::Standard,
    table: Region::Standard,
    distinct: false,
};

fn make_case(name: String, table: &Table, src: Vec<u8>, place: Place) -> Case {
    let slot = |s: u8| place.distinct.then_some(s);
    let mut vertex = vec![
        VertexWord::Address {
            buffer: 0,
            offset: 0,
        },
        VertexWord::Address {
            buffer: 1,
            offset: 0,
        },
        VertexWord::Address {
            buffer: 2,
            offset: 0,
        },
        VertexWord::Value(table.runs.len() as u32),
        VertexWord::Value(table.outer),
        VertexWord::Value(table.src_stride),
        VertexWord::Value(table.dst_stride),
        VertexWord::Value(table.flags),
    ];
    vertex.extend(split_words(table.items()));
    let region = |r: Region| match r {
        Region::Standard => "S",
        Region::Interleaved => "I",
    };
    let mode = match (table.flags & W8 != 0, table.flags & PACE != 0) {
        (true, true) => "w8 pace",
        (true, false) => "w8",
        (false, _) => "w4",
    };
    Case {
        kernel: NAME.into(),
        name: format!(
            "{name} R={} O={} {mode}{} {}{}{}{}",
            table.runs.len(),
            table.outer,
            match (table.flags & STRIDED != 0, table.flags & UNIFORM != 0) {
                (true, _) => " strided",
                (false, true) => " uniform",
                (false, false) => "",
            },
            region(place.src),
            region(place.dst),
            region(place.table),
            if place.distinct { " slots" } else { "" }
        ),
        buffers: vec![
            Buffer::input("src", src, place.src, slot(0)),
            Buffer::output("dst", table.dst_extent() as usize, place.dst, slot(1)),
            Buffer::input("table", table.encode(), place.table, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn table_of(case: &Case) -> Table {
    let words = bytes::to_u32(&case.buffer("table").bytes);
    let runs: Vec<Run> = words
        .chunks_exact(3)
        .map(|w| Run {
            src: if w[0] == ZERO_RUN {
                RunSource::Zeros
            } else {
                RunSource::Offset(w[0])
            },
            dst: w[1],
            bytes: w[2],
        })
        .collect();
    debug_assert_eq!(runs.len(), case.word(V_R) as usize);
    Table {
        runs,
        outer: case.word(V_O),
        src_stride: case.word(V_SSTRIDE),
        dst_stride: case.word(V_DSTRIDE),
        flags: case.word(V_FLAGS),
    }
}

/// Bundles of worker `w`'s share, following the kernel's control flow (counts from the
/// assembly; see its header).
fn worker_bundles(table: &Table, first: u32, count: u32) -> u64 {
    if count == 0 {
        return 7;
    }
    let r_total = table.runs.len() as u32;
    let w8 = table.flags & W8 != 0;
    let pace = w8 && table.flags & PACE != 0;
    let uniform = table.flags & UNIFORM != 0;
    let granules = |run: &Run| u64::from(run.bytes / table.granule());
    let setup = 42;
    if table.flags & STRIDED != 0 {
        let n = granules(&table.runs[0]);
        let (init, go, per_column) = match pace {
            true => (26, 3, 6),
            false if w8 => (24, 2, 6),
            false => (26, 2, 6),
        };
        let mut total = setup + init;
        for (i, seg) in segments(first, count, r_total).iter().enumerate() {
            let len = u64::from(seg.len);
            total += if i == 0 { go } else { 8 + go };
            total += n * (per_column + if pace { len } else { 2 * len });
            total += 1;
        }
        return total + 1;
    }
    if uniform && r_total == 1 {
        let n = granules(&table.runs[0]);
        let count = u64::from(count);
        return if pace {
            setup + 6 + 6 + count * (6 + n) + 1
        } else {
            setup + 5 + 8 + count * (4 + 2 * n) + 1
        };
    }
    let init = match (uniform, pace) {
        (false, _) => 2,
        (true, false) => 7,
        (true, true) => 8,
    };
    let segs = segments(first, count, r_total);
    let mut total = setup + init;
    for (i, seg) in segs.iter().enumerate() {
        total += if i == 0 { 2 } else { 4 + 2 };
        for run in &table.runs[seg.first_entry as usize..(seg.first_entry + seg.len) as usize] {
            let n = granules(run);
            total += match (uniform, pace, run.src) {
                (false, _, RunSource::Zeros) => 7 + n,
                (false, false, RunSource::Offset(_)) => 7 + 2 * n,
                (false, true, RunSource::Offset(_)) => 12 + n,
                (true, false, _) => 4 + 2 * n,
                (true, true, _) => 8 + n,
            };
        }
        total += 1; // brnz items left
    }
    total + 1
}

fn estimate(table: &Table, split: &[(u32, u32); WORKERS]) -> u64 {
    let mut bundles = [0u64; WORKERS];
    for (b, &(first, count)) in bundles.iter_mut().zip(split) {
        *b = worker_bundles(table, first, count);
    }
    worker_cycles(&bundles)
}

/// The split table of a case's vertex.
fn split_of(case: &Case) -> [(u32, u32); WORKERS] {
    std::array::from_fn(|w| (case.word(V_SPLIT + 2 * w), case.word(V_SPLIT + 2 * w + 1)))
}

/// Checks a spec against the ABI (see the assembly header); returns the granule in bytes.
fn validate(spec: &CopyRunsSpec) -> Result<u32, ParamError> {
    let kernel = NAME;
    if spec.runs.is_empty() {
        return Err(ParamError::Empty {
            kernel,
            what: "the number of runs R",
        });
    }
    if spec.outer == 0 {
        return Err(ParamError::Empty {
            kernel,
            what: "the number of outer iterations O",
        });
    }
    let g = spec.granule.bytes();
    let aligned = |what: String, value: u32| {
        if value.is_multiple_of(g) {
            Ok(())
        } else {
            Err(ParamError::Misaligned {
                kernel,
                what,
                value: value.into(),
                multiple: g,
            })
        }
    };
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
    let items = u64::from(spec.outer) * spec.runs.len() as u64;
    if items > MAX_ITEMS {
        return Err(ParamError::TooManyItems {
            kernel,
            items,
            max: MAX_ITEMS,
        });
    }
    let table = Table {
        runs: spec.runs.clone(),
        outer: spec.outer,
        src_stride: spec.src_stride,
        dst_stride: spec.dst_stride,
        flags: 0,
    };
    for (buffer, bytes) in [("src", table.src_extent()), ("dst", table.dst_extent())] {
        if bytes > MAX_BUFFER_BYTES {
            return Err(ParamError::TooLarge {
                kernel,
                buffer,
                bytes,
            });
        }
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
fn coalesce(runs: &[Run], g: u32) -> Vec<Run> {
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
/// Smallest piece the balancing cuts (its per-run overhead would dominate below this).
const MIN_PIECE_BYTES: u32 = 256;

/// Cuts every run into up to `pieces` parts of whole granules (at least [`MIN_PIECE_BYTES`]).
fn split_runs(runs: &[Run], pieces: u32, g: u32) -> Vec<Run> {
    runs.iter()
        .flat_map(|run| {
            let granules = run.bytes / g;
            let k = pieces.min(granules / (MIN_PIECE_BYTES / g).max(1)).max(1);
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
fn choose_flags(runs: &[Run], spec: &CopyRunsSpec) -> u32 {
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
    let g = validate(spec)?;
    let mut runs = coalesce(&spec.runs, g);
    let items = u64::from(spec.outer) * runs.len() as u64;
    if items < BALANCE_ITEMS {
        let pieces = BALANCE_ITEMS.div_ceil(items) as u32;
        runs = split_runs(&runs, pieces, g);
    }
    let flags = choose_flags(&runs, spec);
    let table = Table {
        runs,
        outer: spec.outer,
        src_stride: spec.src_stride,
        dst_stride: spec.dst_stride,
        flags,
    };
    let src = vec![0; table.src_extent() as usize];
    let place = Place {
        distinct: flags & PACE != 0,
        ..ANYWHERE
    };
    Ok(make_case("compiled".into(), &table, src, place))
}

impl Kernel for CopyRuns {
    fn name(&self) -> &'static str {
        NAME
    }

    fn source(&self) -> &'static str {
        include_str!("../../asm/copy_runs.S")
    }

    fn entry(&self) -> &'static str {
        NAME
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Worker
    }

    fn abi(&self) -> &'static str {
        "vertex: src, dst, table (R x {src offset | 0xFFFFFFFF = zeros, dst offset, bytes}), R, O, \
         src_stride, dst_stride, flags (bit 0 8-byte mode, bit 1 PACE: src and dst in different \
         memory elements, bit 2 UNIFORM: equal lengths, no zero runs, bit 3 STRIDED: the entries \
         are a progression), split[6] (first item, items) \
         over the O*R items o*R + r; scratch 20 bytes; any region"
    }

    fn cases(&self) -> Vec<Case> {
        cases::default_cases()
    }

    fn random_case(&self, seed: u64) -> Case {
        cases::random_case(seed)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        let table = table_of(case);
        vec![copy_runs_reference(
            &table.runs,
            table.outer,
            table.src_stride,
            table.dst_stride,
            &case.buffer("src").bytes,
            case.buffer("dst").len(),
        )]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate(&table_of(case), &split_of(case))
    }
}

/// The checker's cases.
mod cases {
    use super::*;

    const SS: (Region, Region) = (Region::Standard, Region::Standard);
    const II: (Region, Region) = (Region::Interleaved, Region::Interleaved);
    const SI: (Region, Region) = (Region::Standard, Region::Interleaved);
    const IS: (Region, Region) = (Region::Interleaved, Region::Standard);

    fn place(regions: (Region, Region), table: Region, distinct: bool) -> Place {
        Place {
            src: regions.0,
            dst: regions.1,
            table,
            distinct,
        }
    }

    fn random_bytes(rng: &mut Rng, n: u64) -> Vec<u8> {
        (0..n).map(|_| rng.next_u32() as u8).collect()
    }

    /// A case with random source bytes; the flags are the given granule and PACE as asked,
    /// plus UNIFORM when the table is uniform and `uniform` allows it.
    fn case(rng: &mut Rng, name: &str, mut table: Table, place: Place, uniform: bool) -> Case {
        if uniform && Table::uniform(&table.runs) {
            table.flags |= UNIFORM;
        }
        assert!(
            table.flags & PACE == 0 || place.distinct,
            "PACE needs element slots"
        );
        let src = random_bytes(rng, table.src_extent());
        make_case(name.into(), &table, src, place)
    }

    /// The same table with STRIDED (it must be a progression, with PACE within the fields).
    fn strided(rng: &mut Rng, name: &str, mut table: Table, place: Place) -> Case {
        let (ds, dd) = Table::progression(&table.runs).expect("a progression");
        assert!(table.flags & PACE == 0 || Table::pace_strides_fit(ds, dd));
        table.flags |= STRIDED | UNIFORM;
        case(rng, name, table, place, true)
    }

    /// FP8 rows (row stride `stride`) to AMP-left panels: run kb of row m goes to (kb·M + m)·32.
    fn panels(rows: u32, kbs: u32, stride: u32, flags: u32) -> Table {
        Table {
            runs: (0..kbs)
                .map(|kb| Run::copy(32 * kb, 32 * kb * rows, 32))
                .collect(),
            outer: rows,
            src_stride: stride,
            dst_stride: 32,
            flags,
        }
    }

    /// [H][T][D] (element bytes e) to [T][H·D]: O = T, R = H.
    fn heads_to_rows(h: u32, t: u32, d_bytes: u32, flags: u32) -> Table {
        Table {
            runs: (0..h)
                .map(|i| Run::copy(i * t * d_bytes, i * d_bytes, d_bytes))
                .collect(),
            outer: t,
            src_stride: d_bytes,
            dst_stride: h * d_bytes,
            flags,
        }
    }

    /// A column slice: `width` bytes at `col` of every row.
    fn slice(rows: u32, stride: u32, col: u32, width: u32, flags: u32) -> Table {
        Table {
            runs: vec![Run::copy(col, 0, width)],
            outer: rows,
            src_stride: stride,
            dst_stride: width,
            flags,
        }
    }

    /// Rows of `width` bytes padded to `padded` (zeros before and after the data).
    fn padded(rows: u32, width: u32, before: u32, padded: u32, flags: u32) -> Table {
        let mut runs = Vec::new();
        if before > 0 {
            runs.push(Run::zeros(0, before));
        }
        runs.push(Run::copy(0, before, width));
        if padded > before + width {
            runs.push(Run::zeros(before + width, padded - before - width));
        }
        Table {
            runs,
            outer: rows,
            src_stride: width,
            dst_stride: padded,
            flags,
        }
    }

    /// A random table: each outer iteration's dst is `R` runs of random lengths (in granules,
    /// `1..=max_granules`) tiling `dst_stride` bytes in a random order; a run is a zero run with
    /// probability 1/`zero_every` (0: never); src offsets anywhere in a window of the source.
    fn random_table(
        rng: &mut Rng,
        r: u32,
        outer: u32,
        g: u32,
        max_granules: u64,
        zero_every: u64,
        flags: u32,
    ) -> Table {
        let lengths: Vec<u32> = (0..r)
            .map(|_| g * rng.range(1, max_granules) as u32)
            .collect();
        let total: u32 = lengths.iter().sum();
        let mut order: Vec<usize> = (0..r as usize).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.range(0, i as u64) as usize);
        }
        let mut dst = vec![0u32; r as usize];
        let mut at = 0;
        for &i in &order {
            dst[i] = at;
            at += lengths[i];
        }
        let window = total + g * rng.range(0, 16) as u32;
        let runs = (0..r as usize)
            .map(|i| {
                if zero_every > 0 && rng.next_u64().is_multiple_of(zero_every) {
                    Run::zeros(dst[i], lengths[i])
                } else {
                    let start = g * rng.range(0, u64::from((window - lengths[i]) / g)) as u32;
                    Run::copy(start, dst[i], lengths[i])
                }
            })
            .collect();
        Table {
            runs,
            outer,
            src_stride: g * rng.range(0, u64::from(window / g) + 2) as u32,
            dst_stride: total,
            flags,
        }
    }

    pub(super) fn default_cases() -> Vec<Case> {
        let mut rng = Rng::new(0xc0b1);
        let mut cases = Vec::new();
        let r = &mut rng;
        // Rows -> panels, the headline shape first (46 rows x 1152 bytes, 36 runs of 32).
        for (rows, kbs, extra, regions, flags, distinct) in [
            (46u32, 36u32, 0u32, SS, W8, false),
            (46, 36, 0, SI, W8 | PACE, true),
            (46, 36, 0, II, W8 | PACE, true),
            (1, 1, 0, SS, W8, false),
            (5, 3, 8, II, W8, false),
            (7, 2, 16, IS, W8 | PACE, true),
            (38, 4, 0, SS, W8 | PACE, true),
            (13, 5, 24, SI, W8, false),
            (2, 36, 0, II, W8, false),
            (6, 1, 0, SS, W8 | PACE, true),
        ] {
            let t = panels(rows, kbs, kbs * 32 + extra, flags);
            cases.push(case(
                r,
                "panels",
                t.clone(),
                place(regions, Region::Standard, distinct),
                true,
            ));
            if kbs >= 2 {
                cases.push(strided(
                    r,
                    "panels",
                    t.clone(),
                    place(regions, Region::Standard, distinct),
                ));
            }
            if rows * kbs < 100 {
                // The same table without the UNIFORM promise: the general loops.
                cases.push(case(
                    r,
                    "panels",
                    t,
                    place(regions, Region::Interleaved, distinct),
                    false,
                ));
            }
        }
        // Head-major -> row-major (f16 heads of 72, FP8 heads of 72, small heads).
        for (h, t, d, regions, flags, distinct) in [
            (16u32, 5u32, 144u32, SS, W8, false),
            (16, 5, 144, II, W8 | PACE, true),
            (16, 3, 72, IS, W8, false),
            (3, 7, 8, SS, W8 | PACE, true),
            (4, 9, 12, SI, 0, false),
            (2, 1, 4, SS, 0, false),
        ] {
            let tab = heads_to_rows(h, t, d, flags);
            cases.push(case(
                r,
                "heads to rows",
                tab.clone(),
                place(regions, Region::Standard, distinct),
                true,
            ));
            cases.push(case(
                r,
                "heads to rows",
                tab.clone(),
                place(regions, Region::Standard, distinct),
                false,
            ));
            cases.push(strided(
                r,
                "heads to rows",
                tab,
                place(regions, Region::Standard, distinct),
            ));
        }
        // Progressions: reversed (negative strides), broadcast (ds = 0), strides beyond the
        // PACE fields (plain only), 4-byte granules, segments of one run.
        // dst_stride 0: the outer iterations follow each other in dst.
        for (rr, outer, s0, ds, d0, dd, bytes, src_stride, dst_stride, flags, regions) in [
            (
                8u32,
                3u32,
                7 * 48,
                -48i64,
                0u32,
                48i64,
                48u32,
                400u32,
                0u32,
                W8 | PACE,
                SI,
            ),
            (8, 3, 7 * 48, -48, 0, 48, 48, 400, 0, W8, SS),
            (5, 4, 16, 0, 4 * 24, -24, 24, 24, 0, W8 | PACE, II),
            (5, 4, 16, 0, 4 * 24, -24, 24, 24, 0, 0, SS),
            (6, 2, 0, 8192, 0, 16, 16, 8, 0, W8, SS),
            (6, 2, 0, 4088, 0, 16, 16, 8, 0, W8 | PACE, IS),
            (12, 7, 4, 20, 0, 12, 12, 300, 0, 0, II),
            (3, 30, 0, 8, 0, 240, 8, 24, 8, W8 | PACE, SI),
            (3, 30, 0, 8, 0, 240, 8, 24, 8, W8, II),
            (2, 9, 0, 64, 0, 64, 64, 128, 0, W8, SS),
            (40, 2, 0, 8, 0, 16, 8, 320, 8, W8 | PACE, SI),
            (40, 2, 0, 8, 0, 16, 8, 320, 8, 0, SS),
        ] {
            let runs = (0..rr as i64)
                .map(|i| {
                    Run::copy(
                        (i64::from(s0) + i * ds) as u32,
                        (i64::from(d0) + i * dd) as u32,
                        bytes,
                    )
                })
                .collect();
            // dst of outer iteration o starts after the runs of o - 1.
            let span = (0..rr as i64)
                .map(|i| i64::from(d0) + i * dd + i64::from(bytes))
                .max()
                .unwrap_or(0) as u32;
            let tab = Table {
                runs,
                outer,
                src_stride,
                dst_stride: if dst_stride == 0 { span } else { dst_stride },
                flags,
            };
            let distinct = flags & PACE != 0;
            cases.push(strided(
                r,
                "progression",
                tab.clone(),
                place(regions, Region::Standard, distinct),
            ));
            cases.push(case(
                r,
                "progression",
                tab,
                place(regions, Region::Interleaved, distinct),
                true,
            ));
        }
        // Column slices (R = 1): the single-entry loops, and the general ones.
        for (rows, stride, col, width, regions, flags, distinct) in [
            (19u32, 2304u32, 1152u32, 144u32, SS, W8, false),
            (19, 2304, 1152, 144, SI, W8 | PACE, true),
            (1, 64, 8, 8, SS, W8, false),
            (1, 64, 8, 8, II, W8 | PACE, true),
            (7, 100, 12, 36, SS, 0, false),
            (7, 100, 4, 4, IS, 0, false),
            (29, 1152, 0, 1152, II, W8 | PACE, true),
            (3, 48, 16, 24, SS, W8, false),
            (12, 20, 4, 16, SI, 0, false),
        ] {
            let tab = slice(rows, stride, col, width, flags);
            cases.push(case(
                r,
                "column slice",
                tab.clone(),
                place(regions, Region::Standard, distinct),
                true,
            ));
            cases.push(case(
                r,
                "column slice",
                tab,
                place(regions, Region::Standard, distinct),
                false,
            ));
        }
        // Padding: zero runs before and after the data.
        for (rows, width, before, pad, regions, flags, distinct) in [
            (9u32, 144u32, 0u32, 160u32, SS, W8, false),
            (9, 144, 16, 160, II, W8 | PACE, true),
            (5, 80, 8, 96, SI, W8, false),
            (5, 36, 4, 48, SS, 0, false),
            (1, 8, 8, 24, IS, W8 | PACE, true),
            (14, 12, 0, 16, SS, 0, false),
        ] {
            let tab = padded(rows, width, before, pad, flags);
            cases.push(case(
                r,
                "padding",
                tab,
                place(regions, Region::Standard, distinct),
                true,
            ));
        }
        // Pure zero fill.
        for (flags, regions) in [(W8, SS), (0, II), (W8 | PACE, SI)] {
            let tab = Table {
                runs: vec![Run::zeros(0, 40), Run::zeros(40, 8)],
                outer: 11,
                src_stride: 0,
                dst_stride: 48,
                flags,
            };
            let distinct = flags & PACE != 0;
            cases.push(case(
                r,
                "zero fill",
                tab,
                place(regions, Region::Standard, distinct),
                true,
            ));
        }
        // Long runs (one run per item, items fewer than workers, idle workers).
        for (bytes, outer, flags, regions, distinct) in [
            (8192u32, 3u32, W8, SS, false),
            (8192, 3, W8 | PACE, SI, true),
            (4096, 5, 0, II, false),
            (24, 1, W8, SS, false),
            (4, 1, 0, SS, false),
            (8, 2, W8 | PACE, II, true),
        ] {
            let tab = Table {
                runs: vec![Run::copy(0, 0, bytes)],
                outer,
                src_stride: bytes,
                dst_stride: bytes,
                flags,
            };
            cases.push(case(
                r,
                "long runs",
                tab.clone(),
                place(regions, Region::Standard, distinct),
                true,
            ));
            cases.push(case(
                r,
                "long runs",
                tab,
                place(regions, Region::Standard, distinct),
                false,
            ));
        }
        // Random reorders: every mode, with and without zero runs, short and long runs.
        for (i, (rr, outer, g, max_g, zeros, regions, pace)) in [
            (1u32, 17u32, 8u32, 6u64, 0u64, SS, false),
            (5, 1, 8, 3, 3, SS, false),
            (7, 4, 4, 9, 4, II, false),
            (12, 3, 8, 20, 5, SI, true),
            (30, 2, 8, 2, 0, II, true),
            (3, 40, 4, 2, 0, SS, false),
            (9, 9, 8, 40, 3, IS, true),
            (25, 1, 4, 5, 6, SS, false),
            (6, 13, 8, 1, 0, SS, false),
            (6, 13, 8, 1, 0, SI, true),
            (2, 31, 4, 7, 2, II, false),
            (17, 5, 8, 12, 0, II, true),
            (40, 6, 4, 3, 5, SS, false),
            (7, 600, 4, 1, 0, SS, false),
            (1000, 2, 8, 1, 7, SI, true),
        ]
        .into_iter()
        .enumerate()
        {
            let flags = (if g == 8 { W8 } else { 0 }) | if pace { PACE } else { 0 };
            let tab = random_table(r, rr, outer, g, max_g, zeros, flags);
            let table_region = if i % 2 == 0 {
                Region::Standard
            } else {
                Region::Interleaved
            };
            cases.push(case(
                r,
                "random reorder",
                tab.clone(),
                place(regions, table_region, pace),
                true,
            ));
            if Table::uniform(&tab.runs) {
                cases.push(case(
                    r,
                    "random reorder",
                    tab,
                    place(regions, table_region, pace),
                    false,
                ));
            }
        }
        // Compiler cases (coalescing, balancing, the flag choice) with random source data.
        for spec in compiler_specs() {
            let mut c = compiler_case(&spec).expect("a valid spec");
            let n = c.buffers[0].len() as u64;
            c.buffers[0].bytes = random_bytes(r, n);
            c.name = format!("{} {}", c.name, spec_label(&spec));
            cases.push(c);
        }
        cases
    }

    fn spec_label(spec: &CopyRunsSpec) -> String {
        format!(
            "(spec R={} O={}{})",
            spec.runs.len(),
            spec.outer,
            if spec.distinct { " distinct" } else { "" }
        )
    }

    /// Specs as the compiler writes them.
    pub(super) fn compiler_specs() -> Vec<CopyRunsSpec> {
        let to_spec = |t: Table, granule, distinct| CopyRunsSpec {
            runs: t.runs,
            outer: t.outer,
            src_stride: t.src_stride,
            dst_stride: t.dst_stride,
            granule,
            distinct,
        };
        vec![
            to_spec(panels(46, 36, 1152, W8), Granule::Word8, true),
            to_spec(panels(46, 36, 1152, W8), Granule::Word8, false),
            // A contiguous copy written as 36 adjacent runs: coalesced into one, then cut.
            to_spec(
                Table {
                    runs: (0..36).map(|i| Run::copy(32 * i, 32 * i, 32)).collect(),
                    outer: 1,
                    src_stride: 0,
                    dst_stride: 0,
                    flags: 0,
                },
                Granule::Word8,
                true,
            ),
            to_spec(slice(19, 2304, 1152, 144, W8), Granule::Word8, true),
            to_spec(heads_to_rows(16, 6, 144, W8), Granule::Word8, false),
            to_spec(padded(9, 36, 4, 48, 0), Granule::Word4, false),
            CopyRunsSpec {
                runs: vec![Run::copy(0, 0, 20_000)],
                outer: 1,
                src_stride: 0,
                dst_stride: 0,
                granule: Granule::Word4,
                distinct: false,
            },
        ]
    }

    pub(super) fn random_case(seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let r = &mut rng;
        let g = if r.next_u32().is_multiple_of(2) { 8 } else { 4 };
        let pace = g == 8 && r.next_u32().is_multiple_of(2);
        let flags = (if g == 8 { W8 } else { 0 }) | if pace { PACE } else { 0 };
        let rr = r.range(1, 40) as u32;
        let max_g = *r.pick(&[1u64, 2, 4, 16, 64]);
        // At most ~48 KB of dst (and as much src), whatever the shape.
        let max_outer = (48_000 / (u64::from(rr) * max_g * u64::from(g))).clamp(1, 30);
        let outer = r.range(1, max_outer) as u32;
        let zeros = *r.pick(&[0u64, 0, 3, 8]);
        let regions = *r.pick(&[SS, II, SI, IS]);
        if rr >= 2 && r.next_u32().is_multiple_of(3) {
            // A progression: runs of one length L, src stride ds (any sign, or 0), dst either
            // interleaved across the outer iterations (dd = O L) or consecutive (dd = L).
            let bytes = g * r.range(1, max_g) as u32;
            let interleave = r.next_u32().is_multiple_of(2);
            let (dd, dst_stride) = if interleave {
                (outer * bytes, bytes)
            } else {
                (bytes, rr * bytes)
            };
            let ds = i64::from(g) * (r.range(0, 40) as i64 - 20);
            let s0 = if ds < 0 { (-ds) as u32 * (rr - 1) } else { 0 };
            let runs = (0..rr)
                .map(|i| Run::copy((i64::from(s0) + i64::from(i) * ds) as u32, i * dd, bytes))
                .collect();
            let tab = Table {
                runs,
                outer,
                src_stride: g * r.range(0, 64) as u32,
                dst_stride,
                flags,
            };
            let name = format!("random seed={seed} progression");
            let p = place(regions, Region::Standard, pace);
            return if pace && !Table::pace_strides_fit(ds, i64::from(dd)) {
                case(r, &name, tab, p, true)
            } else {
                strided(r, &name, tab, p)
            };
        }
        let tab = random_table(r, rr, outer, g, max_g, zeros, flags);
        let uniform = r.next_u32().is_multiple_of(2);
        case(
            r,
            &format!("random seed={seed}"),
            tab,
            place(regions, Region::Standard, pace),
            uniform,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every dst byte of every default case is written by exactly one run (so the reference is
    /// the whole truth and the poison check sees any missed run).
    #[test]
    fn default_cases_cover_dst_exactly_once() {
        for case in CopyRuns.cases() {
            let table = table_of(&case);
            let mut hits = vec![0u8; case.buffer("dst").len()];
            for o in 0..table.outer {
                for run in &table.runs {
                    let start = (o * table.dst_stride + run.dst) as usize;
                    for h in &mut hits[start..start + run.bytes as usize] {
                        *h += 1;
                    }
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{}", case.name);
        }
        assert!(CopyRuns.cases().len() >= 60);
    }

    #[test]
    fn compiler_cases_copy_what_the_spec_says() {
        let mut rng = Rng::new(3);
        for spec in cases::compiler_specs() {
            let case = compiler_case(&spec).unwrap();
            let table = table_of(&case);
            let src: Vec<u8> = (0..case.buffer("src").len())
                .map(|_| rng.next_u32() as u8)
                .collect();
            let dst_len = case.buffer("dst").len();
            let want = copy_runs_reference(
                &spec.runs,
                spec.outer,
                spec.src_stride,
                spec.dst_stride,
                &src,
                dst_len,
            );
            let got = copy_runs_reference(
                &table.runs,
                table.outer,
                table.src_stride,
                table.dst_stride,
                &src,
                dst_len,
            );
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_constructor_picks_the_fastest_loop() {
        // Long runs, one entry: PACE (the single-entry loop).
        let long = CopyRunsSpec {
            runs: vec![Run::copy(0, 0, 1152)],
            outer: 20,
            src_stride: 2304,
            dst_stride: 1152,
            granule: Granule::Word8,
            distinct: true,
        };
        let case = compiler_case(&long).unwrap();
        assert_eq!(case.word(V_FLAGS), W8 | PACE | UNIFORM);
        assert_eq!(case.buffers[0].element_slot, Some(0));
        // Short runs at irregular places: the plain loops, no element constraint.
        let irregular = CopyRunsSpec {
            runs: [0u32, 40, 16, 96, 64, 200, 128, 304]
                .iter()
                .enumerate()
                .map(|(i, &s)| Run::copy(s, 8 * i as u32, 8))
                .collect(),
            src_stride: 400,
            dst_stride: 64,
            ..long.clone()
        };
        let case = compiler_case(&irregular).unwrap();
        assert_eq!(case.word(V_FLAGS), W8 | UNIFORM);
        assert_eq!(case.buffers[0].element_slot, None);
        // Rows to panels: a progression, column by column with PACE when allowed.
        let panels = CopyRunsSpec {
            runs: (0..36)
                .map(|kb| Run::copy(32 * kb, 32 * 46 * kb, 32))
                .collect(),
            outer: 46,
            src_stride: 1152,
            dst_stride: 32,
            granule: Granule::Word8,
            distinct: true,
        };
        let flags = compiler_case(&panels).unwrap().word(V_FLAGS);
        assert_eq!(flags, W8 | UNIFORM | STRIDED | PACE);
        let flags = compiler_case(&CopyRunsSpec {
            distinct: false,
            ..panels
        })
        .unwrap()
        .word(V_FLAGS);
        assert_eq!(flags, W8 | UNIFORM | STRIDED);
    }

    #[test]
    fn progressions_are_recognised() {
        let runs: Vec<Run> = (0..4).map(|i| Run::copy(100 - 8 * i, 16 * i, 8)).collect();
        assert_eq!(Table::progression(&runs), Some((-8, 16)));
        let mut broken = runs.clone();
        broken[3].dst += 8;
        assert_eq!(Table::progression(&broken), None);
        assert_eq!(Table::progression(&runs[..1]), None);
        assert!(Table::pace_strides_fit(4088, -4088) && !Table::pace_strides_fit(4096, 0));
    }

    #[test]
    fn bad_specs_are_refused_with_ids() {
        let good = CopyRunsSpec {
            runs: vec![Run::copy(0, 0, 16), Run::zeros(16, 8)],
            outer: 4,
            src_stride: 16,
            dst_stride: 24,
            granule: Granule::Word8,
            distinct: false,
        };
        assert!(compiler_case(&good).is_ok());
        let id = |spec: CopyRunsSpec| compiler_case(&spec).unwrap_err().id();
        assert_eq!(
            id(CopyRunsSpec {
                runs: vec![],
                ..good.clone()
            }),
            "E-KERNEL-001"
        );
        assert_eq!(
            id(CopyRunsSpec {
                outer: 0,
                ..good.clone()
            }),
            "E-KERNEL-001"
        );
        assert_eq!(
            id(CopyRunsSpec {
                src_stride: 12,
                ..good.clone()
            }),
            "E-KERNEL-002"
        );
        assert_eq!(
            id(CopyRunsSpec {
                runs: vec![Run::copy(0, 0, 8 * 65_536)],
                ..good.clone()
            }),
            "E-KERNEL-003"
        );
        assert_eq!(
            id(CopyRunsSpec {
                dst_stride: 16,
                ..good.clone()
            }),
            "E-KERNEL-004"
        );
        assert_eq!(
            id(CopyRunsSpec {
                outer: 1 << 20,
                ..good.clone()
            }),
            "E-KERNEL-005"
        );
        assert_eq!(
            id(CopyRunsSpec {
                outer: 100_000,
                dst_stride: 64,
                ..good.clone()
            }),
            "E-KERNEL-006"
        );
    }

    #[test]
    fn reference_moves_bytes_and_zeros() {
        let runs = [Run::copy(4, 0, 4), Run::zeros(4, 4)];
        let src: Vec<u8> = (0..16).collect();
        let out = copy_runs_reference(&runs, 2, 8, 8, &src, 16);
        assert_eq!(
            out,
            vec![4, 5, 6, 7, 0, 0, 0, 0, 12, 13, 14, 15, 0, 0, 0, 0]
        );
    }
}
