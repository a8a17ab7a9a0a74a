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
#[cfg_attr(not(test), allow(dead_code))]
pub fn quantize(value: f32, format: Fp8Format, scale: i8) -> u8 {
    f16_to_fp8(f32_to_f16(value), format, -(scale as i32), false)
}

/// Columns `cols` of a row-major K × N weight, quantized, zero padded to `width` columns, in
/// `$CWEI` block order (the definition [`cwei_blocks_of_codes`] is tested against).
#[cfg(test)]
pub fn cwei_blocks(
    values: &[f32],
    k: u32,
    n: u32,
    cols: Range<u32>,
    width: u32,
    format: Fp8Format,
    scale: i8,
) -> Vec<u8> {
    let (k, n, width) = (k as usize, n as usize, width as usize);
    let mut codes = vec![0u8; k * width];
    for row in 0..k {
        for (i, c) in cols.clone().enumerate() {
            codes[row * width + i] = quantize(values[row * n + c as usize], format, scale);
        }
    }
    weights_to_cwei_blocks(&codes, k, width, 1)
}

/// [`quantize`] of every value: the FP8 codes of a whole weight, in its order. (One table of
/// the f16 → FP8 step for all 2^16 f16 values, then one f32 → f16 rounding per value.)
/// Sequential on purpose: it runs inside a `OnceLock` initialiser, where a rayon worker that
/// stole another lowering's task could re-enter the same cell.
pub fn quantize_all(values: &[f32], format: Fp8Format, scale: i8) -> Vec<u8> {
    let table: Vec<u8> = (0..=u16::MAX)
        .map(|h| f16_to_fp8(h, format, -(scale as i32), false))
        .collect();
    values
        .iter()
        .map(|&v| table[f32_to_f16(v) as usize])
        .collect()
}

/// [`cwei_blocks`] from the codes of the whole K × N weight ([`quantize_all`]).
pub fn cwei_blocks_of_codes(all: &[u8], k: u32, n: u32, cols: Range<u32>, width: u32) -> Vec<u8> {
    let (k, n, width) = (k as usize, n as usize, width as usize);
    let (first, count) = (cols.start as usize, cols.len());
    let mut codes = vec![0u8; k * width];
    for row in 0..k {
        codes[row * width..row * width + count]
            .copy_from_slice(&all[row * n + first..row * n + first + count]);
    }
    weights_to_cwei_blocks(&codes, k, width, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_whole_codes_are_the_blocks_of_the_columns() {
        let (k, n) = (64u32, 200u32);
        let mut x = 12345u32;
        let mut values: Vec<f32> = (0..k * n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x as i32 as f32) * 2f32.powi(-28)
            })
            .collect();
        values[3] = f32::NAN;
        values[4] = f32::INFINITY;
        values[5] = -1e9;
        values[6] = 1e-30;
        for (format, scale) in [
            (Fp8Format::F143, 0i8),
            (Fp8Format::F152, -3),
            (Fp8Format::F143, 4),
        ] {
            let all = quantize_all(&values, format, scale);
            assert!(values
                .iter()
                .zip(&all)
                .all(|(&v, &c)| c == quantize(v, format, scale)));
            for (cols, width) in [(0..32, 32), (32..90, 64), (160..200, 64), (0..200, 224)] {
                assert_eq!(
                    cwei_blocks_of_codes(&all, k, n, cols.clone(), width),
                    cwei_blocks(&values, k, n, cols, width, format, scale)
                );
            }
        }
    }
}
