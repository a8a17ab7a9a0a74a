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

use crate::case::{Buffer, Case, Role, VertexWord};
use crate::elementwise::common::Fp8Out;
use crate::gemm::{Precision, GEMM_F16, GEMM_FP8};
use crate::norm::layernorm::{LAYERNORM_F16, LAYERNORM_FP8};
use crate::norm::layernorm_h::{LAYERNORM_H_F16, LAYERNORM_H_FP8};
use crate::{EntryKind, Kernel};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tessera_isa::numerics::Fp8Format;

mod build;
mod examples;

/// Every kernel of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelId {
    GemmFp8,
    GemmF16,
    LayerNormF16,
    LayerNormFp8,
    LayerNormHF16,
    LayerNormHFp8,
    LayerNormHColsF16,
    LayerNormHColsFp8,
    AddLayerNormMoments,
    SoftmaxF16,
    SoftmaxSegF16,
    SoftmaxPartF16,
    AttentionCombineF16,
    SumPartsF16,
    BiasAddF16,
    AddBiasF16,
    AddCweiF16,
    ResidualAddF16,
    GeluF16,
    GeluFp8,
    GeluFp8Panels,
    CastF16Fp8Panels,
    PanelizeFp8,
    CopyRuns,
    CopyRunsSup,
    GatherElements,
    Transpose4x4F16,
    CastF32F16,
    CastF16Fp8,
}

impl KernelId {
    /// Every kernel, in library order (the order code is packed in).
    pub const ALL: &'static [KernelId] = &[
        KernelId::ResidualAddF16,
        KernelId::PanelizeFp8,
        KernelId::BiasAddF16,
        KernelId::AddBiasF16,
        KernelId::AddCweiF16,
        KernelId::CastF16Fp8Panels,
        KernelId::GeluF16,
        KernelId::GeluFp8,
        KernelId::GeluFp8Panels,
        KernelId::SoftmaxF16,
        KernelId::SoftmaxSegF16,
        KernelId::SoftmaxPartF16,
        KernelId::AttentionCombineF16,
        KernelId::SumPartsF16,
        KernelId::LayerNormF16,
        KernelId::LayerNormFp8,
        KernelId::LayerNormHF16,
        KernelId::LayerNormHFp8,
        KernelId::LayerNormHColsF16,
        KernelId::LayerNormHColsFp8,
        KernelId::AddLayerNormMoments,
        KernelId::GemmFp8,
        KernelId::GemmF16,
        KernelId::CopyRuns,
        KernelId::CopyRunsSup,
        KernelId::GatherElements,
        KernelId::Transpose4x4F16,
        KernelId::CastF32F16,
        KernelId::CastF16Fp8,
    ];

    /// The kernel's row: its code, ABI, references and estimate.
    pub fn kernel(self) -> &'static dyn Kernel {
        use crate::elementwise::{
            AddBias, AttentionCombine, BiasAdd, CastPanels, Gelu, GeluOutput, Softmax, SoftmaxPart,
            SoftmaxSeg, SumParts,
        };
        static GELU_F16: Gelu = Gelu(GeluOutput::F16);
        static GELU_FP8: Gelu = Gelu(GeluOutput::Fp8);
        static GELU_FP8_PANELS: Gelu = Gelu(GeluOutput::Fp8Panels);
        match self {
            KernelId::GemmFp8 => &GEMM_FP8,
            KernelId::GemmF16 => &GEMM_F16,
            KernelId::LayerNormF16 => &LAYERNORM_F16,
            KernelId::LayerNormFp8 => &LAYERNORM_FP8,
            KernelId::LayerNormHF16 => &LAYERNORM_H_F16,
            KernelId::LayerNormHFp8 => &LAYERNORM_H_FP8,
            KernelId::LayerNormHColsF16 => &crate::norm::layernorm_h::LAYERNORM_H_COLS_F16,
            KernelId::LayerNormHColsFp8 => &crate::norm::layernorm_h::LAYERNORM_H_COLS_FP8,
            KernelId::AddLayerNormMoments => {
                &crate::norm::add_layernorm_moments::ADD_LAYERNORM_MOMENTS
            }
            KernelId::SoftmaxF16 => &Softmax,
            KernelId::SoftmaxSegF16 => &SoftmaxSeg,
            KernelId::SoftmaxPartF16 => &SoftmaxPart,
            KernelId::AttentionCombineF16 => &AttentionCombine,
            KernelId::SumPartsF16 => &SumParts,
            KernelId::BiasAddF16 => &BiasAdd,
            KernelId::AddBiasF16 => &AddBias,
            KernelId::AddCweiF16 => &crate::elementwise::AddCwei,
            KernelId::ResidualAddF16 => &crate::residual_add::ResidualAdd,
            KernelId::GeluF16 => &GELU_F16,
            KernelId::GeluFp8 => &GELU_FP8,
            KernelId::GeluFp8Panels => &GELU_FP8_PANELS,
            KernelId::CastF16Fp8Panels => &CastPanels,
            KernelId::PanelizeFp8 => &crate::panelize::PANELIZE_FP8,
            KernelId::CopyRuns => &crate::movement::CopyRuns,
            KernelId::CopyRunsSup => &crate::movement::CopyRunsSup,
            KernelId::GatherElements => &crate::movement::GatherElements,
            KernelId::Transpose4x4F16 => &crate::movement::Transpose4x4F16,
            KernelId::CastF32F16 => &crate::convert::CastF32F16,
            KernelId::CastF16Fp8 => &crate::convert::CastF16Fp8,
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

/// The type of a LayerNorm's gamma and beta, which picks its affine arithmetic: f32
/// (`layernorm_f16` / `layernorm_fp8`) or f16 (`layernorm_h_*`, widths a multiple of 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LnParams {
    F32,
    F16,
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

/// `C = A × B` on the AMP (the GEMM kernels' vertex; see `gemm/abi.rs`).
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
    /// A in rows of this many bytes (`GemmSpec::a_row_stride`); 0: AMP-left panels.
    pub a_row_bytes: u32,
}

