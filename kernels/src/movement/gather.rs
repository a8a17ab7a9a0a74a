//! `gather_elements`: element-granular permutations of f16 or FP8 data (transposes, interleaves)
//! that word copies cannot do: each destination 32-bit word is assembled from 4 / E elements
//! read anywhere in the source, through a table applied O times with outer strides.

use super::items::{segments, MAX_ITEMS};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::elementwise::common::worker_cycles;
use crate::error::{ParamError, MAX_BUFFER_BYTES};
use crate::rng::Rng;
use crate::split::{split_words, WORKERS};
use crate::{EntryKind, Kernel};

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

/// The source offset word of a zero lane.
pub const ZERO_LANE: u32 = 0xFFFF_FFFF;

/// The element size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// 2-byte elements (f16): two lanes per word.
    Half,
    /// 1-byte elements (FP8): four lanes per word.
    Byte,
}

impl Element {
    pub fn bytes(self) -> u32 {
        match self {
            Element::Half => 2,
            Element::Byte => 1,
        }
    }

    /// Lanes per 32-bit destination word.
    pub fn lanes(self) -> usize {
        match self {
            Element::Half => 2,
            Element::Byte => 4,
        }
    }

    fn from_word(word: u32) -> Element {
        if word & 3 == 1 {
            Element::Byte
        } else {
            Element::Half
        }
    }
}

/// Where one lane of a destination word comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// The element at `src + o·src_stride + offset`.
    Src(u32),
    /// A zero element.
    Zero,
}

impl Lane {
    fn word(self) -> u32 {
        match self {
            Lane::Src(offset) => offset,
            Lane::Zero => ZERO_LANE,
        }
    }
}

/// One table entry: a destination word and its lanes, lane 0 at the lowest address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatherWord {
    /// Byte offset in dst (plus o·dst_stride), a multiple of 4.
    pub dst: u32,
    pub lanes: Vec<Lane>,
}

/// What a compiler call gathers: for every o < `outer` and every word w, the 32-bit word at
/// `dst + o·dst_stride + words[w].dst` from its lanes at `src + o·src_stride + offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatherSpec {
    pub words: Vec<GatherWord>,
    pub outer: u32,
    pub src_stride: u32,
    pub dst_stride: u32,
    pub element: Element,
}

impl GatherSpec {
    /// The transpose of a row-major `rows × cols` matrix (source row stride `src_row_bytes`)
    /// into row-major `cols × rows`, each destination row padded with zero elements to a
    /// multiple of 4 bytes (`dst_row_bytes`). One outer iteration per destination row
    /// (src stride E, dst stride the destination row), so the table has one row of entries.
    pub fn transpose(rows: u32, cols: u32, src_row_bytes: u32, element: Element) -> GatherSpec {
        let e = element.bytes();
        let dst_row_bytes = (rows * e).div_ceil(4) * 4;
        let lanes = element.lanes() as u32;
        let words = (0..dst_row_bytes / 4)
            .map(|w| GatherWord {
                dst: 4 * w,
                lanes: (0..lanes)
                    .map(|k| {
                        let row = w * lanes + k;
                        if row < rows {
                            Lane::Src(row * src_row_bytes)
                        } else {
                            Lane::Zero
                        }
                    })
                    .collect(),
            })
            .collect();
        GatherSpec {
            words,
            outer: cols,
            src_stride: e,
            dst_stride: dst_row_bytes,
            element,
        }
    }

    fn items(&self) -> u32 {
        self.outer * self.words.len() as u32
    }

    fn has_zero(&self) -> bool {
        self.words.iter().any(|w| w.lanes.contains(&Lane::Zero))
    }

    /// Whether the words are a progression the STRIDED loops can run: word w at d0 + 4w, lane
    /// k at s0 + (L·w + k)·ds for ds = lane 1 − lane 0 of word 0 (any sign), no zero lanes.
    fn strided(&self) -> bool {
        let lanes = self.element.lanes() as i64;
        let first = &self.words[0];
        let (Some(Lane::Src(s0)), Some(Lane::Src(s1))) = (first.lanes.first(), first.lanes.get(1))
        else {
            return false;
        };
        let (d0, s0) = (i64::from(first.dst), i64::from(*s0));
        let ds = i64::from(*s1) - s0;
        self.words.iter().enumerate().all(|(w, word)| {
            let w = w as i64;
            i64::from(word.dst) == d0 + 4 * w
                && word.lanes.iter().enumerate().all(|(k, &lane)| {
                    lane == Lane::Src((s0 + (lanes * w + k as i64) * ds) as u32)
                        && s0 + (lanes * w + k as i64) * ds >= 0
                })
        })
    }

