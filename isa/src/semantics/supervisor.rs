//! Supervisor instructions: worker launch (`run`, `runall`), `sync`, `send`, `delay`, the timed
//! incoming controls `delaypic` / `delayxpic` / `sendpic`, and the AMP weight loads
//! `ld64putcs` / `ld128putcs`.
//!
//! Launch, sync, exchange and delay only describe what the tile must do ([`Effect`]); the tile
//! carries them out. `run $mE, $mV, zimm16` asks for entry `$mE` and vertex base
//! `$mV + 4·zimm16 + TMEM_REGION0_BASE_ADDR` (the SDK linker's `R_COLOSSUS_RUN` relocation
//! encodes the immediate relative to the region base); `runall` for the absolute vertex base
//! `$mV` and a per-worker stride of `4·zimm16` \[C\]: ipu-stack's kernels, checked on a C600,
//! pass the supervisor's `$m11` (an SRAM address) to `runall`, PopLibs passes `$sp` and C
//! pointers, and the ASM-DOC `runall` page adds no region base
//! (docs/reference/hardware-ipu-stack.md §2). Both trap
//! `MisalignedTarget` if the entry or the vertex base is not 4-byte aligned. `send` names a byte
//! address (the encoding holds a word address) and sends count + 1 words.
//!
//! `ld64putcs idx`: `$CWEI[idx]` = the 64-bit little-endian value at `$CCCSLOAD`, then
//! `$CCCSLOAD += 8`. `ld128putcs idx`: `$CWEI[idx]` and `$CWEI[idx+1]` from 16 bytes (the env
//! requires interleaved memory), then `+= 16` \[C\]. An index past the 64 registers traps
//! `InvalidOperation` \[A\].

use super::regs::Flow;
use super::state::ContextState;
use super::{Effect, ExecEnv, IncomingControl, Trap, TrapKind, TMEM_REGION0_BASE_ADDR};
use crate::csr::{index, CWEI_COUNT};
use crate::inst::Inst;

fn check_aligned(address: u32) -> Result<(), Trap> {
    if address & 3 != 0 {
        return Err(TrapKind::MisalignedTarget { target: address }.into());
    }
    Ok(())
}

/// `run $mEntry, $mVertex, zimm16`.
pub(super) fn run(inst: &Inst, ctx: &ContextState, flow: &mut Flow) -> Result<(), Trap> {
    let entry = ctx.read_m(inst.reg(0));
    let vertex_base = ctx
        .read_m(inst.reg(1))
        .wrapping_add(inst.imm(2).wrapping_mul(4))
        .wrapping_add(TMEM_REGION0_BASE_ADDR);
    check_aligned(entry)?;
    check_aligned(vertex_base)?;
    flow.effect = Effect::Launch { entry, vertex_base };
    Ok(())
}

/// `runall $mEntry, $mVertex, zimm16`.
pub(super) fn runall(inst: &Inst, ctx: &ContextState, flow: &mut Flow) -> Result<(), Trap> {
    let entry = ctx.read_m(inst.reg(0));
    let vertex_base = ctx.read_m(inst.reg(1));
    check_aligned(entry)?;
    check_aligned(vertex_base)?;
    flow.effect = Effect::LaunchAll {
        entry,
        vertex_base,
        stride: inst.imm(2).wrapping_mul(4),
    };
    Ok(())
}

/// `sync zone`.
pub(super) fn sync(inst: &Inst, flow: &mut Flow) {
    flow.effect = Effect::Sync { zone: inst.imm(0) };
}

/// `send count, address, mode`. With mode bit 2 (64-bit items) the hardware's address field
/// counts 8-byte units and the count items \[S\] (hardware-ipu-stack.md §1.1): the operand, a
/// 4-byte word address in the field, stands for twice its byte value.
pub(super) fn send(inst: &Inst, flow: &mut Flow) {
    let mode = inst.imm(2);
    let address = if mode & crate::fabric::ITEMS_64 != 0 {
        inst.imm(1).wrapping_mul(2)
    } else {
        inst.imm(1)
    };
    flow.effect = Effect::Send {
        address,
        words: inst.imm(0) + 1,
        mode,
    };
}

/// `delay N`: N + 1 cycles, as on the hardware \[S\] (osmarks/ipu-stack's rows advance the
/// exchange timeline by N + 1 events per `delay N` and match the phase cycles measured on a C600;
/// docs/reference/hardware-ipu-stack.md §1.1).
pub(super) fn delay(inst: &Inst, flow: &mut Flow) {
    flow.effect = Effect::Delay {
        cycles: inst.imm(0) + 1,
    };
}

