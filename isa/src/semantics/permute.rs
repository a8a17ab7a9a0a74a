//! Permutes (the same lane maps serve the MRF forms in main and the ARF forms in aux).
//!
//! 16-bit lanes: `sort4x16lo/hi`, `roll16`, `swap16` \[C\] (LLVM CodeGen tests). 32-bit lanes of
//! pairs: `sort4x32lo/hi` \[I\]. The rolls take a window of the concatenation `{a, b}` (a in the
//! low half): `roll8r` bytes 1..4, `roll16` bytes 2..5, `roll8l` bytes 3..6, `roll32` the middle
//! two 32-bit lanes of a pair of pairs. `roll8r`/`roll8l` \[I\] from PopLibs: `BroadcastSelect.S`
//! shifts each new byte in "from the left" with `roll8r acc, acc, byte`, and the tail code of
//! `CastFloatToGF8.S` keeps the low 3, 2 or 1 result bytes and the rest of the memory word with
//! `roll8l`+`roll8r`, `roll16`+`roll16` and `roll8r`+`roll8l`, which holds only for these windows;
//! `roll32` \[I\] by analogy. Byte maps of `sort8x8*` / `shuf8x8*` are project assumptions
//! \[A\] (only the names are public); they follow the row summaries: byte 0 is the least
//! significant and `{a, b}` is read as the 8 bytes a0..a3, b0..b3.

/// d = {a\[15:0\], b\[15:0\]}.
pub(super) fn sort4x16lo(a: u32, b: u32) -> u32 {
    (a & 0xffff) | (b << 16)
}

/// d = {a\[31:16\], b\[31:16\]}.
pub(super) fn sort4x16hi(a: u32, b: u32) -> u32 {
    (a >> 16) | (b & 0xffff_0000)
}

/// d = {lane 0: a\[31:16\], lane 1: b\[15:0\]}.
pub(super) fn roll16(a: u32, b: u32) -> u32 {
    (a >> 16) | (b << 16)
}

/// Bytes 1..4 of `{a, b}`: {a1, a2, a3, b0}.
pub(super) fn roll8r(a: u32, b: u32) -> u32 {
    (a >> 8) | (b << 24)
}

/// Bytes 3..6 of `{a, b}`: {a3, b0, b1, b2}.
pub(super) fn roll8l(a: u32, b: u32) -> u32 {
    (a >> 24) | (b << 8)
}

/// 32-bit lanes 1..2 of `{a, b}` (pairs): {a\[63:32\], b\[31:0\]}.
pub(super) fn roll32(a: u64, b: u64) -> u64 {
    (a >> 32) | (b << 32)
}

pub(super) fn swap16(a: u32) -> u32 {
    a.rotate_left(16)
}

/// The byte map of the 8-byte family: `d` byte k = `{a, b}` byte `map[k]`.
fn bytes8(a: u32, b: u32, map: [usize; 4]) -> u32 {
    let all = a as u64 | (b as u64) << 32;
    map.iter().enumerate().fold(0, |d, (k, &src)| {
        d | (((all >> (8 * src)) & 0xff) as u32) << (8 * k)
    })
}

/// Even bytes: {a0, a2, b0, b2}.
pub(super) fn sort8x8lo(a: u32, b: u32) -> u32 {
    bytes8(a, b, [0, 2, 4, 6])
}

/// Odd bytes: {a1, a3, b1, b3}.
pub(super) fn sort8x8hi(a: u32, b: u32) -> u32 {
    bytes8(a, b, [1, 3, 5, 7])
}

/// Interleave of the low bytes: {a0, b0, a1, b1}.
pub(super) fn shuf8x8lo(a: u32, b: u32) -> u32 {
    bytes8(a, b, [0, 4, 1, 5])
}

/// Interleave of the high bytes: {a2, b2, a3, b3}.
pub(super) fn shuf8x8hi(a: u32, b: u32) -> u32 {
    bytes8(a, b, [2, 6, 3, 7])
}

/// d = {a\[31:0\], b\[31:0\]} (pairs).
pub(super) fn sort4x32lo(a: u64, b: u64) -> u64 {
    (a & 0xffff_ffff) | (b << 32)
}

/// d = {a\[63:32\], b\[63:32\]} (pairs).
pub(super) fn sort4x32hi(a: u64, b: u64) -> u64 {
    (a >> 32) | (b & 0xffff_ffff_0000_0000)
}

#[cfg(test)]
mod tests {
    use crate::inst::Opcode::{self, *};
    use crate::semantics::test_env::*;

