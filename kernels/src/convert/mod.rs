//! Flat casts (registered in `crate::all_kernels`): `cast_f32_f16` (float32 → float16, RNE) and
//! `cast_f16_fp8` (float16 → FP8 codes under the FP8 CSRs), both over n values in row-major
//! order, four or eight values per bundle with the FAST placement.

mod f16_fp8;
mod f32_f16;
pub mod groups;

use crate::Kernel;

pub use f16_fp8::{compiler_case as cast_f16_fp8_case, CastF16Fp8, CastF16Fp8Params};
pub use f32_f16::{compiler_case as cast_f32_f16_case, CastF32F16, CastF32F16Params};
pub use groups::Placement;

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![&CastF32F16, &CastF16Fp8]
}
