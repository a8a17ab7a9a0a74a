//! Control and status registers: one row per CSR (space, context, index, basis), plus field layouts.
//!
//! There are two spaces. The lower space (0..=255) is read with `get` and written with `put`
//! from the MRF; worker and supervisor each have their own lower space, so an index means
//! different registers in each. The upper space is the worker's floating-point state, read with
//! `uget` and written with `uput` from the ARF; it is numbered here by its offset (0x100 + n on
//! the chip).

use crate::table::Basis;

/// Which CSR space a register lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrSpace {
    /// `get`/`put`, MRF operand.
    Lower,
    /// `uget`/`uput`, ARF operand, worker only.
    Upper,
}

/// Which context can address a CSR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrContext {
    Worker,
    Supervisor,
    Both,
}

/// One row of the CSR table.
#[derive(Clone, Copy, Debug)]
pub struct CsrDesc {
    pub name: &'static str,
    pub space: CsrSpace,
    pub context: CsrContext,
    pub index: u8,
    pub basis: Basis,
    pub summary: &'static str,
}

macro_rules! csr_table {
    ($( $konst:ident = ($name:literal, $space:ident, $ctx:ident, $index:expr, $basis:expr, $summary:literal); )*) => {
        /// Indices of every CSR, by name.
        pub mod index {
            $( pub const $konst: u8 = $index; )*
        }
        /// The CSR table.
        pub const CSRS: &[CsrDesc] = &[
            $( CsrDesc { name: $name, space: CsrSpace::$space, context: CsrContext::$ctx, index: $index, basis: $basis, summary: $summary }, )*
        ];
    };
}

use Basis::{Assumed as A, Confirmed as C, ConfirmedIpu1 as C1, Inferred as I};

