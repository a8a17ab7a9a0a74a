//! Hugging Face SigLIP checkpoints as they exist on disk: a directory with `config.json` and
//! either `model.safetensors` or a sharded `model.safetensors.index.json` with its shard files,
//! as `save_pretrained` of transformers writes them — loaded by [`load_checkpoint`] into a
//! [`WeightStore`] in the store layout of [`super::weights`].
//!
//! # What is accepted
//!
//! * `config.json`: a flat `SiglipVisionConfig` or a `SiglipConfig` with `vision_config`
//!   ([`SiglipVisionConfig::from_json_value`]).
//! * Weights: `model.safetensors` if present (as transformers prefers), else
//!   `model.safetensors.index.json` and the shards its `weight_map` names. Only the shards
//!   that hold vision-tower tensors are opened. Only the tensors loaded are read: each file is
//!   opened by its header and each tensor read by seeking to it.
//! * Tensor names with the `vision_model.` prefix (`SiglipModel`; `SiglipVisionModel` as
//!   transformers 4 wrote it) or without (`SiglipVisionModel` as transformers 5 writes it),
//!   detected per checkpoint from the patch embedding (or, without embeddings, layer 0's
//!   first LayerNorm); when both forms exist, `vision_model.` wins. Everything else — the
//!   text tower, `logit_scale`, `logit_bias`, layers past the ones kept — is ignored and
//!   counted in [`CheckpointInfo::ignored_tensors`].
//! * F32, F16 and BF16 tensors (converted to f32 exactly; dtypes may be mixed). Non-finite
//!   values are refused.
//! * The attention-pooling head (`head.*`) is loaded when the checkpoint has `head.probe` and
//!   the config has `vision_use_head` (the default). Then every head tensor must be present.
//!   A config with `vision_use_head` whose checkpoint has no head loads without it
//!   ([`CheckpointInfo::head`] is false); transformers would initialise it randomly.
//!
//! # Checks before anything large is allocated
//!
//! The config is validated (every derived size fits in `usize`); the layer count of the config
//! is compared with the layers the tensor names hold (a config claiming 4 000 000 layers is
//! refused from the names alone); `hidden_size`, `num_channels`, `patch_size`, `image_size`
//! and `intermediate_size` are compared with the shapes of the patch embedding, the position
//! embedding and layer 0's `fc1` in the headers; and each tensor's shape and dtype are checked
//! from its header before its bytes are read. Store tensors are allocated only after the data
//! that fills them was read, so memory is bounded by what the files hold.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use safetensors::Dtype;
use tessera_codegen::graph::{Shape, WeightStore};

use super::config::{ConfigError, SiglipVisionConfig};
use super::layout::{self, Spec};
use super::shard_index::ShardIndex;
use super::tensor_file::TensorFile;
use super::weights::{detect_prefix, to_f32, Convert, WeightSelection};

/// The weights file of an unsharded checkpoint.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The index of a sharded checkpoint.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The config.
pub const CONFIG_FILE: &str = "config.json";

/// A loaded checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The vision config as `config.json` states it (`num_hidden_layers` is the file's, even
    /// when fewer layers were kept: see `selection.layers`).
    pub config: SiglipVisionConfig,
    /// The tensors of `selection`, in the store layout.
    pub weights: WeightStore,
    /// What `weights` holds: layers `0..selection.layers`, embeddings and post-LayerNorm
    /// always, the head when [`CheckpointInfo::head`].
    pub selection: WeightSelection,
    pub info: CheckpointInfo,
}

/// The element type a checkpoint tensor had on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceDtype {
    F32,
    F16,
    BF16,
}

impl fmt::Display for SourceDtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceDtype::F32 => "F32",
            SourceDtype::F16 => "F16",
            SourceDtype::BF16 => "BF16",
        })
    }
}

