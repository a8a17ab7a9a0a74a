//! The `gather_elements` table and spec: elements, lanes, words, the transpose helper, the
//! reference written from the spec, validation with typed errors and the compiler constructor.

use super::{estimate, estimate_from, make_case, NAME, NOZERO, STRIDED, ZERO_LANE};
use crate::case::{bytes, Case, Region};
use crate::error::ParamError;

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

    pub(super) fn from_word(word: u32) -> Element {
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
    pub(super) fn word(self) -> u32 {
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

    pub(super) fn items(&self) -> u32 {
        self.outer * self.words.len() as u32
    }

    pub(super) fn has_zero(&self) -> bool {
        self.words.iter().any(|w| w.lanes.contains(&Lane::Zero))
    }

    /// Whether the words are a progression the STRIDED loops can run: word w at d0 + 4w, lane
    /// k at s0 + (L·w + k)·ds for ds = lane 1 − lane 0 of word 0 (any sign), no zero lanes.
    pub(super) fn strided(&self) -> bool {
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

    pub(super) fn src_extent(&self) -> u64 {
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

    pub(super) fn dst_extent(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(self.outer - 1) * u64::from(self.dst_stride) + u64::from(w.dst) + 4)
            .max()
            .unwrap_or(0)
    }

    pub(super) fn encode(&self) -> Vec<u8> {
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

pub(super) fn validate(spec: &GatherSpec) -> Result<(), ParamError> {
    let kernel = NAME;
    ParamError::check_at_least_one(kernel, "the number of words W", spec.words.len() as u64)?;
    ParamError::check_at_least_one(
        kernel,
        "the number of outer iterations O",
        spec.outer.into(),
    )?;
    let e = spec.element.bytes();
    let aligned = |what: String, value: u32, multiple: u32| {
        ParamError::check_aligned(kernel, what, value, multiple)
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
    crate::movement::items::check_items(kernel, spec.outer, spec.words.len())?;
    for (buffer, bytes) in [("src", spec.src_extent()), ("dst", spec.dst_extent())] {
        ParamError::check_fits(kernel, buffer, bytes)?;
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
/// rows fill whole words) and the estimate says it is faster. Errors: an empty table or
/// O = 0, entries with the wrong number of lanes, dst offsets or stride not multiples of 4,
/// src offsets or stride not multiples of E, two words with one destination, more than 2^20
/// items, buffers larger than a tile.
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

/// The estimate of the call [`compiler_case`] makes, without building it (the compiler weighs
/// candidate cuts of a copy by it; a template per candidate would be kept for the whole run).
/// `None` when the spec is refused.
pub fn compiler_estimate(spec: &GatherSpec) -> Option<u64> {
    validate(spec).ok()?;
    let base = spec.element.bytes() | if spec.has_zero() { 0 } else { NOZERO };
    let (w, items) = (spec.words.len() as u32, spec.items());
    let plain = estimate_from(base, w, items);
    Some(if spec.strided() {
        plain.min(estimate_from(base | STRIDED, w, items))
    } else {
        plain
    })
}
