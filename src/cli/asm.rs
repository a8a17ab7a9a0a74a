//! `tessera asm`: assemble and run a kernel or program on one tile, build an object, disassemble.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tessera::isa::asm::object::Object;
use tessera::isa::asm::{assemble_with_warnings, LayoutOptions};
use tessera::npy::{DType, NpyArray};
use tessera::sim::MachineDescription;
use tessera::tile_program::{parse_u32, run_program, OutputSpec, RunRequest};

#[derive(Subcommand)]
pub enum AsmCommand {
    /// Assemble FILE.S..., load inputs at symbols, run on one tile, write outputs, print cycles.
    Run(RunArgs),
    /// Assemble FILE.S... into an object file (sections + symbols).
    Build(BuildArgs),
    /// Disassemble an object file or an assembly file (assembled first).
    Disasm { file: PathBuf },
    /// Build a multi-tile image: one assembly file (or several, comma-separated) per tile group.
    Image(ImageArgs),
}

#[derive(Args)]
pub struct ImageArgs {
    /// Machine: `ipu21`, `small`, or a .ron path.
    #[arg(long, default_value = "ipu21")]
    machine: String,
    /// RANGE=FILE.S[,FILE.S...]: assemble the files and load them on the tiles of RANGE
    /// (`all`, `N`, `A-B`, or a comma-separated list), e.g. `--tiles 0-15=a.S --tiles 16-1471=b.S`.
    #[arg(long = "tiles", value_name = "RANGE=FILE.S", required = true)]
    groups: Vec<String>,
    /// Supervisor entry symbol (on every tile).
    #[arg(long)]
    entry: String,
    /// Symbol whose address becomes `$mvertex_base`.
    #[arg(long)]
    vertex: Option<String>,
    /// NAME=SYMBOL:DTYPE:COUNT: an input of COUNT elements at SYMBOL on every tile defining it,
    /// concatenated in tile order (shape [tiles, COUNT]).
    #[arg(long = "host-input", value_name = "NAME=SYMBOL:DTYPE:COUNT")]
    host_inputs: Vec<String>,
    /// NAME=SYMBOL:DTYPE:COUNT: an output, as for --host-input.
    #[arg(long = "host-output", value_name = "NAME=SYMBOL:DTYPE:COUNT")]
    host_outputs: Vec<String>,
    /// Scratch bytes per worker (`$mworker_base`) on every tile; 0 for none.
    #[arg(long, default_value_t = tessera::tile_program::WORKER_SCRATCH_BYTES)]
    worker_scratch: u32,
    /// Output image file.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Args)]
pub struct RunArgs {
    /// Assembly sources.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Machine: `ipu21`, `small`, or a .ron path.
    #[arg(long, default_value = "ipu21")]
    machine: String,
    /// Entry symbol.
    #[arg(long)]
    entry: String,
    /// Run the entry as worker 0 (ends at its exit) instead of as the supervisor (ends at `br $m10`).
    #[arg(long)]
    worker: bool,
    /// Symbol whose address becomes `$mvertex_base`.
    #[arg(long)]
    vertex: Option<String>,
    /// SYMBOL=FILE.npy: write the array's bytes at the symbol's address before the run.
    #[arg(long = "input", value_name = "SYMBOL=FILE.npy")]
    inputs: Vec<String>,
    /// SYMBOL[+OFFSET]=VALUE: write a 32-bit word before the run (e.g. a vertex field).
    #[arg(long = "set", value_name = "SYMBOL=VALUE")]
    words: Vec<String>,
    /// SYMBOL=FILE.npy:DTYPE:COUNT: read COUNT elements of DTYPE at the symbol after the run.
    #[arg(long = "output", value_name = "SYMBOL=FILE.npy:DTYPE:COUNT")]
    outputs: Vec<String>,
    /// Stop with an error after this many cycles.
    #[arg(long, default_value_t = 100_000_000)]
    max_cycles: u64,
}

#[derive(Args)]
pub struct BuildArgs {
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output object file.
    #[arg(short, long)]
    output: PathBuf,
    /// Also print a listing.
    #[arg(long)]
    listing: bool,
}

pub fn run(command: AsmCommand) -> Result<ExitCode> {
    match command {
        AsmCommand::Run(args) => run_command(args),
        AsmCommand::Build(args) => build_command(args),
        AsmCommand::Disasm { file } => disasm_command(&file),
        AsmCommand::Image(args) => image_command(args),
    }
}

/// Assembles files with the CLI's layout policy: code and data from the SRAM base; sections
/// whose name contains `interleaved` from the interleaved region.
pub fn assemble_files(files: &[PathBuf], machine: &MachineDescription) -> Result<Object> {
    let mut sources = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        sources.push((file.display().to_string(), text));
    }
    let options = layout_for(machine, &sources);
    let (object, warnings) = assemble_with_warnings(&sources, &options);
    for warning in &warnings {
        eprintln!("{warning}");
    }
    object.map_err(|errors| anyhow!("{errors}"))
}

