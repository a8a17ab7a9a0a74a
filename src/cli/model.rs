//! `tessera run`, `tessera compile`, `tessera estimate`: the encoder compiler on a built-in graph.

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tessera::model_run::{compile_graph, run_mlp_block, GraphSpec};
use tessera::sim::MachineDescription;
use tessera_codegen::plan::{plan, PlanOptions};

#[derive(Args, Clone)]
pub struct GraphArgs {
    /// Built-in graph: `mlp-block` (LayerNorm → FP8 GEMM → GeLU → FP8 GEMM → residual).
    #[arg(long, default_value = "mlp-block")]
    graph: String,
    /// Use the So400m/14 shapes (729 tokens, hidden 1152, MLP 4304) instead of the small default.
    #[arg(long)]
    so400m: bool,
    /// Tokens (rows).
    #[arg(long)]
    tokens: Option<usize>,
    /// Hidden width.
    #[arg(long)]
    hidden: Option<usize>,
    /// MLP width.
    #[arg(long)]
    mlp: Option<usize>,
    /// Seed of the synthetic weights and inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Machine: `ipu21`, `small`, or a .ron path.
    #[arg(long, default_value = "ipu21")]
    machine: String,
    /// Fix the tile grid (e.g. `23x64`) instead of searching.
    #[arg(long)]
    grid: Option<String>,
    /// Bound on planner candidates.
    #[arg(long, default_value_t = 24)]
    max_candidates: usize,
}

impl GraphArgs {
    fn spec(&self) -> Result<GraphSpec> {
        if self.graph != "mlp-block" {
            bail!("unknown graph `{}` (built-in: mlp-block)", self.graph);
        }
        let mut spec = if self.so400m {
            GraphSpec::so400m()
        } else {
            GraphSpec::small_default()
        };
        if let Some(t) = self.tokens {
            spec.tokens = t;
        }
        if let Some(h) = self.hidden {
            spec.config.hidden_size = h;
        }
        if let Some(m) = self.mlp {
            spec.config.intermediate_size = m;
        }
        spec.seed = self.seed;
        Ok(spec)
    }

    fn options(&self, machine: &MachineDescription) -> Result<PlanOptions> {
        let target = tessera::target::target_of(machine);
        let mut options = PlanOptions::for_target(&target);
        options.max_candidates = self.max_candidates;
        if let Some(grid) = &self.grid {
            let (tm, tn) = grid
                .split_once('x')
                .context("--grid looks like TMxTN, e.g. 23x64")?;
            options.grid = Some((tm.parse()?, tn.parse()?));
        }
        Ok(options)
    }
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Host threads for the simulation.
    #[arg(long)]
    threads: Option<usize>,
    /// Write profile.html and trace.json here.
    #[arg(long)]
    profile: Option<PathBuf>,
}

#[derive(Args)]
pub struct CompileArgs {
    #[command(flatten)]
    graph: GraphArgs,
    /// Write the image here.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write the plan report, the distributed-level dump and tile 0's supervisor program here.
    #[arg(long)]
    dump: Option<PathBuf>,
}

