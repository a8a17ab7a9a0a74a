//! Bicubic resizing of 8-bit images the way Pillow's `Image.resize(size, Image.BICUBIC)` does
//! it, so that preprocessing reproduces the `pixel_values` of transformers' PIL-backed image
//! processors. Written from the published description of Pillow's algorithm
//! (`libImaging/Resample.c`):
//!
//! * Separable, two passes: horizontal first (only over the source rows the vertical pass
//!   reads), then vertical. A pass whose size does not change is skipped.
//! * The cubic convolution kernel with a = −0.5, support 2. When shrinking by a factor
//!   `scale = in/out > 1`, the kernel is stretched by `scale` (support `2·scale`, argument
//!   divided by `scale`): antialiasing, not point sampling.
//! * Output pixel `i` is centred at `(i + 0.5)·scale` in source coordinates; its window is
//!   source pixels `trunc(centre − support + 0.5)` to `trunc(centre + support + 0.5)`
//!   (exclusive), clamped to the image; the kernel is evaluated at
//!   `(source pixel − centre + 0.5) · (1/filterscale)` and the weights of the window are
//!   normalised to sum 1. All of this in f64, in the same order of operations.
//! * The weights become fixed point with 22 fractional bits, rounded half away from zero.
//!   Each output is `2²¹ + Σ pixel·weight` in integers, shifted right by 22 (floor) and clamped
//!   to 0..=255. The intermediate image between the passes is 8-bit, so rounding and clamping
//!   happen after each pass.
//!
//! Where it can differ from Pillow: nowhere for 8-bit images with 1 to 4 channels resized over
//! the whole image (no `box`, no `reducing_gap`, which transformers does not pass) — the
//! arithmetic is the same integer arithmetic. The accumulator here is i64 where Pillow's is a C
//! `int`; the results agree because Pillow's never overflows for 8-bit input. Pillow
//! premultiplies alpha for RGBA/LA before resizing; this function does not (the preprocessing
//! resizes RGB only).

/// A bad resize request.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ResizeError {
    #[error("E-RESIZE-001: cannot resize a {width}×{height} image with {channels} channels to {out_width}×{out_height}: sizes must be positive and the channels 1 to 4")]
    Size {
        width: usize,
        height: usize,
        channels: usize,
        out_width: usize,
        out_height: usize,
    },

    #[error("E-RESIZE-002: a {width}×{height}×{channels} image needs {expected} bytes, got {got}")]
    Length {
        width: usize,
        height: usize,
        channels: usize,
        expected: String,
        got: usize,
    },
}

/// Fractional bits of the fixed-point weights.
const PRECISION_BITS: u32 = 32 - 8 - 2;

/// The cubic convolution kernel, a = −0.5.
fn bicubic(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        (((x - 5.0) * x + 8.0) * x - 4.0) * A
    } else {
        0.0
    }
}

/// The windows and fixed-point weights of one axis.
struct Axis {
    /// Per output pixel: first source pixel and window length.
    windows: Vec<(usize, usize)>,
    /// Per output pixel: `window length` weights.
    weights: Vec<Vec<i32>>,
}

fn axis(in_size: usize, out_size: usize) -> Axis {
    let scale = in_size as f64 / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = 2.0 * filterscale;
    // The kernel argument is multiplied by this reciprocal (not divided by `filterscale`),
    // which is what makes the weights bit-identical.
    let inv = 1.0 / filterscale;
    let mut windows = Vec::with_capacity(out_size);
    let mut weights = Vec::with_capacity(out_size);
    for i in 0..out_size {
        let center = (i as f64 + 0.5) * scale;
        // `as i64` truncates toward zero, as C's conversion does.
        let lo = ((center - support + 0.5) as i64).max(0) as usize;
        let hi = ((center + support + 0.5) as i64).clamp(0, in_size as i64) as usize;
        let len = hi.saturating_sub(lo);
        let w: Vec<f64> = (0..len)
            .map(|x| bicubic(((x + lo) as f64 - center + 0.5) * inv))
            .collect();
        let sum: f64 = w.iter().sum();
        let fixed = w
            .iter()
            .map(|&v| {
                let v = if sum != 0.0 { v / sum } else { v };
                let f = v * (1u32 << PRECISION_BITS) as f64;
                // Half away from zero, then truncation toward zero.
                (if f < 0.0 { f - 0.5 } else { f + 0.5 }) as i32
            })
            .collect();
        windows.push((lo, len));
        weights.push(fixed);
    }
    Axis { windows, weights }
}

