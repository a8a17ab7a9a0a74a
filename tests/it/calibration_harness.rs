//! The calibration harness in CI (issue 34): `scripts/poplibs_calibration.py --local --check`
//! runs the codelets written here in PopLibs' style (`kernels/asm/poplibs_style/`: the FP8 casts
//! both ways) on one tile, checks every output byte against its reference (`testdata/fp8`'s
//! tables, made outside the project) and the bytes around it, holds their cycles to their own
//! bundle counts and sets them beside PopLibs' own estimator; `--check` fails on a wrong
//! output, a cycle off the codelet's own model, or a ratio outside a tolerance. A second run
//! with a tolerance no simulation meets checks that the harness does fail.
//!
//! The harness is Python (it is also run by hand on a PopLibs checkout). Without `python3` the
//! tests print why and pass; CI sets `TESSERA_REQUIRE_PYTHON=1` (and installs Python in
//! `.ci/run`), which turns a missing interpreter into a failure.

use crate::cli::repo;
use std::io::Write;
use std::process::{Command, Output};

/// `python3`, or `None` (after saying why) when there is none and none is required.
fn python() -> Option<&'static str> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some("python3");
    }
    let required = std::env::var("TESSERA_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "TESSERA_REQUIRE_PYTHON=1 but there is no python3 (apt-get install python3)"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: no python3; set TESSERA_REQUIRE_PYTHON=1 to make this a failure"
    );
    None
}

fn harness(python: &str, extra: &[&str]) -> Output {
    Command::new(python)
        .arg(repo().join("scripts/poplibs_calibration.py"))
        .args([
            "--local",
            "--check",
            "--tessera",
            env!("CARGO_BIN_EXE_tessera"),
        ])
        .args(extra)
        .output()
        .expect("run the calibration harness")
}

#[test]
fn local_codelets_are_exact_in_outputs_and_cycles() {
    let Some(python) = python() else { return };
    let out = harness(python, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "harness failed:\n{stdout}\n{stderr}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.ends_with("exact")).collect();
    assert!(
        rows.len() >= 21,
        "expected every case to run and be exact:\n{stdout}"
    );
    // Each codelet written here is held to its own bundle count, cycle for cycle.
    for (class, cases) in [("cast (half to FP8)", 10), ("cast (FP8 to half)", 11)] {
        let summary = stdout
            .lines()
            .find(|l| l.starts_with(class) && l.contains("simulated / estimate"))
            .unwrap_or_else(|| panic!("the class {class} is missing:\n{stdout}"));
        assert!(
            summary.contains(&format!("its own cost model exact in {cases} of {cases}")),
            "{summary}"
        );
    }
}

#[test]
fn the_check_fails_outside_a_tolerance() {
    let Some(python) = python() else { return };
    let out = harness(python, &["--tolerance", "0.000001"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("outside 1 ±"), "{stderr}");
}
