//! Host-side conversion of weights into the layouts the kernels read. The conversions are part
//! of the plan's numerics: f32 → f16 rounds to nearest even; f32 → FP8 goes through f16 (one
//! rounding each, saturating), exactly what a device cast from f16 does.

use std::ops::Range;
use tessera_isa::numerics::{f16_to_fp8, f32_to_f16, Fp8Format};
use tessera_kernels::layout::weights_to_cwei_blocks;

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Elements `cols` of a vector as f16, zero padded to `width`.
pub fn f16_vector(values: &[f32], cols: Range<u32>, width: u32) -> Vec<u8> {
    let mut out = vec![0u8; width as usize * 2];
    for (i, c) in cols.enumerate() {
        out[2 * i..2 * i + 2].copy_from_slice(&f32_to_f16(values[c as usize]).to_le_bytes());
    }
    out
}

/// FP8 code of a weight with tensor scale `scale` (real = code × 2^scale).
pub fn quantize(value: f32, format: Fp8Format, scale: i8) -> u8 {
    f16_to_fp8(f32_to_f16(value), format, -(scale as i32), false)
}

/// Columns `cols` of a row-major K × N weight, quantized, zero padded to `width` columns, in
/// `$CWEI` block order.
pub fn cwei_blocks(values: &[f32], k: u32, n: u32, cols: Range<u32>, width: u32, format: Fp8Format, scale: i8) -> Vec<u8> {
    let (k, n, width) = (k as usize, n as usize, width as usize);
    let mut codes = vec![0u8; k * width];
    for row in 0..k {
        for (i, c) in cols.clone().enumerate() {
            codes[row * width + i] = quantize(values[row * n + c as usize], format, scale);
        }
    }
    weights_to_cwei_blocks(&codes, k, width, 1)
}
