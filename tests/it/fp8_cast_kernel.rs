//! Acceptance test of the FP8 cast kernel (`kernels/asm/examples/f16_to_fp8.S`) run through the
//! CLI (`tessera asm run --worker ...`) on every f16 bit pattern: every output byte is compared
//! (a) with the oracle tables in `testdata/fp8/` (made with NumPy/ml_dtypes, outside
//! the project) and (b) for more scales with a reference written here from the FP8 format
//! definition (isa.md §4), not with tessera's numerics module. The cycle count the CLI prints is
//! checked against the count derived from the kernel's instructions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::cli::repo;
use tessera::npy::{DType, NpyArray};

/// A fresh scratch directory for `test` of this module.
fn scratch_dir(test: &str) -> PathBuf {
    crate::cli::scratch_dir("fp8-cast", test)
}

const KERNEL: &str = "kernels/asm/examples/f16_to_fp8.S";
const PATTERNS: usize = 65_536;
/// Groups of four halves the kernel converts for all patterns.
const GROUPS: u64 = (PATTERNS / 4) as u64;

fn oracle(name: &str) -> PathBuf {
    repo().join("testdata/fp8").join(name)
}

/// Writes the input: every f16 bit pattern in order (index = pattern), dtype float16.
fn write_input(dir: &Path) -> PathBuf {
    let patterns: Vec<u16> = (0..=u16::MAX).collect();
    let input = NpyArray::from_f16_bits(&[PATTERNS], &patterns).expect("input array");
    assert_eq!(input.dtype, DType::Float16);
    let path = dir.join("all_f16.npy");
    input.write(&path).expect("write the input .npy");
    path
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    F143,
    F152,
}

impl Format {
    /// The vertex `fmt` field: 1 = F143, 0 = F152.
    fn field(self) -> u32 {
        match self {
            Format::F143 => 1,
            Format::F152 => 0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::F143 => "f143",
            Format::F152 => "f152",
        }
    }

    /// (exponent bits, mantissa bits, bias).
    fn layout(self) -> (u32, u32, i32) {
        match self {
            Format::F143 => (4, 3, 8),
            Format::F152 => (5, 2, 16),
        }
    }
}

struct CastRun {
    codes: Vec<u8>,
    stdout: String,
}

fn run_cli(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run the tessera binary")
}

/// Runs the kernel through `tessera asm run` for one format and `$FP_SCL` value.
fn cast_with_cli(dir: &Path, input: &Path, format: Format, scale: i32) -> CastRun {
    let out = dir.join(format!("out_{}_{scale}.npy", format.name()));
    let args: Vec<String> = vec![
        "asm".into(),
        "run".into(),
        KERNEL.into(),
        "--worker".into(),
        "--entry".into(),
        "f16_to_fp8".into(),
        "--vertex".into(),
        "f16_to_fp8_vertex".into(),
        "--input".into(),
        format!("f16_to_fp8_src={}", input.display()),
        "--set".into(),
        format!("f16_to_fp8_vertex+8={GROUPS}"),
        "--set".into(),
        format!("f16_to_fp8_vertex+12={}", format.field()),
        "--set".into(),
        format!("f16_to_fp8_vertex+16={scale}"),
        "--output".into(),
        format!("f16_to_fp8_dst={}:uint8:{PATTERNS}", out.display()),
    ];
    let output = run_cli(&args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "tessera {} failed\nstdout:\n{stdout}\nstderr:\n{stderr}",
        args.join(" ")
    );
    let array = NpyArray::read(&out).expect("read the output .npy");
    assert_eq!(array.dtype, DType::UInt8);
    assert_eq!(array.shape, vec![PATTERNS]);
    CastRun {
        codes: array.data,
        stdout,
    }
}

