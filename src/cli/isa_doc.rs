//! `tessera isa doc`: write the generated ISA reference pages.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum IsaCommand {
    /// Write the reference pages (one per instruction family) into a directory.
    Doc {
        #[arg(long, default_value = "docs/isa")]
        out: PathBuf,
    },
}

pub fn run(command: IsaCommand) -> Result<ExitCode> {
    match command {
        IsaCommand::Doc { out } => {
            std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
            for (name, text) in tessera::isa::reference::pages() {
                let path = out.join(name);
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            println!("wrote the ISA reference to {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}
