//! Unit tests of `copy_runs`: case coverage, the constructor's rewrites, errors and loop choice.

use super::cases;
use super::constructor::compiler_case;
use super::table::{copy_runs_reference, CopyRunsSpec, Granule, Run, Table};
use super::{split_of, table_of, CopyRuns, PACE, STRIDED, UNIFORM, V_FLAGS, W8};
use crate::split::{index_bits, worker_split};
use crate::Kernel;
use tessera_isa::rng::Rng;

/// Every dst byte of every default case is written by exactly one run (so the reference is
/// the whole truth and the poison check sees any missed run).
#[test]
fn default_cases_cover_dst_exactly_once() {
    for case in CopyRuns.cases() {
        let table = table_of(&case);
        let mut hits = vec![0u8; case.buffer("dst").len()];
        for o in 0..table.outer {
            for run in &table.runs {
                let start = (o * table.dst_stride + run.dst) as usize;
                for h in &mut hits[start..start + run.bytes as usize] {
                    *h += 1;
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1), "{}", case.name);
    }
    assert!(CopyRuns.cases().len() >= 60);
}

#[test]
fn compiler_cases_copy_what_the_spec_says() {
    let mut rng = Rng::new(3);
    for spec in cases::compiler_specs() {
        let case = compiler_case(&spec).unwrap();
        let table = table_of(&case);
        let src: Vec<u8> = (0..case.buffer("src").len())
            .map(|_| rng.next_u32() as u8)
            .collect();
        let dst_len = case.buffer("dst").len();
        let want = copy_runs_reference(
            &spec.runs,
            spec.outer,
            spec.src_stride,
            spec.dst_stride,
            &src,
            dst_len,
        );
        let got = copy_runs_reference(
            &table.runs,
            table.outer,
            table.src_stride,
            table.dst_stride,
            &src,
            dst_len,
        );
        assert_eq!(got, want);
    }
}

#[test]
fn the_constructor_picks_the_fastest_loop() {
    // Long runs, one entry: PACE (the single-entry loop).
    let long = CopyRunsSpec {
        runs: vec![Run::copy(0, 0, 1152)],
        outer: 20,
        src_stride: 2304,
        dst_stride: 1152,
        granule: Granule::Word8,
        distinct: true,
    };
    let case = compiler_case(&long).unwrap();
    assert_eq!(table_of(&case).flags, W8 | PACE | UNIFORM);
    assert_eq!(case.buffers[0].element_slot, Some(0));
    // Short runs at irregular places: the plain loops, no element constraint.
    let irregular = CopyRunsSpec {
        runs: [0u32, 40, 16, 96, 64, 200, 128, 304]
            .iter()
            .enumerate()
            .map(|(i, &s)| Run::copy(s, 8 * i as u32, 8))
            .collect(),
        src_stride: 400,
        dst_stride: 64,
        ..long.clone()
    };
    let case = compiler_case(&irregular).unwrap();
    assert_eq!(table_of(&case).flags, W8 | UNIFORM);
    assert_eq!(case.buffers[0].element_slot, None);
    // Rows to panels: a progression, column by column with PACE when allowed.
    let panels = CopyRunsSpec {
        runs: Run::rows_to_panels(46, 36),
        outer: 46,
        src_stride: 1152,
        dst_stride: 32,
        granule: Granule::Word8,
        distinct: true,
    };
    let flags = table_of(&compiler_case(&panels).unwrap()).flags;
    assert_eq!(flags, W8 | UNIFORM | STRIDED | PACE);
    let flags = table_of(
        &compiler_case(&CopyRunsSpec {
            distinct: false,
            ..panels
        })
        .unwrap(),
    )
    .flags;
    assert_eq!(flags, W8 | UNIFORM | STRIDED);
}

#[test]
fn progressions_are_recognised() {
    let runs: Vec<Run> = (0..4).map(|i| Run::copy(100 - 8 * i, 16 * i, 8)).collect();
    assert_eq!(Table::progression(&runs), Some((-8, 16)));
    let mut broken = runs.clone();
    broken[3].dst += 8;
    assert_eq!(Table::progression(&broken), None);
    assert_eq!(Table::progression(&runs[..1]), None);
    assert!(Table::pace_strides_fit(4088, -4088) && !Table::pace_strides_fit(4096, 0));
}

#[test]
fn bad_specs_are_refused_with_ids() {
    let good = CopyRunsSpec {
        runs: vec![Run::copy(0, 0, 16), Run::zeros(16, 8)],
        outer: 4,
        src_stride: 16,
        dst_stride: 24,
        granule: Granule::Word8,
        distinct: false,
    };
    assert!(compiler_case(&good).is_ok());
    let id = |spec: CopyRunsSpec| compiler_case(&spec).unwrap_err().id();
    assert_eq!(
        id(CopyRunsSpec {
            runs: vec![],
            ..good.clone()
        }),
        "E-KERNEL-001"
    );
    assert_eq!(
        id(CopyRunsSpec {
            outer: 0,
            ..good.clone()
        }),
        "E-KERNEL-001"
    );
    assert_eq!(
        id(CopyRunsSpec {
            src_stride: 12,
            ..good.clone()
        }),
        "E-KERNEL-002"
    );
    assert_eq!(
        id(CopyRunsSpec {
            runs: vec![Run::copy(0, 0, 8 * 65_536)],
            ..good.clone()
        }),
        "E-KERNEL-003"
    );
    assert_eq!(
        id(CopyRunsSpec {
            dst_stride: 16,
            ..good.clone()
        }),
        "E-KERNEL-004"
    );
    assert_eq!(
        id(CopyRunsSpec {
            outer: 1 << 20,
            ..good.clone()
        }),
        "E-KERNEL-005"
    );
    assert_eq!(
        id(CopyRunsSpec {
            outer: 100_000,
            dst_stride: 64,
            ..good.clone()
        }),
        "E-KERNEL-006"
    );
}

#[test]
fn reference_moves_bytes_and_zeros() {
    let runs = [Run::copy(4, 0, 4), Run::zeros(4, 4)];
    let src: Vec<u8> = (0..16).collect();
    let out = copy_runs_reference(&runs, 2, 8, 8, &src, 16);
    assert_eq!(
        out,
        vec![4, 5, 6, 7, 0, 0, 0, 0, 12, 13, 14, 15, 0, 0, 0, 0]
    );
}

/// The constructor writes K in the flags word and each worker's first item packed: the split
/// read back from a case is the split it was built from.
#[test]
fn first_items_are_packed_as_outer_and_run() {
    let spec = CopyRunsSpec {
        runs: (0..5).map(|i| Run::copy(16 * i, 8 * i, 8)).collect(),
        outer: 7,
        src_stride: 80,
        dst_stride: 40,
        granule: Granule::Word8,
        distinct: false,
    };
    let case = compiler_case(&spec).unwrap();
    let table = table_of(&case);
    assert_eq!(case.word(V_FLAGS) >> 4, index_bits(table.runs.len() as u32));
    assert_eq!(split_of(&case), worker_split(table.items()));
}

/// Nine rows of 264 bytes (a block's own rows into a product's operand): a worker copies whole
/// runs, so the constructor cuts them into pieces all six workers share (pieces of 64 bytes or
/// more where 256 left them whole), copying the same bytes in fewer estimated cycles.
#[test]
fn few_long_runs_are_shared_out_among_the_workers() {
    let spec = CopyRunsSpec {
        runs: (0..9u32)
            .map(|r| Run::copy(320 * r, 272 * r, 264))
            .collect(),
        outer: 1,
        src_stride: 0,
        dst_stride: 0,
        granule: Granule::Word8,
        distinct: false,
    };
    let case = compiler_case(&spec).unwrap();
    let table = table_of(&case);
    assert!(table.runs.len() >= 18, "{} runs", table.runs.len());
    let whole = Table {
        runs: spec.runs.clone(),
        outer: 1,
        src_stride: 0,
        dst_stride: 0,
        flags: table.flags,
    };
    let estimate = super::cost::estimate(&whole, &worker_split(9));
    assert!(
        CopyRuns.estimate_cycles(&case) < estimate,
        "{} against {estimate} whole",
        CopyRuns.estimate_cycles(&case)
    );
    let src: Vec<u8> = (0..case.buffer("src").len()).map(|i| i as u8).collect();
    let dst = case.buffer("dst").len();
    assert_eq!(
        copy_runs_reference(&table.runs, 1, 0, 0, &src, dst),
        copy_runs_reference(&spec.runs, 1, 0, 0, &src, dst)
    );
}
