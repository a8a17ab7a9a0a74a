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

mod amp_gemm;

pub use amp_gemm::{AmpGemm, Data, GemmSpec, Precision, GEMM_F16, GEMM_FP8, MAX_ROW_STRIDE_BYTES};

use crate::Kernel;

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![&GEMM_FP8, &GEMM_F16]
}
