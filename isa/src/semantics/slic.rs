//! Slim convolution (SLIC) through the accumulators: `f16v4sisoslic`, `f16v4hihoslic` and
//! `f16v4hihov4slic`.
//!
//! ASM-DOC's `f16v4sisoslic` table (the 2x1x4x4 example) \[C\] shows a 1x4 systolic convolution
//! with 2 output channels: call k supplies an f16v4 input x_k and partials P_2k, P_2k+1; it
//! starts R_2k+c = x_k · CW_{6+c,0} + P_2k+c, adds x_k · CW_{4+c,0}, x_k · CW_{2+c,0} and
//! x_k · CW_{0+c,0} to the results started one, two and three calls before, and writes to the
//! destination the pair finished on the call before (R_2k−8, R_2k−7). The results live in
//! `$AACC`\[12\], \[8\], \[4\], \[0\] (even channel) and \[14\], \[10\], \[6\], \[2\] (odd channel).
//!
//! **The model** (the table made general; \[A\] where the table is silent):
//! * C output channels: 2 (`f16v4sisoslic`, f32 partials and results; `f16v4hihoslic`, f16
//!   partials and results, two halves in single registers) or 4 (`f16v4hihov4slic`, f16 pairs);
//!   f16 partials enter exactly and f16 results leave RNE, as the AMP's \[A for the f16 forms\].
//! * Stage s = 0..3 of channel c (a result that has had s + 1 taps) is `$AACC`\[12 − 4s + (4/C)·c\].
//! * Tap t of channel c uses `$CWEI`\[cwei_index(C·(3 − t) + c, n)\], 4 f16 lanes.
//! * A call: the destination gets stage 3 of every channel; then for s = 3, 2, 1 stage s =
//!   `amp_phase_f16`(stage s − 1, x, tap s) and stage 0 = `amp_phase_f16`(P_c, x, tap 0): the AMP's
//!   arithmetic (`numerics::amp`), starting from the value the taps are added to.
//! * Flags imm6 \[A\]: bits \[1:0\] must be 0b11 (the 1x4 kernel; ASM-DOC's 1x3 form is not
//!   modelled, → `BadFlags`), bit 2 = n, the `$CWEI` phase that holds the weights (PopLibs'
//!   `TSLIC_F16V4_1x4_W0` / `_W1` alternate two weight sets), bits \[5:3\] must be 0. So
//!   `TSLIC_F16V4_1x4_W0` = 3 and `TSLIC_F16V4_1x4_W1` = 7.
//! * SLIC and the AMP share nothing but `$AACC`: a kernel zeroes the accumulators (`$FP_CLR`)
//!   or drains with `$azeros` before switching, as PopLibs does.

use super::regs::{halves, halves4, join_halves, join_halves4, join_singles, singles, Pending};
use super::state::ContextState;
use super::{ExecEnv, Trap};
use crate::csr::cwei_index;
use crate::inst::Inst;
use crate::numerics::{amp_partial_in, amp_phase_f16, amp_result_out};

/// Taps of the modelled kernel (1x4).
const TAPS: usize = 4;

/// The `$CWEI` phase the flags select, or `BadFlags`.
fn weight_phase(inst: &Inst) -> Result<u8, Trap> {
    let flags = inst.imm(3);
    let bad = |reason| Trap::bad_flags(inst, flags, reason);
    if flags & 3 != 3 {
        return Err(bad(
            "bits [1:0] must be 0b11 (the 1x4 kernel); other kernels are not modelled",
        ));
    }
    if flags >> 3 != 0 {
        return Err(bad("bits [5:3] must be 0"));
    }
    Ok(((flags >> 2) & 1) as u8)
}

/// The `$AACC` entry of stage s, channel c, for C channels.
#[inline]
fn entry(s: usize, c: usize, channels: usize) -> usize {
    12 - 4 * s + (4 / channels) * c
}

/// One call over `C` channels with partials already widened to f32; returns stage 3 of every
/// channel as it was.
fn step<E: ExecEnv, const C: usize>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
    partials: [f32; C],
) -> Result<[f32; C], Trap> {
    let n = weight_phase(inst)?;
    let x = halves4(ctx.read_a64(inst.reg(1)));
    let cwei = env.cwei();
    let tap =
        |t: usize, c: usize| halves4(cwei[cwei_index((C * (TAPS - 1 - t) + c) as u8, n) as usize]);
    let weights: [[[u16; 4]; C]; TAPS] =
        std::array::from_fn(|t| std::array::from_fn(|c| tap(t, c)));
    let acc = out.aacc(ctx);
    let finished = std::array::from_fn(|c| acc[entry(TAPS - 1, c, C)]);
    for c in 0..C {
        for s in (1..TAPS).rev() {
            acc[entry(s, c, C)] = amp_phase_f16(acc[entry(s - 1, c, C)], x, weights[s][c]);
        }
        acc[entry(0, c, C)] = amp_phase_f16(partials[c], x, weights[0][c]);
    }
    Ok(finished)
}

/// `f16v4sisoslic $aD:D+1, $aX:X+1, $aP:P+1, imm6`.
pub(super) fn f16v4sisoslic<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let partials = singles(ctx.read_a64(inst.reg(2)));
    let finished = step::<E, 2>(inst, ctx, env, out, partials)?;
    out.write_a64(inst.reg(0), join_singles(finished));
    Ok(())
}

