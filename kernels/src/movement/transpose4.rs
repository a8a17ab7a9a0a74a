//! `transpose4x4_f16`: 4 × 4 blocks of f16 transposed with 64-bit loads and stores and
//! `sort4x16lo/hi` (a block of values into `$CWEI` order, a matrix into its transpose): each
//! destination quad (8 bytes) of a block is one column of its source block. 12 bundles a block,
//! where `gather_elements` spends 2 to 3 an element.

use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::elementwise::common::worker_cycles;
use crate::error::ParamError;
use crate::movement::items::segments;
use crate::split::{index_bits, packed_split_words, unpacked_item, WORKERS};
use crate::{kernel_consts, Kernel};
use tessera_isa::rng::Rng;

pub struct Transpose4x4F16;

const NAME: &str = "transpose4x4_f16";

const V_B: usize = 3;
const V_O: usize = 4;
const V_SSTRIDE: usize = 5;
const V_DSTRIDE: usize = 6;
const V_ROW: usize = 7;
const V_COL: usize = 8;
const V_SPLIT: usize = 9;
/// Where word O keeps K, the bits of b in a worker's packed first item.
const O_K_SHIFT: u32 = 24;
/// The bits of word O that are O.
const O_BITS: u32 = (1 << O_K_SHIFT) - 1;

/// Bytes of one table entry (source offset, destination offset).
pub const BLOCK_ENTRY_BYTES: usize = 8;

/// One block: its source at `src + o·src_stride + src` (row i at `+ i·row`), its destination
/// quads at `dst + o·dst_stride + dst` (quad c at `+ c·col`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TransposeBlock {
    pub src: u32,
    pub dst: u32,
}

/// What a call transposes: `outer` times the `blocks`, shifted by the strides.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Transpose4Spec {
    pub blocks: Vec<TransposeBlock>,
    pub outer: u32,
    pub src_stride: u32,
    pub dst_stride: u32,
    /// Bytes from one source row of a block to the next.
    pub row: u32,
    /// Bytes from one destination quad of a block to the next.
    pub col: u32,
}

impl Transpose4Spec {
    /// The transpose of a row-major `rows × cols` f16 matrix (both multiples of 4; source row
    /// stride `src_row_bytes`) into row-major `cols × rows`: one outer iteration per 4 source
    /// rows, a block per 4 columns.
    pub fn transpose(rows: u32, cols: u32, src_row_bytes: u32) -> Transpose4Spec {
        let dst_row = 2 * rows;
        Transpose4Spec {
            blocks: (0..cols / 4)
                .map(|j| TransposeBlock {
                    src: 8 * j,
                    dst: 4 * j * dst_row,
                })
                .collect(),
            outer: rows / 4,
            src_stride: 4 * src_row_bytes,
            dst_stride: 8,
            row: src_row_bytes,
            col: dst_row,
        }
    }

    /// A row-major `keys × width` f16 block of values (row stride `src_row_bytes`) into `$CWEI`
    /// order (`kernels/src/layout.rs`: channel = column, 4 keys a phase), `kbs` K-blocks per
    /// 16 channels; `keys` and `width` multiples of 4 (the tails are another call's).
    pub fn cwei(keys: u32, width: u32, src_row_bytes: u32, kbs: u32) -> Transpose4Spec {
        let mut blocks = Vec::new();
        for g in 0..keys / 4 {
            let (kb, p) = (g / 4, g % 4);
            for f in 0..width / 4 {
                let (nb, mg) = (f / 4, f % 4);
                blocks.push(TransposeBlock {
                    src: 4 * g * src_row_bytes + 8 * f,
                    dst: (nb * kbs + kb) * 512 + mg * 128 + p * 8,
                });
            }
        }
        Transpose4Spec {
            blocks,
            outer: 1,
            src_stride: 0,
            dst_stride: 0,
            row: src_row_bytes,
            col: 32,
        }
    }

