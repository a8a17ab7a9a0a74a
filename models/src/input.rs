//! Model inputs: seeded activations, seeded images, and patches of `[0, 1]` images.
//!
//! The model's real input is `pixel_values` as transformers' image processor makes them,
//! already normalised to [−1, 1]: see [`crate::pixels::PixelValues`] (validation against a
//! config, and [`patches`](crate::pixels::PixelValues::patches)) and, for image files,
//! [`crate::preprocess`]. The functions here take images already resized and rescaled to
//! `[0, 1]` and normalise them themselves, so they refuse values outside `[0, 1]`.
//!
//! Preprocessing here follows the SigLIP image processor after resizing and rescaling: pixels in
//! [0, 1] are normalised with mean 0.5 and std 0.5 (`(x − 0.5) / 0.5`, so to [−1, 1]) and cut
//! into non-overlapping `P×P` patches. Patches are taken row-major over the grid (token
//! `t = py · (W/P) + px`); inside a patch the order is channel, row, column (`c·P² + ky·P + kx`),
//! the flattening of a Conv2d weight `[D, C, P, P]`, so `patches · W_patch` is the patch
//! embedding. Pixels right of or below the last whole patch are dropped, as the stride-P
//! "valid" convolution does (384 px with P = 14 → 27 patches, 6 px unused). Resizing is not
//! done here.

use half::f16;

use crate::siglip::config::SiglipVisionConfig;
use tessera_isa::rng::Rng;

/// Bad image data.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InputError {
    #[error("E-INPUT-001: the image has {got} values, expected {expected} ({channels}×{height}×{width})")]
    Length {
        got: usize,
        expected: usize,
        channels: usize,
        height: usize,
        width: usize,
    },

    #[error("E-INPUT-002: a {height}×{width} image holds no {patch}×{patch} patch")]
    TooSmall {
        height: usize,
        width: usize,
        patch: usize,
    },

    #[error("E-INPUT-003: pixel {index} is {value}; pixels must be in [0, 1] (rescale 0..255 images by 1/255; for pixel_values already normalised to [-1, 1] use pixels::PixelValues::patches)")]
    OutOfRange { index: usize, value: f32 },

    #[error("E-INPUT-004: a {height}×{width} image gives {got} patches, but the model expects {expected}")]
    TokenCount {
        height: usize,
        width: usize,
        got: usize,
        expected: usize,
    },
}

/// Seeded activations `[rows, hidden]`, ≈ N(0, 1) (bounded by ±6), as f16.
pub fn synthetic_activations(rows: usize, hidden: usize, seed: u64) -> Vec<f16> {
    let mut rng = Rng::for_name(seed, "activations");
    (0..rows * hidden)
        .map(|_| f16::from_f64(rng.normal(0.0, 1.0)))
        .collect()
}

/// [`synthetic_activations`] as f32 (the same values, exactly).
pub fn synthetic_activations_f32(rows: usize, hidden: usize, seed: u64) -> Vec<f32> {
    synthetic_activations(rows, hidden, seed)
        .into_iter()
        .map(f16::to_f32)
        .collect()
}

/// A seeded image `[channels, height, width]` with pixels uniform in [0, 1).
pub fn synthetic_image(channels: usize, height: usize, width: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::for_name(seed, "image");
    (0..channels * height * width)
        .map(|_| rng.unit() as f32)
        .collect()
}

/// Normalises an image `[channels, height, width]` (pixels in [0, 1]) and cuts it into
/// patches: `[(height/patch)·(width/patch), channels·patch²]`, row-major.
pub fn patchify(
    pixels: &[f32],
    channels: usize,
    height: usize,
    width: usize,
    patch: usize,
) -> Result<Vec<f32>, InputError> {
    let expected = channels * height * width;
    if pixels.len() != expected {
        return Err(InputError::Length {
            got: pixels.len(),
            expected,
            channels,
            height,
            width,
        });
    }
    if patch == 0 || height < patch || width < patch {
        return Err(InputError::TooSmall {
            height,
            width,
            patch,
        });
    }
    if let Some((index, &value)) = pixels
        .iter()
        .enumerate()
        .find(|(_, v)| !(0.0..=1.0).contains(*v))
    {
        return Err(InputError::OutOfRange { index, value });
    }
    let (ph, pw) = (height / patch, width / patch);
    let mut out = Vec::with_capacity(ph * pw * channels * patch * patch);
    for py in 0..ph {
        for px in 0..pw {
            for c in 0..channels {
                for ky in 0..patch {
                    let row = (c * height + py * patch + ky) * width + px * patch;
                    out.extend(pixels[row..row + patch].iter().map(|&v| (v - 0.5) / 0.5));
                }
            }
        }
    }
    Ok(out)
}

