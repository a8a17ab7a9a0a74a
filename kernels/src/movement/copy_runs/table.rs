//! The `copy_runs` table: runs, granules, the compiler's spec, the encoded table an invocation
//! runs (with the properties the fast loops need) and the reference written from the spec.

use super::{PACE_STRIDE_ATOMS, W8, ZERO_RUN};
use crate::case::bytes;

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

    /// The runs of one FP8 row of `k_blocks` 32-byte blocks into AMP-left panels of `rows`
    /// rows: block kb of the row goes to kb·rows·32 (with one outer iteration per row, source
    /// stride the row and destination stride 32, the whole rows-to-panels copy).
    pub fn rows_to_panels(rows: u32, k_blocks: u32) -> Vec<Run> {
        (0..k_blocks)
            .map(|kb| Run::copy(32 * kb, 32 * kb * rows, 32))
            .collect()
    }

    pub(super) fn src_word(self) -> u32 {
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

    pub(super) fn flag(self) -> u32 {
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
pub(super) struct Table {
    pub(super) runs: Vec<Run>,
    pub(super) outer: u32,
    pub(super) src_stride: u32,
    pub(super) dst_stride: u32,
    pub(super) flags: u32,
}

impl Table {
    pub(super) fn granule(&self) -> u32 {
        if self.flags & W8 != 0 {
            8
        } else {
            4
        }
    }

    pub(super) fn items(&self) -> u32 {
        self.outer * self.runs.len() as u32
    }

    /// Bytes of src the runs read (0 if every run is a zero run).
    pub(super) fn src_extent(&self) -> u64 {
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
    pub(super) fn dst_extent(&self) -> u64 {
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
    pub(super) fn progression(runs: &[Run]) -> Option<(i64, i64)> {
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
    pub(super) fn pace_strides_fit(ds: i64, dd: i64) -> bool {
        (-PACE_STRIDE_ATOMS * 8..=PACE_STRIDE_ATOMS * 8).contains(&ds)
            && (-PACE_STRIDE_ATOMS * 8..=PACE_STRIDE_ATOMS * 8).contains(&dd)
    }

    pub(super) fn uniform(runs: &[Run]) -> bool {
        runs.iter()
            .all(|r| r.bytes == runs[0].bytes && r.src != RunSource::Zeros)
    }

    pub(super) fn encode(&self) -> Vec<u8> {
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
