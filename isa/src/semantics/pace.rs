//! Triple-packed addresses: `tapack` and the post-incrementing pace loads and stores.
//!
//! Public facts \[C\] (isa.md §3.5): a register pair holds three addresses (load 0, load 1, store);
//! the accesses are 64-bit; each address post-increments by a stride picked with 2 immediate
//! bits per address: `0b00` = one atom, `0b01/0b10/0b11` = signed 10-bit field 0/1/2 of
//! `$mStride` (bits \[9:0\], \[19:10\], \[29:20\]) in atoms, a field value 0 meaning no increment.
//!
//! The packing \[I\], from how PopLibs reads packed pairs back (`ADDRESS_BITS` =
//! `TMEM_BYTE_MAX_ADDRESS_WIDTH`, whose value is \[A\]):
//!
//! ```text
//! lo = A0 | A2 << ADDRESS_BITS                        (A2's low 32 − ADDRESS_BITS bits)
//! hi = A1 | (A2 >> (32 − ADDRESS_BITS)) << ADDRESS_BITS
//! ```
//!
//! * The ASM-DOC pages of `ld2x64pace` and `ldst64pace`: the pair's lower register provides the
//!   first load address "directly", the upper register the second; the store address "is split
//!   across the upper bits of both registers".
//! * `binaryOps2D.S` rebuilds the store address from a packed pair as
//!   `(hi >> W) << (32 − W) | lo >> W`, `W = TMEM_BYTE_MAX_ADDRESS_WIDTH`; `ScaledAdd2D_half.S`
//!   packs `tapack $triPtr, $data, $dataB, $mzero` "to copy the 2 addresses into working
//!   registers" and then loads and stores through the two registers as plain byte addresses.
//!
//! So A0 and A1 are byte addresses in the low `ADDRESS_BITS` bits of their registers and a pair
//! packed with A2 = 0 holds two plain addresses. The width is 21 here \[A\]: tile memory ends
//! below 2 MiB (`0xE8000` on the ipu21). `tapack` takes the low `ADDRESS_BITS` bits of each
//! source and ignores the rest \[I\]: `conv_partial_1x1_half_half.S` packs
//! `tapack $m0:1, $m9, $m1, $m1`, moves the store address (the upper bits of both registers) in
//! its output-zeroing loop, and then packs `$m1` again as the output pointer, which gives the
//! right pointer only so (its low 21 bits are still the address first packed). An address need
//! not be aligned to be packed (the 64-bit access that uses it traps if it is not). An increment
//! moves an address within its field, wrapping at 2^21 \[A\].
//!
//! Immediate bit order: `ld2x64pace` imm4 — \[1:0\] address 0 (first load), \[3:2\] address 1
//! (second load); `ldst64pace` imm4 — \[1:0\] the load (address 0), \[3:2\] the store (address 2);
//! `ld2xst64pace` imm6 — \[1:0\] load 0, \[3:2\] load 1, \[5:4\] the store; `st64pace` imm8 (LLVM-TD-W
//! `imm8zi` \[C\]) — \[1:0\] the store (address 2); bits \[7:2\] are ignored \[A\] (PopLibs
//! writes 0x05 and 0b1010, the store's select repeated in \[3:2\]). Addresses an instruction does not use are left unchanged.
//!
//! Before its accesses every pace instruction passes all of them to
//! [`ExecEnv::check_parallel_accesses`]. `ld2xst64pace` loads 0 and 1 go to the low and high
//! pair of its quad. Stores write the source registers as they were before the bundle.

use super::regs::write_m;
use super::state::ContextState;
use super::{ExecEnv, Trap, TrapKind};
use crate::inst::Inst;

/// Bits of each packed byte address (`TMEM_BYTE_MAX_ADDRESS_WIDTH`) \[A\].
pub const ADDRESS_BITS: u32 = 21;

const ADDRESS_MASK: u32 = (1 << ADDRESS_BITS) - 1;

/// The three byte addresses of a packed pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Packed {
    pub addresses: [u32; 3],
}

