//! `tessera run`, `tessera compile`, `tessera estimate`: a SigLIP vision tower (a checkpoint or
//! the built-in model) compiled for every tile, simulated, and checked.

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use tessera::npy::NpyArray;
use tessera::pipeline::{
    compile_tower, run_and_check, synthetic_pixels, Model, Outcome, RunSpec, TowerForm,
};
use tessera::report::{encoder_span, op_table, step_times, RunSummary};
use tessera::sim::profile::trace::KernelSpans;
use tessera::sim::MachineDescription;
use tessera_codegen::compile::CompiledGraph;
use tessera_codegen::plan::PlanOptions;
use tessera_models::pixels::PixelValues;
use tessera_models::siglip::graph::{EncoderKParts, MAX_KEY_BLOCKS, MAX_K_PARTS};

/// The largest `--max-expansions`: more than any model's search spends (So400m/14 with 27
/// layers spends a few thousand).
const MAX_EXPANSIONS: usize = 100_000_000;

/// Which model, how to run it, and the planner's bounds.
#[derive(Args, Clone)]
pub struct ModelArgs {
    /// A checkpoint directory as Hugging Face transformers writes it (config.json and
    /// model.safetensors or a sharded index). Without it: the built-in small SigLIP tower.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Keep the first N encoder layers (default: all).
    #[arg(long)]
    layers: Option<usize>,
    /// Images per run when no pixels or images are given (default 2 for the built-in model, 1 otherwise).
    #[arg(long)]
    batch: Option<usize>,
    /// GEMM precision: `fp8` (F143 activations with scale −4, FP8 weights) or `f16`.
    #[arg(long, default_value = "fp8")]
    precision: String,
    /// Leave out the attention-pooling head even when the model has one.
    #[arg(long)]
    no_head: bool,
    /// Seed of the built-in model's weights and of synthetic pixels.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Machine: `ipu21`, `small`, or a .ron path.
    #[arg(long, default_value = "ipu21")]
    machine: String,
    /// Planner: states kept after each op.
    #[arg(long)]
    beam: Option<usize>,
    /// Planner: grid shapes tried per matrix product.
    #[arg(long)]
    grids: Option<usize>,
    /// Planner: after this many expansions (a plan state costed with one strategy) the rest
    /// of the ops are planned greedily from the best state, bounding the search's time; the
    /// plan report says where the limit ran out.
    #[arg(long)]
    max_expansions: Option<usize>,
    /// Planner: fix an op's strategy, `OP=STRATEGY` as the plan report prints them (repeatable),
    /// e.g. `--force "layer0.qkv=grid 27x48 cols/72 rows/16"`.
    #[arg(long)]
    force: Vec<String>,
    /// Planner: include the strategies that spend cycles to save SRAM (weights stored once and
    /// gathered before each use) from the start; otherwise they are tried only when a plan
    /// without them does not fit.
    #[arg(long)]
    sram_saving: bool,
    /// Planner: offer the key blocks' softmax parts in AMP panels, which the product with the
    /// values reads where they lie (`true` or `false`; by default on, at every batch, where it
    /// measured better: see `PlanOptions::softmax_part_panels`).
    #[arg(long)]
    softmax_panels: Option<bool>,
    /// Planner: offer products their A operand in rows, read where the exchange left them,
    /// besides AMP panels (`true` or `false`; by default below batch 4, where it measured
    /// better: see `PlanOptions::products_read_rows`).
    #[arg(long)]
    rows: Option<bool>,
    /// K-chunks of the encoder's products, `QKV,OUT_PROJ,FC1,FC2` (each 1..=32; 1: not split),
    /// e.g. `--k-parts 1,1,1,1` for none; by default chosen from the model's sizes (So400m:
    /// `2,2,2,4`). A count that does not divide the product's K leaves it unsplit.
    #[arg(long)]
    k_parts: Option<String>,
    /// Key blocks of the encoder's attention (1..=32; 1: whole rows): every block of keys meets
    /// every query on its own tiles, with its own softmax statistics, and the blocks are
    /// combined afterwards (`softmax_part_f16`, `attention_combine_f16`). Must divide the token
    /// count (So400m/14's 729: 3, 9 or 27). By default the largest count up to 16 whose blocks
    /// are whole multiples of 16 keys (the built-in model: 4), else the largest that leaves 64
    /// keys a block or more (So400m: 9), else 1.
    #[arg(long)]
    key_blocks: Option<usize>,
    /// With key blocks: the values projected transposed, `vᵀ = W_vᵀ xᵀ` with each block's keys
    /// padded, so every block's values reach `$CWEI` order as words (`true` or `false`; see
    /// `Precision::values_transposed` for the default)
    #[arg(long)]
    values_transposed: Option<bool>,
    /// Unroll the encoder layers instead of compiling them as one loop (the layer's code,
    /// vertex state and exchange programs emitted once and run once per layer).
    #[arg(long)]
    unroll: bool,
}