    fn src_extent(&self) -> u64 {
        let e = u64::from(self.element.bytes());
        self.words
            .iter()
            .flat_map(|w| w.lanes.iter())
            .filter_map(|&lane| match lane {
                Lane::Src(offset) => Some(
                    u64::from(self.outer - 1) * u64::from(self.src_stride) + u64::from(offset) + e,
                ),
                Lane::Zero => None,
            })
            .max()
            .unwrap_or(0)
    }

    fn dst_extent(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(self.outer - 1) * u64::from(self.dst_stride) + u64::from(w.dst) + 4)
            .max()
            .unwrap_or(0)
    }

    fn encode(&self) -> Vec<u8> {
        let words: Vec<u32> = self
            .words
            .iter()
            .flat_map(|w| std::iter::once(w.dst).chain(w.lanes.iter().map(|l| l.word())))
            .collect();
        bytes::from_u32(&words)
    }
}

/// The specification: dst after the gather (bytes no word writes are 0; the checker's cases
/// cover dst completely).
pub fn gather_reference(spec: &GatherSpec, src: &[u8], dst_len: usize) -> Vec<u8> {
    let e = spec.element.bytes() as usize;
    let mut out = vec![0u8; dst_len];
    for o in 0..spec.outer as usize {
        for word in &spec.words {
            let to = o * spec.dst_stride as usize + word.dst as usize;
            for (k, lane) in word.lanes.iter().enumerate() {
                let bytes = &mut out[to + k * e..to + (k + 1) * e];
                match *lane {
                    Lane::Src(offset) => {
                        let from = o * spec.src_stride as usize + offset as usize;
                        bytes.copy_from_slice(&src[from..from + e]);
                    }
                    Lane::Zero => bytes.fill(0),
                }
            }
        }
    }
    out
}

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
        VertexWord::Value(spec.words.len() as u32),
        VertexWord::Value(spec.outer),
        VertexWord::Value(spec.src_stride),
        VertexWord::Value(spec.dst_stride),
        VertexWord::Value(e_word),
    ];
    vertex.extend(split_words(spec.items()));
    let region = |r: Region| match r {
        Region::Standard => "S",
        Region::Interleaved => "I",
    };
    Case {
        kernel: NAME.into(),
        name: format!(
            "{name} W={} O={} E={}{}{} {}{}{}",
            spec.words.len(),
            spec.outer,
            spec.element.bytes(),
            if spec.has_zero() { " zeros" } else { "" },
            if strided { " strided" } else { "" },
            region(regions.0),
            region(regions.1),
            region(regions.2)
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
        let mut total = 48 + init;
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
    let mut total = 48 + 2;
    for (i, seg) in segments(first, count, w).iter().enumerate() {
        total += if i == 0 { 0 } else { 4 };
        total += 6 + per_word * u64::from(seg.len);
    }
    total + 1
}

fn estimate(case: &Case) -> u64 {
    let e_word = case.word(V_E);
    let w = case.word(V_W);
    let mut bundles = [0u64; WORKERS];
    for (i, b) in bundles.iter_mut().enumerate() {
        let (first, count) = (case.word(V_SPLIT + 2 * i), case.word(V_SPLIT + 2 * i + 1));
        *b = worker_bundles(e_word, w, first, count);
    }
    worker_cycles(&bundles)
}

fn validate(spec: &GatherSpec) -> Result<(), ParamError> {
    let kernel = NAME;
    if spec.words.is_empty() {
        return Err(ParamError::Empty {
            kernel,
            what: "the number of words W",
        });
    }
    if spec.outer == 0 {
        return Err(ParamError::Empty {
            kernel,
            what: "the number of outer iterations O",
        });
    }
    let e = spec.element.bytes();
    let aligned = |what: String, value: u32, multiple: u32| {
        if value.is_multiple_of(multiple) {
            Ok(())
        } else {
            Err(ParamError::Misaligned {
                kernel,
                what,
                value: value.into(),
                multiple,
            })
        }
    };
    aligned("src_stride".into(), spec.src_stride, e)?;
    aligned("dst_stride".into(), spec.dst_stride, 4)?;
    for (i, word) in spec.words.iter().enumerate() {
        if word.lanes.len() != spec.element.lanes() {
            return Err(ParamError::Lanes {
                kernel,
                entry: i,
                lanes: word.lanes.len(),
                expected: spec.element.lanes(),
            });
        }
        aligned(format!("word {i} dst offset"), word.dst, 4)?;
        for (k, lane) in word.lanes.iter().enumerate() {
            if let Lane::Src(offset) = *lane {
                aligned(format!("word {i} lane {k} src offset"), offset, e)?;
                if offset >= 1 << 31 {
                    return Err(ParamError::Length {
                        kernel,
                        what: format!("word {i} lane {k} src offset"),
                        value: offset.into(),
                        min: 0,
                        max: (1 << 31) - 1,
                    });
                }
            }
        }
    }
    let items = u64::from(spec.outer) * spec.words.len() as u64;
    if items > MAX_ITEMS {
        return Err(ParamError::TooManyItems {
            kernel,
            items,
            max: MAX_ITEMS,
        });
    }
    for (buffer, bytes) in [("src", spec.src_extent()), ("dst", spec.dst_extent())] {
        if bytes > MAX_BUFFER_BYTES {
            return Err(ParamError::TooLarge {
                kernel,
                buffer,
                bytes,
            });
        }
    }
    let mut starts: Vec<(u64, u32, usize)> = (0..spec.outer)
        .flat_map(|o| {
            spec.words.iter().enumerate().map(move |(i, w)| {
                (
                    u64::from(o) * u64::from(spec.dst_stride) + u64::from(w.dst),
                    o,
                    i,
                )
            })
        })
        .collect();
    starts.sort_unstable();
    for pair in starts.windows(2) {
        if pair[1].0 == pair[0].0 {
            let name = |s: &(u64, u32, usize)| format!("word {} of outer iteration {}", s.2, s.1);
            return Err(ParamError::Overlap {
                kernel,
                first: name(&pair[0]),
                second: name(&pair[1]),
            });
        }
    }
    Ok(())
}

/// The case of a compiler call (a template: src holds zeros, the table buffer holds the encoded
/// words, a constant the compiler loads). Buffers: 0 `src` (input, up to its last element
/// read), 1 `dst` (output, up to its last word written; words the table does not name are left
/// as they were), 2 `table` (input); any region, no element constraints. The NOZERO bit is set
/// when no lane is a zero lane, STRIDED when the words are a progression (transposes whose
/// rows fill whole words) and the estimate says it is faster. Errors: an empty table or O = 0, entries with the wrong number
/// of lanes, dst offsets or stride not multiples of 4, src offsets or stride not multiples of
/// E, two words with one destination, more than 2^20 items, buffers larger than a tile.
pub fn compiler_case(spec: &GatherSpec) -> Result<Case, ParamError> {
    validate(spec)?;
    let src = vec![0; spec.src_extent() as usize];
    let anywhere = (Region::Standard, Region::Standard, Region::Standard);
    let plain = make_case("compiled".into(), spec, src.clone(), anywhere, false);
    if !spec.strided() {
        return Ok(plain);
    }
    let strided = make_case("compiled".into(), spec, src, anywhere, true);
    Ok(if estimate(&strided) < estimate(&plain) {
        strided
    } else {
        plain
    })
}

impl Kernel for GatherElements {
    fn name(&self) -> &'static str {
        NAME
    }

    fn source(&self) -> &'static str {
        include_str!("../../asm/gather_elements.S")
    }

    fn entry(&self) -> &'static str {
        NAME
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Worker
    }

    fn abi(&self) -> &'static str {
        "vertex: src, dst, table (W x {dst offset, 4/E src offsets | 0xFFFFFFFF = zero}), W, O, \
         src_stride, dst_stride, E (1 or 2; bit 31 NOZERO: no zero lanes), split[6] (first item, \
         items) over the O*W items o*W + w; scratch 16 bytes; any region"
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

