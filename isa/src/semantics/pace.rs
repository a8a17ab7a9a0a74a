//! Triple-packed addresses: `tapack` and the post-incrementing pace loads and stores.
//!
//! Public facts \[C\] (isa.md §3.5): a register pair holds three addresses (load 0, load 1, store);
//! the accesses are 64-bit; each address post-increments by a stride picked with 2 immediate
//! bits per address: `0b00` = one atom, `0b01/0b10/0b11` = signed 10-bit field 0/1/2 of
//! `$mStride` (bits \[9:0\], \[19:10\], \[29:20\]) in atoms, a field value 0 meaning no increment.
//!
//! Project assumption \[A\] (the packing is not public): each address is stored as an 18-bit
//! index of 64-bit atoms (byte address >> 3, so 2 MiB of byte space), and
//!
//! ```text
//! lo = A0[17:0] | A2[13:0]  << 18
//! hi = A1[17:0] | A2[17:14] << 18
//! ```
//!
//! `tapack` traps `InvalidOperation` when an address is not 8-byte aligned or does not fit in
//! 21 bits. After the accesses, the pair is rebuilt from the incremented atom indices, which
//! wrap at 18 bits.
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

const ATOM_MASK: u32 = (1 << 18) - 1;

/// The three atom indices of a packed pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Packed {
    pub atoms: [u32; 3],
}

impl Packed {
    pub fn unpack(lo: u32, hi: u32) -> Packed {
        let a2 = ((lo >> 18) & 0x3fff) | ((hi >> 18) & 0xf) << 14;
        Packed {
            atoms: [lo & ATOM_MASK, hi & ATOM_MASK, a2],
        }
    }

    pub fn pack(self) -> (u32, u32) {
        let [a0, a1, a2] = self.atoms;
        (a0 | (a2 & 0x3fff) << 18, a1 | (a2 >> 14) << 18)
    }

    /// Byte address of address `i`.
    pub fn byte(self, i: usize) -> u32 {
        self.atoms[i] << 3
    }

    /// Post-increments address `i` by the stride `select` picks (2 bits) from `$mStride`.
    pub fn advance(&mut self, i: usize, select: u32, stride_reg: u32) {
        let step = match select & 3 {
            0 => 1,
            field => {
                let raw = (stride_reg >> (10 * (field - 1))) & 0x3ff;
                ((raw << 22) as i32) >> 22
            }
        };
        self.atoms[i] = (self.atoms[i] as i32).wrapping_add(step) as u32 & ATOM_MASK;
    }
}

/// `tapack $mD:D+1, $mA0, $mA1, $mA2`.
pub(super) fn tapack(inst: &Inst, ctx: &mut ContextState) -> Result<(), Trap> {
    let mut atoms = [0u32; 3];
    for (i, atom) in atoms.iter_mut().enumerate() {
        let address = ctx.read_m(inst.reg(i + 1));
        if address & 7 != 0 {
            return Err(TrapKind::InvalidOperation {
                what: "tapack address is not 8-byte aligned",
            }
            .into());
        }
        if address >> 21 != 0 {
            return Err(TrapKind::InvalidOperation {
                what: "tapack address does not fit the 18-bit atom index",
            }
            .into());
        }
        *atom = address >> 3;
    }
    let (lo, hi) = Packed { atoms }.pack();
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

    fn pack(a0: u32, a1: u32, a2: u32) -> (u32, u32) {
        let (a0, a1, a2) = (a0 >> 3, a1 >> 3, a2 >> 3);
        (a0 | (a2 & 0x3fff) << 18, a1 | (a2 >> 14) << 18)
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
    fn tapack_packs_atom_indices() {
        let (mut ctx, mut env) = (packed_worker(), TestEnv::new());
        ok(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2]));
        assert_eq!((ctx.m[4], ctx.m[5]), pack(A0, A1, A2));
        // A2's atom index 0x14003 straddles the two registers.
        assert_eq!(ctx.m[4] >> 18, 0x14003 & 0x3fff);
        assert_eq!(ctx.m[5] >> 18, 0x14003 >> 14);
        let unpacked = Packed::unpack(ctx.m[4], ctx.m[5]);
        assert_eq!(
            [unpacked.byte(0), unpacked.byte(1), unpacked.byte(2)],
            [A0, A1, A2]
        );
        ctx.m[1] = A1 + 4;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2])),
            TrapKind::InvalidOperation { .. }
        ));
        ctx.m[1] = 0x20_0000;
        assert!(matches!(
            traps(&mut ctx, &mut env, one(Tapack, &[4, 0, 1, 2])),
            TrapKind::InvalidOperation { .. }
        ));
        ctx.m[1] = A1;
        assert_eq!(
            traps(&mut ctx, &mut env, one(Tapack, &[12, 0, 1, 2])),
            TrapKind::ReadOnlyRegister { register: "$m12" }
        );
    }

    #[test]
    fn stride_selection_and_wrap() {
        let stride = strides(-3, 0, 511);
        let mut p = Packed {
            atoms: [10, 10, 10],
        };
        p.advance(0, 0b00, stride);
        p.advance(1, 0b01, stride);
        p.advance(2, 0b10, stride);
        assert_eq!(p.atoms, [11, 7, 10]);
        p.advance(2, 0b11, stride);
        assert_eq!(p.atoms[2], 521);
        p.advance(0, 0b01, strides(-512, 0, 0));
        assert_eq!(p.atoms[0], (11 - 512) as u32 & 0x3ffff);
        let mut top = Packed {
            atoms: [0x3ffff, 0, 0x3ffff],
        };
        top.advance(0, 0, 0);
        top.advance(2, 0, 0);
        top.advance(1, 0b01, strides(-1, 0, 0));
        assert_eq!(top.atoms, [0, 0x3ffff, 0]);
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