/// The most images one run takes (`--batch`, `--image`, the first dimension of `--pixels`).
const MAX_BATCH: usize = 64;

impl ModelArgs {
    /// Every flag's bound, checked before any work (a model load, pixels made or read, a
    /// thread pool): `--batch 100000` is refused here, not by an allocation failure later.
    fn check_bounds(&self) -> Result<()> {
        if let Some(batch) = self.batch {
            if batch == 0 || batch > MAX_BATCH {
                bail!("--batch {batch}: expected 1..={MAX_BATCH} images");
            }
        }
        if self.layers == Some(0) {
            bail!("--layers 0: expected at least 1 layer");
        }
        if !matches!(self.precision.as_str(), "fp8" | "f16") {
            bail!("--precision `{}`: expected fp8 or f16", self.precision);
        }
        if let Some(b) = self.beam {
            if b == 0 || b > 256 {
                bail!("--beam {b}: expected 1..=256");
            }
        }
        if let Some(g) = self.grids {
            if g == 0 || g > 64 {
                bail!("--grids {g}: expected 1..=64");
            }
        }
        if let Some(m) = self.max_expansions {
            if m > MAX_EXPANSIONS {
                bail!("--max-expansions {m}: expected 0..={MAX_EXPANSIONS}");
            }
        }
        if let Some(k) = &self.k_parts {
            if EncoderKParts::parse(k).is_none() {
                bail!("--k-parts `{k}`: expected four counts 1..={MAX_K_PARTS}, `QKV,OUT_PROJ,FC1,FC2`");
            }
        }
        if let Some(c) = self.key_blocks {
            if c == 0 || c > MAX_KEY_BLOCKS {
                bail!("--key-blocks {c}: expected 1..={MAX_KEY_BLOCKS}");
            }
        }
        for f in &self.force {
            if f.split_once('=').is_none() {
                bail!("--force `{f}`: expected OP=STRATEGY");
            }
        }
        Ok(())
    }

    fn model(&self) -> Result<Model> {
        match &self.model {
            Some(dir) => Model::load(dir, self.layers),
            None => Ok(Model::builtin(self.seed)),
        }
    }

    fn spec(&self, model: &Model, batch: usize) -> Result<RunSpec> {
        let fp8 = match self.precision.as_str() {
            "fp8" => true,
            "f16" => false,
            other => bail!("--precision `{other}`: expected fp8 or f16"),
        };
        let layers = self.layers.unwrap_or(model.layers);
        if layers > model.layers {
            bail!("--layers {layers}: the model has {} layers", model.layers);
        }
        if batch == 0 || batch > MAX_BATCH {
            bail!("--batch {batch}: expected 1..={MAX_BATCH} images");
        }
        let tokens = model.config.num_patches();
        if let Some(key_blocks) = self.key_blocks.filter(|c| !tokens.is_multiple_of(*c)) {
            let divisors: Vec<String> = (1..=MAX_KEY_BLOCKS)
                .filter(|c| tokens.is_multiple_of(*c))
                .map(|c| c.to_string())
                .collect();
            bail!(
                "--key-blocks {key_blocks}: the model's {tokens} tokens are not a multiple of it (counts that divide them: {})",
                divisors.join(", ")
            );
        }
        Ok(RunSpec {
            batch,
            layers,
            head: model.head && !self.no_head,
            fp8,
            k_parts: self.k_parts.as_deref().and_then(EncoderKParts::parse),
            key_blocks: self.key_blocks,
            values_transposed: self.values_transposed,
        })
    }

