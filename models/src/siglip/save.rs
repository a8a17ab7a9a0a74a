//! Writing a checkpoint directory the way transformers' `save_pretrained` lays it out —
//! `config.json` (a flat `SiglipVisionConfig`) and `model.safetensors`, or shards
//! `model-0000k-of-0000n.safetensors` with `model.safetensors.index.json` — from a weight
//! store: for tests and for making small models that [`super::checkpoint::load_checkpoint`]
//! (and so the CLI) can read.

use std::path::Path;

use safetensors::tensor::TensorView;
use safetensors::Dtype;
use tessera_codegen::graph::WeightStore;

use super::checkpoint::{SourceDtype, CONFIG_FILE, INDEX_FILE, WEIGHTS_FILE};
use super::config::SiglipVisionConfig;
use super::weights::{checkpoint_tensors, WeightError, WeightSelection};

/// How to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveOptions {
    /// Tensor name prefix: `""` (transformers 5 `SiglipVisionModel`) or `"vision_model."`.
    pub prefix: String,
    /// Number of shard files; 1 writes `model.safetensors` without an index.
    pub shards: usize,
    /// Element type on disk (F16 and BF16 round to nearest even).
    pub dtype: SourceDtype,
}

impl Default for SaveOptions {
    fn default() -> SaveOptions {
        SaveOptions {
            prefix: String::new(),
            shards: 1,
            dtype: SourceDtype::F32,
        }
    }
}

/// Writes `selection` of `store` and `config` into directory `dir` (created if needed).
/// Tensors are spread over the shards in checkpoint order, about equally by count.
pub fn save_checkpoint(
    dir: &Path,
    config: &SiglipVisionConfig,
    store: &WeightStore,
    selection: &WeightSelection,
    options: &SaveOptions,
) -> Result<(), WeightError> {
    let io = |path: &Path, e: std::io::Error| WeightError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    config.validate()?;
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut json = serde_json::to_value(config).map_err(|e| WeightError::Corrupt {
        message: e.to_string(),
    })?;
    if let Some(obj) = json.as_object_mut() {
        obj.insert("model_type".into(), "siglip_vision_model".into());
        obj.insert(
            "architectures".into(),
            serde_json::json!(["SiglipVisionModel"]),
        );
    }
    let path = dir.join(CONFIG_FILE);
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&json).unwrap_or_default(),
    )
    .map_err(|e| io(&path, e))?;

    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = checkpoint_tensors(store, config, selection)?
        .into_iter()
        .map(|(name, shape, data)| {
            let bytes = match options.dtype {
                SourceDtype::F32 => data.iter().flat_map(|v| v.to_le_bytes()).collect(),
                SourceDtype::F16 => data
                    .iter()
                    .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
                    .collect(),
                SourceDtype::BF16 => data
                    .iter()
                    .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
                    .collect(),
            };
            (format!("{}{name}", options.prefix), shape, bytes)
        })
        .collect();
    let dtype = match options.dtype {
        SourceDtype::F32 => Dtype::F32,
        SourceDtype::F16 => Dtype::F16,
        SourceDtype::BF16 => Dtype::BF16,
    };
    let shards = options.shards.clamp(1, tensors.len().max(1));
    let per = tensors.len().div_ceil(shards).max(1);
    let shards = tensors.len().div_ceil(per).max(1);
    let mut weight_map = serde_json::Map::new();
    for (k, chunk) in tensors.chunks(per).enumerate() {
        let file = if shards == 1 {
            WEIGHTS_FILE.to_string()
        } else {
            format!("model-{:05}-of-{:05}.safetensors", k + 1, shards)
        };
        let views = chunk
            .iter()
            .map(|(n, s, b)| TensorView::new(dtype, s.clone(), b).map(|v| (n.clone(), v)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| WeightError::Corrupt {
                message: e.to_string(),
            })?;
        let bytes = safetensors::serialize(views, None).map_err(|e| WeightError::Corrupt {
            message: e.to_string(),
        })?;
        let path = dir.join(&file);
        std::fs::write(&path, bytes).map_err(|e| io(&path, e))?;
        for (n, _, _) in chunk {
            weight_map.insert(n.clone(), file.clone().into());
        }
    }
    if shards > 1 {
        let total: usize = tensors.iter().map(|(_, _, b)| b.len()).sum();
        let index = serde_json::json!({
            "metadata": {"total_size": total},
            "weight_map": weight_map,
        });
        let path = dir.join(INDEX_FILE);
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&index).unwrap_or_default(),
        )
        .map_err(|e| io(&path, e))?;
    }
    Ok(())
}
