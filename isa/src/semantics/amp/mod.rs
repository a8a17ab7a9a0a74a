//! The AMP (accumulating matrix product) pipeline of a worker: `f16v4hihov4amp`,
//! `f8v8hihov4amp`, `f16v4sisoamp`, `f16v4hihoamp`, `f32sisoamp` and `f32sisov2amp`.
//!
//! **The model is a project assumption \[A\]** (the public sources give the operand shapes, the
//! 4-call pipeline depth, the phase-0 partial / phase 1–3 accumulate behaviour and the warm-up
//! / drain usage, but not the exact flag bits, queue mechanics or rounding points):
//!
//! Flags imm6: bits \[1:0\] = phase p; bits \[3:2\] = the engines that accumulate (below);
//! bits \[5:4\] must be 0 (→ `BadFlags`).
//!
//! **Engine selects** (`TAMP_*_E1`, `_E2`, `_E4`) \[A\]: engine k owns the channels whose
//! results phase k gives out (f16 forms: 2k, 2k + 1, and for the 16-channel forms 2k + 8,
//! 2k + 9 too; f32 forms, where engine k is phases 2k and 2k + 1: 2k, 2k + 1 of `f32sisoamp`,
//! 4k .. 4k + 3 of `f32sisov2amp`). With En (the field 0b00 = E1, 0b01 = E2, 0b11 = E4; 0b10,
//! a combination of engines, is not modelled → `BadFlags`) only engines 0 .. n − 1 take part in
//! steps 1 and 2 below: the other channels' accumulators are left as they are; steps 3 and 4
//! move phase p's lanes whatever n is. So popsparse's 4 × 4 blocks run as one-phase groups on
//! engine 0 (`f16v4hihov4amp … TAMP_F16V4_E1_P0`: channels 0, 1, 8, 9, one group per call), its
//! 8 × 8 blocks as two-phase groups (E2), and a call of any phase may drain results
//! (`f32sisoamp … TAMP_F32_E1_P2` gives out channels 2, 3 with only engine 0 accumulating).
//! The flag values are the project's (`TAMP_F16V4_En_Pp` = field << 2 | p, `TAMP_F32_En_Pp` =
//! field << 3 | p; `tessera isa` lists them), since the SDK's are not public.
//!
//! `f16v4hihov4amp` / `f8v8hihov4amp` (16 channels m = 0..15), per call with input pair x,
//! partial pair P (4 f16) and phase p:
//! 1. if p == 0 { finished = accumulating; accumulating\[m\] = pending\[m\] for all m }
//! 2. for every m: accumulating\[m\] = `numerics::amp::amp_phase_f16`(accumulating\[m\], x lanes,
//!    CWEI\[cwei_index(m, p)\] as 4 f16 lanes) — or `amp_phase_fp8` with the 8 FP8 bytes of x and
//!    of CWEI, x format = `$FP_INFMT` bit 1, weight format = `$FP_INFMT` bit 0 (supervisor CSRs
//!    via `env.supervisor_csr(csr::index::FP_INFMT)`), scale =
//!    `scale_from_field(env.supervisor_csr(FP_ISCL))`.
//! 3. output pair lanes i = `amp_result_out`(finished\[c\]) for i in 0..4, c =
//!    [`out_channel`]`(p, i)`: channels 2p, 2p + 1 of the first set of eight and 2p + 8, 2p + 9
//!    of the second.
//! 4. pending\[c\] = `amp_partial_in`(P lane i), c = [`out_channel`]`(p, i)`.
//!
//! The output order is the hardware's \[HW-derived\] (docs/reference/hardware-ipu-stack.md §2
//! and §3.1): osmarks/ipu-stack's F16 GEMM, numerically checked on a C600, loads `$CWEI` in the
//! order 0–7, 32–39, 8–15, 40–47, … and gets its columns in natural order, which only this
//! order gives; run here with the order 4p + i that Tessera assumed before, its columns came
//! out as 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, … The 8-channel forms below are one set of the two.
//!
//! `f16v4sisoamp` (8 channels m = 0..7, f32 partials and results, 2 per call):
//! 1. as above over 8 channels;
//! 2. `amp_phase_f16` for m in 0..8;
//! 3. output pair = (finished\[2p\], finished\[2p+1\]) as f32 bits;
//! 4. pending\[2p + i\] = f32 partial lane i.
//!
//! `f16v4hihoamp` (8 channels, f16 partials and results, 2 per call: `$aD` and `$aP` are single
//! registers of two halves): as `f16v4sisoamp`, with output lanes i = `amp_result_out`(finished\[2p
//! + i\]) and pending\[2p + i\] = `amp_partial_in`(P half i).
//!
//! The f32 forms have **8 phases** (`TAMP_F32_E4_P0..P7`, PopLibs): flags bits \[2:0\] = phase p,
//! bits \[4:3\] must be 0b11 (E4), bit 5 must be 0 (→ `BadFlags`), so `TAMP_F32_E4_Pn` = 0x18 + n.
//! A call has one f32 input x; phase p multiplies it by the f32 weight in lane p mod 2 (bits
//! \[32(p mod 2)+31 : 32(p mod 2)\]) of `$CWEI`\[cwei_index(m, p / 2)\] for every channel m, then
//! adds (product and sum each f32 RNE, `numerics::amp::amp_phase_f32`); step 1 happens on p = 0.
//! * `f32sisov2amp` (16 channels, both sets): every phase moves a pair, results (finished\[2p\],
//!   finished\[2p+1\]) out and pending\[2p + i\] = partial lane i.
//! * `f32sisoamp` (8 channels): only even phases move a pair, slots p and p + 1; an odd phase
//!   neither reads its partials nor writes its destination. PopLibs' `conv_partial_1x1_float_float.S`
//!   passes partials and a result register on P0, P2, P4, P6 and `$azeros` on the odd phases,
//!   which is what this shape requires (8 partials per group of 8 calls). The ASM-DOC says the
//!   instruction uses `$TAS` as temporary storage; the model leaves `$TAS` unchanged, so code
//!   must not rely on its value after an f32 AMP call.
//!
//! So partials for group k enter during the calls of group k−1 (the first four calls are a
//! warm-up that only feeds partials), and the results of group k leave during the calls of
//! group k+1 (four drain calls with zero inputs flush the last group). Lanes: f16 lane i and FP8
//! byte i are bits \[16i+15:16i\] and \[8i+7:8i\] of the 64-bit pair or `$CWEI` value.
//! `$azeros` works as a destination (discarded) and as input or partials (zeros).

