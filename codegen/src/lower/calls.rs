//! Kernel case templates for the calls the lowering makes: each kernel's own case constructor
//! with placeholder data (the compiler only needs the buffers' sizes, roles and requirements and
//! the vertex words; the reference executor fills in real data).

use crate::dist::Format;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tessera_isa::numerics::Fp8Format;
use tessera_kernels::elementwise::common::Fp8Out as ElementwiseFp8;
use tessera_kernels::elementwise::GeluOutput;
use tessera_kernels::gemm::{GemmSpec, GEMM_FP8};
use tessera_kernels::norm::layernorm::{Fp8Out as LnFp8, LnSpec, LAYERNORM_F16, LAYERNORM_FP8};
use tessera_kernels::{Case, Region, Role};

/// Case templates by shape: every tile with the same shard shape shares one template, so a
/// 1472-tile program builds each distinct case once (and the planner's candidates, lowered in
/// parallel, share them too).
static TEMPLATES: OnceLock<Mutex<HashMap<String, Arc<Case>>>> = OnceLock::new();

/// The template for `key`, built by `make` on first use. (`make` runs outside the lock: two
/// threads may both build a template, and the first stored is kept — they are equal.)
pub fn memo(key: String, make: impl FnOnce() -> Case) -> Arc<Case> {
    let templates = TEMPLATES.get_or_init(Default::default);
    if let Some(case) = templates
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
    {
        return case.clone();
    }
    let case = Arc::new(make());
    templates
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_insert(case)
        .clone()
}

/// The registry name of a case's kernel.
pub fn kernel_name(case: &Case) -> &'static str {
    tessera_kernels::all_kernels()
        .into_iter()
        .find(|k| k.name() == case.kernel)
        .map(|k| k.name())
        .expect("case of a registered kernel")
}

/// LayerNorm over `rows × n`; f16 or FP8 (scale s: codes = y · 2^−s) output. Returns the case and
/// the sizes of its scratch buffers (bound after x, gamma, beta, out).
pub fn layernorm(rows: usize, n: usize, eps: f32, out: Format) -> (Case, Vec<usize>) {
    let fp8 = match out {
        Format::Fp8 { format, scale } => Some(LnFp8 {
            format,
            scl: -(scale as i32),
            nanoo: false,
        }),
        _ => None,
    };
    let spec = LnSpec {
        label: "compiled".into(),
        rows,
        n,
        x: vec![0; rows * n],
        gamma: vec![0.0; n],
        beta: vec![0.0; n],
        eps,
        regions: [Region::Standard; 4],
        // The deviation buffer (16 bytes per 4 elements per row) saves the normalising pass
        // from recomputing x − mean: ~1,150 cycles on a 1×1152 row.
        dev: true,
        fp8,
    };
    let case = if fp8.is_some() {
        LAYERNORM_FP8.make_case(spec)
    } else {
        LAYERNORM_F16.make_case(spec)
    };
    let scratch = case
        .buffers
        .iter()
        .filter(|b| b.role == Role::Scratch)
        .map(|b| b.len())
        .collect();
    (case, scratch)
}

/// FP8 rows (stride bytes) → panels.
pub fn panelize(rows: usize, stride: usize, kbs: usize) -> Case {
    use tessera_kernels::panelize::{make_case, PanelizeSpec};
    let spec = PanelizeSpec { rows, stride, kbs };
    make_case(
        "compiled".into(),
        spec,
        vec![0; spec.source_bytes()],
        Region::Standard,
    )
}

/// C (m × n f16) = A (panels) × B ($CWEI blocks), FP8, zero partials.
pub fn gemm_fp8(
    m: usize,
    k: usize,
    n: usize,
    a_format: Fp8Format,
    w_format: Fp8Format,
    scale: i32,
) -> Case {
    let mut spec = GemmSpec::new(m, k, n);
    spec.partials = false;
    spec.x_format = a_format;
    spec.w_format = w_format;
    spec.scale = scale;
    spec.a_region = Region::Standard;
    GEMM_FP8.make_case(&spec)
}

/// x (rows × cols f16) + bias (cols), in place.
pub fn bias_add(rows: usize, cols: usize) -> Case {
    tessera_kernels::elementwise::bias_add_case(rows, cols)
}

/// GeLU over n f16 values; f16 or packed FP8 out.
pub fn gelu(n: usize, out: Format) -> Case {
    match out {
        Format::Fp8 { format, scale } => tessera_kernels::elementwise::gelu_case(
            n,
            GeluOutput::Fp8,
            ElementwiseFp8::new(format, scale as i32, false),
        ),
        _ => tessera_kernels::elementwise::gelu_case(
            n,
            GeluOutput::F16,
            ElementwiseFp8::new(Fp8Format::F143, 0, false),
        ),
    }
}

/// out = a + b over n f16 values.
pub fn residual_add(n: usize) -> Case {
    tessera_kernels::residual_add_case(n)
}
