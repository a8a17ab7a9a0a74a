//! `tessera model make`: a SigLIP vision checkpoint with seeded weights, written in the layout
//! Hugging Face transformers writes (config.json + model.safetensors or shards), so the main job
//! can be run on the headline shapes without downloading one.

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tessera_models::siglip::config::SiglipVisionConfig;
use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
use tessera_models::siglip::{save_checkpoint, SaveOptions, SourceDtype};

#[derive(Subcommand)]
pub enum ModelCommand {
    /// Write a checkpoint with seeded weights.
    Make(MakeArgs),
}

#[derive(Args)]
pub struct MakeArgs {
    /// `so400m-378` (So400m/14 at 378×378), `so400m-384`, `small` (the built-in model), or `tiny`.
    #[arg(long, default_value = "so400m-378")]
    preset: String,
    /// Encoder layers (default: the preset's).
    #[arg(long)]
    layers: Option<usize>,
    /// Leave out the attention-pooling head.
    #[arg(long)]
    no_head: bool,
    /// On-disk dtype: f32, f16 or bf16.
    #[arg(long, default_value = "f32")]
    dtype: String,
    /// Shard files (1: one model.safetensors).
    #[arg(long, default_value_t = 1)]
    shards: usize,
    /// Name tensors with the `vision_model.` prefix (as SiglipModel does) instead of without.
    #[arg(long)]
    prefixed: bool,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The directory to write.
    #[arg(short, long)]
    out: PathBuf,
}

pub fn run(command: ModelCommand) -> Result<ExitCode> {
    let ModelCommand::Make(args) = command;
    let mut config = match args.preset.as_str() {
        "so400m-378" => SiglipVisionConfig::so400m_patch14_378(),
        "so400m-384" => SiglipVisionConfig::so400m_patch14_384(),
        "small" => tessera::pipeline::Model::builtin(args.seed).config,
        "tiny" => SiglipVisionConfig::tiny(),
        other => bail!("--preset `{other}`: expected so400m-378, so400m-384, small or tiny"),
    };
    if let Some(l) = args.layers {
        if l == 0 || l > 64 {
            bail!("--layers {l}: expected 1..=64");
        }
        config.num_hidden_layers = l;
    }
    config.vision_use_head = !args.no_head;
    if args.shards == 0 || args.shards > 64 {
        bail!("--shards {}: expected 1..=64", args.shards);
    }
    let dtype = match args.dtype.as_str() {
        "f32" => SourceDtype::F32,
        "f16" => SourceDtype::F16,
        "bf16" => SourceDtype::BF16,
        other => bail!("--dtype `{other}`: expected f32, f16 or bf16"),
    };
    let selection = WeightSelection::full(&config);
    let store = synthetic_weights(&config, &selection, args.seed);
    let options = SaveOptions {
        prefix: if args.prefixed {
            "vision_model.".into()
        } else {
            String::new()
        },
        shards: args.shards,
        dtype,
    };
    save_checkpoint(&args.out, &config, &store, &selection, &options)?;
    println!(
        "wrote {}: {} layers, hidden {}, {}x{} pixels, head {}, {} ({} values)",
        args.out.display(),
        config.num_hidden_layers,
        config.hidden_size,
        config.image_size,
        config.image_size,
        if config.vision_use_head { "yes" } else { "no" },
        args.dtype,
        store.total_values()
    );
    Ok(ExitCode::SUCCESS)
}