fn header(spec: &GraphSpec, machine: &MachineDescription) {
    println!(
        "graph mlp-block: {} tokens, hidden {}, MLP {} (FP8 GEMMs, F143 activations at scale -4) on {} ({} tiles)",
        spec.tokens, spec.config.hidden_size, spec.config.intermediate_size, machine.name, machine.tiles
    );
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let machine = MachineDescription::load(&args.graph.machine)?;
    let spec = args.graph.spec()?;
    header(&spec, &machine);
    let (graph, store) = spec.mlp_block()?;
    let compiled = compile_graph(&machine, &graph, &store, &args.graph.options(&machine)?)?;
    let plan = &compiled.plan;
    let chosen = &plan.report.explored[plan.report.chosen];
    println!(
        "plan: grid {}x{} chosen from {} candidates ({}); planned in {:.2} s, emitted in {:.2} s",
        chosen.tm,
        chosen.tn,
        plan.report.explored.len(),
        plan.report.stop_reason,
        compiled.plan_seconds,
        compiled.emit_seconds
    );
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating: superstep {pos} {msg}").unwrap(),
    );
    let progress = |p: &tessera::sim::chip::RunProgress| {
        bar.set_position(p.supersteps);
        bar.set_message(format!("(cycle {})", p.cycle));
    };
    let run = run_mlp_block(
        &machine,
        &spec,
        &compiled,
        &store,
        args.threads,
        Some(&progress),
    )?;
    bar.finish_and_clear();
    let report = &run.report;
    println!(
        "simulated in {:.2} s: {} supersteps on {} tiles",
        run.sim_seconds,
        report.supersteps,
        compiled.compiled.report.running_tiles.len()
    );
    println!(
        "cycles: total {} (start-up {}, cropped {}); estimate {} ({:+.1}% vs cropped); {:.1} us at {:.2} GHz",
        report.total_cycles,
        report.startup_cycles,
        report.cropped_cycles,
        plan.estimate.cycles,
        (plan.estimate.cycles as f64 - report.cropped_cycles as f64) / report.cropped_cycles.max(1) as f64 * 100.0,
        machine.cycles_to_seconds(report.cropped_cycles) * 1e6,
        machine.clock_hz as f64 / 1e9
    );
    let peak = report
        .profile
        .memory
        .iter()
        .map(|m| m.used)
        .max()
        .unwrap_or(0);
    println!(
        "peak SRAM per tile: {} KiB of {} KiB",
        peak / 1024,
        machine.sram_size() / 1024
    );
    println!(
        "error vs host f32 reference: max abs {:.3e}, mean abs {:.3e}, relative rms {:.2e} over {} outputs",
        run.error.max_abs, run.error.mean_abs, run.error.relative_rms, run.output_elements
    );
    println!(
        "bit-exact vs the plan's reference (kernel references on the same tile program): {}",
        if run.plan_mismatches == 0 {
            "yes".to_string()
        } else {
            format!("NO, {} bytes differ", run.plan_mismatches)
        }
    );
    if let Some(dir) = &args.profile {
        tessera::sim::profile::write_profile(dir, &report.profile)
            .with_context(|| format!("writing the profile to {}", dir.display()))?;
        println!("profile: {}/profile.html and trace.json", dir.display());
    }
    Ok(if run.plan_mismatches == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn compile(args: CompileArgs) -> Result<ExitCode> {
    let machine = MachineDescription::load(&args.graph.machine)?;
    let spec = args.graph.spec()?;
    header(&spec, &machine);
    let (graph, store) = spec.mlp_block()?;
    let started = Instant::now();
    let compiled = compile_graph(&machine, &graph, &store, &args.graph.options(&machine)?)?;
    print!("{}", compiled.plan.report.text());
    println!("estimate: {} cycles; steps:", compiled.plan.estimate.cycles);
    for (label, cycles) in &compiled.plan.estimate.steps {
        println!("  {cycles:>9}  {label}");
    }
    let report = &compiled.compiled.report;
    println!(
        "compiled in {:.2} s: {} running tiles, {} distinct supervisor programs, kernel code {} bytes, exchange phases {:?} cycles",
        started.elapsed().as_secs_f64(),
        report.running_tiles.len(),
        report.distinct_programs,
        report.kernel_code_bytes,
        report.phase_cycles
    );
    if let Some(path) = &args.output {
        compiled.compiled.image.write(path)?;
        println!("image: {}", path.display());
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("plan.txt"), compiled.plan.report.text())?;
        std::fs::write(
            dir.join("graph.txt"),
            tessera_codegen::graph::dump::dump(&graph),
        )?;
        std::fs::write(
            dir.join("distributed.txt"),
            tessera_codegen::dist::dump::dump(&compiled.plan.mid),
        )?;
        if let Some((tile, text)) = &report.sample_program {
            std::fs::write(dir.join(format!("tile{tile}.S")), text)?;
        }
        println!("dumps: {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn estimate(args: GraphArgs) -> Result<ExitCode> {
    let machine = MachineDescription::load(&args.machine)?;
    let spec = args.spec()?;
    header(&spec, &machine);
    let (graph, store) = spec.mlp_block()?;
    let target = tessera::target::target_of(&machine);
    let started = Instant::now();
    let plan = plan(&graph, &store, &target, &args.options(&machine)?)?;
    print!("{}", plan.report.text());
    println!(
        "estimate: {} cycles ({:.1} us); planned in {:.2} s",
        plan.estimate.cycles,
        machine.cycles_to_seconds(plan.estimate.cycles) * 1e6,
        started.elapsed().as_secs_f64()
    );
    for (label, cycles) in &plan.estimate.steps {
        println!("  {cycles:>9}  {label}");
    }
    Ok(ExitCode::SUCCESS)
}
