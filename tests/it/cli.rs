//! Running the `tessera` binary from the test modules: the repository root, fresh scratch directories, a run's exit and output, and the two verdicts (succeeds; fails clearly, without a panic).

use std::ffi::OsStr;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the `tessera` package), where the binary runs.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory under the system temp dir, unique to this test process, `group` (the test
/// module) and `test`.
pub fn scratch_dir(group: &str, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tessera-{group}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// What a run of the binary did.
pub struct Run {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tessera ARGS…` in the repository root.
pub fn tessera<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("run tessera");
    Run {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The command exits 0.
pub fn succeeds<S: AsRef<OsStr> + Debug>(args: &[S]) -> Run {
    let run = tessera(args);
    assert!(
        run.ok,
        "tessera {args:?} failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    run
}

/// The command fails with a non-zero exit, a one-line `error: ...` containing every `needle`,
/// and no panic.
pub fn fails_clearly<S: AsRef<OsStr> + Debug>(args: &[S], needles: &[&str]) -> Run {
    let run = tessera(args);
    assert!(
        !run.ok,
        "tessera {args:?} should fail\nstdout:\n{}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("RUST_BACKTRACE"),
        "panic in:\n{}",
        run.stderr
    );
    assert!(run.stderr.starts_with("error: "), "stderr:\n{}", run.stderr);
    for needle in needles {
        assert!(
            run.stderr.contains(needle),
            "`{needle}` not in stderr:\n{}",
            run.stderr
        );
    }
    run
}
