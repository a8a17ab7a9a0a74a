//! End-to-end tests of the data-movement and flat-cast kernels (`copy_runs`, `gather_elements`,
//! `transpose4x4_f16`, `cast_f32_f16`, `cast_f16_fp8`) through the bitwise checker: every default case and a batch
//! of random cases match the Rust references bit for bit with no stray writes, the estimates
//! stay within 3% of the simulated cycles, and the cycles at the representative shapes stay
//! below the figures the kernels were written to (so a slower loop fails here).

use crate::checker::{
    assert_all_pass, assert_case_counts, assert_cycles_within_bounds, assert_estimates_within,
    CyclesFigure,
};
use tessera::kernels::{convert, movement, Kernel};
use tessera::sim::chip::{Chip, RunOptions};
use tessera::sim::MachineDescription;
use tessera::target::target_of;
use tessera_codegen::emit::{self, example};
use tessera_codegen::refexec;

fn kernels() -> Vec<&'static dyn Kernel> {
    let mut all = movement::kernels();
    all.extend(convert::kernels());
    all
}

#[test]
fn default_cases_pass_with_close_estimates() {
    let report = crate::checker::run(&kernels(), 0, 0);
    assert_all_pass(&report);
    assert_estimates_within(&report, 0.03);
    assert_case_counts(&report, &kernels(), 40);
    // Representative shapes and the cycles their loops reach (with a few % of headroom).
    let bounds: [CyclesFigure; 13] = [
        // 46 rows x 1152 bytes as 36 runs of 32 bytes per row (rows -> AMP panels).
        ("copy_runs", "panels R=36 O=46 w8 uniform SSS", &[], 21_000),
        ("copy_runs", "panels R=36 O=46 w8 strided SSS", &[], 16_000),
        (
            "copy_runs",
            "panels R=36 O=46 w8 pace strided SIS",
            &[],
            9_300,
        ),
        // 19 rows, a 144-byte column slice (one entry, PACE).
        (
            "copy_runs",
            "column slice R=1 O=19 w8 pace uniform",
            &[],
            950,
        ),
        // A 32 x 80 transpose, f16 and FP8.
        (
            "gather_elements",
            "transpose 32x80 W=16 O=80 E=2 SSS",
            &[],
            9_200,
        ),
        (
            "gather_elements",
            "transpose 32x80 W=8 O=80 E=1 SSS",
            &[],
            7_900,
        ),
        (
            "gather_elements",
            "transpose 32x80 W=16 O=80 E=2 strided",
            &[],
            6_450,
        ),
        (
            "gather_elements",
            "transpose 32x80 W=8 O=80 E=1 strided",
            &[],
            5_450,
        ),
        // The same f16 transpose as whole 4 x 4 blocks.
        ("transpose4x4_f16", "transpose 32x80 B=20 O=8", &[], 2_400),
        // 2,304 values.
        ("cast_f32_f16", "n=2304 SS", &[], 1_950),
        ("cast_f32_f16", "n=2304 II fast", &[], 820),
        ("cast_f16_fp8", "n=2304 II", &[], 1_060),
        ("cast_f16_fp8", "n=2304 IS fast", &[], 530),
    ];
    assert_cycles_within_bounds(&report, &bounds);
}

#[test]
fn random_cases_pass_with_close_estimates() {
    let report = crate::checker::run(&kernels(), 40, 0x5eed_0c0b);
    assert_all_pass(&report);
    assert_estimates_within(&report, 0.03);
}

#[test]
fn compiler_constructors_give_checkable_cases() {
    use tessera::isa::numerics::Fp8Format;
    use tessera::kernels::elementwise::common::Fp8Out;
    use tessera::kernels::movement::{CopyRunsSpec, Element, GatherSpec, Granule, Run};
    // Every constructor's template is a case its kernel accepts: estimate it, and the reference
    // gives one output of the output buffer's size.
    let copy = movement::copy_runs_case(&CopyRunsSpec {
        runs: Run::rows_to_panels(46, 36),
        outer: 46,
        src_stride: 1152,
        dst_stride: 32,
        granule: Granule::Word8,
        distinct: true,
    })
    .expect("valid");
    let gather = movement::gather_elements_case(&GatherSpec::transpose(32, 80, 160, Element::Half))
        .expect("valid");
    let f32_f16 = convert::cast_f32_f16_case(convert::CastF32F16Params {
        n: 2304,
        placement: convert::Placement::Paced {
            output: tessera::kernels::Region::Standard,
        },
    })
    .expect("valid");
    let f16_fp8 = convert::cast_f16_fp8_case(convert::CastF16Fp8Params {
        n: 2305,
        fp8: Fp8Out::new(Fp8Format::F143, -4, false),
        placement: convert::Placement::Anywhere {
            input: tessera::kernels::Region::Standard,
            output: tessera::kernels::Region::Standard,
        },
    })
    .expect("valid");
    for case in [copy, gather, f32_f16, f16_fp8] {
        let kernel = kernels()
            .into_iter()
            .find(|k| k.name() == case.kernel)
            .expect("a registered kernel");
        assert!(kernel.estimate_cycles(&case) > 0);
        let out = kernel.reference(&case);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].len(), case.buffer(case_output(&case)).len());
    }
}