/// `2²¹ + acc` → 8 bits: shift right by 22 (floor), clamp.
fn clip8(acc: i64) -> u8 {
    ((acc + (1i64 << (PRECISION_BITS - 1))) >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Resizes an interleaved 8-bit image (`height` rows of `width` pixels of `channels` bytes)
/// to `out_width × out_height` as Pillow's bicubic filter does (see the module docs).
pub fn resize_bicubic(
    data: &[u8],
    width: usize,
    height: usize,
    channels: usize,
    out_width: usize,
    out_height: usize,
) -> Result<Vec<u8>, ResizeError> {
    let size_error = || ResizeError::Size {
        width,
        height,
        channels,
        out_width,
        out_height,
    };
    if width == 0
        || height == 0
        || out_width == 0
        || out_height == 0
        || !(1..=4).contains(&channels)
    {
        return Err(size_error());
    }
    let expected = width
        .checked_mul(height)
        .and_then(|v| v.checked_mul(channels));
    if expected != Some(data.len()) {
        return Err(ResizeError::Length {
            width,
            height,
            channels,
            expected: expected.map_or_else(|| "more than usize::MAX".into(), |e| e.to_string()),
            got: data.len(),
        });
    }
    if out_width
        .checked_mul(out_height)
        .and_then(|v| v.checked_mul(channels))
        .is_none()
    {
        return Err(size_error());
    }
    let c = channels;

    // Horizontal pass over the rows the vertical pass reads.
    let vertical = axis(height, out_height);
    let (row0, rows) = if out_height != height {
        let first = vertical.windows[0].0;
        let (lo, len) = vertical.windows[out_height - 1];
        (first, lo + len - first)
    } else {
        (0, height)
    };
    let mid: Vec<u8>;
    let (mid_data, mid_width): (&[u8], usize) = if out_width != width {
        let horizontal = axis(width, out_width);
        let mut out = vec![0u8; rows * out_width * c];
        for y in 0..rows {
            let src = &data[(row0 + y) * width * c..(row0 + y + 1) * width * c];
            let dst = &mut out[y * out_width * c..(y + 1) * out_width * c];
            for (x, (&(lo, len), k)) in horizontal
                .windows
                .iter()
                .zip(&horizontal.weights)
                .enumerate()
            {
                for ch in 0..c {
                    let acc: i64 = (0..len)
                        .map(|i| src[(lo + i) * c + ch] as i64 * k[i] as i64)
                        .sum();
                    dst[x * c + ch] = clip8(acc);
                }
            }
        }
        mid = out;
        (&mid, out_width)
    } else {
        (&data[row0 * width * c..(row0 + rows) * width * c], width)
    };

    // Vertical pass.
    if out_height == height {
        return Ok(mid_data.to_vec());
    }
    let stride = mid_width * c;
    let mut out = vec![0u8; out_height * stride];
    for (y, (&(lo, len), k)) in vertical.windows.iter().zip(&vertical.weights).enumerate() {
        let lo = lo - row0;
        let dst = &mut out[y * stride..(y + 1) * stride];
        for (j, o) in dst.iter_mut().enumerate() {
            let acc: i64 = (0..len)
                .map(|i| mid_data[(lo + i) * stride + j] as i64 * k[i] as i64)
                .sum();
            *o = clip8(acc);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel() {
        assert_eq!(bicubic(0.0), 1.0);
        assert_eq!(bicubic(1.0), 0.0);
        assert_eq!(bicubic(2.0), 0.0);
        assert_eq!(bicubic(-0.5), 0.5625);
        assert_eq!(bicubic(1.5), -0.0625);
    }

    #[test]
    fn weights_sum_to_one_in_fixed_point() {
        for (i, o) in [
            (120, 56),
            (90, 56),
            (120, 378),
            (7, 3),
            (3, 7),
            (1, 5),
            (5, 1),
        ] {
            let a = axis(i, o);
            for (k, &(lo, len)) in a.weights.iter().zip(&a.windows) {
                assert!(lo + len <= i);
                let s: i64 = k.iter().map(|&v| v as i64).sum();
                assert!((s - (1 << 22)).abs() <= len as i64, "{i}->{o}: {s}");
            }
        }
    }

    #[test]
    fn constant_images_stay_constant_and_same_size_is_a_copy() {
        for v in [0u8, 1, 128, 254, 255] {
            let img = vec![v; 13 * 9 * 3];
            for (w, h) in [(5, 4), (30, 20), (13, 20), (5, 9)] {
                let out = resize_bicubic(&img, 13, 9, 3, w, h).unwrap();
                assert_eq!(out.len(), w * h * 3);
                assert!(out.iter().all(|&x| x == v), "{v} {w}x{h}");
            }
        }
        let img: Vec<u8> = (0..6 * 4 * 2).map(|i| (i * 37 % 256) as u8).collect();
        assert_eq!(resize_bicubic(&img, 6, 4, 2, 6, 4).unwrap(), img);
    }

    #[test]
    fn overshoot_is_clamped() {
        // A sharp edge overshoots with the negative lobes; the result stays in 0..=255.
        let mut img = vec![0u8; 8];
        img[4..].fill(255);
        let out = resize_bicubic(&img, 8, 1, 1, 19, 1).unwrap();
        assert_eq!(out[0], 0);
        assert_eq!(out[18], 255);
        assert!(out.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn errors() {
        assert_eq!(
            resize_bicubic(&[], 0, 1, 3, 2, 2).unwrap_err().to_string(),
            "E-RESIZE-001: cannot resize a 0×1 image with 3 channels to 2×2: sizes must be positive and the channels 1 to 4"
        );
        assert!(resize_bicubic(&[0; 5], 1, 1, 5, 2, 2).is_err());
        assert_eq!(
            resize_bicubic(&[0; 5], 2, 1, 3, 2, 2)
                .unwrap_err()
                .to_string(),
            "E-RESIZE-002: a 2×1×3 image needs 6 bytes, got 5"
        );
        assert!(resize_bicubic(&[0; 3], 1, 1, 3, usize::MAX, 2).is_err());
    }
}
