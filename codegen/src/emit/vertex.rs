//! Vertex state: one record per kernel call (its case's vertex words, addresses resolved with the
//! placement), 8-byte aligned, in step and call order, from a base shared by every tile. A
//! program with a loop keeps its iteration counter in the first 8 bytes.

use super::EmitError;
use crate::tile::Program;
use tessera_kernels::VertexWord;

/// Where every call's vertex record goes.
pub(super) struct VertexLayout {
    pub base: u32,
    /// Per tile: the address of each call's record, in step and call order.
    records: Vec<Vec<u32>>,
    /// The largest tile's vertex bytes.
    max_bytes: u32,
}

impl VertexLayout {
    pub fn new(program: &Program, base: u32) -> VertexLayout {
        let first = base + if program.looped.is_some() { 8 } else { 0 };
        let mut max_bytes = first - base;
        let records = program
            .tiles
            .iter()
            .map(|tile| {
                let mut next = first;
                let records = tile
                    .calls
                    .iter()
                    .flatten()
                    .map(|call| {
                        let at = next;
                        next = (at + 4 * call.spec.vertex.len() as u32).div_ceil(8) * 8;
                        at
                    })
                    .collect();
                max_bytes = max_bytes.max(next - base);
                records
            })
            .collect();
        VertexLayout {
            base,
            records,
            max_bytes,
        }
    }

    /// The loop counter's word (meaningful only in a program with a loop).
    pub fn loop_counter(&self) -> u32 {
        self.base
    }

    /// One past the vertex area.
    pub fn end(&self) -> u32 {
        self.base + self.max_bytes
    }

    /// The record address of call number `index` (step and call order) of `tile`.
    pub fn record(&self, tile: u32, index: usize) -> u32 {
        self.records
            .get(tile as usize)
            .and_then(|r| r.get(index))
            .copied()
            .unwrap_or(self.base)
    }

    /// The vertex bytes of `tile`, from the base (empty when it makes no calls and the program
    /// has no loop).
    pub fn bytes(
        &self,
        program: &Program,
        tile: u32,
        addresses: &[u32],
    ) -> Result<Vec<u8>, EmitError> {
        let Some(tile_program) = program.tiles.get(tile as usize) else {
            return Ok(Vec::new());
        };
        let mut bytes = Vec::new();
        for (index, (step, call)) in tile_program.calls_by_step().enumerate() {
            let offset = (self.record(tile, index) - self.base) as usize;
            bytes.resize(offset, 0);
            for (w, word) in call.spec.vertex.iter().enumerate() {
                let value = match *word {
                    VertexWord::Value(v) => v,
                    VertexWord::Address { buffer, offset } => {
                        let fail = |reason: String| EmitError::Vertex {
                            tile,
                            step,
                            kernel: call.name().to_string(),
                            word: w,
                            reason,
                        };
                        let &(id, binding_offset) = call.bindings.get(buffer).ok_or_else(|| {
                            fail(format!(
                                "names case buffer {buffer}, the case has {}",
                                call.bindings.len()
                            ))
                        })?;
                        let address = addresses
                            .get(id.0 as usize)
                            .ok_or_else(|| fail(format!("buffer {} has no address", id.0)))?;
                        address.wrapping_add(binding_offset).wrapping_add(offset)
                    }
                };
                bytes.extend_from_slice(&value.to_le_bytes());
            }
        }
        if program.looped.is_some() && bytes.len() < 8 {
            // The loop counter's word, on every running tile.
            bytes.resize(8, 0);
        }
        Ok(bytes)
    }
}
