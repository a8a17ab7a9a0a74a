//! The committed oracle data is what `scripts/make_testdata.py` wrote: every file under
//! `testdata/` is listed in `testdata/MANIFEST.json` with its size and SHA-256, and nothing
//! else is there. A file edited by hand, or regenerated without updating the manifest, fails.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Every file below `dir`, as paths relative to `root` with `/` separators.
fn files_below(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_below(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).unwrap();
            let parts: Vec<_> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

fn manifest() -> serde_json::Value {
    let text = std::fs::read_to_string(testdata().join("MANIFEST.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn every_committed_oracle_file_matches_the_manifest() {
    let manifest = manifest();
    let listed = manifest["files"]
        .as_object()
        .expect("MANIFEST.json has a files map");
    assert!(listed.len() >= 38, "{} files listed", listed.len());
    let mut mismatches = Vec::new();
    for (name, entry) in listed {
        let path = testdata().join(name);
        let Ok(bytes) = std::fs::read(&path) else {
            mismatches.push(format!("{name}: listed but missing"));
            continue;
        };
        let size = entry["bytes"].as_u64().unwrap();
        if bytes.len() as u64 != size {
            mismatches.push(format!(
                "{name}: {} bytes, manifest says {size}",
                bytes.len()
            ));
        }
        let digest: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if digest != entry["sha256"].as_str().unwrap() {
            mismatches.push(format!(
                "{name}: SHA-256 {digest} differs from the manifest"
            ));
        }
    }
    let mut present = Vec::new();
    files_below(&testdata(), &testdata(), &mut present);
    present.sort();
    for name in present {
        if !listed.contains_key(&name) && !matches!(name.as_str(), "MANIFEST.json" | "README.md") {
            mismatches.push(format!("{name}: present but not in MANIFEST.json"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "testdata/ differs from testdata/MANIFEST.json (regenerate with scripts/make_testdata.py):\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn the_manifest_names_the_packages_that_made_the_data() {
    let manifest = manifest();
    let versions = &manifest["versions"];
    for package in ["numpy", "ml_dtypes", "torch", "transformers"] {
        assert!(
            versions[package].as_str().is_some_and(|v| !v.is_empty()),
            "MANIFEST.json names no {package} version"
        );
    }
    let pinned = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/testdata-requirements.txt"),
    )
    .unwrap();
    for package in ["numpy", "ml_dtypes", "torch", "transformers"] {
        let version = versions[package].as_str().unwrap();
        let base = version.split('+').next().unwrap();
        assert!(
            pinned
                .lines()
                .any(|l| l.trim() == format!("{package}=={base}")),
            "scripts/testdata-requirements.txt does not pin {package}=={base}"
        );
    }
}