//!
//! Execution: a phase runs all its channels at once ([`crate::numerics::amp::amp_phase_channels`],
//! bit for bit the per-channel definition) on the `$CWEI` words of the phase decoded to f32
//! lanes. The decoded lanes are kept in a [`CweiLanes`] the environment may hold
//! ([`ExecEnv::cwei_lanes`]); each phase remembers the words and the format it decoded and
//! decodes again when either differs, so the cache can never be stale, whoever wrote `$CWEI`.
//! An FP8 scale outside the f32 fast path takes the per-channel f64 definition.

use super::regs::{halves, halves4, join_halves, join_halves4, join_singles, singles, Pending};
use super::state::ContextState;
use super::{ExecEnv, Trap};
use crate::csr::{cwei_index, field, index, CWEI_COUNT};
use crate::inst::Inst;
use crate::numerics::amp::{amp_phase_channels, CALL_CHANNELS};
use crate::numerics::{
    amp_partial_in, amp_result_out, f16_to_f32, fp8_values, scale_from_field, Fp8Format, Fp8Phase,
};

/// Phases of an AMP call (the flags' phase field).
const PHASES: usize = 4;

/// How the `$CWEI` words of a phase were decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LaneFormat {
    /// Four f16 lanes per word.
    F16,
    /// Eight FP8 codes per word, as unscaled values.
    Fp8(Fp8Format),
}

/// The `$CWEI` words of one phase decoded to f32 lanes, lane-major (`lanes[i][m]`: lane i of
/// channel m), and the format they were decoded in (`None`: not decoded since the last change).
#[derive(Clone, Copy, Debug)]
struct PhaseLanes {
    format: Option<LaneFormat>,
    lanes: [[f32; CALL_CHANNELS]; 8],
}

impl Default for PhaseLanes {
    fn default() -> Self {
        PhaseLanes {
            format: None,
            lanes: [[0.0; CALL_CHANNELS]; 8],
        }
    }
}

impl PhaseLanes {
    /// Decodes the words of phase `p` of `cwei` in `format`.
    fn decode(&mut self, cwei: &[u64; CWEI_COUNT], p: usize, format: LaneFormat) {
        let words: [u64; CALL_CHANNELS] =
            std::array::from_fn(|m| cwei[cwei_index(m as u8, p as u8) as usize]);
        match format {
            LaneFormat::F16 => {
                for (m, &word) in words.iter().enumerate() {
                    for (i, lane) in self.lanes[..4].iter_mut().enumerate() {
                        lane[m] = f16_to_f32((word >> (16 * i)) as u16);
                    }
                }
            }
            LaneFormat::Fp8(fp8) => {
                let values = fp8_values(fp8);
                for (m, &word) in words.iter().enumerate() {
                    for (i, lane) in self.lanes.iter_mut().enumerate() {
                        lane[m] = values[((word >> (8 * i)) & 0xff) as usize];
                    }
                }
            }
        }
        self.format = Some(format);
    }
}

