//! The AMP pipeline's tests: products through whole call sequences against plain matrix
//! arithmetic, flag checks and the decoded-lane cache.

use super::out_channel;
use crate::csr::{cwei_index, index};
use crate::inst::Bundle;
use crate::inst::Opcode::{self, *};
use crate::numerics::{
    amp_partial_in, amp_phase_f16, amp_phase_fp8, amp_result_out, f32_to_f16, scale_to_field,
    Fp8Format,
};
use crate::semantics::test_env::*;
use crate::semantics::{ContextState, TrapKind};

/// E4 flags for phase p.
fn flags(p: usize) -> u32 {
    0b1100 | p as u32
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }

    /// An FP8 code of moderate magnitude, never the NaN code.
    fn fp8(&mut self) -> u8 {
        let r = self.next();
        let code = (r & 0x80) as u8 | ((r >> 8) & 0x4f) as u8;
        if code == 0x80 {
            0
        } else {
            code
        }
    }

    /// An f16 in [-4, 4) with a few significant bits.
    fn f16(&mut self) -> u16 {
        f32_to_f16((self.next() % 512) as f32 / 64.0 - 4.0)
    }
}

fn halves4(h: &[u16]) -> u64 {
    h.iter()
        .enumerate()
        .fold(0, |acc, (i, &x)| acc | (x as u64) << (16 * i))
}

fn amp_call(
    ctx: &mut ContextState,
    env: &mut TestEnv,
    op: Opcode,
    dst: u32,
    x: u32,
    partials: u32,
    p: usize,
) {
    ok(ctx, env, one(op, &[dst, x, partials, flags(p)]));
}

#[test]
fn flags_must_select_e1_e2_or_e4_and_leave_the_top_bits_clear() {
    let (mut ctx, mut env) = (worker(), TestEnv::new());
    for bad in [0b1000, 0b1011, 0b01_1100, 0b10_1101, 0b01_0000] {
        for op in [F16v4hihov4amp, F8v8hihov4amp, F16v4sisoamp] {
            let kind = traps(&mut ctx, &mut env, one(op, &[0, 2, 4, bad]));
            assert!(
                matches!(kind, TrapKind::BadFlags { flags, .. } if flags == bad),
                "{op:?} {bad:#b}"
            );
        }
    }
    assert!(matches!(
        traps(
            &mut supervisor(),
            &mut env,
            one(F16v4hihov4amp, &[0, 2, 4, 0b1100])
        ),
        TrapKind::WrongContext { .. }
    ));
}

