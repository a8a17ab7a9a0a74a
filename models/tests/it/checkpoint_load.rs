//! Loading checkpoint directories: the layouts transformers writes (single file or shards,
//! names with or without `vision_model.`, a full SigLIP model with its text tower, F32, F16 and
//! BF16), layer selection, and every refusal with its error id, file and tensor.

use std::path::{Path, PathBuf};

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use tessera_models::siglip::{
    load_checkpoint, save_checkpoint, synthetic_weights, CheckpointError, SaveOptions,
    SiglipVisionConfig, SourceDtype, WeightSelection,
};

const ORACLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/hf");

/// A fresh temporary directory for one test, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("tessera-models-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tiny() -> SiglipVisionConfig {
    SiglipVisionConfig::tiny()
}

/// Writes a tiny checkpoint with a head and returns its store.
fn write(dir: &Path, options: &SaveOptions) -> tessera_codegen::graph::WeightStore {
    let c = tiny();
    let sel = WeightSelection::full(&c);
    let store = synthetic_weights(&c, &sel, 11);
    save_checkpoint(dir, &c, &store, &sel, options).unwrap();
    store
}

fn err(path: &Path, layers: Option<usize>) -> String {
    load_checkpoint(path, layers).unwrap_err().to_string()
}

/// Rewrites `file` with tensor `name` replaced (or removed, with `None`).
fn replace_tensor(file: &Path, name: &str, new: Option<(Dtype, Vec<usize>, Vec<u8>)>) {
    let bytes = std::fs::read(file).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut views: Vec<(String, TensorView)> = st
        .tensors()
        .into_iter()
        .filter(|(n, _)| n != name)
        .collect();
    if let Some((dtype, shape, data)) = &new {
        views.push((
            name.to_string(),
            TensorView::new(*dtype, shape.clone(), data).unwrap(),
        ));
    }
    let out = safetensors::serialize(views, None).unwrap();
    std::fs::write(file, out).unwrap();
}

#[test]
fn round_trips_every_layout() {
    for (k, (prefix, shards, dtype)) in [
        ("", 1, SourceDtype::F32),
        ("vision_model.", 1, SourceDtype::F32),
        ("", 3, SourceDtype::F32),
        ("vision_model.", 4, SourceDtype::BF16),
        ("", 1, SourceDtype::F16),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = TempDir::new(&format!("layouts-{k}"));
        let store = write(
            dir.path(),
            &SaveOptions {
                prefix: prefix.into(),
                shards,
                dtype,
            },
        );
        let ck = load_checkpoint(dir.path(), None).unwrap();
        assert_eq!(ck.config, tiny());
        assert_eq!(ck.info.prefix, prefix);
        assert!(ck.info.head);
        assert_eq!(ck.info.dtypes, vec![dtype]);
        assert_eq!(ck.info.layers, 2);
        assert_eq!(ck.info.layers_in_checkpoint, 2);
        assert_eq!(ck.info.ignored_tensors, 0);
        // 2 × 16 layer tensors, 3 embeddings, 2 post-LN, 11 head tensors.
        assert_eq!(ck.info.tensors_loaded, 2 * 16 + 3 + 2 + 11);
        assert_eq!(ck.info.weight_files.len(), shards);
        assert_eq!(ck.info.index_file.is_some(), shards > 1);
        assert_eq!(ck.selection, WeightSelection::full(&tiny()));
        if dtype == SourceDtype::F32 {
            assert_eq!(ck.weights, store, "{prefix:?} {shards}");
        } else {
            // Rounded on disk, converted back exactly.
            for (name, t) in store.iter() {
                let got = ck.weights.get(name).unwrap();
                assert_eq!(got.shape, t.shape);
                for (a, b) in got.data.iter().zip(&t.data) {
                    let r = match dtype {
                        SourceDtype::BF16 => half::bf16::from_f32(*b).to_f32(),
                        SourceDtype::F16 | SourceDtype::F32 => half::f16::from_f32(*b).to_f32(),
                    };
                    assert_eq!(*a, r, "{name}");
                }
            }
        }
        // The weights file itself may be given.
        let file = match ck.info.index_file {
            Some(i) => i,
            None => ck.info.weight_files[0].clone(),
        };
        assert_eq!(load_checkpoint(&file, None).unwrap().weights, ck.weights);
    }
}