impl Packed {
    pub fn unpack(lo: u32, hi: u32) -> Packed {
        let a2 = (lo >> ADDRESS_BITS) | (hi >> ADDRESS_BITS) << (32 - ADDRESS_BITS);
        Packed {
            addresses: [lo & ADDRESS_MASK, hi & ADDRESS_MASK, a2 & ADDRESS_MASK],
        }
    }

    pub fn pack(self) -> (u32, u32) {
        let [a0, a1, a2] = self.addresses;
        (
            a0 | a2 << ADDRESS_BITS,
            a1 | (a2 >> (32 - ADDRESS_BITS)) << ADDRESS_BITS,
        )
    }

    /// Byte address of address `i`.
    pub fn byte(self, i: usize) -> u32 {
        self.addresses[i]
    }

    /// Post-increments address `i` by the stride `select` picks (2 bits) from `$mStride`, in
    /// 8-byte atoms.
    pub fn advance(&mut self, i: usize, select: u32, stride_reg: u32) {
        let step = match select & 3 {
            0 => 1,
            field => {
                let raw = (stride_reg >> (10 * (field - 1))) & 0x3ff;
                ((raw << 22) as i32) >> 22
            }
        };
        self.addresses[i] =
            (self.addresses[i] as i32).wrapping_add(step.wrapping_mul(8)) as u32 & ADDRESS_MASK;
    }
}

/// `tapack $mD:D+1, $mA0, $mA1, $mA2`: the low `ADDRESS_BITS` bits of each source.
pub(super) fn tapack(inst: &Inst, ctx: &mut ContextState) -> Result<(), Trap> {
    let mut addresses = [0u32; 3];
    for (i, address) in addresses.iter_mut().enumerate() {
        *address = ctx.read_m(inst.reg(i + 1)) & ADDRESS_MASK;
    }
    let (lo, hi) = Packed { addresses }.pack();
    write_m(ctx, inst.reg(0), lo);
    write_m(ctx, inst.reg(0) + 1, hi);
    Ok(())
}

/// Reads the packed pair operand and the stride register.
fn operands(ctx: &ContextState, pair: usize, stride: usize) -> (Packed, u32) {
    (
        Packed::unpack(ctx.read_m(pair), ctx.read_m(pair + 1)),
        ctx.read_m(stride),
    )
}

fn write_back(ctx: &mut ContextState, pair: usize, packed: Packed) {
    let (lo, hi) = packed.pack();
    write_m(ctx, pair, lo);
    write_m(ctx, pair + 1, hi);
}

