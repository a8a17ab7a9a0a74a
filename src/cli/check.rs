//! `tessera check kernels`: the bitwise kernel checker; exits non-zero on any mismatch.

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tessera::check::{check_kernels, CheckOptions};
use tessera::sim::MachineDescription;

#[derive(Subcommand)]
pub enum CheckCommand {
    /// Run every kernel case on a simulated tile and compare every output bit with its reference.
    Kernels(KernelArgs),
}

#[derive(Args)]
pub struct KernelArgs {
    /// Only kernels whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Seed of the random cases.
    #[arg(long, default_value_t = 0x7e55e7a)]
    seed: u64,
    /// At most this many default cases per kernel.
    #[arg(long)]
    cases: Option<usize>,
    /// Random cases per kernel (generated from --seed).
    #[arg(long, default_value_t = 0)]
    random: usize,
    /// Write the full report as JSON.
    #[arg(long)]
    report: Option<PathBuf>,
    #[arg(long, default_value = "ipu21")]
    machine: String,
    /// Print every case, not only failures.
    #[arg(long)]
    verbose: bool,
}

pub fn run(command: CheckCommand) -> Result<ExitCode> {
    let CheckCommand::Kernels(args) = command;
    let machine = MachineDescription::load(&args.machine)?;
    let options = CheckOptions {
        filter: args.filter,
        cases_per_kernel: args.cases,
        random_cases: args.random,
        seed: args.seed,
        ..CheckOptions::default()
    };
    let started = Instant::now();
    let kernels = tessera::kernels::all_kernels();
    let report = check_kernels(&machine, &options, &kernels)?;
    if args.random > 0 {
        println!(
            "random cases: {} per kernel from seed {:#x} (rerun with --seed {:#x})",
            args.random, args.seed, args.seed
        );
    }
    if args.verbose {
        for case in &report.cases {
            println!(
                "{} {:<24} {:<48} cycles {:>9} estimate {:>9}",
                if case.passed { "ok  " } else { "FAIL" },
                case.kernel,
                case.case,
                case.cycles.unwrap_or(0),
                case.estimate
            );
        }
    }
    for failure in report.failures() {
        println!(
            "FAIL {} [{}]: {}",
            failure.kernel,
            failure.case,
            failure.failure.as_deref().unwrap_or("")
        );
    }
    print!("{}", report.table());
    println!("checked in {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.report {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if report.passed() == report.total() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
