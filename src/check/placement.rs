//! Where a case's buffers go in tile memory: regions, element slots, alignment, and the guard
//! gaps around outputs.

use crate::kernels::{Case, Region, Role};
use crate::sim::MachineDescription;
use anyhow::{bail, Result};

/// Bytes of guard (canary) before and after every output buffer.
pub const GUARD_BYTES: u32 = 16;

/// Addresses chosen for one case.
#[derive(Clone, Debug)]
pub struct Placement {
    /// Address of each buffer, in case order.
    pub buffers: Vec<u32>,
    pub vertex: u32,
    /// Six worker scratch areas (`$WORKERn_BASE`).
    pub worker_scratch: u32,
}

/// Scratch bytes per worker.
pub const WORKER_SCRATCH_BYTES: u32 = 256;

struct Cursor {
    name: &'static str,
    next: u32,
    end: u32,
    segment: u32,
    last_slot: Option<Option<u8>>,
}

impl Cursor {
    fn take(&mut self, bytes: u32, align: u32, slot: Option<u8>, guard: u32) -> Result<u32> {
        if slot.is_some() && self.last_slot.is_some() && self.last_slot != Some(slot) {
            // A different element slot starts in a fresh memory element (pair).
            self.next = self.next.div_ceil(self.segment) * self.segment;
        }
        self.last_slot = Some(slot);
        let start = (self.next + guard).div_ceil(align) * align;
        let end = start + bytes + guard;
        if end > self.end {
            bail!("case does not fit: {bytes} bytes needed in the {} region at {start:#x}, which ends at {:#x}", self.name, self.end);
        }
        self.next = end;
        Ok(start)
    }
}

/// Places every buffer of `case` after `code_end`.
pub fn place(machine: &MachineDescription, case: &Case, code_end: u32) -> Result<Placement> {
    let standard = machine.sram.regions.iter().find(|r| r.interleave == 1);
    let interleaved = machine.sram.regions.iter().find(|r| r.interleave > 1);
    let (Some(standard), Some(interleaved)) = (standard, interleaved) else {
        bail!(
            "machine {} needs a standard and an interleaved region",
            machine.name
        );
    };
    let mut cursors = [
        Cursor {
            name: "standard",
            next: code_end.div_ceil(64) * 64,
            end: standard.start + standard.size,
            segment: standard.element_bytes * standard.interleave,
            last_slot: None,
        },
        Cursor {
            name: "interleaved",
            next: interleaved.start,
            end: interleaved.start + interleaved.size,
            segment: interleaved.element_bytes * interleaved.interleave,
            last_slot: None,
        },
    ];
    let mut addresses = Vec::with_capacity(case.buffers.len());
    for buffer in &case.buffers {
        let cursor = match buffer.region {
            Region::Standard => &mut cursors[0],
            Region::Interleaved => &mut cursors[1],
        };
        let guard = if buffer.role == Role::Output {
            GUARD_BYTES
        } else {
            0
        };
        addresses.push(cursor.take(
            buffer.len() as u32,
            buffer.align.max(8),
            buffer.element_slot,
            guard,
        )?);
    }
    let vertex = cursors[0].take(case.vertex.len() as u32 * 4, 8, None, 0)?;
    let worker_scratch = cursors[0].take(WORKER_SCRATCH_BYTES * 6, 16, None, 0)?;
    Ok(Placement {
        buffers: addresses,
        vertex,
        worker_scratch,
    })
}
