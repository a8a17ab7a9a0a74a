//! The kernel table: one row per kernel ([`KernelId`] → its [`Kernel`]: name, source, entry,
//! entry kind, ABI, references and cycle estimate), and [`KernelParams`], the typed parameters
//! the compiler calls kernels through.
//!
//! The compiler never names a kernel by a string and never builds a checker [`Case`]: it states
//! a call as `KernelParams` (shapes, formats, scales, tables), and asks the params for what it
//! needs — the operands and where they may live ([`KernelParams::operands`]), the vertex words,
//! the supervisor CSRs, the estimate, and the bit-exact reference on given operand bytes. Behind
//! that, each call is the kernel's own case constructor with zeroed data (a *template*, made
//! once per distinct params and shared), so the checker and the compiler run the same ABI.
//!
//! Adding a kernel: a variant of [`KernelId`] and of [`KernelParams`]; every `match` below is
//! exhaustive, so the compiler points at what is missing.

use crate::case::{Buffer, Case, Region, Role, VertexWord};
use crate::elementwise::common::Fp8Out;
use crate::gemm::{GemmSpec, Precision, GEMM_F16, GEMM_FP8};
use crate::norm::layernorm::{Fp8Out as LnFp8, LnSpec, LAYERNORM_F16, LAYERNORM_FP8};
use crate::{EntryKind, Kernel};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tessera_isa::numerics::Fp8Format;

/// Every kernel of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelId {
    GemmFp8,
    GemmF16,
    LayerNormF16,
    LayerNormFp8,
    AddLayerNormMoments,
    SoftmaxF16,
    BiasAddF16,
    ResidualAddF16,
    GeluF16,
    GeluFp8,
    GeluFp8Panels,
    CastF16Fp8Panels,
    PanelizeFp8,
}

impl KernelId {
    /// Every kernel, in library order (the order code is packed in).
    pub const ALL: &'static [KernelId] = &[
        KernelId::ResidualAddF16,
        KernelId::PanelizeFp8,
        KernelId::BiasAddF16,
        KernelId::CastF16Fp8Panels,
        KernelId::GeluF16,
        KernelId::GeluFp8,
        KernelId::GeluFp8Panels,
        KernelId::SoftmaxF16,
        KernelId::LayerNormF16,
        KernelId::LayerNormFp8,
        KernelId::AddLayerNormMoments,
        KernelId::GemmFp8,
        KernelId::GemmF16,
    ];

    /// The kernel's row: its code, ABI, references and estimate.
    pub fn kernel(self) -> &'static dyn Kernel {
        use crate::elementwise::{BiasAdd, CastPanels, Gelu, GeluOutput, Softmax};
        static GELU_F16: Gelu = Gelu(GeluOutput::F16);
        static GELU_FP8: Gelu = Gelu(GeluOutput::Fp8);
        static GELU_FP8_PANELS: Gelu = Gelu(GeluOutput::Fp8Panels);
        match self {
            KernelId::GemmFp8 => &GEMM_FP8,
            KernelId::GemmF16 => &GEMM_F16,
            KernelId::LayerNormF16 => &LAYERNORM_F16,
            KernelId::LayerNormFp8 => &LAYERNORM_FP8,
            KernelId::AddLayerNormMoments => &crate::norm::add_layernorm_moments::ADD_LAYERNORM_MOMENTS,
            KernelId::SoftmaxF16 => &Softmax,
            KernelId::BiasAddF16 => &BiasAdd,
            KernelId::ResidualAddF16 => &crate::residual_add::ResidualAdd,
            KernelId::GeluF16 => &GELU_F16,
            KernelId::GeluFp8 => &GELU_FP8,
            KernelId::GeluFp8Panels => &GELU_FP8_PANELS,
            KernelId::CastF16Fp8Panels => &CastPanels,
            KernelId::PanelizeFp8 => &crate::panelize::PANELIZE_FP8,
        }
    }

    pub fn name(self) -> &'static str {
        self.kernel().name()
    }

    /// The kernel with this registry name.
    pub fn from_name(name: &str) -> Option<KernelId> {
        KernelId::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// An FP8 output setting: format, tensor scale (FP8 code × 2^scale = real value) and NANOO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fp8Setting {
    pub format: Fp8Format,
    pub scale: i8,
    pub nanoo: bool,
}