/// What loading found and did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The `config.json` read.
    pub config_file: PathBuf,
    /// The shard index, for a sharded checkpoint.
    pub index_file: Option<PathBuf>,
    /// The safetensors files read from, in the order they were opened.
    pub weight_files: Vec<PathBuf>,
    /// The name prefix of the vision tower's tensors: `"vision_model."` or `""`.
    pub prefix: &'static str,
    /// The dtypes of the tensors loaded, each once, in order F32, F16, BF16.
    pub dtypes: Vec<SourceDtype>,
    /// Whether the pooling head was loaded.
    pub head: bool,
    /// Encoder layers the checkpoint holds (consecutive from 0).
    pub layers_in_checkpoint: usize,
    /// Encoder layers loaded.
    pub layers: usize,
    /// Checkpoint tensors loaded.
    pub tensors_loaded: usize,
    /// Checkpoint tensors not loaded (text tower, logit scale and bias, unkept layers, …).
    pub ignored_tensors: usize,
}

/// Why a checkpoint could not be loaded. Each names the file and the tensor or field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    #[error("E-CKPT-001: cannot read {path}: {message}")]
    Io { path: String, message: String },

    #[error("{source} (in {path})")]
    Config { path: String, source: ConfigError },

    #[error("E-CKPT-003: {dir} has neither {WEIGHTS_FILE} nor {INDEX_FILE}")]
    NoWeights { dir: String },

    #[error("E-CKPT-004: {path} is not a valid safetensors index: {message}")]
    Index { path: String, message: String },

    #[error("E-CKPT-005: {index} puts {tensor} in {shard}, which cannot be read: {message}")]
    ShardMissing {
        index: String,
        shard: String,
        tensor: String,
        message: String,
    },

    #[error("E-CKPT-006: {path} is not a valid safetensors file: {message}")]
    Corrupt { path: String, message: String },

    #[error("E-CKPT-007: no tensor {tensor} in {searched}")]
    Missing { tensor: String, searched: String },

    #[error("E-CKPT-008: {tensor} in {path} has shape {got}, expected {expected}")]
    Shape {
        tensor: String,
        path: String,
        got: Shape,
        expected: Shape,
    },

    #[error(
        "E-CKPT-009: {tensor} in {path} has dtype {dtype}; only F32, F16 and BF16 are supported"
    )]
    DType {
        tensor: String,
        path: String,
        dtype: String,
    },

    #[error(
        "E-CKPT-010: {tensor} in {path} holds a non-finite value ({value}) at element {index}"
    )]
    NonFinite {
        tensor: String,
        path: String,
        index: usize,
        value: f32,
    },

    #[error("E-CKPT-011: {requested} encoder layers requested, but the config has {available} (ask for 1 to {available})")]
    Layers { requested: usize, available: usize },

    #[error("E-CKPT-012: {config} says {field} = {value}, but {found}")]
    ConfigMismatch {
        config: String,
        field: &'static str,
        value: usize,
        found: String,
    },

    #[error("E-CKPT-013: no SigLIP vision tower in {searched}: no embeddings.patch_embedding.weight or encoder.layers.0.layer_norm1.weight, with or without the vision_model. prefix")]
    NoVisionTower { searched: String },
}

/// Reads `config.json` of a checkpoint directory.
pub fn read_config(dir: &Path) -> Result<SiglipVisionConfig, CheckpointError> {
    let path = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| CheckpointError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    SiglipVisionConfig::from_json_str(&text).map_err(|source| CheckpointError::Config {
        path: path.display().to_string(),
        source,
    })
}