#[test]
fn layer_selection() {
    let dir = TempDir::new("layers");
    write(dir.path(), &SaveOptions::default());
    let one = load_checkpoint(dir.path(), Some(1)).unwrap();
    assert_eq!(one.selection.layers, 1);
    assert_eq!(one.info.layers, 1);
    assert_eq!(one.info.ignored_tensors, 16);
    assert!(one
        .weights
        .get("vision_model.encoder.layers.1.mlp.fc1.weight")
        .is_none());
    assert!(one
        .weights
        .get("vision_model.encoder.layers.0.mlp.fc1.weight")
        .is_some());
    assert_eq!(
        err(dir.path(), Some(0)),
        "E-CKPT-011: 0 encoder layers requested, but the config has 2 (ask for 1 to 2)"
    );
    assert_eq!(
        err(dir.path(), Some(3)),
        "E-CKPT-011: 3 encoder layers requested, but the config has 2 (ask for 1 to 2)"
    );
}

#[test]
fn the_text_tower_and_extra_tensors_are_ignored() {
    let dir = TempDir::new("text");
    write(
        dir.path(),
        &SaveOptions {
            prefix: "vision_model.".into(),
            ..SaveOptions::default()
        },
    );
    let file = dir.path().join("model.safetensors");
    for name in [
        "text_model.encoder.layers.0.layer_norm1.weight",
        "text_model.embeddings.token_embedding.weight",
        "logit_scale",
    ] {
        replace_tensor(&file, name, Some((Dtype::I64, vec![2], vec![0; 16])));
    }
    let ck = load_checkpoint(dir.path(), None).unwrap();
    assert_eq!(ck.info.ignored_tensors, 3);
    assert!(ck
        .weights
        .iter()
        .all(|(n, _)| n.starts_with("vision_model.")));
}

#[test]
fn no_head_in_the_checkpoint_or_in_the_config() {
    let dir = TempDir::new("nohead");
    let c = tiny();
    let sel = WeightSelection::all(&c);
    let store = synthetic_weights(&c, &sel, 3);
    save_checkpoint(dir.path(), &c, &store, &sel, &SaveOptions::default()).unwrap();
    let ck = load_checkpoint(dir.path(), None).unwrap();
    assert!(!ck.info.head && !ck.selection.head);
    assert_eq!(ck.weights, store);

    // vision_use_head false: the head tensors are ignored.
    let dir = TempDir::new("nohead-config");
    let c = SiglipVisionConfig {
        vision_use_head: false,
        ..tiny()
    };
    let full = WeightSelection::full(&tiny());
    let store = synthetic_weights(&c, &full, 3);
    save_checkpoint(dir.path(), &c, &store, &full, &SaveOptions::default()).unwrap();
    let ck = load_checkpoint(dir.path(), None).unwrap();
    assert!(!ck.info.head);
    assert_eq!(ck.info.ignored_tensors, 11);
}

#[test]
fn missing_wrong_shape_and_bad_dtype() {
    let dir = TempDir::new("errors");
    write(dir.path(), &SaveOptions::default());
    let file = dir.path().join("model.safetensors");
    let shown = file.display().to_string();
    let pristine = std::fs::read(&file).unwrap();

    replace_tensor(&file, "encoder.layers.1.mlp.fc2.bias", None);
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-007: no tensor encoder.layers.1.mlp.fc2.bias in {shown}")
    );
    // Not needed when only layer 0 is kept.
    load_checkpoint(dir.path(), Some(1)).unwrap();

    std::fs::write(&file, &pristine).unwrap();
    replace_tensor(&file, "head.mlp.fc1.bias", None);
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-007: no tensor head.mlp.fc1.bias in {shown}")
    );

    std::fs::write(&file, &pristine).unwrap();
    replace_tensor(
        &file,
        "encoder.layers.1.self_attn.k_proj.weight",
        Some((Dtype::F32, vec![64, 32], vec![0; 64 * 32 * 4])),
    );
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-008: encoder.layers.1.self_attn.k_proj.weight in {shown} has shape [64, 32], expected [64, 64]")
    );

    std::fs::write(&file, &pristine).unwrap();
    replace_tensor(
        &file,
        "head.attention.in_proj_weight",
        Some((Dtype::F64, vec![192, 64], vec![0; 192 * 64 * 8])),
    );
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-009: head.attention.in_proj_weight in {shown} has dtype F64; only F32, F16 and BF16 are supported")
    );

    std::fs::write(&file, &pristine).unwrap();
    let mut inf = vec![0u8; 64 * 4];
    inf[12..16].copy_from_slice(&f32::INFINITY.to_le_bytes());
    replace_tensor(
        &file,
        "post_layernorm.bias",
        Some((Dtype::F32, vec![64], inf)),
    );
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-010: post_layernorm.bias in {shown} holds a non-finite value (inf) at element 3")
    );

    // A dtype the safetensors crate does not know: named with its tensor.
    let mut header =
        br#"{"embeddings.patch_embedding.weight":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}"#
            .to_vec();
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(&header);
    bytes.push(0);
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-009: embeddings.patch_embedding.weight in {shown} has dtype Q4; only F32, F16 and BF16 are supported")
    );
}