fn load8<E: ExecEnv>(env: &mut E, addr: u32) -> Result<u64, Trap> {
    let mut bytes = [0u8; 8];
    env.load(addr, &mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

/// `ld2x64pace $aD0:D0+1, $aD1:D1+1, $mA:A+1+=, $mStride, imm4`.
pub(super) fn ld2x64pace<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<(), Trap> {
    let (d0, d1, pair, imm) = (inst.reg(0), inst.reg(1), inst.reg(2), inst.imm(4));
    // $azeros twice is allowed: both loads are discarded.
    if d0 == d1 && d0 < 14 {
        return Err(TrapKind::InvalidOperation {
            what: "ld2x64pace destination pairs overlap",
        }
        .into());
    }
    let (mut packed, stride) = operands(ctx, pair, inst.reg(3));
    let (addr0, addr1) = (packed.byte(0), packed.byte(1));
    env.check_parallel_accesses(&[(addr0, 8), (addr1, 8)])?;
    let v0 = load8(env, addr0)?;
    let v1 = load8(env, addr1)?;
    ctx.write_a64(d0, v0);
    ctx.write_a64(d1, v1);
    packed.advance(0, imm, stride);
    packed.advance(1, imm >> 2, stride);
    write_back(ctx, pair, packed);
    Ok(())
}

/// `ldst64pace $aD:D+1, $aS:S+1, $mA:A+1+=, $mStride, imm4`.
pub(super) fn ldst64pace<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<(), Trap> {
    let (d, s, pair, imm) = (inst.reg(0), inst.reg(1), inst.reg(2), inst.imm(4));
    let (mut packed, stride) = operands(ctx, pair, inst.reg(3));
    let (load, store) = (packed.byte(0), packed.byte(2));
    let data = ctx.read_a64(s);
    env.check_parallel_accesses(&[(load, 8), (store, 8)])?;
    let v = load8(env, load)?;
    env.store(store, &data.to_le_bytes())?;
    ctx.write_a64(d, v);
    packed.advance(0, imm, stride);
    packed.advance(2, imm >> 2, stride);
    write_back(ctx, pair, packed);
    Ok(())
}

/// `ld2xst64pace $aD:D+3, $aS:S+1, $mA:A+1+=, $mStride, imm6`.
pub(super) fn ld2xst64pace<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<(), Trap> {
    let (d, s, pair, imm) = (inst.reg(0), inst.reg(1), inst.reg(2), inst.imm(4));
    let (mut packed, stride) = operands(ctx, pair, inst.reg(3));
    let (addr0, addr1, store) = (packed.byte(0), packed.byte(1), packed.byte(2));
    let data = ctx.read_a64(s);
    env.check_parallel_accesses(&[(addr0, 8), (addr1, 8), (store, 8)])?;
    let v0 = load8(env, addr0)?;
    let v1 = load8(env, addr1)?;
    env.store(store, &data.to_le_bytes())?;
    ctx.write_a64(d, v0);
    ctx.write_a64(d + 2, v1);
    packed.advance(0, imm, stride);
    packed.advance(1, imm >> 2, stride);
    packed.advance(2, imm >> 4, stride);
    write_back(ctx, pair, packed);
    Ok(())
}

/// `st64pace $aS:S+1, $mA:A+1+=, $mStride, imm8`.
pub(super) fn st64pace<E: ExecEnv>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<(), Trap> {
    let (s, pair, imm) = (inst.reg(0), inst.reg(1), inst.imm(3));
    let (mut packed, stride) = operands(ctx, pair, inst.reg(2));
    let store = packed.byte(2);
    env.check_parallel_accesses(&[(store, 8)])?;
    env.store(store, &ctx.read_a64(s).to_le_bytes())?;
    packed.advance(2, imm & 3, stride);
    write_back(ctx, pair, packed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Packed;
    use crate::inst::Opcode::*;
    use crate::semantics::test_env::*;
    use crate::semantics::TrapKind;

    const A0: u32 = 0x8_0010;
    const A1: u32 = 0x9_0008;
    const A2: u32 = 0xa_0018;

    /// The packing written out from the module's definition.
    fn pack(a0: u32, a1: u32, a2: u32) -> (u32, u32) {
        (a0 | (a2 & 0x7ff) << 21, a1 | (a2 >> 11) << 21)
    }

    /// Stride register with fields 0, 1, 2 (each a signed 10-bit atom count).
    fn strides(f0: i32, f1: i32, f2: i32) -> u32 {
        (f0 as u32 & 0x3ff) | (f1 as u32 & 0x3ff) << 10 | (f2 as u32 & 0x3ff) << 20
    }

    fn packed_worker() -> crate::semantics::ContextState {
        let mut ctx = worker();
        ctx.m[0] = A0;
        ctx.m[1] = A1;
        ctx.m[2] = A2;
        ctx
    }

    #[test]
    fn tapack_packs_byte_addresses() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0, A1, A2));
        // A2 = 0xa0018 straddles the two registers' upper 11 bits.
        assert_eq!(ctx.m[4] >> 21, 0xa0018 & 0x7ff);
        assert_eq!(ctx.m[5] >> 21, 0xa0018 >> 11);
        // As binaryOps2D.S rebuilds the store address.
        assert_eq!((ctx.m[5] >> 21) << 11 | ctx.m[4] >> 21, A2);
        let unpacked = Packed::unpack(ctx.m[4], ctx.m[5]);
        assert_eq!(
            [unpacked.byte(0), unpacked.byte(1), unpacked.byte(2)],
            [A0, A1, A2]
        );
        // With the store address 0 the pair is the two addresses as they were, unaligned too
        // (ScaledAdd2D_half.S copies two addresses this way).
        ctx.m[1] = A1 + 2;
        ctx.m[2] = 0;
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        assert_eq!((ctx.m[4], ctx.m[5]), (A0, A1 + 2));
        // Only the low 21 bits of a source count: a register of a packed pair, whose upper bits
        // hold part of the store address, packs again as its own low address (PopLibs'
        // conv_partial_1x1_half_half.S re-packs its output pointer so).
        ctx.m[1] = ctx.m[5] | 0x7ff << 21;
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        assert_eq!((ctx.m[4], ctx.m[5]), (A0, A1 + 2));
        ctx.m[1] = A1;
        assert_eq!(
            traps(&mut ctx, &mut env, one(Tapack, &[12, 0, 1, 2])),
            TrapKind::ReadOnlyRegister { register: "$m12" }
        );
    }

    proptest::proptest! {
        /// Every triple of addresses survives packing, and the two registers read back as
        /// PopLibs reads them: A0 and A1 in the low bits, A2 rebuilt as binaryOps2D.S does.
        #[test]
        fn packing_round_trips(a0 in 0u32..1 << 21, a1 in 0u32..1 << 21, a2 in 0u32..1 << 21) {
            let (lo, hi) = Packed { addresses: [a0, a1, a2] }.pack();
            proptest::prop_assert_eq!((lo, hi), pack(a0, a1, a2));
            proptest::prop_assert_eq!(Packed::unpack(lo, hi).addresses, [a0, a1, a2]);
            proptest::prop_assert_eq!((lo & 0x1f_ffff, hi & 0x1f_ffff), (a0, a1));
            proptest::prop_assert_eq!((hi >> 21) << 11 | lo >> 21, a2);
        }
    }

    #[test]
    fn stride_selection_and_wrap() {
        let stride = strides(-3, 0, 511);
        let mut p = Packed {
            addresses: [80, 80, 80],
        };
        p.advance(0, 0b00, stride);
        p.advance(1, 0b01, stride);
        p.advance(2, 0b10, stride);
        assert_eq!(p.addresses, [88, 56, 80]);
        p.advance(2, 0b11, stride);
        assert_eq!(p.addresses[2], 80 + 511 * 8);
        p.advance(0, 0b01, strides(-512, 0, 0));
        assert_eq!(p.addresses[0], (88 - 512 * 8) as u32 & 0x1f_ffff);
        let mut top = Packed {
            addresses: [0x1f_fff8, 0, 0x1f_fff8],
        };
        top.advance(0, 0, 0);
        top.advance(2, 0, 0);
        top.advance(1, 0b01, strides(-1, 0, 0));
        assert_eq!(top.addresses, [0, 0x1f_fff8, 0]);
        assert_eq!(Packed::unpack(top.pack().0, top.pack().1), top);
    }

    #[test]
    fn ld2x64pace_loads_both_and_post_increments() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        env.write_u64(A0, 0x1111_1111_2222_2222);
        env.write_u64(A1, 0x3333_3333_4444_4444);
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        ctx.m[6] = strides(-3, 0, 7);
        // imm4: [1:0] = 00 (address 0 +1 atom), [3:2] = 01 (address 1 by field 0 = -3 atoms).
        ok(&mut ctx, &mut env, one(Ld2x64pace, &[0, 2, 4, 6, 0b0100]));
        assert_eq!(ctx.read_a64(0), 0x1111_1111_2222_2222);
        assert_eq!(ctx.read_a64(2), 0x3333_3333_4444_4444);
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0 + 8, A1 - 24, A2));
        assert_eq!(env.parallel.last().unwrap(), &vec![(A0, 8), (A1, 8)]);
        // Field 1 = 0 leaves address 0 alone; field 2 = 7 moves address 1.
        ok(&mut ctx, &mut env, one(Ld2x64pace, &[0, 2, 4, 6, 0b1110]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0 + 8, A1 - 24 + 56, A2));
        // Overlapping destinations trap; $azeros twice only moves the pointers.
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ld2x64pace, &[2, 2, 4, 6, 0])),
            TrapKind::InvalidOperation { .. }
        ));
        ok(&mut ctx, &mut env, one(Ld2x64pace, &[14, 14, 4, 6, 0]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0 + 16, A1 + 40, A2));
    }

    #[test]
    fn ldst64pace_loads_address_0_and_stores_the_old_source_to_address_2() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        env.write_u64(A0, 0xaaaa_aaaa_bbbb_bbbb);
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        ctx.write_a64(0, 0x0123_4567_89ab_cdef);
        ctx.m[6] = strides(2, -1, 0);
        // Same pair as load destination and store source: the store sees the old value.
        // imm4: [1:0] = 01 (load by +2 atoms), [3:2] = 10 (store by -1 atom).
        ok(&mut ctx, &mut env, one(Ldst64pace, &[0, 0, 4, 6, 0b1001]));
        assert_eq!(ctx.read_a64(0), 0xaaaa_aaaa_bbbb_bbbb);
        assert_eq!(env.read_u64(A2), 0x0123_4567_89ab_cdef);
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0 + 16, A1, A2 - 8));
        assert_eq!(env.parallel.last().unwrap(), &vec![(A0, 8), (A2, 8)]);
    }

    #[test]
    fn ld2xst64pace_fills_a_quad_and_stores() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        env.write_u64(A0, 0x1000_0000_0000_0001);
        env.write_u64(A1, 0x2000_0000_0000_0002);
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        ctx.write_a64(2, 0x3000_0000_0000_0003);
        ctx.m[6] = strides(4, -4, 1);
        // imm6: load 0 by field 0 (01), load 1 by field 1 (10), store by field 2 (11).
        ok(
            &mut ctx,
            &mut env,
            one(Ld2xst64pace, &[4, 2, 4, 6, 0b11_10_01]),
        );
        assert_eq!(ctx.read_a64(4), 0x1000_0000_0000_0001);
        assert_eq!(ctx.read_a64(6), 0x2000_0000_0000_0002);
        assert_eq!(env.read_u64(A2), 0x3000_0000_0000_0003);
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0 + 32, A1 - 32, A2 + 8));
        assert_eq!(
            env.parallel.last().unwrap(),
            &vec![(A0, 8), (A1, 8), (A2, 8)]
        );
    }

    #[test]
    fn st64pace_stores_to_address_2() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        ctx.write_a64(2, 0x5555_6666_7777_8888);
        ok(&mut ctx, &mut env, one(St64pace, &[2, 4, 6, 0]));
        assert_eq!(env.read_u64(A2), 0x5555_6666_7777_8888);
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0, A1, A2 + 8));
        ctx.m[6] = strides(0, 0, -2);
        ok(&mut ctx, &mut env, one(St64pace, &[2, 4, 6, 0b11]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0, A1, A2 - 8));
        // Bits [7:2] of the immediate are ignored (PopLibs writes 0b1010 for 0b10).
        ctx.m[6] = strides(0, 3, 0);
        ok(&mut ctx, &mut env, one(St64pace, &[2, 4, 6, 0b1110]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0, A1, A2 - 8 + 24));
    }

    #[test]
    fn element_clashes_are_reported_by_the_environment() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        // Same interleaved pair and same bit 3: one memory element.
        ctx.m[1] = A0 + 16;
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Ld2x64pace, &[0, 2, 4, 6, 0])),
            TrapKind::Memory(_)
        ));
        // Pace instructions are worker-only.
        let mut sup = supervisor();
        assert!(matches!(
            traps(&mut sup, &mut env, one(St64pace, &[2, 4, 6, 0])),
            TrapKind::WrongContext { .. }
        ));
        // tapack runs in both contexts.
        sup.m[0] = A0;
        ok(&mut sup, &mut env, one(Tapack, &[4, 0, 0, 0]));
    }
}
