//! Permutes through the accumulators: `f16v4istacc` and `f16v4stacc`.
//!
//! ASM-DOC \[C\]: both "sort/shuffle (permute) through accumulators"; `istacc` presents 128 bits
//! of new input; both write the destination pair with 64 bits picked from `$AACC` and propagate
//! the `$AACC` state "as specified by the immediate". The immediate's encoding is not public.
//! **The model** covers the two uses in PopLibs; its flag values are project choices \[A\]:
//!
//! * The 4×4 f16 transpose of `BlockTransposeGradW_half.S` (`TISTACC_P0/P1`, `TSTACC_P0/P1`).
//!   `$AACC`\[16 + 4r + c\] holds row r, column c of the block being written and `$AACC`\[4r +
//!   c\] that of the block being read, each a half's bits in the entry's low 16 bits.
//!   - `f16v4istacc $aD, $aS0, $aS1, TISTACC_Pk` (k = 0, 1; flags 0x10 + k): `$aD` = column 2 + k
//!     of the block being read; then rows 2k and 2k + 1 of the block being written = the four
//!     halves of `$aS0` and of `$aS1`.
//!   - `f16v4stacc $aD, TSTACC_Pk` (flags 0x10 + k): on k = 0 the block being written becomes the
//!     block being read; then `$aD` = column k of the block being read.
//!
//!   So two `istacc` push a block's four rows, and its four columns leave through `stacc P0`,
//!   `stacc P1` and the next block's `istacc P0`, `istacc P1` (the order PopLibs stores them).
//!   A column's halves are lanes 0..3 = rows 0..3.
//! * `f16v4stacc $aD, 0` in `ReductionSpecial01Acc.S`, whose comment says it moves ACC0 and ACC2
//!   to the destination and shifts the remaining results to the odd accumulators without
//!   shifting the delay line, after which `f32v2gina …, 1` reads the odd ones \[I\]: `$aD` =
//!   (`$AACC`\[0\], `$AACC`\[2\]) as f32 bits; then `$AACC`\[1\] = `$AACC`\[4\] and `$AACC`\[3\] =
//!   `$AACC`\[6\]; nothing else changes.
//!
//! Any other flags value is `BadFlags`.

use super::regs::{halves4, join_halves4, join_singles, Pending};
use super::state::{ContextState, AACC_COUNT};
use super::Trap;
use crate::inst::Inst;

/// `TISTACC_P0` / `TSTACC_P0`; `_P1` is one more.
pub const TRANSPOSE_P0: u32 = 0x10;

/// First entry of the block being written.
const WRITING: usize = 16;

fn bad(inst: &Inst, flags: u32) -> Trap {
    Trap::bad_flags(
        inst,
        flags,
        "not a modelled permute (0x10/0x11 transpose; stacc also 0)",
    )
}

/// Column `c` of the block being read, rows 0..3 in lanes 0..3.
fn column(acc: &[f32; AACC_COUNT], c: usize) -> u64 {
    join_halves4(std::array::from_fn(|r| acc[4 * r + c].to_bits() as u16))
}

/// `f16v4istacc $aD:D+1, $aS0:S0+1, $aS1:S1+1, imm6`.
pub(super) fn f16v4istacc(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let flags = inst.imm(3);
    let k = match flags {
        TRANSPOSE_P0 => 0,
        f if f == TRANSPOSE_P0 + 1 => 1,
        _ => return Err(bad(inst, flags)),
    };
    let rows = [
        halves4(ctx.read_a64(inst.reg(1))),
        halves4(ctx.read_a64(inst.reg(2))),
    ];
    let acc = out.aacc(ctx);
    let result = column(acc, 2 + k);
    for (i, row) in rows.iter().enumerate() {
        for (c, &h) in row.iter().enumerate() {
            acc[WRITING + 4 * (2 * k + i) + c] = f32::from_bits(u32::from(h));
        }
    }
    out.write_a64(inst.reg(0), result);
    Ok(())
}