/// The output of an elementwise kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementOut {
    F16,
    Fp8(Fp8Setting),
}

/// `C = A × B` on the AMP (the GEMM kernels' vertex; see `gemm/amp_gemm.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemmParams {
    /// FP8 (`f8v8hihov4amp`) or F16 (`f16v4hihov4amp`).
    pub fp8: bool,
    /// Rows of A and C.
    pub m: u32,
    pub k: u32,
    /// Columns of C (padded to whole 16-column blocks by the kernel).
    pub n: u32,
    /// FP8 formats of A and B (ignored in F16).
    pub a_format: Fp8Format,
    pub b_format: Fp8Format,
    /// `$FP_ISCL`: the sum of the two tensor scales (FP8 only).
    pub scale: i32,
}

/// One kernel call's typed parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KernelParams {
    Gemm(GemmParams),
    /// Row LayerNorm over `rows × n` dense f16 (gamma, beta f32), f16 or FP8 out.
    LayerNorm { rows: u32, n: u32, eps_bits: u32, out: ElementOut },
    /// Row softmax of `rows` rows of `cols` halves, `in_stride` halves apart, scale (f32 bits).
    Softmax { rows: u32, cols: u32, in_stride: u32, scale_bits: u32 },
    /// `x[r, c] += bias[c]` over `rows × cols` halves (cols % 4 == 0).
    BiasAdd { rows: u32, cols: u32 },
    /// `out = a + b` over `n` halves.
    ResidualAdd { n: u32 },
    /// tanh GeLU over `n` halves, f16 or packed FP8 out.
    Gelu { n: u32, out: ElementOut },
}

/// Why params do not describe a call the kernel can make.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("E-KPARAM-001 {kernel}: {reason}")]
pub struct KernelParamError {
    pub kernel: &'static str,
    pub reason: String,
}

/// Where an operand may live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegionNeed {
    Any,
    Standard,
    Interleaved,
}

/// One operand of a call, in the kernel's buffer order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandSpec {
    pub name: String,
    pub role: Role,
    pub bytes: u32,
    pub align: u32,
    pub region: RegionNeed,
    /// Operands with different slots must be in different memory elements.
    pub slot: Option<u8>,
    /// Contents that are part of the params (tables): the caller places them as constants.
    pub constant: Option<Arc<Vec<u8>>>,
}

fn templates() -> &'static Mutex<HashMap<KernelParams, Arc<Case>>> {
    static TEMPLATES: OnceLock<Mutex<HashMap<KernelParams, Arc<Case>>>> = OnceLock::new();
    TEMPLATES.get_or_init(Default::default)
}

fn fp8_out(s: Fp8Setting) -> Fp8Out {
    Fp8Out::new(s.format, s.scale as i32, s.nanoo)
}

impl KernelParams {
    pub fn id(&self) -> KernelId {
        match self {
            KernelParams::Gemm(g) => {
                if g.fp8 {
                    KernelId::GemmFp8
                } else {
                    KernelId::GemmF16
                }
            }
            KernelParams::LayerNorm { out, .. } => match out {
                ElementOut::F16 => KernelId::LayerNormF16,
                ElementOut::Fp8(_) => KernelId::LayerNormFp8,
            },
            KernelParams::Softmax { .. } => KernelId::SoftmaxF16,
            KernelParams::BiasAdd { .. } => KernelId::BiasAddF16,
            KernelParams::ResidualAdd { .. } => KernelId::ResidualAddF16,
            KernelParams::Gelu { out, .. } => match out {
                ElementOut::F16 => KernelId::GeluF16,
                ElementOut::Fp8(_) => KernelId::GeluFp8,
            },
        }
    }

