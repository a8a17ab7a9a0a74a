//! Writes the generated seed inputs under `fuzz/seeds/<target>/` (object and image files,
//! instruction words, `.npy` arrays, configs, micro checkpoints, tile programs). Run from
//! `fuzz/`: `cargo +nightly run --example make_seeds`; `seed.sh` then copies them, with the
//! repository's own files, into `fuzz/corpus/<target>/`.

use std::path::{Path, PathBuf};
use tessera::chip_program::{
    build_image, ImageRequest, SymbolTensor, BROADCAST_RECEIVER, BROADCAST_SENDER,
};
use tessera::npy::NpyArray;
use tessera_isa::asm::{assemble, assemble_str, LayoutOptions, Object};
use tessera_isa::image::HostDirection;
use tessera_models::siglip::{
    save_checkpoint, synthetic_weights, SaveOptions, SiglipVisionConfig, SourceDtype,
    WeightSelection,
};
use tessera_sim::MachineDescription;

const WORKER: &str = "
    .section .text, \"ax\"
    .worker
    .align 8
    .globl work
work:
    setzi $m0, buf
    ld32 $m1, $m0, $mzero, 0
    add $m1, $m1, 3
    st32 $m1, $m0, $mzero, 1
    exitz $mzero
    .section .data
    .align 8
buf:
    .int 5, 0
";

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("create the seed directory");
    std::fs::write(dir.join(name), bytes).expect("write a seed");
}

fn kernel_sources(repo: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in [repo.join("kernels/asm"), repo.join("kernels/asm/examples")] {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("kernels/asm")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "S"))
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&path).expect("read kernel")));
        }
    }
    out
}