/// Loads a checkpoint directory (see the module docs): `layers: None` keeps every encoder
/// layer the config has, `Some(n)` the first `n` (1 ≤ n ≤ `num_hidden_layers`). `path` may
/// also be the `model.safetensors` or `model.safetensors.index.json` file itself; the config
/// is then the `config.json` beside it.
pub fn load_checkpoint(path: &Path, layers: Option<usize>) -> Result<Checkpoint, CheckpointError> {
    let (dir, weights_file) = if path.is_file() {
        (
            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            Some(path.to_path_buf()),
        )
    } else {
        (path.to_path_buf(), None)
    };
    let config = read_config(&dir)?;
    let config_file = dir.join(CONFIG_FILE);
    let mut source = Source::open(&dir, weights_file)?;

    let prefix =
        detect_prefix(|n| source.has(n)).ok_or_else(|| CheckpointError::NoVisionTower {
            searched: source.searched(),
        })?;
    let layers_in_checkpoint = source.layer_count(prefix);
    let config_name = config_file.display().to_string();
    if config.num_hidden_layers > layers_in_checkpoint {
        return Err(CheckpointError::ConfigMismatch {
            config: config_name,
            field: "num_hidden_layers",
            value: config.num_hidden_layers,
            found: match layers_in_checkpoint {
                0 => format!("{} has no encoder layers", source.searched()),
                n => format!(
                    "{} has tensors for encoder layers 0 to {} only",
                    source.searched(),
                    n - 1
                ),
            },
        });
    }
    let keep = layers.unwrap_or(config.num_hidden_layers);
    if keep == 0 || keep > config.num_hidden_layers {
        return Err(CheckpointError::Layers {
            requested: keep,
            available: config.num_hidden_layers,
        });
    }
    check_config_shapes(&config, &config_name, prefix, &mut source)?;

    let head = config.vision_use_head && source.has(&format!("{prefix}head.probe"));
    let selection = WeightSelection {
        layers: keep,
        embeddings: true,
        post_layernorm: true,
        head,
    };
    let mut dtypes = BTreeSet::new();
    let mut loaded = 0usize;
    let weights = layout::assemble(
        layout::specs(&config, &selection),
        config.hidden_size,
        |spec: &Spec| {
            let (data, dtype) =
                source.fetch(&format!("{prefix}{}", spec.hf_name), &spec.hf_shape)?;
            dtypes.insert(dtype);
            loaded += 1;
            Ok(data)
        },
    )?;
    let total = source.tensor_count();
    Ok(Checkpoint {
        config,
        weights,
        selection,
        info: CheckpointInfo {
            config_file,
            index_file: source.index.as_ref().map(|i| i.path.clone()),
            weight_files: source.files.iter().map(|f| f.path.clone()).collect(),
            prefix,
            dtypes: dtypes.into_iter().collect(),
            head,
            layers_in_checkpoint,
            layers: keep,
            tensors_loaded: loaded,
            ignored_tensors: total.saturating_sub(loaded),
        },
    })
}

/// Compares the config's sizes with the shapes the headers give the patch embedding, the
/// position embedding and layer 0's fc1, naming the config field that disagrees.
fn check_config_shapes(
    config: &SiglipVisionConfig,
    config_name: &str,
    prefix: &str,
    source: &mut Source,
) -> Result<(), CheckpointError> {
    let mismatch =
        |field: &'static str, value: usize, tensor: &str, shape: &[usize], path: &Path| {
            CheckpointError::ConfigMismatch {
                config: config_name.to_string(),
                field,
                value,
                found: format!(
                    "{tensor} in {} has shape {}",
                    path.display(),
                    Shape::from(shape)
                ),
            }
        };
    let patch = format!("{prefix}embeddings.patch_embedding.weight");
    if let Some((shape, path)) = source.shape_of(&patch)? {
        if shape.len() == 4 {
            for (field, value, got) in [
                ("hidden_size", config.hidden_size, shape[0]),
                ("num_channels", config.num_channels, shape[1]),
                ("patch_size", config.patch_size, shape[2]),
                ("patch_size", config.patch_size, shape[3]),
            ] {
                if value != got {
                    return Err(mismatch(field, value, &patch, &shape, &path));
                }
            }
        }
    }
    let position = format!("{prefix}embeddings.position_embedding.weight");
    if let Some((shape, path)) = source.shape_of(&position)? {
        if shape.len() == 2 && shape[0] != config.num_patches() {
            return Err(CheckpointError::ConfigMismatch {
                config: config_name.to_string(),
                field: "image_size",
                value: config.image_size,
                found: format!(
                    "{position} in {} has shape {} ({} positions; image_size {} / patch_size {} gives {}² = {})",
                    path.display(),
                    Shape::from(shape.as_slice()),
                    shape[0],
                    config.image_size,
                    config.patch_size,
                    config.patches_per_side(),
                    config.num_patches()
                ),
            });
        }
    }
    let fc1 = format!("{prefix}encoder.layers.0.mlp.fc1.weight");
    if let Some((shape, path)) = source.shape_of(&fc1)? {
        if shape.len() == 2 && shape[0] != config.intermediate_size {
            return Err(mismatch(
                "intermediate_size",
                config.intermediate_size,
                &fc1,
                &shape,
                &path,
            ));
        }
    }
    Ok(())
}

