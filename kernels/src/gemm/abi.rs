//! The GEMM kernels' ABI and the case constructor that follows it: vertex words, buffers with
//! their regions and element slots, supervisor CSRs ([`AmpGemm::make_case`]), and whether a
//! case fits one tile ([`fits`]).
//!
//! Vertex words (`kernels/asm/gemm_fp8.S` is the full description):
//! `0 A, 1 B, 2 C, 3 C0, 4 S, 5 M, 6 kbs, 7 nbs, 8 flags, 9 XSTEP, 10..15 zero`, then at word
//! 16 + 8w the record of worker w for its rows `first .. first + count` (`estimate::rows_split`):
//! `A + RA·first, C + RS·first, C0 + RS·first, count − 3, pace stride (field 0 RS/8 − 3, field
//! 2 RA/8 − 3, bit 31 when count < 3), S, RS, count`.
//!
//! * A: the 32 bytes of row r and K-block kb at `A + r·RA + kb·8·XSTEP`. AMP-left panels
//!   ([`layout::fp8_to_panels`] / [`layout::f16_to_panels`], m_padded = M): RA = 32, XSTEP =
//!   4M. Rows ([`GemmSpec::a_row_stride`]): RA = the row stride, XSTEP = 4 (K a whole number
//!   of K-blocks, so no block reads past its row).
//! * B: weights in `$CWEI` block order ([`layout::weights_to_cwei_blocks`]), interleaved
//!   memory, 16-byte aligned.
//! * C: M rows × Np = 16·nbs halves (RS = 2·Np bytes), interleaved memory. Columns N..Np hold
//!   what their zero weights give (the partial, passed through the AMP).
//! * C0 (flags bit 0): partial sums in, same layout as C. Without it the partials are +0.
//! * S: 16 bytes of scratch (the launch record the supervisor writes for the workers).
//! * 20 bytes of per-worker scratch at `$mworker_base`, kept from K-block 0 to the later ones.
//! * A, C0 and C in three different element slots (one `ld2xst64pace` touches all three).

use super::data::{random_operands, random_partials, Data};
use super::{AmpGemm, Precision};
use crate::case::{bytes, Buffer, Case, Region, VertexWord};
use crate::layout::{self, AMP_CHANNELS, PANEL_ROW_BYTES, WEIGHT_BLOCK_BYTES};
use crate::split::WORKERS;
use crate::Kernel;
use tessera_isa::csr::index;
use tessera_isa::numerics::{scale_to_field, Fp8Format};
use tessera_isa::rng::Rng;

// Vertex layout (mirrors the #defines in the .S files).
pub(super) const V_A: usize = 0;
pub(super) const V_B: usize = 1;
pub(super) const V_C: usize = 2;
pub(super) const V_C0: usize = 3;
pub(super) const V_S: usize = 4;
pub(super) const V_M: usize = 5;
pub(super) const V_KBS: usize = 6;
pub(super) const V_NBS: usize = 7;
pub(super) const V_FLAGS: usize = 8;
pub(super) const V_XSTEP: usize = 9;
pub(super) const V_WORKERS: usize = 16;
pub(super) const RECORD_WORDS: usize = 10;
/// The stride word of a worker record.
pub(super) const W_STRIDE: usize = 4;
/// Bytes of the scratch buffer S (the launch record and the supervisor's constants).
pub(super) const SCRATCH_BYTES: usize = 16;
/// Bit 31 of a worker's stride word: fewer than 3 rows (the plain loop).
pub(super) const SLOW_FLAG: u32 = 1 << 31;
/// flags bit 0: add C0.
pub(super) const FLAG_PARTIALS: u32 = 1;
/// flags bit 1: K-blocks 1 .. kbs−1 chained, each launch going on from the pipeline the last
/// one left ([`chains`]).
pub(super) const FLAG_CHAIN: u32 = 2;
/// Fewest rows of a chained product: every worker has at least 4 (the even split of 24).
pub(super) const CHAIN_MIN_ROWS: u32 = 24;
/// Fewest K-blocks of a chained product: K-block 1 leaves the pipeline full, kbs−1 drains it.
pub(super) const CHAIN_MIN_K_BLOCKS: usize = 3;