csr_table! {
    PC = ("$PC", Lower, Both, 0, C1, "Program counter.");
    WSR = ("$WSR", Lower, Worker, 1, C1, "Worker status: CTXTID_M1[2:0], ETYPE[7:4], ERPT[9].");
    VERTEX_BASE = ("$VERTEX_BASE", Lower, Worker, 2, C1, "Vertex state pointer (also $m13).");
    WORKER_BASE = ("$WORKER_BASE", Lower, Worker, 3, C1, "Worker scratch base (also $m12).");
    REPEAT_COUNT = ("$REPEAT_COUNT", Lower, Worker, 4, C1, "Remaining rpt iterations (16 bits).");
    REPEAT_FIRST = ("$REPEAT_FIRST", Lower, Worker, 5, C1, "Address of the first bundle of the rpt body.");
    REPEAT_END = ("$REPEAT_END", Lower, Worker, 6, C1, "Address after the rpt body.");
    SSR = ("$SSR", Lower, Supervisor, 1, C1, "Supervisor status: LC[0], GC[1], ANS[2], RAERR[3], ETYPE[7:4], PERR[9].");
    CR = ("$CR", Lower, Supervisor, 2, C1, "Control: LC_CLR[0], LC_SET[1], ZCWEI[2] (zero all weights).");
    TILE_ID = ("$TILE_ID", Lower, Supervisor, 3, C1, "This tile's id (11 bits).");
    FP_ICTL = ("$FP_ICTL", Lower, Supervisor, 0x20, C, "Initial $FP_CTL given to each launched worker.");
    WORKER0_BASE = ("$WORKER0_BASE", Lower, Supervisor, 0x21, C1, "Scratch base of worker 0.");
    WORKER1_BASE = ("$WORKER1_BASE", Lower, Supervisor, 0x22, C1, "Scratch base of worker 1.");
    WORKER2_BASE = ("$WORKER2_BASE", Lower, Supervisor, 0x23, C1, "Scratch base of worker 2.");
    WORKER3_BASE = ("$WORKER3_BASE", Lower, Supervisor, 0x24, C1, "Scratch base of worker 3.");
    WORKER4_BASE = ("$WORKER4_BASE", Lower, Supervisor, 0x25, C1, "Scratch base of worker 4.");
    WORKER5_BASE = ("$WORKER5_BASE", Lower, Supervisor, 0x26, C1, "Scratch base of worker 5.");
    FP_INFMT = ("$FP_INFMT", Lower, Supervisor, 49, I, "AMP FP8 formats: CWEI_FMT[0] (weights), ARF_FMT[1] (inputs); 1 = F143, 0 = F152.");
    FP_ISCL = ("$FP_ISCL", Lower, Supervisor, 51, I, "AMP FP8 scale (6-bit two's complement): products are multiplied by 2^FP_ISCL.");
    CCCSLOAD = ("$CCCSLOAD", Lower, Supervisor, 0x50, C1, "Post-incrementing load pointer for ld64putcs (+8) and ld128putcs (+16).");
    COUNT_L = ("$COUNT_L", Lower, Both, 0x60, C1, "Tile cycle counter, low 32 bits.");
    COUNT_U = ("$COUNT_U", Lower, Both, 0x61, C1, "Tile cycle counter, high 32 bits.");
    DBG_DATA = ("$DBG_DATA", Lower, Both, 0x70, C1, "Debug data.");
    CTXT_STS = ("$CTXT_STS", Lower, Supervisor, 0x72, C1, "Run status of every context, 2 bits each: SU[1:0], W0..W5 from bit 2 (1 = running).");
    INCOMING_MUX = ("$INCOMING_MUX", Lower, Supervisor, 0xA0, A, "Exchange: the sender tile this tile listens to (receive source select).");
    INCOMING_MUXPAIR = ("$INCOMING_MUXPAIR", Lower, Supervisor, 0xA1, A, "Exchange: the pair's paired stream, the sender of 64-bit items (Tessera's put applies to its own tile only; the hardware selects it with delayxpic stream 1).");
    INCOMING_DELTA = ("$INCOMING_DELTA", Lower, Supervisor, 0xA2, A, "Exchange: byte step added to the incoming pointer after each received word.");
    INCOMING_FORMAT = ("$INCOMING_FORMAT", Lower, Supervisor, 0xA3, A, "Exchange: receive format (0 = 32-bit words; 1, 2 = 64-bit items on the paired stream, the route's direction).");
    INCOMING_BASE = ("$INCOMING_BASE", Lower, Supervisor, 0xA4, A, "Exchange: base added to the incoming pointer.");
    INCOMING_SINIT = ("$INCOMING_SINIT", Lower, Supervisor, 0xA5, A, "Exchange: writing sets the incoming pointer.");
    INCOMING_DCOUNT = ("$INCOMING_DCOUNT", Lower, Supervisor, 0xA6, A, "Exchange: words still expected by this receiver.");
    OUTGOING_BASE = ("$OUTGOING_BASE", Lower, Supervisor, 0xA7, A, "Exchange: base of the outgoing region.");
    OUTGOING_DELTA = ("$OUTGOING_DELTA", Lower, Supervisor, 0xA8, A, "Exchange: outgoing step.");
    EXCHANGE_CTL = ("$EXCHANGE_CTL", Lower, Supervisor, 0xA9, A, "Exchange control: ACTV, SEV, SWV, S64, ATMC.");
    ANS_DCOUNT = ("$ANS_DCOUNT", Lower, Supervisor, 0xAA, A, "Exchange: ANS data count.");
    EXCHANGE_ADJ = ("$EXCHANGE_ADJ", Lower, Supervisor, 0xAB, A, "Exchange: timing adjustment.");
    SNOTIFY = ("$SNOTIFY", Lower, Supervisor, 0xAC, A, "Exchange: sync notify.");
    FP_STS = ("$FP_STS", Upper, Worker, 0, C1, "Sticky flags INV[0], DIV0[1], OFLO[2]; reset at launch.");
    FP_CLR = ("$FP_CLR", Upper, Worker, 1, C, "Write 1 to clear: INV[0], DIV0[1], OFLO[2], ZAACC[3] zeroes all AMP accumulators. Reads 0.");
    FP_CTL = ("$FP_CTL", Upper, Worker, 2, C, "Exception enables INV[0] DIV0[1] OFLO[2], RND[18:16], ESR[19], NANOO[20].");
    PRNG_0_0 = ("$PRNG_0_0", Upper, Worker, 3, C1, "PRNG state word 0.");
    PRNG_0_1 = ("$PRNG_0_1", Upper, Worker, 4, C1, "PRNG state word 1.");
    PRNG_1_0 = ("$PRNG_1_0", Upper, Worker, 5, C1, "PRNG state word 2.");
    PRNG_1_1 = ("$PRNG_1_1", Upper, Worker, 6, C1, "PRNG state word 3.");
    PRNG_SEED = ("$PRNG_SEED", Upper, Worker, 7, C1, "Writing v seeds the PRNG; reads 0.");
    TAS = ("$TAS", Upper, Worker, 8, C1, "Scalar for axpy/mix (f32, or two halves).");
    FP_NFMT = ("$FP_NFMT", Upper, Worker, 9, I, "FP8 format of ARF conversions: ARF_FMT[1] (1 = F143, 0 = F152), CWEI_FMT[0].");
    FP_SCL = ("$FP_SCL", Upper, Worker, 10, I, "FP8 scale of ARF conversions, 6-bit two's complement: values are multiplied by 2^FP_SCL.");
}