/// One kernel call's typed parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KernelParams {
    Gemm(GemmParams),
    /// Row LayerNorm over `rows × n` dense f16 (gamma, beta f32 or f16), f16 or FP8 out; with
    /// `own`, over a block of that many columns of each row (the statistics of the whole rows;
    /// f16 parameters only: `layernorm_h_cols_*`).
    LayerNorm {
        rows: u32,
        n: u32,
        eps_bits: u32,
        params: LnParams,
        out: ElementOut,
        own: Option<u32>,
    },
    /// Row softmax of `rows` rows of `cols` halves, `in_stride` halves apart, scale (f32 bits);
    /// with `segments` > 1 every row is cut into that many segments the workers share
    /// (`softmax_seg_f16`, two passes), else rows are whole per worker (`softmax_f16`).
    Softmax {
        rows: u32,
        cols: u32,
        in_stride: u32,
        scale_bits: u32,
        segments: u32,
    },
    /// One key block of a softmax split along its keys (`softmax_part_f16`): per row of `cols`
    /// halves (`in_stride` apart) the block's exponentials padded to whole blocks of 16 and
    /// its (m16, l16), rows out as `out` says (AMP panels only at scale 1).
    SoftmaxPart {
        rows: u32,
        cols: u32,
        in_stride: u32,
        scale_bits: u32,
        out: crate::elementwise::softmax_part::OutLayout,
    },
    /// The key blocks of an attention combined (`attention_combine_f16`): rows of partial
    /// outputs and their (m16, l16) statistics.
    AttentionCombine(crate::elementwise::attention_combine::Shape),
    /// The parts of every row summed column by column (`sum_parts_f16`): the K-chunks of a
    /// product split along K.
    SumParts(crate::elementwise::sum_parts::Shape),
    /// `x[r, c] += bias[c]` over `rows × cols` halves (cols % 4 == 0).
    BiasAdd {
        rows: u32,
        cols: u32,
        /// Element slots of x, bias and out (three different ones): the one-bundle-per-group
        /// loop; `None`: one access per bundle, anywhere.
        slots: Option<[u8; 3]>,
    },
    /// `out[r, c] = (a[r, c] + b[r, c]) + bias[c]` over `rows × cols` halves (cols % 4 == 0):
    /// the sum of two partial products and the bias add after it, in one pass.
    AddBias {
        rows: u32,
        cols: u32,
        /// Element slots of a, b and out (three different ones): the two-bundle-per-group
        /// loops; `None`: four bundles a group, anywhere.
        slots: Option<[u8; 3]>,
    },
    /// `out = a + b` over `rows × 16` halves (rows % 16 == 0), out in `$CWEI` order over
    /// `[rows, 16]` (`add_cwei_f16`): a K-split product's partial sums laid out as the weights
    /// of the product that reads them.
    AddCwei {
        rows: u32,
    },
    /// `out = a + b` over `n` halves.
    ResidualAdd {
        n: u32,
        /// Element slots of a, b and out (three different ones): the one-bundle-per-group
        /// loop; `None`: three bundles a group, anywhere.
        slots: Option<[u8; 3]>,
    },
    /// tanh GeLU over `n` halves, f16 or packed FP8 out.
    Gelu {
        n: u32,
        out: ElementOut,
    },
    /// Copies of 4- or 8-byte granules (`outer` times the table, shifted by the strides).
    CopyRuns {
        runs: Arc<Vec<crate::movement::Run>>,
        outer: u32,
        src_stride: u32,
        dst_stride: u32,
        granule: crate::movement::Granule,
        /// `Some((src, dst))`: the caller places src and dst in these (different) element slots,
        /// so the kernel may load and store in one bundle (`ldst64pace`) where that is faster.
        slots: Option<(u8, u8)>,
    },
    /// `n` f32 values → f16 (round to nearest even), flat; the output padded to 4 halves.
    CastF32F16 {
        n: u32,
    },
    /// `n` f16 values → FP8 codes, flat; the output padded to whole words.
    CastF16Fp8 {
        n: u32,
        out: Fp8Setting,
    },
    /// Destination words assembled from f16 or FP8 elements (`outer` times the table).
    Gather {
        words: Arc<Vec<crate::movement::GatherWord>>,
        outer: u32,
        src_stride: u32,
        dst_stride: u32,
        element: crate::movement::Element,
    },
    /// 4 × 4 blocks of f16 transposed (`outer` times the table).
    Transpose4 {
        blocks: Arc<Vec<crate::movement::TransposeBlock>>,
        outer: u32,
        src_stride: u32,
        dst_stride: u32,
        row: u32,
        col: u32,
    },
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