/// 16 × 32 FP8 weights times three input vectors, with f16 partials: warm-up (4 calls that
/// only feed partials, into `$azeros`), three groups of 4 phases, then 4 drain calls.
#[test]
fn fp8_matrix_vector_product_through_the_pipeline() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (x_format, w_format, scale) = (Fp8Format::F143, Fp8Format::F152, -2);
    let weights: Vec<[u8; 32]> = (0..16).map(|_| [0; 32].map(|_: u8| rng.fp8())).collect();
    const GROUPS: usize = 3;
    let inputs: Vec<[u8; 32]> = (0..GROUPS)
        .map(|_| [0; 32].map(|_: u8| rng.fp8()))
        .collect();
    let partials: Vec<[u16; 16]> = (0..GROUPS)
        .map(|_| [0; 16].map(|_: u16| rng.f16()))
        .collect();

    let mut env = TestEnv::new();
    for (m, row) in weights.iter().enumerate() {
        for p in 0..4 {
            let bytes: [u8; 8] = row[8 * p..8 * p + 8].try_into().unwrap();
            env.cwei[cwei_index(m as u8, p as u8) as usize] = u64::from_le_bytes(bytes);
        }
    }
    env.supervisor_csr[index::FP_INFMT as usize] =
        x_format.format_bit() << 1 | w_format.format_bit();
    env.supervisor_csr[index::FP_ISCL as usize] = scale_to_field(scale);

    // The reference, in the documented order.
    let reference: Vec<[u16; 16]> = (0..GROUPS)
        .map(|g| {
            std::array::from_fn(|m| {
                let mut acc = amp_partial_in(partials[g][m]);
                for p in 0..4 {
                    let x: [u8; 8] = inputs[g][8 * p..8 * p + 8].try_into().unwrap();
                    let w: [u8; 8] = weights[m][8 * p..8 * p + 8].try_into().unwrap();
                    acc = amp_phase_fp8(acc, x, w, x_format, w_format, scale);
                }
                amp_result_out(acc)
            })
        })
        .collect();

    let mut ctx = worker();
    let set_partials = |ctx: &mut ContextState, g: usize, p: usize| {
        ctx.write_a64(2, halves4(&phase_lanes(&partials[g], p)));
    };
    // Warm-up: zero inputs ($azeros), partials of group 0, results discarded ($azeros).
    for p in 0..4 {
        set_partials(&mut ctx, 0, p);
        amp_call(&mut ctx, &mut env, F8v8hihov4amp, 14, 14, 2, p);
    }
    let mut results = [[0u16; 16]; GROUPS + 1];
    for g in 0..GROUPS {
        for p in 0..4 {
            ctx.write_a64(
                0,
                u64::from_le_bytes(inputs[g][8 * p..8 * p + 8].try_into().unwrap()),
            );
            let partial_register = if g + 1 < GROUPS {
                set_partials(&mut ctx, g + 1, p);
                2
            } else {
                14
            };
            amp_call(&mut ctx, &mut env, F8v8hihov4amp, 4, 0, partial_register, p);
            let out = ctx.read_a64(4);
            for i in 0..4 {
                results[g][out_channel(p, i)] = (out >> (16 * i)) as u16;
            }
        }
    }
    // Drain: zero inputs and partials.
    for p in 0..4 {
        amp_call(&mut ctx, &mut env, F8v8hihov4amp, 4, 14, 14, p);
        let out = ctx.read_a64(4);
        for i in 0..4 {
            results[GROUPS][out_channel(p, i)] = (out >> (16 * i)) as u16;
        }
    }
    // Results of group g come out during the calls of group g + 1.
    assert_eq!(results[0], [0; 16], "the warm-up group is all zeros");
    for g in 0..GROUPS {
        assert_eq!(results[g + 1], reference[g], "group {g}");
    }
    assert!(reference.iter().flatten().any(|&h| h != 0 && h != 0x8000));
}

/// An environment that keeps decoded `$CWEI` between calls gives exactly what decoding per
/// call gives, over random AMP calls of all three forms interleaved with `$CWEI` writes
/// (through `cwei_mut`, as the supervisor's loads make them) and weight-format changes.
#[test]
fn cached_weight_lanes_give_what_decoding_per_call_gives() {
    use crate::semantics::{CweiLanes, ExecEnv};
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut plain, mut cached) = (TestEnv::new(), TestEnv::new());
    cached.lanes = Some(CweiLanes::default());
    let (mut plain_ctx, mut cached_ctx) = (worker(), worker());
    for step in 0..4000 {
        match rng.next() % 8 {
            0 => {
                let (index, value) = (
                    rng.next() as usize % crate::csr::CWEI_COUNT,
                    u64::from(rng.next()) << 32 | u64::from(rng.next()),
                );
                plain.cwei_mut()[index] = value;
                cached.cwei_mut()[index] = value;
            }
            1 => {
                let infmt = rng.next() & 3;
                plain.supervisor_csr[index::FP_INFMT as usize] = infmt;
                cached.supervisor_csr[index::FP_INFMT as usize] = infmt;
                let iscl = scale_to_field((rng.next() % 16) as i32 - 8);
                plain.supervisor_csr[index::FP_ISCL as usize] = iscl;
                cached.supervisor_csr[index::FP_ISCL as usize] = iscl;
            }
            _ => {
                let op = [F8v8hihov4amp, F16v4hihov4amp, F16v4sisoamp][rng.next() as usize % 3];
                for r in 0..8 {
                    let value = rng.next();
                    plain_ctx.a[r] = value;
                    cached_ctx.a[r] = value;
                }
                let operands = [
                    [4, 6, 14][rng.next() as usize % 3],
                    [0, 14][rng.next() as usize % 2],
                    [2, 14][rng.next() as usize % 2],
                    flags(rng.next() as usize % 4),
                ];
                ok(&mut plain_ctx, &mut plain, one(op, &operands));
                ok(&mut cached_ctx, &mut cached, one(op, &operands));
            }
        }
        // Bit for bit (NaN accumulators compare unequal as floats).
        let bits = |ctx: &ContextState| {
            let amp = &ctx.amp;
            let lanes = [amp.pending, amp.accumulating, amp.finished];
            (ctx.a, lanes.map(|l| l.map(f32::to_bits)))
        };
        assert_eq!(bits(&plain_ctx), bits(&cached_ctx), "step {step}");
    }
}

