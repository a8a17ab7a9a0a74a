//! Pre-decoded code: every bundle of a tile's code ranges decoded once at load, so the hot loop
//! never decodes. Writes to code are refused by memory protection, which keeps this cache valid.
//!
//! Decoded ranges are reference-counted: a chip whose tiles load the same code blob decodes it
//! once and shares the result ([`CodeCache::insert_shared`]), so a 1472-tile chip holds one copy.

use std::sync::Arc;
use tessera_isa::inst::emit::{decode_bundle, DecodeError};
use tessera_isa::inst::{Access, Bundle, OperandKind};
use tessera_isa::semantics::PreparedBundle;
use tessera_isa::table::TimingClass;

/// One decoded bundle, prepared for execution, with the facts the scheduler needs.
#[derive(Clone, Copy, Debug)]
pub struct DecodedBundle {
    /// The bundle and its size, with its checks worked out (`tessera_isa::semantics::step_prepared`).
    pub prepared: PreparedBundle,
    /// MRF registers the bundle reads (bit per register), for the supervisor's load-use stall.
    pub reads_m: u16,
    /// MRF registers a load in this bundle writes (ready `load_use` cycles after the issue).
    pub load_writes_m: u16,
    /// MRF registers the bundle writes other than a load's destinations (ready at once, such
    /// as a load's post-incremented address register).
    pub writes_m: u16,
    /// The main instruction's timing class.
    pub timing: TimingClass,
    /// The aux instruction is of timing class `Divide` (`f32div`).
    pub divide: bool,
}

/// A decode outcome for one word address.
#[derive(Clone, Debug)]
pub enum CodeSlot {
    /// Not code (data, or outside every code range).
    NotCode,
    Bundle(DecodedBundle),
    Invalid(DecodeError),
}

/// Decoded words of one code range, one slot per word from the range start.
pub type DecodedRange = Arc<[CodeSlot]>;

/// A piece of one decoded range: `[start, end)` holds the range's slots from `first` on.
#[derive(Clone, Debug)]
struct CodePiece {
    start: u32,
    end: u32,
    first: usize,
    slots: DecodedRange,
}

/// Decoded bundles of a tile's code ranges. A later range shadows an earlier one where they
/// overlap (as re-decoding memory would).
///
/// The ranges are kept as sorted, disjoint pieces (what shadowing leaves visible of each), so a
/// fetch is a check of the piece the last fetch hit (code runs in straight lines and loops) and,
/// when the PC left it, a binary search: a tile with a hundred exchange programs fetches as fast
/// as one with a single code segment.
#[derive(Clone, Debug, Default)]
pub struct CodeCache {
    base: u32,
    /// Sorted by start, disjoint.
    pieces: Vec<CodePiece>,
    /// The piece of the last hit (an index into `pieces`, possibly stale).
    last: std::cell::Cell<usize>,
}

/// Decodes every word of `bytes` (the memory at some address) as the start of a bundle.
pub fn decode_words(bytes: &[u8]) -> DecodedRange {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (0..words.len())
        .map(|i| match decode_bundle(&words[i..]) {
            Ok((bundle, used)) => CodeSlot::Bundle(describe(bundle, used as u32 * 4)),
            Err(error) => CodeSlot::Invalid(error),
        })
        .collect()
}

impl CodeCache {
    /// An empty cache for SRAM starting at `base` (`_size` is kept for compatibility).
    pub fn new(base: u32, _size: u32) -> CodeCache {
        CodeCache {
            base,
            pieces: Vec::new(),
            last: std::cell::Cell::new(0),
        }
    }

    /// Decodes every bundle starting in `[start, start + bytes.len())`, where `bytes` is the memory there.
    pub fn decode_range(&mut self, start: u32, bytes: &[u8]) {
        self.insert_shared(start, decode_words(bytes));
    }

    /// Adds an already decoded range at `start` (from [`decode_words`] of the bytes there).
    pub fn insert_shared(&mut self, start: u32, slots: DecodedRange) {
        if start < self.base || slots.is_empty() {
            return;
        }
        let end = start.saturating_add((slots.len() as u32).saturating_mul(4));
        // What the new range leaves visible of the older pieces: the parts outside it.
        let mut pieces = Vec::with_capacity(self.pieces.len() + 2);
        for piece in self.pieces.drain(..) {
            if piece.end <= start || piece.start >= end {
                pieces.push(piece);
                continue;
            }
            if piece.start < start {
                pieces.push(CodePiece {
                    end: start,
                    ..piece.clone()
                });
            }
            if piece.end > end {
                pieces.push(CodePiece {
                    start: end,
                    first: piece.first + ((end - piece.start) / 4) as usize,
                    ..piece
                });
            }
        }
        pieces.push(CodePiece {
            start,
            end,
            first: 0,
            slots,
        });
        pieces.sort_by_key(|p| p.start);
        self.pieces = pieces;
        self.last.set(0);
    }

