//! The main job as library calls, shared by the CLI, the tests and the benches: a SigLIP vision
//! tower (a checkpoint as Hugging Face transformers writes it, or the built-in model with seeded
//! weights) → graph → compiled image → simulated run on every tile → outputs compared bit for
//! bit with the plan's reference (the same tile program through the kernels' Rust references)
//! and against the host f32 reference of the model (written from the model's definition).

use crate::target::target_of;
use anyhow::{anyhow, bail, Context, Result};
use half::f16;
use std::path::Path;
use std::time::Instant;
use tessera_codegen::compile::{compile, CompiledGraph, Progress};
use tessera_codegen::graph::weights::{fit_fp8_weight_scales, WeightStore};
use tessera_codegen::graph::Graph;
use tessera_codegen::plan::PlanOptions;
use tessera_models::pixels::PixelValues;
use tessera_models::reference::{compare, vision_tower as reference_tower, ErrorReport};
use tessera_models::siglip::config::SiglipVisionConfig;
use tessera_models::siglip::graph::{vision_tower, EncoderKParts, Precision, TowerSpec};
use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
use tessera_models::siglip::{add_derived_weights, load_checkpoint, CheckpointInfo};
use tessera_sim::chip::{Chip, RunOptions, RunProgress, RunReport};
use tessera_sim::MachineDescription;

/// A model: its config and weights, and where they came from.
pub struct Model {
    pub config: SiglipVisionConfig,
    pub store: WeightStore,
    /// Encoder layers the weights hold.
    pub layers: usize,
    pub head: bool,
    /// `built-in (seed S)` or the checkpoint directory.
    pub source: String,
    pub info: Option<CheckpointInfo>,
}

impl Model {
    /// The built-in model: a small SigLIP vision tower (112×112 pixels in patches of 14 → 64
    /// tokens, hidden 256, MLP 1024, 4 heads, 2 layers, with the pooling head) with seeded
    /// weights; what `tessera run` runs with no arguments.
    pub fn builtin(seed: u64) -> Model {
        let config = SiglipVisionConfig {
            hidden_size: 256,
            intermediate_size: 1024,
            num_attention_heads: 4,
            num_hidden_layers: 2,
            num_channels: 3,
            patch_size: 14,
            image_size: 112,
            layer_norm_eps: 1e-6,
            hidden_act: tessera_models::siglip::HiddenAct::GeluTanh,
            vision_use_head: true,
        };
        let mut model = Model::synthetic(config, seed);
        model.source = format!("built-in (seed {seed})");
        model
    }

    /// A model of `config` with seeded weights (every tensor `tessera model make` writes, and
    /// the derived ones), as the built-in model's are made.
    pub fn synthetic(config: SiglipVisionConfig, seed: u64) -> Model {
        let mut store = synthetic_weights(&config, &WeightSelection::full(&config), seed);
        add_derived_weights(&config, &mut store)
            .expect("a synthetic store holds every tensor the derived weights read");
        Model {
            layers: config.num_hidden_layers,
            head: config.vision_use_head,
            source: format!("synthetic (seed {seed})"),
            config,
            store,
            info: None,
        }
    }

    /// A checkpoint directory as transformers writes it, keeping the first `layers` layers.
    pub fn load(dir: &Path, layers: Option<usize>) -> Result<Model> {
        let mut checkpoint = load_checkpoint(dir, layers)?;
        add_derived_weights(&checkpoint.config, &mut checkpoint.weights)?;
        Ok(Model {
            layers: checkpoint.selection.layers,
            head: checkpoint.info.head,
            source: dir.display().to_string(),
            config: checkpoint.config,
            store: checkpoint.weights,
            info: Some(checkpoint.info),
        })
    }
}

/// How to run the model.
#[derive(Clone, Copy, Debug)]
pub struct RunSpec {
    pub batch: usize,
    pub layers: usize,
    pub head: bool,
    /// FP8 GEMMs (F143 activations with scale −4) or f16.
    pub fp8: bool,
    /// K-chunks of the encoder's products; `None`: chosen from the model's sizes.
    pub k_parts: Option<EncoderKParts>,
    /// Key blocks of the encoder's attention (1: whole rows); `None`: chosen from the tokens and
    /// the batch.
    pub key_blocks: Option<usize>,
    /// With key blocks, the values projected transposed (`Precision::values_transposed`);
    /// `None`: the default.
    pub values_transposed: Option<bool>,
}

/// The graph of `model` for `spec`, with FP8 weight scales fitted to the weights.
pub fn tower_graph(model: &Model, spec: &RunSpec) -> Result<Graph> {
    tower_graph_with(model, spec, true)
}