    pub fn kernel(&self) -> &'static dyn Kernel {
        self.id().kernel()
    }

    /// Checks the kernel's preconditions (so building its template cannot fail).
    pub fn check(&self) -> Result<(), KernelParamError> {
        let fail = |reason: String| {
            Err(KernelParamError {
                kernel: self.id().name(),
                reason,
            })
        };
        match *self {
            KernelParams::Gemm(g) => {
                if g.m == 0 || g.k == 0 || g.n == 0 {
                    return fail(format!("empty GEMM {}x{}x{}", g.m, g.k, g.n));
                }
                if g.n.div_ceil(16) * 32 > crate::gemm::MAX_ROW_STRIDE_BYTES as u32 {
                    return fail(format!("{} columns exceed the row-stride field", g.n));
                }
            }
            KernelParams::LayerNorm { rows, n, eps_bits, .. } => {
                let eps = f32::from_bits(eps_bits);
                if rows == 0 || n == 0 || (rows > 1 && n % 4 != 0) || !(eps.is_finite() && eps >= 0.0) {
                    return fail(format!("{rows} rows of {n} (rows > 1 needs n % 4 == 0), eps {eps}"));
                }
            }
            KernelParams::Softmax { rows, cols, in_stride, scale_bits } => {
                let s = f32::from_bits(scale_bits);
                if rows == 0 || cols == 0 || in_stride % 4 != 0 || in_stride < cols || !(s.is_finite() && s > 0.0) {
                    return fail(format!("{rows} rows of {cols}, stride {in_stride}, scale {s}"));
                }
            }
            KernelParams::BiasAdd { rows, cols } => {
                if rows == 0 || cols == 0 || cols % 4 != 0 {
                    return fail(format!("{rows} rows of {cols} (needs cols % 4 == 0)"));
                }
            }
            KernelParams::ResidualAdd { n } | KernelParams::Gelu { n, .. } => {
                if n == 0 {
                    return fail("no elements".into());
                }
            }
        }
        Ok(())
    }

    fn build(&self) -> Case {
        match *self {
            KernelParams::Gemm(g) => {
                let mut spec = GemmSpec::new(g.m as usize, g.k as usize, g.n as usize);
                spec.partials = false;
                spec.x_format = g.a_format;
                spec.w_format = g.b_format;
                spec.scale = g.scale;
                spec.a_region = Region::Standard;
                if g.fp8 {
                    GEMM_FP8.make_case(&spec)
                } else {
                    GEMM_F16.make_case(&spec)
                }
            }
            KernelParams::LayerNorm { rows, n, eps_bits, out } => {
                let (rows, n) = (rows as usize, n as usize);
                let fp8 = match out {
                    ElementOut::F16 => None,
                    ElementOut::Fp8(s) => Some(LnFp8 {
                        format: s.format,
                        scl: -(s.scale as i32),
                        nanoo: s.nanoo,
                    }),
                };
                let spec = LnSpec {
                    label: "compiled".into(),
                    rows,
                    n,
                    x: vec![0; rows * n],
                    gamma: vec![0.0; n],
                    beta: vec![0.0; n],
                    eps: f32::from_bits(eps_bits),
                    regions: [Region::Standard; 4],
                    // The deviation buffer saves the normalising pass from recomputing x − mean.
                    dev: true,
                    fp8,
                };
                if fp8.is_some() {
                    LAYERNORM_FP8.make_case(spec)
                } else {
                    LAYERNORM_F16.make_case(spec)
                }
            }
            KernelParams::Softmax { rows, cols, in_stride, scale_bits } => crate::elementwise::softmax_case(
                rows as usize,
                cols as usize,
                in_stride as usize,
                f32::from_bits(scale_bits),
            ),
            KernelParams::BiasAdd { rows, cols } => crate::elementwise::bias_add_case(rows as usize, cols as usize),
            KernelParams::ResidualAdd { n } => crate::residual_add_case(n as usize),
            KernelParams::Gelu { n, out } => match out {
                ElementOut::F16 => crate::elementwise::gelu_case(
                    n as usize,
                    crate::elementwise::GeluOutput::F16,
                    Fp8Out::new(Fp8Format::F143, 0, false),
                ),
                ElementOut::Fp8(s) => crate::elementwise::gelu_case(n as usize, crate::elementwise::GeluOutput::Fp8, fp8_out(s)),
            },
        }
    }

    /// The call's template case (zeroed data), made once per distinct params.
    pub fn template(&self) -> Result<Arc<Case>, KernelParamError> {
        if let Some(case) = templates().lock().unwrap_or_else(|e| e.into_inner()).get(self) {
            return Ok(case.clone());
        }
        self.check()?;
        let case = Arc::new(self.build());
        Ok(templates()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(self.clone())
            .or_insert(case)
            .clone())
    }

    /// Where operand `index` may live (the kernel's memory rules; `Any` unless it says otherwise).
    fn region_need(&self, index: usize, buffer: &Buffer) -> RegionNeed {
        match self {
            // B (ld128putcs) and C (interleaved pairs for the in-place partials) are interleaved.
            KernelParams::Gemm(_) => match buffer.name.as_str() {
                "b" | "c" => RegionNeed::Interleaved,
                _ => {
                    let _ = index;
                    RegionNeed::Any
                }
            },
            KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::BiasAdd { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. } => RegionNeed::Any,
        }
    }

    /// The operands in the kernel's buffer order.
    pub fn operands(&self) -> Result<Vec<OperandSpec>, KernelParamError> {
        let case = self.template()?;
        Ok(case
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| OperandSpec {
                name: b.name.clone(),
                role: b.role,
                bytes: b.len() as u32,
                align: b.align.max(8),
                region: self.region_need(i, b),
                slot: b.element_slot,
                constant: None,
            })
            .collect())
    }

    pub fn vertex(&self) -> Result<Vec<VertexWord>, KernelParamError> {
        Ok(self.template()?.vertex.clone())
    }

    pub fn supervisor_csrs(&self) -> Result<Vec<(u8, u32)>, KernelParamError> {
        Ok(self.template()?.supervisor_csrs.clone())
    }

    /// The kernel's own estimate of the whole call, in tile cycles.
    pub fn estimate_cycles(&self) -> Result<u64, KernelParamError> {
        Ok(self.kernel().estimate_cycles(&*self.template()?))
    }

    /// The entry kind (worker or supervisor kernel).
    pub fn entry_kind(&self) -> EntryKind {
        self.kernel().entry_kind()
    }

    /// A short description for comments and reports (the template's name).
    pub fn describe(&self) -> String {
        match self.template() {
            Ok(case) => case.name.clone(),
            Err(e) => e.to_string(),
        }
    }

    /// The bit-exact result: the bytes of every output operand for the given bytes of every
    /// operand (inputs as read, outputs and scratch as they are before the call).
    pub fn reference(&self, operands: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, KernelParamError> {
        let template = self.template()?;
        let fail = |reason: String| KernelParamError {
            kernel: self.id().name(),
            reason,
        };
        if operands.len() != template.buffers.len() {
            return Err(fail(format!("{} operands for {} buffers", operands.len(), template.buffers.len())));
        }
        let mut case = (*template).clone();
        for (buffer, bytes) in case.buffers.iter_mut().zip(operands) {
            if bytes.len() != buffer.len() {
                return Err(fail(format!("{} bytes for `{}` ({} bytes)", bytes.len(), buffer.name, buffer.len())));
            }
            buffer.bytes = bytes;
        }
        let results = self.kernel().reference(&case);
        if results.len() != case.outputs().len() {
            return Err(fail(format!("the reference gave {} outputs", results.len())));
        }
        Ok(results)
    }
}