/// Everything a call site needs, derived once per distinct params: the operands, the vertex
/// words (addresses refer to operands by index), the supervisor CSRs, a description and the
/// estimate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSpec {
    pub kernel: KernelId,
    pub entry_kind: EntryKind,
    pub operands: Vec<OperandSpec>,
    pub vertex: Vec<VertexWord>,
    pub csrs: Vec<(u8, u32)>,
    pub description: String,
    pub estimate_cycles: u64,
}

fn specs() -> &'static Mutex<HashMap<KernelParams, Arc<CallSpec>>> {
    static SPECS: OnceLock<Mutex<HashMap<KernelParams, Arc<CallSpec>>>> = OnceLock::new();
    SPECS.get_or_init(Default::default)
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
            KernelParams::LayerNorm {
                out, params, own, ..
            } => match (params, out, own.is_some()) {
                (LnParams::F32, ElementOut::F16, _) => KernelId::LayerNormF16,
                (LnParams::F32, ElementOut::Fp8(_), _) => KernelId::LayerNormFp8,
                (LnParams::F16, ElementOut::F16, false) => KernelId::LayerNormHF16,
                (LnParams::F16, ElementOut::Fp8(_), false) => KernelId::LayerNormHFp8,
                (LnParams::F16, ElementOut::F16, true) => KernelId::LayerNormHColsF16,
                (LnParams::F16, ElementOut::Fp8(_), true) => KernelId::LayerNormHColsFp8,
            },
            KernelParams::Softmax { segments, .. } => {
                if *segments > 1 {
                    KernelId::SoftmaxSegF16
                } else {
                    KernelId::SoftmaxF16
                }
            }
            KernelParams::SoftmaxPart { .. } => KernelId::SoftmaxPartF16,
            KernelParams::AttentionCombine(_) => KernelId::AttentionCombineF16,
            KernelParams::SumParts(_) => KernelId::SumPartsF16,
            KernelParams::BiasAdd { .. } => KernelId::BiasAddF16,
            KernelParams::AddBias { .. } => KernelId::AddBiasF16,
            KernelParams::AddCwei { .. } => KernelId::AddCweiF16,
            KernelParams::ResidualAdd { .. } => KernelId::ResidualAddF16,
            KernelParams::Gelu { out, .. } => match out {
                ElementOut::F16 => KernelId::GeluF16,
                ElementOut::Fp8(_) => KernelId::GeluFp8,
            },
            KernelParams::CopyRuns { .. } => match self.copy_spec() {
                Some(spec) if crate::movement::copy_runs_on_supervisor(&spec) => {
                    KernelId::CopyRunsSup
                }
                Some(_) | None => KernelId::CopyRuns,
            },
            KernelParams::Gather { .. } => KernelId::GatherElements,
            KernelParams::Transpose4 { .. } => KernelId::Transpose4x4F16,
            KernelParams::CastF32F16 { .. } => KernelId::CastF32F16,
            KernelParams::CastF16Fp8 { .. } => KernelId::CastF16Fp8,
        }
    }

    pub fn kernel(&self) -> &'static dyn Kernel {
        self.id().kernel()
    }

    /// The `copy_runs` spec of a [`KernelParams::CopyRuns`] call, which runs on the workers
    /// (`copy_runs`) or, where its estimate is lower, on the supervisor (`copy_runs_sup`).
    pub fn copy_spec(&self) -> Option<crate::movement::CopyRunsSpec> {
        let KernelParams::CopyRuns {
            runs,
            outer,
            src_stride,
            dst_stride,
            granule,
            slots,
        } = self
        else {
            return None;
        };
        Some(crate::movement::CopyRunsSpec {
            runs: runs.to_vec(),
            outer: *outer,
            src_stride: *src_stride,
            dst_stride: *dst_stride,
            granule: *granule,
            distinct: slots.is_some(),
        })
    }

    /// The `gather_elements` spec of a [`KernelParams::Gather`] call.
    pub fn gather_spec(&self) -> Option<crate::movement::GatherSpec> {
        let KernelParams::Gather {
            words,
            outer,
            src_stride,
            dst_stride,
            element,
        } = self
        else {
            return None;
        };
        Some(crate::movement::GatherSpec {
            words: words.to_vec(),
            outer: *outer,
            src_stride: *src_stride,
            dst_stride: *dst_stride,
            element: *element,
        })
    }

    /// The `transpose4x4_f16` spec of a [`KernelParams::Transpose4`] call.
    pub fn transpose4_spec(&self) -> Option<crate::movement::Transpose4Spec> {
        let KernelParams::Transpose4 {
            blocks,
            outer,
            src_stride,
            dst_stride,
            row,
            col,
        } = self
        else {
            return None;
        };
        Some(crate::movement::Transpose4Spec {
            blocks: blocks.to_vec(),
            outer: *outer,
            src_stride: *src_stride,
            dst_stride: *dst_stride,
            row: *row,
            col: *col,
        })
    }

    /// The estimate of a table-driven element copy (`gather_elements`, `transpose4x4_f16`) from
    /// its table alone, without building (and keeping) its template; `None` for other calls or
    /// a refused table.
    pub fn table_estimate(&self) -> Option<u64> {
        if let Some(spec) = self.gather_spec() {
            return crate::movement::gather_elements_estimate(&spec);
        }
        self.transpose4_spec()
            .map(|spec| crate::movement::transpose4_estimate(&spec))
    }

    /// The call's template case (zeroed data), made once per distinct params.
    pub fn template(&self) -> Result<Arc<Case>, KernelParamError> {
        if let Some(case) = templates()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(self)
        {
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
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::SumParts(_)
            | KernelParams::BiasAdd { .. }
            | KernelParams::AddBias { .. }
            | KernelParams::AddCwei { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. }
            | KernelParams::CopyRuns { .. }
            | KernelParams::Gather { .. }
            | KernelParams::Transpose4 { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => RegionNeed::Any,
        }
    }

    /// The element slots of a two-operand elementwise call's operands and result when it runs
    /// its one-bundle-per-group loop (`ResidualAdd`, `BiasAdd`); `None` for every other call.
    pub fn elementwise_slots(&self) -> Option<[u8; 3]> {
        match *self {
            KernelParams::BiasAdd { slots, .. }
            | KernelParams::AddBias { slots, .. }
            | KernelParams::ResidualAdd { slots, .. } => slots,
            KernelParams::Gemm(_)
            | KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::SumParts(_)
            | KernelParams::AddCwei { .. }
            | KernelParams::Gelu { .. }
            | KernelParams::CopyRuns { .. }
            | KernelParams::Gather { .. }
            | KernelParams::Transpose4 { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => None,
        }
    }

    /// Whether operand `buffer` holds data that are part of the params (a table).
    fn is_constant(&self, buffer: &Buffer) -> bool {
        match self {
            KernelParams::CopyRuns { .. }
            | KernelParams::Gather { .. }
            | KernelParams::Transpose4 { .. } => buffer.name == "table",
            KernelParams::Gemm(_)
            | KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::SumParts(_)
            | KernelParams::BiasAdd { .. }
            | KernelParams::AddBias { .. }
            | KernelParams::AddCwei { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => false,
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
                constant: self.is_constant(b).then(|| Arc::new(b.bytes.clone())),
            })
            .collect())
    }

    /// The call's [`CallSpec`], made once per distinct params and shared.
    pub fn spec(&self) -> Result<Arc<CallSpec>, KernelParamError> {
        if let Some(spec) = specs().lock().unwrap_or_else(|e| e.into_inner()).get(self) {
            return Ok(spec.clone());
        }
        let template = self.template()?;
        let spec = Arc::new(CallSpec {
            kernel: self.id(),
            entry_kind: self.entry_kind(),
            operands: self.operands()?,
            vertex: template.vertex.clone(),
            csrs: template.supervisor_csrs.clone(),
            description: template.name.clone(),
            estimate_cycles: self.kernel().estimate_cycles(&template),
        });
        Ok(specs()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(self.clone())
            .or_insert(spec)
            .clone())
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
            return Err(fail(format!(
                "{} operands for {} buffers",
                operands.len(),
                template.buffers.len()
            )));
        }
        let mut case = (*template).clone();
        for (buffer, bytes) in case.buffers.iter_mut().zip(operands) {
            if bytes.len() != buffer.len() {
                return Err(fail(format!(
                    "{} bytes for `{}` ({} bytes)",
                    bytes.len(),
                    buffer.name,
                    buffer.len()
                )));
            }
            buffer.bytes = bytes;
        }
        let mut results = self.kernel().reference(&case);
        if results.len() != case.outputs().len() {
            return Err(fail(format!(
                "the reference gave {} outputs",
                results.len()
            )));
        }
        // The table-driven kernels write only their runs; their references start from zeros
        // (the checker's cases cover the destination), so keep every byte no run writes.
        if let Some(mask) = self.written(&case) {
            let dst = case.outputs()[0];
            let old = &case.buffers[dst].bytes;
            for (i, (out, &w)) in results[0].iter_mut().zip(&mask).enumerate() {
                if !w {
                    *out = old[i];
                }
            }
        }
        Ok(results)
    }

    /// For the table-driven kernels: which bytes of `dst` the call writes (from its vertex
    /// words and table, so after any rewriting the constructor did).
    fn written(&self, case: &Case) -> Option<Vec<bool>> {
        let words = |name: &str| -> Vec<u32> {
            case.buffers
                .iter()
                .find(|b| b.name == name)
                .map(|b| crate::case::bytes::to_u32(&b.bytes))
                .unwrap_or_default()
        };
        let dst_len = case.buffers.get(case.outputs().first().copied()?)?.len();
        let mut mask = vec![false; dst_len];
        let mut mark = |from: u64, len: u64| {
            for i in from..(from + len).min(dst_len as u64) {
                mask[i as usize] = true;
            }
        };
        match self {
            KernelParams::CopyRuns { .. } => {
                let table = words("table");
                if self.id() == KernelId::CopyRunsSup {
                    // One entry an item: (src, dst offset, words).
                    for entry in table.chunks_exact(3) {
                        mark(entry[1] as u64, 4 * entry[2] as u64);
                    }
                } else {
                    let (outer, dst_stride) = (case.word(4) as u64, case.word(6) as u64);
                    for o in 0..outer {
                        for entry in table.chunks_exact(3) {
                            mark(o * dst_stride + entry[1] as u64, entry[2] as u64);
                        }
                    }
                }
            }
            KernelParams::Gather { element, .. } => {
                let (w, outer, dst_stride) = (
                    case.word(3) as usize,
                    case.word(4) as u64,
                    case.word(6) as u64,
                );
                let table = words("table");
                let entry = 1 + element.lanes();
                for o in 0..outer {
                    for e in table.chunks_exact(entry).take(w) {
                        mark(o * dst_stride + e[0] as u64, 4);
                    }
                }
            }
            KernelParams::Transpose4 {
                blocks,
                outer,
                dst_stride,
                col,
                ..
            } => {
                for o in 0..u64::from(*outer) {
                    for b in blocks.iter() {
                        for c in 0..4 {
                            mark(
                                o * u64::from(*dst_stride) + u64::from(b.dst) + c * u64::from(*col),
                                8,
                            );
                        }
                    }
                }
            }
            KernelParams::Gemm(_)
            | KernelParams::LayerNorm { .. }
            | KernelParams::Softmax { .. }
            | KernelParams::SoftmaxPart { .. }
            | KernelParams::AttentionCombine(_)
            | KernelParams::SumParts(_)
            | KernelParams::BiasAdd { .. }
            | KernelParams::AddBias { .. }
            | KernelParams::AddCwei { .. }
            | KernelParams::ResidualAdd { .. }
            | KernelParams::Gelu { .. }
            | KernelParams::CastF32F16 { .. }
            | KernelParams::CastF16Fp8 { .. } => return None,
        }
        Some(mask)
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
mod tests;