/// [`tower_graph`] with `Precision::combine_head_width` set to `combine_head_width`.
fn tower_graph_with(model: &Model, spec: &RunSpec, combine_head_width: bool) -> Result<Graph> {
    if spec.layers > model.layers {
        bail!(
            "{} layers asked for, the model has {}",
            spec.layers,
            model.layers
        );
    }
    if spec.head && !model.head {
        bail!("the model has no pooling head");
    }
    let mut precision = if spec.fp8 {
        Precision::default()
    } else {
        Precision::f16()
    };
    precision.k_parts = spec.k_parts;
    precision.key_blocks = spec.key_blocks;
    if let Some(v) = spec.values_transposed {
        precision.values_transposed = v;
    }
    precision.combine_head_width &= combine_head_width;
    let mut graph = vision_tower(
        &model.config,
        &TowerSpec {
            batch: spec.batch,
            layers: spec.layers,
            head: spec.head,
            precision,
        },
    )?;
    fit_fp8_weight_scales(&mut graph, &model.store)?;
    Ok(graph)
}

/// Which graph form [`compile_tower`] compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TowerForm {
    /// The default form ([`tower_graph`]).
    Default,
    /// The key blocks combined over the padded heads (`Precision::combine_head_width` off),
    /// because nothing fitted the default form: combined over the heads' own width, the output
    /// projection reads the checkpoint's weight and its plans can keep more weight bytes on a
    /// tile (27 So400m/14 layers with the head at batch 1 do not fit with it).
    PaddedHeads,
}

/// Builds and compiles the tower of `spec`: the default form ([`tower_graph`]), or where no
/// plan of it fits the machine ([`CompileError::NothingFits`], [`CompileError::NoFinalistFits`])
/// the key blocks combined over the padded heads ([`TowerForm::PaddedHeads`]).
pub fn compile_tower(
    machine: &MachineDescription,
    model: &Model,
    spec: &RunSpec,
    options: &PlanOptions,
    progress: Option<&dyn Progress>,
) -> Result<(CompiledGraph, TowerForm)> {
    use tessera_codegen::compile::CompileError;
    let graph = tower_graph(model, spec)?;
    let target = target_of(machine);
    match compile(&graph, &model.store, &target, options, progress) {
        Ok(compiled) => Ok((compiled, TowerForm::Default)),
        Err(first @ (CompileError::NothingFits { .. } | CompileError::NoFinalistFits(_))) => {
            let padded = tower_graph_with(model, spec, false)?;
            if padded == graph {
                return Err(first.into());
            }
            let compiled = compile(&padded, &model.store, &target, options, progress)
                .map_err(|second| anyhow!("{first}; over the padded heads: {second}"))?;
            Ok((compiled, TowerForm::PaddedHeads))
        }
        Err(other) => Err(other.into()),
    }
}

/// Compiles `graph` for `machine`.
pub fn compile_graph(
    machine: &MachineDescription,
    graph: &Graph,
    store: &WeightStore,
    options: &PlanOptions,
    progress: Option<&dyn Progress>,
) -> Result<CompiledGraph> {
    Ok(compile(
        graph,
        store,
        &target_of(machine),
        options,
        progress,
    )?)
}

/// Makes every parallel part of a run (the planner, the plan's reference executor, the host
/// reference) use `threads` host threads, as the simulator does with `RunOptions::threads`: the
/// process-wide rayon pool is built with that many. Call it once, before any of them runs;
/// refuses 0 and more than the simulator's limit, with the simulator's error.
pub fn use_host_threads(threads: usize) -> Result<()> {
    use tessera_sim::chip::MAX_HOST_THREADS;
    if threads == 0 || threads > MAX_HOST_THREADS {
        return Err(tessera_sim::SimError::Limit {
            what: "host threads",
            value: threads as u64,
            limit: MAX_HOST_THREADS as u64,
        }
        .into());
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| anyhow!("a pool of {threads} host threads: {e}"))
}

/// Seeded pixel values in [-1, 1] for `batch` images of `config`.
pub fn synthetic_pixels(config: &SiglipVisionConfig, batch: usize, seed: u64) -> PixelValues {
    let s = config.image_size;
    let c = config.num_channels;
    let mut data = Vec::with_capacity(batch * c * s * s);
    for b in 0..batch {
        let image = tessera_models::input::synthetic_image(c, s, s, seed.wrapping_add(b as u64));
        data.extend(image.iter().map(|&v| (v - 0.5) / 0.5));
    }
    PixelValues::new(&[batch, c, s, s], data).expect("a synthetic image has the config's shape")
}

/// A simulated run and what it was compared with.
pub struct Outcome {
    pub report: RunReport,
    pub simulate_seconds: f64,
    /// Per output: name, shape, values (f32 from the chip's f16).
    pub outputs: Vec<(String, Vec<usize>, Vec<f32>)>,
    /// Per output: bytes that differ from the plan's reference.
    pub mismatches: Vec<(String, usize)>,
    /// Per output: error against the host f32 reference.
    pub errors: Vec<(String, ErrorReport)>,
    pub reference_seconds: f64,
    /// Of those, the plan's reference executor and the host f32 reference (run side by side).
    pub plan_reference_seconds: f64,
    pub host_reference_seconds: f64,
    /// The process's peak resident memory (`VmHWM`) after each stage of the run: the image
    /// loaded on the chip, the simulation, the references (empty where the host does not say).
    pub peak_memory: Vec<(&'static str, u64)>,
}

impl Outcome {
    pub fn bit_exact(&self) -> bool {
        self.mismatches.iter().all(|(_, n)| *n == 0)
    }
}

/// The process's peak resident set so far, in bytes (Linux `VmHWM`; `None` elsewhere).
pub fn peak_memory_bytes() -> Option<u64> {
    process_status_bytes("VmHWM:")
}

/// The process's resident set now, in bytes (Linux `VmRSS`; `None` elsewhere).
pub fn resident_memory_bytes() -> Option<u64> {
    process_status_bytes("VmRSS:")
}

/// A `kB` figure of `/proc/self/status`, in bytes.
fn process_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn halves_to_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(2)
        .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
        .collect()
}