    fn options(&self, machine: &MachineDescription) -> Result<PlanOptions> {
        let mut options = PlanOptions::for_target(&tessera::target::target_of(machine));
        if let Some(b) = self.beam {
            if b == 0 || b > 256 {
                bail!("--beam {b}: expected 1..=256");
            }
            options.beam = b;
        }
        if let Some(g) = self.grids {
            if g == 0 || g > 64 {
                bail!("--grids {g}: expected 1..=64");
            }
            options.grids_per_product = g;
        }
        options.limits.max_expansions = self.max_expansions;
        options.sram_saving = self.sram_saving;
        options.layer_loop = !self.unroll;
        // Developer diagnostics, on standard error: stage timings (`TESSERA_TIMING`), the beam
        // after each op (`TESSERA_PLAN_DEBUG`), one op's priced strategies (`TESSERA_PLAN_OP`).
        let op = std::env::var("TESSERA_PLAN_OP").ok();
        let timing = std::env::var_os("TESSERA_TIMING").is_some();
        let beam = std::env::var_os("TESSERA_PLAN_DEBUG").is_some();
        if timing || beam || op.is_some() {
            // With stage timings, each line says how much memory the process holds then.
            let mut trace = tessera_codegen::trace::Trace::to(move |line| {
                match timing
                    .then(tessera::pipeline::resident_memory_bytes)
                    .flatten()
                {
                    Some(bytes) => eprintln!("{line} [resident {} MiB]", bytes >> 20),
                    None => eprintln!("{line}"),
                }
            });
            (trace.timing, trace.beam, trace.op) = (timing, beam, op);
            options.trace = trace;
        }
        for f in &self.force {
            let (op, strategy) = f
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--force `{f}`: expected OP=STRATEGY"))?;
            options
                .force
                .push((op.trim().to_string(), strategy.trim().to_string()));
        }
        Ok(options)
    }

    fn default_batch(&self) -> usize {
        self.batch
            .unwrap_or(if self.model.is_some() { 1 } else { 2 })
    }
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// `pixel_values` as the Hugging Face image processor makes them: float32 N×C×S×S .npy.
    #[arg(long, conflicts_with = "image")]
    pixels: Option<PathBuf>,
    /// Image files (PNG/JPEG), preprocessed as SiglipImageProcessor does; several make a batch.
    #[arg(long, num_args = 1..)]
    image: Vec<PathBuf>,
    /// Write last_hidden_state (float32 .npy) here; pooler_output goes beside it as
    /// `STEM.pooler_output.npy`.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Write the run's figures as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write profile.html and trace.json here.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// Host threads for the whole command — planning, simulation and both references
    /// (default: all cores). Results and cycles do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Tiles whose supersteps and kernel spans go into trace.json: `FIRST-LAST` or `all`
    /// (every tile of a full chip makes tens of megabytes, and with `--trace-detail full`
    /// hundreds).
    #[arg(long, default_value = "0-63")]
    trace_tiles: String,
    /// Kernel spans in trace.json: `coarse` (per tile, one span per kernel and superstep phase
    /// with its call count and busy cycles), `full` (every call on its worker's track) or
    /// `supersteps` (none).
    #[arg(long, default_value = "coarse", value_parser = super::trace_detail)]
    trace_detail: KernelSpans,
}

