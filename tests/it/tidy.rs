//! Tidy checks: the invariants of ARCHITECTURE.md that a text scan can check, in the manner of rust-analyzer's `tidy.rs`.
//!
//! - every Rust file begins with a `//!` line saying what it holds;
//! - no file is over [`MAX_LINES`] lines unless [`LARGE_FILES`] gives the reason;
//! - every crate opts into the workspace lints, which deny wildcard arms on enums
//!   (`clippy::wildcard_enum_match_arm`, run with `-D warnings` in CI); a wildcard that stays is
//!   an `#[expect(..., reason = "...")]`, never an `allow`, so a stale one fails too;
//! - every workspace member and top-level source directory is in ARCHITECTURE.md's codemap.
//! - nothing names a path outside the repository: a bare clone has all it needs.

use std::fs;
use std::path::{Path, PathBuf};

/// Longest file, in lines, that needs no reason.
const MAX_LINES: usize = 1000;

/// Files allowed to be longer than [`MAX_LINES`], with the reason (none at present).
const LARGE_FILES: &[(&str, &str)] = &[];

/// Directories never scanned (build output, fuzzer state, VCS).
const SKIPPED_DIRS: &[&str] = &["target", "corpus", "artifacts", ".git"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file below `dir` (sorted, build output and fuzzer state skipped) that `keep` takes;
/// hidden directories are skipped unless `hidden` takes their name.
fn walk(
    dir: &Path,
    hidden: &dyn Fn(&str) -> bool,
    keep: &dyn Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !SKIPPED_DIRS.contains(&name) && (!name.starts_with('.') || hidden(name)) {
                walk(&path, hidden, keep, out);
            }
        } else if keep(&path) {
            out.push(path);
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    walk(
        dir,
        &|_| false,
        &|p| p.extension().is_some_and(|e| e == "rs"),
        out,
    );
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn all_rust_files() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&root(), &mut paths);
    assert!(paths.len() > 100, "found only {} Rust files", paths.len());
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (relative(&p), text)
        })
        .collect()
}