    fn items(&self) -> u32 {
        self.outer * self.blocks.len() as u32
    }

    fn src_extent(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| {
                u64::from(self.outer - 1) * u64::from(self.src_stride)
                    + u64::from(b.src)
                    + 3 * u64::from(self.row)
                    + 8
            })
            .max()
            .unwrap_or(0)
    }

    fn dst_extent(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| {
                u64::from(self.outer - 1) * u64::from(self.dst_stride)
                    + u64::from(b.dst)
                    + 3 * u64::from(self.col)
                    + 8
            })
            .max()
            .unwrap_or(0)
    }

    /// The table: the entries, then the word the loop reads ahead (zero).
    fn encode(&self) -> Vec<u8> {
        let words: Vec<u32> = self
            .blocks
            .iter()
            .flat_map(|b| [b.src, b.dst])
            .chain(std::iter::once(0))
            .collect();
        bytes::from_u32(&words)
    }

    /// Every destination quad's start, for the overlap check and the tests.
    pub fn quads(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.outer).flat_map(move |o| {
            self.blocks.iter().flat_map(move |b| {
                (0..4u64).map(move |c| {
                    u64::from(o) * u64::from(self.dst_stride)
                        + u64::from(b.dst)
                        + c * u64::from(self.col)
                })
            })
        })
    }
}

/// The specification: dst after the transpose (bytes no quad writes are 0).
pub fn transpose4_reference(spec: &Transpose4Spec, src: &[u8], dst_len: usize) -> Vec<u8> {
    let mut out = vec![0u8; dst_len];
    for o in 0..spec.outer as usize {
        for b in &spec.blocks {
            let from = o * spec.src_stride as usize + b.src as usize;
            let to = o * spec.dst_stride as usize + b.dst as usize;
            for c in 0..4 {
                for i in 0..4 {
                    let s = from + i * spec.row as usize + 2 * c;
                    let d = to + c * spec.col as usize + 2 * i;
                    out[d..d + 2].copy_from_slice(&src[s..s + 2]);
                }
            }
        }
    }
    out
}

fn validate(spec: &Transpose4Spec) -> Result<(), ParamError> {
    let kernel = NAME;
    ParamError::check_at_least_one(kernel, "the number of blocks B", spec.blocks.len() as u64)?;
    ParamError::check_at_least_one(
        kernel,
        "the number of outer iterations O",
        spec.outer.into(),
    )?;
    let aligned = |what: String, value: u32| ParamError::check_aligned(kernel, what, value, 8);
    aligned("src_stride".into(), spec.src_stride)?;
    aligned("dst_stride".into(), spec.dst_stride)?;
    aligned("the source row step".into(), spec.row)?;
    aligned("the destination quad step".into(), spec.col)?;
    for (i, b) in spec.blocks.iter().enumerate() {
        aligned(format!("block {i} src offset"), b.src)?;
        aligned(format!("block {i} dst offset"), b.dst)?;
    }
    // The loop steps its pointers by row / 8 and col / 8 through 32-bit registers; any step a
    // tile's memory allows fits.
    for (what, value) in [
        ("the source row step", spec.row),
        ("the destination quad step", spec.col),
    ] {
        if u64::from(value) > crate::error::MAX_BUFFER_BYTES {
            return Err(ParamError::Length {
                kernel,
                what: what.into(),
                value: value.into(),
                min: 0,
                max: crate::error::MAX_BUFFER_BYTES,
            });
        }
    }
    crate::movement::items::check_items(kernel, spec.outer, spec.blocks.len())?;
    for (buffer, bytes) in [("src", spec.src_extent()), ("dst", spec.dst_extent())] {
        ParamError::check_fits(kernel, buffer, bytes)?;
    }
    let mut quads: Vec<u64> = spec.quads().collect();
    quads.sort_unstable();
    for pair in quads.windows(2) {
        if pair[1] < pair[0] + 8 {
            return Err(ParamError::Overlap {
                kernel,
                first: format!("the quad at dst + {}", pair[0]),
                second: format!("the quad at dst + {}", pair[1]),
            });
        }
    }
    Ok(())
}

