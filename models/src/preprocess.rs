//! Image files → `pixel_values`, as transformers' `SiglipImageProcessor` makes them with its
//! PIL backend and default settings: decode, convert to RGB, resize to `S×S` (S =
//! `image_size`) with Pillow's bicubic filter, rescale by 1/255, normalise with mean 0.5 and
//! std 0.5, lay out channels first. Several files make a batch, in order.
//!
//! # Steps and where they can differ from transformers + Pillow
//!
//! * **Decoding** (the `image` crate; PNG and JPEG). PNG decoding is lossless and so
//!   identical. JPEG decoding is not pinned down bit for bit by the standard: the `image`
//!   crate's decoder (zune-jpeg) and Pillow's libjpeg(-turbo) may differ by a few levels in
//!   some pixels (IDCT and chroma upsampling), before any resizing. EXIF orientation is not
//!   applied (neither does the processor given a PIL image; transformers' `load_image` helper
//!   does apply it).
//! * **Conversion to RGB**: grayscale is replicated to three channels; an alpha channel is
//!   dropped (not composited on a background). 16-bit images are reduced to 8 bits by the
//!   `image` crate's rounding (`(v + 128) / 257`), where Pillow keeps the high byte of 16-bit
//!   RGB PNGs — such images can differ by one level.
//! * **Resize** ([`crate::resample::resize_bicubic`]): Pillow's integer algorithm; identical for
//!   8-bit RGB. Skipped when the image already is `S×S`, as Pillow does.
//! * **Rescale and normalise**: in transformers' order and precision — `v · (1/255)` in f64,
//!   rounded to f32, then `(x − 0.5) / 0.5` in f32 — so each of the 256 levels maps to exactly
//!   the float32 transformers produces ([`normalize_level`]).
//!
//! Against transformers' output for `testdata/hf/image/pattern-120x90.png` (a PNG) at 56×56
//! and 378×378 the result is identical (max |difference| 0; see the `image_preprocessing`
//! test).

use std::path::Path;

use crate::pixels::PixelValues;
use crate::resample::{resize_bicubic, ResizeError};
use crate::siglip::config::SiglipVisionConfig;

/// Why images could not become `pixel_values`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PreprocessError {
    #[error("E-IMAGE-001: cannot read image {path}: {message}")]
    Io { path: String, message: String },

    #[error("E-IMAGE-002: cannot decode image {path}: {message}")]
    Decode { path: String, message: String },

    #[error("E-IMAGE-003: no images given")]
    NoImages,

    #[error("E-IMAGE-004: the model takes {channels}-channel pixels; images are converted to RGB (3 channels)")]
    Channels { channels: usize },

    #[error("E-IMAGE-005: image {path}: {source}")]
    Resize { path: String, source: ResizeError },

    #[error(transparent)]
    Pixels(#[from] crate::pixels::PixelError),
}

/// An 8-bit RGB image, rows top to bottom, pixels `[r, g, b]` interleaved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rgb8Image {
    pub width: usize,
    pub height: usize,
    /// `height · width · 3` bytes.
    pub data: Vec<u8>,
}

/// Decodes PNG or JPEG bytes (format guessed from the content) to RGB. `name` is used in
/// errors.
pub fn decode_image(bytes: &[u8], name: &str) -> Result<Rgb8Image, PreprocessError> {
    let decode = |message: String| PreprocessError::Decode {
        path: name.to_string(),
        message,
    };
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| decode(e.to_string()))?;
    if reader.format().is_none() {
        return Err(decode(
            "not a PNG or JPEG file (unrecognised content)".into(),
        ));
    }
    let img = reader.decode().map_err(|e| decode(e.to_string()))?;
    let rgb = img.to_rgb8();
    let (width, height) = (rgb.width() as usize, rgb.height() as usize);
    Ok(Rgb8Image {
        width,
        height,
        data: rgb.into_raw(),
    })
}