/// The wrap of the partials' and the stores' pointer from row `count − 1`'s last atom to row 0,
/// in 8-byte atoms (rows `rs` bytes apart), if it fits the pace stride's signed 10-bit field.
pub(super) fn row_wrap(count: u32, rs: usize) -> Option<u32> {
    let atoms = (count as i64 - 1) * (rs as i64 / 8) + 3;
    (atoms <= 512).then_some((-atoms) as u32 & 0x3ff)
}

/// Whether a product of `m` rows, `kbs` K-blocks and row stride `rs` runs its K-blocks 1 ..
/// kbs−1 chained: every worker has 4 rows or more, there are 3 K-blocks or more, and every
/// worker's row wrap fits ([`row_wrap`]).
pub(super) fn chains(m: u32, kbs: usize, rs: usize) -> bool {
    m >= CHAIN_MIN_ROWS
        && kbs >= CHAIN_MIN_K_BLOCKS
        && super::estimate::rows_split(m)
            .iter()
            .all(|&(_, count)| row_wrap(count, rs).is_some())
}
/// Largest row stride the 10-bit pace stride field allows: RS/8 − 3 ≤ 511 (for C, and for A in
/// rows).
pub const MAX_ROW_STRIDE_BYTES: usize = 8 * (511 + 3);
/// Bit position of the pace stride's field 2, A's row jump.
pub(super) const A_JUMP_SHIFT: u32 = 20;

/// Element slots of the three streams (different slots = different memory elements).
/// The element slot of a GEMM's `a` operand (its panels): a caller that writes the panels
/// with a paced copy puts the copy's source in another slot.
pub const SLOT_A: u8 = 0;
pub(super) const SLOT_C0: u8 = 1;
/// The element slot of a GEMM's result `c`: a copy out of it may put its destination in another
/// slot and load and store in one bundle.
pub const SLOT_C: u8 = 2;

/// Everything a case is made from.
#[derive(Clone, Debug)]
pub struct GemmSpec {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// Add C0 (else zero partial sums).
    pub partials: bool,
    /// `$FP_INFMT` formats of A (inputs) and B (weights); FP8 only.
    pub x_format: Fp8Format,
    pub w_format: Fp8Format,
    /// `$FP_ISCL`; FP8 only (the f16 kernel's cases still set it, to show it is ignored).
    pub scale: i32,
    pub a_region: Region,
    pub c0_region: Region,
    /// Slot of B (it is only read by `ld128putcs`, so it may share any slot).
    pub b_slot: Option<u8>,
    pub data: Data,
    pub seed: u64,
    /// A in rows of this many bytes (a multiple of 8, at least the row's K-blocks, at most
    /// [`MAX_ROW_STRIDE_BYTES`]; K a whole number of K-blocks) instead of AMP-left panels: a
    /// product reads its operand where an exchange wrote its rows, with no relayout. The bytes
    /// between rows are not read.
    pub a_row_stride: Option<usize>,
}

impl GemmSpec {
    pub fn new(m: usize, k: usize, n: usize) -> GemmSpec {
        GemmSpec {
            m,
            k,
            n,
            partials: false,
            x_format: Fp8Format::F143,
            w_format: Fp8Format::F143,
            scale: -4,
            a_region: Region::Interleaved,
            c0_region: Region::Interleaved,
            b_slot: None,
            data: Data::Normal,
            seed: 1,
            a_row_stride: None,
        }
    }

    /// A's row stride in bytes (RA) and the 8-byte atoms from one K-block to the next (XSTEP).
    pub(super) fn a_steps(&self) -> (usize, usize) {
        match self.a_row_stride {
            Some(stride) => (stride, 4),
            None => (PANEL_ROW_BYTES, 4 * self.m),
        }
    }