    const A: u32 = 0x4433_2211;
    const B: u32 = 0x8877_6655;

    fn main_form(op: Opcode) -> u32 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = A;
        ctx.m[2] = B;
        ok(&mut ctx, &mut env, one(op, &[0, 1, 2]));
        ctx.m[0]
    }

    fn aux_form(op: Opcode) -> u32 {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.a[1] = A;
        ctx.a[2] = B;
        ok(&mut ctx, &mut env, one(op, &[0, 1, 2]));
        ctx.a[0]
    }

    #[test]
    fn lane_maps_in_both_pipelines() {
        let cases = [
            (Sort4x16loM, Sort4x16loA, 0x6655_2211),
            (Sort4x16hiM, Sort4x16hiA, 0x8877_4433),
            (Roll16M, Roll16A, 0x6655_4433),
            (Sort8x8loM, Sort8x8loA, 0x7755_3311),
            (Sort8x8hiM, Sort8x8hiA, 0x8866_4422),
            (Shuf8x8loM, Shuf8x8loA, 0x6622_5511),
            (Shuf8x8hiM, Shuf8x8hiA, 0x8844_7733),
            (Roll8rM, Roll8rA, 0x5544_3322),
            (Roll8lM, Roll8lA, 0x7766_5544),
        ];
        for (m, a, expected) in cases {
            assert_eq!(main_form(m), expected, "{m:?}");
            assert_eq!(aux_form(a), expected, "{a:?}");
        }
    }

    #[test]
    fn swap16_and_zero_extension_with_mzero() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.m[1] = A;
        ctx.a[1] = A;
        ok(&mut ctx, &mut env, one(Swap16M, &[0, 1]));
        ok(&mut ctx, &mut env, one(Swap16A, &[0, 1]));
        assert_eq!((ctx.m[0], ctx.a[0]), (0x2211_4433, 0x2211_4433));
        // sort4x16lo with $mzero zero-extends the low half.
        ok(&mut ctx, &mut env, one(Sort4x16loM, &[2, 1, 15]));
        assert_eq!(ctx.m[2], 0x2211);
    }

    /// The rolls are windows of `{a, b}`, checked against the byte reading of their definition,
    /// and the tail merge of `CastFloatToGF8.S` they were inferred from.
    #[test]
    fn rolls_are_windows_of_the_concatenation() {
        let window = |a: u32, b: u32, first: u32| -> u32 {
            let all = a as u64 | (b as u64) << 32;
            (all >> (8 * first)) as u32
        };
        let mut x = 0x9e37_79b9u32;
        for _ in 0..1000 {
            x = x.wrapping_mul(0x0019_660d).wrapping_add(0x3c6e_f35f);
            let (a, b) = (x, x.rotate_left(13) ^ 0x5555_aaaa);
            assert_eq!(super::roll8r(a, b), window(a, b, 1));
            assert_eq!(super::roll16(a, b), window(a, b, 2));
            assert_eq!(super::roll8l(a, b), window(a, b, 3));
        }
        // Keep the low k bytes of `out` and the rest of `mem`, as the PopLibs tail does.
        let (mem, out) = (0xa1b2_c3d4u32, 0x0403_0201u32);
        let three_bytes = super::roll8r(super::roll8l(mem, out), super::roll8l(mem, out));
        assert_eq!(three_bytes, (mem & 0xff00_0000) | (out & 0x00ff_ffff));
        let one_byte = super::roll8l(super::roll8r(mem, out), super::roll8r(mem, out));
        assert_eq!(one_byte, (mem & 0xffff_ff00) | (out & 0xff));
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.write_a64(0, 0x1111_1111_0000_0000);
        ctx.write_a64(2, 0x3333_3333_2222_2222);
        ok(&mut ctx, &mut env, one(Roll32, &[4, 0, 2]));
        assert_eq!(ctx.read_a64(4), 0x2222_2222_1111_1111);
    }

    #[test]
    fn sort4x32_on_pairs() {
        let (mut ctx, mut env) = (worker(), TestEnv::new());
        ctx.write_a64(0, 0x1111_1111_0000_0000);
        ctx.write_a64(2, 0x3333_3333_2222_2222);
        ok(&mut ctx, &mut env, one(Sort4x32lo, &[4, 0, 2]));
        ok(&mut ctx, &mut env, one(Sort4x32hi, &[6, 0, 2]));
        assert_eq!(ctx.read_a64(4), 0x2222_2222_0000_0000);
        assert_eq!(ctx.read_a64(6), 0x3333_3333_1111_1111);
    }
}
