//! `tessera demo`: the one-tile demo: the FP8 cast kernel (`kernels/asm/examples/f16_to_fp8.S`) converts
//! every f16 bit pattern on one simulated ipu21 tile, for both FP8 formats and three scales, and
//! the outputs are compared bit for bit with the numerics model.

use anyhow::{bail, Result};
use clap::Args;
use std::process::ExitCode;
use std::time::Instant;
use tessera::isa::asm::assemble;
use tessera::isa::numerics::fp8::{f16_to_fp8, Fp8Format};
use tessera::npy::{DType, NpyArray};
use tessera::sim::MachineDescription;
use tessera::tile_program::{run_program, OutputSpec, RunRequest};

/// The demo kernel, compiled into the binary so `tessera demo` works from any directory.
pub const FP8_CAST_KERNEL: &str = include_str!("../../kernels/asm/examples/f16_to_fp8.S");

#[derive(Args)]
pub struct RunArgs {
    /// Machine: `ipu21`, `small`, or a .ron path.
    #[arg(long, default_value = "ipu21")]
    machine: String,
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let machine = MachineDescription::load(&args.machine)?;
    println!("tessera demo: the one-tile FP8 cast kernel");
    println!(
        "machine {}: {} tiles at {:.2} GHz",
        machine.name,
        machine.tiles,
        machine.clock_hz as f64 / 1e9
    );
    println!("kernel kernels/asm/examples/f16_to_fp8.S on one tile, one worker, all 65,536 f16 patterns\n");
    let sources = vec![("f16_to_fp8.S".to_string(), FP8_CAST_KERNEL.to_string())];
    let options = tessera::isa::asm::LayoutOptions {
        base: machine.sram.base,
        ..Default::default()
    };
    let object = assemble(&sources, &options).map_err(|e| anyhow::anyhow!("{e}"))?;
    let patterns: Vec<u16> = (0..=u16::MAX).collect();
    let input = NpyArray::from_f16_bits(&[patterns.len()], &patterns)?;
    println!(
        "{:<6} {:>6} {:>10} {:>12} {:>10} {:>12}",
        "format", "scale", "cycles", "cycles/elem", "mismatch", "host ms"
    );
    let mut failures = 0;
    for (format, scale) in [
        (Fp8Format::F143, -4),
        (Fp8Format::F143, 0),
        (Fp8Format::F152, 4),
    ] {
        let request = RunRequest {
            entry: "f16_to_fp8".into(),
            worker: true,
            vertex: Some("f16_to_fp8_vertex".into()),
            inputs: vec![("f16_to_fp8_src".into(), input.clone())],
            words: vec![
                ("f16_to_fp8_vertex+8".into(), (patterns.len() / 4) as u32),
                ("f16_to_fp8_vertex+12".into(), format.format_bit()),
                ("f16_to_fp8_vertex+16".into(), scale as u32),
            ],
            outputs: vec![OutputSpec {
                symbol: "f16_to_fp8_dst".into(),
                dtype: DType::UInt8,
                count: patterns.len(),
            }],
            max_cycles: 100_000_000,
        };
        let started = Instant::now();
        let result = run_program(&machine, &object, &request)?;
        let host_ms = started.elapsed().as_secs_f64() * 1e3;
        let codes = &result.outputs[0].data;
        let mismatches = patterns
            .iter()
            .zip(codes)
            .filter(|(&h, &code)| f16_to_fp8(h, format, scale, false) != code)
            .count();
        failures += mismatches;
        println!(
            "{:<6} {:>6} {:>10} {:>12.2} {:>10} {:>12.1}",
            format.name(),
            scale,
            result.cycles,
            result.cycles as f64 / patterns.len() as f64,
            mismatches,
            host_ms
        );
    }
    if failures > 0 {
        bail!("{failures} outputs differ from the numerics model");
    }
    println!("\nall outputs bit-exact. Next: `tessera asm run FILE.S --entry SYMBOL ...` runs your own kernels.");
    Ok(ExitCode::SUCCESS)
}
