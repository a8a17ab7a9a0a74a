//! Image files → `pixel_values` against what transformers' `SiglipImageProcessor` (PIL
//! backend) made of `testdata/hf/image/pattern-120x90.png` at 56×56 (downscaling, with
//! antialiasing) and 378×378 (upscaling).

use std::path::PathBuf;

use crate::support::{npy, oracle};

/// `testdata/hf/image/<rel>`.
fn image(rel: &str) -> PathBuf {
    oracle(&format!("image/{rel}"))
}

use tessera_models::preprocess::{load_images, normalize_level, read_image};
use tessera_models::reference::compare;
use tessera_models::siglip::SiglipVisionConfig;

fn check(size: usize) {
    let config = SiglipVisionConfig {
        image_size: size,
        ..SiglipVisionConfig::tiny()
    };
    let png = image("pattern-120x90.png");
    let ours = load_images(&[&png], &config).unwrap();
    let (shape, expected) = npy(&image(&format!("pixel_values-{size}.npy")));
    assert_eq!(shape, vec![1, 3, size, size]);
    assert_eq!(ours.shape(), [1, 3, size, size]);
    let r = compare(&expected, ours.data());
    let exact = expected
        .iter()
        .zip(ours.data())
        .filter(|(a, b)| a.to_bits() == b.to_bits())
        .count();
    eprintln!(
        "{size}×{size}: {r}; {exact} of {} values bit-identical",
        expected.len()
    );
    assert!(r.max_abs <= 2.0 / 255.0 + 1e-6, "{size}: {r}");
    assert_eq!(exact, expected.len(), "{size}: {r}");
}

#[test]
fn downscale_to_56_matches_transformers() {
    check(56);
}

#[test]
fn upscale_to_378_matches_transformers() {
    check(378);
}

/// Every value transformers wrote is one of the 256 levels `normalize_level` gives.
#[test]
fn rescale_and_normalise_match_transformers_levels() {
    let levels: Vec<u32> = (0..=255u8).map(|v| normalize_level(v).to_bits()).collect();
    for size in [56, 378] {
        let (_, expected) = npy(&image(&format!("pixel_values-{size}.npy")));
        assert!(expected.iter().all(|v| levels.contains(&v.to_bits())));
    }
    let img = read_image(&image("pattern-120x90.png")).unwrap();
    assert_eq!((img.width, img.height), (120, 90));
}

#[test]
fn several_files_make_a_batch() {
    let config = SiglipVisionConfig::tiny();
    let png = image("pattern-120x90.png");
    let two = load_images(&[&png, &png], &config).unwrap();
    assert_eq!(two.shape(), [2, 3, 56, 56]);
    let n = 3 * 56 * 56;
    assert_eq!(&two.data()[..n], &two.data()[n..]);
    let e = load_images(&[png, image("missing.png")], &config)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("E-IMAGE-001: cannot read image ") && e.contains("missing.png"),
        "{e}"
    );
    let e = load_images(&[image("pixel_values-56.npy")], &config)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("E-IMAGE-002: cannot decode image ") && e.contains("pixel_values-56.npy"),
        "{e}"
    );
}
