//! What the calls of a local copy cost, for choosing between cuts of it: the copy kernels'
//! estimates from their tables alone, without building (and keeping) a template per candidate.

use tessera_kernels::table::KernelParams;

/// The estimated cycles of `calls`, from their tables alone for the element copies (a template
/// per candidate call would be built and kept for the whole run: at So400m batch 4 that held
/// gigabytes), else their templates' estimates.
pub(super) fn estimated(calls: &[KernelParams]) -> u64 {
    calls
        .iter()
        .map(|c| {
            c.table_estimate()
                .or_else(|| c.estimate_cycles().ok())
                .unwrap_or(u64::MAX / 64)
        })
        .sum()
}
