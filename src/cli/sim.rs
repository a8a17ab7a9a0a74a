//! `tessera sim`: run a program image on every tile of a simulated chip, with `.npy` inputs and
//! outputs, a progress bar per superstep, cycle counts, a memory summary, and optional profile
//! and memory-report files.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tessera::chip_program::{output_array, run_image};
use tessera::isa::image::{HostDirection, Image};
use tessera::npy::NpyArray;
use tessera::sim::profile::trace::{KernelSpans, TraceOptions};
use tessera::sim::profile::{report, write_profile_with};
use tessera::sim::{MachineDescription, RunOptions, RunProgress};

#[derive(Subcommand)]
pub enum SimCommand {
    /// Run IMAGE on all tiles: inputs before the run, outputs after it, cycles and SRAM use.
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// The image file (from `tessera asm image` or the compiler).
    image: PathBuf,
    /// Machine: `ipu21`, `small`, or a .ron path (default: the machine the image was built for).
    #[arg(long)]
    machine: Option<String>,
    /// NAME=FILE.npy: an input of the image.
    #[arg(long = "input", value_name = "NAME=FILE.npy")]
    inputs: Vec<String>,
    /// NAME=FILE.npy: write an output of the image after the run.
    #[arg(long = "output", value_name = "NAME=FILE.npy")]
    outputs: Vec<String>,
    /// Host threads (default: one per core). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Write profile.html and trace.json into DIR.
    #[arg(long, value_name = "DIR")]
    profile: Option<PathBuf>,
    /// Kernel spans in trace.json: `coarse` (per tile, one span per kernel and superstep phase
    /// with its call count and busy cycles), `full` (every call on its worker's track) or
    /// `supersteps` (none).
    #[arg(long, default_value = "coarse", value_parser = super::trace_detail)]
    trace_detail: KernelSpans,
    /// Stop with an error after this many cycles past start-up.
    #[arg(long, default_value_t = 1_000_000_000)]
    max_cycles: u64,
    /// Take the general path for every bundle: no worker-only issue loop, no AMP weight lanes
    /// kept between bundles. Slower; the results and cycles are the same (a check of that).
    #[arg(long)]
    no_fast_paths: bool,
    /// Write the per-tile SRAM report as JSON.
    #[arg(long, value_name = "FILE.json")]
    memory_report: Option<PathBuf>,
}

pub fn run(command: SimCommand) -> Result<ExitCode> {
    match command {
        SimCommand::Run(args) => run_command(args),
    }
}

fn split_assignment(text: &str) -> Result<(&str, &str)> {
    text.split_once('=')
        .ok_or_else(|| anyhow!("`{text}` should look like NAME=FILE.npy"))
}

fn run_command(args: RunArgs) -> Result<ExitCode> {
    let image = std::sync::Arc::new(Image::read(&args.image)?);
    let machine_name = args
        .machine
        .clone()
        .unwrap_or_else(|| image.machine.name.clone());
    let machine = MachineDescription::load(&machine_name)
        .with_context(|| format!("machine `{machine_name}`"))?;
    let mut inputs = Vec::new();
    for spec in &args.inputs {
        let (name, path) = split_assignment(spec)?;
        let array = NpyArray::read(std::path::Path::new(path))?;
        inputs.push((name.to_string(), array));
    }
    let mut outputs = Vec::new();
    for spec in &args.outputs {
        let (name, path) = split_assignment(spec)?;
        if !image
            .host_tensors_of(HostDirection::Output)
            .any(|t| t.name == name)
        {
            let known: Vec<&str> = image
                .host_tensors_of(HostDirection::Output)
                .map(|t| t.name.as_str())
                .collect();
            bail!(
                "the image has no output `{name}` (outputs: {})",
                known.join(", ")
            );
        }
        outputs.push((name.to_string(), PathBuf::from(path)));
    }
    println!(
        "image {}: {} tiles with code, {} KiB loaded, on {machine}",
        args.image.display(),
        image.running_tiles().count(),
        image.load_bytes() / 1024
    );

    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("loading");
    // With TESSERA_TIMING, each superstep also says the memory the process holds then.
    let timing = std::env::var_os("TESSERA_TIMING").is_some();
    let progress = |p: &RunProgress| {
        bar.set_message(format!("superstep {} at cycle {}", p.supersteps, p.cycle));
        if let Some(bytes) = timing
            .then(tessera::pipeline::resident_memory_bytes)
            .flatten()
        {
            bar.suspend(|| {
                eprintln!(
                    "[memory] superstep {} at cycle {}: resident {} MiB",
                    p.supersteps,
                    p.cycle,
                    bytes >> 20
                )
            });
        }
    };
    let options = RunOptions {
        threads: args.threads,
        max_cycles: args.max_cycles,
        progress: Some(&progress),
        // Kernel spans only feed the profile page and the trace.
        record_kernel_spans: args.profile.is_some(),
        fast_paths: !args.no_fast_paths,
    };
    let started = Instant::now();
    let result = run_image(&machine, &image, &inputs, &options);
    let elapsed = started.elapsed();
    bar.finish_and_clear();
    let report = result?;

    for (name, path) in &outputs {
        let bytes = report
            .output(name)
            .ok_or_else(|| anyhow!("the run produced no output `{name}`"))?;
        output_array(&image, name, bytes)?.write(path)?;
    }
    let seconds = |cycles: u64| machine.cycles_to_seconds(cycles) * 1e6;
    println!(
        "total cycles:   {:>12} ({:.3} us at {:.2} GHz)",
        report.total_cycles,
        seconds(report.total_cycles),
        machine.clock_hz as f64 / 1e9
    );
    println!(
        "start-up:       {:>12} ({:.3} us)",
        report.startup_cycles,
        seconds(report.startup_cycles)
    );
    println!(
        "cropped cycles: {:>12} ({:.3} us, start-up end to the last output write)",
        report.cropped_cycles,
        seconds(report.cropped_cycles)
    );
    println!("supersteps:     {:>12}", report.supersteps);
    let bundles: u64 = report.profile.bundles.iter().sum();
    let per_second = |count: u64| count as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6;
    println!(
        "host: {:.2} s, {:.1} M tile-cycles/s, {} bundles issued ({:.1} M/s), {} simulator rounds",
        elapsed.as_secs_f64(),
        per_second(report.tile_cycles),
        bundles,
        per_second(bundles),
        report.rounds
    );
    println!();
    print!("{}", report::memory_summary(&report.profile));
    if let Some(path) = &args.memory_report {
        std::fs::write(path, report::memory_report_json(&report.profile))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("memory report: {}", path.display());
    }
    if let Some(dir) = &args.profile {
        let trace = TraceOptions {
            tiles: None,
            kernels: args.trace_detail,
        };
        write_profile_with(dir, &report.profile, &trace)
            .with_context(|| format!("writing the profile into {}", dir.display()))?;
        println!("profile: {}", dir.join("profile.html").display());
    }
    Ok(ExitCode::SUCCESS)
}