/// 16 × 16 f16 weights, two input vectors, the inputs and partials streamed from memory by a
/// co-issued `ld2x64pace`: the AMP in the aux slot consumes the registers the previous
/// bundle loaded while the main slot loads the next call's operands.
#[test]
fn f16_matrix_vector_product_with_co_issued_loads() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    const GROUPS: usize = 2;
    let weights: Vec<[u16; 16]> = (0..16).map(|_| [0; 16].map(|_: u16| rng.f16())).collect();
    let inputs: Vec<[u16; 16]> = (0..GROUPS)
        .map(|_| [0; 16].map(|_: u16| rng.f16()))
        .collect();
    let partials: Vec<[u16; 16]> = (0..GROUPS)
        .map(|_| [0; 16].map(|_: u16| rng.f16()))
        .collect();
    let mut env = TestEnv::new();
    for (m, row) in weights.iter().enumerate() {
        for p in 0..4 {
            env.cwei[cwei_index(m as u8, p as u8) as usize] = halves4(&row[4 * p..4 * p + 4]);
        }
    }
    // Call k reads x_k at X + 16k and P_k at X + 8 + 16k (the other element of the pair).
    // Calls: 4 warm-up (x = 0, P = group 0), 4 per group (x = group g, P = group g+1 or 0),
    // 4 drain (zeros), and one extra slot for the last prefetch.
    const X: u32 = INTERLEAVED_BASE;
    let calls = 4 + 4 * GROUPS + 4;
    for k in 0..calls {
        let (p, stage) = (k % 4, k / 4);
        let x = if (1..=GROUPS).contains(&stage) {
            halves4(&inputs[stage - 1][4 * p..4 * p + 4])
        } else {
            0
        };
        let partial = if stage < GROUPS {
            halves4(&phase_lanes(&partials[stage], p))
        } else {
            0
        };
        env.write_u64(X + 16 * k as u32, x);
        env.write_u64(X + 8 + 16 * k as u32, partial);
    }
    let mut program = Program::new(CODE);
    let mut ctx = worker();
    ctx.m[0] = X;
    ctx.m[1] = X + 8;
    ctx.m[4] = X + 0x1_0000;
    ctx.m[5] = 2; // stride field 0 = +2 atoms
    program.push(one(Tapack, &[2, 0, 1, 4]));
    let load = i(Ld2x64pace, &[0, 2, 2, 5, 0b0101]);
    program.push(Bundle::single(load));
    for k in 0..calls {
        program.push(pair(load, i(F16v4hihov4amp, &[4, 0, 2, flags(k % 4)])));
    }
    let mut results = Vec::new();
    for _ in 0..2 {
        let bundle = program.bundles[&ctx.pc];
        ok(&mut ctx, &mut env, bundle);
    }
    for _ in 0..calls {
        let bundle = program.bundles[&ctx.pc];
        ok(&mut ctx, &mut env, bundle);
        results.push(ctx.read_a64(4));
    }
    for g in 0..GROUPS {
        for m in 0..16 {
            let mut acc = amp_partial_in(partials[g][m]);
            for p in 0..4 {
                let x: [u16; 4] = inputs[g][4 * p..4 * p + 4].try_into().unwrap();
                let w: [u16; 4] = weights[m][4 * p..4 * p + 4].try_into().unwrap();
                acc = amp_phase_f16(acc, x, w);
            }
            // Channel m leaves in phase (m mod 8) / 2, lane (m mod 2) + 2 (m / 8).
            let (p, lane) = ((m % 8) / 2, (m % 2) + 2 * (m / 8));
            assert_eq!(out_channel(p, lane), m);
            let out = results[4 * (g + 2) + p];
            assert_eq!(
                (out >> (16 * lane)) as u16,
                amp_result_out(acc),
                "group {g} channel {m}"
            );
        }
    }
    assert!(
        results[4..8].iter().all(|&r| r == 0),
        "warm-up results are zero"
    );
}

