//! Kernel code: every kernel the program calls, assembled once for the whole chip.
//!
//! Each kernel is its own object (kernel sources share helper code with global symbols, e.g.
//! the LayerNorm statistics, so they cannot be one assembly unit), packed from the SRAM base in
//! library order at 8-byte boundaries: the same address on every tile. The image stores each
//! object's bytes once; a running tile loads the kernels it calls, and the range of each other
//! kernel is a `padding` reservation on it (no load time for code it never runs).

use super::EmitError;
use crate::target::Target;
use crate::tile::Program;
use std::collections::{BTreeMap, HashMap};
use tessera_isa::asm::object::Object;
use tessera_isa::asm::{assemble, LayoutOptions};
use tessera_kernels::table::KernelId;
use tessera_kernels::{EntryKind, Kernel};

/// The assembled kernels.
pub(super) struct KernelCode {
    /// Kernel, its object, and the address range the object spans.
    pub objects: Vec<(KernelId, Object, (u32, u32))>,
    /// Kernel → (entry address, entry kind).
    pub entries: HashMap<KernelId, (u32, EntryKind)>,
    /// One past the last code byte (the SRAM base when no kernel is used).
    pub end: u32,
}

impl KernelCode {
    pub fn entry(&self, kernel: KernelId) -> Option<(u32, EntryKind)> {
        self.entries.get(&kernel).copied()
    }
}

/// Assembles every kernel a call of `program` uses.
pub(super) fn assemble_used(target: &Target, program: &Program) -> Result<KernelCode, EmitError> {
    // Every kernel some call uses (the table has a row for every KernelId).
    let mut used: BTreeMap<KernelId, (u32, usize)> = BTreeMap::new();
    for tile in &program.tiles {
        for (step, calls) in tile.calls.iter().enumerate() {
            for call in calls {
                used.entry(call.kernel()).or_insert((tile.tile, step));
            }
        }
    }
    let mut code = KernelCode {
        objects: Vec::new(),
        entries: HashMap::new(),
        end: target.sram_base,
    };
    for &id in KernelId::ALL.iter().filter(|k| used.contains_key(k)) {
        let kernel = id.kernel();
        let base = code.end.div_ceil(8) * 8;
        let object = assemble_one(kernel, base)?;
        let entry = object
            .symbol(kernel.entry())
            .ok_or_else(|| EmitError::Assemble {
                what: format!("kernel {}", kernel.name()),
                message: format!("the source defines no entry symbol `{}`", kernel.entry()),
            })?;
        code.entries
            .insert(id, (entry.address, kernel.entry_kind()));
        let end = object
            .sections
            .iter()
            .map(|s| s.end())
            .max()
            .unwrap_or(base as u64);
        code.end = u32::try_from(end).unwrap_or(u32::MAX).max(base);
        code.objects.push((id, object, (base, code.end)));
    }
    Ok(code)
}

fn assemble_one(kernel: &dyn Kernel, base: u32) -> Result<Object, EmitError> {
    let sources = [(format!("{}.S", kernel.name()), kernel.source())];
    assemble(&sources, &LayoutOptions::at(base)).map_err(|e| EmitError::Assemble {
        what: format!("kernel {}", kernel.name()),
        message: e.to_string(),
    })
}
