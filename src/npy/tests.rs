//! Unit tests of the `.npy` reader and writer: every refusal with its error, NumPy's exact bytes, round trips and never-panic properties.

use super::*;
use proptest::prelude::*;

/// A `.npy` file with the given header dict text, v1.0, header padded like NumPy pads.
fn with_header(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut h = dict.as_bytes().to_vec();
    let pad = ARRAY_ALIGN - (10 + h.len() + 1) % ARRAY_ALIGN;
    h.resize(h.len() + pad, b' ');
    h.push(b'\n');
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out
}

fn parse_dict(dict: &str, data: &[u8]) -> Result<NpyArray, NpyError> {
    NpyArray::from_bytes(&with_header(dict, data))
}

fn header_of(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == b'\n').unwrap();
    &bytes[..=end]
}

fn scratch_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tessera-npy-{}-{}", std::process::id(), name))
}

#[test]
fn reads_shared_f143_decode_table() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/fp8/f143_decode.npy"
    ));
    let array = NpyArray::read(path).unwrap();
    assert_eq!(array.dtype, DType::Float32);
    assert_eq!(array.shape, vec![256]);
    let v = array.to_f32_vec().unwrap();
    assert_eq!(v.len(), 256);
    assert_eq!(v[0x00], 0.0);
    assert_eq!(v[0x01], 2f32.powi(-10)); // smallest subnormal: 1/8 * 2^-7
    assert_eq!(v[0x07], 7.0 / 8.0 * 2f32.powi(-7)); // largest subnormal
    assert_eq!(v[0x08], 2f32.powi(-7)); // smallest normal, bias 8
    assert_eq!(v[0x40], 1.0);
    assert_eq!(v[0x7f], 240.0);
    assert!(v[0x80].is_nan());
    assert_eq!(v[0x81], -(2f32.powi(-10)));
    assert_eq!(v[0xc0], -1.0);
    assert_eq!(v[0xff], -240.0);
    // Round trip reproduces the file byte for byte (it was written by NumPy).
    assert_eq!(array.to_bytes(), std::fs::read(path).unwrap());
}

#[test]
fn writes_exactly_what_numpy_writes() {
    // Headers copied from `numpy.save` output (NumPy 2.4).
    let cases: [(DType, Vec<usize>, &[u8]); 4] = [
        (DType::Float32, vec![2, 3], b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }                                                          \n"),
        (DType::Float64, vec![], b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (), }                                                              \n"),
        (DType::UInt8, vec![5], b"\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }                                                            \n"),
        (DType::Bool, vec![1, 2, 3, 4], b"\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': (1, 2, 3, 4), }                                                    \n"),
    ];
    for (dtype, shape, expected) in cases {
        let n: usize = shape.iter().product();
        let array = NpyArray::new(dtype, shape, vec![0; n * dtype.size()]).unwrap();
        let bytes = array.to_bytes();
        assert_eq!(header_of(&bytes), expected);
        assert_eq!(bytes.len(), expected.len() + array.data.len());
        assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
    }
}

#[test]
fn accepts_header_variants() {
    let f = 1.5f32.to_le_bytes();
    let two = [f, f].concat();
    let ok =
        |dict: &str, data: &[u8]| parse_dict(dict, data).unwrap_or_else(|e| panic!("{dict}: {e}"));
    let a = ok(
        "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
        &two,
    );
    assert_eq!((a.dtype, a.shape.clone()), (DType::Float32, vec![2]));
    ok(
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",
        &two,
    );
    ok(
        "{ 'descr' :'<f4' ,\n 'fortran_order':False,'shape':( 2 , ) , }\r\n\t ",
        &two,
    );
    ok(
        "{u'descr': u'<f4', 'fortran_order': False, 'shape': (2L,), }",
        &two,
    );
    let a = ok(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
        &f,
    );
    assert_eq!((a.shape.clone(), a.element_count()), (vec![], 1));
    let a = ok(
        "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }",
        &[7; 12],
    );
    assert_eq!(a.shape, vec![2, 3]);
    let a = ok(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }",
        &[],
    );
    assert_eq!(a.element_count(), 0);
    for (descr, dtype) in [
        ("<u1", DType::UInt8),
        ("|u1", DType::UInt8),
        (">u1", DType::UInt8),
        ("u1", DType::UInt8),
        ("|i1", DType::Int8),
        ("<i1", DType::Int8),
        ("|b1", DType::Bool),
    ] {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (3,), }}");
        assert_eq!(ok(&dict, &[1, 2, 3]).dtype, dtype, "{descr}");
    }
    // Fortran order is harmless when at most one axis has extent > 1.
    let a = ok(
        "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2, 1), }",
        &two,
    );
    assert_eq!(a.shape, vec![1, 2, 1]);
    // Unknown extra keys and repeated keys (last wins, as in Python).
    let a = ok("{'descr': '<f2', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': [1, (None,)]}", &two);
    assert_eq!(a.dtype, DType::Float32);
}

