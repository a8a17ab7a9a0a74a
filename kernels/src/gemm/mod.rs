//! GEMM kernels on the AMP (registered in `crate::all_kernels`):
//!
//! * `gemm_fp8` (`f8v8hihov4amp`): C (M × Np f16) = A (M × K FP8, AMP-left panels) × B (K × N
//!   FP8 weights in `$CWEI` block order) + C0 (optional f16 partial sums), formats from
//!   `$FP_INFMT`, scale from `$FP_ISCL`.
//! * `gemm_f16` (`f16v4hihov4amp`): the same with f16 panels and weights (attention scores and
//!   attention × V).
//!
//! Both are supervisor kernels with the same ABI and the same code structure
//! (`kernels/asm/gemm_fp8.S` documents it; `gemm_f16.S` has the same code after its header).
//! This module holds the two kernels ([`AmpGemm`]) and their `Kernel` rows; beside it:
//!
//! * `abi`: the vertex words, buffers and CSRs, [`GemmSpec`] and the case constructor
//!   ([`AmpGemm::make_case`]), whether a case fits a tile;
//! * `data`: the data distributions ([`Data`]) and the random operands;
//! * `reference`: the bit-exact reference (the AMP numerics, K-block by K-block);
//! * `estimate`: the cycle estimate from the code structure;
//! * `cases`: the default case tables and the random case.

mod abi;
mod cases;
mod data;
mod estimate;
mod reference;

pub use abi::{GemmSpec, MAX_ROW_STRIDE_BYTES, SLOT_A, SLOT_C};
pub use data::Data;

use crate::case::Case;
use crate::{layout, EntryKind, Kernel};
use layout::AMP_CHANNELS;

/// Which AMP instruction the kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// `f8v8hihov4amp`: 32 FP8 values per K-block.
    Fp8,
    /// `f16v4hihov4amp`: 16 f16 values per K-block.
    F16,
}

impl Precision {
    /// Values per K-block.
    pub fn block(self) -> usize {
        match self {
            Precision::Fp8 => layout::FP8_BLOCK,
            Precision::F16 => layout::F16_BLOCK,
        }
    }

    fn element_bytes(self) -> usize {
        match self {
            Precision::Fp8 => 1,
            Precision::F16 => 2,
        }
    }

    /// Multiply-accumulates one AMP call does (16 channels × values per phase).
    pub fn macs_per_call(self) -> u64 {
        (AMP_CHANNELS * self.block() / 4) as u64
    }
}

/// One of the two AMP GEMM kernels.
pub struct AmpGemm {
    pub precision: Precision,
}

pub static GEMM_FP8: AmpGemm = AmpGemm {
    precision: Precision::Fp8,
};
pub static GEMM_F16: AmpGemm = AmpGemm {
    precision: Precision::F16,
};

impl Kernel for AmpGemm {
    fn name(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => "gemm_fp8",
            Precision::F16 => "gemm_f16",
        }
    }

    fn source(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => concat!(
                include_str!("../../asm/gemm_fp8.S"),
                include_str!("../../asm/gemm_amp_body.S")
            ),
            Precision::F16 => concat!(
                include_str!("../../asm/gemm_f16.S"),
                include_str!("../../asm/gemm_amp_body.S")
            ),
        }
    }

    fn entry_kind(&self) -> EntryKind {
        EntryKind::Supervisor
    }

    fn abi(&self) -> &'static str {
        match self.precision {
            Precision::Fp8 => {
                "supervisor; vertex: A (FP8 panels or rows), B ($CWEI blocks, interleaved, 16-aligned), C (M x Np f16, \
                 interleaved, 16-aligned), C0, S (16 B scratch), M, kbs, nbs, flags (bit 0: add C0, bit 1: K-blocks chained), XSTEP (atoms from K-block kb to kb+1), 0 x6, 6 worker records \
                 (A+RA*first, C+RS*first, C0+RS*first, count-3, RS/8-3 | (RA/8-3)<<20 | bit 31 if count<3, S, RS, count, C+RS*(first+count-2)+16, the stride with field 0 the row wrap); 20 B worker \
                 scratch; A, C0, C in different element slots; $FP_INFMT = fmt(A)<<1 | fmt(B), $FP_ISCL = scale"
            }
            Precision::F16 => {
                "supervisor; vertex: A (f16 panels or rows), B ($CWEI blocks, interleaved, 16-aligned), C (M x Np f16, \
                 interleaved, 16-aligned), C0, S (16 B scratch), M, kbs, nbs, flags (bit 0: add C0, bit 1: K-blocks chained), XSTEP (atoms from K-block kb to kb+1), 0 x6, 6 worker records \
                 (A+RA*first, C+RS*first, C0+RS*first, count-3, RS/8-3 | (RA/8-3)<<20 | bit 31 if count<3, S, RS, count, C+RS*(first+count-2)+16, the stride with field 0 the row wrap); 20 B worker \
                 scratch; A, C0, C in different element slots"
            }
        }
    }

    fn cases(&self) -> Vec<Case> {
        self.specs()
            .iter()
            .map(|spec| self.make_case(spec))
            .collect()
    }

    fn random_case(&self, seed: u64) -> Case {
        cases::random_case(self, seed)
    }

    fn reference(&self, case: &Case) -> Vec<Vec<u8>> {
        reference::case_reference(self.precision, case)
    }

    fn estimate_cycles(&self, case: &Case) -> u64 {
        estimate::estimate_cycles(case)
    }
}

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![&GEMM_FP8, &GEMM_F16]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gemm_f16.S` is `gemm_fp8.S` below this line (only the headers and #defines differ).
    const SHARED_CODE_MARKER: &str = "// ==== shared code of gemm_fp8 and gemm_f16";

    #[test]
    fn the_two_sources_share_their_code() {
        let tail =
            |source: &'static str| &source[source.find(SHARED_CODE_MARKER).expect("marker")..];
        assert_eq!(tail(GEMM_FP8.source()), tail(GEMM_F16.source()));
        assert!(GEMM_FP8
            .source()
            .contains("#define AMP         f8v8hihov4amp"));
        assert!(GEMM_F16
            .source()
            .contains("#define AMP         f16v4hihov4amp"));
    }
}