/// 8 channels with f32 partials and results (`f16v4sisoamp`), one group.
#[test]
fn siso_amp_with_f32_partials() {
    let mut rng = Rng(0x0bad_cafe_f00d_beef);
    let weights: Vec<[u16; 16]> = (0..8).map(|_| [0; 16].map(|_: u16| rng.f16())).collect();
    let input: [u16; 16] = [0; 16].map(|_: u16| rng.f16());
    let partials: [f32; 8] = [0.0; 8].map(|_: f32| (rng.next() % 1000) as f32 / 7.0);
    let mut env = TestEnv::new();
    for (m, row) in weights.iter().enumerate() {
        for p in 0..4 {
            env.cwei[cwei_index(m as u8, p as u8) as usize] = halves4(&row[4 * p..4 * p + 4]);
        }
    }
    // Channels 8..15 must be ignored by the 8-channel form.
    env.cwei[cwei_index(12, 0) as usize] = u64::MAX;
    let mut ctx = worker();
    let f2 = |a: f32, b: f32| a.to_bits() as u64 | (b.to_bits() as u64) << 32;
    for p in 0..4 {
        ctx.write_a64(2, f2(partials[2 * p], partials[2 * p + 1]));
        amp_call(&mut ctx, &mut env, F16v4sisoamp, 14, 14, 2, p);
    }
    for p in 0..4 {
        ctx.write_a64(0, halves4(&input[4 * p..4 * p + 4]));
        amp_call(&mut ctx, &mut env, F16v4sisoamp, 4, 0, 14, p);
        assert_eq!(ctx.read_a64(4), 0, "warm-up results");
    }
    let mut results = [0f32; 8];
    for p in 0..4 {
        amp_call(&mut ctx, &mut env, F16v4sisoamp, 4, 14, 14, p);
        let out = ctx.read_a64(4);
        results[2 * p] = f32::from_bits(out as u32);
        results[2 * p + 1] = f32::from_bits((out >> 32) as u32);
    }
    for m in 0..8 {
        let mut acc = partials[m];
        for p in 0..4 {
            let x: [u16; 4] = input[4 * p..4 * p + 4].try_into().unwrap();
            let w: [u16; 4] = weights[m][4 * p..4 * p + 4].try_into().unwrap();
            acc = amp_phase_f16(acc, x, w);
        }
        assert_eq!(results[m].to_bits(), acc.to_bits(), "channel {m}");
    }
    assert_eq!(ctx.amp.accumulating[12], 0.0, "channels 8..15 untouched");
}