fn make_case(
    name: String,
    spec: &Transpose4Spec,
    src: Vec<u8>,
    regions: (Region, Region, Region),
) -> Case {
    let mut vertex = VertexWord::buffer_starts(3);
    vertex.extend([
        VertexWord::Value(spec.blocks.len() as u32),
        VertexWord::Value(spec.outer | (index_bits(spec.blocks.len() as u32) << O_K_SHIFT)),
        VertexWord::Value(spec.src_stride),
        VertexWord::Value(spec.dst_stride),
        VertexWord::Value(spec.row / 8),
        VertexWord::Value(spec.col / 8),
    ]);
    vertex.extend(packed_split_words(spec.items(), spec.blocks.len() as u32));
    Case {
        kernel: NAME.into(),
        name: format!(
            "{name} B={} O={} row={} col={} {}{}{}",
            spec.blocks.len(),
            spec.outer,
            spec.row,
            spec.col,
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

fn spec_of(case: &Case) -> Transpose4Spec {
    let words = bytes::to_u32(&case.buffer("table").bytes);
    let b = case.word(V_B) as usize;
    Transpose4Spec {
        blocks: words
            .chunks_exact(2)
            .take(b)
            .map(|w| TransposeBlock {
                src: w[0],
                dst: w[1],
            })
            .collect(),
        outer: case.word(V_O) & O_BITS,
        src_stride: case.word(V_SSTRIDE),
        dst_stride: case.word(V_DSTRIDE),
        row: 8 * case.word(V_ROW),
        col: 8 * case.word(V_COL),
    }
}

/// Bundles of one worker's share (counts from the assembly; see its header).
fn worker_bundles(b: u32, first: u32, count: u32) -> u64 {
    if count == 0 {
        return 7;
    }
    let mut total = 29;
    for (i, seg) in segments(first, count, b).iter().enumerate() {
        total += if i == 0 { 0 } else { 5 };
        total += 3 + 12 * u64::from(seg.len);
    }
    total + 1
}

fn estimate(case: &Case) -> u64 {
    let b = case.word(V_B);
    let k = case.word(V_O) >> O_K_SHIFT;
    let mut bundles = [0u64; WORKERS];
    for (i, w) in bundles.iter_mut().enumerate() {
        let first = unpacked_item(case.word(V_SPLIT + 2 * i), b, k);
        let count = case.word(V_SPLIT + 2 * i + 1);
        *w = worker_bundles(b, first, count);
    }
    worker_cycles(&bundles)
}

/// The case of a compiler call (a template: src holds zeros, the table is a constant the
/// compiler loads). Buffers: 0 `src` (input, up to the last row read), 1 `dst` (output, up to
/// the last quad written; bytes no quad names are left as they were), 2 `table` (input); any
/// region. Errors: no blocks or O = 0, offsets, strides or steps not multiples of 8, two quads
/// over one destination byte, more than 2^20 items, buffers larger than a tile.
pub fn compiler_case(spec: &Transpose4Spec) -> Result<Case, ParamError> {
    validate(spec)?;
    let src = vec![0; spec.src_extent() as usize];
    let s = Region::Standard;
    Ok(make_case("compiled".into(), spec, src, (s, s, s)))
}

/// The estimate of a compiler call without building its case.
pub fn compiler_estimate(spec: &Transpose4Spec) -> u64 {
    let items = spec.items();
    let mut bundles = [0u64; WORKERS];
    for (w, (first, count)) in crate::split::worker_split(items).into_iter().enumerate() {
        bundles[w] = worker_bundles(spec.blocks.len() as u32, first, count);
    }
    worker_cycles(&bundles)
}

const S: Region = Region::Standard;
const I: Region = Region::Interleaved;

fn case(
    rng: &mut Rng,
    name: &str,
    spec: &Transpose4Spec,
    regions: (Region, Region, Region),
) -> Case {
    validate(spec).expect("the case specs written here are valid");
    let src = (0..spec.src_extent())
        .map(|_| rng.next_u32() as u8)
        .collect();
    make_case(name.into(), spec, src, regions)
}

/// Blocks in a random order over random distinct destination slots, sources anywhere in a
/// window of `window` 8-byte words, `outer` times.
fn random_spec(rng: &mut Rng, blocks: u32, outer: u32, window: u32) -> Transpose4Spec {
    // Destination: `blocks` slots of 4 quads each, quad c of every slot in row c (col = the
    // row), so the blocks cover the destination.
    let col = 8 * blocks.max(1);
    let mut slots: Vec<u32> = (0..blocks).collect();
    for i in (1..slots.len()).rev() {
        slots.swap(i, rng.range(0, i as u64) as usize);
    }
    let row = 8 * rng.range(1, 40) as u32;
    let blocks = slots
        .iter()
        .map(|&slot| TransposeBlock {
            src: 8 * rng.range(0, u64::from(window)) as u32,
            dst: 8 * slot,
        })
        .collect();
    Transpose4Spec {
        blocks,
        outer,
        src_stride: 8 * rng.range(0, 64) as u32,
        dst_stride: 4 * col,
        row,
        col,
    }
}

fn default_cases() -> Vec<Case> {
    let mut rng = Rng::new(0x7a4);
    let r = &mut rng;
    let mut cases = Vec::new();
    // A block of values into `$CWEI` order (whole K-blocks and channel blocks, so the case
    // covers its destination): 80 keys × 64 columns, the built-in model's 16 × 32, more.
    for (keys, width, extra, kbs, regions) in [
        (80u32, 64u32, 0u32, 5u32, (S, S, S)),
        (80, 64, 8, 5, (I, I, S)),
        (16, 32, 0, 1, (S, I, I)),
        (64, 64, 16, 4, (I, S, S)),
        (16, 16, 0, 1, (S, S, S)),
        (48, 80, 8, 3, (S, S, I)),
    ] {
        let spec = Transpose4Spec::cwei(keys, width, 2 * width + extra, kbs);
        cases.push(case(r, &format!("cwei {keys}x{width}"), &spec, regions));
    }
    // Transposes: the 32 × 80 headline first (gather_elements' own headline shape).
    for (rows, cols, extra, regions) in [
        (32u32, 80u32, 0u32, (S, S, S)),
        (4, 4, 0, (S, S, S)),
        (8, 12, 8, (I, I, S)),
        (32, 80, 0, (S, I, S)),
        (80, 32, 16, (I, S, I)),
        (4, 200, 0, (S, S, S)),
        (200, 4, 0, (S, S, S)),
        (72, 80, 0, (S, S, S)),
        (16, 64, 8, (I, I, I)),
        (64, 16, 0, (S, I, S)),
        (12, 28, 24, (S, S, I)),
        (36, 44, 0, (I, S, S)),
    ] {
        let spec = Transpose4Spec::transpose(rows, cols, 2 * cols + extra);
        cases.push(case(r, &format!("transpose {rows}x{cols}"), &spec, regions));
    }
    for seed in 0..22 {
        let blocks = r.range(1, 40) as u32;
        let outer = r.range(1, 9) as u32;
        let spec = random_spec(r, blocks, outer, 300);
        cases.push(case(r, &format!("random {seed}"), &spec, (S, S, S)));
    }
    cases
}

fn random_case(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let r = &mut rng;
    let regions = *r.pick(&[(S, S, S), (I, I, S), (S, I, I), (I, S, S)]);
    let name = format!("random seed={seed}");
    if r.next_u32().is_multiple_of(2) {
        let rows = 4 * r.range(1, 24) as u32;
        let cols = 4 * r.range(1, 24) as u32;
        let extra = 8 * r.range(0, 2) as u32;
        return case(
            r,
            &name,
            &Transpose4Spec::transpose(rows, cols, 2 * cols + extra),
            regions,
        );
    }
    let blocks = r.range(1, 80) as u32;
    let outer = r.range(1, 12) as u32;
    let window = r.range(1, 500) as u32;
    let spec = random_spec(r, blocks, outer, window);
    case(r, &name, &spec, regions)
}

impl Kernel for Transpose4x4F16 {
    kernel_consts! {
        name: NAME,
        source: include_str!("../../asm/transpose4x4_f16.S"),
        entry_kind: Worker,
        abi: "vertex: src, dst, table (B x {src offset, dst offset}, one word read ahead), B, O, \
              src_stride, dst_stride, row / 8, col / 8, split[6] (first item as (o << K) | b, \
              items) over the O*B items o*B + b, K in word O's bits 24..28 (B <= 2^K); any region",
    }

    fn cases(&self) -> Vec<Case> {
        default_cases()
    }

    fn random_case(&self, seed: u64) -> Case {
        random_case(seed)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        vec![transpose4_reference(
            &spec_of(case),
            &case.buffer("src").bytes,
            case.buffer("dst").len(),
        )]
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate(case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_transposes_a_block() {
        // [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]] → its transpose.
        let spec = Transpose4Spec::transpose(4, 4, 8);
        let src = bytes::from_u16(&(0..16).collect::<Vec<u16>>());
        let out = transpose4_reference(&spec, &src, 32);
        assert_eq!(
            bytes::to_u16(&out),
            vec![0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
        );
    }

    #[test]
    fn cwei_blocks_match_the_layout_module() {
        // The values block in `$CWEI` order as `layout::weights_to_cwei_blocks` writes it
        // (an independent description of the order).
        let (keys, width) = (32u32, 48u32);
        let vals: Vec<u16> = (0..keys * width).map(|i| i as u16 + 1).collect();
        let src = bytes::from_u16(&vals);
        let expected =
            crate::layout::weights_to_cwei_blocks(&src, keys as usize, width as usize, 2);
        let spec = Transpose4Spec::cwei(keys, width, 2 * width, 2);
        let out = transpose4_reference(&spec, &src, expected.len());
        assert_eq!(out, expected);
    }

    #[test]
    fn cases_cover_their_destination_quads_once() {
        for case in Transpose4x4F16.cases() {
            assert!(validate(&spec_of(&case)).is_ok(), "{}", case.name);
        }
        for seed in 0..50 {
            assert!(validate(&spec_of(&random_case(seed))).is_ok());
        }
    }

    #[test]
    fn bad_specs_are_refused_with_ids() {
        let good = Transpose4Spec::transpose(8, 8, 16);
        assert!(compiler_case(&good).is_ok());
        let id = |spec: Transpose4Spec| compiler_case(&spec).unwrap_err().id();
        assert_eq!(
            id(Transpose4Spec {
                blocks: vec![],
                ..good.clone()
            }),
            "E-KERNEL-001"
        );
        assert_eq!(
            id(Transpose4Spec {
                row: 12,
                ..good.clone()
            }),
            "E-KERNEL-002"
        );
        let mut twice = good.clone();
        twice.blocks.push(twice.blocks[0]);
        assert_eq!(
            id(twice),
            ParamError::Overlap {
                kernel: NAME,
                first: String::new(),
                second: String::new()
            }
            .id()
        );
    }

    #[test]
    fn the_compiler_estimate_is_the_cases() {
        let spec = Transpose4Spec::cwei(80, 72, 144, 6);
        assert_eq!(
            compiler_estimate(&spec),
            estimate(&compiler_case(&spec).unwrap())
        );
    }
}
