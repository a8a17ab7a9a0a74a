//! Command-line parsing and dispatch; each subcommand lives in its own module.

mod asm;
mod check;
mod checkpoint;
mod demo;
mod isa_doc;
mod model;
mod sim;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "tessera",
    version,
    about = "Run and tune vision transformers on a simulated ipu21-class many-tile processor"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The main job: a SigLIP vision tower (a checkpoint, or the built-in model with seeded
    /// weights) compiled for every tile and simulated; activations, error, cycles, SRAM, a profile.
    Run(model::RunArgs),
    /// Plan and emit the image of a model, with the plan report.
    Compile(model::CompileArgs),
    /// Compile only and print the estimated cycles per step.
    Estimate(model::EstimateArgs),
    /// Model files: `model make` writes a seeded checkpoint in transformers' layout.
    #[command(subcommand)]
    Model(checkpoint::ModelCommand),
    /// The one-tile FP8 cast demo: every f16 bit pattern through an assembly kernel.
    Demo(demo::RunArgs),
    /// Assemble, run, build and disassemble tile programs.
    #[command(subcommand)]
    Asm(asm::AsmCommand),
    /// Checks: `check kernels` runs the bitwise kernel checker.
    #[command(subcommand)]
    Check(check::CheckCommand),
    /// Run program images on a whole simulated chip.
    #[command(subcommand)]
    Sim(sim::SimCommand),
    /// The generated ISA reference.
    #[command(subcommand)]
    Isa(isa_doc::IsaCommand),
    /// Show a machine description (built-in name or RON file).
    Machine {
        /// `ipu21`, `small`, or a path to a .ron file.
        #[arg(default_value = "ipu21")]
        machine: String,
    },
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => model::run(args),
        Command::Compile(args) => model::compile(args),
        Command::Estimate(args) => model::estimate(args),
        Command::Model(command) => checkpoint::run(command),
        Command::Demo(args) => demo::run(args),
        Command::Asm(command) => asm::run(command),
        Command::Isa(command) => isa_doc::run(command),
        Command::Sim(command) => sim::run(command),
        Command::Check(command) => check::run(command),
        Command::Machine { machine } => show_machine(&machine),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", error_chain(&error));
            ExitCode::FAILURE
        }
    }
}

fn show_machine(name: &str) -> anyhow::Result<ExitCode> {
    let machine = tessera::sim::MachineDescription::load(name)?;
    println!("{machine}");
    Ok(ExitCode::SUCCESS)
}

/// The error and its causes, skipping a cause whose text the previous message already contains
/// (many error types print their source in their own message).
/// `--trace-detail`: how kernel spans go into trace.json.
fn trace_detail(text: &str) -> Result<tessera::sim::profile::trace::KernelSpans, String> {
    use tessera::sim::profile::trace::KernelSpans;
    KernelSpans::from_name(text)
        .ok_or_else(|| format!("expected one of {}", KernelSpans::NAMES.join(", ")))
}

fn error_chain(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if !text.contains(&message) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&message);
        }
    }
    text
}
