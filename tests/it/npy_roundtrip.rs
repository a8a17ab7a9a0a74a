//! Round trips through `.npy` files with the public `tessera::npy` API, and reads of the FP8 oracle tables in `testdata/fp8`.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tessera::npy::{DType, NpyArray, NpyError};

fn oracle(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fp8")
        .join(name)
}

fn scratch_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "tessera-npy-roundtrip-{}-{}",
        std::process::id(),
        name
    ))
}

#[test]
fn every_dtype_round_trips_through_a_file() {
    let shapes: [&[usize]; 5] = [&[], &[5], &[2, 3], &[0], &[2, 0, 3]];
    for dtype in DType::ALL {
        for shape in shapes {
            let n: usize = shape.iter().product();
            let data: Vec<u8> = (0..n * dtype.size())
                .map(|i| (i * 37 % 251) as u8)
                .collect();
            let array = NpyArray::new(dtype, shape.to_vec(), data).unwrap();
            let path = scratch_path(&format!("{}-{}.npy", dtype.name(), shape.len()));
            array.write(&path).unwrap();
            let back = NpyArray::read(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            assert_eq!(back, array, "{dtype} {shape:?}");
            assert_eq!(back.element_count(), n);
        }
    }
}

#[test]
fn reads_the_f16_to_f143_table() {
    let table = NpyArray::read(&oracle("f16_to_f143_fpscl0_nanoo0.npy")).unwrap();
    assert_eq!(table.dtype, DType::UInt8);
    assert_eq!(table.shape, vec![65536]);
    let code = |f16_bits: usize| table.data[f16_bits];
    assert_eq!(code(0x3c00), 0x40); // 1.0
    assert_eq!(code(0xbc00), 0xc0); // -1.0
    assert_eq!(code(0x2000), 0x08); // 2^-7, smallest normal
    assert_eq!(code(0x0001), 0x00); // f16 subnormal rounds to zero
    assert_eq!(code(0x7bff), 0x7f); // 65504 saturates to 240 (NANOO = 0)
    assert_eq!(code(0x7c00), 0x80); // +inf gives NaN
    assert_eq!(code(0x7e00), 0x80); // NaN
}

#[test]
fn decode_table_agrees_with_f32_conversion() {
    let table = NpyArray::read(&oracle("f143_decode.npy")).unwrap();
    assert_eq!(
        (table.dtype, table.shape.clone()),
        (DType::Float32, vec![256])
    );
    let values = table.to_f32_vec().unwrap();
    assert_eq!(values[0x08], 2f32.powi(-7));
    assert_eq!(values[0x7f], 240.0);
    // Writing it back out reproduces NumPy's file byte for byte.
    let original = std::fs::read(oracle("f143_decode.npy")).unwrap();
    assert_eq!(table.to_bytes(), original);
}

#[test]
fn read_errors_name_the_file() {
    let path = scratch_path("truncated.npy");
    let full = NpyArray::from_f32(&[4], &[1.0, 2.0, 3.0, 4.0])
        .unwrap()
        .to_bytes();
    std::fs::write(&path, &full[..full.len() - 3]).unwrap();
    let err = NpyArray::read(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(msg.ends_with("expected 16 bytes, found 13"), "{msg}");
    assert!(matches!(err, NpyError::InFile { .. }));
}

proptest! {
    #[test]
    fn f32_values_round_trip_bit_exactly(
        dims in proptest::collection::vec(1usize..5, 0..3),
        seed in proptest::collection::vec(any::<u32>(), 64),
    ) {
        let n: usize = dims.iter().product();
        let values: Vec<f32> = seed.iter().cycle().take(n).map(|&b| f32::from_bits(b)).collect();
        let array = NpyArray::from_f32(&dims, &values).unwrap();
        let back = NpyArray::from_bytes(&array.to_bytes()).unwrap();
        let bits: Vec<u32> = back.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect();
        let expected: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        prop_assert_eq!(bits, expected);
        prop_assert_eq!(back.shape, dims);
    }

    #[test]
    fn f16_bits_round_trip(bits in proptest::collection::vec(any::<u16>(), 0..50)) {
        let array = NpyArray::from_f16_bits(&[bits.len()], &bits).unwrap();
        let back = NpyArray::from_bytes(&array.to_bytes()).unwrap();
        prop_assert_eq!(back.dtype, DType::Float16);
        let expected: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        prop_assert_eq!(back.data, expected);
    }
}