/// `f16v4hihoslic $aD, $aX:X+1, $aP, imm6`.
pub(super) fn f16v4hihoslic<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let partials = halves(ctx.read_a(inst.reg(2))).map(amp_partial_in);
    let finished = step::<E, 2>(inst, ctx, env, out, partials)?;
    out.write_a(inst.reg(0), join_halves(finished.map(amp_result_out)));
    Ok(())
}

/// `f16v4hihov4slic $aD:D+1, $aX:X+1, $aP:P+1, imm6`.
pub(super) fn f16v4hihov4slic<E: ExecEnv>(
    inst: &Inst,
    ctx: &ContextState,
    env: &mut E,
    out: &mut Pending,
) -> Result<(), Trap> {
    let partials = halves4(ctx.read_a64(inst.reg(2))).map(amp_partial_in);
    let finished = step::<E, 4>(inst, ctx, env, out, partials)?;
    out.write_a64(inst.reg(0), join_halves4(finished.map(amp_result_out)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::csr::cwei_index;
    use crate::inst::Opcode::{self, *};
    use crate::numerics::{f16_to_f32, f32_to_f16};
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    use crate::semantics::regs::join_halves4 as lanes;

    /// Small f16 values of a few bits, from a counter.
    fn f16_at(k: usize) -> u16 {
        f32_to_f16(((k * 7919) % 257) as f32 / 32.0 - 4.0)
    }

    /// A 1x4 convolution of K input vectors over C output channels, weights in `$CWEI` phase
    /// n, against the ASM-DOC table's sums: y_j,c = P_j,c + Σ_t x_(j+t) · CW_(C(3−t)+c, n),
    /// taps in order, inputs past the end zero (the drain calls feed `$azeros`).
    fn convolution(op: Opcode, channels: usize, n: u8) {
        const K: usize = 7;
        let mut env = TestEnv::new();
        let weight = |m: usize| -> [u16; 4] { std::array::from_fn(|i| f16_at(100 + 4 * m + i)) };
        for m in 0..4 * channels {
            env.cwei[cwei_index(m as u8, n) as usize] = lanes(weight(m));
            // The other phase must not take part.
            env.cwei[cwei_index(m as u8, 1 - n) as usize] = u64::MAX;
        }
        let x: Vec<[u16; 4]> = (0..K)
            .map(|j| std::array::from_fn(|i| f16_at(4 * j + i)))
            .collect();
        let p: Vec<Vec<f32>> = (0..K)
            .map(|j| {
                (0..channels)
                    .map(|c| f16_to_f32(f16_at(500 + 4 * j + c)))
                    .collect()
            })
            .collect();
        let mut ctx = worker();
        let flags = 3 | u32::from(n) << 2;
        let mut outputs = Vec::new();
        for k in 0..K + 4 {
            let (xr, pr) = if k < K { (0, 2) } else { (14, 14) };
            if k < K {
                ctx.write_a64(0, lanes(x[k]));
                let partial = if op == F16v4hihoslic {
                    lanes([f32_to_f16(p[k][0]), f32_to_f16(p[k][1]), 0, 0])
                } else if channels == 2 {
                    p[k][0].to_bits() as u64 | (p[k][1].to_bits() as u64) << 32
                } else {
                    lanes(std::array::from_fn(|c| f32_to_f16(p[k][c])))
                };
                ctx.write_a64(2, partial);
            }
            ok(&mut ctx, &mut env, one(op, &[4, xr, pr, flags]));
            outputs.push(if op == F16v4hihoslic {
                u64::from(ctx.a[4])
            } else {
                ctx.read_a64(4)
            });
        }
        for j in 0..K {
            for (c, &partial) in p[j].iter().enumerate() {
                let mut acc = partial;
                for t in 0..4 {
                    let w = weight(channels * (3 - t) + c);
                    for i in 0..4 {
                        let xv = x.get(j + t).map_or(0.0, |v| f16_to_f32(v[i]));
                        acc += xv * f16_to_f32(w[i]);
                    }
                }
                let out = outputs[j + 4];
                let f32_io = op == F16v4sisoslic;
                let got = if f32_io {
                    (out >> (32 * c)) as u32 as u64
                } else {
                    (out >> (16 * c)) as u16 as u64
                };
                let want = if f32_io {
                    acc.to_bits() as u64
                } else {
                    f32_to_f16(acc) as u64
                };
                assert_eq!(got, want, "{op:?} n {n} output {j} channel {c}");
            }
        }
    }

    #[test]
    fn siso_slic_is_the_documented_1x4_convolution() {
        convolution(F16v4sisoslic, 2, 0);
        convolution(F16v4sisoslic, 2, 1);
    }

    #[test]
    fn hiho_slic_convolves_two_channels_in_single_registers() {
        convolution(F16v4hihoslic, 2, 0);
        convolution(F16v4hihoslic, 2, 1);
    }

    #[test]
    fn hiho_v4_slic_convolves_four_channels() {
        convolution(F16v4hihov4slic, 4, 0);
        convolution(F16v4hihov4slic, 4, 1);
    }

    #[test]
    fn slic_flags_other_than_the_1x4_kernel_trap() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for bad in [0, 1, 2, 0b1011, 0b10_0011] {
            for op in [F16v4sisoslic, F16v4hihoslic, F16v4hihov4slic] {
                let kind = traps(&mut ctx, &mut env, one(op, &[4, 0, 2, bad]));
                assert!(matches!(kind, TrapKind::BadFlags { flags, .. } if flags == bad));
            }
        }
    }
}