/// [`patchify`] for a model: the image must give exactly `config.num_patches()` patches.
pub fn preprocess(
    config: &SiglipVisionConfig,
    pixels: &[f32],
    height: usize,
    width: usize,
) -> Result<Vec<f32>, InputError> {
    let out = patchify(
        pixels,
        config.num_channels,
        height,
        width,
        config.patch_size,
    )?;
    let got = (height / config.patch_size) * (width / config.patch_size);
    if got != config.num_patches() {
        return Err(InputError::TokenCount {
            height,
            width,
            got,
            expected: config.num_patches(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations_are_seeded_f16() {
        let a = synthetic_activations(16, 64, 1);
        assert_eq!(a, synthetic_activations(16, 64, 1));
        assert_ne!(a, synthetic_activations(16, 64, 2));
        assert_eq!(a.len(), 1024);
        let f = synthetic_activations_f32(16, 64, 1);
        assert!(f.iter().zip(&a).all(|(x, h)| *x == h.to_f32()));
        assert!(f.iter().all(|x| x.abs() <= 6.0));
        let img = synthetic_image(3, 28, 28, 4);
        assert!(img.iter().all(|p| (0.0..1.0).contains(p)));
    }

    #[test]
    fn patch_order() {
        // 2 channels, 4×6 image, patch 2 → 2×3 = 6 patches of 8 values. Pixel value encodes
        // (c, y, x) as c·100 + y·10 + x, scaled into [0, 1] by /1000.
        let (c, h, w, p) = (2, 4, 6, 2);
        let pixels: Vec<f32> = (0..c)
            .flat_map(|ci| {
                (0..h)
                    .flat_map(move |y| (0..w).map(move |x| (ci * 100 + y * 10 + x) as f32 / 1000.0))
            })
            .collect();
        let out = patchify(&pixels, c, h, w, p).unwrap();
        assert_eq!(out.len(), 6 * 8);
        let px = |v: f32| ((v * 0.5 + 0.5) * 1000.0).round() as usize;
        // Token 4 = (py 1, px 1): channel 1, row ky 1, column kx 0 → y = 3, x = 2.
        assert_eq!(px(out[4 * 8 + 4 + 2]), 100 + 30 + 2);
        // Token 2 = (py 0, px 2): channel 0, ky 0, kx 1 → y 0, x 5.
        assert_eq!(px(out[2 * 8 + 1]), 5);
        // Normalisation: 0 → −1, 1 → 1.
        let n = patchify(&[0.0, 1.0, 0.5, 0.25], 1, 2, 2, 2).unwrap();
        assert_eq!(n, vec![-1.0, 1.0, 0.0, -0.5]);
    }

    #[test]
    fn remainder_pixels_are_dropped() {
        let c = SiglipVisionConfig::so400m_patch14_384();
        let img = synthetic_image(3, 384, 384, 1);
        let patches = preprocess(&c, &img, 384, 384).unwrap();
        assert_eq!(patches.len(), 729 * 588);
    }

    #[test]
    fn errors() {
        assert_eq!(
            patchify(&[0.0; 10], 3, 2, 2, 2).unwrap_err().to_string(),
            "E-INPUT-001: the image has 10 values, expected 12 (3×2×2)"
        );
        assert_eq!(
            patchify(&[0.0; 12], 3, 2, 2, 14).unwrap_err().to_string(),
            "E-INPUT-002: a 2×2 image holds no 14×14 patch"
        );
        assert_eq!(
            patchify(&[0.0, 255.0, 0.0, 0.0], 1, 2, 2, 2).unwrap_err().to_string(),
            "E-INPUT-003: pixel 1 is 255; pixels must be in [0, 1] (rescale 0..255 images by 1/255; for pixel_values already normalised to [-1, 1] use pixels::PixelValues::patches)"
        );
        assert!(patchify(&[0.0, f32::NAN, 0.0, 0.0], 1, 2, 2, 2).is_err());
        let c = SiglipVisionConfig::tiny();
        assert_eq!(
            preprocess(&c, &synthetic_image(3, 42, 56, 0), 42, 56)
                .unwrap_err()
                .to_string(),
            "E-INPUT-004: a 42×56 image gives 12 patches, but the model expects 16"
        );
    }
}
