//! The random instructions (aux, worker): `urand32`, `urand64`, `f16v2grand`, `f32v2grand`,
//! `f16v4rmask`, `f32v2rmask`. They step the worker's PRNG, whose state lives in its
//! `$PRNG_*` CSRs; the generator, the draws per instruction and the arithmetic, with their
//! basis, are stated once in [`crate::numerics::random`].
//!
//! The new state is queued like every other aux write, so it is committed with the bundle.

use super::regs::{halves4, join_halves, join_halves4, join_singles, Pending};
use super::state::ContextState;
use crate::csr::index;
use crate::inst::Inst;
use crate::numerics::random::{
    draw_words, gaussian_f16, gaussian_f32, mask_keeps, mask_rule, prng_from_words, prng_next,
    prng_to_words, PrngState,
};

/// The PRNG CSRs, in [`prng_from_words`] order.
const PRNG_CSRS: [u8; 4] = [
    index::PRNG_0_0,
    index::PRNG_0_1,
    index::PRNG_1_0,
    index::PRNG_1_1,
];

/// Takes `n` draws from the worker's PRNG and queues the advanced state.
fn draws<const N: usize>(ctx: &ContextState, out: &mut Pending) -> [u64; N] {
    let mut state: PrngState = prng_from_words(PRNG_CSRS.map(|i| ctx.ucsr[i as usize]));
    let taken = std::array::from_fn(|_| prng_next(&mut state));
    for (csr, word) in PRNG_CSRS.into_iter().zip(prng_to_words(state)) {
        out.write_ucsr(csr, word);
    }
    taken
}

/// `urand32 $aD`.
pub(super) fn urand32(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let [d] = draws::<1>(ctx, out);
    out.write_a(inst.reg(0), d as u32);
}

/// `urand64 $aD:D+1`.
pub(super) fn urand64(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let [d] = draws::<1>(ctx, out);
    out.write_a64(inst.reg(0), d);
}

/// `f16v2grand $aD`.
pub(super) fn f16v2grand(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let d = draws::<2>(ctx, out);
    out.write_a(inst.reg(0), join_halves(d.map(gaussian_f16)));
}

/// `f32v2grand $aD:D+1`.
pub(super) fn f32v2grand(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let d = draws::<2>(ctx, out);
    out.write_a64(inst.reg(0), join_singles(d.map(gaussian_f32)));
}

/// `f16v4rmask $aD:D+1, $aS:S+1, $aP`.
pub(super) fn f16v4rmask(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let rule = mask_rule(ctx.read_a(inst.reg(2)));
    let [d] = draws::<1>(ctx, out);
    let r = draw_words(d);
    let mut x = halves4(ctx.read_a64(inst.reg(1)));
    for (lane, &word) in x.iter_mut().zip(&r) {
        if !mask_keeps(rule, word) {
            *lane = 0;
        }
    }
    out.write_a64(inst.reg(0), join_halves4(x));
}

/// `f32v2rmask $aD:D+1, $aS:S+1, $aP`.
pub(super) fn f32v2rmask(inst: &Inst, ctx: &ContextState, out: &mut Pending) {
    let rule = mask_rule(ctx.read_a(inst.reg(2)));
    let [d] = draws::<1>(ctx, out);
    let r = draw_words(d);
    let x = ctx.read_a64(inst.reg(1));
    let mut lanes = [x as u32, (x >> 32) as u32];
    for (lane, &word) in lanes.iter_mut().zip(&r[..2]) {
        if !mask_keeps(rule, word) {
            *lane = 0;
        }
    }
    out.write_a64(inst.reg(0), lanes[0] as u64 | (lanes[1] as u64) << 32);
}

#[cfg(test)]
mod tests {
    use crate::csr::index;
    use crate::inst::Opcode::*;
    use crate::numerics::random::{
        draw_words, gaussian_f16, gaussian_f32, prng_from_words, prng_next, prng_to_words,
    };
    use crate::semantics::test_env::*;
    use proptest::prelude::*;

    fn seeded(words: [u32; 4]) -> crate::semantics::ContextState {
        let mut ctx = worker();
        ctx.ucsr[index::PRNG_0_0 as usize..=index::PRNG_1_1 as usize].copy_from_slice(&words);
        ctx
    }

    fn prng(ctx: &crate::semantics::ContextState) -> [u32; 4] {
        let mut w = [0; 4];
        w.copy_from_slice(&ctx.ucsr[index::PRNG_0_0 as usize..=index::PRNG_1_1 as usize]);
        w
    }

    /// The reference sequence of draws from `words`.
    fn sequence(words: [u32; 4], n: usize) -> (Vec<u64>, [u32; 4]) {
        let mut state = prng_from_words(words);
        let draws = (0..n).map(|_| prng_next(&mut state)).collect();
        (draws, prng_to_words(state))
    }