/// What a run records beside its outputs and cycles.
#[derive(Clone, Copy)]
pub struct RunRecording<'a> {
    /// Host threads of the simulation (`None`: one per core).
    pub threads: Option<usize>,
    /// Called after every global sync.
    pub progress: Option<&'a dyn Fn(&RunProgress)>,
    /// Record every worker's kernel span (for a profile page or trace; a many-layer run makes
    /// tens of millions of them).
    pub kernel_spans: bool,
    /// The simulator's shortcuts ([`RunOptions::fast_paths`]); they change no result.
    pub fast_paths: bool,
}

impl Default for RunRecording<'_> {
    /// One thread per core, no progress, no kernel spans, the fast paths on.
    fn default() -> Self {
        RunRecording {
            threads: None,
            progress: None,
            kernel_spans: false,
            fast_paths: true,
        }
    }
}

/// Simulates `compiled` on `pixels`, and compares the outputs with the plan's reference and the
/// host reference of `model` run for `spec`.
pub fn run_and_check(
    machine: &MachineDescription,
    model: &Model,
    spec: &RunSpec,
    compiled: &CompiledGraph,
    pixels: &PixelValues,
    recording: RunRecording,
) -> Result<Outcome> {
    pixels.validate(&model.config)?;
    if pixels.batch() != spec.batch {
        bail!(
            "{} images given for a batch of {}",
            pixels.batch(),
            spec.batch
        );
    }
    let input: Vec<u8> = pixels.data().iter().flat_map(|v| v.to_le_bytes()).collect();
    let inputs = vec![("pixel_values".to_string(), input)];
    let mut peak_memory = Vec::new();
    let mut note_memory = |stage: &'static str| {
        if let Some(bytes) = peak_memory_bytes() {
            peak_memory.push((stage, bytes));
        }
    };
    let mut chip = Chip::new(machine)?;
    chip.load_shared_image(std::sync::Arc::clone(&compiled.back.image))?;
    note_memory("image loaded");
    let started = Instant::now();
    let report = chip.run(
        &inputs,
        &RunOptions {
            threads: recording.threads,
            max_cycles: 20_000_000_000,
            progress: recording.progress,
            record_kernel_spans: recording.kernel_spans,
            fast_paths: recording.fast_paths,
        },
    )?;
    let simulate_seconds = started.elapsed().as_secs_f64();
    note_memory("simulated");
    drop(chip);
    let started = Instant::now();
    // The two references are independent (and each parallel inside): run them side by side.
    let ((expected, plan_reference_seconds), (host, host_reference_seconds)) = rayon::join(
        || {
            let started = Instant::now();
            let expected = tessera_codegen::refexec::execute(&compiled.lowered.program, &inputs);
            (expected, started.elapsed().as_secs_f64())
        },
        || {
            let started = Instant::now();
            let host = reference_tower(&model.config, &model.store, pixels, spec.layers, spec.head);
            (host, started.elapsed().as_secs_f64())
        },
    );
    let expected = expected.context("the plan's reference")?;
    let host = host?;
    let reference_seconds = started.elapsed().as_secs_f64();
    note_memory("references");
    let mut outputs = Vec::new();
    let mut mismatches = Vec::new();
    let mut errors = Vec::new();
    for plan in &compiled.lowered.program.outputs {
        let got = report
            .output(&plan.name)
            .ok_or_else(|| anyhow!("the run has no output `{}`", plan.name))?;
        let want = &expected
            .iter()
            .find(|(n, _)| *n == plan.name)
            .ok_or_else(|| anyhow!("the plan's reference has no output `{}`", plan.name))?
            .1;
        let differ =
            got.iter().zip(want).filter(|(a, b)| a != b).count() + got.len().abs_diff(want.len());
        mismatches.push((plan.name.clone(), differ));
        let values = halves_to_f32(got);
        let oracle: Option<&Vec<f32>> = match plan.name.as_str() {
            "last_hidden_state" => Some(&host.last_hidden_state),
            "pooler_output" => host.pooler_output.as_ref(),
            _ => None,
        };
        if let Some(o) = oracle {
            errors.push((plan.name.clone(), compare(o, &values)));
        }
        outputs.push((plan.name.clone(), plan.shape.clone(), values));
    }
    Ok(Outcome {
        report,
        simulate_seconds,
        outputs,
        mismatches,
        errors,
        reference_seconds,
        plan_reference_seconds,
        host_reference_seconds,
        peak_memory,
    })
}
