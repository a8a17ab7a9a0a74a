//! The instruction table: one row per instruction. Encoder, decoder, assembler, disassembler,
//! semantics and the generated reference all derive from these rows.
//!
//! A row gives: opcode name, mnemonic, pipeline, contexts, co-issue rule, timing class, family,
//! basis of its encoding, basis of its behaviour, the fixed bits of its encoding (the mask is
//! derived: every bit in 30..0 that no operand field occupies is fixed), its operands in assembly
//! order with access and bit field, and a one-line summary. Bit 31 of every word is the co-issue
//! flag and belongs to no row; a two-word row (`sendpicp`, fields in bits 32..63 for its inline
//! word) sets it on its prefix word, which only a solo row's word could otherwise start a pair
//! with.

pub mod args;
pub mod canonical;
pub mod emit;
mod lookup;
pub use lookup::rows_named;

use crate::table::{Basis, CoIssue, Contexts, Family, Pipe, TimingClass};
use args::*;
pub use args::{Access, Field, OperandDesc, OperandKind};

/// Largest operand count of any row.
pub const MAX_OPERANDS: usize = 6;

/// Code alignment, the one place it is stated. Every instruction is 4-byte aligned, and so is a
/// two-word bundle: PopLibs puts bundles at addresses ≡ 4 mod 8 on purpose (isa.md §9a, "Bundle
/// placement") [S]. What must be 8-byte aligned is the first bundle of an `rpt` body, the
/// address after the `rpt` bundle [A] (isa.md §3.6: bodies are counted in 8-byte units and
/// PopLibs aligns every body by hand). The assembler warns of a misaligned body it can see;
/// `rpt` traps on one at run time (`MisalignedRepeatBody`, `E-TRAP-008`).
pub const INSTRUCTION_ALIGN: u32 = 4;
/// See [`INSTRUCTION_ALIGN`].
pub const REPEAT_BODY_ALIGN: u32 = 8;

/// Rows whose one word lies inside another row's encodings, as `(specific, general)`: the
/// decoder gives such a word to the specific row (the match with the most fixed bits). The
/// hardware's canonical `nop` is `setzi $m14, 0` (`$m14` is read-only), so `setzi $m14, 0`
/// assembles to the word that disassembles as `nop`, as on the chip.
pub const CARVE_OUTS: &[(Opcode, Opcode)] = &[(Opcode::Nop, Opcode::Setzi)];

/// Everything the table says about one instruction.
#[derive(Clone, Copy, Debug)]
pub struct InstDesc {
    pub opcode: Opcode,
    pub mnemonic: &'static str,
    pub pipe: Pipe,
    pub contexts: Contexts,
    pub co_issue: CoIssue,
    pub timing: TimingClass,
    pub family: Family,
    /// Where the encoding comes from (public table or project choice).
    pub encoding_basis: Basis,
    /// Where the behaviour comes from.
    pub semantics_basis: Basis,
    /// Fixed bits (within `mask`).
    pub value: u32,
    /// Bits 30..0 not occupied by any operand field.
    pub mask: u32,
    /// Words of the encoding: 2 for a row with an inline word (`sendpicp`: a prefix word with
    /// bit 31 set, then the inline word; 8-byte aligned, the PC advances by 8), else 1.
    pub words: u32,
    pub operands: &'static [OperandDesc],
    pub summary: &'static str,
}

const fn mask_of(operands: &[OperandDesc]) -> u32 {
    let mut used = 0u32;
    let mut i = 0;
    while i < operands.len() {
        used |= operands[i].field.instruction_mask();
        i += 1;
    }
    0x7fff_ffff & !used
}

const fn words_of(operands: &[OperandDesc]) -> u32 {
    let mut i = 0;
    while i < operands.len() {
        if operands[i].field.is_inline() {
            return 2;
        }
        i += 1;
    }
    1
}

macro_rules! instructions {
    ($(
        $op:ident = $mnemonic:literal, $pipe:ident, $ctx:ident, $co:ident, $timing:ident, $family:ident,
            enc $ebasis:ident $value:literal, sem $sbasis:ident, [$($operand:expr),* $(,)?], $summary:literal;
    )*) => {
        /// Every instruction of the table; `Opcode as usize` indexes [`INSTRUCTIONS`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($op,)* }

        /// The table, in `Opcode` order.
        pub const INSTRUCTIONS: &[InstDesc] = &[
            $({
                const OPERANDS: &[OperandDesc] = &[$($operand),*];
                InstDesc {
                    opcode: Opcode::$op,
                    mnemonic: $mnemonic,
                    pipe: Pipe::$pipe,
                    contexts: Contexts::$ctx,
                    co_issue: CoIssue::$co,
                    timing: TimingClass::$timing,
                    family: Family::$family,
                    encoding_basis: Basis::$ebasis,
                    semantics_basis: Basis::$sbasis,
                    value: $value,
                    mask: mask_of(OPERANDS),
                    words: words_of(OPERANDS),
                    operands: OPERANDS,
                    summary: $summary,
                }
            },)*
        ];
    };
}