/// `f16v4stacc $aD:D+1, imm8`.
pub(super) fn f16v4stacc(inst: &Inst, ctx: &ContextState, out: &mut Pending) -> Result<(), Trap> {
    let flags = inst.imm(1);
    let acc = out.aacc(ctx);
    let result = match flags {
        0 => {
            let result = join_singles([acc[0], acc[2]]);
            acc[1] = acc[4];
            acc[3] = acc[6];
            result
        }
        TRANSPOSE_P0 => {
            acc.copy_within(WRITING..WRITING + 16, 0);
            column(acc, 0)
        }
        f if f == TRANSPOSE_P0 + 1 => column(acc, 1),
        _ => return Err(bad(inst, flags)),
    };
    out.write_a64(inst.reg(0), result);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::TRANSPOSE_P0;
    use crate::inst::Opcode::*;
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    use crate::semantics::regs::join_halves4 as lanes;

    /// Three 4×4 blocks of halves (NaN and signalling-NaN patterns among them) through the
    /// sequence of `BlockTransposeGradW_half.S`: each block's columns come out as its rows
    /// would be read down, bit for bit.
    #[test]
    fn blocks_transpose_in_the_popsparse_order() {
        let block = |b: usize| -> [[u16; 4]; 4] {
            std::array::from_fn(|r| {
                std::array::from_fn(|c| {
                    (0x7c01 + ((b * 16 + r * 4 + c) as u16) * 0x0101) ^ (0x8000 * (c as u16 & 1))
                })
            })
        };
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let (p0, p1) = (TRANSPOSE_P0, TRANSPOSE_P0 + 1);
        let mut columns = Vec::new();
        let push = |ctx: &mut _, env: &mut _, b: Option<usize>, k: u32| {
            let rows = b.map_or([[0; 4]; 4], block);
            let (r0, r1) = (2 * k as usize, 2 * k as usize + 1);
            let ctx: &mut crate::semantics::ContextState = ctx;
            ctx.write_a64(0, lanes(rows[r0]));
            ctx.write_a64(2, lanes(rows[r1]));
            ok(ctx, env, one(F16v4istacc, &[6, 0, 2, TRANSPOSE_P0 + k]));
            ctx.read_a64(6)
        };
        push(&mut ctx, &mut env, Some(0), 0);
        push(&mut ctx, &mut env, Some(0), 1);
        for b in 1..=3 {
            ok(&mut ctx, &mut env, one(F16v4stacc, &[6, p0]));
            columns.push(ctx.read_a64(6));
            ok(&mut ctx, &mut env, one(F16v4stacc, &[6, p1]));
            columns.push(ctx.read_a64(6));
            let next = (b < 3).then_some(b);
            columns.push(push(&mut ctx, &mut env, next, 0));
            columns.push(push(&mut ctx, &mut env, next, 1));
        }
        for b in 0..3 {
            for c in 0..4 {
                let want = lanes(std::array::from_fn(|r| block(b)[r][c]));
                assert_eq!(columns[4 * b + c], want, "block {b} column {c}");
            }
        }
    }

    /// `f16v4stacc …, 0` after `f32v4acc`, then `f32v2gina …, 1`, as `ReductionSpecial01Acc.S`
    /// reads four sums: the pair out, then the other two from the odd accumulators.
    #[test]
    fn stacc_zero_reads_two_sums_and_moves_two_to_the_odd_accumulators() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        let q = [1.5f32, -2.25, 1e-3, 7.0];
        for (i, v) in q.iter().enumerate() {
            ctx.a[i] = v.to_bits();
        }
        ok(&mut ctx, &mut env, one(F32v4acc, &[0]));
        ok(&mut ctx, &mut env, one(F16v4stacc, &[4, 0]));
        assert_eq!(
            (f32::from_bits(ctx.a[4]), f32::from_bits(ctx.a[5])),
            (q[0], q[1])
        );
        ok(&mut ctx, &mut env, one(F32v2gina, &[6, 14, 1]));
        assert_eq!(
            (f32::from_bits(ctx.a[6]), f32::from_bits(ctx.a[7])),
            (q[2], q[3])
        );
    }

    #[test]
    fn other_permute_flags_trap() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        for bad in [0u32, 1, 0x12, 0x3f] {
            let kind = traps(&mut ctx, &mut env, one(F16v4istacc, &[6, 0, 2, bad]));
            assert!(matches!(kind, TrapKind::BadFlags { flags, .. } if flags == bad));
        }
        for bad in [1u32, 0x12, 0xff] {
            let kind = traps(&mut ctx, &mut env, one(F16v4stacc, &[6, bad]));
            assert!(matches!(kind, TrapKind::BadFlags { flags, .. } if flags == bad));
        }
    }
}