/// `delaypic events-1, selector, value`.
pub(super) fn delaypic(inst: &Inst, flow: &mut Flow) {
    let value = inst.imm(2);
    flow.effect = Effect::TimedControl {
        events: inst.imm(0) + 1,
        control: pic(inst.imm(1), value),
    };
}

/// `delayxpic events-1, stream, value`.
pub(super) fn delayxpic(inst: &Inst, flow: &mut Flow) {
    flow.effect = Effect::TimedControl {
        events: inst.imm(0) + 1,
        control: IncomingControl::Source {
            paired: inst.imm(1) == 1,
            value: inst.imm(2),
        },
    };
}

/// `sendpic count, selector, value`: selectors 0 and 1 are the two XPIC forms (a 13-bit value),
/// 2 and 3 the two PIC forms.
pub(super) fn sendpic(inst: &Inst, flow: &mut Flow) {
    let (selector, value) = (inst.imm(1), inst.imm(2));
    let control = match selector {
        0 | 1 => IncomingControl::Source {
            paired: selector == 1,
            value: value & 0x1fff,
        },
        _ => pic(selector - 2, value),
    };
    flow.effect = Effect::SendControl {
        words: inst.imm(0) + 1,
        control,
    };
}

/// `sendpicp count, address, mode, xpic, selector, value`: a `send` (the stream restarts at the
/// address; mode 0 sends nothing and only applies the controls) with an XPIC setting (the
/// inline word's 14 bits as `delayxpic`'s stream bit and source [A]) and a PIC setting at its
/// first word.
pub(super) fn sendpicp(inst: &Inst, flow: &mut Flow) {
    let mode = inst.imm(2);
    let address = if mode & crate::fabric::ITEMS_64 != 0 {
        inst.imm(1).wrapping_mul(2)
    } else {
        inst.imm(1)
    };
    let xpic = inst.imm(3);
    flow.effect = Effect::SendControls {
        address,
        words: inst.imm(0) + 1,
        mode,
        source: IncomingControl::Source {
            paired: xpic & 0x2000 != 0,
            value: xpic & 0x1fff,
        },
        pic: pic(inst.imm(4), inst.imm(5)),
    };
}

/// `sendoff count, delta, mode`.
pub(super) fn sendoff(inst: &Inst, flow: &mut Flow) {
    flow.effect = Effect::SendOn {
        words: inst.imm(0) + 1,
        delta: inst.imm(1),
        mode: inst.imm(2),
    };
}

/// A PIC setting: selector 0 the pointer, 1 the format.
fn pic(selector: u32, value: u32) -> IncomingControl {
    if selector == 0 {
        IncomingControl::Pointer { word: value }
    } else {
        IncomingControl::Format { value }
    }
}