// Encodings. A row marked `enc Confirmed` has the fixed bits and field positions of its
// Graphcore-generated TableGen record (LLVM-TD-W / LLVM-TD-C of docs/reference/isa.md §0; the
// values are pinned in `tests::llvm_td_encodings_are_pinned`). Every aux row whose instruction
// has such a record uses it; so do the main-lane rows added for PopLibs (issue 10) where their
// major opcode is one the project's own plan leaves free (0x42, 0x44, 0x47, 0x4c).
//
// Rows marked `enc Secondary` with a main-lane word take the encodings osmarks/ipu-stack emits
// and runs on a C600 (`crates/ipu-target/src/instruction.rs` and its encoder tests, checked
// there against the SDK's encoder and disassembler; docs/reference/hardware-ipu-stack.md
// §1.1): `setzi` 0x19, `nop` = `setzi $m14, 0` (a carve-out, [`CARVE_OUTS`]), `call` 0x18,
// `brz` 0x13, `br` 0x43 / `put` 0x43 [15:12] = 8, `get` 0x41 with its register at [19:16],
// `st32` 0x4f, `add` with simm16 0x22, `and` / `shl` with zimm12 at 0x42 ([15:12] = 0 / 0xa).
// The project's plan for the rest (all [A]): major opcode in bits [30:24]; 0x20 MRF
// three-register ops with a sub-opcode in [7:0]; 0x21, 0x23..0x2f MRF register-immediate ops
// (`sub` with simm16 at 0x21: the hardware's word for it is not public); 0x30..0x3e exits,
// helpers and the rest; 0x02..0x0f loads and stores; 0x4d register-offset loads and stores
// (sub-opcodes in [11:8] and [3:0]); 0x68..0x6f aux rows with no public record (`fnop`, `mov`,
// `swap16` on the ARF: the public `fnop` and `mov` are assembler aliases of `or`, which a row
// cannot share; 0x60..0x67 are the hardware's `delaypic` and `delayxpic`); 0x78..0x7f send.
// These main-lane assumptions predate the public records and may differ from the hardware's
// words, so moving the rest of the main lane to hardware encodings is a later change.
// `movnz` has no public record: it sits beside the public `movz` at 0x47 [A]. The public
// `sub` with an immediate (public FMNI4 0x39: `sub_mmmn_si`) is written `sub $mD, simm16, $mS`.
instructions! {
    // ---- integer (main) ----
    Setzi = "setzi", Main, Both, Pairable, Simple, Integer, enc Secondary 0x1900_0000, sem Confirmed, [mw(B23), zimm(IMM20)], "$mD = zero-extended 20-bit immediate.";
    Mov = "mov", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0018, sem Confirmed, [mw(B19), mr(B23)], "$mD = $mS.";
    Add = "add", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0001, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA + $mB (wrapping).";
    AddImm = "add", Main, Both, Pairable, Simple, Integer, enc Secondary 0x2200_0000, sem Confirmed, [mw(B19), mr(B23), simm(IMM16)], "$mD = $mA + simm16.";
    // The public zimm16 add (FMNI4 0x2000_0000) collides with this table's assumed encodings of
    // the register forms, so it takes a free opcode with them; the public value is recorded here.
    AddImmZ = "add", Main, Both, Pairable, Simple, Integer, enc Assumed 0x3e00_0000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA + zimm16 (the form for 32768..=65535).";
    Sub = "sub", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0002, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA - $mB (wrapping).";
    SubImm = "sub", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2100_0000, sem Confirmed, [mw(B19), mr(B23), simm(IMM16)], "$mD = $mA - simm16.";
    SubImmRev = "sub", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x3900_0000, sem Inferred, [mw(B19), simm(IMM16), mr(B23)], "$mD = simm16 - $mS (reverse subtract: `sub $m0, 32, $m0`).";
    And = "and", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0003, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA & $mB.";
    AndImm = "and", Main, Both, Pairable, Simple, Integer, enc Secondary 0x4200_0000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM12)], "$mD = $mA & zimm12.";
    AndImmZ = "and", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2300_0000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA & zimm16 (the form for 4096..=65535, which PopLibs writes; the hardware's word for it is not public).";
    Or = "or", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0004, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA | $mB.";
    OrImm = "or", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2400_0000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA | zimm16.";
    Andc = "andc", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0005, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA & !$mB.";
    AndcImm = "andc", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2500_0000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA & !zimm16.";
    Xor = "xor", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0017, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA ^ $mB.";
    OrImmHi = "or", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x4200_c000, sem Confirmed, [mw(B19), mr(B23), zimm(IMM12_HI)], "$mD = $mA | zero-tailed immz12 (value bits [31:20]).";
    Xnor = "xnor", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x4400_0700, sem Confirmed, [mw(B7), mr(B23), mr(B15)], "$mD = !($mA ^ $mB).";
    Abs = "abs", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x4200_7000, sem Confirmed, [mw(B7), mr(B23)], "$mD = |$mS| (signed; |0x80000000| wraps to 0x80000000 [A]).";
    Popc = "popc", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x4200_3000, sem Confirmed, [mw(B7), mr(B23)], "$mD = number of set bits of $mS.";
    Movnz = "movnz", Main, Both, Pairable, Simple, Integer, enc Assumed 0x4700_0b00, sem Inferred, [mrw(B15), mr(B23), mr(B19)], "If $mCond != 0: $mD = $mS (else $mD keeps its value).";
    Shl = "shl", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0006, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA << ($mB & 31).";
    ShlImm = "shl", Main, Both, Pairable, Simple, Integer, enc Secondary 0x4200_a000, sem Assumed, [mw(B19), mr(B23), zimm(IMM12)], "$mD = $mA << (zimm & 31).";
    Shr = "shr", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0007, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA >> ($mB & 31), logical.";
    ShrImm = "shr", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2700_0000, sem Assumed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA >> (zimm & 31), logical.";
    Shrs = "shrs", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0008, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = $mA >> ($mB & 31), arithmetic.";
    ShrsImm = "shrs", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2800_0000, sem Assumed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = $mA >> (zimm & 31), arithmetic.";
    Mul = "mul", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_0009, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "$mD = low 32 bits of $mA * $mB.";
    MulImm = "mul", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2900_0000, sem Confirmed, [mw(B19), mr(B23), simm(IMM16)], "$mD = low 32 bits of $mA * simm16.";
    Min = "min", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000a, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = signed minimum.";
    MinImm = "min", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2a00_0000, sem Assumed, [mw(B19), mr(B23), simm(IMM16)], "$mD = signed minimum with simm16.";
    MinImmZ = "min", Main, Both, Pairable, Simple, Integer, enc Confirmed 0x3100_0000, sem Assumed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = signed minimum with zimm16 (the form for 32768..=65535).";
    Max = "max", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000b, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = signed maximum.";
    MaxImm = "max", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2b00_0000, sem Assumed, [mw(B19), mr(B23), simm(IMM16)], "$mD = signed maximum with simm16.";
    Cmpeq = "cmpeq", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000c, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = 1 if equal else 0.";
    CmpeqImm = "cmpeq", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2c00_0000, sem Assumed, [mw(B19), mr(B23), simm(IMM16)], "$mD = 1 if $mA == simm16 else 0.";
    Cmpne = "cmpne", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000d, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = 1 if not equal else 0.";
    CmpneImm = "cmpne", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2d00_0000, sem Assumed, [mw(B19), mr(B23), simm(IMM16)], "$mD = 1 if $mA != simm16 else 0.";
    Cmpslt = "cmpslt", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000e, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = 1 if $mA < $mB (signed) else 0.";
    CmpsltImm = "cmpslt", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2e00_0000, sem Assumed, [mw(B19), mr(B23), simm(IMM16)], "$mD = 1 if $mA < simm16 (signed) else 0.";
    Cmpult = "cmpult", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2000_000f, sem Assumed, [mw(B19), mr(B23), mr(B15)], "$mD = 1 if $mA < $mB (unsigned) else 0.";
    CmpultImm = "cmpult", Main, Both, Pairable, Simple, Integer, enc Assumed 0x2f00_0000, sem Assumed, [mw(B19), mr(B23), zimm(IMM16)], "$mD = 1 if $mA < zimm16 (unsigned) else 0.";
    Nop = "nop", Main, Both, Pairable, Simple, Integer, enc Secondary 0x19e0_0000, sem Confirmed, [], "No operation in the main pipeline (the word of `setzi $m14, 0`, which it carves out of `setzi`).";

    // ---- permutes on the MRF (main) ----
    Sort4x16loM = "sort4x16lo", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0010, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "d = {a[15:0], b[15:0]} (low lanes).";
    Sort4x16hiM = "sort4x16hi", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0011, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "d = {a[31:16], b[31:16]} (high lanes).";
    Roll16M = "roll16", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0012, sem Confirmed, [mw(B19), mr(B23), mr(B15)], "d = {a[31:16] in lane 0, b[15:0] in lane 1}.";
    Swap16M = "swap16", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0019, sem Inferred, [mw(B19), mr(B23)], "Swaps the 16-bit halves.";
    Sort8x8loM = "sort8x8lo", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0013, sem Assumed, [mw(B19), mr(B23), mr(B15)], "d = even bytes of {a, b}: {a0, a2, b0, b2}.";
    Sort8x8hiM = "sort8x8hi", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0014, sem Assumed, [mw(B19), mr(B23), mr(B15)], "d = odd bytes of {a, b}: {a1, a3, b1, b3}.";
    Shuf8x8loM = "shuf8x8lo", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0015, sem Assumed, [mw(B19), mr(B23), mr(B15)], "d = interleave of the low bytes: {a0, b0, a1, b1}.";
    Shuf8x8hiM = "shuf8x8hi", Main, Both, Pairable, Simple, Permute, enc Assumed 0x2000_0016, sem Assumed, [mw(B19), mr(B23), mr(B15)], "d = interleave of the high bytes: {a2, b2, a3, b3}.";
    Roll8lM = "roll8l", Main, Both, Pairable, Simple, Permute, enc Confirmed 0x4400_0303, sem Inferred, [mw(B7), mr(B23), mr(B15)], "d = bytes 3..6 of {a, b}: {a3, b0, b1, b2}.";
    Roll8rM = "roll8r", Main, Both, Pairable, Simple, Permute, enc Confirmed 0x4400_0400, sem Inferred, [mw(B7), mr(B23), mr(B15)], "d = bytes 1..4 of {a, b}: {a1, a2, a3, b0}.";

    // ---- control (main) ----
    Br = "br", Main, Both, Pairable, Branch, Control, enc Secondary 0x4300_0000, sem Confirmed, [mr(B23)], "Branch to the address in $m.";
    Bri = "bri", Main, Both, Pairable, Branch, Control, enc Assumed 0x3400_0000, sem Confirmed, [target(TARGET19)], "Branch to an absolute address.";
    Brz = "brz", Main, Both, Pairable, Branch, Control, enc Secondary 0x1300_0000, sem Confirmed, [mr(B23), target(TARGET19)], "Branch if $m == 0 (0x80000000 is non-zero).";
    Brnz = "brnz", Main, Both, Pairable, Branch, Control, enc Assumed 0x3208_0000, sem Confirmed, [mr(B23), target(TARGET19)], "Branch if $m != 0.";
    Brpos = "brpos", Main, Both, Pairable, Branch, Control, enc Assumed 0x3300_0000, sem Confirmed, [mr(B23), target(TARGET19)], "Branch if $m > 0 (signed).";
    Brneg = "brneg", Main, Both, Pairable, Branch, Control, enc Assumed 0x3308_0000, sem Confirmed, [mr(B23), target(TARGET19)], "Branch if $m < 0 (signed).";
    Brnzdec = "brnzdec", Main, Both, Pairable, Branch, Control, enc Confirmed 0x1308_0000, sem Confirmed, [mrw(B23), target(TARGET19)], "If $m != 0: $m -= 1 and branch; else fall through.";
    Call = "call", Main, Both, Pairable, Branch, Control, enc Secondary 0x1800_0000, sem Confirmed, [mw(B23), target(TARGET19)], "$m = return address; branch.";
    RptReg = "rpt", Main, Worker, Pairable, Repeat, Control, enc Confirmed 0x4300_a000, sem Confirmed, [mr(B23), zimm(IMM8)], "Repeat the next zimm8+1 bundles $m times (16-bit count).";
    RptImm = "rpt", Main, Worker, Pairable, Repeat, Control, enc Confirmed 0x4000_0000, sem Confirmed, [zimm(RPT_COUNT12), zimm(IMM8)], "Repeat the next zimm8+1 bundles zimm12 times.";
    Exitz = "exitz", Main, Worker, Solo, Exit, Control, enc Assumed 0x3700_0000, sem Confirmed, [mr(B23)], "End the worker; status = ($m == 0).";
    Exitnz = "exitnz", Main, Worker, Solo, Exit, Control, enc Assumed 0x3700_0001, sem Confirmed, [mr(B23)], "End the worker; status = ($m != 0).";
    Exitpos = "exitpos", Main, Worker, Solo, Exit, Control, enc Assumed 0x3700_0002, sem Confirmed, [mr(B23)], "End the worker; status = ($m > 0).";
    Exitneg = "exitneg", Main, Worker, Solo, Exit, Control, enc Assumed 0x3700_0003, sem Confirmed, [mr(B23)], "End the worker; status = ($m < 0).";

    // ---- CSRs ----
    Get = "get", Main, Both, Pairable, Simple, Csr, enc Secondary 0x4100_0000, sem Confirmed, [mw(B19), lcsr(IMM8)], "$m = lower-space CSR.";
    Put = "put", Main, Both, Pairable, CsrWrite, Csr, enc Secondary 0x4300_8000, sem Confirmed, [lcsr(IMM8), mr(B23)], "Lower-space CSR = $m.";
    Uget = "uget", Aux, Worker, Pairable, Simple, Csr, enc Confirmed 0x5100_0800, sem Confirmed, [aw(B19), ucsr(IMM8)], "$a = upper-space CSR.";
    Uput = "uput", Aux, Worker, Pairable, CsrWrite, Csr, enc Confirmed 0x5100_8000, sem Confirmed, [ucsr(IMM8), ar(B23)], "Upper-space CSR = $a.";
    Atom = "atom", Main, Worker, Pairable, Simple, Csr, enc Assumed 0x3b00_0000, sem Confirmed, [mw(B19), ar(B23)], "$m = $a bits (no conversion).";

    // ---- loads and stores: base + delta + scaled offset (main) ----
    Ld32M = "ld32", Main, Both, Pairable, Load, LoadStore, enc Confirmed 0x0100_0000, sem Confirmed, [mw(B19), mr(B23), mr(B15), zimm(IMM12)], "$m = word at base+delta+4*zimm12.";
    Ld32A = "ld32", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x0800_0000, sem Confirmed, [aw(B19), mr(B23), mr(B15), zimm(IMM12)], "$a = word at base+delta+4*zimm12.";
    Ld64 = "ld64", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0900_0000, sem Confirmed, [apw(B19), mr(B23), mr(B15), zimm(IMM12)], "$a pair = 64 bits at base+delta+8*zimm12.";
    Ld128 = "ld128", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x0b00_0000, sem Confirmed, [aqw(B19), mr(B23), mr(B15), zimm(IMM12)], "$a quad = 128 bits at base+delta+16*zimm12 (interleaved memory only).";
    Ldz8 = "ldz8", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0200_0000, sem Confirmed, [mw(B19), mr(B23), mr(B15), zimm(IMM12)], "$m = zero-extended byte at base+delta+zimm12.";
    Lds8 = "lds8", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0300_0000, sem Confirmed, [mw(B19), mr(B23), mr(B15), zimm(IMM12)], "$m = sign-extended byte at base+delta+zimm12.";
    Ldz16 = "ldz16", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0400_0000, sem Confirmed, [mw(B19), mr(B23), mr(B15), zimm(IMM12)], "$m = zero-extended half at base+delta+2*zimm12.";
    Lds16 = "lds16", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0500_0000, sem Confirmed, [mw(B19), mr(B23), mr(B15), zimm(IMM12)], "$m = sign-extended half at base+delta+2*zimm12.";
    Ldb16 = "ldb16", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0c00_0000, sem Confirmed, [aw(B19), mr(B23), mr(B15), zimm(IMM12)], "$a = half at base+delta+2*zimm12, broadcast to both lanes.";
    Ldb8 = "ldb8", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0d00_0000, sem Inferred, [aw(B19), mr(B23), mr(B15), zimm(IMM12)], "$a = byte at base+delta+zimm12, broadcast to all four bytes.";
    St32M = "st32", Main, Both, Pairable, Simple, LoadStore, enc Secondary 0x4f00_0000, sem Confirmed, [mr(B19), mr(B23), mr(B15), zimm(IMM12)], "Word at base+delta+4*zimm12 = $m.";
    St32A = "st32", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0700_0000, sem Confirmed, [ar(B19), mr(B23), mr(B15), zimm(IMM12)], "Word at base+delta+4*zimm12 = $a.";
    St64 = "st64", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0a00_0000, sem Confirmed, [apr(B19), mr(B23), mr(B15), zimm(IMM12)], "64 bits at base+delta+8*zimm12 = $a pair.";
    Stm32 = "stm32", Main, Both, Pairable, Simple, LoadStore, enc Confirmed 0x4c00_0000, sem Confirmed, [mr(B19), mr(B23), mr(B15)], "Word at $mBase + 4*$mOffset = $mS (no delta).";
    Ld32MReg = "ld32", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x4d00_0001, sem Confirmed, [mw(B7), mr(B23), mr(B15), mr(B19)], "$m = word at base+delta+4*$mOff.";
    Ld32AReg = "ld32", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x4d00_0002, sem Confirmed, [aw(B7), mr(B23), mr(B15), mr(B19)], "$a = word at base+delta+4*$mOff.";
    Ld64Reg = "ld64", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x4d00_0003, sem Confirmed, [apw(B7), mr(B23), mr(B15), mr(B19)], "$a pair = 64 bits at base+delta+8*$mOff.";
    Ld128Reg = "ld128", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x4d00_0805, sem Confirmed, [aqw(B7), mr(B23), mr(B15), mr(B19)], "$a quad = 128 bits at base+delta+16*$mOff.";
    St32MReg = "st32", Main, Both, Pairable, Simple, LoadStore, enc Assumed 0x4d00_0004, sem Confirmed, [mr(B7), mr(B23), mr(B15), mr(B19)], "Word at base+delta+4*$mOff = $m.";
    St32AReg = "st32", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x4d00_0006, sem Confirmed, [ar(B7), mr(B23), mr(B15), mr(B19)], "Word at base+delta+4*$mOff = $a.";
    St64Reg = "st64", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x4d00_0007, sem Confirmed, [apr(B7), mr(B23), mr(B15), mr(B19)], "64 bits at base+delta+8*$mOff = $a pair.";
    Ldz8Reg = "ldz8", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x4d00_0101, sem Confirmed, [mw(B7), mr(B23), mr(B15), mr(B19)], "$m = zero-extended byte at base+delta+$mOff.";
    Lds8Reg = "lds8", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x4d00_0102, sem Confirmed, [mw(B7), mr(B23), mr(B15), mr(B19)], "$m = sign-extended byte at base+delta+$mOff.";
    Ldz16Reg = "ldz16", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x4d00_0103, sem Confirmed, [mw(B7), mr(B23), mr(B15), mr(B19)], "$m = zero-extended half at base+delta+2*$mOff.";
    Lds16Reg = "lds16", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x4d00_0104, sem Confirmed, [mw(B7), mr(B23), mr(B15), mr(B19)], "$m = sign-extended half at base+delta+2*$mOff.";
    Ldb16Reg = "ldb16", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x4d00_0105, sem Confirmed, [aw(B7), mr(B23), mr(B15), mr(B19)], "$a = half at base+delta+2*$mOff, broadcast.";
    Ldb8Reg = "ldb8", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x4d00_0106, sem Inferred, [aw(B7), mr(B23), mr(B15), mr(B19)], "$a = byte at base+delta+$mOff, broadcast.";

    // ---- step forms: address = base + delta; then delta += stride * size (main) ----
    Ld32StepM = "ld32step", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0e00_0000, sem Confirmed, [mw(B19), mr(B23), minc(B15), simm(IMM8)], "$m = word at base+delta; delta += 4*simm8.";
    Ld32StepA = "ld32step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0e00_0100, sem Confirmed, [aw(B19), mr(B23), minc(B15), simm(IMM8)], "$a = word at base+delta; delta += 4*simm8.";
    Ld64Step = "ld64step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0e00_0200, sem Confirmed, [apw(B19), mr(B23), minc(B15), simm(IMM8)], "$a pair = 64 bits at base+delta; delta += 8*simm8.";
    Ldd16a32 = "ldd16a32", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x4500_0a00, sem Inferred, [aw(B7), mstep(B15), mr(B23), mdelta(B19)], "$a = 32 bits at base+delta; delta = u16 at $mAddr; $mAddr += 2.";
    Ldd16a64 = "ldd16a64", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x4500_0b00, sem Inferred, [apw(B7), mstep(B15), mr(B23), mdelta(B19)], "$a pair = 64 bits at base+delta; delta = u16 at $mAddr; $mAddr += 2.";
    Ldd16b16 = "ldd16b16", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x4500_0c00, sem Inferred, [aw(B7), mstep(B15), mr(B23), mdelta(B19)], "$a = half at base+delta in both lanes; delta = u16 at $mAddr; $mAddr += 2.";
    Ld128Step = "ld128step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0e00_0300, sem Confirmed, [aqw(B19), mr(B23), minc(B15), simm(IMM8)], "$a quad = 128 bits at base+delta; delta += 16*simm8.";
    St32StepM = "st32step", Main, Both, Pairable, Simple, LoadStore, enc Assumed 0x0e00_0400, sem Confirmed, [mr(B19), mr(B23), minc(B15), simm(IMM8)], "Word at base+delta = $m; delta += 4*simm8.";
    St32StepA = "st32step", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0e00_0500, sem Confirmed, [ar(B19), mr(B23), minc(B15), simm(IMM8)], "Word at base+delta = $a; delta += 4*simm8.";
    St64Step = "st64step", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0e00_0600, sem Confirmed, [apr(B19), mr(B23), minc(B15), simm(IMM8)], "64 bits at base+delta = $a pair; delta += 8*simm8.";
    Ldz8Step = "ldz8step", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0e00_0700, sem Confirmed, [mw(B19), mr(B23), minc(B15), simm(IMM8)], "$m = zero-extended byte at base+delta; delta += simm8.";
    Ldz16Step = "ldz16step", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0e00_0800, sem Confirmed, [mw(B19), mr(B23), minc(B15), simm(IMM8)], "$m = zero-extended half at base+delta; delta += 2*simm8.";
    Lds16Step = "lds16step", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0e00_0900, sem Confirmed, [mw(B19), mr(B23), minc(B15), simm(IMM8)], "$m = sign-extended half at base+delta; delta += 2*simm8.";
    Ldb16Step = "ldb16step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0e00_0a00, sem Confirmed, [aw(B19), mr(B23), minc(B15), simm(IMM8)], "$a = half at base+delta, broadcast; delta += 2*simm8.";
    Ld32StepMReg = "ld32step", Main, Both, Pairable, Load, LoadStore, enc Assumed 0x0f00_0000, sem Confirmed, [mw(B19), mr(B23), minc(B15), mr(B3)], "$m = word at base+delta; delta += 4*$mStride.";
    Ld32StepAReg = "ld32step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0f00_0100, sem Confirmed, [aw(B19), mr(B23), minc(B15), mr(B3)], "$a = word at base+delta; delta += 4*$mStride.";
    Ld64StepReg = "ld64step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0f00_0200, sem Confirmed, [apw(B19), mr(B23), minc(B15), mr(B3)], "$a pair = 64 bits at base+delta; delta += 8*$mStride.";
    Ld128StepReg = "ld128step", Main, Worker, Pairable, Load, LoadStore, enc Assumed 0x0f00_0300, sem Confirmed, [aqw(B19), mr(B23), minc(B15), mr(B3)], "$a quad = 128 bits at base+delta; delta += 16*$mStride.";
    St32StepMReg = "st32step", Main, Both, Pairable, Simple, LoadStore, enc Assumed 0x0f00_0400, sem Confirmed, [mr(B19), mr(B23), minc(B15), mr(B3)], "Word at base+delta = $m; delta += 4*$mStride.";
    St32StepAReg = "st32step", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0f00_0500, sem Confirmed, [ar(B19), mr(B23), minc(B15), mr(B3)], "Word at base+delta = $a; delta += 4*$mStride.";
    St64StepReg = "st64step", Main, Worker, Pairable, Simple, LoadStore, enc Assumed 0x0f00_0600, sem Confirmed, [apr(B19), mr(B23), minc(B15), mr(B3)], "64 bits at base+delta = $a pair; delta += 8*$mStride.";
    Ldz8StepMReg = "ldz8step", Main, Both, Pairable, Load, LoadStore, enc Confirmed 0x4700_0700, sem Confirmed, [mw(B7), mr(B23), minc(B15), mr(B19)], "$m = zero-extended byte at base+delta; delta += $mStride.";
    Ldz16StepMReg = "ldz16step", Main, Both, Pairable, Load, LoadStore, enc Confirmed 0x4700_0600, sem Confirmed, [mw(B7), mr(B23), minc(B15), mr(B19)], "$m = zero-extended half at base+delta; delta += 2*$mStride.";
    Lds16StepMReg = "lds16step", Main, Both, Pairable, Load, LoadStore, enc Confirmed 0x4700_0400, sem Confirmed, [mw(B7), mr(B23), minc(B15), mr(B19)], "$m = sign-extended half at base+delta; delta += 2*$mStride.";
    Ldb16StepAReg = "ldb16step", Main, Worker, Pairable, Load, LoadStore, enc Confirmed 0x4700_0601, sem Confirmed, [aw(B7), mr(B23), minc(B15), mr(B19)], "$a = half at base+delta, broadcast; delta += 2*$mStride.";

    // ---- triple-packed addresses (main) ----
    Tapack = "tapack", Main, Both, Pairable, Simple, Pace, enc Assumed 0x3c00_0000, sem Inferred, [mpw(B19), mr(B23), mr(B15), mr(B7)], "Pack three byte addresses (each source's low 21 bits) into a pair: lo = A0 | A2 << 21, hi = A1 | (A2 >> 11) << 21 (load 0 and load 1 as plain addresses; semantics/pace.rs).";
    Ld2x64pace = "ld2x64pace", Main, Worker, Pairable, Load, Pace, enc Confirmed 0x4600_0000, sem Confirmed, [apw(B19), apw(B7), mpinc(B15), mr(B23), zimm(IMM4)], "Two 64-bit loads from packed addresses 0 and 1; both post-increment.";
    Ldst64pace = "ldst64pace", Main, Worker, Pairable, Load, Pace, enc Confirmed 0x5600_0100, sem Confirmed, [apw(B19), apr(B7), mpinc(B15), mr(B23), zimm(IMM4)], "64-bit load from address 0 and store to address 2; both post-increment.";
    Ld2xst64pace = "ld2xst64pace", Main, Worker, Pairable, Load, Pace, enc Confirmed 0x5600_0800, sem Confirmed, [aqw(PACE_QUAD), apr(B7), mpinc(B15), mr(B23), zimm(PACE_IMM6)], "Two 64-bit loads (into a quad) and one 64-bit store; all post-increment.";
    St64pace = "st64pace", Main, Worker, Pairable, Simple, Pace, enc Confirmed 0x5c00_0200, sem Confirmed, [apr(B7), mpinc(B15), mr(B23), zimm(Field::new(&[(16, 4), (0, 4)]))], "64-bit store to packed address 2; post-increment by imm8[1:0]'s select.";

    // ---- aux: moves and immediates ----
    Fnop = "fnop", Aux, Worker, Pairable, Simple, FloatArith, enc Assumed 0x6800_0000, sem Confirmed, [], "No operation in the aux pipeline.";
    SetziA = "setzi", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x1a00_0000, sem Confirmed, [aw(B23), zimm(IMM20)], "$a = zero-extended 20-bit immediate.";
    MovA = "mov", Aux, Worker, Pairable, Simple, FloatArith, enc Assumed 0x6900_0000, sem Confirmed, [aw(B7), ar(B23)], "$aD = $aS.";

    // ---- aux: bitwise on the ARF (zimm12 zero-extended; immz12 zero-tailed, value bits [31:20]) ----
    AndA = "and", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0600, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "$aD = $aA & $aB.";
    AndImmA = "and", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_8000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12)], "$aD = $aA & zimm12.";
    AndImmHiA = "and", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_c000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12_HI)], "$aD = $aA & immz12 (clears bits [19:0]).";
    AndcA = "andc", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0601, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "$aD = $aA & !$aB.";
    AndcImmA = "andc", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_b000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12)], "$aD = $aA & !zimm12.";
    AndcImmHiA = "andc", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_f000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12_HI)], "$aD = $aA & !immz12.";
    OrA = "or", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0e00, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "$aD = $aA | $aB.";
    OrImmA = "or", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_9000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12)], "$aD = $aA | zimm12.";
    OrImmHiA = "or", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_d000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12_HI)], "$aD = $aA | immz12 (`or $a0, $azero, 0x3f800000` loads 1.0).";
    NotA = "not", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_7800, sem Confirmed, [aw(B7), ar(B23)], "$aD = !$aS.";
    And64 = "and64", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0602, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "Pair: $aD = $aA & $aB (64 bits).";
    Andc64 = "andc64", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0603, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "Pair: $aD = $aA & !$aB.";
    Or64 = "or64", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5800_0e01, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "Pair: $aD = $aA | $aB.";
    Not64 = "not64", Aux, Worker, Pairable, Simple, Integer, enc Confirmed 0x5200_7900, sem Confirmed, [apw(B7), apr(B23)], "Pair: $aD = !$aS.";

    // ---- aux: f16 / f32 arithmetic (op in [11:8], type in [3:0]) ----
    F16v2add = "f16v2add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0001, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 add, RNE.";
    F16v2sub = "f16v2sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0305, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 subtract.";
    F16v2mul = "f16v2mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0301, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 multiply.";
    F16v2max = "f16v2max", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0205, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 maximum.";
    F16v2min = "f16v2min", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_020d, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 minimum.";
    F16v2cmpeq = "f16v2cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_000d, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 ==, 0xffff or 0.";
    F16v2cmpne = "f16v2cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0201, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 !=.";
    F16v2cmplt = "f16v2cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010d, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 <.";
    F16v2cmple = "f16v2cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0109, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 <=.";
    F16v2cmpgt = "f16v2cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0105, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 >.";
    F16v2cmpge = "f16v2cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0101, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x f16 >=.";
    F16v4add = "f16v4add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0002, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 add.";
    F16v4sub = "f16v4sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0306, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 subtract.";
    F16v4mul = "f16v4mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0302, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 multiply.";
    F16v4max = "f16v4max", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0206, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 maximum.";
    F16v4min = "f16v4min", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_020e, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 minimum.";
    F16v4cmpeq = "f16v4cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_000e, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 ==.";
    F16v4cmpne = "f16v4cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0202, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 !=.";
    F16v4cmplt = "f16v4cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010e, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 <.";
    F16v4cmple = "f16v4cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010a, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 <=.";
    F16v4cmpgt = "f16v4cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0106, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 >.";
    F16v4cmpge = "f16v4cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0102, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x f16 >=.";
    F32add = "f32add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0000, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 add, RNE.";
    F32sub = "f32sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0304, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 subtract.";
    F32mul = "f32mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0300, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 multiply.";
    F32max = "f32max", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0204, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 maximum.";
    F32min = "f32min", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_020c, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 minimum.";
    F32cmpeq = "f32cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_000c, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 ==, 0xffffffff or 0.";
    F32cmplt = "f32cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010c, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 <.";
    F32cmpne = "f32cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0200, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 != (true when either is NaN).";
    F32cmple = "f32cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0108, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 <=.";
    F32cmpgt = "f32cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0104, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 >.";
    F32cmpge = "f32cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0100, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "f32 >=.";
    F32absadd = "f32absadd", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0008, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "|a| + |b|, f32 RNE.";
    F32clamp = "f32clamp", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_040c, sem Confirmed, [aw(B7), ar(B23), apr(B15)], "min(max(x, lo), hi); lo, hi = the pair's low, high register.";
    F32div = "f32div", Aux, Worker, Pairable, Divide, FloatArith, enc Confirmed 0x5800_0500, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "a / b, f32 RNE; the worker waits `worker.divide_rounds` issue rounds.";
    F32v2add = "f32v2add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0003, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 add.";
    F32v2sub = "f32v2sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0307, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 subtract.";
    F32v2mul = "f32v2mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0303, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 multiply.";
    F32v2max = "f32v2max", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0207, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 maximum.";
    F32v2min = "f32v2min", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_020f, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 minimum.";
    F32v2cmpeq = "f32v2cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_000f, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 ==, 0xffffffff or 0 per lane.";
    F32v2cmpne = "f32v2cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0203, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 !=.";
    F32v2cmplt = "f32v2cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010f, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 <.";
    F32v2cmple = "f32v2cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_010b, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 <=.";
    F32v2cmpgt = "f32v2cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0107, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 >.";
    F32v2cmpge = "f32v2cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_0103, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x f32 >=.";
    F32v2absadd = "f32v2absadd", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_030f, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "2 x (|a| + |b|), f32.";
    F32v2clamp = "f32v2clamp", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_040f, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "Both lanes: min(max(x, lo), hi); lo, hi = the limit pair's low, high register.";
    F16v2absadd = "f16v2absadd", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_030d, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "2 x (|a| + |b|), f16 RNE.";
    F16v4absadd = "f16v4absadd", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_030e, sem Confirmed, [apw(B7), apr(B23), apr(B15)], "4 x (|a| + |b|), f16 RNE.";
    F16v2clamp = "f16v2clamp", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_040d, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "Both lanes: min(max(x, lo), hi); lo, hi = the limit register's low, high half.";
    F16v4clamp = "f16v4clamp", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5800_040e, sem Confirmed, [apw(B7), apr(B23), ar(B15)], "4 lanes: min(max(x, lo), hi); lo, hi = the limit register's low, high half.";
    F32v2axpy = "f32v2axpy", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5800_000b, sem Confirmed, [apw(B7), apr(B15), apr(B23)], "AACC[0,2] = $TAS*x + y; $aD gets the previous AACC[0,2].";

    // ---- aux: broadcast first sources ($aS:BL / :BU = a half in every f16 lane, $aS:B = a word in both f32 lanes; bits [19:18] = 10 / 11) ----
    F16v2addBl = "f16v2add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0001, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 add with one half of $aS in both lanes.";
    F16v2addBu = "f16v2add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0001, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 add with one half of $aS in both lanes.";
    F16v4addBl = "f16v4add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0002, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 add with one half of $aS in every lane.";
    F16v4addBu = "f16v4add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0002, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 add with one half of $aS in every lane.";
    F16v2subBl = "f16v2sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0305, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 subtract with one half of $aS in both lanes.";
    F16v2subBu = "f16v2sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0305, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 subtract with one half of $aS in both lanes.";
    F16v4subBl = "f16v4sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0306, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 subtract with one half of $aS in every lane.";
    F16v4subBu = "f16v4sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0306, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 subtract with one half of $aS in every lane.";
    F16v2mulBl = "f16v2mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0301, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 multiply with one half of $aS in both lanes.";
    F16v2mulBu = "f16v2mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0301, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 multiply with one half of $aS in both lanes.";
    F16v4mulBl = "f16v4mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0302, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 multiply with one half of $aS in every lane.";
    F16v4mulBu = "f16v4mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0302, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 multiply with one half of $aS in every lane.";
    F16v2cmpeqBl = "f16v2cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_000d, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 == with one half of $aS in both lanes.";
    F16v2cmpeqBu = "f16v2cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_000d, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 == with one half of $aS in both lanes.";
    F16v4cmpeqBl = "f16v4cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_000e, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 == with one half of $aS in every lane.";
    F16v4cmpeqBu = "f16v4cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_000e, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 == with one half of $aS in every lane.";
    F16v2cmpneBl = "f16v2cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0201, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 != with one half of $aS in both lanes.";
    F16v2cmpneBu = "f16v2cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0201, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 != with one half of $aS in both lanes.";
    F16v4cmpneBl = "f16v4cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0202, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 != with one half of $aS in every lane.";
    F16v4cmpneBu = "f16v4cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0202, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 != with one half of $aS in every lane.";
    F16v2cmpltBl = "f16v2cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_010d, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 < with one half of $aS in both lanes.";
    F16v2cmpltBu = "f16v2cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_010d, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 < with one half of $aS in both lanes.";
    F16v4cmpltBl = "f16v4cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_010e, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 < with one half of $aS in every lane.";
    F16v4cmpltBu = "f16v4cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_010e, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 < with one half of $aS in every lane.";
    F16v2cmpleBl = "f16v2cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0109, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 <= with one half of $aS in both lanes.";
    F16v2cmpleBu = "f16v2cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0109, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 <= with one half of $aS in both lanes.";
    F16v4cmpleBl = "f16v4cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_010a, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 <= with one half of $aS in every lane.";
    F16v4cmpleBu = "f16v4cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_010a, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 <= with one half of $aS in every lane.";
    F16v2cmpgtBl = "f16v2cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0105, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 > with one half of $aS in both lanes.";
    F16v2cmpgtBu = "f16v2cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0105, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 > with one half of $aS in both lanes.";
    F16v4cmpgtBl = "f16v4cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0106, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 > with one half of $aS in every lane.";
    F16v4cmpgtBu = "f16v4cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0106, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 > with one half of $aS in every lane.";
    F16v2cmpgeBl = "f16v2cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0101, sem Confirmed, [aw(B7), ablr(B23), ar(B15)], "2 x f16 >= with one half of $aS in both lanes.";
    F16v2cmpgeBu = "f16v2cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0101, sem Confirmed, [aw(B7), abur(B23), ar(B15)], "2 x f16 >= with one half of $aS in both lanes.";
    F16v4cmpgeBl = "f16v4cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0102, sem Confirmed, [apw(B7), ablr(B23), apr(B15)], "4 x f16 >= with one half of $aS in every lane.";
    F16v4cmpgeBu = "f16v4cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x580c_0102, sem Confirmed, [apw(B7), abur(B23), apr(B15)], "4 x f16 >= with one half of $aS in every lane.";
    F32v2addB = "f32v2add", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0003, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 add with $aS in both lanes.";
    F32v2subB = "f32v2sub", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0307, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 subtract with $aS in both lanes.";
    F32v2mulB = "f32v2mul", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0303, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 multiply with $aS in both lanes.";
    F32v2cmpeqB = "f32v2cmpeq", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_000f, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 == with $aS in both lanes.";
    F32v2cmpneB = "f32v2cmpne", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0203, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 != with $aS in both lanes.";
    F32v2cmpltB = "f32v2cmplt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_010f, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 < with $aS in both lanes.";
    F32v2cmpleB = "f32v2cmple", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_010b, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 <= with $aS in both lanes.";
    F32v2cmpgtB = "f32v2cmpgt", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0107, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 > with $aS in both lanes.";
    F32v2cmpgeB = "f32v2cmpge", Aux, Worker, Pairable, Simple, FloatArith, enc Confirmed 0x5808_0103, sem Confirmed, [apw(B7), abr(B23), apr(B15)], "2 x f32 >= with $aS in both lanes.";

    // ---- aux: accumulators ----
    F32v4acc = "f32v4acc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8200, sem Assumed, [aqr(B23)], "AACC[0,2,4,6] += 4 x f32 (f32 RNE).";
    F16v8acc = "f16v8acc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8100, sem Inferred, [aqr(B23)], "AACC[2j] += h[j] for the 8 halves, widened: eight sums (PopLibs' ReduceAdd reads them with four f32v2gina).";
    F32v2gina = "f32v2gina", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_4000, sem Confirmed, [apw(B19), apr(B23), zimm(IMM12)], "Read AACC[0,2] (zimm bit 0: odd [1,3]); push $aS into AACC[12,14]; shift down.";
    F16v2gina = "f16v2gina", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_5000, sem Confirmed, [aw(B19), ar(B23), zimm(IMM12)], "As f32v2gina, with 2 x f16 in and out (f16 RNE).";
    F16v4acc = "f16v4acc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8000, sem Assumed, [apr(B23)], "AACC[0,2,4,6] += 4 x f16 widened (f32 RNE).";
    F32mac = "f32mac", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5a00_0180, sem Assumed, [ar(B23), ar(B15)], "AACC[0] += a*b (product and sum each f32 RNE).";
    F32v2mac = "f32v2mac", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5a00_0080, sem Assumed, [apr(B23), apr(B15)], "AACC[0] += a0*b0, AACC[2] += a1*b1.";
    F16v2cmac = "f16v2cmac", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5a00_0300, sem Assumed, [ar(B23), ar(B15)], "AACC[0] += a0*b0 + a1*b1 (exact products, lateral sum and accumulation f32 RNE).";
    F16v4cmac = "f16v4cmac", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5a00_0200, sem Assumed, [apr(B23), apr(B15)], "AACC[0] += a0*b0 + a1*b1, AACC[2] += a2*b2 + a3*b3.";
    F32v4sqacc = "f32v4sqacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8a00, sem Assumed, [aqr(B23)], "AACC[0,2,4,6] += q*q (4 x f32, product and sum each f32 RNE).";
    F16v8sqacc = "f16v8sqacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8900, sem Inferred, [aqr(B23)], "AACC[2j] += h[j]^2 for the 8 halves (exact squares, f32 RNE sums), as f16v8acc.";
    F32v4absacc = "f32v4absacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8600, sem Assumed, [aqr(B23)], "AACC[0,2,4,6] += |q| (4 x f32, f32 RNE).";
    F16v8absacc = "f16v8absacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8500, sem Inferred, [aqr(B23)], "AACC[2j] += |h[j]| for the 8 halves (widened, f32 RNE), as f16v8acc.";
    F16v4absacc = "f16v4absacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5900_8400, sem Assumed, [apr(B23)], "AACC[0,2,4,6] += |x| (4 x f16 widened, f32 RNE).";
    F16v4gacc = "f16v4gacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5000_0400, sem Assumed, [apw(B7)], "$aD = AACC[0,2,4,6] as 4 x f16 (RNE); the accumulators are kept.";
    F16v4mix = "f16v4mix", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5800_000a, sem Assumed, [apw(B7), apr(B23), apr(B15)], "AACC[0,2,4,6] = a*x + b*y with a, b = $TAS low, high half; $aD gets the previous AACC[0,2,4,6] as f16.";

    // ---- aux: transcendental and special ----
    F32exp = "f32exp", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_3100, sem Assumed, [aw(B7), ar(B23)], "e^x, f32 (correctly rounded: project definition).";
    F16v2exp = "f16v2exp", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_3200, sem Assumed, [aw(B7), ar(B23)], "2 x e^x, f16.";
    F32tanh = "f32tanh", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_5100, sem Assumed, [aw(B7), ar(B23)], "tanh, f32.";
    F16v2tanh = "f16v2tanh", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_5200, sem Assumed, [aw(B7), ar(B23)], "2 x tanh, f16.";
    F32oorx = "f32oorx", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_0a00, sem Assumed, [aw(B7), ar(B23)], "1/sqrt(x), f32.";
    F32sqrt = "f32sqrt", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_6100, sem Confirmed, [aw(B7), ar(B23)], "sqrt(x), f32, IEEE.";
    F32oox = "f32oox", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_0b00, sem Assumed, [aw(B7), ar(B23)], "1/x, f32.";
    F32sigm = "f32sigm", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_5900, sem Assumed, [aw(B7), ar(B23)], "1/(1+e^-x), f32.";
    F16v2sigm = "f16v2sigm", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_5a00, sem Assumed, [aw(B7), ar(B23)], "2 x 1/(1+e^-x), f16.";
    F32ln = "f32ln", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_1100, sem Assumed, [aw(B7), ar(B23)], "ln x, f32.";
    F16v2ln = "f16v2ln", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_1200, sem Assumed, [aw(B7), ar(B23)], "2 x ln x, f16.";
    F32class = "f32class", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5200_2900, sem Inferred, [aw(B7), ar(B23)], "IEEE 754-2008 5.7.2 class of an f32, numbered 1 (sNaN) .. 10 (+inf) (numerics::classify).";
    Urand32 = "urand32", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5000_0000, sem Assumed, [aw(B7)], "$aD = low 32 bits of one PRNG step (numerics::random).";
    Urand64 = "urand64", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5000_0100, sem Assumed, [apw(B7)], "$aD:D+1 = one 64-bit PRNG step (numerics::random).";
    F16v2grand = "f16v2grand", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5000_0200, sem Assumed, [aw(B7)], "2 x f16 Gaussian samples, one PRNG step each (numerics::random).";
    F32v2grand = "f32v2grand", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5000_0300, sem Assumed, [apw(B7)], "2 x f32 Gaussian samples, one PRNG step each (numerics::random).";
    F16v4rmask = "f16v4rmask", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5800_050a, sem Assumed, [apw(B7), apr(B23), ar(B15)], "4 x f16 random mask: lane kept with probability p[15:0]/65536; p[16] keeps all, p[16:0] = 0 clears all.";
    F32v2rmask = "f32v2rmask", Aux, Worker, Pairable, Simple, Transcendental, enc Confirmed 0x5800_050b, sem Assumed, [apw(B7), apr(B23), ar(B15)], "2 x f32 random mask: lane kept with probability p[15:0]/65536; p[16] keeps all, p[16:0] = 0 clears all.";

    // ---- aux: conversions ----
    F16v2tof32 = "f16v2tof32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_1400, sem Confirmed, [apw(B7), ar(B23)], "2 x f16 -> 2 x f32 (exact).";
    F16tof32 = "f16tof32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_0400, sem Confirmed, [aw(B7), ar(B23)], "Low f16 -> f32 (exact).";
    F32v2tof16 = "f32v2tof16", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6700, sem Confirmed, [aw(B7), apr(B23)], "2 x f32 -> 2 x f16, RNE.";
    F32tof16 = "f32tof16", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_3500, sem Confirmed, [aw(B7), ar(B23)], "f32 -> f16, RNE, broadcast to both halves.";
    F32v4tof16 = "f32v4tof16", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6500, sem Confirmed, [apw(B7), aqr(B23)], "4 x f32 -> 4 x f16, RNE.";
    F16v2tof8 = "f16v2tof8", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6d00, sem Confirmed, [aw(B7), ar(B23)], "2 x f16 * 2^FP_SCL -> 2 x FP8 ($FP_NFMT) in the low 16 bits; upper 16 bits zeroed [A].";
    F16v8tof8 = "f16v8tof8", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6600, sem Confirmed, [apw(B7), aqr(B23)], "8 x f16 * 2^FP_SCL -> 8 x FP8.";
    F8v2tof16 = "f8v2tof16", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6c00, sem Confirmed, [aw(B7), ar(B23)], "2 x FP8 (low 16 bits) * 2^FP_SCL -> 2 x f16.";
    F8v4tof16 = "f8v4tof16", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_6800, sem Confirmed, [apw(B7), ar(B23)], "4 x FP8 * 2^FP_SCL -> 4 x f16.";
    F32toi32 = "f32toi32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_4000, sem Confirmed, [aw(B7), ar(B23)], "f32 -> i32, RNE, saturating; NaN -> 0 [A].";
    F32toui32 = "f32toui32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_5000, sem Confirmed, [aw(B7), ar(B23)], "f32 -> u32, RNE, saturating; NaN -> 0 [A].";
    F32fromi32 = "f32fromi32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_7000, sem Confirmed, [aw(B7), ar(B23)], "i32 -> f32, RNE.";
    F32fromui32 = "f32fromui32", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_0000, sem Confirmed, [aw(B7), ar(B23)], "u32 -> f32, RNE.";
    F16v4sufromui = "f16v4sufromui", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_4e00, sem Inferred, [apw(B7), apr(B23)], "4 x u16 -> f16 (2u+1-2^16)/2^17, symmetric in [-1/2, 1/2], never 0 (RNE).";
    F32v2sufromui = "f32v2sufromui", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5200_4b00, sem Inferred, [apw(B7), apr(B23)], "2 x u32 -> f32 (2u+1-2^32)/2^33, symmetric in [-1/2, 1/2], never 0 (RNE).";
    F32int = "f32int", Aux, Worker, Pairable, Simple, Convert, enc Confirmed 0x5100_0000, sem Inferred, [aw(B19), ar(B23), zimm(IMM4)], "Round to an integral f32: mode 0 nearest even, 1 up, 2 down, 3 toward zero.";

    // ---- aux: permutes ----
    Sort4x16loA = "sort4x16lo", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_060c, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "d = {a[15:0], b[15:0]}.";
    Sort4x16hiA = "sort4x16hi", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0608, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "d = {a[31:16], b[31:16]}.";
    Roll16A = "roll16", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0604, sem Confirmed, [aw(B7), ar(B23), ar(B15)], "d = {a[31:16] in lane 0, b[15:0] in lane 1}.";
    Swap16A = "swap16", Aux, Worker, Pairable, Simple, Permute, enc Assumed 0x6a00_0000, sem Inferred, [aw(B7), ar(B23)], "Swaps the 16-bit halves.";
    Sort4x32lo = "sort4x32lo", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_060f, sem Inferred, [apw(B7), apr(B23), apr(B15)], "d = {a[31:0], b[31:0]}.";
    Sort4x32hi = "sort4x32hi", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_060b, sem Inferred, [apw(B7), apr(B23), apr(B15)], "d = {a[63:32], b[63:32]}.";
    Sort8x8loA = "sort8x8lo", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0803, sem Assumed, [aw(B7), ar(B23), ar(B15)], "Even bytes of {a, b}.";
    Sort8x8hiA = "sort8x8hi", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0802, sem Assumed, [aw(B7), ar(B23), ar(B15)], "Odd bytes of {a, b}.";
    Shuf8x8loA = "shuf8x8lo", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0801, sem Assumed, [aw(B7), ar(B23), ar(B15)], "Interleave of the low bytes.";
    Shuf8x8hiA = "shuf8x8hi", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0800, sem Assumed, [aw(B7), ar(B23), ar(B15)], "Interleave of the high bytes.";
    Roll8lA = "roll8l", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0605, sem Inferred, [aw(B7), ar(B23), ar(B15)], "d = bytes 3..6 of {a, b}.";
    Roll8rA = "roll8r", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0606, sem Inferred, [aw(B7), ar(B23), ar(B15)], "d = bytes 1..4 of {a, b}.";
    Roll32 = "roll32", Aux, Worker, Pairable, Simple, Permute, enc Confirmed 0x5800_0607, sem Inferred, [apw(B7), apr(B23), apr(B15)], "d = 32-bit lanes 1..2 of {a, b}: {a[63:32], b[31:0]}.";

    // ---- AMP (aux): dst, input, partials, flags ----
    F16v4hihov4amp = "f16v4hihov4amp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0740, sem Inferred, [apw(B19), apr(B15), apr(B23), zimm(Field::new(&[(0, 6)]))], "16-channel f16 AMP step: 4 f16 inputs, 4 f16 partials in, 4 f16 results out (phase p: channels 2p, 2p+1, 2p+8, 2p+9, the hardware's order).";
    F8v8hihov4amp = "f8v8hihov4amp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0940, sem Inferred, [apw(B19), apr(B15), apr(B23), zimm(Field::new(&[(0, 6)]))], "16-channel FP8 AMP step: 8 FP8 inputs, 4 f16 partials in, 4 f16 results out (phase p: channels 2p, 2p+1, 2p+8, 2p+9), scaled by 2^FP_ISCL.";
    F16v4sisoamp = "f16v4sisoamp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0700, sem Inferred, [apw(B19), apr(B15), apr(B23), zimm(Field::new(&[(0, 6)]))], "8-channel f16 AMP step with f32 partials: 4 f16 inputs, 2 f32 partials in, 2 f32 results out.";
    F16v4hihoamp = "f16v4hihoamp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0100, sem Assumed, [aw(B19), apr(B15), ar(B23), zimm(IMM6)], "8-channel f16 AMP step: 4 f16 inputs, 2 f16 partials in, 2 f16 results out (semantics::amp).";
    F32sisoamp = "f32sisoamp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0f00, sem Assumed, [apw(B19), ar(B15), apr(B23), zimm(IMM6)], "8-channel f32 AMP step, 8 phases: 1 f32 input; on even phases 2 f32 partials in, 2 f32 results out (semantics::amp).";
    F32sisov2amp = "f32sisov2amp", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0f40, sem Assumed, [apw(B19), ar(B15), apr(B23), zimm(IMM6)], "16-channel f32 AMP step (both sets), 8 phases: 1 f32 input, 2 f32 partials in, 2 f32 results out (semantics::amp).";
    F16v4hihoslic = "f16v4hihoslic", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0000, sem Assumed, [aw(B19), apr(B15), ar(B23), zimm(IMM6)], "1x4 slim convolution, 2 output channels: 4 f16 inputs, 2 f16 partials in, 2 f16 results out (semantics::slic).";
    F16v4sisoslic = "f16v4sisoslic", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0600, sem Inferred, [apw(B19), apr(B15), apr(B23), zimm(IMM6)], "1x4 slim convolution, 2 output channels: 4 f16 inputs, 2 f32 partials in, 2 f32 results out (semantics::slic).";
    F16v4hihov4slic = "f16v4hihov4slic", Aux, Worker, Pairable, Simple, Amp, enc Confirmed 0x5b00_0640, sem Assumed, [apw(B19), apr(B15), apr(B23), zimm(IMM6)], "1x4 slim convolution, 4 output channels: 4 f16 inputs, 4 f16 partials in, 4 f16 results out (semantics::slic).";
    F16v4istacc = "f16v4istacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5b00_0800, sem Assumed, [apw(B19), apr(B15), apr(B23), zimm(IMM6)], "4x4 f16 transpose through AACC: two rows in, one column of the previous block out (semantics::stacc).";
    F16v4stacc = "f16v4stacc", Aux, Worker, Pairable, Simple, Accumulate, enc Confirmed 0x5100_0900, sem Assumed, [apw(B19), zimm(IMM8)], "Read through AACC: 0 = (AACC[0], AACC[2]) out, AACC[1,3] = AACC[4,6]; the transpose flags read a column (semantics::stacc).";

    // ---- supervisor ----
    Run = "run", Main, Supervisor, Solo, Launch, Supervisor, enc Confirmed 0x1400_0000, sem Confirmed, [mr(B23), mr(B15), zimm(RUN_IMM16)], "Start one worker at $mEntry with vertex base $mV + 4*zimm16.";
    Runall = "runall", Main, Supervisor, Solo, Launch, Supervisor, enc Confirmed 0x1500_0000, sem Confirmed, [mr(B23), mr(B15), zimm(RUN_IMM16)], "Start all six workers; worker n gets vertex base $mV + n*4*zimm16.";
    Sync = "sync", Main, Supervisor, Solo, Sync, Supervisor, enc Secondary 0x4180_0000, sem Confirmed, [zimm(IMM4)], "Barrier on a zone: 2 = local (all workers exited), 3 = internal (all tiles); 1 (ANS, after `sans 0` on tiles idle in an exchange phase) and 7 (all) join the internal barrier here [A]; 0 (receive) and 15 (host) are not modelled.";
    Send = "send", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x7800_0000, sem Assumed, [zimm(SEND_COUNT6), waddr(SEND_ADDR18), zimm(SEND_MODE3)], "Send count+1 words from a word address onto this tile's outgoing wires, one per cycle; the 3-bit control names the fabric directions (1, 2, both 3; 0 sends nothing; bit 2: count+1 64-bit items on this tile's lane and its partner's, the address field in 8-byte units, so the operand is half the byte address), isa::fabric.";
    TrapPbrk = "trap", Main, Both, Solo, Simple, Supervisor, enc Secondary 0x4180_1000, sem Secondary, [zimm(IMM4)], "Raise the patched-breakpoint exception PBRK0: the run stops (E-TRAP-013).";
    Sans = "sans", Main, Supervisor, Solo, Simple, Supervisor, enc Secondary 0x40c0_0000, sem Assumed, [zimm(IMM4)], "What tiles without a part in an exchange phase run before `sync 1` on the hardware (`sans 0`); its effect is not public: no effect here.";
    DelayPic = "delaypic", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x6000_0000, sem Secondary, [zimm(PIC_EVENTS7), zimm(PIC_SELECT1), zimm(PIC_VALUE18)], "Timed incoming control (PIC): after events-1 more cycles, set the write pointer (selector 0, a word address) or the item format (selector 1); the supervisor is busy for the events.";
    DelayXpic = "delayxpic", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x6400_0000, sem Secondary, [zimm(XPIC_EVENTS12), zimm(XPIC_STREAM1), zimm(XPIC_VALUE13)], "Timed incoming control (XPIC): after events-1 more cycles, the incoming mux (stream 1: the paired mux) selects a sender by its physical tile id (0x640: none) for the words arriving 52 + 2·row cycles later on the ipu21; the supervisor is busy for the events.";
    SendPic = "sendpic", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x7010_0000, sem Secondary, [zimm(SEND_COUNT6), zimm(SENDPIC_SELECT2), zimm(PIC_VALUE18)], "Continue the outgoing stream with count+1 words and apply one incoming control at its first word (selector 0/1: XPIC mux/paired mux, 2: PIC pointer, 3: PIC format).";
    SendPicP = "sendpicp", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x7000_0000, sem Inferred, [zimm(SEND_COUNT6), waddr(SEND_ADDR18), zimm(SEND_MODE3), zimm(SENDPICP_XPIC14), zimm(SENDPICP_SELECT1), zimm(SENDPICP_PIC18)], "Two words (prefix with bit 31 set, then an inline word; 8-byte aligned): restart the outgoing stream with count+1 words from a word address (send control as `send`'s; 0 sends nothing, a receiver-only event) and apply two incoming controls at its first word, XPIC (stream bit 13, source) and PIC (selector 0 pointer, 1 format).";
    SendOff = "sendoff", Main, Supervisor, Solo, Exchange, Supervisor, enc Secondary 0x7000_0000, sem Inferred, [zimm(SENDOFF_COUNT12), zimm(SENDOFF_DELTA11), zimm(SEND_MODE3)], "Continue the outgoing stream with count+1 words (up to 4,096; ipu-stack sends a transfer's words past its first 64 so), from where the last send, sendpic or sendoff left off plus delta units [A], with this 3-bit send control.";
    Delay = "delay", Main, Supervisor, Solo, Delay, Supervisor, enc Secondary 0x40a0_0000, sem Secondary, [zimm(DELAY19)], "Stall the supervisor for zimm19 + 1 cycles (exchange events): `delay N` advances N + 1.";
    Ld64putcs = "ld64putcs", Main, Supervisor, Pairable, Simple, Supervisor, enc Confirmed 0x4100_c000, sem Confirmed, [zimm(IMM8)], "$CWEI[zimm8] = 64 bits at $CCCSLOAD; $CCCSLOAD += 8.";
    Ld128putcs = "ld128putcs", Main, Supervisor, Pairable, Simple, Supervisor, enc Confirmed 0x4100_d000, sem Confirmed, [zimm(IMM8)], "$CWEI[zimm8], $CWEI[zimm8+1] = 128 bits at $CCCSLOAD; $CCCSLOAD += 16.";
}

impl Opcode {
    /// The table row of this opcode.
    pub fn desc(self) -> &'static InstDesc {
        &INSTRUCTIONS[self as usize]
    }

    /// Every opcode, in table order.
    pub fn all() -> impl Iterator<Item = Opcode> {
        INSTRUCTIONS.iter().map(|row| row.opcode)
    }
}

