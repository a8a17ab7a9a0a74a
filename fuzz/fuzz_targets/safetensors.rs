//! Fuzzes SigLIP checkpoint loading on arbitrary bytes as `model.safetensors`: the directory
//! loader `load_checkpoint` (the bytes written to a per-process temporary directory beside a
//! small valid `config.json`, `tessera_fuzz::MICRO_CONFIG_JSON`) and the in-memory
//! `load_safetensors`. Checks: neither panics nor allocates without bound (the loader promises
//! to check shapes and sizes before anything large is allocated); `Err` is fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use tessera_fuzz::MICRO_CONFIG_JSON;
use tessera_models::siglip::{
    load_checkpoint, load_safetensors, SiglipVisionConfig, WeightSelection,
};

struct Fixture {
    dir: PathBuf,
    config: SiglipVisionConfig,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tessera-fuzz-safetensors-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        std::fs::write(dir.join("config.json"), MICRO_CONFIG_JSON).expect("write config.json");
        let config = SiglipVisionConfig::from_json_str(MICRO_CONFIG_JSON).expect("micro config");
        Fixture { dir, config }
    })
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let weights = fixture.dir.join("model.safetensors");
    std::fs::write(&weights, data).expect("write model.safetensors");
    match load_checkpoint(&fixture.dir, None) {
        Ok(checkpoint) => {
            let _ = format!("{:?}", checkpoint.info);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let selection = WeightSelection::full(&fixture.config);
    if let Err(e) = load_safetensors(data, &fixture.config, &selection) {
        let _ = e.to_string();
    }
});