#[test]
fn corrupt_files() {
    let dir = TempDir::new("corrupt");
    write(dir.path(), &SaveOptions::default());
    let file = dir.path().join("model.safetensors");
    let shown = file.display().to_string();
    let pristine = std::fs::read(&file).unwrap();
    for (what, bytes) in [
        ("empty", Vec::new()),
        ("truncated", pristine[..pristine.len() - 7].to_vec()),
        ("extended", [pristine.as_slice(), &[0u8; 4]].concat()),
        ("huge header length", {
            let mut b = pristine.clone();
            b[..8].copy_from_slice(&u64::MAX.to_le_bytes());
            b
        }),
        ("garbage header", {
            let mut b = pristine.clone();
            b[8] = b'#';
            b
        }),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let e = err(dir.path(), None);
        assert!(
            e.starts_with(&format!(
                "E-CKPT-006: {shown} is not a valid safetensors file: "
            )),
            "{what}: {e}"
        );
    }
}

#[test]
fn sharded_errors() {
    let dir = TempDir::new("shards");
    write(
        dir.path(),
        &SaveOptions {
            prefix: "vision_model.".into(),
            shards: 3,
            dtype: SourceDtype::BF16,
        },
    );
    let index = dir.path().join("model.safetensors.index.json");
    let shown = index.display().to_string();
    let pristine = std::fs::read_to_string(&index).unwrap();

    // A shard file missing.
    let shard = dir.path().join("model-00002-of-00003.safetensors");
    let kept = std::fs::read(&shard).unwrap();
    std::fs::remove_file(&shard).unwrap();
    let e = err(dir.path(), None);
    assert!(
        e.starts_with(&format!(
            "E-CKPT-005: {shown} puts vision_model.encoder.layers."
        )) && e.contains(&format!(" in {}, which cannot be read: ", shard.display())),
        "{e}"
    );
    std::fs::write(&shard, kept).unwrap();

    // The index names a tensor its shard does not have.
    let text = pristine.replace(
        r#""vision_model.post_layernorm.bias": "model-00002-of-00003.safetensors""#,
        r#""vision_model.post_layernorm.bias": "model-00001-of-00003.safetensors""#,
    );
    let text = text.replace(
        r#""vision_model.post_layernorm.bias": "model-00003-of-00003.safetensors""#,
        r#""vision_model.post_layernorm.bias": "model-00001-of-00003.safetensors""#,
    );
    assert_ne!(text, pristine);
    std::fs::write(&index, &text).unwrap();
    let e = err(dir.path(), None);
    assert_eq!(
        e,
        format!(
            "E-CKPT-007: no tensor vision_model.post_layernorm.bias in {} (where {shown} puts it)",
            dir.path()
                .join("model-00001-of-00003.safetensors")
                .display()
        )
    );

    // A tensor the index does not list.
    let text: String = pristine
        .lines()
        .filter(|l| !l.contains("\"vision_model.embeddings.patch_embedding.bias\""))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&index, &text).unwrap();
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-007: no tensor vision_model.embeddings.patch_embedding.bias in the weight map of {shown}")
    );

    // Bad index JSON.
    std::fs::write(&index, "{\"weight_map\": 3}").unwrap();
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-004: {shown} is not a valid safetensors index: `weight_map` is not a JSON object")
    );
    std::fs::write(&index, "not json").unwrap();
    assert!(err(dir.path(), None).starts_with(&format!(
        "E-CKPT-004: {shown} is not a valid safetensors index: not valid JSON"
    )));

    // No weights at all.
    std::fs::remove_file(&index).unwrap();
    assert_eq!(
        err(dir.path(), None),
        format!(
            "E-CKPT-003: {} has neither model.safetensors nor model.safetensors.index.json",
            dir.path().display()
        )
    );
}