pub fn layout_for(machine: &MachineDescription, sources: &[(String, String)]) -> LayoutOptions {
    let mut options = LayoutOptions {
        base: machine.sram.base,
        ..LayoutOptions::default()
    };
    if let Some(interleaved) = machine.sram.regions.iter().find(|r| r.interleave > 1) {
        let mut next = interleaved.start;
        let mut seen = Vec::new();
        for (_, text) in sources {
            for line in text.lines() {
                let line = line.trim();
                if let Some(rest) = line.strip_prefix(".section") {
                    let name = rest
                        .trim()
                        .split(',')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    if name.contains("interleaved") && !seen.contains(&name) {
                        seen.push(name.clone());
                        options.placements.push((name, next));
                        next += 0; // sections after the first are placed by the assembler if unpinned
                    }
                }
            }
        }
        if seen.len() > 1 {
            // Pin only the first; the others follow it in order of appearance.
            options.placements.truncate(1);
        }
    }
    options
}

fn split_assignment(text: &str) -> Result<(&str, &str)> {
    text.split_once('=')
        .ok_or_else(|| anyhow!("`{text}` should look like NAME=VALUE"))
}

fn run_command(args: RunArgs) -> Result<ExitCode> {
    let machine = MachineDescription::load(&args.machine)?;
    let object = assemble_files(&args.files, &machine)?;
    let mut inputs = Vec::new();
    for spec in &args.inputs {
        let (symbol, path) = split_assignment(spec)?;
        let array = NpyArray::read(std::path::Path::new(path))?;
        inputs.push((symbol.to_string(), array));
    }
    let mut words = Vec::new();
    for spec in &args.words {
        let (symbol, value) = split_assignment(spec)?;
        words.push((symbol.to_string(), parse_u32(value)?));
    }
    let mut outputs = Vec::new();
    let mut output_paths = Vec::new();
    for spec in &args.outputs {
        let (symbol, rest) = split_assignment(spec)?;
        let mut parts = rest.rsplitn(3, ':');
        let (Some(count), Some(dtype), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            bail!("`{spec}` should look like SYMBOL=FILE.npy:DTYPE:COUNT");
        };
        let dtype = DType::from_name(dtype).ok_or_else(|| anyhow!("unknown dtype `{dtype}` (float16, float32, uint8, int8, uint16, int16, uint32, int32)"))?;
        let count: usize = count
            .parse()
            .with_context(|| format!("count `{count}` in `{spec}`"))?;
        outputs.push(OutputSpec {
            symbol: symbol.to_string(),
            dtype,
            count,
        });
        output_paths.push(PathBuf::from(path));
    }
    let request = RunRequest {
        entry: args.entry,
        worker: args.worker,
        vertex: args.vertex,
        inputs,
        words,
        outputs,
        max_cycles: args.max_cycles,
    };
    let started = Instant::now();
    let result = run_program(&machine, &object, &request)?;
    let elapsed = started.elapsed();
    for (array, path) in result.outputs.iter().zip(&output_paths) {
        array.write(path)?;
    }
    let bundles = result.tile.counters.bundles;
    println!("cycles: {}", result.cycles);
    println!(
        "bundles issued: {bundles} (supervisor {}, workers {})",
        result.tile.counters.supervisor_bundles, result.tile.counters.worker_bundles
    );
    println!(
        "time at {:.2} GHz: {:.3} us; host: {:.1} ms ({:.1} M bundles/s)",
        machine.clock_hz as f64 / 1e9,
        machine.cycles_to_seconds(result.cycles) * 1e6,
        elapsed.as_secs_f64() * 1e3,
        bundles as f64 / elapsed.as_secs_f64().max(1e-9) / 1e6
    );
    Ok(ExitCode::SUCCESS)
}