/// A decoded instruction: its opcode and operand values in assembly order.
///
/// Operand values are architectural: register numbers (the first register of a pair or quad),
/// immediates as two's-complement bits, byte addresses for targets. Unused slots are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    pub opcode: Opcode,
    pub operands: [u32; MAX_OPERANDS],
}

impl Inst {
    pub fn new(opcode: Opcode, values: &[u32]) -> Inst {
        let mut operands = [0; MAX_OPERANDS];
        operands[..values.len()].copy_from_slice(values);
        Inst { opcode, operands }
    }

    pub fn desc(&self) -> &'static InstDesc {
        self.opcode.desc()
    }

    /// Operand `i` as a register number.
    #[inline]
    pub fn reg(&self, i: usize) -> usize {
        self.operands[i] as usize
    }

    /// Operand `i` as a signed immediate.
    #[inline]
    pub fn simm(&self, i: usize) -> i32 {
        self.operands[i] as i32
    }

    /// Operand `i` as an unsigned immediate or address.
    #[inline]
    pub fn imm(&self, i: usize) -> u32 {
        self.operands[i]
    }
}

/// One issue: a main instruction, an aux instruction, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bundle {
    pub main: Option<Inst>,
    pub aux: Option<Inst>,
}

impl Bundle {
    /// Size in bytes: 8 for a pair or a two-word instruction, 4 for a single instruction.
    pub fn size(&self) -> u32 {
        match (self.main, self.aux) {
            (Some(_), Some(_)) => 8,
            (Some(only), None) | (None, Some(only)) => 4 * only.desc().words,
            (None, None) => 4,
        }
    }

    pub fn single(inst: Inst) -> Bundle {
        match inst.desc().pipe {
            Pipe::Main => Bundle {
                main: Some(inst),
                aux: None,
            },
            Pipe::Aux => Bundle {
                main: None,
                aux: Some(inst),
            },
        }
    }
}

#[cfg(test)]
mod tests;