    #[inline]
    pub fn get(&self, pc: u32) -> &CodeSlot {
        static NOT_CODE: CodeSlot = CodeSlot::NotCode;
        if !pc.is_multiple_of(4) {
            return &NOT_CODE;
        }
        let hit = |piece: &CodePiece| pc >= piece.start && pc < piece.end;
        let index = match self.pieces.get(self.last.get()) {
            Some(piece) if hit(piece) => self.last.get(),
            _ => {
                let index = self.pieces.partition_point(|p| p.end <= pc);
                match self.pieces.get(index) {
                    Some(piece) if hit(piece) => {
                        self.last.set(index);
                        index
                    }
                    _ => return &NOT_CODE,
                }
            }
        };
        let piece = &self.pieces[index];
        piece
            .slots
            .get(piece.first + ((pc - piece.start) / 4) as usize)
            .unwrap_or(&NOT_CODE)
    }
}

fn describe(bundle: Bundle, size: u32) -> DecodedBundle {
    let mut reads_m = 0u16;
    let mut load_writes_m = 0u16;
    let mut writes_m = 0u16;
    let mut timing = TimingClass::Simple;
    let mut divide = false;
    for inst in [bundle.main, bundle.aux].into_iter().flatten() {
        let desc = inst.desc();
        if desc.pipe == tessera_isa::table::Pipe::Main {
            timing = desc.timing;
        }
        divide |= desc.timing == TimingClass::Divide;
        for (operand, &value) in desc.operands.iter().zip(inst.operands.iter()) {
            if operand.kind.register_file() != Some(tessera_isa::registers::RegisterFile::M) {
                continue;
            }
            let width = operand.kind.register_width() as u32;
            let mask = (((1u32 << width) - 1) << value) as u16;
            match operand.access {
                Access::Read | Access::ReadWrite => reads_m |= mask,
                Access::Write | Access::Constant => {}
            }
            let written = matches!(operand.access, Access::Write | Access::ReadWrite);
            let loaded = match operand.kind {
                // `ldd16*` writes its delta register with a loaded value.
                OperandKind::MRegDelta => true,
                OperandKind::MRegPostInc | OperandKind::MRegIncrement => false,
                OperandKind::MReg
                | OperandKind::AReg
                | OperandKind::MPair
                | OperandKind::APair
                | OperandKind::AQuad
                | OperandKind::MPairPostInc
                | OperandKind::ABroadcast
                | OperandKind::ABroadcastLo
                | OperandKind::ABroadcastHi
                | OperandKind::Unsigned
                | OperandKind::Signed
                | OperandKind::Target
                | OperandKind::LowerCsr
                | OperandKind::UpperCsr
                | OperandKind::WordAddress => matches!(operand.access, Access::Write),
            };
            if desc.timing == TimingClass::Load && loaded {
                load_writes_m |= mask;
            } else if written {
                writes_m |= mask;
            }
        }
    }
    DecodedBundle {
        prepared: PreparedBundle::new(bundle, size),
        reads_m,
        load_writes_m,
        writes_m: writes_m & !load_writes_m,
        timing,
        divide,
    }
}

impl DecodedBundle {
    pub fn bundle(&self) -> &Bundle {
        self.prepared.bundle()
    }

    /// Size in bytes.
    pub fn size(&self) -> u32 {
        self.prepared.size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` words of zeros, decoded (what the slots hold does not matter here: the test
    /// checks which range's slot a fetch returns, by address).
    fn range(count: usize) -> DecodedRange {
        decode_words(&vec![0u8; 4 * count])
    }

    /// Overlapping ranges: the later one shadows the earlier, whatever order the fetches come
    /// in (the last-hit piece must never answer for an address it does not cover).
    #[test]
    fn later_ranges_shadow_earlier_ones_and_fetches_follow_the_pc() {
        const BASE: u32 = 0x4C000;
        let (a, b, c, low) = (range(64), range(64), range(8), range(8));
        let mut cache = CodeCache::new(BASE, 0x1000);
        cache.insert_shared(BASE + 0x100, Arc::clone(&a)); // [0x100, 0x200)
        cache.insert_shared(BASE + 0x180, Arc::clone(&b)); // [0x180, 0x280)
        cache.insert_shared(BASE + 0x140, Arc::clone(&c)); // [0x140, 0x160)
        cache.insert_shared(BASE - 0x100, Arc::clone(&low)); // below SRAM: ignored
                                                             // The slot a fetch at `offset` must return: (range, its start), or none.
        let expected = |offset: u32| -> Option<(&DecodedRange, u32)> {
            // Most recently inserted first.
            if (0x140..0x160).contains(&offset) {
                Some((&c, 0x140))
            } else if (0x180..0x280).contains(&offset) {
                Some((&b, 0x180))
            } else if (0x100..0x200).contains(&offset) {
                Some((&a, 0x100))
            } else {
                None
            }
        };
        let offsets: Vec<u32> = (0..0x300).step_by(4).collect();
        // In order, backwards, and jumping about.
        let jumps = offsets.iter().map(|o| ((o * 37) % 0x300) & !3);
        for offset in offsets
            .iter()
            .copied()
            .chain(offsets.iter().rev().copied())
            .chain(jumps)
        {
            let got = cache.get(BASE + offset);
            match expected(offset) {
                Some((slots, start)) => assert!(
                    std::ptr::eq(got, &slots[((offset - start) / 4) as usize]),
                    "{offset:#x}"
                ),
                None => assert!(matches!(got, CodeSlot::NotCode), "{offset:#x}"),
            }
        }
        assert!(
            matches!(cache.get(BASE + 0x102), CodeSlot::NotCode),
            "a misaligned pc is not code"
        );
    }
}