    /// Whether A's row stride, if any, is one the kernel takes: a multiple of 8 bytes holding
    /// the row's K-blocks, at most [`MAX_ROW_STRIDE_BYTES`], K a whole number of K-blocks of
    /// `block` values.
    pub fn a_rows_fit(&self, block: usize) -> bool {
        self.a_row_stride.is_none_or(|stride| {
            self.k.is_multiple_of(block)
                && stride.is_multiple_of(8)
                && stride >= self.k / block * PANEL_ROW_BYTES
                && stride <= MAX_ROW_STRIDE_BYTES
        })
    }

    pub(super) fn n_blocks(&self) -> usize {
        self.n.div_ceil(AMP_CHANNELS)
    }

    pub(super) fn row_stride(&self) -> usize {
        self.n_blocks() * AMP_CHANNELS * 2
    }
}

fn format_name(format: Fp8Format) -> &'static str {
    match format {
        Fp8Format::F143 => "F143",
        Fp8Format::F152 => "F152",
    }
}

fn region_name(region: Region) -> &'static str {
    match region {
        Region::Standard => "std",
        Region::Interleaved => "il",
    }
}

impl AmpGemm {
    /// Builds a case from its spec (the data come from `spec.seed`).
    pub fn make_case(&self, spec: &GemmSpec) -> Case {
        let p = self.precision;
        let (m, k, n) = (spec.m, spec.k, spec.n);
        assert!(m >= 1 && k >= 1 && n >= 1, "empty GEMM");
        let nbs = spec.n_blocks();
        let kbs = layout::k_blocks(k, p.block());
        let np = nbs * AMP_CHANNELS;
        let rs = spec.row_stride();
        assert!(
            rs <= MAX_ROW_STRIDE_BYTES,
            "N too large for the pace stride field"
        );
        let mut rng = Rng::new(spec.seed);
        let (a, b) = random_operands(p, spec, &mut rng);
        assert!(
            spec.a_rows_fit(p.block()),
            "A's row stride {:?} does not fit K = {k}",
            spec.a_row_stride
        );
        let a_bytes = match spec.a_row_stride {
            None => match p {
                Precision::Fp8 => layout::fp8_to_panels(&a, m, k, m),
                Precision::F16 => layout::f16_to_panels(&bytes::to_u16(&a), m, k, m),
            },
            // Rows at the stride; the bytes between them a pattern the kernel must not read.
            Some(stride) => {
                let row = k * p.element_bytes();
                let mut out = vec![0xA5u8; (m - 1) * stride + row];
                for r in 0..m {
                    out[r * stride..r * stride + row].copy_from_slice(&a[r * row..(r + 1) * row]);
                }
                out
            }
        };
        let (ra, xstep) = spec.a_steps();
        let blocks = layout::weights_to_cwei_blocks(&b, k, n, p.element_bytes());
        let mut buffers = vec![
            Buffer::input("a", a_bytes, spec.a_region, Some(SLOT_A)),
            Buffer {
                align: 16,
                ..Buffer::input("b", blocks, Region::Interleaved, spec.b_slot)
            },
        ];
        if spec.partials {
            let c0 = random_partials(spec.data, m * np, &mut rng);
            buffers.push(Buffer::input(
                "c0",
                bytes::from_u16(&c0),
                spec.c0_region,
                Some(SLOT_C0),
            ));
        }
        buffers.push(Buffer {
            align: 16,
            ..Buffer::output("c", m * rs, Region::Interleaved, Some(SLOT_C))
        });
        buffers.push(Buffer::scratch("s", SCRATCH_BYTES, Region::Standard));
        let index_of = |name: &str| {
            buffers
                .iter()
                .position(|b| b.name == name)
                .expect("every name asked for is a buffer pushed above")
        };
        let address = |name: &str| VertexWord::Address {
            buffer: index_of(name),
            offset: 0,
        };
        let mut vertex = vec![VertexWord::Value(0); V_WORKERS];
        vertex[V_A] = address("a");
        vertex[V_B] = address("b");
        vertex[V_C] = address("c");
        vertex[V_C0] = if spec.partials {
            address("c0")
        } else {
            VertexWord::Value(0)
        };
        vertex[V_S] = address("s");
        vertex[V_M] = VertexWord::Value(m as u32);
        vertex[V_KBS] = VertexWord::Value(kbs as u32);
        vertex[V_NBS] = VertexWord::Value(nbs as u32);
        let chain = chains(m as u32, kbs, rs);
        vertex[V_FLAGS] = VertexWord::Value(
            if spec.partials { FLAG_PARTIALS } else { 0 } | if chain { FLAG_CHAIN } else { 0 },
        );
        vertex[V_XSTEP] = VertexWord::Value(xstep as u32);
        let stride = ((rs / 8 - 3) as u32 & 0x3ff) | ((ra / 8 - 3) as u32 & 0x3ff) << A_JUMP_SHIFT;
        for (first, count) in super::estimate::rows_split(m as u32) {
            let at = |name: &str, offset: u32| VertexWord::Address {
                buffer: index_of(name),
                offset,
            };
            vertex.extend([
                at("a", first * ra as u32),
                at("c", first * rs as u32),
                if spec.partials {
                    at("c0", first * rs as u32)
                } else {
                    VertexWord::Value(0)
                },
                VertexWord::Value(count.wrapping_sub(3)),
                VertexWord::Value(stride | if count < 3 { SLOW_FLAG } else { 0 }),
                address("s"),
                VertexWord::Value(rs as u32),
                VertexWord::Value(count),
                // The chained launches' resumed stores and row wrap (unused unless chained).
                VertexWord::Value((count.max(2) - 2) * rs as u32 + 16),
                VertexWord::Value({
                    // Field 0 the wrap to row 0, field 1 to the next column block's row 0.
                    let wrap = row_wrap(count, rs).unwrap_or(0);
                    stride & !0xfffff | wrap | ((wrap + 4) & 0x3ff) << 10
                }),
            ]);
        }
        debug_assert_eq!(vertex.len(), V_WORKERS + WORKERS * RECORD_WORDS);
        let infmt = spec.x_format.format_bit() << 1 | spec.w_format.format_bit();
        let mut name = format!("m={m} k={k} n={n}");
        if p == Precision::Fp8 {
            name += &format!(
                " {}x{} scale={}",
                format_name(spec.x_format),
                format_name(spec.w_format),
                spec.scale
            );
        }
        name += if spec.partials {
            " +C0"
        } else {
            " zero-partials"
        };
        name += &format!(" {:?} A:{}", spec.data, region_name(spec.a_region));
        if let Some(stride) = spec.a_row_stride {
            name += &format!(" A-rows={stride}");
        }
        if spec.partials {
            name += &format!(" C0:{}", region_name(spec.c0_region));
        }
        if let Some(slot) = spec.b_slot {
            name += &format!(" B-slot={slot}");
        }
        Case {
            kernel: self.name().into(),
            name,
            buffers,
            vertex,
            supervisor_csrs: vec![
                (index::FP_INFMT, infmt),
                (index::FP_ISCL, scale_to_field(spec.scale)),
            ],
        }
    }
}

