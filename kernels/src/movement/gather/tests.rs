//! Unit tests of `gather_elements`: the transpose helper, progressions, coverage, errors.

use super::spec::{compiler_case, gather_reference, Element, GatherSpec};
use super::{spec_of, GatherElements, E_FLAGS, E_K_SHIFT, NOZERO, STRIDED, V_E};
use crate::case::bytes;
use crate::Kernel;

#[test]
fn transpose_spec_transposes() {
    // 3 x 2 f16 [[1, 2], [3, 4], [5, 6]] -> [[1, 3, 5, 0], [2, 4, 6, 0]] (rows padded to 8 bytes).
    let spec = GatherSpec::transpose(3, 2, 4, Element::Half);
    let src = bytes::from_u16(&[1, 2, 3, 4, 5, 6]);
    let out = gather_reference(&spec, &src, spec.dst_extent() as usize);
    assert_eq!(bytes::to_u16(&out), vec![1, 3, 5, 0, 2, 4, 6, 0]);
    let spec = GatherSpec::transpose(4, 2, 2, Element::Byte);
    let out = gather_reference(&spec, &[1, 2, 3, 4, 5, 6, 7, 8], 8);
    assert_eq!(out, vec![1, 3, 5, 7, 2, 4, 6, 8]);
}

#[test]
fn transposes_of_whole_words_are_progressions() {
    assert!(GatherSpec::transpose(32, 80, 160, Element::Half).strided());
    assert!(GatherSpec::transpose(32, 80, 80, Element::Byte).strided());
    // Padded with zero lanes: not a progression; the constructor keeps the table loop.
    let odd = GatherSpec::transpose(3, 5, 10, Element::Half);
    assert!(!odd.strided());
    assert_eq!(compiler_case(&odd).unwrap().word(V_E) & STRIDED, 0);
    let big = compiler_case(&GatherSpec::transpose(32, 80, 160, Element::Half)).unwrap();
    assert_eq!(big.word(V_E) & E_FLAGS, 2 | NOZERO | STRIDED);
    // K holds every word index of an outer iteration: W = 32 * 80 * 2 / 4 words.
    let (w, k) = (big.word(super::V_W), (big.word(V_E) >> E_K_SHIFT) & 31);
    assert!(k > 0 && w <= 1 << k && w > 1 << (k - 1), "W = {w}, K = {k}");
}

#[test]
fn default_cases_cover_dst_exactly_once() {
    let cases = GatherElements.cases();
    assert!(cases.len() >= 40);
    for case in cases {
        let spec = spec_of(&case);
        let mut hits = vec![0u8; case.buffer("dst").len()];
        for o in 0..spec.outer {
            for w in &spec.words {
                let start = (o * spec.dst_stride + w.dst) as usize;
                for h in &mut hits[start..start + 4] {
                    *h += 1;
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1), "{}", case.name);
    }
}

#[test]
fn bad_specs_are_refused_with_ids() {
    let good = GatherSpec::transpose(4, 4, 8, Element::Half);
    assert!(compiler_case(&good).is_ok());
    let id = |spec: GatherSpec| compiler_case(&spec).unwrap_err().id();
    assert_eq!(
        id(GatherSpec {
            words: vec![],
            ..good.clone()
        }),
        "E-KERNEL-001"
    );
    assert_eq!(
        id(GatherSpec {
            dst_stride: 6,
            ..good.clone()
        }),
        "E-KERNEL-002"
    );
    assert_eq!(
        id(GatherSpec {
            src_stride: 3,
            ..good.clone()
        }),
        "E-KERNEL-002"
    );
    assert_eq!(
        id(GatherSpec {
            dst_stride: 4,
            ..good.clone()
        }),
        "E-KERNEL-004"
    );
    assert_eq!(
        id(GatherSpec {
            element: Element::Byte,
            ..good.clone()
        }),
        "E-KERNEL-007"
    );
    assert_eq!(
        id(GatherSpec {
            outer: 600_000,
            ..good.clone()
        }),
        "E-KERNEL-005"
    );
}

#[test]
fn the_compiler_estimate_is_the_built_cases() {
    use super::spec::compiler_estimate;
    use crate::Kernel;
    for spec in [
        GatherSpec::transpose(32, 80, 160, Element::Half),
        GatherSpec::transpose(3, 5, 10, Element::Half),
        GatherSpec::transpose(72, 19, 27, Element::Byte),
        GatherSpec::transpose(1, 9, 9, Element::Half),
    ] {
        let case = compiler_case(&spec).unwrap();
        assert_eq!(
            compiler_estimate(&spec),
            Some(GatherElements.estimate_cycles(&case))
        );
    }
}
