//! Tensor layouts shared by kernels (and, later, the compiler): the AMP-left panel order the
//! GEMMs read their activations in, and the `$CWEI` order they read weights in.
//!
//! **AMP-left panels.** The AMP consumes, for one row (token) m and one K-block, four 64-bit
//! input vectors in phase order. An FP8 K-block is 32 values (8 per phase), an F16 K-block is 16
//! values (4 per phase). A matrix A (M × K) in panel order is `panels[kb][m][block]`: for each
//! K-block kb (K padded up to a whole block, padding zero), the M rows' blocks one after another,
//! 32 bytes per row in both formats. Rows may be padded too (`m_padded ≥ M`); padded rows are zero.
//! A panel (one kb) is therefore `m_padded × 32` bytes.
//!
//! **Weights (`$CWEI` order).** For output block nb (16 output channels) and K-block kb, the 64
//! `$CWEI_m_p` registers (channel m = 0..15, phase p = 0..3) hold B[kb·L + p·(L/4) .. +L/4, nb·16 + m]
//! where L is the block length (32 FP8 or 16 F16). In memory a block is 512 bytes in `$CWEI`
//! index order (`4m + p`, 8 bytes each), so `ld128putcs` can load it two registers at a time;
//! blocks are ordered `[nb][kb]`. Channels beyond N and rows beyond K are zero.

/// Values per K-block for FP8 inputs (8 per AMP phase × 4 phases).
pub const FP8_BLOCK: usize = 32;
/// Values per K-block for F16 inputs (4 per AMP phase × 4 phases).
pub const F16_BLOCK: usize = 16;
/// Output channels per AMP block.
pub const AMP_CHANNELS: usize = 16;
/// Bytes per row per K-block in a panel (both formats).
pub const PANEL_ROW_BYTES: usize = 32;
/// Bytes of one weight block in `$CWEI` order.
pub const WEIGHT_BLOCK_BYTES: usize = 512;

/// Number of K-blocks covering `k` values with blocks of `block`.
pub fn k_blocks(k: usize, block: usize) -> usize {
    k.div_ceil(block)
}

/// Byte offset of row `m`, K-block `kb` in a panel-ordered matrix with `m_padded` rows.
pub fn panel_offset(kb: usize, m: usize, m_padded: usize) -> usize {
    (kb * m_padded + m) * PANEL_ROW_BYTES
}

/// FP8 codes of a row-major M × K matrix (`codes[m * k + j]`) in panel order (zero padding).
pub fn fp8_to_panels(codes: &[u8], m: usize, k: usize, m_padded: usize) -> Vec<u8> {
    let blocks = k_blocks(k, FP8_BLOCK);
    let mut out = vec![0u8; blocks * m_padded * PANEL_ROW_BYTES];
    for row in 0..m {
        for col in 0..k {
            let kb = col / FP8_BLOCK;
            out[panel_offset(kb, row, m_padded) + col % FP8_BLOCK] = codes[row * k + col];
        }
    }
    out
}

/// F16 bit patterns of a row-major M × K matrix in panel order (zero padding).
pub fn f16_to_panels(halves: &[u16], m: usize, k: usize, m_padded: usize) -> Vec<u8> {
    let blocks = k_blocks(k, F16_BLOCK);
    let mut out = vec![0u8; blocks * m_padded * PANEL_ROW_BYTES];
    for row in 0..m {
        for col in 0..k {
            let kb = col / F16_BLOCK;
            let at = panel_offset(kb, row, m_padded) + (col % F16_BLOCK) * 2;
            out[at..at + 2].copy_from_slice(&halves[row * k + col].to_le_bytes());
        }
    }
    out
}

/// Weights B (K × N, row-major, `element_bytes` per value: 1 for FP8, 2 for F16) in `$CWEI`
/// block order `[nb][kb][m][p][8 bytes]`, zero padded.
pub fn weights_to_cwei_blocks(b: &[u8], k: usize, n: usize, element_bytes: usize) -> Vec<u8> {
    let block = if element_bytes == 1 {
        FP8_BLOCK
    } else {
        F16_BLOCK
    };
    let per_phase = block / 4;
    let kbs = k_blocks(k, block);
    let nbs = n.div_ceil(AMP_CHANNELS);
    let mut out = vec![0u8; nbs * kbs * WEIGHT_BLOCK_BYTES];
    for nb in 0..nbs {
        for kb in 0..kbs {
            let base = (nb * kbs + kb) * WEIGHT_BLOCK_BYTES;
            for m in 0..AMP_CHANNELS {
                let col = nb * AMP_CHANNELS + m;
                if col >= n {
                    continue;
                }
                for p in 0..4 {
                    for lane in 0..per_phase {
                        let row = kb * block + p * per_phase + lane;
                        if row >= k {
                            continue;
                        }
                        let src = (row * n + col) * element_bytes;
                        let dst = base + (4 * m + p) * 8 + lane * element_bytes;
                        out[dst..dst + element_bytes].copy_from_slice(&b[src..src + element_bytes]);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_place_each_value_once() {
        let (m, k) = (3, 40);
        let codes: Vec<u8> = (0..m * k).map(|i| (i % 251 + 1) as u8).collect();
        let panels = fp8_to_panels(&codes, m, k, 4);
        assert_eq!(panels.len(), 2 * 4 * 32);
        assert_eq!(panels[panel_offset(1, 2, 4) + 7], codes[2 * k + 39]);
        assert_eq!(panels.iter().filter(|&&b| b != 0).count(), m * k);
    }

    #[test]
    fn weight_blocks_follow_cwei_order() {
        let (k, n) = (32, 16);
        let b: Vec<u8> = (0..k * n).map(|i| i as u8).collect();
        let blocks = weights_to_cwei_blocks(&b, k, n, 1);
        // channel 3, phase 2, lane 5 = B[2*8+5, 3]
        assert_eq!(blocks[(4 * 3 + 2) * 8 + 5], b[(21) * n + 3]);
    }
}