/// Whether a case fits one tile, counting buffers the way the checker places them (each change
/// of element slot starts a new 16 KiB element or 32 KiB pair; 16 KiB reserved in the standard
/// region for code, vertex and worker scratch).
pub fn fits(precision: Precision, spec: &GemmSpec) -> bool {
    let kbs = layout::k_blocks(spec.k, precision.block());
    let nbs = spec.n_blocks();
    let c_bytes = spec.m * spec.row_stride();
    let mut standard = 16 << 10;
    let mut interleaved = 0;
    let mut add = |region: Region, bytes: usize| match region {
        Region::Standard => standard += bytes.div_ceil(16 << 10) * (16 << 10),
        Region::Interleaved => interleaved += (bytes + 64).div_ceil(32 << 10) * (32 << 10),
    };
    let (ra, _) = spec.a_steps();
    add(
        spec.a_region,
        match spec.a_row_stride {
            Some(_) => (spec.m - 1) * ra + kbs * PANEL_ROW_BYTES,
            None => kbs * spec.m * PANEL_ROW_BYTES,
        },
    );
    add(Region::Interleaved, nbs * kbs * WEIGHT_BLOCK_BYTES);
    if spec.partials {
        add(spec.c0_region, c_bytes);
    }
    add(Region::Interleaved, c_bytes);
    spec.row_stride() <= MAX_ROW_STRIDE_BYTES
        && spec.a_rows_fit(precision.block())
        && standard <= 208 << 10
        && interleaved <= 416 << 10
}