/// Reads and decodes an image file.
pub fn read_image(path: &Path) -> Result<Rgb8Image, PreprocessError> {
    let bytes = std::fs::read(path).map_err(|e| PreprocessError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    decode_image(&bytes, &path.display().to_string())
}

/// The processor's value for 8-bit level `v`: `f32(v · (1/255)) `, then `(x − 0.5) / 0.5`
/// in f32.
pub fn normalize_level(v: u8) -> f32 {
    let x = (v as f64 * (1.0 / 255.0)) as f32;
    (x - 0.5f32) / 0.5f32
}

/// Resizes each image to `size × size`, rescales and normalises: `pixel_values`
/// `[images.len(), 3, size, size]`. `names` (one per image, or empty) are used in errors.
pub fn pixel_values_from_rgb8(
    images: &[Rgb8Image],
    size: usize,
    names: &[String],
) -> Result<PixelValues, PreprocessError> {
    if images.is_empty() {
        return Err(PreprocessError::NoImages);
    }
    let table: Vec<f32> = (0..=255u8).map(normalize_level).collect();
    let plane = size.saturating_mul(size);
    let mut data = Vec::with_capacity(images.len().saturating_mul(3).saturating_mul(plane));
    for (k, im) in images.iter().enumerate() {
        let name = names.get(k).cloned().unwrap_or_else(|| format!("#{k}"));
        let resized = resize_bicubic(&im.data, im.width, im.height, 3, size, size)
            .map_err(|source| PreprocessError::Resize { path: name, source })?;
        for c in 0..3 {
            data.extend(
                resized
                    .iter()
                    .skip(c)
                    .step_by(3)
                    .map(|&v| table[v as usize]),
            );
        }
    }
    Ok(PixelValues::new(&[images.len(), 3, size, size], data)?)
}

/// Reads image files into one batch of `pixel_values` for `config` (`image_size` × `image_size`,
/// 3 channels), in the order given.
pub fn load_images<P: AsRef<Path>>(
    paths: &[P],
    config: &SiglipVisionConfig,
) -> Result<PixelValues, PreprocessError> {
    if config.num_channels != 3 {
        return Err(PreprocessError::Channels {
            channels: config.num_channels,
        });
    }
    if paths.is_empty() {
        return Err(PreprocessError::NoImages);
    }
    let mut images = Vec::with_capacity(paths.len());
    let mut names = Vec::with_capacity(paths.len());
    for p in paths {
        images.push(read_image(p.as_ref())?);
        names.push(p.as_ref().display().to_string());
    }
    pixel_values_from_rgb8(&images, config.image_size, &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(normalize_level(0), -1.0);
        assert_eq!(normalize_level(255), 1.0);
        assert!((normalize_level(128) - 0.003_921_569).abs() < 1e-7);
        assert!((1..=255u8).all(|v| normalize_level(v) > normalize_level(v - 1)));
    }

    #[test]
    fn decodes_and_batches() {
        // A 3×2 PNG written by the image crate.
        let mut png = Vec::new();
        let img =
            image::RgbImage::from_fn(3, 2, |x, y| image::Rgb([x as u8 * 100, y as u8 * 200, 7]));
        img.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let d = decode_image(&png, "a.png").unwrap();
        assert_eq!((d.width, d.height), (3, 2));
        assert_eq!(&d.data[..6], &[0, 0, 7, 100, 0, 7]);
        // Same size: no resampling, exact levels, channels first.
        let two = pixel_values_from_rgb8(&[d.clone(), d.clone()], 3, &[]).unwrap();
        assert_eq!(two.shape(), [2, 3, 3, 3]);
        let pv = pixel_values_from_rgb8(&[d], 4, &[]).unwrap();
        assert_eq!(pv.shape(), [1, 3, 4, 4]);
        assert!(pv.data()[32..].iter().all(|&v| v == normalize_level(7)));
        // Grayscale and alpha become RGB.
        let mut la = Vec::new();
        image::GrayAlphaImage::from_pixel(2, 2, image::LumaA([9, 0]))
            .write_to(&mut std::io::Cursor::new(&mut la), image::ImageFormat::Png)
            .unwrap();
        assert_eq!(decode_image(&la, "la.png").unwrap().data, vec![9; 12]);
    }

    #[test]
    fn decodes_jpeg() {
        let mut jpg = Vec::new();
        image::RgbImage::from_pixel(16, 8, image::Rgb([200, 100, 50]))
            .write_to(
                &mut std::io::Cursor::new(&mut jpg),
                image::ImageFormat::Jpeg,
            )
            .unwrap();
        let d = decode_image(&jpg, "a.jpg").unwrap();
        assert_eq!((d.width, d.height, d.data.len()), (16, 8, 16 * 8 * 3));
        // Lossy, but a flat colour survives within a few levels.
        for px in d.data.chunks(3) {
            for (got, want) in px.iter().zip([200u8, 100, 50]) {
                assert!(got.abs_diff(want) <= 3, "{px:?}");
            }
        }
    }

    #[test]
    fn errors() {
        assert_eq!(
            decode_image(b"hello", "x.png").unwrap_err().to_string(),
            "E-IMAGE-002: cannot decode image x.png: not a PNG or JPEG file (unrecognised content)"
        );
        let e = decode_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "bad.png")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("E-IMAGE-002: cannot decode image bad.png: "),
            "{e}"
        );
        let e = read_image(Path::new("/nonexistent/cat.jpg"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("E-IMAGE-001: cannot read image /nonexistent/cat.jpg: "),
            "{e}"
        );
        let c = SiglipVisionConfig::tiny();
        assert_eq!(
            load_images::<&str>(&[], &c).unwrap_err().to_string(),
            "E-IMAGE-003: no images given"
        );
        let gray = SiglipVisionConfig {
            num_channels: 1,
            ..c
        };
        assert_eq!(
            load_images(&["a.png"], &gray).unwrap_err().to_string(),
            "E-IMAGE-004: the model takes 1-channel pixels; images are converted to RGB (3 channels)"
        );
        assert_eq!(
            pixel_values_from_rgb8(&[], 4, &[]).unwrap_err(),
            PreprocessError::NoImages
        );
        let broken = Rgb8Image {
            width: 2,
            height: 2,
            data: vec![0; 5],
        };
        assert_eq!(
            pixel_values_from_rgb8(&[broken], 4, &["b.png".into()])
                .unwrap_err()
                .to_string(),
            "E-IMAGE-005: image b.png: E-RESIZE-002: a 2×2×3 image needs 12 bytes, got 5"
        );
    }
}
