//! `copy_runs`: the compiler's general local data movement. A table of R runs (src offset, dst
//! offset, bytes) is applied O times with outer strides: rows → AMP panels, padding (zero runs),
//! column slices, head-major → row-major, any reorder of 4- or 8-byte granules.

mod cases;
mod constructor;
mod cost;
mod sup;
mod table;
#[cfg(test)]
mod tests;

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::split::{index_bits, packed_split_words, unpacked_item, WORKERS};
use crate::{kernel_consts, Kernel};
use cost::estimate;
use table::Table;

pub use constructor::{compiler_case, compiler_estimate};
pub use sup::{
    compiler_case as sup_compiler_case, compiler_estimate_sup, prefers_supervisor, CopyRunsSup,
};
pub use table::{copy_runs_reference, CopyRunsSpec, Granule, Run, RunSource};

pub struct CopyRuns;

const NAME: &str = "copy_runs";

const V_R: usize = 3;
const V_O: usize = 4;
const V_SSTRIDE: usize = 5;
const V_DSTRIDE: usize = 6;
const V_FLAGS: usize = 7;
const V_SPLIT: usize = 8;
/// Where the flags word keeps K, the bits of r in a worker's packed first item.
const FLAGS_SHIFT: u32 = 4;
/// The flag bits of the table (the rest of the word is K).
const FLAG_BITS: u32 = 15;

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
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(table.runs.len() as u32),
        VertexWord::Value(table.outer),
        VertexWord::Value(table.src_stride),
        VertexWord::Value(table.dst_stride),
        VertexWord::Value(table.flags | (index_bits(table.runs.len() as u32) << FLAGS_SHIFT)),
    ]);
    vertex.extend(packed_split_words(table.items(), table.runs.len() as u32));
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
            place.src.letter(),
            place.dst.letter(),
            place.table.letter(),
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
        flags: case.word(V_FLAGS) & FLAG_BITS,
    }
}

/// The split table of a case's vertex, as (first item, items) per worker.
fn split_of(case: &Case) -> [(u32, u32); WORKERS] {
    let (runs, k) = (case.word(V_R), case.word(V_FLAGS) >> FLAGS_SHIFT);
    std::array::from_fn(|w| {
        (
            unpacked_item(case.word(V_SPLIT + 2 * w), runs, k),
            case.word(V_SPLIT + 2 * w + 1),
        )
    })
}

impl Kernel for CopyRuns {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../../asm/copy_runs.S"),
        entry_kind: Worker,
        abi: "vertex: src, dst, table (R x {src offset | 0xFFFFFFFF = zeros, dst offset, bytes}), R, O, \
              src_stride, dst_stride, flags (bit 0 8-byte mode, bit 1 PACE: src and dst in different \
              memory elements, bit 2 UNIFORM: equal lengths, no zero runs, bit 3 STRIDED: the entries \
              are a progression; bits 4.. K with R <= 2^K), split[6] (first item as (o << K) | r, \
              items) over the O*R items o*R + r; scratch 20 bytes; any region",
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