/// Decoded `$CWEI` lanes of every phase: what an environment keeps so that a phase's weights
/// are decoded once per `$CWEI` change, not once per AMP call.
///
/// The contract of an environment that hands one out ([`ExecEnv::cwei_lanes`]): it calls
/// [`CweiLanes::invalidate`] whenever `$CWEI` may change (every [`ExecEnv::cwei_mut`], the only
/// way the semantics write it) and never otherwise changes `$CWEI` behind the cache's back.
#[derive(Clone, Copy, Debug, Default)]
pub struct CweiLanes {
    phases: [PhaseLanes; PHASES],
}

impl CweiLanes {
    /// Forgets every decoded phase (`$CWEI` changed).
    #[inline]
    pub fn invalidate(&mut self) {
        for phase in &mut self.phases {
            phase.format = None;
        }
    }
}

/// The number of engines an engine-select field names (0b00 = E1, 0b01 = E2, 0b11 = E4).
pub(super) fn engines_of(field: u32) -> Option<usize> {
    match field {
        0b00 => Some(1),
        0b01 => Some(2),
        0b11 => Some(4),
        _ => None,
    }
}

/// The channels engines `0 .. n` own in a form of `channels` (8 or 16) f16 channels, as a mask.
pub(super) fn f16_engine_channels(n: usize, channels: usize) -> u16 {
    (0..n.min(PHASES)).fold(0u16, |mask, k| {
        let pair = 0b11 << (2 * k);
        if channels > 8 {
            mask | pair | pair << 8
        } else {
            mask | pair
        }
    })
}

/// Decodes the flags into the phase and the mask of accumulating channels of a form of
/// `channels` channels, or `BadFlags`.
fn phase(inst: &Inst, channels: usize) -> Result<(usize, u16), Trap> {
    let flags = inst.imm(3);
    let bad = |reason| Trap::bad_flags(inst, flags, reason);
    let Some(n) = engines_of((flags >> 2) & 3) else {
        return Err(bad(
            "bits [3:2] 0b10 (a combination of engines) are not modelled: 0b00 E1, 0b01 E2, 0b11 E4",
        ));
    };
    if flags >> 4 != 0 {
        return Err(bad("bits [5:4] must be 0"));
    }
    Ok(((flags & 3) as usize, f16_engine_channels(n, channels)))
}

/// Whether `mask` is every one of the first `channels` channels.
#[inline]
fn all_of(mask: u16, channels: usize) -> bool {
    u32::from(mask) == (1u32 << channels) - 1
}

/// Step 1 of the module doc over the channels of `mask` (a group starts at phase 0).
#[inline]
fn start_group(amp: &mut super::AmpState, p: usize, mask: u16) {
    if p != 0 {
        return;
    }
    let channels = 16 - mask.leading_zeros() as usize;
    if all_of(mask, channels) {
        amp.finished[..channels].copy_from_slice(&amp.accumulating[..channels]);
        amp.accumulating[..channels].copy_from_slice(&amp.pending[..channels]);
        return;
    }
    for m in (0..16).filter(|m| mask >> m & 1 != 0) {
        amp.finished[m] = amp.accumulating[m];
        amp.accumulating[m] = amp.pending[m];
    }
}

/// Steps 1 and 2 over the channels of `mask` with input lanes `x` (f32 values as the
/// definition multiplies them) and the phase's weights decoded in `format`.
#[inline]
fn advance<E: ExecEnv, const L: usize>(
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
    p: usize,
    mask: u16,
    x: &[f32; L],
    format: LaneFormat,
) {
    // An environment without a cache decodes into `local`, made only then (512 bytes a call).
    let mut local = None;
    let cached = env
        .cwei_lanes()
        .is_some_and(|cache| cache.phases[p].format == Some(format));
    if !cached {
        let cwei = *env.cwei();
        match env.cwei_lanes() {
            Some(cache) => cache.phases[p].decode(&cwei, p, format),
            None => local.insert(PhaseLanes::default()).decode(&cwei, p, format),
        }
    }
    let lanes = match (env.cwei_lanes(), &local) {
        (Some(cache), _) => &cache.phases[p].lanes,
        (None, Some(local)) => &local.lanes,
        (None, None) => unreachable!("an environment without a cache decodes into `local`"),
    };
    let amp = out.amp(ctx);
    start_group(amp, p, mask);
    let channels = 16 - mask.leading_zeros() as usize;
    let mut acc = [0.0f32; CALL_CHANNELS];
    acc[..channels].copy_from_slice(&amp.accumulating[..channels]);
    amp_phase_channels(&mut acc, x, lanes);
    if all_of(mask, channels) {
        amp.accumulating[..channels].copy_from_slice(&acc[..channels]);
    } else {
        for m in (0..channels).filter(|m| mask >> m & 1 != 0) {
            amp.accumulating[m] = acc[m];
        }
    }
}