fn case_output(case: &tessera::kernels::Case) -> &str {
    match case.kernel.as_str() {
        "copy_runs" | "gather_elements" => "dst",
        _ => "out",
    }
}

/// The kernels through the compiler's back end (placement with their regions and element slots,
/// the tables and jump tables as loaded contents, the supervisor CSRs): the first default case,
/// a case of the fastest loop and a compiler-constructor case of each, one per tile of the `small`
/// chip, every output bit compared with the plan's reference executor.
#[test]
fn the_kernels_run_in_a_compiled_image() {
    use std::sync::Arc;
    use tessera_kernels::movement::{Element, GatherSpec, Granule, Run};
    use tessera_kernels::table::{Fp8Setting, KernelParams};
    let machine = MachineDescription::builtin("small").expect("the small machine");
    let transpose = GatherSpec::transpose(32, 80, 160, Element::Half);
    let params = vec![
        KernelParams::CopyRuns {
            runs: Arc::new(Run::rows_to_panels(46, 36)),
            outer: 46,
            src_stride: 1152,
            dst_stride: 32,
            granule: Granule::Word8,
            slots: None,
        },
        // The same rows with src and dst in the caller's element slots: the paced loop.
        KernelParams::CopyRuns {
            runs: Arc::new(Run::rows_to_panels(46, 36)),
            outer: 46,
            src_stride: 1152,
            dst_stride: 32,
            granule: Granule::Word8,
            slots: Some((3, 0)),
        },
        KernelParams::CopyRuns {
            runs: Arc::new(vec![Run::copy(4, 0, 12), Run::zeros(12, 8)]),
            outer: 5,
            src_stride: 20,
            dst_stride: 20,
            granule: Granule::Word4,
            slots: None,
        },
        KernelParams::Gather {
            words: Arc::new(transpose.words.clone()),
            outer: transpose.outer,
            src_stride: transpose.src_stride,
            dst_stride: transpose.dst_stride,
            element: transpose.element,
        },
        KernelParams::CastF32F16 { n: 2304 },
        KernelParams::CastF16Fp8 {
            n: 2304,
            out: Fp8Setting {
                format: tessera_isa::numerics::Fp8Format::F152,
                scale: 3,
                nanoo: true,
            },
        },
    ];
    let calls: Vec<(Arc<KernelParams>, Vec<Vec<u8>>)> = params
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = p.spec().expect("valid params");
            let data = spec
                .operands
                .iter()
                .map(|o| {
                    (0..o.bytes)
                        .map(|b| (b as u64 * 2654435761 + i as u64 * 97) as u8)
                        .collect()
                })
                .collect();
            (Arc::new(p), data)
        })
        .collect();
    let program = example::one_call_per_tile(machine.tiles, &calls).expect("typed calls");
    let compiled = emit::compile(&target_of(&machine), &program).unwrap_or_else(|e| panic!("{e}"));
    let mut chip = Chip::new(&machine).expect("a chip");
    chip.load_image(&compiled.image).expect("the image loads");
    let no_inputs: &[(String, Vec<u8>)] = &[];
    let report = chip
        .run(no_inputs, &RunOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = refexec::execute(&program, no_inputs).expect("the reference executor");
    assert_eq!(report.outputs.len(), expected.len());
    for ((name, got), (want_name, want)) in report.outputs.iter().zip(&expected) {
        assert_eq!(name, want_name);
        assert!(got == want, "output `{name}` differs from the reference");
    }
}

/// A paced copy of one run repeated over outer iterations, src and dst strides different (the
/// `.Lsq8` loop), run bitwise through the checker with data in src. (With gaps between the runs
/// in dst the checker's poison stays there, as the kernel leaves unwritten bytes alone.)
#[test]
fn a_paced_single_run_copy_over_outer_iterations_is_bit_exact() {
    use std::sync::Arc;
    use tessera::kernels::movement::{CopyRunsSpec, Granule, Run};
    use tessera::sim::memory::MemoryLayout;
    let machine = MachineDescription::builtin("ipu21").expect("machine");
    let layout = Arc::new(MemoryLayout::from_machine(&machine).expect("layout"));
    let kernel: &'static dyn Kernel = &movement::CopyRuns;
    let prepared = tessera::check::prepare(&machine, kernel, None).expect("assembles");
    for (src_stride, dst_stride, outer) in [(512u32, 256u32, 4u32), (768, 256, 5), (256, 256, 30)] {
        let mut case = movement::copy_runs_case(&CopyRunsSpec {
            runs: vec![Run::copy(0, 0, 256)],
            outer,
            src_stride,
            dst_stride,
            granule: Granule::Word8,
            distinct: true,
        })
        .expect("valid");
        let src = &mut case.buffers[0].bytes;
        for (i, b) in src.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        let result = tessera::check::run_case(&machine, &layout, &prepared, &case, 1_000_000);
        assert!(
            result.passed,
            "{} {src_stride}/{dst_stride}: {:?}",
            case.name, result.failure
        );
    }
}