    const SEED: [u32; 4] = [0x1234_5678, 0x9abc_def0, 0x0fed_cba9, 0x8765_4321];

    #[test]
    fn urand_takes_one_step_and_keeps_the_state_in_the_csrs() {
        let mut env = TestEnv::new();
        let mut ctx = seeded(SEED);
        let (draws, after) = sequence(SEED, 2);
        ok(&mut ctx, &mut env, one(Urand64, &[2]));
        assert_eq!(ctx.read_a64(2), draws[0]);
        ok(&mut ctx, &mut env, one(Urand32, &[5]));
        assert_eq!(ctx.a[5], draws[1] as u32);
        assert_eq!(prng(&ctx), after);
        // A discarded destination still steps the generator.
        ok(&mut ctx, &mut env, one(Urand64, &[14]));
        assert_eq!(prng(&ctx), sequence(SEED, 3).1);
    }

    #[test]
    fn seeding_through_prng_seed_gives_a_repeatable_stream() {
        let mut env = TestEnv::new();
        let mut a = worker();
        let mut b = worker();
        for ctx in [&mut a, &mut b] {
            ctx.a[0] = 42;
            ok(ctx, &mut env, one(Uput, &[index::PRNG_SEED as u32, 0]));
            ok(ctx, &mut env, one(Urand64, &[2]));
        }
        assert_eq!(a.read_a64(2), b.read_a64(2));
        assert_ne!(a.read_a64(2), 0);
    }

    #[test]
    fn grand_takes_one_step_per_lane() {
        let mut env = TestEnv::new();
        let mut ctx = seeded(SEED);
        let (draws, after) = sequence(SEED, 4);
        ok(&mut ctx, &mut env, one(F16v2grand, &[3]));
        let expected = gaussian_f16(draws[0]) as u32 | (gaussian_f16(draws[1]) as u32) << 16;
        assert_eq!(ctx.a[3], expected);
        ok(&mut ctx, &mut env, one(F32v2grand, &[4]));
        assert_eq!(ctx.a[4], gaussian_f32(draws[2]).to_bits());
        assert_eq!(ctx.a[5], gaussian_f32(draws[3]).to_bits());
        assert_eq!(prng(&ctx), after);
    }

    #[test]
    fn rmask_bit_16_keeps_and_zero_probability_clears() {
        let mut env = TestEnv::new();
        let mut ctx = seeded(SEED);
        let x = 0x3c00_4000_4200_4400u64;
        ctx.write_a64(2, x);
        ctx.a[6] = 0x1_0000;
        ok(&mut ctx, &mut env, one(F16v4rmask, &[0, 2, 6]));
        assert_eq!(ctx.read_a64(0), x);
        ctx.a[6] = 0xfffe_0000;
        ok(&mut ctx, &mut env, one(F16v4rmask, &[0, 2, 6]));
        assert_eq!(ctx.read_a64(0), 0);
        ctx.write_a64(2, (2.5f32.to_bits() as u64) << 32 | 1.5f32.to_bits() as u64);
        ok(&mut ctx, &mut env, one(F32v2rmask, &[0, 2, 6]));
        assert_eq!(ctx.read_a64(0), 0);
        // Every form stepped the generator once.
        assert_eq!(prng(&ctx), sequence(SEED, 3).1);
    }

    proptest! {
        /// A lane survives exactly when its 16 random bits are below the probability.
        #[test]
        fn rmask_keeps_lanes_below_the_threshold(
            seed in any::<[u32; 4]>(), p in 1u32..0x1_0000, x in any::<u64>()
        ) {
            let mut env = TestEnv::new();
            let mut ctx = seeded(seed);
            ctx.write_a64(2, x);
            ctx.a[6] = p;
            ok(&mut ctx, &mut env, one(F16v4rmask, &[0, 2, 6]));
            let r = draw_words(sequence(seed, 1).0[0]);
            let got = ctx.read_a64(0);
            for (i, &word) in r.iter().enumerate() {
                let lane = (got >> (16 * i)) as u16;
                let input = (x >> (16 * i)) as u16;
                prop_assert_eq!(lane, if (word as u32) < p { input } else { 0 });
            }
            ctx.write_a64(2, x);
            ok(&mut ctx, &mut env, one(F32v2rmask, &[0, 2, 6]));
            let r = draw_words(sequence(seed, 2).0[1]);
            let got = ctx.read_a64(0);
            for (i, &word) in r[..2].iter().enumerate() {
                let lane = (got >> (32 * i)) as u32;
                let input = (x >> (32 * i)) as u32;
                prop_assert_eq!(lane, if (word as u32) < p { input } else { 0 });
            }
        }
    }
}
