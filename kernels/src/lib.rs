//! Tile kernels for a ViT encoder, written in ipu21 assembly (`kernels/asm/*.S`), each with its
//! ABI (vertex state), memory requirements, a bit-exact Rust reference written from the
//! specification, a cycle estimate, and a case generator. Depends only on `tessera-isa`; the
//! checker that runs cases on the simulator is `tessera check kernels` in the top package.
//!
//! Kernels are worker code (`EntryKind::Worker`, started by a harness- or compiler-generated
//! supervisor with `runall entry, vertex, 0`; each worker finds its share from `$WSR`) or
//! supervisor code (`EntryKind::Supervisor`: it loads AMP weights, `runall`s its own workers,
//! syncs, and returns with `br $m10`).

pub mod case;
pub mod convert;

pub mod elementwise;
pub mod error;
pub mod gemm;
pub mod layout;
pub mod movement;
pub mod norm;
pub mod panelize;
mod residual_add;
pub mod split;
pub mod table;

pub use case::{Buffer, Case, Region, Role, VertexWord};
pub use residual_add::compiler_case as residual_add_case;

/// How a kernel starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// Worker entry: the supervisor runs `runall entry, vertex, 0` (all six workers share one
    /// vertex state), then `sync 2`.
    Worker,
    /// Supervisor entry with `$mvertex_base` = the vertex state; ends with `br $m10`.
    Supervisor,
}

/// A kernel: its code and everything needed to check it.
pub trait Kernel: Sync {
    /// Short unique name (used by `--filter`).
    fn name(&self) -> &'static str;
    /// IPU assembly source.
    fn source(&self) -> &'static str;
    /// Entry symbol: the kernel's name unless a kernel says otherwise.
    fn entry(&self) -> &'static str {
        self.name()
    }
    fn entry_kind(&self) -> EntryKind;
    /// The ABI and memory requirements, in words (for the report and the docs).
    fn abi(&self) -> &'static str;
    /// The deterministic default cases.
    fn cases(&self) -> Vec<Case>;
    /// One random case from a seed (the checker's random mode).
    fn random_case(&self, seed: u64) -> Case;
    /// Expected bytes of every output buffer, in buffer order.
    fn reference(&self, case: &Case) -> Vec<Vec<u8>>;
    /// Estimated cycles for the whole invocation (supervisor start to return).
    fn estimate_cycles(&self, case: &Case) -> u64;
}

/// The four [`Kernel`] methods that are constants for most kernels (`name`, `source`,
/// `entry_kind`, `abi`), written as one block at the top of the `impl`; the methods that
/// compute something follow as usual:
///
/// ```text
/// impl Kernel for Softmax {
///     kernel_consts! {
///         name: NAME,
///         source: include_str!("../../asm/softmax_f16.S"),
///         entry_kind: Worker,
///         abi: "vertex: x, out, ...",
///     }
///
///     fn cases(&self) -> Vec<Case> { ... }
/// }
/// ```
///
/// (`include_str!` paths stay relative to the file that names them.) Kernels whose name or
/// source depends on a variant (the GEMMs, LayerNorm, GeLU) write the methods out.
macro_rules! kernel_consts {
    (
        name: $name:expr,
        source: $source:expr,
        entry_kind: $kind:ident,
        abi: $abi:expr $(,)?
    ) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn source(&self) -> &'static str {
            $source
        }

        fn entry_kind(&self) -> $crate::EntryKind {
            $crate::EntryKind::$kind
        }

        fn abi(&self) -> &'static str {
            $abi
        }
    };
}
pub(crate) use kernel_consts;

/// Every kernel in the library.
pub fn all_kernels() -> Vec<&'static dyn Kernel> {
    table::KernelId::ALL.iter().map(|k| k.kernel()).collect()
}

/// Cycles the harness's generated supervisor adds around a worker kernel: set-up puts, `runall`
/// (6-cycle stall) after waiting 5 cycles for the vertex address its `mov` wrote (a supervisor
/// result is read 6 cycles after its instruction, `stalls.result_use`), the local `sync`
/// release (6), and `br $m10` (6). Estimates add this.
pub const WORKER_LAUNCH_OVERHEAD_CYCLES: u64 = 5 + 6 + 6 + 6;
