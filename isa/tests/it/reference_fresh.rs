//! The committed ISA reference (`docs/isa/`) must match what the tables generate.

#[test]
fn committed_reference_is_fresh() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/isa");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    for (name, text) in tessera_isa::reference::pages() {
        let path = dir.join(&name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != text {
            let line = committed
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b);
            eprintln!(
                "first differing line: {line:?}; committed {} bytes, generated {}",
                committed.len(),
                text.len()
            );
            if let Some(l) = line {
                eprintln!(
                    "committed: {}\ngenerated: {}",
                    committed.lines().nth(l).unwrap(),
                    text.lines().nth(l).unwrap()
                );
            }
        }
        assert!(
            committed == text,
            "docs/isa/{name} is stale: run `cargo run -- isa doc --out docs/isa` (or UPDATE_EXPECT=1 cargo test -p tessera-isa --test reference_fresh)"
        );
    }
}
