//! norm kernels (registered in `crate::all_kernels`): LayerNorm with f16 or FP8 output, with f32
//! or f16 parameters (the latter also over a block of each row's columns), and the fused
//! residual add + LayerNorm moments. All three share the statistics passes of
//! `kernels/asm/layernorm_stats.S` (reference model in [`stats`]).

pub mod add_layernorm_moments;
mod data;
pub mod layernorm;
pub mod layernorm_h;
pub mod stats;

use crate::Kernel;

/// The kernels of this family.
pub fn kernels() -> Vec<&'static dyn Kernel> {
    vec![
        &layernorm::LAYERNORM_F16,
        &layernorm::LAYERNORM_FP8,
        &layernorm_h::LAYERNORM_H_F16,
        &layernorm_h::LAYERNORM_H_FP8,
        &layernorm_h::LAYERNORM_H_COLS_F16,
        &layernorm_h::LAYERNORM_H_COLS_FP8,
        &add_layernorm_moments::ADD_LAYERNORM_MOMENTS,
    ]
}