/// Field layouts of the CSRs the simulator interprets.
pub mod field {
    /// `$FP_CTL.NANOO`: NaN (1) or saturate (0) on FP8 overflow. [C] bit 20 (PopLibs).
    pub const FP_CTL_NANOO: u32 = 1 << 20;
    /// `$FP_CTL.ESR`: stochastic rounding enable (not modelled: a set bit is a typed error).
    pub const FP_CTL_ESR: u32 = 1 << 19;
    /// `$FP_CLR.ZAACC`: zero all AMP accumulators. [C] TESS writes 0x8.
    pub const FP_CLR_ZAACC: u32 = 1 << 3;
    /// `$FP_NFMT.ARF_FMT`.
    pub const FP_NFMT_ARF_FMT: u32 = 1 << 1;
    /// `$FP_INFMT.CWEI_FMT` (weights).
    pub const FP_INFMT_CWEI_FMT: u32 = 1 << 0;
    /// `$FP_INFMT.ARF_FMT` (inputs).
    pub const FP_INFMT_ARF_FMT: u32 = 1 << 1;
    /// `$WSR.CTXTID_M1` mask: worker id 0..5.
    pub const WSR_CTXTID_M1_MASK: u32 = 0x7;
    /// `$CR.ZCWEI`: zero all weights.
    pub const CR_ZCWEI: u32 = 1 << 2;
    /// `$SSR.RAERR`: runall while a worker is active.
    pub const SSR_RAERR: u32 = 1 << 3;
    /// `$REPEAT_COUNT` width on ipu21.
    pub const REPEAT_COUNT_MASK: u32 = 0xffff;
}

/// Finds a CSR by name (with the `$`).
pub fn csr_by_name(name: &str) -> Option<&'static CsrDesc> {
    CSRS.iter().find(|csr| csr.name == name)
}

/// Finds the CSR a context sees at an index of a space.
pub fn csr_at(space: CsrSpace, index: u8, supervisor: bool) -> Option<&'static CsrDesc> {
    CSRS.iter().find(|csr| {
        csr.space == space
            && csr.index == index
            && match csr.context {
                CsrContext::Both => true,
                CsrContext::Worker => !supervisor,
                CsrContext::Supervisor => supervisor,
            }
    })
}

/// `$CWEI_m_n` index in the common compute configuration space (`ld64putcs` operand):
/// `4m+n` for channels 0..7 and `32+4(m−8)+n` for channels 8..15, i.e. `4m+n` throughout. [I]
pub const fn cwei_index(channel: u8, phase: u8) -> u8 {
    channel * 4 + phase
}

/// Number of `$CWEI` registers (16 channels × 4 phases, 64 bits each).
pub const CWEI_COUNT: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for (i, a) in CSRS.iter().enumerate() {
            for b in &CSRS[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
    }

    #[test]
    fn indices_are_unique_per_context_view() {
        for supervisor in [false, true] {
            for space in [CsrSpace::Lower, CsrSpace::Upper] {
                for index in 0..=255u8 {
                    let hits = CSRS
                        .iter()
                        .filter(|c| c.space == space && c.index == index)
                        .filter(|c| match c.context {
                            CsrContext::Both => true,
                            CsrContext::Worker => !supervisor,
                            CsrContext::Supervisor => supervisor,
                        })
                        .count();
                    assert!(hits <= 1, "{space:?} {index} supervisor={supervisor}");
                }
            }
        }
    }
}