/// Workspace members, read from the root manifest's `members = [...]` line.
fn members() -> Vec<String> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("a members line");
    let list = &line[line.find('[').unwrap() + 1..line.rfind(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

#[test]
fn every_rust_file_starts_with_a_module_doc_line() {
    let missing: Vec<String> = all_rust_files()
        .into_iter()
        .filter(|(_, text)| {
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !first.starts_with("//!")
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` first line: {missing:#?}"
    );
}

#[test]
fn no_file_is_too_long_without_a_reason() {
    let files = all_rust_files();
    let mut too_long = Vec::new();
    for (path, text) in &files {
        let lines = text.lines().count();
        let allowed = LARGE_FILES.iter().any(|(p, _)| p == path);
        if lines > MAX_LINES && !allowed {
            too_long.push(format!("{path}: {lines} lines"));
        }
    }
    assert!(
        too_long.is_empty(),
        "files over {MAX_LINES} lines (split them, or add them to LARGE_FILES with the reason): \
         {too_long:#?}"
    );
    // The allow-list holds only files that exist and still need it.
    for (path, reason) in LARGE_FILES {
        assert!(!reason.is_empty());
        let file = files.iter().find(|(p, _)| p == path);
        let Some((_, text)) = file else {
            panic!("LARGE_FILES names {path}, which does not exist");
        };
        assert!(
            text.lines().count() > MAX_LINES,
            "{path} is no longer over {MAX_LINES} lines: remove it from LARGE_FILES"
        );
    }
}

#[test]
fn every_crate_takes_the_workspace_lints_that_deny_wildcard_arms() {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let lints = manifest
        .split("[workspace.lints.clippy]")
        .nth(1)
        .expect("a [workspace.lints.clippy] table");
    assert!(
        lints
            .lines()
            .take_while(|l| !l.starts_with('['))
            .any(|l| l.replace(' ', "") == "wildcard_enum_match_arm=\"warn\""),
        "the workspace lints must warn on wildcard enum arms (CI denies warnings)"
    );
    for member in members() {
        let path = root().join(&member).join("Cargo.toml");
        let text = fs::read_to_string(&path).unwrap();
        let opted_in = text
            .split("[lints]")
            .nth(1)
            .is_some_and(|rest| rest.trim_start().starts_with("workspace = true"));
        assert!(
            opted_in,
            "{} has no `[lints] workspace = true`",
            path.display()
        );
    }
    let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.contains("cargo clippy --workspace --all-targets") && ci.contains("-D warnings"),
        ".ci/run must run clippy over every target with warnings denied"
    );
}

#[test]
fn wildcard_arms_that_stay_are_expectations_with_reasons() {
    let mut bad = Vec::new();
    for (path, text) in all_rust_files() {
        if path.ends_with("/tidy.rs") {
            continue;
        }
        // Attributes may span lines (rustfmt): compare with all whitespace removed.
        let squashed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if squashed.contains("allow(clippy::wildcard_enum_match_arm") {
            bad.push(format!(
                "{path}: `allow` of wildcard arms (use `expect` with a reason)"
            ));
        }
        let expectations = squashed
            .matches("expect(clippy::wildcard_enum_match_arm")
            .count();
        let with_reason = squashed
            .matches("expect(clippy::wildcard_enum_match_arm,reason=")
            .count();
        if expectations != with_reason {
            bad.push(format!("{path}: a wildcard-arm `expect` without a reason"));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_codemap_names_every_crate_and_source_directory() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut missing = Vec::new();
    let mut dirs: Vec<String> = members()
        .into_iter()
        .filter(|m| m != ".")
        .map(|m| format!("{m}/"))
        .collect();
    dirs.extend(["src/", "fuzz/", "tests/", "benches/"].map(String::from));
    for dir in dirs {
        if !architecture.contains(&format!("`{dir}")) {
            missing.push(dir);
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's codemap does not name {missing:?}"
    );
}

/// Every text file of the repository (with `.ci/`), for the checks that scan more than Rust.
fn text_files(dir: &Path, out: &mut Vec<(String, String)>) {
    let mut paths = Vec::new();
    walk(dir, &|name| name == ".ci", &|_| true, &mut paths);
    out.extend(
        paths
            .iter()
            .filter_map(|p| fs::read_to_string(p).ok().map(|text| (relative(p), text))),
    );
}

#[test]
fn nothing_names_a_path_outside_the_repository() {
    // Spelled in two pieces so that this file does not name it either.
    let outside = ["..", "/shared"].concat();
    let mut files = Vec::new();
    text_files(&root(), &mut files);
    assert!(files.len() > 100, "found only {} text files", files.len());
    let offenders: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| line.contains(&outside))
                .map(move |(n, line)| format!("{path}:{}: {}", n + 1, line.trim()))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "the repository must stand alone (oracle data is in testdata/, facts in docs/reference/):\n{}",
        offenders.join("\n")
    );
}

/// Library code prints nothing and reads no environment variables (ARCHITECTURE.md): progress
/// and diagnostics go through observers (`compile::Progress`, `trace::Trace`), and only the
/// command line (`src/cli/`, `src/main.rs`) turns them on and writes them out.
#[test]
fn library_code_neither_prints_nor_reads_the_environment() {
    let banned = [
        "env::var(",
        "env::var_os(",
        "env::vars(",
        "println!(",
        "eprintln!(",
        "print!(",
        "eprint!(",
    ];
    let mut found = Vec::new();
    for (path, text) in all_rust_files() {
        let library = path.contains("/src/") || path.starts_with("src/");
        let front_end = path.starts_with("src/cli/") || path == "src/main.rs";
        // fuzz/ and xtask-like tools are programs of their own.
        let program = path.starts_with("fuzz/") || path.contains("/bin/");
        if !library || front_end || program {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            if let Some(b) = banned.iter().find(|b| line.contains(*b)) {
                found.push(format!("{path}:{}: {b}", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "library code that prints or reads the environment:\n{}",
        found.join("\n")
    );
}
