//! Elementwise kernels of the encoder (registered in `crate::all_kernels`): the bias add after a
//! GEMM (alone or after the sum of two partial products), GeLU (tanh form) with f16 or FP8
//! output, the row softmax of attention, and the f16 → FP8 cast into the AMP-left panel layout
//! the FP8 GEMMs read.

mod add_bias;
pub mod add_cwei;
pub mod attention_combine;
mod bias_add;
mod cast_panels;
pub mod common;
mod gelu;
mod softmax;
pub mod softmax_part;
pub mod softmax_seg;
pub mod sum_parts;

use crate::Kernel;

pub use add_bias::AddBias;
pub use add_cwei::AddCwei;
pub use attention_combine::AttentionCombine;
pub use bias_add::BiasAdd;
pub use cast_panels::{CastPanels, Source as CastSource};
pub use gelu::{Gelu, Output as GeluOutput};
pub use softmax::Softmax;
pub use softmax_part::SoftmaxPart;
pub use softmax_seg::SoftmaxSeg;
pub use sum_parts::SumParts;

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![
        &AddBias,
        &AddCwei,
        &BiasAdd,
        &CastPanels,
        &Gelu(GeluOutput::F16),
        &Gelu(GeluOutput::Fp8),
        &Gelu(GeluOutput::Fp8Panels),
        &Softmax,
        &SoftmaxSeg,
        &SoftmaxPart,
        &AttentionCombine,
        &SumParts,
    ]
}

pub use add_bias::compiler_case as add_bias_case;
pub use bias_add::compiler_case as bias_add_case;
pub use gelu::compiler_case as gelu_case;
pub use softmax::compiler_case as softmax_case;
