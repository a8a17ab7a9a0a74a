//! Decoded code. Writes to code are refused by memory protection, which keeps every decoded
//! bundle valid for the whole run.
//!
//! A range comes in one of two forms:
//! - **decoded at load**, every word's slot at once and reference-counted: a chip whose tiles
//!   load the same code blob (the kernels) decodes it once and shares the result
//!   ([`CodeCache::insert_shared`]), so the hot worker loops never decode;
//! - **decoded when fetched** ([`CodeCache::insert_raw`]): the range reads its bytes where they
//!   already are (the loaded image's blob, [`RawCode`]: no copy per tile) and a fetch decodes the bundle into a small direct-mapped table of
//!   recent slots ([`RECENT_SLOTS`] per tile). For code only one tile runs, mostly straight
//!   lines (its supervisor and exchange programs): eager slots for them were most of a chip's
//!   host memory after loading.
//!
//! Both give the same slot for every address ([`CodeCache::peek`] decodes without the table).

use std::fmt;
use std::sync::Arc;
use tessera_isa::image::{BlobId, Image};
use tessera_isa::inst::emit::{decode_bundle, DecodeError};
use tessera_isa::inst::{Access, Bundle};
use tessera_isa::semantics::PreparedBundle;
use tessera_isa::table::TimingClass;

/// One decoded bundle, prepared for execution, with the facts the scheduler needs.
#[derive(Clone, Copy, Debug)]
pub struct DecodedBundle {
    /// The bundle and its size, with its checks worked out (`tessera_isa::semantics::step_prepared`).
    pub prepared: PreparedBundle,
    /// MRF registers the bundle reads (bit per register), for the supervisor's result-use stall.
    pub reads_m: u16,
    /// MRF registers the bundle writes: a load's destination, an ALU result, a post-incremented
    /// address register (on the supervisor each is ready `result_use` cycles after the issue);
    /// not `$m14`/`$m15`, whose reads are constant.
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

/// The bytes of a range decoded when fetched, shared with whoever else holds them.
#[derive(Clone)]
pub enum RawCode {
    /// A blob of a loaded image (the image is shared, not copied).
    Blob(Arc<Image>, BlobId),
    /// Bytes of their own.
    Bytes(Arc<[u8]>),
}

impl RawCode {
    /// The code bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            RawCode::Blob(image, blob) => image.blob(*blob),
            RawCode::Bytes(bytes) => bytes,
        }
    }
}

impl fmt::Debug for RawCode {
    /// The length only: a blob's image is the whole program.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RawCode::Blob(_, blob) => write!(f, "Blob({blob:?}, {} bytes)", self.bytes().len()),
            RawCode::Bytes(bytes) => write!(f, "Bytes({} bytes)", bytes.len()),
        }
    }
}

/// What a piece holds for its words.
#[derive(Clone, Debug)]
enum PieceCode {
    /// A slot per word, decoded at load.
    Decoded(DecodedRange),
    /// The range's bytes, decoded word by word when fetched.
    Raw(RawCode),
}

impl PieceCode {
    fn words(&self) -> usize {
        match self {
            PieceCode::Decoded(slots) => slots.len(),
            PieceCode::Raw(code) => code.bytes().len() / 4,
        }
    }
}

/// A piece of one range: `[start, end)` holds the range's words from `first` on.
#[derive(Clone, Debug)]
struct CodePiece {
    start: u32,
    end: u32,
    first: usize,
    code: PieceCode,
}

/// Slots of the direct-mapped table of bundles decoded at fetch (per tile: 512 × 88 bytes).
pub const RECENT_SLOTS: usize = 512;

