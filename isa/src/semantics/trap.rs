//! Traps: the reasons an instruction stops a run. The simulator adds tile, context, PC, the
//! instruction in assembly form and the cycle.

use thiserror::Error;

/// Why an instruction trapped.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TrapKind {
    #[error("E-TRAP-001 memory fault: {0}")]
    Memory(String),
    #[error("E-TRAP-002 `{mnemonic}` cannot run in the {context} context")]
    WrongContext {
        mnemonic: &'static str,
        context: &'static str,
    },
    #[error("E-TRAP-003 write to read-only register {register}")]
    ReadOnlyRegister { register: &'static str },
    #[error("E-TRAP-004 CSR {space} index {index:#x} does not exist in the {context} context")]
    NoSuchCsr {
        space: &'static str,
        index: u8,
        context: &'static str,
    },
    #[error("E-TRAP-005 CSR {name} is read-only")]
    ReadOnlyCsr { name: &'static str },
    #[error("E-TRAP-006 not modelled: {what}")]
    Unmodelled { what: String },
    #[error("E-TRAP-007 `{mnemonic}` is not allowed inside a rpt body")]
    ControlInRepeatBody { mnemonic: &'static str },
    #[error("E-TRAP-008 rpt body at {body:#x} is not 8-byte aligned")]
    MisalignedRepeatBody { body: u32 },
    #[error("E-TRAP-009 a bundle crosses the end of the rpt body at {end:#x}")]
    RepeatBodyOverrun { end: u32 },
    #[error("E-TRAP-010 invalid operation: {what}")]
    InvalidOperation { what: &'static str },
    #[error("E-TRAP-011 branch target {target:#x} is not 4-byte aligned")]
    MisalignedTarget { target: u32 },
    #[error("E-TRAP-012 invalid `{mnemonic}` flags {flags:#x}: {reason}")]
    BadFlags {
        mnemonic: &'static str,
        flags: u32,
        reason: &'static str,
    },
    /// `trap N` raises PBRK0 on the hardware (osmarks/ipu-stack's
    /// PATCHED_BREAKPOINT_RE_FINDINGS.md, run on a C600) \[S\].
    #[error("E-TRAP-013 `trap {code}`: patched breakpoint (PBRK0)")]
    Breakpoint { code: u32 },
    /// A `send` that reads the memory element the supervisor fetches its instructions from
    /// raises `TEXCPT_CONFLICT` on the hardware (osmarks/ipu-stack's BRINGUP.md, run on a
    /// C600) \[S\].
    #[error("E-TRAP-014 exchange conflict (TEXCPT_CONFLICT): the send reads {address:#x} in memory element {element}, which the supervisor fetches its instructions from (at {fetch:#x})")]
    ExchangeConflict {
        address: u32,
        element: u32,
        fetch: u32,
    },
}

/// A trap as the semantics raise it; the simulator wraps it with where and when.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind}")]
pub struct Trap {
    pub kind: TrapKind,
}

impl From<TrapKind> for Trap {
    fn from(kind: TrapKind) -> Trap {
        Trap { kind }
    }
}

impl Trap {
    pub fn memory(message: impl Into<String>) -> Trap {
        TrapKind::Memory(message.into()).into()
    }

    /// `BadFlags`: `inst`'s flags operand holds `flags`, which the model does not define.
    pub fn bad_flags(inst: &crate::inst::Inst, flags: u32, reason: &'static str) -> Trap {
        TrapKind::BadFlags {
            mnemonic: inst.desc().mnemonic,
            flags,
            reason,
        }
        .into()
    }

    /// A behaviour the model does not cover; `what` names it and what is modelled.
    pub fn unmodelled(what: impl Into<String>) -> Trap {
        TrapKind::Unmodelled { what: what.into() }.into()
    }
}
