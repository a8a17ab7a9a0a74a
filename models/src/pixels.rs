//! `pixel_values`: the model's input exactly as transformers' `SiglipImageProcessor` makes it —
//! float32 `N×C×H×W` (batch, channel, row, column), already rescaled and normalised (for
//! SigLIP: `(x/255 − 0.5)/0.5`, so in [−1, 1]) — and the patches the patch embedding reads.
//!
//! [`PixelValues::new`] checks that the data fills the shape; [`PixelValues::validate`] checks
//! it against a model (`C = num_channels`, `H = W = image_size`, at least one image, every value
//! finite). Values are not range-checked: a processor with other mean and std gives values
//! outside [−1, 1], and the model takes them as they are.
//!
//! [`PixelValues::patches`] cuts each image into the stride-P patches of the `Conv2d` patch
//! embedding: `[N·T, C·P·P]`, tokens row-major over the patch grid (`t = py·(S/P) + px`), inside
//! a patch channel, row, column (`c·P² + ky·P + kx`, the flattening of the `[D, C, P, P]`
//! convolution weight), so `patches · W_patch` is the patch embedding. Pixels right of or below
//! the last whole patch are dropped, as the "valid" convolution does.

use crate::siglip::config::SiglipVisionConfig;

/// Bad `pixel_values`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PixelError {
    #[error("E-PIXELS-001: pixel_values must be 4-D N×C×H×W, got shape {shape:?}")]
    Rank { shape: Vec<usize> },

    #[error("E-PIXELS-002: pixel_values of shape {shape:?} needs {expected} values, got {got}")]
    Length {
        shape: Vec<usize>,
        expected: String,
        got: usize,
    },

    #[error("E-PIXELS-003: pixel_values holds no image (batch N = 0)")]
    Empty,

    #[error("E-PIXELS-004: pixel_values has {got} channels, but the model has num_channels = {expected}")]
    Channels { got: usize, expected: usize },

    #[error("E-PIXELS-005: pixel_values images are {height}×{width}, but the model takes {size}×{size} (image_size); resize them first")]
    Size {
        height: usize,
        width: usize,
        size: usize,
    },

    #[error("E-PIXELS-006: pixel_values[{n}, {c}, {y}, {x}] is {value}; values must be finite")]
    NonFinite {
        n: usize,
        c: usize,
        y: usize,
        x: usize,
        value: f32,
    },
}

/// A batch of preprocessed images, `N×C×H×W` f32.
#[derive(Clone, Debug, PartialEq)]
pub struct PixelValues {
    shape: [usize; 4],
    data: Vec<f32>,
}

impl PixelValues {
    /// Wraps `data` of `shape` (`[N, C, H, W]`, e.g. as read from a `.npy` file), checking
    /// the rank and that the data fills the shape exactly.
    pub fn new(shape: &[usize], data: Vec<f32>) -> Result<PixelValues, PixelError> {
        let Ok(shape4) = <[usize; 4]>::try_from(shape) else {
            return Err(PixelError::Rank {
                shape: shape.to_vec(),
            });
        };
        let expected = shape4.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if expected != Some(data.len()) {
            return Err(PixelError::Length {
                shape: shape.to_vec(),
                expected: expected.map_or_else(|| "more than usize::MAX".into(), |e| e.to_string()),
                got: data.len(),
            });
        }
        Ok(PixelValues {
            shape: shape4,
            data,
        })
    }

    /// `[N, C, H, W]`.
    pub fn shape(&self) -> [usize; 4] {
        self.shape
    }

    /// Images in the batch, N.
    pub fn batch(&self) -> usize {
        self.shape[0]
    }

    pub fn channels(&self) -> usize {
        self.shape[1]
    }

    pub fn height(&self) -> usize {
        self.shape[2]
    }

    pub fn width(&self) -> usize {
        self.shape[3]
    }