#[cfg(test)]
mod tests {
    use super::super::GEMM_FP8;
    use super::*;
    use crate::case::Role;

    #[test]
    fn vertex_records_follow_the_split() {
        let case = GEMM_FP8.make_case(&GemmSpec::new(13, 40, 20));
        assert_eq!(case.vertex.len(), V_WORKERS + WORKERS * RECORD_WORDS);
        // 13 rows: 4, 3, 3, 3 and two idle workers (`rows_split`: no worker with 1 or 2 rows);
        // Np = 32, RS = 64, row jump 64/8 - 3 = 5.
        let record = |w: usize, word: usize| case.vertex[V_WORKERS + RECORD_WORDS * w + word];
        let value = |w: usize, word: usize| case.word(V_WORKERS + RECORD_WORDS * w + word);
        // A in panels: row jump 32/8 - 3 = 1 in field 2.
        let a_jump = 1 << A_JUMP_SHIFT;
        assert_eq!((value(0, 3), value(0, 4), value(0, 7)), (1, 5 | a_jump, 4));
        assert_eq!(
            (value(1, 3) as i32, value(1, 4), value(1, 6), value(1, 7)),
            (0, 5 | a_jump, 64, 3)
        );
        assert_eq!(
            (value(4, 3) as i32, value(4, 4), value(4, 7)),
            (-3, 5 | a_jump | SLOW_FLAG, 0),
            "an idle worker takes the plain loop's exit"
        );
        assert_eq!(case.word(V_XSTEP), 4 * 13);
        let (a, c) = (case.buffer_index("a"), case.buffer_index("c"));
        assert_eq!(
            record(1, 0),
            VertexWord::Address {
                buffer: a,
                offset: 4 * 32
            }
        );
        assert_eq!(
            record(1, 1),
            VertexWord::Address {
                buffer: c,
                offset: 4 * 64
            }
        );
        assert_eq!(record(1, 2), VertexWord::Value(0), "no C0");
        assert_eq!(case.word(V_KBS), 2);
        assert_eq!(case.word(V_NBS), 2);
        assert!(case
            .buffers
            .iter()
            .any(|b| b.name == "c" && b.role == Role::Output && b.len() == 13 * 64));
    }

    /// The row wrap is the pace field's signed 10-bit atom count back from row count − 1's
    /// last atom to row 0, and a product chains only where every worker's wrap fits.
    #[test]
    fn the_row_wrap_fits_the_pace_field_or_the_product_does_not_chain() {
        // 8 rows of 18 column blocks (RS = 576 bytes, 72 atoms): 7 · 72 + 3 = 507 atoms back.
        assert_eq!(row_wrap(8, 576), Some((1024 - 507) as u32));
        assert_eq!(row_wrap(8, 19 * 32), None, "7 · 76 + 3 = 535 atoms");
        assert_eq!(row_wrap(1, 32), Some(1024 - 3));
        assert!(chains(48, 3, 576));
        assert!(!chains(48, 3, 19 * 32));
        assert!(!chains(23, 3, 64), "a worker with 3 rows");
        assert!(!chains(24, 2, 64), "two K-blocks");
        assert!(chains(24, 3, 64));
    }
}