#[derive(Args)]
pub struct CompileArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Write the image here.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write the graph, the distributed program, the plan report and tile 0's supervisor program here.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// With `--dump`: also write these tiles' kernel calls per step (`tileN.calls.txt`;
    /// repeatable), e.g. a tile the profile names as a superstep's busiest.
    #[arg(long, requires = "dump")]
    dump_tile: Vec<u32>,
}

fn load_pixels(args: &RunArgs, model: &Model) -> Result<PixelValues> {
    if let Some(path) = &args.pixels {
        let array = NpyArray::read(path)
            .with_context(|| format!("reading pixel_values from {}", path.display()))?;
        if array.dtype != tessera::npy::DType::Float32 {
            bail!(
                "{}: pixel_values must be float32, the file holds {}",
                path.display(),
                array.dtype
            );
        }
        let data = array.to_f32_vec()?;
        let pixels =
            PixelValues::new(&array.shape, data).with_context(|| format!("{}", path.display()))?;
        pixels
            .validate(&model.config)
            .with_context(|| format!("{}", path.display()))?;
        return Ok(pixels);
    }
    if !args.image.is_empty() {
        return Ok(tessera_models::preprocess::load_images(
            &args.image,
            &model.config,
        )?);
    }
    Ok(synthetic_pixels(
        &model.config,
        args.model.default_batch(),
        args.model.seed ^ 0xA5,
    ))
}

fn header(model: &Model, spec: &RunSpec, machine: &MachineDescription) {
    let c = &model.config;
    println!(
        "model {}: SigLIP vision tower, {}x{} pixels in patches of {} ({} tokens), hidden {}, MLP {}, {} heads, {} of {} layers, head: {}",
        model.source,
        c.image_size,
        c.image_size,
        c.patch_size,
        c.num_patches(),
        c.hidden_size,
        c.intermediate_size,
        c.num_attention_heads,
        spec.layers,
        model.layers,
        if spec.head { "yes" } else { "no" }
    );
    println!(
        "batch {}, {} on {} ({} tiles)",
        spec.batch,
        if spec.fp8 {
            "FP8 GEMMs (F143 activations at scale -4)"
        } else {
            "f16 GEMMs"
        },
        machine.name,
        machine.tiles
    );
}

fn compile_with_progress(
    args: &ModelArgs,
    model: &Model,
    spec: &RunSpec,
    machine: &MachineDescription,
) -> Result<(CompiledGraph, f64)> {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} compiling: {msg} ({elapsed})")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let progress = |stage: &str| bar.set_message(stage.to_string());
    let started = Instant::now();
    let mut options = args.options(machine)?;
    options.softmax_part_panels = args.softmax_panels.unwrap_or(true);
    options.products_read_rows = args.rows.unwrap_or(spec.batch < 4);
    let compiled = compile_tower(machine, model, spec, &options, Some(&progress));
    bar.finish_and_clear();
    let (compiled, form) = compiled?;
    match form {
        TowerForm::Default => {}
        TowerForm::PaddedHeads => println!(
            "form: the key blocks combined over the padded heads (no plan combining over the heads' own width fits)"
        ),
    }
    Ok((compiled, started.elapsed().as_secs_f64()))
}

fn print_plan(compiled: &CompiledGraph, seconds: f64) {
    let r = &compiled.report;
    println!(
        "plan: finalist {} of {} ({} expansions, {} pruned for memory); planned {:.2} s, lowered {:.2} s, emitted {:.2} s ({:.2} s in all)",
        compiled.finalist,
        r.finalists.len(),
        r.expansions,
        r.pruned_memory,
        compiled.times.plan,
        compiled.times.lower,
        compiled.times.emit,
        seconds
    );
}