/// The slot of the word at `word` of `bytes` (which holds whole words), as [`decode_words`]
/// decodes it: a bundle may take the next word too.
fn decode_at(bytes: &[u8], word: usize) -> CodeSlot {
    let words: Vec<u32> = bytes
        .get(4 * word..)
        .unwrap_or_default()
        .chunks_exact(4)
        .take(2)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match decode_bundle(&words) {
        Ok((bundle, used)) => CodeSlot::Bundle(describe(bundle, used as u32 * 4)),
        Err(error) => CodeSlot::Invalid(error),
    }
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
    last: usize,
    /// Bundles of raw pieces decoded at fetch: slot `(pc / 4) % RECENT_SLOTS` holds the pc it
    /// was decoded for (`u32::MAX`: none) and its slot. Made at the first such fetch.
    recent: Vec<(u32, CodeSlot)>,
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
            last: 0,
            recent: Vec::new(),
        }
    }

    /// Decodes every bundle starting in `[start, start + bytes.len())`, where `bytes` is the memory there.
    pub fn decode_range(&mut self, start: u32, bytes: &[u8]) {
        self.insert_shared(start, decode_words(bytes));
    }

    /// Adds an already decoded range at `start` (from [`decode_words`] of the bytes there).
    pub fn insert_shared(&mut self, start: u32, slots: DecodedRange) {
        self.insert(start, PieceCode::Decoded(slots));
    }

    /// Adds a range at `start` decoded when fetched: `bytes` (whole words) is the memory there.
    pub fn insert_raw(&mut self, start: u32, code: RawCode) {
        self.insert(start, PieceCode::Raw(code));
    }

    fn insert(&mut self, start: u32, code: PieceCode) {
        if start < self.base || code.words() == 0 {
            return;
        }
        let end = start.saturating_add((code.words() as u32).saturating_mul(4));
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
            code,
        });
        pieces.sort_by_key(|p| p.start);
        self.pieces = pieces;
        self.last = 0;
        // A raw piece's earlier bundles may be shadowed now: forget every decoded one.
        self.recent.clear();
    }

    /// The piece holding `pc` (an index into `pieces`), trying the last hit's first.
    #[inline]
    fn piece_of(&self, pc: u32) -> Option<usize> {
        let hit = |piece: &CodePiece| pc >= piece.start && pc < piece.end;
        match self.pieces.get(self.last) {
            Some(piece) if hit(piece) => Some(self.last),
            _ => {
                let index = self.pieces.partition_point(|p| p.end <= pc);
                self.pieces.get(index).filter(|p| hit(p)).map(|_| index)
            }
        }
    }

    /// The slot of the bundle at `pc`.
    #[inline]
    pub fn get(&mut self, pc: u32) -> &CodeSlot {
        static NOT_CODE: CodeSlot = CodeSlot::NotCode;
        if !pc.is_multiple_of(4) {
            return &NOT_CODE;
        }
        let Some(index) = self.piece_of(pc) else {
            return &NOT_CODE;
        };
        self.last = index;
        let piece = &self.pieces[index];
        let word = piece.first + ((pc - piece.start) / 4) as usize;
        match &piece.code {
            PieceCode::Decoded(slots) => slots.get(word).unwrap_or(&NOT_CODE),
            PieceCode::Raw(code) => {
                if self.recent.is_empty() {
                    self.recent = vec![(u32::MAX, CodeSlot::NotCode); RECENT_SLOTS];
                }
                let entry = &mut self.recent[(pc / 4) as usize % RECENT_SLOTS];
                if entry.0 != pc {
                    *entry = (pc, decode_at(code.bytes(), word));
                }
                &entry.1
            }
        }
    }

    /// The slot of the bundle at `pc`, as [`CodeCache::get`] gives it, without touching the
    /// table of recent bundles (for messages about a tile).
    pub fn peek(&self, pc: u32) -> CodeSlot {
        if !pc.is_multiple_of(4) {
            return CodeSlot::NotCode;
        }
        let Some(piece) = self.piece_of(pc).map(|index| &self.pieces[index]) else {
            return CodeSlot::NotCode;
        };
        let word = piece.first + ((pc - piece.start) / 4) as usize;
        match &piece.code {
            PieceCode::Decoded(slots) => slots.get(word).cloned().unwrap_or(CodeSlot::NotCode),
            PieceCode::Raw(code) => decode_at(code.bytes(), word),
        }
    }
}

fn describe(bundle: Bundle, size: u32) -> DecodedBundle {
    let mut reads_m = 0u16;
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
            if matches!(operand.access, Access::Write | Access::ReadWrite) {
                writes_m |= mask;
            }
        }
    }
    // `$m14` reads 0 and `$m15` is `$mzero`: a write to either leaves nothing to wait for.
    let constant =
        (1u16 << tessera_isa::registers::M_RESERVED) | (1u16 << tessera_isa::registers::M_ZERO);
    DecodedBundle {
        prepared: PreparedBundle::new(bundle, size),
        reads_m,
        writes_m: writes_m & !constant,
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

    /// The same ranges inserted raw (decoded when fetched) and decoded at load give the same
    /// slot at every address, in any fetch order: across shadowed pieces, two-word bundles at a
    /// piece's edge, undecodable words, and addresses that share a slot of the recent table.
    #[test]
    fn ranges_decoded_when_fetched_match_ranges_decoded_at_load() {
        use tessera_isa::asm::{assemble, LayoutOptions};
        const BASE: u32 = 0x4C000;
        let object = assemble(
            &[(
                "code.S",
                "    .section .text, \"ax\", @progbits
    .align 8
f:
    setzi $m1, 0x1234
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4mul $a2:3, $a0:1, $a4:5 }
    add $m2, $m1, 3
    sendpicp 42, 0x50084, 1, 1600, 0, 0x15000
    brnzdec $m1, f
    exitz $mzero
",
            )],
            &LayoutOptions::default(),
        )
        .expect("assembles");
        let code = object.sections[0].bytes.clone();
        // Code, then words that decode to nothing.
        let mut bytes = code.clone();
        bytes.extend([0xff; 16]);
        let ranges: [(u32, Vec<u8>); 3] = [
            (0x100, bytes.clone()),
            (0x100 + 8, code.clone()),
            (0x100 + 4 * RECENT_SLOTS as u32, bytes.clone()),
        ];
        let mut decoded = CodeCache::new(BASE, 0x4000);
        let mut raw = CodeCache::new(BASE, 0x4000);
        for (offset, bytes) in &ranges {
            decoded.insert_shared(BASE + offset, decode_words(bytes));
            raw.insert_raw(BASE + offset, RawCode::Bytes(Arc::from(bytes.as_slice())));
        }
        let describe = |slot: &CodeSlot| format!("{slot:?}");
        let offsets: Vec<u32> = (0..0x100 + 4 * RECENT_SLOTS as u32 + 0x100)
            .step_by(4)
            .collect();
        let jumps = offsets.iter().map(|o| (o * 37) % offsets.len() as u32 * 4);
        for offset in offsets
            .iter()
            .copied()
            .chain(offsets.iter().rev().copied())
            .chain(jumps)
        {
            let pc = BASE + offset;
            let want = describe(decoded.get(pc));
            assert_eq!(describe(raw.get(pc)), want, "{offset:#x}");
            assert_eq!(describe(&raw.peek(pc)), want, "{offset:#x}");
        }
    }
}