/// 8 channels with f16 partials and results in single registers (`f16v4hihoamp`), two
/// groups through the pipeline; the reference is the module doc's sum, written out.
#[test]
fn hiho_amp_with_f16_partials_in_single_registers() {
    let mut rng = Rng(0x5151_a0a0_1234_9876);
    let weights: Vec<[u16; 16]> = (0..8).map(|_| [0; 16].map(|_: u16| rng.f16())).collect();
    let inputs: Vec<[u16; 16]> = (0..2).map(|_| [0; 16].map(|_: u16| rng.f16())).collect();
    let partials: Vec<[u16; 8]> = (0..2).map(|_| [0; 8].map(|_: u16| rng.f16())).collect();
    let mut env = TestEnv::new();
    for (m, row) in weights.iter().enumerate() {
        for p in 0..4 {
            env.cwei[cwei_index(m as u8, p as u8) as usize] = halves4(&row[4 * p..4 * p + 4]);
        }
    }
    let mut ctx = worker();
    let two = |h: &[u16]| h[0] as u32 | (h[1] as u32) << 16;
    let mut results = Vec::new();
    // Warm-up (partials of group 0), group 0 (partials of group 1), group 1, drain.
    for stage in 0..4 {
        for p in 0..4 {
            let x = if (1..=2).contains(&stage) {
                halves4(&inputs[stage - 1][4 * p..4 * p + 4])
            } else {
                0
            };
            ctx.write_a64(0, x);
            ctx.a[2] = if stage < 2 {
                two(&partials[stage][2 * p..2 * p + 2])
            } else {
                0
            };
            amp_call(&mut ctx, &mut env, F16v4hihoamp, 4, 0, 2, p);
            results.push(ctx.a[4]);
        }
    }
    for g in 0..2 {
        for m in 0..8 {
            let mut acc = amp_partial_in(partials[g][m]);
            for p in 0..4 {
                for i in 0..4 {
                    let x = crate::numerics::f16_to_f32(inputs[g][4 * p + i]);
                    let w = crate::numerics::f16_to_f32(weights[m][4 * p + i]);
                    acc += x * w;
                }
            }
            let out = results[4 * (g + 2) + m / 2];
            assert_eq!(
                (out >> (16 * (m % 2))) as u16,
                amp_result_out(acc),
                "group {g} channel {m}"
            );
        }
    }
    assert!(results[4..8].iter().all(|&r| r == 0), "warm-up results");
}

/// f32 flags: phase in bits [2:0], E4 in bits [4:3], bit 5 clear.
fn flags_f32(p: usize) -> u32 {
    0x18 | p as u32
}

/// Runs `groups` groups of 8 f32 inputs through an f32 AMP form the way PopLibs'
/// `conv_partial_1x1_float_float*.S` does (a warm-up group of zero inputs, then one group
/// per input vector, then a drain group), feeding partials and collecting results on the
/// phases the form moves them; returns the results of every group after the warm-up.
fn run_f32(
    op: Opcode,
    env: &mut TestEnv,
    inputs: &[[f32; 8]],
    partials: &[Vec<f32>],
) -> Vec<Vec<f32>> {
    let channels = partials[0].len();
    let moves = |p: usize| op == F32sisov2amp || p.is_multiple_of(2);
    let slot = |p: usize| if op == F32sisov2amp { 2 * p } else { p };
    let mut ctx = worker();
    let mut out = Vec::new();
    for stage in 0..inputs.len() + 2 {
        let mut results = vec![0f32; channels];
        for p in 0..8 {
            ctx.a[0] = if (1..=inputs.len()).contains(&stage) {
                inputs[stage - 1][p].to_bits()
            } else {
                0
            };
            let feeds = stage < inputs.len() && moves(p);
            let (dst, src) = if moves(p) { (4, 2) } else { (14, 14) };
            if feeds {
                let k = slot(p);
                ctx.a[2] = partials[stage][k].to_bits();
                ctx.a[3] = partials[stage][k + 1].to_bits();
            } else {
                ctx.a[2] = 0;
                ctx.a[3] = 0;
            }
            ok(&mut ctx, env, one(op, &[dst, 0, src, flags_f32(p)]));
            if moves(p) {
                let k = slot(p);
                results[k] = f32::from_bits(ctx.a[4]);
                results[k + 1] = f32::from_bits(ctx.a[5]);
            }
        }
        if stage > 0 {
            out.push(results);
        }
    }
    out
}