/// Compares every byte, reporting the first few mismatches with their inputs.
fn assert_all_equal(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), PATTERNS, "{what}: output length");
    assert_eq!(want.len(), PATTERNS, "{what}: reference length");
    let mismatches: Vec<String> = (0..PATTERNS)
        .filter(|&i| got[i] != want[i])
        .map(|i| {
            format!(
                "f16 {i:#06x}: kernel {:#04x}, reference {:#04x}",
                got[i], want[i]
            )
        })
        .collect();
    assert!(
        mismatches.is_empty(),
        "{what}: {} of {PATTERNS} outputs differ; first ones:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// (a) Oracle tables

fn check_against_oracle(format: Format) {
    let dir = scratch_dir(&format!("oracle-{}", format.name()));
    let input = write_input(&dir);
    for scale in [-4, 0, 4] {
        let table = NpyArray::read(&oracle(&format!(
            "f16_to_{}_fpscl{scale}_nanoo0.npy",
            format.name()
        )))
        .expect("oracle table");
        assert_eq!(
            (table.dtype, table.shape.clone()),
            (DType::UInt8, vec![PATTERNS])
        );
        let run = cast_with_cli(&dir, &input, format, scale);
        assert_all_equal(
            &run.codes,
            &table.data,
            &format!("{} scale {scale} vs oracle", format.name()),
        );
        // The independent reference agrees with the oracle too (a check of the reference).
        let reference: Vec<u8> = (0..=u16::MAX)
            .map(|h| reference_cast(h, format, scale))
            .collect();
        assert_all_equal(
            &reference,
            &table.data,
            &format!("{} scale {scale}: test reference vs oracle", format.name()),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn f143_matches_the_oracle_tables() {
    check_against_oracle(Format::F143);
}

#[test]
fn f152_matches_the_oracle_tables() {
    check_against_oracle(Format::F152);
}

// ---------------------------------------------------------------------------------------------
// (b) An independent reference from the format definition (isa.md §4)

/// Exact value of an f16 bit pattern, or `None` for NaN and ±infinity.
fn f16_value(bits: u16) -> Option<f64> {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = ((bits >> 10) & 0x1f) as i32;
    let mantissa = (bits & 0x3ff) as f64;
    match exponent {
        0x1f => None,
        0 => Some(sign * mantissa * 2f64.powi(-24)),
        e => Some(sign * (1024.0 + mantissa) * 2f64.powi(e - 25)),
    }
}

/// Magnitudes of the codes 0x00..=0x7f, in increasing order: code = exponent field << m | mantissa,
/// value = mantissa · 2^(1 - bias - m) for exponent field 0 (subnormals, and zero), else
/// (2^m + mantissa) · 2^(e - bias - m). Every code of 0x01..=0x7f is a finite value: there is no
/// infinity; the only NaN is 0x80 (the "negative zero" code).
fn magnitudes(format: Format) -> Vec<f64> {
    let (exponent_bits, m, bias) = format.layout();
    assert_eq!(1 + exponent_bits + m, 8);
    (0u32..128)
        .map(|code| {
            let e = (code >> m) as i32;
            let mantissa = (code & ((1 << m) - 1)) as f64;
            if e == 0 {
                mantissa * 2f64.powi(1 - bias - m as i32)
            } else {
                (2f64.powi(m as i32) + mantissa) * 2f64.powi(e - bias - m as i32)
            }
        })
        .collect()
}

/// FP8 code of f16(`bits`) · 2^`scale`, rounded to the nearest code (ties to the even code),
/// saturating to ±max (NANOO = 0); NaN and infinity give 0x80; zero has only the code 0x00.
fn reference_cast(bits: u16, format: Format, scale: i32) -> u8 {
    let magnitudes = magnitudes(format);
    let Some(value) = f16_value(bits) else {
        return 0x80;
    };
    // Exact: an 11-bit significand times a power of two well inside the f64 range.
    let y = value * 2f64.powi(scale);
    let a = y.abs();
    let max = magnitudes[127];
    let code = if a >= max {
        127
    } else {
        // magnitudes[k] <= a < magnitudes[k + 1]
        let k = magnitudes
            .iter()
            .rposition(|&m| m <= a)
            .expect("magnitudes[0] is 0");
        let (lo, hi) = (magnitudes[k], magnitudes[k + 1]);
        // The midpoint of two FP8 values is exact in f64.
        let mid = (lo + hi) / 2.0;
        if a < mid {
            k
        } else if a > mid {
            k + 1
        } else if k % 2 == 0 {
            k
        } else {
            k + 1
        }
    } as u8;
    if code == 0 {
        0x00
    } else if y < 0.0 {
        0x80 | code
    } else {
        code
    }
}

#[test]
fn the_reference_has_the_documented_ranges() {
    // isa.md §4: F143 max 240 (0x7f), min subnormal 2^-10; F152 max 57344, min subnormal 2^-17.
    let f143 = magnitudes(Format::F143);
    let f152 = magnitudes(Format::F152);
    assert_eq!(
        (f143[127], f143[1], f143[8]),
        (240.0, 2f64.powi(-10), 2f64.powi(-7))
    );
    assert_eq!(
        (f152[127], f152[1], f152[4]),
        (57344.0, 2f64.powi(-17), 2f64.powi(-15))
    );
    for table in [&f143, &f152] {
        assert!(
            table.windows(2).all(|w| w[0] < w[1]),
            "codes increase with magnitude"
        );
    }
    // Some conversions by hand: 1.0 -> 0x40 (F143: e = 8), 0x44 (F152: e = 16 << 2).
    assert_eq!(reference_cast(0x3c00, Format::F143, 0), 0x40);
    assert_eq!(reference_cast(0x3c00, Format::F152, 0), 0x40);
    assert_eq!(reference_cast(0xbc00, Format::F143, 0), 0xc0);
    // 448 saturates to 240 (0x7f) in F143; -65504 to -57344 (0xff) in F152.
    assert_eq!(reference_cast(0x5f00, Format::F143, 0), 0x7f);
    assert_eq!(reference_cast(0xfbff, Format::F152, 0), 0xff);
    // -0.0 and values rounding to zero -> 0x00; NaN and infinity -> 0x80.
    assert_eq!(reference_cast(0x8000, Format::F143, 0), 0x00);
    assert_eq!(reference_cast(0x8001, Format::F152, 0), 0x00);
    assert_eq!(reference_cast(0x7c00, Format::F143, 0), 0x80);
    assert_eq!(reference_cast(0xfe00, Format::F152, 0), 0x80);
    // Ties to even: 1 + 1/16 is halfway between 1 (0x40) and 1.125 (0x41) in F143 -> 0x40;
    // 1 + 3/16 between 0x41 and 0x42 -> 0x42.
    assert_eq!(reference_cast(0x3c40, Format::F143, 0), 0x40);
    assert_eq!(reference_cast(0x3cc0, Format::F143, 0), 0x42);
    // Half the smallest subnormal rounds to 0 (even), just above it to the subnormal 0x01.
    assert_eq!(reference_cast(0x1400, Format::F143, -1), 0x00); // 2^-10 * 2^-1
    assert_eq!(reference_cast(0x1401, Format::F143, -1), 0x01);
}

fn check_against_reference(format: Format) {
    let dir = scratch_dir(&format!("reference-{}", format.name()));
    let input = write_input(&dir);
    for scale in [-31, -8, 7, 15, 31, -32, 1] {
        let run = cast_with_cli(&dir, &input, format, scale);
        let reference: Vec<u8> = (0..=u16::MAX)
            .map(|h| reference_cast(h, format, scale))
            .collect();
        assert_all_equal(
            &run.codes,
            &reference,
            &format!("{} scale {scale} vs the format definition", format.name()),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn f143_matches_the_format_definition_at_more_scales() {
    check_against_reference(Format::F143);
}

#[test]
fn f152_matches_the_format_definition_at_more_scales() {
    check_against_reference(Format::F152);
}

// ---------------------------------------------------------------------------------------------
// Cycles

/// The number after `label` on the line that starts with it.
fn printed_number(stdout: &str, label: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{stdout}"));
    let digits: String = line[label.len()..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after `{label}` in `{line}`"))
}

#[test]
fn the_printed_cycle_count_is_six_per_bundle() {
    // Bundles the kernel executes for `count` groups (reading f16_to_fp8.S):
    // - set-up: 5 ld32 (src, dst, count, fmt, scale), shl, st32, ld32 (fmt to the ARF) — 8
    //   solo instructions — then `{ brz ; uput $FP_NFMT }` and `{ add ; uput $FP_SCL }`: 10 bundles;
    // - the loop body .Lloop: ld32step, ld32step, f16v2tof8, f16v2tof8, sort4x16lo, st32step,
    //   brnzdec — 7 bundles, run `count` times (brnzdec taken count - 1 times, then falls
    //   through into .Ldone);
    // - exitz: 1 bundle.
    // Total 11 + 7·count bundles. A lone worker issues one bundle per 6-cycle round and the run
    // ends at the end of the exitz's round: cycles = 6 · (11 + 7·count).
    // For count = 16384: 11 + 114688 = 114699 bundles, 688194 cycles.
    let bundles = 11 + 7 * GROUPS;
    assert_eq!(bundles, 114_699);
    let dir = scratch_dir("cycles");
    let input = write_input(&dir);
    for (format, scale) in [(Format::F143, 0), (Format::F152, -8)] {
        let run = cast_with_cli(&dir, &input, format, scale);
        assert_eq!(
            printed_number(&run.stdout, "cycles:"),
            6 * bundles,
            "stdout:\n{}",
            run.stdout
        );
        assert_eq!(printed_number(&run.stdout, "cycles:"), 688_194);
        assert_eq!(
            printed_number(&run.stdout, "bundles issued:"),
            bundles,
            "stdout:\n{}",
            run.stdout
        );
        assert!(
            run.stdout.contains("(supervisor 0, workers 114699)"),
            "stdout:\n{}",
            run.stdout
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_vertex_skips_the_loop() {
    // count = 0: the 8 solo set-up instructions, `{ brz ; uput }` taken to .Ldone (skipping the
    // `{ add ; uput }` bundle) and the exitz: 10 bundles, 60 cycles; the output is untouched.
    let dir = scratch_dir("empty");
    let input = write_input(&dir);
    let out = dir.join("out.npy");
    let args: Vec<String> = [
        "asm",
        "run",
        KERNEL,
        "--worker",
        "--entry",
        "f16_to_fp8",
        "--vertex",
        "f16_to_fp8_vertex",
        "--set",
        "f16_to_fp8_vertex+8=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "--input".to_string(),
        format!("f16_to_fp8_src={}", input.display()),
        "--output".to_string(),
        format!("f16_to_fp8_dst={}:uint8:16", out.display()),
    ])
    .collect();
    let output = run_cli(&args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(printed_number(&stdout, "cycles:"), 60);
    assert_eq!(printed_number(&stdout, "bundles issued:"), 10);
    assert_eq!(NpyArray::read(&out).unwrap().data, vec![0u8; 16]);
    let _ = std::fs::remove_dir_all(&dir);
}