#[test]
fn config_problems() {
    let dir = TempDir::new("config");
    write(dir.path(), &SaveOptions::default());
    let config = dir.path().join("config.json");
    let shown = config.display().to_string();
    let file = dir.path().join("model.safetensors").display().to_string();
    let pristine = std::fs::read_to_string(&config).unwrap();
    let set = |field: &str, value: &str| {
        let mut v: serde_json::Value = serde_json::from_str(&pristine).unwrap();
        v[field] = serde_json::from_str(value).unwrap();
        std::fs::write(&config, v.to_string()).unwrap();
    };

    // Four million layers: refused from the names, at once.
    set("num_hidden_layers", "4000000");
    let t = std::time::Instant::now();
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-012: {shown} says num_hidden_layers = 4000000, but {file} has tensors for encoder layers 0 to 1 only")
    );
    assert!(t.elapsed().as_secs_f64() < 2.0);

    set("hidden_size", "128");
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-012: {shown} says hidden_size = 128, but embeddings.patch_embedding.weight in {file} has shape [64, 3, 14, 14]")
    );
    set("patch_size", "7");
    assert!(err(dir.path(), None)
        .starts_with(&format!("E-CKPT-012: {shown} says patch_size = 7, but ")));
    set("num_channels", "1");
    assert!(err(dir.path(), None)
        .starts_with(&format!("E-CKPT-012: {shown} says num_channels = 1, but ")));
    set("image_size", "70");
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-012: {shown} says image_size = 70, but embeddings.position_embedding.weight in {file} has shape [16, 64] (16 positions; image_size 70 / patch_size 14 gives 5² = 25)")
    );
    set("intermediate_size", "100");
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-012: {shown} says intermediate_size = 100, but encoder.layers.0.mlp.fc1.weight in {file} has shape [128, 64]")
    );
    // Sizes whose products overflow never reach the tensors.
    set("hidden_size", "9223372036854775804");
    let e = err(dir.path(), None);
    assert!(
        e.starts_with(
            "E-CONFIG-004: config.json: `hidden_size` = 9223372036854775804 is invalid: too large"
        ),
        "{e}"
    );
    set("hidden_size", "\"wide\"");
    assert_eq!(
        err(dir.path(), None),
        format!("E-CONFIG-003: config.json: field `hidden_size` is the string \"wide\", expected a non-negative integer (in {shown})")
    );
    std::fs::remove_file(&config).unwrap();
    assert!(err(dir.path(), None).starts_with(&format!("E-CKPT-001: cannot read {shown}: ")));
    assert!(err(Path::new("/nonexistent/model"), None)
        .starts_with("E-CKPT-001: cannot read /nonexistent/model/config.json: "));
}

#[test]
fn no_vision_tower() {
    let dir = TempDir::new("novision");
    write(dir.path(), &SaveOptions::default());
    let file = dir.path().join("model.safetensors");
    let bytes = safetensors::serialize(
        [(
            "text_model.encoder.layers.0.layer_norm1.weight".to_string(),
            TensorView::new(Dtype::F32, vec![1], &[0u8; 4]).unwrap(),
        )],
        None,
    )
    .unwrap();
    std::fs::write(&file, bytes).unwrap();
    assert_eq!(
        err(dir.path(), None),
        format!("E-CKPT-013: no SigLIP vision tower in {}: no embeddings.patch_embedding.weight or encoder.layers.0.layer_norm1.weight, with or without the vision_model. prefix", file.display())
    );
}

/// The two checkpoints transformers wrote: loading only (the activations are checked in
/// `hf_oracle.rs`).
#[test]
fn loads_the_transformers_checkpoints() {
    let f32 = load_checkpoint(&Path::new(ORACLE).join("vision-f32"), None).unwrap();
    assert_eq!(f32.info.prefix, "");
    assert_eq!(f32.info.dtypes, vec![SourceDtype::F32]);
    assert!(f32.info.head);
    assert_eq!(f32.info.ignored_tensors, 0);
    assert_eq!(f32.config.intermediate_size, 256);
    let bf16 = load_checkpoint(&Path::new(ORACLE).join("siglip-bf16-sharded"), None).unwrap();
    assert_eq!(bf16.info.prefix, "vision_model.");
    assert_eq!(bf16.info.dtypes, vec![SourceDtype::BF16]);
    assert!(bf16.info.head);
    assert!(bf16.info.index_file.is_some());
    // Text tower, logit scale and bias.
    assert!(bf16.info.ignored_tensors > 0);
    assert_eq!(bf16.info.tensors_loaded, f32.info.tensors_loaded);
    assert_eq!(bf16.config, f32.config);
    let one = load_checkpoint(&Path::new(ORACLE).join("siglip-bf16-sharded"), Some(1)).unwrap();
    assert_eq!(one.info.layers, 1);
    assert_eq!(one.info.ignored_tensors, bf16.info.ignored_tensors + 16);
    let e: CheckpointError = load_checkpoint(&Path::new(ORACLE).join("image"), None).unwrap_err();
    assert!(e.to_string().starts_with("E-CKPT-001: cannot read "), "{e}");
}