fn main() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = fuzz.parent().expect("the repository");
    let seeds = fuzz.join("seeds");
    let _ = std::fs::remove_dir_all(&seeds);

    // decode + object_image: the kernels' code words and object files.
    let mut objects: Vec<(String, Object)> = Vec::new();
    for (name, text) in kernel_sources(repo) {
        if let Ok(object) = assemble_str(&text) {
            objects.push((name, object));
        }
    }
    for (name, object) in &objects {
        if let Some(code) = object.sections.iter().find(|s| s.has_code) {
            let bytes = &code.bytes[..code.bytes.len().min(256)];
            write(&seeds.join("decode"), &format!("{name}.bin"), bytes);
        }
    }
    for (name, object) in objects.iter().take(6) {
        write(&seeds.join("object_image"), &format!("{name}.tobj"), &object.to_bytes());
    }
    let worker = assemble_str(WORKER).expect("worker example");
    write(&seeds.join("object_image"), "worker.tobj", &worker.to_bytes());

    // object_image: an image for `small` (the broadcast test of tests/it/cli_sim.rs).
    let machine = MachineDescription::builtin("small").expect("small");
    let options = LayoutOptions::at(machine.sram.base);
    let sender = assemble(&[("sender.S", BROADCAST_SENDER)], &options).expect("sender");
    let receiver = assemble(&[("receiver.S", BROADCAST_RECEIVER)], &options).expect("receiver");
    let request = ImageRequest {
        entry: "main".into(),
        vertex: None,
        tensors: vec![
            SymbolTensor::parse("x=src:u32:8", HostDirection::Input).unwrap(),
            SymbolTensor::parse("y=dst:u32:8", HostDirection::Output).unwrap(),
        ],
        worker_scratch: 64,
    };
    let image = build_image(
        &machine,
        &[(vec![7], sender), (vec![0, 1, 2], receiver)],
        &request,
    )
    .expect("image");
    write(&seeds.join("object_image"), "broadcast.timg", &image.to_bytes().unwrap());

    // npy
    let npy = seeds.join("npy");
    let arrays = [
        ("f32_2x3", NpyArray::from_f32(&[2, 3], &[1.0, -2.0, 3.5, 0.0, 1e-3, 7.0]).unwrap()),
        ("f16_4", NpyArray::from_f16_bits(&[4], &[0x3c00, 0xc000, 0x7bff, 0]).unwrap()),
        ("u8_scalar", NpyArray::from_u8(&[], &[9]).unwrap()),
        ("i64_2x0", NpyArray::from_i64(&[2, 0], &[]).unwrap()),
        ("bool_3", NpyArray::from_bool(&[3], &[true, false, true]).unwrap()),
        ("f64_1x2x2", NpyArray::from_f64(&[1, 2, 2], &[0.5, 1.5, -2.5, 1e300]).unwrap()),
    ];
    for (name, array) in &arrays {
        write(&npy, &format!("{name}.npy"), &array.to_bytes());
    }

    // config_json
    let configs = seeds.join("config_json");
    write(&configs, "micro.json", tessera_fuzz::MICRO_CONFIG_JSON.as_bytes());
    for (name, config) in [
        ("tiny", SiglipVisionConfig::tiny()),
        ("so400m_384", SiglipVisionConfig::so400m_patch14_384()),
    ] {
        let flat = serde_json::to_string_pretty(&config).unwrap();
        write(&configs, &format!("{name}.json"), flat.as_bytes());
        let nested = serde_json::json!({ "model_type": "siglip", "vision_config": config });
        write(&configs, &format!("{name}_nested.json"), nested.to_string().as_bytes());
    }

    // safetensors: micro checkpoints in each dtype and prefix form.
    let micro = SiglipVisionConfig::from_json_str(tessera_fuzz::MICRO_CONFIG_JSON).unwrap();
    let selection = WeightSelection::full(&micro);
    let store = synthetic_weights(&micro, &selection, 1);
    let scratch = std::env::temp_dir().join(format!("tessera-make-seeds-{}", std::process::id()));
    for (dtype, tag) in [
        (SourceDtype::F32, "f32"),
        (SourceDtype::F16, "f16"),
        (SourceDtype::BF16, "bf16"),
    ] {
        for prefix in ["", "vision_model."] {
            let _ = std::fs::remove_dir_all(&scratch);
            let options = SaveOptions {
                prefix: prefix.into(),
                shards: 1,
                dtype,
            };
            save_checkpoint(&scratch, &micro, &store, &selection, &options).expect("save");
            let bytes = std::fs::read(scratch.join("model.safetensors")).unwrap();
            let name = format!("micro_{tag}{}.safetensors", if prefix.is_empty() { "" } else { "_vm" });
            write(&seeds.join("safetensors"), &name, &bytes);
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);

    // tile_sim: mode byte, then 6-byte chunks (row selector, raw operand bits).
    let tile = seeds.join("tile_sim");
    for (index, (mode, len)) in [(0u8, 60usize), (1, 60), (0, 240), (1, 240)].into_iter().enumerate() {
        let mut x: u32 = 0x1234_5678 ^ index as u32;
        let bytes: Vec<u8> = std::iter::once(mode)
            .chain((0..len).map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            }))
            .collect();
        write(&tile, &format!("random{index}.bin"), &bytes);
    }

    // compile_graph: rows, columns, f32 flag (0 = f32), then 4-byte steps (op, a, b, n); op
    // numbers as in `tessera::random_graph::build` (0 gelu, 2 layer norm, 5 f16 product,
    // 6 FP8 product, 7 transpose, 10 split heads, 12 attention-shaped product, …).
    for (name, bytes) in COMPILE_GRAPHS {
        write(&seeds.join("compile_graph"), name, bytes);
    }
    println!("seeds written to {}", seeds.display());
}

/// Seeds of the `compile_graph` target: an MLP, an attention-shaped graph, views and norms.
const COMPILE_GRAPHS: &[(&str, &[u8])] = &[
    ("mlp.bin", &[15, 31, 1, 5, 0, 0, 24, 3, 1, 0, 0, 0, 2, 0, 0, 5, 2, 0, 8]),
    ("fp8.bin", &[15, 31, 1, 2, 0, 0, 0, 6, 1, 0, 24, 0, 2, 0, 0]),
    ("heads.bin", &[7, 15, 1, 10, 0, 0, 0, 12, 1, 0, 0, 1, 2, 0, 1, 11, 3, 0, 0]),
    ("views.bin", &[3, 7, 0, 7, 0, 0, 0, 9, 1, 1, 1, 8, 0, 0, 0, 13, 3, 0, 1, 4, 0, 0, 0]),
];