    /// The values, row-major `N×C×H×W`.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn into_data(self) -> Vec<f32> {
        self.data
    }

    /// The batch of images `images[0]` then `images[1]` …, each `[1, C, H, W]` or
    /// `[N_i, C, H, W]` with the same C, H, W.
    pub fn concat(images: &[PixelValues]) -> Result<PixelValues, PixelError> {
        let Some(first) = images.first() else {
            return Err(PixelError::Empty);
        };
        let [_, c, h, w] = first.shape;
        let mut data = Vec::new();
        let mut n = 0usize;
        for im in images {
            let [ni, ci, hi, wi] = im.shape;
            if ci != c {
                return Err(PixelError::Channels {
                    got: ci,
                    expected: c,
                });
            }
            if (hi, wi) != (h, w) {
                return Err(PixelError::Size {
                    height: hi,
                    width: wi,
                    size: h,
                });
            }
            n += ni;
            data.extend_from_slice(&im.data);
        }
        PixelValues::new(&[n, c, h, w], data)
    }

    /// Checks the batch against a model: N ≥ 1, C = `num_channels`, H = W = `image_size`,
    /// every value finite.
    pub fn validate(&self, config: &SiglipVisionConfig) -> Result<(), PixelError> {
        let [n, c, h, w] = self.shape;
        if n == 0 {
            return Err(PixelError::Empty);
        }
        if c != config.num_channels {
            return Err(PixelError::Channels {
                got: c,
                expected: config.num_channels,
            });
        }
        if h != config.image_size || w != config.image_size {
            return Err(PixelError::Size {
                height: h,
                width: w,
                size: config.image_size,
            });
        }
        if let Some((i, &value)) = self.data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(PixelError::NonFinite {
                n: i / (c * h * w),
                c: i / (h * w) % c,
                y: i / w % h,
                x: i % w,
                value,
            });
        }
        Ok(())
    }

    /// The patches of every image, `[N·T, C·P·P]` (see the module docs), after
    /// [`validate`](Self::validate).
    pub fn patches(&self, config: &SiglipVisionConfig) -> Result<Vec<f32>, PixelError> {
        self.validate(config)?;
        let [n, c, s, _] = self.shape;
        let p = config.patch_size;
        let side = config.patches_per_side();
        let mut out = Vec::with_capacity(n * side * side * c * p * p);
        for b in 0..n {
            for py in 0..side {
                for px in 0..side {
                    for ch in 0..c {
                        for ky in 0..p {
                            let row = ((b * c + ch) * s + py * p + ky) * s + px * p;
                            out.extend_from_slice(&self.data[row..row + p]);
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SiglipVisionConfig {
        SiglipVisionConfig {
            num_channels: 2,
            patch_size: 2,
            image_size: 5,
            ..SiglipVisionConfig::tiny()
        }
    }

    #[test]
    fn patch_order_matches_the_convolution() {
        // Value encodes (n, c, y, x).
        let (n, c, s) = (2, 2, 5);
        let data: Vec<f32> = (0..n * c * s * s)
            .map(|i| {
                let (b, ch, y, x) = (i / (c * s * s), i / (s * s) % c, i / s % s, i % s);
                (b * 1000 + ch * 100 + y * 10 + x) as f32
            })
            .collect();
        let pv = PixelValues::new(&[n, c, s, s], data).unwrap();
        let patches = pv.patches(&config()).unwrap();
        // 2 per side (the 5th row and column dropped) → 4 tokens per image of 2·2·2 values.
        assert_eq!(patches.len(), 2 * 4 * 8);
        // Image 1, token 3 (py 1, px 1), channel 1, ky 1, kx 0 → y 3, x 2.
        assert_eq!(patches[(4 + 3) * 8 + 4 + 2], 1132.0);
        // Image 0, token 1 (py 0, px 1), channel 0, ky 0, kx 1 → y 0, x 3.
        assert_eq!(patches[8 + 1], 3.0);
        // The same order as input::patchify (which also normalises [0, 1] pixels).
        let img: Vec<f32> = (0..c * s * s).map(|i| i as f32 / 100.0).collect();
        let a = crate::input::patchify(&img, c, s, s, 2).unwrap();
        let pv =
            PixelValues::new(&[1, c, s, s], img.iter().map(|v| (v - 0.5) / 0.5).collect()).unwrap();
        assert_eq!(pv.patches(&config()).unwrap(), a);
    }

    #[test]
    fn errors() {
        let c = config();
        assert_eq!(
            PixelValues::new(&[2, 5, 5], vec![0.0; 50])
                .unwrap_err()
                .to_string(),
            "E-PIXELS-001: pixel_values must be 4-D N×C×H×W, got shape [2, 5, 5]"
        );
        assert_eq!(
            PixelValues::new(&[1, 2, 5, 5], vec![0.0; 49])
                .unwrap_err()
                .to_string(),
            "E-PIXELS-002: pixel_values of shape [1, 2, 5, 5] needs 50 values, got 49"
        );
        assert_eq!(
            PixelValues::new(&[usize::MAX, 2, 5, 5], vec![]).unwrap_err().to_string(),
            "E-PIXELS-002: pixel_values of shape [18446744073709551615, 2, 5, 5] needs more than usize::MAX values, got 0"
        );
        let ok =
            |shape: &[usize]| PixelValues::new(shape, vec![0.0; shape.iter().product()]).unwrap();
        assert_eq!(
            ok(&[0, 2, 5, 5]).validate(&c).unwrap_err().to_string(),
            "E-PIXELS-003: pixel_values holds no image (batch N = 0)"
        );
        assert_eq!(
            ok(&[1, 3, 5, 5]).validate(&c).unwrap_err().to_string(),
            "E-PIXELS-004: pixel_values has 3 channels, but the model has num_channels = 2"
        );
        assert_eq!(
            ok(&[1, 2, 5, 6]).patches(&c).unwrap_err().to_string(),
            "E-PIXELS-005: pixel_values images are 5×6, but the model takes 5×5 (image_size); resize them first"
        );
        let mut data = vec![0.0; 100];
        data[50 + 25 + 7] = f32::NAN;
        assert_eq!(
            PixelValues::new(&[2, 2, 5, 5], data)
                .unwrap()
                .validate(&c)
                .unwrap_err()
                .to_string(),
            "E-PIXELS-006: pixel_values[1, 1, 1, 2] is NaN; values must be finite"
        );
        assert_eq!(PixelValues::concat(&[]).unwrap_err(), PixelError::Empty);
        let both = PixelValues::concat(&[ok(&[1, 2, 5, 5]), ok(&[2, 2, 5, 5])]).unwrap();
        assert_eq!(both.shape(), [3, 2, 5, 5]);
        assert!(PixelValues::concat(&[ok(&[1, 2, 5, 5]), ok(&[1, 2, 4, 4])]).is_err());
    }
}
