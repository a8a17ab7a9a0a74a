//! Local data movement kernels (registered in `crate::all_kernels`): `copy_runs`, table-driven
//! copies of 4- or 8-byte granules (reorders, padding, slices; `copy_runs_sup` runs small ones on
//! the supervisor), and `gather_elements`, which
//! assembles 32-bit words from f16 or FP8 elements anywhere (transposes), and `transpose4x4_f16`,
//! which transposes whole 4 × 4 blocks of f16 eight bytes at a time.

mod copy_runs;
mod gather;
pub mod items;
mod transpose4;

use crate::Kernel;

pub use copy_runs::{
    compiler_case as copy_runs_case, compiler_estimate as copy_runs_estimate,
    compiler_estimate_sup as copy_runs_sup_estimate, copy_runs_reference,
    prefers_supervisor as copy_runs_on_supervisor, sup_compiler_case as copy_runs_sup_case,
    CopyRuns, CopyRunsSpec, CopyRunsSup, Granule, Run, RunSource,
};
pub use gather::{
    compiler_case as gather_elements_case, compiler_estimate as gather_elements_estimate,
    gather_reference, Element, GatherElements, GatherSpec, GatherWord, Lane,
};
pub use transpose4::{
    compiler_case as transpose4_case, compiler_estimate as transpose4_estimate,
    transpose4_reference, Transpose4Spec, Transpose4x4F16, TransposeBlock, BLOCK_ENTRY_BYTES,
};

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![&CopyRuns, &CopyRunsSup, &GatherElements, &Transpose4x4F16]
}