fn write_outputs(path: &Path, outcome: &Outcome) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (name, shape, values) in &outcome.outputs {
        let target = if name == "last_hidden_state" {
            path.to_path_buf()
        } else {
            path.with_extension(format!("{name}.npy"))
        };
        NpyArray::from_f32(shape, values)?
            .write(&target)
            .with_context(|| format!("writing {}", target.display()))?;
        written.push(target);
    }
    Ok(written)
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    args.model.check_bounds()?;
    if args.image.len() > MAX_BATCH {
        bail!(
            "--image: {} files, expected at most {MAX_BATCH} images",
            args.image.len()
        );
    }
    if let Some(threads) = args.threads {
        tessera::pipeline::use_host_threads(threads)?;
    }
    let machine = MachineDescription::load(&args.model.machine)?;
    let mut model = args.model.model()?;
    let pixels = load_pixels(&args, &model)?;
    let spec = args.model.spec(&model, pixels.batch())?;
    header(&model, &spec, &machine);
    let (compiled, compile_seconds) = compile_with_progress(&args.model, &model, &spec, &machine)?;
    print_plan(&compiled, compile_seconds);
    // The image holds its own copies of the weights the graph reads; the host reference reads
    // only the checkpoint's tensors.
    tessera_models::siglip::remove_derived_weights(&model.config, &mut model.store);
    if std::env::var_os("TESSERA_TIMING").is_some() {
        if let Some(bytes) = tessera::pipeline::peak_memory_bytes() {
            eprintln!(
                "[memory] peak resident after compiling: {:.0} MiB (resident now {:.0} MiB)",
                bytes as f64 / (1 << 20) as f64,
                tessera::pipeline::resident_memory_bytes().unwrap_or(0) as f64 / (1 << 20) as f64
            );
        }
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} simulating: superstep {pos} {msg}")
            .expect("a valid template"),
    );
    let progress = |p: &tessera::sim::chip::RunProgress| {
        bar.set_position(p.supersteps);
        bar.set_message(format!("(cycle {})", p.cycle));
    };
    let outcome = run_and_check(
        &machine,
        &model,
        &spec,
        &compiled,
        &pixels,
        tessera::pipeline::RunRecording {
            threads: args.threads,
            progress: Some(&progress),
            // Kernel spans only feed the profile page and the trace.
            kernel_spans: args.profile.is_some(),
            fast_paths: true,
        },
    )?;
    bar.finish_and_clear();
    if std::env::var_os("TESSERA_TIMING").is_some() {
        for (stage, bytes) in &outcome.peak_memory {
            eprintln!(
                "[memory] peak resident after {stage}: {:.0} MiB",
                *bytes as f64 / (1 << 20) as f64
            );
        }
    }
    let summary = RunSummary::new(&machine, &compiled, &outcome, compile_seconds);
    print!("{}", summary.text());
    let steps = step_times(&outcome.report.profile, &compiled.lowered.program);
    print!("{}", op_table(&compiled, &steps, 12));
    if let Some(span) = encoder_span(&compiled, &steps) {
        println!("encoder span (first LayerNorm to the last residual): {span} cycles");
    }
    if let Some(path) = &args.output {
        for p in write_outputs(path, &outcome)? {
            println!("wrote {}", p.display());
        }
    }
    if let Some(path) = &args.report {
        std::fs::write(path, summary.json(&steps, &compiled))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("report: {}", path.display());
    }
    if let Some(dir) = &args.profile {
        let mut profile = outcome.report.profile.clone();
        tessera::report::name_steps(&mut profile, &compiled);
        let tiles = match args.trace_tiles.as_str() {
            "all" => None,
            range => {
                let (a, b) = range.split_once('-').ok_or_else(|| {
                    anyhow::anyhow!("--trace-tiles `{range}`: expected FIRST-LAST or all")
                })?;
                let a: u32 = a
                    .trim()
                    .parse()
                    .with_context(|| format!("--trace-tiles `{range}`: the first tile"))?;
                let b: u32 = b
                    .trim()
                    .parse()
                    .with_context(|| format!("--trace-tiles `{range}`: the last tile"))?;
                if a > b {
                    bail!("--trace-tiles `{range}`: the first tile is after the last");
                }
                Some(a..b.saturating_add(1))
            }
        };
        let options = tessera::sim::profile::trace::TraceOptions {
            tiles,
            kernels: args.trace_detail,
        };
        tessera::sim::profile::write_profile_with(dir, &profile, &options)
            .with_context(|| format!("writing the profile to {}", dir.display()))?;
        let size = |f: &str| std::fs::metadata(dir.join(f)).map(|m| m.len()).unwrap_or(0);
        println!(
            "profile: {}/profile.html ({:.1} MB) and trace.json ({:.1} MB, tiles {}, {} kernel spans)",
            dir.display(),
            size("profile.html") as f64 / 1e6,
            size("trace.json") as f64 / 1e6,
            args.trace_tiles,
            options.kernels.name()
        );
    }
    Ok(if outcome.bit_exact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub fn compile(args: CompileArgs) -> Result<ExitCode> {
    args.model.check_bounds()?;
    let machine = MachineDescription::load(&args.model.machine)?;
    let model = args.model.model()?;
    let spec = args.model.spec(&model, args.model.default_batch())?;
    header(&model, &spec, &machine);
    let (compiled, seconds) = compile_with_progress(&args.model, &model, &spec, &machine)?;
    print_plan(&compiled, seconds);
    print!("{}", compiled.report.text());
    println!("estimate: {} cycles", compiled.estimate.cycles);
    let report = &compiled.back.report;
    println!(
        "image: {} running tiles, {} distinct supervisor programs, kernel code {} bytes, {} exchange phases",
        report.running_tiles.len(),
        report.distinct_programs,
        report.kernel_code_bytes,
        report.phase_cycles.len()
    );
    if let Some(path) = &args.output {
        compiled.back.image.write(path)?;
        println!("image: {}", path.display());
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("plan.txt"), compiled.report.text())?;
        std::fs::write(
            dir.join("graph.txt"),
            tessera_codegen::graph::dump(&compiled.graph),
        )?;
        std::fs::write(
            dir.join("distributed.txt"),
            tessera_codegen::mid::dump::dump(&compiled.mid),
        )?;
        if let Some((tile, text)) = &report.sample_program {
            std::fs::write(dir.join(format!("tile{tile}.S")), text)?;
        }
        std::fs::write(dir.join("tile0.calls.txt"), calls_text(&compiled, 0))?;
        let tiles = compiled.lowered.program.tiles.len();
        for &tile in &args.dump_tile {
            if tile as usize >= tiles {
                bail!("--dump-tile {tile}: the program has tiles 0..{tiles}");
            }
            let name = format!("tile{tile}.calls.txt");
            std::fs::write(dir.join(name), calls_text(&compiled, tile as usize))?;
        }
        let (busiest, text) = buffers_text(&compiled);
        std::fs::write(dir.join(format!("tile{busiest}.buffers.txt")), text)?;
        println!("dumps: {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The buffers of the tile whose placed buffers reach highest, in address order: where each
/// is, how big, the steps it is live in and what it holds (how to see what fills a tile).
fn buffers_text(compiled: &CompiledGraph) -> (usize, String) {
    use std::fmt::Write;
    let program = &compiled.lowered.program;
    let addresses = &compiled.back.placement.addresses;
    let end_of = |t: usize| {
        program.tiles[t]
            .buffers
            .iter()
            .zip(&addresses[t])
            .map(|(b, &a)| a as u64 + b.bytes as u64)
            .max()
            .unwrap_or(0)
    };
    let busiest = (0..program.tiles.len().min(addresses.len()))
        .max_by_key(|&t| (end_of(t), std::cmp::Reverse(t)))
        .unwrap_or(0);
    let mut out = String::new();
    let Some(tile) = program.tiles.get(busiest) else {
        return (busiest, out);
    };
    let _ = writeln!(
        out,
        "tile {busiest}: buffers up to {:#x}\n   address      bytes   live steps  category               name",
        end_of(busiest)
    );
    let mut order: Vec<usize> = (0..tile.buffers.len()).collect();
    order.sort_by_key(|&i| (addresses[busiest][i], i));
    for i in order {
        let b = &tile.buffers[i];
        let _ = writeln!(
            out,
            "{:#10x} {:>10}  {:>5}..={:<5}  {:<22} {}",
            addresses[busiest][i],
            b.bytes,
            b.live.0,
            b.live.1,
            tessera_codegen::place::category_name(&b.category)
                .chars()
                .take(22)
                .collect::<String>(),
            b.name
        );
    }
    (busiest, out)
}

/// Every kernel call of `tile`, step by step, with its estimate.
fn calls_text(compiled: &CompiledGraph, tile: usize) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let program = &compiled.lowered.program;
    let Some(t) = program.tiles.get(tile) else {
        return out;
    };
    for (step, calls) in t.calls.iter().enumerate() {
        let label = match &program.steps[step] {
            tessera_codegen::tile::StepKind::Compute { label }
            | tessera_codegen::tile::StepKind::Exchange { label, .. } => label,
        };
        let _ = writeln!(out, "step {step}: {label}");
        for call in calls {
            let _ = writeln!(
                out,
                "  {:>8}  {:<20} {:<24} {}",
                call.spec.estimate_cycles,
                call.name(),
                call.label,
                call.spec.description
            );
        }
    }
    out
}

/// `tessera estimate`: the model's arguments and what to project.
#[derive(Args)]
pub struct EstimateArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Also schedule every exchange phase for the receive protocol Tessera emitted before the
    /// hardware's timed streams: the receiver's supervisor `put`s its mux and pointer at exact
    /// cycles, so a tile cannot send while one of its receive windows opens or closes. Prints
    /// that total and each exchange step's change, to show what the timed streams gain
    #[arg(long)]
    pub receive_puts: bool,
}

pub fn estimate(args: EstimateArgs) -> Result<ExitCode> {
    let EstimateArgs {
        model: args,
        receive_puts,
    } = args;
    args.check_bounds()?;
    let machine = MachineDescription::load(&args.machine)?;
    let model = args.model()?;
    let spec = args.spec(&model, args.default_batch())?;
    header(&model, &spec, &machine);
    let (compiled, seconds) = compile_with_progress(&args, &model, &spec, &machine)?;
    print_plan(&compiled, seconds);
    print!("{}", compiled.report.text());
    println!(
        "estimate: {} cycles ({:.1} us)",
        compiled.estimate.cycles,
        machine.cycles_to_seconds(compiled.estimate.cycles) * 1e6
    );
    for (label, cycles) in &compiled.estimate.steps {
        println!("  {cycles:>9}  {label}");
    }
    if receive_puts {
        print_receive_projection(&compiled, &machine)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--receive-puts`: the estimate with every exchange phase scheduled for supervisor `put`s, and
/// the exchange steps that change.
fn print_receive_projection(compiled: &CompiledGraph, machine: &MachineDescription) -> Result<()> {
    use tessera_codegen::estimate::{estimate, projected_phase_cycles};
    use tessera_codegen::exchange::schedule::ReceiveControls;
    let target = tessera::target::target_of(machine);
    let program = &compiled.lowered.program;
    let phases = projected_phase_cycles(&target, program, ReceiveControls::SupervisorPuts)
        .context("projecting the exchange phases")?;
    let projected = estimate(&target, program, &phases);
    println!(
        "with supervisor puts for the receive controls (the protocol before timed streams): {} cycles ({:+})",
        projected.cycles,
        projected.cycles as i64 - compiled.estimate.cycles as i64
    );
    for ((label, now), (_, then)) in compiled.estimate.steps.iter().zip(&projected.steps) {
        if now != then {
            println!("  {now:>9} -> {then:>9}  {label}");
        }
    }
    Ok(())
}