#[test]
fn reads_versions_2_and_3() {
    let dict = b"{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }\n";
    for major in [2u8, 3] {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[major, 0]);
        bytes.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        bytes.extend_from_slice(dict);
        bytes.extend_from_slice(&[1, 0, 2, 0]);
        let a = NpyArray::from_bytes(&bytes).unwrap();
        assert_eq!(a.to_f32_vec().unwrap(), vec![1.0, 2.0]);
    }
}

#[test]
fn writes_version_2_for_huge_headers() {
    let shape = vec![1usize; 30_000];
    let array = NpyArray::from_u8(&shape, &[42]).unwrap();
    let bytes = array.to_bytes();
    assert_eq!(&bytes[6..8], &[2, 0]);
    let hlen = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    assert!(hlen > 65535);
    assert_eq!((12 + hlen) % ARRAY_ALIGN, 0);
    assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
}

#[test]
fn rejects_malformed_files_with_precise_errors() {
    let good = NpyArray::from_f32(&[2], &[1.0, 2.0]).unwrap().to_bytes();

    let e = NpyArray::from_bytes(b"PK\x03\x04zipfile").unwrap_err();
    assert!(
        matches!(&e, NpyError::BadMagic { found } if found == b"PK\x03\x04zi"),
        "{e}"
    );
    assert!(e.to_string().contains("bad magic"), "{e}");
    assert!(matches!(
        NpyArray::from_bytes(b""),
        Err(NpyError::Truncated { .. })
    ));
    assert!(matches!(
        NpyArray::from_bytes(b"\x93NUM"),
        Err(NpyError::Truncated { .. })
    ));
    assert!(matches!(
        NpyArray::from_bytes(&good[..7]),
        Err(NpyError::Truncated { .. })
    ));
    assert!(matches!(
        NpyArray::from_bytes(&good[..9]),
        Err(NpyError::Truncated { .. })
    ));
    let e = NpyArray::from_bytes(&good[..40]).unwrap_err();
    assert!(
        matches!(
            e,
            NpyError::Truncated {
                what: "header",
                needed: 128,
                found: 40
            }
        ),
        "{e}"
    );

    let mut v4 = good.clone();
    v4[6] = 4;
    let e = NpyArray::from_bytes(&v4).unwrap_err();
    assert!(matches!(
        e,
        NpyError::UnsupportedVersion { major: 4, minor: 0 }
    ));
    assert_eq!(
        e.to_string(),
        "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)"
    );
    let mut v11 = good.clone();
    v11[7] = 1;
    assert!(matches!(
        NpyArray::from_bytes(&v11),
        Err(NpyError::UnsupportedVersion { major: 1, minor: 1 })
    ));

    let data = [0u8; 8];
    for dict in [
        "['descr', '<f4']",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
        "{'descr': '<f4' 'fortran_order': False}",
        "{'descr': <f4}",
        "{'descr': '<f4}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} extra",
        "{'shape': (2.5,)}",
        "{'shape': (99999999999999999999999,)}",
        "",
    ] {
        let e = parse_dict(dict, &data).unwrap_err();
        assert!(matches!(e, NpyError::HeaderNotDict { .. }), "{dict}: {e}");
        assert!(
            e.to_string()
                .starts_with("malformed .npy header: not a Python dict literal"),
            "{e}"
        );
    }
    for (dict, key) in [
        ("{'fortran_order': False, 'shape': (2,)}", "descr"),
        ("{'descr': '<f4', 'shape': (2,)}", "fortran_order"),
        ("{'descr': '<f4', 'fortran_order': False}", "shape"),
    ] {
        let e = parse_dict(dict, &data).unwrap_err();
        assert!(
            matches!(e, NpyError::MissingKey { key: k } if k == key),
            "{dict}: {e}"
        );
        assert_eq!(
            e.to_string(),
            format!("malformed .npy header: missing key '{key}'")
        );
    }
    for dict in [
        "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
    ] {
        let e = parse_dict(dict, &data).unwrap_err();
        assert!(matches!(e, NpyError::BadHeaderValue { .. }), "{dict}: {e}");
    }
    for (dict, shown) in [
        (
            "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
            "'<c8'",
        ),
        (
            "{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}",
            "'<U3'",
        ),
        (
            "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,)}",
            "[('a', '<f4'), ('b', '<i4')]",
        ),
    ] {
        let e = parse_dict(dict, &data).unwrap_err();
        assert!(
            matches!(&e, NpyError::UnsupportedDescr { descr } if descr == shown),
            "{dict}: {e}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "unsupported dtype descr {shown} (supported: <f2 <f4"
            )),
            "{e}"
        );
    }
    let e = parse_dict(
        "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
        &data,
    )
    .unwrap_err();
    assert!(
        matches!(&e, NpyError::BigEndian { descr } if descr == ">f4"),
        "{e}"
    );
    assert!(e.to_string().contains("big-endian"), "{e}");
    let e = parse_dict(
        "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2)}",
        &[0; 16],
    )
    .unwrap_err();
    assert!(matches!(e, NpyError::FortranOrder { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "fortran_order True is not supported for shape [2, 1, 2] (only C order)"
    );
    let e = parse_dict(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
        &[0; 20],
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            NpyError::DataLength {
                expected: 24,
                found: 20,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "data length does not match shape [2, 3] of float32: expected 24 bytes, found 20"
    );
    let e = parse_dict(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
        &[0; 28],
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            NpyError::DataLength {
                expected: 24,
                found: 28,
                ..
            }
        ),
        "{e}"
    );
    let e = parse_dict(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
        &[],
    )
    .unwrap_err();
    assert!(matches!(e, NpyError::ShapeOverflow { .. }), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let dict = format!("{{'descr': {}", "(".repeat(100_000));
    let e = parse_dict(&dict, &[]).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

#[test]
fn constructors_check_lengths() {
    let e = NpyArray::from_f32(&[2, 3], &[0.0; 5]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "data length does not match shape [2, 3] of float32: expected 24 bytes, found 20"
    );
    assert!(NpyArray::new(DType::UInt16, vec![3], vec![0; 5]).is_err());
    let mut a = NpyArray::from_u8(&[2], &[1, 2]).unwrap();
    a.data.push(3);
    assert!(matches!(a.to_f32_vec(), Err(NpyError::DataLength { .. })));
    assert!(matches!(
        a.write(&scratch_path("never")),
        Err(NpyError::InFile { .. })
    ));
}

#[test]
fn converts_every_dtype_to_f32() {
    let cases: Vec<(NpyArray, Vec<f32>)> = vec![
        (
            NpyArray::from_f16_bits(&[3], &[0x3c00, 0xc000, 0x0001]).unwrap(),
            vec![1.0, -2.0, 2f32.powi(-24)],
        ),
        (
            NpyArray::from_f32(&[2], &[1.5, -0.25]).unwrap(),
            vec![1.5, -0.25],
        ),
        (
            NpyArray::from_f64(&[2], &[1.5, 0.1]).unwrap(),
            vec![1.5, 0.1],
        ),
        (
            NpyArray::from_u8(&[2], &[0, 255]).unwrap(),
            vec![0.0, 255.0],
        ),
        (
            NpyArray::from_i8(&[2], &[-128, 127]).unwrap(),
            vec![-128.0, 127.0],
        ),
        (NpyArray::from_u16(&[1], &[65535]).unwrap(), vec![65535.0]),
        (NpyArray::from_i16(&[1], &[-32768]).unwrap(), vec![-32768.0]),
        (
            NpyArray::from_u32(&[1], &[16_777_217]).unwrap(),
            vec![16_777_216.0],
        ),
        (
            NpyArray::from_i32(&[2], &[-7, 1 << 30]).unwrap(),
            vec![-7.0, 1073741824.0],
        ),
        (
            NpyArray::from_u64(&[1], &[u64::MAX]).unwrap(),
            vec![18446744073709551616.0],
        ),
        (NpyArray::from_i64(&[1], &[-3]).unwrap(), vec![-3.0]),
        (
            NpyArray::from_bool(&[3], &[true, false, true]).unwrap(),
            vec![1.0, 0.0, 1.0],
        ),
        (
            NpyArray::new(DType::Bool, vec![1], vec![7]).unwrap(),
            vec![1.0],
        ),
    ];
    for (array, expected) in cases {
        assert_eq!(array.to_f32_vec().unwrap(), expected, "{}", array.dtype);
    }
    let nan = NpyArray::from_f16_bits(&[], &[0x7e00])
        .unwrap()
        .to_f32_vec()
        .unwrap();
    assert!(nan[0].is_nan());
}

#[test]
fn dtype_names_and_descrs_round_trip() {
    for dtype in DType::ALL {
        assert_eq!(DType::from_name(dtype.name()), Some(dtype));
        assert_eq!(DType::from_descr(dtype.descr()).unwrap(), dtype);
        assert_eq!(dtype.descr().len(), 3);
        assert_eq!(dtype.descr()[2..], dtype.size().to_string());
    }
    assert_eq!(DType::from_name("float128"), None);
    assert_eq!(DType::Float16.size(), 2);
    assert!(DType::from_descr("").is_err());
    assert!(DType::from_descr("<").is_err());
    assert!(DType::from_descr("é").is_err());
}

#[test]
fn file_round_trip_and_errors_name_the_path() {
    let path = scratch_path("roundtrip.npy");
    let array = NpyArray::from_i32(&[2, 2], &[1, -2, 3, -4]).unwrap();
    array.write(&path).unwrap();
    assert_eq!(NpyArray::read(&path).unwrap(), array);

    std::fs::write(&path, b"not numpy").unwrap();
    let e = NpyArray::read(&path).unwrap_err();
    assert!(
        matches!(&e, NpyError::InFile { source, .. } if matches!(**source, NpyError::BadMagic { .. }))
    );
    assert!(
        e.to_string()
            .starts_with(&format!("{}: not a .npy file", path.display())),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
    std::fs::remove_file(&path).unwrap();

    let e = NpyArray::read(&path).unwrap_err();
    assert!(matches!(e, NpyError::Io { .. }));
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    let e = array
        .write(Path::new("/nonexistent-dir/x.npy"))
        .unwrap_err();
    assert!(e.to_string().starts_with("/nonexistent-dir/x.npy: "), "{e}");
}

fn any_array() -> impl Strategy<Value = NpyArray> {
    (
        proptest::sample::select(DType::ALL.to_vec()),
        proptest::collection::vec(0usize..4, 0..4),
    )
        .prop_flat_map(|(dtype, shape)| {
            let len = shape.iter().product::<usize>() * dtype.size();
            proptest::collection::vec(any::<u8>(), len)
                .prop_map(move |data| NpyArray::new(dtype, shape.clone(), data).unwrap())
        })
}

/// Bytes that matter to the header parser, to make mutations reach deep into it.
const HEADER_ALPHABET: &[u8] = b"{}()[]'\":, \n\\-+_0123456789LuTrueFalsNonedscrfpa<>|=?iub";

proptest! {
    #[test]
    fn round_trips_and_aligns(array in any_array()) {
        let bytes = array.to_bytes();
        let header = header_of(&bytes);
        prop_assert_eq!(header.len() % ARRAY_ALIGN, 0);
        prop_assert_eq!(bytes.len(), header.len() + array.data.len());
        prop_assert_eq!(NpyArray::from_bytes(&bytes).unwrap(), array);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = NpyArray::from_bytes(&bytes);
    }

    #[test]
    fn random_headers_never_panic(
        major in 0u8..5,
        header in proptest::collection::vec(proptest::sample::select(HEADER_ALPHABET.to_vec()), 0..120),
        data in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[major, 0]);
        if major == 1 {
            bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        } else {
            bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        }
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&data);
        let _ = NpyArray::from_bytes(&bytes);
    }

    #[test]
    fn mutated_files_never_panic(
        array in any_array(),
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), 0u8..4, any::<u8>(), proptest::sample::select(HEADER_ALPHABET.to_vec())),
            1..6,
        ),
    ) {
        let mut bytes = array.to_bytes();
        for (index, kind, byte, header_byte) in edits {
            if bytes.is_empty() {
                break;
            }
            let at = index.index(bytes.len());
            match kind {
                0 => bytes[at] = byte,
                1 => bytes[at] = header_byte,
                2 => bytes.insert(at, header_byte),
                _ => { bytes.remove(at); }
            }
        }
        match NpyArray::from_bytes(&bytes) {
            Ok(parsed) => prop_assert!(parsed.check().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Why this module is not `npyz` (see the module documentation), pinned against npyz itself:
/// when a test here fails, npyz has changed and the reason may be gone.
mod why_not_npyz {
    use super::*;
    use npyz::WriterBuilder;
    use std::path::Path;

    /// NumPy-written arrays from transformers' test data.
    const NUMPY_WRITTEN: &[&str] = &[
        "image/pixel_values-56.npy",
        "vision-f32/pixel_values.npy",
        "vision-f32/expected/pooler_output.npy",
    ];

    fn numpy_written(rel: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/hf")
            .join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Both readers agree on what NumPy wrote; only ours writes NumPy's bytes back.
    #[test]
    fn both_read_numpys_files_alike_and_only_ours_writes_numpys_bytes() {
        for rel in NUMPY_WRITTEN {
            let bytes = numpy_written(rel);
            let ours = NpyArray::from_bytes(&bytes).unwrap();
            let theirs = npyz::NpyFile::new(&bytes[..]).unwrap();
            let shape: Vec<u64> = theirs.shape().to_vec();
            assert_eq!(
                ours.shape,
                shape.iter().map(|&d| d as usize).collect::<Vec<_>>(),
                "{rel}"
            );
            let values: Vec<f32> = theirs.into_vec().unwrap();
            assert_eq!(ours.to_f32_vec().unwrap(), values, "{rel}");
            assert_eq!(ours.to_bytes(), bytes, "{rel}: our writer, NumPy's bytes");
            let mut written = Vec::new();
            let mut writer = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut written)
                .begin_nd()
                .unwrap();
            writer.extend(values.iter().copied()).unwrap();
            writer.finish().unwrap();
            assert_ne!(written, bytes, "{rel}: npyz now writes NumPy's bytes");
        }
    }

    /// A header whose element count overflows u64: ours refuses it with a typed error, npyz's
    /// reader panics (with overflow checks on, as in tests and `cargo fuzz -a`).
    #[test]
    #[cfg_attr(
        not(debug_assertions),
        ignore = "npyz wraps silently without overflow checks"
    )]
    fn a_shape_that_overflows_is_an_error_here_and_a_panic_in_npyz() {
        let bytes = with_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            &[],
        );
        let ours = NpyArray::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(
                ours,
                NpyError::ShapeOverflow { .. } | NpyError::DataLength { .. }
            ),
            "{ours}"
        );
        let theirs = std::panic::catch_unwind(|| npyz::NpyFile::new(&bytes[..]).map(|_| ()));
        assert!(theirs.is_err(), "npyz no longer panics: {theirs:?}");
    }
}
