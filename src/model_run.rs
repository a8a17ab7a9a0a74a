//! The main job as a library call: build a model graph with seeded (or loaded) weights, plan and
//! compile it for a machine, simulate the image on every tile, and compare the outputs with the
//! plan's bit-exact reference and with a host f32 reference.

use crate::target::target_of;
use anyhow::{anyhow, Context, Result};
use half::f16;
use std::time::Instant;
use tessera_codegen::emit::{compile, Compiled};
use tessera_codegen::graph::weights::{fit_fp8_weight_scales, WeightStore};
use tessera_codegen::graph::Graph;
use tessera_codegen::plan::{plan, Plan, PlanOptions};
use tessera_models::reference::{compare, ErrorReport};
use tessera_models::siglip::config::SiglipVisionConfig;
use tessera_models::siglip::graph::mlp_block;
use tessera_models::siglip::weights::{synthetic_weights, WeightSelection};
use tessera_sim::chip::{Chip, RunOptions, RunReport};
use tessera_sim::MachineDescription;

/// Which built-in graph to compile.
#[derive(Clone, Debug)]
pub struct GraphSpec {
    pub config: SiglipVisionConfig,
    pub tokens: usize,
    pub seed: u64,
}

impl GraphSpec {
    /// A small SigLIP-shaped model (D 256, F 1024, 64 tokens) that compiles and simulates on the
    /// whole ipu21 in seconds: what `tessera run` runs with no arguments.
    pub fn small_default() -> GraphSpec {
        let mut config = SiglipVisionConfig::so400m_patch14_378();
        config.hidden_size = 256;
        config.intermediate_size = 1024;
        config.num_attention_heads = 4;
        GraphSpec {
            config,
            tokens: 64,
            seed: 1,
        }
    }

    /// The headline: So400m/14 widths on 729 tokens.
    pub fn so400m() -> GraphSpec {
        GraphSpec {
            config: SiglipVisionConfig::so400m_patch14_378(),
            tokens: 729,
            seed: 1,
        }
    }

    /// The MLP block graph with FP8 weight scales fitted to seeded weights.
    pub fn mlp_block(&self) -> Result<(Graph, WeightStore)> {
        let mut graph = mlp_block(&self.config, self.tokens, 1).map_err(|e| anyhow!("{e}"))?;
        let store = synthetic_weights(
            &self.config,
            &WeightSelection {
                layers: 1,
                embeddings: false,
                post_layernorm: false,
            },
            self.seed,
        );
        fit_fp8_weight_scales(&mut graph, &store).map_err(|e| anyhow!("{e}"))?;
        Ok((graph, store))
    }

    /// Seeded f16 activations `[tokens, D]`.
    pub fn input(&self) -> Vec<u16> {
        tessera_models::input::synthetic_activations(
            self.tokens,
            self.config.hidden_size,
            self.seed ^ 0xA5,
        )
        .iter()
        .map(|h| h.to_bits())
        .collect()
    }
}

/// A compiled graph and how long each stage took.
pub struct CompiledGraph {
    pub plan: Plan,
    pub compiled: Compiled,
    pub plan_seconds: f64,
    pub emit_seconds: f64,
}

/// Plans and emits `graph` for `machine`.
pub fn compile_graph(
    machine: &MachineDescription,
    graph: &Graph,
    store: &WeightStore,
    options: &PlanOptions,
) -> Result<CompiledGraph> {
    let target = target_of(machine);
    let started = Instant::now();
    let plan = plan(graph, store, &target, options)?;
    let plan_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let compiled = compile(&target, &plan.program)?;
    Ok(CompiledGraph {
        plan,
        compiled,
        plan_seconds,
        emit_seconds: started.elapsed().as_secs_f64(),
    })
}

/// What a simulated run of a compiled graph found.
pub struct ModelRun {
    pub report: RunReport,
    pub sim_seconds: f64,
    /// Output bytes that differ from the plan's bit-exact reference.
    pub plan_mismatches: usize,
    pub output_elements: usize,
    /// Against the host f32 reference.
    pub error: ErrorReport,
}

/// Simulates a compiled MLP block and checks it.
pub fn run_mlp_block(
    machine: &MachineDescription,
    spec: &GraphSpec,
    compiled: &CompiledGraph,
    store: &WeightStore,
    threads: Option<usize>,
    progress: Option<&dyn Fn(&tessera_sim::chip::RunProgress)>,
) -> Result<ModelRun> {
    let x = spec.input();
    let x_bytes: Vec<u8> = x.iter().flat_map(|h| h.to_le_bytes()).collect();
    let mut chip = Chip::new(machine)?;
    chip.load_image(&compiled.compiled.image)?;
    let started = Instant::now();
    let report = chip.run(
        &[("x".to_string(), x_bytes.clone())],
        &RunOptions {
            threads,
            max_cycles: 2_000_000_000,
            progress,
        },
    )?;
    let sim_seconds = started.elapsed().as_secs_f64();
    let y = report
        .output("y")
        .ok_or_else(|| anyhow!("the image has no output y"))?
        .to_vec();
    // The plan's bit-exact reference: the same tile program through the kernels' references.
    let expected = tessera_codegen::refexec::execute(&compiled.plan.program, &[("x", &x_bytes)])
        .context("plan reference")?;
    let expected_y = &expected
        .iter()
        .find(|(name, _)| name == "y")
        .ok_or_else(|| anyhow!("reference has no y"))?
        .1;
    let plan_mismatches = y.iter().zip(expected_y).filter(|(a, b)| a != b).count()
        + y.len().abs_diff(expected_y.len());
    // The host f32 reference.
    let x_f32: Vec<f32> = x.iter().map(|&h| f16::from_bits(h).to_f32()).collect();
    let reference =
        tessera_models::reference::mlp_block(&spec.config, store, 0, &x_f32, spec.tokens)
            .map_err(|e| anyhow!("{e}"))?;
    let actual: Vec<f32> = y
        .chunks_exact(2)
        .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32())
        .collect();
    let error = compare(&reference, &actual);
    Ok(ModelRun {
        report,
        sim_seconds,
        plan_mismatches,
        output_elements: actual.len(),
        error,
    })
}