/// The checker's cases.
mod cases {
    use super::*;

    const S: Region = Region::Standard;
    const I: Region = Region::Interleaved;

    fn random_src(rng: &mut Rng, spec: &GatherSpec) -> Vec<u8> {
        (0..spec.src_extent())
            .map(|_| rng.next_u32() as u8)
            .collect()
    }

    fn case(rng: &mut Rng, name: &str, spec: &GatherSpec, regions: Regions) -> Case {
        validate(spec).expect("a valid case spec");
        let src = random_src(rng, spec);
        make_case(name.into(), spec, src, regions, false)
    }

    /// The same with STRIDED.
    fn strided(rng: &mut Rng, name: &str, spec: &GatherSpec, regions: Regions) -> Case {
        validate(spec).expect("a valid case spec");
        let src = random_src(rng, spec);
        make_case(name.into(), spec, src, regions, true)
    }

    /// A random gather: `w` words per outer iteration tiling the dst row in a random order,
    /// lanes from anywhere in a source window of `window` elements, a zero lane with
    /// probability 1/`zero_every` (0: never).
    fn random_spec(
        rng: &mut Rng,
        w: u32,
        outer: u32,
        element: Element,
        window: u32,
        zero_every: u64,
    ) -> GatherSpec {
        let e = element.bytes();
        let mut order: Vec<u32> = (0..w).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.range(0, i as u64) as usize);
        }
        let words = order
            .iter()
            .map(|&slot| GatherWord {
                dst: 4 * slot,
                lanes: (0..element.lanes())
                    .map(|_| {
                        if zero_every > 0 && rng.next_u64().is_multiple_of(zero_every) {
                            Lane::Zero
                        } else {
                            Lane::Src(e * rng.range(0, u64::from(window - 1)) as u32)
                        }
                    })
                    .collect(),
            })
            .collect();
        GatherSpec {
            words,
            outer,
            src_stride: e * rng.range(0, u64::from(window)) as u32,
            dst_stride: 4 * w,
            element,
        }
    }

    pub(super) fn default_cases() -> Vec<Case> {
        let mut rng = Rng::new(0x6a7e);
        let r = &mut rng;
        let mut cases = Vec::new();
        // Transposes: f16 (the 32 x 80 headline first), FP8, odd shapes padded with zero lanes.
        for (rows, cols, extra, element, regions) in [
            (32u32, 80u32, 0u32, Element::Half, (S, S, S)),
            (32, 80, 0, Element::Half, (I, I, S)),
            (80, 32, 0, Element::Half, (S, I, I)),
            (72, 19, 8, Element::Half, (I, S, S)),
            (2, 2, 0, Element::Half, (S, S, S)),
            (2, 1, 0, Element::Half, (S, S, I)),
            (4, 7, 4, Element::Half, (I, I, I)),
            (6, 6, 0, Element::Half, (S, S, S)),
            (16, 64, 0, Element::Half, (S, I, S)),
            (3, 5, 2, Element::Half, (S, S, S)),
            (1, 9, 0, Element::Half, (I, S, S)),
            (33, 13, 0, Element::Half, (S, S, S)),
            (32, 80, 0, Element::Byte, (S, S, S)),
            (32, 80, 0, Element::Byte, (I, I, S)),
            (80, 32, 0, Element::Byte, (S, I, S)),
            (4, 4, 0, Element::Byte, (S, S, S)),
            (8, 3, 5, Element::Byte, (I, S, I)),
            (72, 19, 3, Element::Byte, (S, S, S)),
            (5, 7, 0, Element::Byte, (S, S, S)),
            (7, 5, 1, Element::Byte, (I, I, I)),
            (1, 12, 0, Element::Byte, (S, S, S)),
            (2, 33, 0, Element::Byte, (S, I, S)),
            (3, 2, 0, Element::Byte, (S, S, S)),
            (64, 16, 0, Element::Byte, (I, S, S)),
        ] {
            let e = element.bytes();
            let spec = GatherSpec::transpose(rows, cols, cols * e + extra, element);
            let name = format!("transpose {rows}x{cols}");
            cases.push(case(r, &name, &spec, regions));
            if spec.strided() {
                cases.push(strided(r, &name, &spec, regions));
            }
        }
        // A whole transpose as one outer iteration (W = all words), and its items spread.
        for element in [Element::Half, Element::Byte] {
            let t = GatherSpec::transpose(12, 10, 10 * element.bytes(), element);
            let words: Vec<GatherWord> = (0..t.outer)
                .flat_map(|o| {
                    t.words.iter().map(move |w| GatherWord {
                        dst: w.dst + o * t.dst_stride,
                        lanes: w
                            .lanes
                            .iter()
                            .map(|&l| match l {
                                Lane::Src(s) => Lane::Src(s + o * t.src_stride),
                                Lane::Zero => Lane::Zero,
                            })
                            .collect(),
                    })
                })
                .collect();
            let flat = GatherSpec {
                words,
                outer: 1,
                src_stride: 0,
                dst_stride: 0,
                element,
            };
            cases.push(case(r, "flat transpose 12x10", &flat, (S, S, I)));
            // Reversed lane order (a negative ds) as one progression.
            let lanes = element.lanes() as u32;
            let (w, e) = (9u32, element.bytes());
            let top = (lanes * w - 1) * 3 * e;
            let reversed = GatherSpec {
                words: (0..w)
                    .map(|i| GatherWord {
                        dst: 4 * i,
                        lanes: (0..lanes)
                            .map(|k| Lane::Src(top - (lanes * i + k) * 3 * e))
                            .collect(),
                    })
                    .collect(),
                outer: 5,
                src_stride: e,
                dst_stride: 4 * w,
                element,
            };
            assert!(reversed.strided());
            cases.push(case(r, "reversed lanes", &reversed, (S, S, S)));
            cases.push(strided(r, "reversed lanes", &reversed, (I, I, S)));
        }
        // Random gathers: both sizes, with and without zero lanes, idle workers, many items.
        for (w, outer, element, window, zeros, regions) in [
            (1u32, 1u32, Element::Half, 4u32, 0u64, (S, S, S)),
            (1, 1, Element::Byte, 4, 0, (S, S, S)),
            (1, 5, Element::Half, 3, 2, (I, S, S)),
            (3, 1, Element::Byte, 9, 3, (S, I, S)),
            (5, 2, Element::Half, 40, 0, (S, S, S)),
            (7, 9, Element::Byte, 33, 0, (I, I, S)),
            (16, 4, Element::Half, 100, 5, (S, S, I)),
            (16, 4, Element::Byte, 100, 5, (S, S, S)),
            (40, 3, Element::Half, 300, 0, (I, S, S)),
            (40, 3, Element::Byte, 300, 4, (S, I, I)),
            (2, 60, Element::Half, 8, 0, (S, S, S)),
            (2, 60, Element::Byte, 8, 6, (S, S, S)),
            (11, 13, Element::Half, 50, 1, (S, S, S)),
            (11, 13, Element::Byte, 50, 1, (I, I, I)),
            (6, 1, Element::Half, 12, 0, (S, S, S)),
            (7, 1, Element::Byte, 12, 2, (S, S, S)),
            (250, 2, Element::Half, 1000, 9, (S, I, S)),
            (3, 700, Element::Byte, 16, 0, (S, S, S)),
            (9, 333, Element::Half, 20, 7, (I, S, S)),
            (128, 1, Element::Byte, 512, 0, (S, S, S)),
        ] {
            let spec = random_spec(r, w, outer, element, window, zeros);
            cases.push(case(r, "random gather", &spec, regions));
        }
        // The compiler constructor with random source data.
        for spec in [
            GatherSpec::transpose(32, 80, 160, Element::Half),
            GatherSpec::transpose(19, 72, 72, Element::Byte),
        ] {
            let mut c = compiler_case(&spec).expect("a valid spec");
            c.buffers[0].bytes = random_src(r, &spec);
            cases.push(c);
        }
        cases
    }

    pub(super) fn random_case(seed: u64) -> Case {
        let mut rng = Rng::new(seed);
        let r = &mut rng;
        let element = *r.pick(&[Element::Half, Element::Byte]);
        let name = format!("random seed={seed}");
        let regions = *r.pick(&[(S, S, S), (I, I, S), (S, I, I), (I, S, S)]);
        if r.next_u32().is_multiple_of(2) {
            let rows = r.range(1, 64) as u32;
            let cols = r.range(1, 64) as u32;
            let extra = element.bytes() * r.range(0, 3) as u32;
            let spec = GatherSpec::transpose(rows, cols, cols * element.bytes() + extra, element);
            return if spec.strided() && r.next_u32().is_multiple_of(2) {
                strided(r, &name, &spec, regions)
            } else {
                case(r, &name, &spec, regions)
            };
        }
        let w = r.range(1, 60) as u32;
        let outer = r.range(1, 40) as u32;
        let window = r.range(2, 400) as u32;
        let zeros = *r.pick(&[0u64, 0, 2, 9]);
        let spec = random_spec(r, w, outer, element, window, zeros);
        case(r, &name, &spec, regions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_spec_transposes() {
        // 3 x 2 f16 [[1, 2], [3, 4], [5, 6]] -> [[1, 3, 5, 0], [2, 4, 6, 0]] (rows padded to 8 bytes).
        let spec = GatherSpec::transpose(3, 2, 4, Element::Half);
        let src = bytes::from_u16(&[1, 2, 3, 4, 5, 6]);
        let out = gather_reference(&spec, &src, spec.dst_extent() as usize);
        assert_eq!(bytes::to_u16(&out), vec![1, 3, 5, 0, 2, 4, 6, 0]);
        let spec = GatherSpec::transpose(4, 2, 2, Element::Byte);
        let out = gather_reference(&spec, &[1, 2, 3, 4, 5, 6, 7, 8], 8);
        assert_eq!(out, vec![1, 3, 5, 7, 2, 4, 6, 8]);
    }

    #[test]
    fn transposes_of_whole_words_are_progressions() {
        assert!(GatherSpec::transpose(32, 80, 160, Element::Half).strided());
        assert!(GatherSpec::transpose(32, 80, 80, Element::Byte).strided());
        // Padded with zero lanes: not a progression; the constructor keeps the table loop.
        let odd = GatherSpec::transpose(3, 5, 10, Element::Half);
        assert!(!odd.strided());
        assert_eq!(compiler_case(&odd).unwrap().word(V_E) & STRIDED, 0);
        let big = compiler_case(&GatherSpec::transpose(32, 80, 160, Element::Half)).unwrap();
        assert_eq!(big.word(V_E), 2 | NOZERO | STRIDED);
    }

    #[test]
    fn default_cases_cover_dst_exactly_once() {
        let cases = GatherElements.cases();
        assert!(cases.len() >= 40);
        for case in cases {
            let spec = spec_of(&case);
            let mut hits = vec![0u8; case.buffer("dst").len()];
            for o in 0..spec.outer {
                for w in &spec.words {
                    let start = (o * spec.dst_stride + w.dst) as usize;
                    for h in &mut hits[start..start + 4] {
                        *h += 1;
                    }
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{}", case.name);
        }
    }

    #[test]
    fn bad_specs_are_refused_with_ids() {
        let good = GatherSpec::transpose(4, 4, 8, Element::Half);
        assert!(compiler_case(&good).is_ok());
        let id = |spec: GatherSpec| compiler_case(&spec).unwrap_err().id();
        assert_eq!(
            id(GatherSpec {
                words: vec![],
                ..good.clone()
            }),
            "E-KERNEL-001"
        );
        assert_eq!(
            id(GatherSpec {
                dst_stride: 6,
                ..good.clone()
            }),
            "E-KERNEL-002"
        );
        assert_eq!(
            id(GatherSpec {
                src_stride: 3,
                ..good.clone()
            }),
            "E-KERNEL-002"
        );
        assert_eq!(
            id(GatherSpec {
                dst_stride: 4,
                ..good.clone()
            }),
            "E-KERNEL-004"
        );
        assert_eq!(
            id(GatherSpec {
                element: Element::Byte,
                ..good.clone()
            }),
            "E-KERNEL-007"
        );
        assert_eq!(
            id(GatherSpec {
                outer: 600_000,
                ..good.clone()
            }),
            "E-KERNEL-005"
        );
    }
}