/// The safetensors files of a checkpoint, opened lazily for a sharded one.
struct Source {
    /// Files opened so far.
    files: Vec<TensorFile>,
    /// For a sharded checkpoint, its index; else `None` and `files` has the one file.
    index: Option<ShardIndex>,
    dir: PathBuf,
    /// Tensor name → index in `files` (for a sharded checkpoint, of the shards opened).
    located: BTreeMap<String, usize>,
}

impl Source {
    fn open(dir: &Path, file: Option<PathBuf>) -> Result<Source, CheckpointError> {
        let file = match file {
            Some(f) => f,
            None => {
                let single = dir.join(WEIGHTS_FILE);
                let index = dir.join(INDEX_FILE);
                if single.is_file() {
                    single
                } else if index.is_file() {
                    index
                } else if !dir.is_dir() {
                    return Err(CheckpointError::Io {
                        path: dir.display().to_string(),
                        message: "not a directory".into(),
                    });
                } else {
                    return Err(CheckpointError::NoWeights {
                        dir: dir.display().to_string(),
                    });
                }
            }
        };
        let is_index = file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".json"));
        if is_index {
            let index = ShardIndex::read(&file)?;
            Ok(Source {
                files: Vec::new(),
                index: Some(index),
                dir: file.parent().unwrap_or(dir).to_path_buf(),
                located: BTreeMap::new(),
            })
        } else {
            let f = TensorFile::open(&file)?;
            let located = f.names().into_iter().map(|n| (n, 0)).collect();
            Ok(Source {
                files: vec![f],
                index: None,
                dir: dir.to_path_buf(),
                located,
            })
        }
    }

    /// Whether the checkpoint has tensor `name` (by the index, for a sharded one).
    fn has(&self, name: &str) -> bool {
        match &self.index {
            Some(i) => i.weight_map.contains_key(name),
            None => self.located.contains_key(name),
        }
    }

    /// Every tensor name of the checkpoint.
    fn all_names(&self) -> Box<dyn Iterator<Item = &String> + '_> {
        match &self.index {
            Some(i) => Box::new(i.weight_map.keys()),
            None => Box::new(self.located.keys()),
        }
    }

    fn tensor_count(&self) -> usize {
        match &self.index {
            Some(i) => i.weight_map.len(),
            None => self.located.len(),
        }
    }

    /// What a missing tensor was looked for in.
    fn searched(&self) -> String {
        match &self.index {
            Some(i) => format!("the weight map of {}", i.path.display()),
            None => self.files[0].path.display().to_string(),
        }
    }

    /// Encoder layers `0..n` for which some tensor `{prefix}encoder.layers.{i}.…` exists.
    fn layer_count(&self, prefix: &str) -> usize {
        let head = format!("{prefix}encoder.layers.");
        let present: BTreeSet<usize> = self
            .all_names()
            .filter_map(|n| n.strip_prefix(&head))
            .filter_map(|rest| rest.split_once('.'))
            .filter_map(|(i, _)| {
                // Canonical decimal only ("01" is not layer 1).
                let ok = !i.is_empty()
                    && i.bytes().all(|b| b.is_ascii_digit())
                    && (i == "0" || !i.starts_with('0'));
                ok.then(|| i.parse::<usize>().ok()).flatten()
            })
            .collect();
        (0..).take_while(|i| present.contains(i)).count()
    }

    /// The file holding `name`, opening its shard if needed.
    fn locate(&mut self, name: &str) -> Result<usize, CheckpointError> {
        if let Some(&i) = self.located.get(name) {
            return Ok(i);
        }
        let Some(index) = &self.index else {
            return Err(CheckpointError::Missing {
                tensor: name.to_string(),
                searched: self.searched(),
            });
        };
        let Some(shard) = index.weight_map.get(name) else {
            return Err(CheckpointError::Missing {
                tensor: name.to_string(),
                searched: self.searched(),
            });
        };
        let path = self.dir.join(shard);
        let file = match self.files.iter().position(|f| f.path == path) {
            Some(i) => i,
            None => {
                // A shard the index names but that cannot be read is reported as missing.
                let f = TensorFile::open(&path).map_err(|e| {
                    let CheckpointError::Io { message, .. } = e else {
                        return e;
                    };
                    CheckpointError::ShardMissing {
                        index: index.path.display().to_string(),
                        shard: path.display().to_string(),
                        tensor: name.to_string(),
                        message,
                    }
                })?;
                for n in f.names() {
                    // The index decides which shard a name belongs to.
                    if index.weight_map.get(&n) == Some(shard) {
                        self.located.insert(n, self.files.len());
                    }
                }
                self.files.push(f);
                self.files.len() - 1
            }
        };
        if self.files[file].info(name).is_none() {
            return Err(CheckpointError::Missing {
                tensor: name.to_string(),
                searched: format!(
                    "{} (where {} puts it)",
                    path.display(),
                    index.path.display()
                ),
            });
        }
        Ok(file)
    }

    /// The header shape of `name` and its file, or `None` if the checkpoint has no such
    /// tensor.
    fn shape_of(&mut self, name: &str) -> Result<Option<(Vec<usize>, PathBuf)>, CheckpointError> {
        if !self.has(name) {
            return Ok(None);
        }
        let i = self.locate(name)?;
        let f = &self.files[i];
        Ok(f.info(name)
            .map(|info| (info.shape.clone(), f.path.clone())))
    }

    /// Reads tensor `name`, checking its shape against `expected` and its dtype, as f32.
    fn fetch(
        &mut self,
        name: &str,
        expected: &[usize],
    ) -> Result<(Vec<f32>, SourceDtype), CheckpointError> {
        let i = self.locate(name)?;
        let f = &mut self.files[i];
        let path = f.path.display().to_string();
        let info = f
            .info(name)
            .expect("`locate` returns only a file that holds the name");
        if info.shape != expected {
            return Err(CheckpointError::Shape {
                tensor: name.to_string(),
                path,
                got: Shape::from(info.shape.as_slice()),
                expected: Shape::from(expected),
            });
        }
        #[expect(
            clippy::wildcard_enum_match_arm,
            reason = "safetensors' dtypes: three are read, every other is refused"
        )]
        let dtype = match info.dtype {
            Dtype::F32 => SourceDtype::F32,
            Dtype::F16 => SourceDtype::F16,
            Dtype::BF16 => SourceDtype::BF16,
            other => {
                return Err(CheckpointError::DType {
                    tensor: name.to_string(),
                    path,
                    dtype: format!("{other:?}"),
                })
            }
        };
        let raw_dtype = info.dtype;
        let bytes = f.read(name)?;
        let data = to_f32(raw_dtype, &bytes).map_err(|e| match e {
            Convert::DType(dtype) => CheckpointError::DType {
                tensor: name.to_string(),
                path: path.clone(),
                dtype,
            },
            Convert::NonFinite { index, value } => CheckpointError::NonFinite {
                tensor: name.to_string(),
                path: path.clone(),
                index,
                value,
            },
        })?;
        Ok((data, dtype))
    }
}
