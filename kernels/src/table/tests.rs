//! Tests of the kernel table: typed params to kernels, their cases and their refusals.
use super::*;

#[test]
fn every_kernel_has_one_row_and_its_name() {
    let all = crate::all_kernels();
    assert_eq!(KernelId::ALL.len(), all.len());
    for (id, k) in KernelId::ALL.iter().zip(&all) {
        assert_eq!(id.kernel().name(), k.name());
        assert_eq!(KernelId::from_name(k.name()), Some(*id));
    }
}

#[test]
fn params_give_templates_and_refuse_bad_shapes() {
    let p = KernelParams::BiasAdd {
        rows: 3,
        cols: 8,
        slots: None,
    };
    let ops = p.operands().unwrap();
    assert_eq!(ops.len(), 3);
    assert_eq!(ops[0].bytes, 3 * 8 * 2);
    assert!(Arc::ptr_eq(&p.template().unwrap(), &p.template().unwrap()));
    assert!(KernelParams::BiasAdd {
        rows: 3,
        cols: 6,
        slots: None
    }
    .template()
    .is_err());
    let g = KernelParams::Gemm(GemmParams {
        fp8: true,
        m: 5,
        k: 64,
        n: 40,
        a_format: Fp8Format::F143,
        b_format: Fp8Format::F143,
        scale: -14,
        a_row_bytes: 0,
    });
    let ops = g.operands().unwrap();
    assert_eq!(
        ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c", "s"]
    );
    assert_eq!(ops[1].region, RegionNeed::Interleaved);
    // The template's operands are zeros (its callers supply theirs), and its estimate is
    // the estimate of a case with data.
    let template = g.template().unwrap();
    assert!(template.buffers[..2]
        .iter()
        .all(|b| b.bytes.iter().all(|&x| x == 0)));
    let mut spec = crate::gemm::GemmSpec::new(5, 64, 40);
    spec.scale = -14;
    spec.a_region = crate::case::Region::Standard;
    let with_data = crate::gemm::GEMM_FP8.make_case(&spec);
    assert!(with_data.buffers[0].bytes.iter().any(|&x| x != 0));
    assert_eq!(
        g.estimate_cycles().unwrap(),
        crate::Kernel::estimate_cycles(&crate::gemm::GEMM_FP8, &with_data)
    );
    let zeros: Vec<Vec<u8>> = ops.iter().map(|o| vec![0; o.bytes as usize]).collect();
    let out = g.reference(zeros).unwrap();
    assert_eq!(out.len(), 1);
    assert!(out[0].iter().all(|&b| b == 0));
    // A in rows: its buffer is the rows at their stride; a stride that cannot hold K's
    // blocks, or K that is not whole blocks, is refused.
    let rows = |k: u32, a_row_bytes: u32| {
        KernelParams::Gemm(GemmParams {
            fp8: true,
            m: 5,
            k,
            n: 40,
            a_format: Fp8Format::F143,
            b_format: Fp8Format::F143,
            scale: -14,
            a_row_bytes,
        })
    };
    assert_eq!(rows(64, 72).operands().unwrap()[0].bytes, 4 * 72 + 64);
    assert!(rows(64, 56).template().is_err());
    assert!(rows(60, 64).template().is_err());
    assert!(rows(64, 66).template().is_err());
}