#[test]
fn f32_amp_forms_multiply_a_matrix_by_vectors_over_eight_phases() {
    let mut rng = Rng(0x0f32_0f32_0f32_0f32);
    let mut f32v = || (rng.next() % 20001) as f32 / 1000.0 - 10.0;
    for (op, channels) in [(F32sisoamp, 8usize), (F32sisov2amp, 16)] {
        // Weight of channel m, input channel p: lane p % 2 of $CWEI[m][p / 2].
        let weights: Vec<[f32; 8]> = (0..channels).map(|_| [0f32; 8].map(|_| f32v())).collect();
        let mut env = TestEnv::new();
        for (m, row) in weights.iter().enumerate() {
            for n in 0..4 {
                env.cwei[cwei_index(m as u8, n as u8) as usize] =
                    row[2 * n].to_bits() as u64 | (row[2 * n + 1].to_bits() as u64) << 32;
            }
        }
        if channels == 8 {
            // The other set must not take part.
            env.cwei[cwei_index(9, 0) as usize] = u64::MAX;
        }
        let inputs: Vec<[f32; 8]> = (0..3).map(|_| [0f32; 8].map(|_| f32v())).collect();
        let partials: Vec<Vec<f32>> = (0..3)
            .map(|_| (0..channels).map(|_| f32v()).collect())
            .collect();
        let results = run_f32(op, &mut env, &inputs, &partials);
        assert!(results[0].iter().all(|&r| r == 0.0), "{op:?} warm-up");
        for g in 0..3 {
            for m in 0..channels {
                let mut acc = partials[g][m];
                for p in 0..8 {
                    acc += inputs[g][p] * weights[m][p];
                }
                assert_eq!(
                    results[g + 1][m].to_bits(),
                    acc.to_bits(),
                    "{op:?} group {g} channel {m}"
                );
            }
        }
    }
}

#[test]
fn f32_amp_flags_select_e1_e2_or_e4_and_eight_phases() {
    let (mut ctx, mut env) = (worker(), TestEnv::new());
    for bad in [0x10, 0x17, 0x20, 0x38, 0x3f] {
        for op in [F32sisoamp, F32sisov2amp] {
            let kind = traps(&mut ctx, &mut env, one(op, &[4, 0, 2, bad]));
            assert!(
                matches!(kind, TrapKind::BadFlags { flags, .. } if flags == bad),
                "{op:?} {bad:#x}"
            );
        }
    }
    let kind = traps(&mut ctx, &mut env, one(F16v4hihoamp, &[4, 0, 2, 0b1000]));
    assert!(matches!(kind, TrapKind::BadFlags { .. }));
}

/// An environment whose 64 `$CWEI` words hold random f16 weights.
fn env_with_f16_weights(rng: &mut Rng) -> TestEnv {
    let mut env = TestEnv::new();
    for word in env.cwei.iter_mut() {
        *word = halves4(&[rng.f16(), rng.f16(), rng.f16(), rng.f16()]);
    }
    env
}

/// E1 (`TAMP_F16V4_E1_P0`, as popsparse's 4 × 4 blocks use it): every call is a one-phase group
/// of engine 0 (channels 0, 1, 8, 9): a partial in at call k, the input at k + 1, the result
/// out at k + 2, each against the definition; the other engines' accumulators are untouched.
#[test]
fn e1_runs_one_phase_groups_on_engine_0_alone() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut env = env_with_f16_weights(&mut rng);
    let mut ctx = worker();
    // Engine 1's channel 2 holds a value an E1 call must leave alone.
    ctx.amp.accumulating[2] = 7.0;
    ctx.amp.finished[2] = 5.0;
    const CALLS: usize = 6;
    let inputs: Vec<[u16; 4]> = (0..CALLS).map(|_| [0; 4].map(|_: u16| rng.f16())).collect();
    let partials: Vec<[u16; 4]> = (0..CALLS).map(|_| [0; 4].map(|_: u16| rng.f16())).collect();
    let e1_p0 = 0b0000;
    let mut outputs = Vec::new();
    for k in 0..CALLS {
        ctx.write_a64(0, halves4(&inputs[k]));
        ctx.write_a64(2, halves4(&partials[k]));
        ok(&mut ctx, &mut env, one(F16v4hihov4amp, &[4, 0, 2, e1_p0]));
        outputs.push(ctx.read_a64(4));
    }
    let engine0 = [0usize, 1, 8, 9];
    for k in 0..CALLS - 2 {
        for (lane, &m) in engine0.iter().enumerate() {
            let w = env.cwei[cwei_index(m as u8, 0) as usize];
            let w: [u16; 4] = std::array::from_fn(|i| (w >> (16 * i)) as u16);
            let want = amp_result_out(amp_phase_f16(
                amp_partial_in(partials[k][lane]),
                inputs[k + 1],
                w,
            ));
            let got = (outputs[k + 2] >> (16 * lane)) as u16;
            assert_eq!(got, want, "call {k} channel {m}");
        }
    }
    assert_eq!((ctx.amp.accumulating[2], ctx.amp.finished[2]), (7.0, 5.0));
}