/// The channel whose result lane `lane` of a 16-channel call of phase `p` carries, and whose
/// partial it takes (step 3 of the module doc): 2p, 2p + 1, 2p + 8, 2p + 9.
pub const fn out_channel(p: usize, lane: usize) -> usize {
    2 * p + (lane & 1) + 8 * (lane >> 1)
}

/// Steps 3 and 4 of the 16-channel forms (results for `$azeros` are discarded, so not made).
#[inline]
fn hiho_v4_out(inst: &Inst, ctx: &ContextState, out: &mut Pending, p: usize) {
    let partials = halves4(ctx.read_a64(inst.reg(2)));
    let discard = inst.reg(0) >= 14;
    let amp = out.amp(ctx);
    let mut result = [0u16; 4];
    for i in 0..4 {
        let c = out_channel(p, i);
        if !discard {
            result[i] = amp_result_out(amp.finished[c]);
        }
        amp.pending[c] = amp_partial_in(partials[i]);
    }
    if !discard {
        out.write_a64(inst.reg(0), join_halves4(result));
    }
}

/// The f16 input lanes of an f16 AMP call.
#[inline]
fn f16_lanes(x: u64) -> [f32; 4] {
    halves4(x).map(f16_to_f32)
}

/// `f16v4hihov4amp $aD:D+1, $aX:X+1, $aP:P+1, imm6`.
pub(super) fn f16v4hihov4amp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase(inst, 16)?;
    let x = f16_lanes(ctx.read_a64(inst.reg(1)));
    advance(ctx, env, out, p, mask, &x, LaneFormat::F16);
    hiho_v4_out(inst, ctx, out, p);
    Ok(())
}

/// `f8v8hihov4amp $aD:D+1, $aX:X+1, $aP:P+1, imm6`.
pub(super) fn f8v8hihov4amp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase(inst, 16)?;
    let infmt = env.supervisor_csr(index::FP_INFMT);
    let w_format = Fp8Format::from_format_bit(infmt & field::FP_INFMT_CWEI_FMT);
    let x = Fp8Phase::new(
        ctx.read_a64(inst.reg(1)).to_le_bytes(),
        Fp8Format::from_format_bit((infmt & field::FP_INFMT_ARF_FMT) >> 1),
        w_format,
        scale_from_field(env.supervisor_csr(index::FP_ISCL)),
    );
    match x.scaled_lanes() {
        Some(lanes) => advance(ctx, env, out, p, mask, lanes, LaneFormat::Fp8(w_format)),
        None => {
            // A scale off the f32 fast path: the per-channel definition, in f64.
            let cwei = env.cwei();
            let amp = out.amp(ctx);
            start_group(amp, p, mask);
            for m in (0..16).filter(|m| mask >> m & 1 != 0) {
                let weights = cwei[cwei_index(m as u8, p as u8) as usize];
                amp.accumulating[m] = x.apply(amp.accumulating[m], weights.to_le_bytes());
            }
        }
    }
    hiho_v4_out(inst, ctx, out, p);
    Ok(())
}

/// `f16v4sisoamp $aD:D+1, $aX:X+1, $aP:P+1, imm6`.
pub(super) fn f16v4sisoamp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase(inst, 8)?;
    let x = f16_lanes(ctx.read_a64(inst.reg(1)));
    advance(ctx, env, out, p, mask, &x, LaneFormat::F16);
    let partials = singles(ctx.read_a64(inst.reg(2)));
    let amp = out.amp(ctx);
    let result = [amp.finished[2 * p], amp.finished[2 * p + 1]];
    amp.pending[2 * p] = partials[0];
    amp.pending[2 * p + 1] = partials[1];
    out.write_a64(inst.reg(0), join_singles(result));
    Ok(())
}

/// `f16v4hihoamp $aD, $aX:X+1, $aP, imm6`.
pub(super) fn f16v4hihoamp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase(inst, 8)?;
    let x = f16_lanes(ctx.read_a64(inst.reg(1)));
    advance(ctx, env, out, p, mask, &x, LaneFormat::F16);
    let partials = halves(ctx.read_a(inst.reg(2)));
    let amp = out.amp(ctx);
    let result = [
        amp_result_out(amp.finished[2 * p]),
        amp_result_out(amp.finished[2 * p + 1]),
    ];
    amp.pending[2 * p] = amp_partial_in(partials[0]);
    amp.pending[2 * p + 1] = amp_partial_in(partials[1]);
    out.write_a(inst.reg(0), join_halves(result));
    Ok(())
}

mod f32;
pub(super) use f32::{f32sisoamp, f32sisov2amp};

#[cfg(test)]
mod tests;