/// `ld64putcs` (`WIDTH` = 8) and `ld128putcs` (`WIDTH` = 16).
pub(super) fn ldputcs<E: ExecEnv, const WIDTH: usize>(
    inst: &Inst,
    ctx: &mut ContextState,
    env: &mut E,
) -> Result<(), Trap> {
    let first = inst.imm(0) as usize;
    let count = WIDTH / 8;
    if first + count > CWEI_COUNT {
        return Err(TrapKind::InvalidOperation {
            what: "putcs index is past the last $CWEI register",
        }
        .into());
    }
    let pointer = ctx.csr[index::CCCSLOAD as usize];
    let mut bytes = [0u8; WIDTH];
    env.load(pointer, &mut bytes)?;
    let cwei = env.cwei_mut();
    for (k, chunk) in bytes.chunks_exact(8).enumerate() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        cwei[first + k] = u64::from_le_bytes(word);
    }
    ctx.csr[index::CCCSLOAD as usize] = pointer.wrapping_add(WIDTH as u32);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::csr::index;
    use crate::inst::Opcode::*;
    use crate::semantics::test_env::*;
    use crate::semantics::{Effect, TrapKind, TMEM_REGION0_BASE_ADDR};

    /// The timed incoming controls describe their control and its events; `trap` stops with
    /// its code, `sans` does nothing visible.
    #[test]
    fn timed_controls_trap_and_sans() {
        use crate::semantics::IncomingControl;
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        let effect =
            |sup: &mut _, env: &mut _, op, operands: &[u32]| ok(sup, env, one(op, operands)).effect;
        assert_eq!(
            effect(&mut sup, &mut env, DelayXpic, &[22, 0, 1600]),
            Effect::TimedControl {
                events: 23,
                control: IncomingControl::Source {
                    paired: false,
                    value: 1600
                }
            }
        );
        assert_eq!(
            effect(&mut sup, &mut env, DelayPic, &[0, 1, 0]),
            Effect::TimedControl {
                events: 1,
                control: IncomingControl::Format { value: 0 }
            }
        );
        assert_eq!(
            effect(&mut sup, &mut env, SendPic, &[3, 2, 0x14048]),
            Effect::SendControl {
                words: 4,
                control: IncomingControl::Pointer { word: 0x14048 }
            }
        );
        assert_eq!(
            effect(&mut sup, &mut env, SendPic, &[0, 1, 7]),
            Effect::SendControl {
                words: 1,
                control: IncomingControl::Source {
                    paired: true,
                    value: 7
                }
            }
        );
        assert_eq!(effect(&mut sup, &mut env, Sans, &[0]), Effect::None);
        assert_eq!(
            traps(&mut sup, &mut env, one(TrapPbrk, &[3])),
            TrapKind::Breakpoint { code: 3 }
        );
    }

    #[test]
    fn run_and_runall() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        sup.m[1] = 0x4C200;
        sup.m[2] = 0x100;
        let outcome = ok(&mut sup, &mut env, one(Run, &[1, 2, 3]));
        assert_eq!(
            outcome.effect,
            Effect::Launch {
                entry: 0x4C200,
                vertex_base: 0x100 + 12 + TMEM_REGION0_BASE_ADDR
            }
        );
        // `runall`'s vertex base is absolute: no region base added.
        sup.m[2] = 0x4C100;
        let outcome = ok(&mut sup, &mut env, one(Runall, &[1, 2, 0x1234]));
        assert_eq!(
            outcome.effect,
            Effect::LaunchAll {
                entry: 0x4C200,
                vertex_base: 0x4C100,
                stride: 0x1234 * 4
            }
        );
        sup.m[1] = 0x4C202;
        assert_eq!(
            traps(&mut sup, &mut env, one(Run, &[1, 2, 0])),
            TrapKind::MisalignedTarget { target: 0x4C202 }
        );
        sup.m[1] = 0x4C200;
        sup.m[2] = 0x102;
        assert!(matches!(
            traps(&mut sup, &mut env, one(Runall, &[1, 2, 1])),
            TrapKind::MisalignedTarget { .. }
        ));
        assert!(matches!(
            traps(&mut worker(), &mut env, one(Run, &[1, 2, 0])),
            TrapKind::WrongContext { .. }
        ));
    }

    #[test]
    fn sync_send_delay() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        assert_eq!(
            ok(&mut sup, &mut env, one(Sync, &[2])).effect,
            Effect::Sync { zone: 2 }
        );
        assert_eq!(
            ok(&mut sup, &mut env, one(Delay, &[100])).effect,
            Effect::Delay { cycles: 101 }
        );
        assert_eq!(
            ok(&mut sup, &mut env, one(Send, &[3, 0x4C400, 1])).effect,
            Effect::Send {
                address: 0x4C400,
                words: 4,
                mode: 1
            }
        );
    }

    #[test]
    fn weight_loads_post_increment_cccsload() {
        let (mut sup, mut env) = (supervisor(), TestEnv::new());
        env.write_u64(0x5_0000, 0x1111_2222_3333_4444);
        env.write_u64(0x5_0008, 0x5555_6666_7777_8888);
        sup.m[1] = 0x5_0000;
        ok(&mut sup, &mut env, one(Put, &[index::CCCSLOAD as u32, 1]));
        ok(&mut sup, &mut env, one(Ld64putcs, &[5]));
        ok(&mut sup, &mut env, one(Ld64putcs, &[63]));
        assert_eq!(
            (env.cwei[5], env.cwei[63]),
            (0x1111_2222_3333_4444, 0x5555_6666_7777_8888)
        );
        assert_eq!(sup.csr[index::CCCSLOAD as usize], 0x5_0010);
        assert!(matches!(
            traps(&mut sup, &mut env, one(Ld64putcs, &[64])),
            TrapKind::InvalidOperation { .. }
        ));
        // ld128putcs needs interleaved memory.
        assert!(matches!(
            traps(&mut sup, &mut env, one(Ld128putcs, &[0])),
            TrapKind::Memory(_)
        ));
        env.write_u64(INTERLEAVED_BASE, 0xaaaa);
        env.write_u64(INTERLEAVED_BASE + 8, 0xbbbb);
        sup.csr[index::CCCSLOAD as usize] = INTERLEAVED_BASE;
        ok(&mut sup, &mut env, one(Ld128putcs, &[62]));
        assert_eq!((env.cwei[62], env.cwei[63]), (0xaaaa, 0xbbbb));
        assert_eq!(sup.csr[index::CCCSLOAD as usize], INTERLEAVED_BASE + 16);
        assert!(matches!(
            traps(&mut sup, &mut env, one(Ld128putcs, &[63])),
            TrapKind::InvalidOperation { .. }
        ));
        assert!(matches!(
            traps(&mut worker(), &mut env, one(Ld64putcs, &[0])),
            TrapKind::WrongContext { .. }
        ));
    }
}