/// E2 groups take two phases and engines 0 and 1; an E1 call of phase 1 still gives out
/// channels 2 and 3 of the finished group, as popsparse drains with `f32sisoamp …
/// TAMP_F32_E1_P2`.
#[test]
fn e2_groups_take_two_phases_and_any_phase_drains() {
    let mut rng = Rng(0x5eed_1234_abcd_0002);
    let mut env = env_with_f16_weights(&mut rng);
    let mut ctx = worker();
    let (e2, e1) = (0b0100, 0b0000);
    let x0 = [0; 4].map(|_: u16| rng.f16());
    let x1 = [0; 4].map(|_: u16| rng.f16());
    // f16v4sisoamp: partials (f32 pairs) into channels 0-1 (phase 0) and 2-3 (phase 1).
    let pairs = [
        u64::from(f32::to_bits(1.5)) | u64::from(f32::to_bits(-0.25)) << 32,
        u64::from(f32::to_bits(0.75)) | u64::from(f32::to_bits(2.0)) << 32,
    ];
    for (ph, &pair) in pairs.iter().enumerate() {
        ctx.write_a64(0, 0);
        ctx.write_a64(2, pair);
        ok(
            &mut ctx,
            &mut env,
            one(F16v4sisoamp, &[4, 0, 2, e2 | ph as u32]),
        );
    }
    for (ph, x) in [x0, x1].iter().enumerate() {
        ctx.write_a64(0, halves4(x));
        ctx.write_a64(2, 0);
        ok(
            &mut ctx,
            &mut env,
            one(F16v4sisoamp, &[4, 0, 2, e2 | ph as u32]),
        );
    }
    // The group of x0, x1 finishes at the next phase 0; its channels 2, 3 leave at phase 2.
    ctx.write_a64(0, 0);
    ok(&mut ctx, &mut env, one(F16v4sisoamp, &[4, 0, 2, e2]));
    ok(&mut ctx, &mut env, one(F16v4sisoamp, &[6, 0, 2, e1 | 1]));
    let result = |m: usize, start: f32| {
        let lanes = |ph: usize| {
            let w = env.cwei[cwei_index(m as u8, ph as u8) as usize];
            std::array::from_fn(|i| (w >> (16 * i)) as u16)
        };
        amp_phase_f16(amp_phase_f16(start, x0, lanes(0)), x1, lanes(1))
    };
    let out = ctx.read_a64(6);
    assert_eq!(
        (out as u32, (out >> 32) as u32),
        (result(2, 0.75).to_bits(), result(3, 2.0).to_bits())
    );
    let out = ctx.read_a64(4);
    assert_eq!(
        (out as u32, (out >> 32) as u32),
        (result(0, 1.5).to_bits(), result(1, -0.25).to_bits())
    );
    // Engines 2 and 3 (channels 4..8) never took part.
    assert!(ctx.amp.accumulating[4..8].iter().all(|&a| a == 0.0));
}

/// The four partials (or results) of a 16-channel call of phase `p`, in lane order:
/// channels [`out_channel`]`(p, 0..4)`.
fn phase_lanes(channels: &[u16; 16], p: usize) -> [u16; 4] {
    std::array::from_fn(|i| channels[out_channel(p, i)])
}

/// Every channel leaves in exactly one lane of one phase, and the phases take the first set's
/// channels in pairs and the second set's after them (the hardware's order, 2p, 2p + 1,
/// 2p + 8, 2p + 9).
#[test]
fn each_channel_leaves_in_one_lane_of_one_phase() {
    let mut seen = [0; 16];
    for p in 0..4 {
        for lane in 0..4 {
            seen[out_channel(p, lane)] += 1;
        }
    }
    assert_eq!(seen, [1; 16]);
    assert_eq!(
        [0, 1, 2, 3].map(|lane| out_channel(1, lane)),
        [2, 3, 10, 11]
    );
}
