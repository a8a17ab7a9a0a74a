//! End-to-end tests of `tessera asm image` and `tessera sim run`: a broadcast program built from
//! one assembly file per tile group, run with `.npy` input and output, profile and memory report;
//! and clear errors for images on the wrong machine, bad inputs and bad tile ranges.

use std::path::{Path, PathBuf};

use crate::cli::{fails_clearly, succeeds};
use tessera::chip_program::{BROADCAST_RECEIVER, BROADCAST_SENDER};
use tessera::npy::{DType, NpyArray};

/// The command fails clearly with `needle` in its message.
fn fails_with(args: &[&str], needle: &str) {
    fails_clearly(args, &[needle]);
}

/// A fresh scratch directory for `test` of this module.
fn scratch_dir(test: &str) -> PathBuf {
    crate::cli::scratch_dir("cli-sim", test)
}

/// Builds the broadcast image in `dir`; returns its path.
fn build(dir: &Path) -> String {
    let sender = dir.join("send.S");
    let receiver = dir.join("recv.S");
    std::fs::write(&sender, BROADCAST_SENDER).unwrap();
    std::fs::write(&receiver, BROADCAST_RECEIVER).unwrap();
    let image = dir.join("broadcast.img");
    let run = succeeds(&[
        "asm",
        "image",
        "--machine",
        "small",
        "--tiles",
        &format!("0={}", sender.display()),
        "--tiles",
        &format!("1-15={}", receiver.display()),
        "--entry",
        "main",
        "--host-input",
        "x=src:u32:8",
        "--host-output",
        "y=dst:u32:8",
        "-o",
        image.to_str().unwrap(),
    ]);
    assert!(run.stdout.contains("16 tiles"), "{}", run.stdout);
    image.to_str().unwrap().to_string()
}

#[test]
fn asm_image_then_sim_run_broadcasts() {
    let dir = scratch_dir("broadcast");
    let image = build(&dir);
    let values: Vec<u32> = (0..8).map(|i| 0x1000_0001 * (i + 1)).collect();
    let x = dir.join("x.npy");
    NpyArray::new(
        DType::UInt32,
        vec![1, 8],
        values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    )
    .unwrap()
    .write(&x)
    .unwrap();
    let y = dir.join("y.npy");
    let profile = dir.join("profile");
    let memory = dir.join("memory.json");
    let run = succeeds(&[
        "sim",
        "run",
        &image,
        "--input",
        &format!("x={}", x.display()),
        "--output",
        &format!("y={}", y.display()),
        "--threads",
        "2",
        "--profile",
        profile.to_str().unwrap(),
        "--trace-detail",
        "full",
        "--memory-report",
        memory.to_str().unwrap(),
    ]);
    for needle in [
        "total cycles:",
        "start-up:",
        "cropped cycles:",
        "SRAM on small",
    ] {
        assert!(
            run.stdout.contains(needle),
            "stdout lacks `{needle}`:\n{}",
            run.stdout
        );
    }
    let supersteps = run
        .stdout
        .lines()
        .find(|l| l.starts_with("supersteps:"))
        .unwrap_or_default();
    assert_eq!(
        supersteps.split_whitespace().collect::<Vec<_>>(),
        ["supersteps:", "2"]
    );
    let out = NpyArray::read(&y).unwrap();
    assert_eq!(out.shape, vec![16, 8]);
    let words: Vec<u32> = out
        .data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(&words[..8], &[0; 8]);
    for tile in 1..16 {
        assert_eq!(
            &words[8 * tile..8 * tile + 8],
            values.as_slice(),
            "tile {tile}"
        );
    }
    assert!(profile.join("profile.html").exists() && profile.join("trace.json").exists());
    let trace = std::fs::read_to_string(profile.join("trace.json")).unwrap();
    assert!(trace.contains("\"kernel_spans\":\"full\""), "{trace}");
    let json = std::fs::read_to_string(&memory).unwrap();
    assert!(json.contains("host-data"), "{json}");
}

#[test]
fn sim_run_errors_are_clear() {
    let dir = scratch_dir("errors");
    let image = build(&dir);
    let x = dir.join("x.npy");
    NpyArray::new(DType::UInt32, vec![8], vec![0; 32])
        .unwrap()
        .write(&x)
        .unwrap();
    let input = format!("x={}", x.display());
    fails_with(
        &[
            "sim",
            "run",
            &image,
            "--machine",
            "ipu21",
            "--input",
            &input,
        ],
        "image built for small (16 tiles), machine is ipu21 (1472 tiles)",
    );
    fails_with(
        &["sim", "run", &image],
        "E-SIM-013 host tensor `x`: input not given",
    );
    fails_with(
        &[
            "sim",
            "run",
            &image,
            "--input",
            &input,
            "--trace-detail",
            "every",
        ],
        "expected one of coarse, full, supersteps",
    );
    let wrong = dir.join("w.npy");
    NpyArray::new(DType::Float32, vec![8], vec![0; 32])
        .unwrap()
        .write(&wrong)
        .unwrap();
    fails_with(
        &[
            "sim",
            "run",
            &image,
            "--input",
            &format!("x={}", wrong.display()),
        ],
        "input `x` is float32 but the image expects uint32",
    );
    fails_with(
        &[
            "sim", "run", &image, "--input", &input, "--output", "z=z.npy",
        ],
        "the image has no output `z` (outputs: y)",
    );
    let garbage = dir.join("garbage.img");
    std::fs::write(&garbage, b"not an image").unwrap();
    fails_with(&["sim", "run", garbage.to_str().unwrap()], "E-IMG-001");
    let recv = dir.join("recv.S");
    fails_with(
        &[
            "asm",
            "image",
            "--machine",
            "small",
            "--tiles",
            &format!("10-20={}", recv.display()),
            "--entry",
            "main",
            "-o",
            "x.img",
        ],
        "goes past the machine's last tile 15",
    );
    fails_with(
        &[
            "asm",
            "image",
            "--machine",
            "small",
            "--tiles",
            &format!("0-3={}", recv.display()),
            "--tiles",
            &format!("3={}", recv.display()),
            "--entry",
            "main",
            "-o",
            "x.img",
        ],
        "tile 3 is in two tile groups",
    );
}