fn build_command(args: BuildArgs) -> Result<ExitCode> {
    let machine = MachineDescription::builtin("ipu21")?;
    let object = assemble_files(&args.files, &machine)?;
    let bytes = object.to_bytes();
    std::fs::write(&args.output, bytes)
        .with_context(|| format!("writing {}", args.output.display()))?;
    if args.listing {
        print_disassembly(&object);
    }
    println!(
        "wrote {} ({} sections, {} symbols)",
        args.output.display(),
        object.sections.len(),
        object.symbols.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn disasm_command(file: &std::path::Path) -> Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let object = match Object::from_bytes(&bytes) {
        Ok(object) => object,
        // Not an object: assembly source, if it is text at all.
        Err(object_error) => {
            if std::str::from_utf8(&bytes).is_err() {
                bail!(
                    "{}: neither a Tessera object file ({object_error}) nor assembly source (not UTF-8 text)",
                    file.display()
                );
            }
            let machine = MachineDescription::builtin("ipu21")?;
            assemble_files(&[file.to_path_buf()], &machine)?
        }
    };
    print_disassembly(&object);
    Ok(ExitCode::SUCCESS)
}

/// Prints the disassembly; stops quietly when stdout closes (e.g. piped into `head`).
fn print_disassembly(object: &Object) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = (|| -> std::io::Result<()> {
        for section in &object.sections {
            writeln!(
                out,
                "section {} at {:#x} ({} bytes{})",
                section.name,
                section.address,
                section.bytes.len(),
                if section.has_code { ", code" } else { "" }
            )?;
            if !section.has_code {
                continue;
            }
            for line in tessera::isa::asm::disasm::disassemble(
                &section.bytes,
                section.address,
                Some(object),
            ) {
                if let Some(label) = &line.label {
                    writeln!(out, "{label}:")?;
                }
                let words: Vec<String> = line.words.iter().map(|w| format!("{w:08x}")).collect();
                writeln!(
                    out,
                    "  {:#07x}  {:<18} {}",
                    line.address,
                    words.join(" "),
                    line.text
                )?;
            }
        }
        out.flush()
    })();
}

fn image_command(args: ImageArgs) -> Result<ExitCode> {
    use tessera::chip_program::{build_image, parse_tiles, ImageRequest, SymbolTensor};
    use tessera::isa::image::HostDirection;
    let machine = MachineDescription::load(&args.machine)?;
    let mut groups = Vec::new();
    for spec in &args.groups {
        let (range, files) = split_assignment(spec)?;
        let tiles = parse_tiles(range, machine.tiles)?;
        let files: Vec<PathBuf> = files.split(',').map(|f| PathBuf::from(f.trim())).collect();
        let object = assemble_files(&files, &machine)?;
        groups.push((tiles, object));
    }
    let mut tensors = Vec::new();
    for spec in &args.host_inputs {
        tensors.push(SymbolTensor::parse(spec, HostDirection::Input)?);
    }
    for spec in &args.host_outputs {
        tensors.push(SymbolTensor::parse(spec, HostDirection::Output)?);
    }
    let request = ImageRequest {
        entry: args.entry,
        vertex: args.vertex,
        tensors,
        worker_scratch: args.worker_scratch,
    };
    let image = build_image(&machine, &groups, &request)?;
    image.write(&args.output)?;
    println!(
        "wrote {} for {}: {} tiles, {} distinct blobs, {} KiB to load, {} host tensors",
        args.output.display(),
        image.machine,
        image.tiles.len(),
        image.blobs.len(),
        image.load_bytes() / 1024,
        image.host_tensors.len()
    );
    Ok(ExitCode::SUCCESS)
}