/// The `Precision` of a GEMM's params.
pub fn gemm_precision(g: &GemmParams) -> Precision {
    if g.fp8 {
        Precision::Fp8
    } else {
        Precision::F16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_one_row_and_its_name() {
        let all = crate::all_kernels();
        assert_eq!(KernelId::ALL.len(), all.len());
        for (id, k) in KernelId::ALL.iter().zip(&all) {
            assert_eq!(id.kernel().name(), k.name());
            assert_eq!(KernelId::from_name(k.name()), Some(*id));
        }
    }

    #[test]
    fn params_give_templates_and_refuse_bad_shapes() {
        let p = KernelParams::BiasAdd { rows: 3, cols: 8 };
        let ops = p.operands().unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[0].bytes, 3 * 8 * 2);
        assert!(Arc::ptr_eq(&p.template().unwrap(), &p.template().unwrap()));
        assert!(KernelParams::BiasAdd { rows: 3, cols: 6 }.template().is_err());
        let g = KernelParams::Gemm(GemmParams {
            fp8: true,
            m: 5,
            k: 64,
            n: 40,
            a_format: Fp8Format::F143,
            b_format: Fp8Format::F143,
            scale: -14,
        });
        let ops = g.operands().unwrap();
        assert_eq!(ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "s"]);
        assert_eq!(ops[1].region, RegionNeed::Interleaved);
        assert!(g.estimate_cycles().unwrap() > 0);
        let zeros: Vec<Vec<u8>> = ops.iter().map(|o| vec![0; o.bytes as usize]).collect();
        let out = g.reference(zeros).unwrap();
        assert_eq!(out.len(), 1);
        assert!(out[0].iter().all(|&b| b == 0));
    }
}
