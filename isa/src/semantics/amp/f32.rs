//! The f32 AMP forms, `f32sisoamp` and `f32sisov2amp`: eight phases, one f32 input a call
//! (the module doc of [`super`] gives the model).

use super::super::regs::{join_singles, singles, Pending};
use super::super::state::ContextState;
use super::super::{ExecEnv, Trap};
use crate::csr::{cwei_index, CWEI_COUNT};
use crate::inst::Inst;
use crate::numerics::amp::{amp_phase_f32, CALL_CHANNELS};

/// Decodes the f32 forms' flags into the phase (0..8) and the mask of accumulating channels of
/// a form of `channels` (8 or 16) channels, or `BadFlags`. Engine k is phases 2k and 2k + 1,
/// whose result slots are channels 2k, 2k + 1 (8 channels) or 4k .. 4k + 3 (16).
fn phase_f32(inst: &Inst, channels: usize) -> Result<(usize, u16), Trap> {
    let flags = inst.imm(3);
    let bad = |reason| Trap::bad_flags(inst, flags, reason);
    let Some(n) = super::engines_of((flags >> 3) & 3) else {
        return Err(bad(
            "bits [4:3] 0b10 (a combination of engines) are not modelled: 0b00 E1, 0b01 E2, 0b11 E4",
        ));
    };
    if flags >> 5 != 0 {
        return Err(bad("bit 5 must be 0"));
    }
    let per_engine = channels / 4;
    let mask = ((1u32 << (per_engine * n)) - 1) as u16;
    Ok(((flags & 7) as usize, mask))
}

/// The f32 weight of channel m at phase p of the f32 forms.
#[inline]
fn f32_weight(cwei: &[u64; CWEI_COUNT], m: usize, p: usize) -> f32 {
    let word = cwei[cwei_index(m as u8, (p / 2) as u8) as usize];
    f32::from_bits((word >> (32 * (p % 2))) as u32)
}

/// Steps 1 and 2 of the f32 forms over the channels of `mask`.
fn advance_f32<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
    p: usize,
    mask: u16,
) {
    let x = f32::from_bits(ctx.read_a(inst.reg(1)));
    let cwei = env.cwei();
    let weights: [f32; CALL_CHANNELS] = std::array::from_fn(|m| f32_weight(cwei, m, p));
    let amp = out.amp(ctx);
    super::start_group(amp, p, mask);
    for m in (0..CALL_CHANNELS).filter(|m| mask >> m & 1 != 0) {
        amp.accumulating[m] = amp_phase_f32(amp.accumulating[m], x, weights[m]);
    }
}

/// Moves one result pair out of and one partial pair into slots `slot`, `slot + 1`.
fn f32_pair_out(inst: &Inst, ctx: &ContextState, out: &mut Pending, slot: usize) {
    let partials = singles(ctx.read_a64(inst.reg(2)));
    let amp = out.amp(ctx);
    let result = [amp.finished[slot], amp.finished[slot + 1]];
    amp.pending[slot] = partials[0];
    amp.pending[slot + 1] = partials[1];
    out.write_a64(inst.reg(0), join_singles(result));
}

/// `f32sisoamp $aD:D+1, $aX, $aP:P+1, imm6`.
pub(in crate::semantics) fn f32sisoamp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase_f32(inst, 8)?;
    advance_f32(inst, ctx, env, out, p, mask);
    if p.is_multiple_of(2) {
        f32_pair_out(inst, ctx, out, p);
    }
    Ok(())
}

/// `f32sisov2amp $aD:D+1, $aX, $aP:P+1, imm6`.
pub(in crate::semantics) fn f32sisov2amp<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let (p, mask) = phase_f32(inst, 16)?;
    advance_f32(inst, ctx, env, out, p, mask);
    f32_pair_out(inst, ctx, out, 2 * p);
    Ok(())
}
