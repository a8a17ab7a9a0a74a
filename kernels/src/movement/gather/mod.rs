//! `gather_elements`: element-granular permutations of f16 or FP8 data (transposes, interleaves)
//! that word copies cannot do: each destination 32-bit word is assembled from 4 / E elements
//! read anywhere in the source, through a table applied O times with outer strides.

mod cases;
mod spec;
#[cfg(test)]
mod tests;

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::elementwise::common::worker_cycles;
use crate::movement::items::segments;
use crate::split::{index_bits, packed_split_words, unpacked_item, WORKERS};
use crate::{kernel_consts, Kernel};

pub use spec::{
    compiler_case, compiler_estimate, gather_reference, Element, GatherSpec, GatherWord, Lane,
};

pub struct GatherElements;

const NAME: &str = "gather_elements";

const V_W: usize = 3;
const V_O: usize = 4;
const V_SSTRIDE: usize = 5;
const V_DSTRIDE: usize = 6;
const V_E: usize = 7;
const V_SPLIT: usize = 8;

/// Bit 31 of the E word: no lane of the table is a zero lane.
pub const NOZERO: u32 = 1 << 31;

/// Bit 30 of the E word: the table is a progression (word w at d0 + 4w, lane k at
/// s0 + (L·w + k)·ds with L lanes per word, no zero lanes); the kernel reads only entry 0.
pub const STRIDED: u32 = 1 << 30;
/// Where word E keeps K, the bits of w in a worker's packed first item.
const E_K_SHIFT: u32 = 8;
/// The bits of word E that are not K.
const E_FLAGS: u32 = !(31 << E_K_SHIFT);

/// The source offset word of a zero lane.
pub const ZERO_LANE: u32 = 0xFFFF_FFFF;

/// Buffer regions of a case: src, dst, table.
type Regions = (Region, Region, Region);

/// `strided`: set [`STRIDED`] (the table must be a progression).
fn make_case(
    name: String,
    spec: &GatherSpec,
    src: Vec<u8>,
    regions: Regions,
    strided: bool,
) -> Case {
    debug_assert!(!strided || spec.strided());
    let e_word = spec.element.bytes()
        | if spec.has_zero() { 0 } else { NOZERO }
        | if strided { STRIDED } else { 0 };
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(spec.words.len() as u32),
        VertexWord::Value(spec.outer),
        VertexWord::Value(spec.src_stride),
        VertexWord::Value(spec.dst_stride),
        VertexWord::Value(e_word | (index_bits(spec.words.len() as u32) << E_K_SHIFT)),
    ]);
    vertex.extend(packed_split_words(spec.items(), spec.words.len() as u32));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{name} W={} O={} E={}{}{} {}{}{}",
            spec.words.len(),
            spec.outer,
            spec.element.bytes(),
            if spec.has_zero() { " zeros" } else { "" },
            if strided { " strided" } else { "" },
            regions.0.letter(),
            regions.1.letter(),
            regions.2.letter()
        ),
        buffers: vec![
            Buffer::input("src", src, regions.0, None),
            Buffer::output("dst", spec.dst_extent() as usize, regions.1, None),
            Buffer::input("table", spec.encode(), regions.2, None),
        ],
        vertex,
        supervisor_csrs: vec![],
    }
}

fn spec_of(case: &Case) -> GatherSpec {
    let element = Element::from_word(case.word(V_E));
    let words = bytes::to_u32(&case.buffer("table").bytes);
    let entry = 1 + element.lanes();
    let words: Vec<GatherWord> = words
        .chunks_exact(entry)
        .map(|w| GatherWord {
            dst: w[0],
            lanes: w[1..]
                .iter()
                .map(|&s| {
                    if s == ZERO_LANE {
                        Lane::Zero
                    } else {
                        Lane::Src(s)
                    }
                })
                .collect(),
        })
        .collect();
    debug_assert_eq!(words.len(), case.word(V_W) as usize);
    GatherSpec {
        words,
        outer: case.word(V_O),
        src_stride: case.word(V_SSTRIDE),
        dst_stride: case.word(V_DSTRIDE),
        element,
    }
}

/// Set-up bundles of a worker with items, to the jump to its mode (see the assembly's header).
const SETUP: u64 = 35;

/// Bundles of one worker's share (counts from the assembly; see its header).
fn worker_bundles(e_word: u32, w: u32, first: u32, count: u32) -> u64 {
    if count == 0 {
        return 7;
    }
    let element = Element::from_word(e_word);
    let nozero = e_word & NOZERO != 0;
    if e_word & STRIDED != 0 {
        let (init, first_seg, wrap, per_word) = match element {
            Element::Half => (18, 3, 5, 4),
            Element::Byte => (20, 4, 7, 6),
        };
        let mut total = SETUP + init;
        for (i, seg) in segments(first, count, w).iter().enumerate() {
            total += if i == 0 { 0 } else { wrap };
            total += first_seg + per_word * u64::from(seg.len);
        }
        return total + 1;
    }
    let per_word = match (element, nozero) {
        (Element::Half, true) => 6,
        (Element::Half, false) => 9,
        (Element::Byte, true) => 10,
        (Element::Byte, false) => 15,
    };
    let mut total = SETUP + 2;
    for (i, seg) in segments(first, count, w).iter().enumerate() {
        total += if i == 0 { 0 } else { 4 };
        total += 6 + per_word * u64::from(seg.len);
    }
    total + 1
}

/// The estimate of a call with vertex word E `e_word`, `w` words per outer iteration and
/// `items` items, from the split alone (no case built).
pub(super) fn estimate_from(e_word: u32, w: u32, items: u32) -> u64 {
    let mut bundles = [0u64; WORKERS];
    for (i, (first, count)) in crate::split::worker_split(items).into_iter().enumerate() {
        bundles[i] = worker_bundles(e_word, w, first, count);
    }
    worker_cycles(&bundles)
}

fn estimate(case: &Case) -> u64 {
    let e_word = case.word(V_E) & E_FLAGS;
    let k = (case.word(V_E) >> E_K_SHIFT) & 31;
    let w = case.word(V_W);
    let mut bundles = [0u64; WORKERS];
    for (i, b) in bundles.iter_mut().enumerate() {
        let first = unpacked_item(case.word(V_SPLIT + 2 * i), w, k);
        let count = case.word(V_SPLIT + 2 * i + 1);
        *b = worker_bundles(e_word, w, first, count);
    }
    worker_cycles(&bundles)
}

impl Kernel for GatherElements {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../../asm/gather_elements.S"),
        entry_kind: Worker,
        abi: "vertex: src, dst, table (W x {dst offset, 4/E src offsets | 0xFFFFFFFF = zero}), W, O, \
              src_stride, dst_stride, E (1 or 2; bit 31 NOZERO: no zero lanes; bits 8..12 K with W <= 2^K), \
              split[6] (first item as (o << K) | w, items) over the O*W items o*W + w; any region",
    }

    fn cases(&self) -> Vec<Case> {
        cases::default_cases()
    }

    fn random_case(&self, seed: u64) -> Case {
        cases::random_case(seed)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        vec![gather_reference(
            &spec_of(case),
            &case.buffer("src").bytes,
            case.buffer("dst").len(),
        )]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate(case)
    }
}
