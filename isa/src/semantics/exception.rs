//! The hardware's exception and receive-error codes, and which of them each Tessera trap stands
//! for. Names and numbers are the SDK's metadata as osmarks/ipu-stack's driver decodes them
//! (`ipu-driver/src/lib.rs`@ce7c7e9; docs/reference/hardware-ipu-stack.md §1.6) \[S\]; which
//! trap raises which exception is the project's reading \[A\], except where a row says the
//! hardware showed it.

use super::TrapKind;

/// An exception type: bits [7:4] (ETYPE) of `$SSR` / `$WSR` when a context stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExceptionType {
    None,
    Rbrk,
    Pbrk0,
    Pbrk1,
    Bos,
    Fp,
    Conflict,
    Exconf,
    InvalidAddr,
    InvalidOp,
    InvalidPc,
    Dbrk,
    InvalidInstr,
    Exerr,
    Memerr,
    Ibrk,
}

impl ExceptionType {
    /// Every type, in code order (the index is the code).
    pub const ALL: [ExceptionType; 16] = [
        ExceptionType::None,
        ExceptionType::Rbrk,
        ExceptionType::Pbrk0,
        ExceptionType::Pbrk1,
        ExceptionType::Bos,
        ExceptionType::Fp,
        ExceptionType::Conflict,
        ExceptionType::Exconf,
        ExceptionType::InvalidAddr,
        ExceptionType::InvalidOp,
        ExceptionType::InvalidPc,
        ExceptionType::Dbrk,
        ExceptionType::InvalidInstr,
        ExceptionType::Exerr,
        ExceptionType::Memerr,
        ExceptionType::Ibrk,
    ];

    /// The ETYPE field's value.
    pub fn code(self) -> u32 {
        match self {
            ExceptionType::None => 0,
            ExceptionType::Rbrk => 1,
            ExceptionType::Pbrk0 => 2,
            ExceptionType::Pbrk1 => 3,
            ExceptionType::Bos => 4,
            ExceptionType::Fp => 5,
            ExceptionType::Conflict => 6,
            ExceptionType::Exconf => 7,
            ExceptionType::InvalidAddr => 8,
            ExceptionType::InvalidOp => 9,
            ExceptionType::InvalidPc => 10,
            ExceptionType::Dbrk => 11,
            ExceptionType::InvalidInstr => 12,
            ExceptionType::Exerr => 13,
            ExceptionType::Memerr => 14,
            ExceptionType::Ibrk => 15,
        }
    }

    /// The SDK's name (`TEXCPT_` + this is the exception's symbol).
    pub fn name(self) -> &'static str {
        match self {
            ExceptionType::None => "NONE",
            ExceptionType::Rbrk => "RBRK",
            ExceptionType::Pbrk0 => "PBRK0",
            ExceptionType::Pbrk1 => "PBRK1",
            ExceptionType::Bos => "BOS",
            ExceptionType::Fp => "FP",
            ExceptionType::Conflict => "CONFLICT",
            ExceptionType::Exconf => "EXCONF",
            ExceptionType::InvalidAddr => "INVALID_ADDR",
            ExceptionType::InvalidOp => "INVALID_OP",
            ExceptionType::InvalidPc => "INVALID_PC",
            ExceptionType::Dbrk => "DBRK",
            ExceptionType::InvalidInstr => "INVALID_INSTR",
            ExceptionType::Exerr => "EXERR",
            ExceptionType::Memerr => "MEMERR",
            ExceptionType::Ibrk => "IBRK",
        }
    }

    /// The type of an ETYPE value (`None` past 15).
    pub fn from_code(code: u32) -> Option<ExceptionType> {
        ExceptionType::ALL.get(code as usize).copied()
    }
}

/// An exchange receive error: `CTXT_STS.ERERR` after a receive went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReceiveError {
    None,
    ClashInstr,
    ClashIfetch,
    Addr,
    Workers,
    Dbrk,
    Conf,
    Modi,
}

impl ReceiveError {
    /// Every code, in order (the index is the code).
    pub const ALL: [ReceiveError; 8] = [
        ReceiveError::None,
        ReceiveError::ClashInstr,
        ReceiveError::ClashIfetch,
        ReceiveError::Addr,
        ReceiveError::Workers,
        ReceiveError::Dbrk,
        ReceiveError::Conf,
        ReceiveError::Modi,
    ];

    /// The ERERR field's value.
    pub fn code(self) -> u32 {
        match self {
            ReceiveError::None => 0,
            ReceiveError::ClashInstr => 1,
            ReceiveError::ClashIfetch => 2,
            ReceiveError::Addr => 3,
            ReceiveError::Workers => 4,
            ReceiveError::Dbrk => 5,
            ReceiveError::Conf => 6,
            ReceiveError::Modi => 7,
        }
    }

    /// The SDK's name.
    pub fn name(self) -> &'static str {
        match self {
            ReceiveError::None => "NONE",
            ReceiveError::ClashInstr => "CLASH_INSTR",
            ReceiveError::ClashIfetch => "CLASH_IFETCH",
            ReceiveError::Addr => "ADDR",
            ReceiveError::Workers => "WORKERS",
            ReceiveError::Dbrk => "DBRK",
            ReceiveError::Conf => "CONF",
            ReceiveError::Modi => "MODI",
        }
    }

    /// What Tessera does where the hardware raises this error.
    pub fn in_tessera(self) -> &'static str {
        match self {
            ReceiveError::None => "a receive that went right",
            ReceiveError::ClashInstr => "not modelled",
            ReceiveError::ClashIfetch => {
                "a received word in the memory element of the supervisor's PC (or PC + 64) stops the run (E-SIM-017); the compiler keeps received buffers off the supervisor program's memory elements"
            }
            ReceiveError::Addr => {
                "a received word outside tile memory or into code stops the run (E-SIM-009)"
            }
            ReceiveError::Workers => {
                "not modelled (receiving while workers run is allowed; the inference that it is an error is not shown on the hardware)"
            }
            ReceiveError::Dbrk => "not modelled (no debug breakpoints)",
            ReceiveError::Conf => "not modelled",
            ReceiveError::Modi => "not modelled",
        }
    }
}

impl TrapKind {
    /// The trap's error code (the start of its message).
    pub fn code(&self) -> &'static str {
        match self {
            TrapKind::Memory(_) => "E-TRAP-001",
            TrapKind::WrongContext { .. } => "E-TRAP-002",
            TrapKind::ReadOnlyRegister { .. } => "E-TRAP-003",
            TrapKind::NoSuchCsr { .. } => "E-TRAP-004",
            TrapKind::ReadOnlyCsr { .. } => "E-TRAP-005",
            TrapKind::Unmodelled { .. } => "E-TRAP-006",
            TrapKind::ControlInRepeatBody { .. } => "E-TRAP-007",
            TrapKind::MisalignedRepeatBody { .. } => "E-TRAP-008",
            TrapKind::RepeatBodyOverrun { .. } => "E-TRAP-009",
            TrapKind::InvalidOperation { .. } => "E-TRAP-010",
            TrapKind::MisalignedTarget { .. } => "E-TRAP-011",
            TrapKind::BadFlags { .. } => "E-TRAP-012",
            TrapKind::Breakpoint { .. } => "E-TRAP-013",
            TrapKind::ExchangeConflict { .. } => "E-TRAP-014",
        }
    }

    /// The hardware exception this trap stands for, or `None` where it has none (a behaviour
    /// Tessera does not model stops the run, where the hardware does something).
    pub fn exception(&self) -> Option<ExceptionType> {
        match self {
            TrapKind::Memory(_) => Some(ExceptionType::InvalidAddr),
            TrapKind::WrongContext { .. } | TrapKind::ControlInRepeatBody { .. } => {
                Some(ExceptionType::InvalidInstr)
            }
            TrapKind::ReadOnlyRegister { .. }
            | TrapKind::NoSuchCsr { .. }
            | TrapKind::ReadOnlyCsr { .. }
            | TrapKind::InvalidOperation { .. }
            | TrapKind::BadFlags { .. } => Some(ExceptionType::InvalidOp),
            TrapKind::MisalignedRepeatBody { .. }
            | TrapKind::RepeatBodyOverrun { .. }
            | TrapKind::MisalignedTarget { .. } => Some(ExceptionType::InvalidPc),
            // Shown on the hardware (osmarks/ipu-stack, on a C600).
            TrapKind::Breakpoint { .. } => Some(ExceptionType::Pbrk0),
            TrapKind::ExchangeConflict { .. } => Some(ExceptionType::Conflict),
            TrapKind::Unmodelled { .. } => None,
        }
    }
}

/// One example of every trap kind, for the reference and its tests.
pub fn trap_examples() -> Vec<TrapKind> {
    vec![
        TrapKind::Memory("4-byte access at 0x0 is outside tile memory".into()),
        TrapKind::WrongContext {
            mnemonic: "run",
            context: "worker",
        },
        TrapKind::ReadOnlyRegister { register: "$mzero" },
        TrapKind::NoSuchCsr {
            space: "lower",
            index: 0xff,
            context: "worker",
        },
        TrapKind::ReadOnlyCsr { name: "$WSR" },
        TrapKind::Unmodelled {
            what: "a behaviour".into(),
        },
        TrapKind::ControlInRepeatBody { mnemonic: "br" },
        TrapKind::MisalignedRepeatBody { body: 0x4c004 },
        TrapKind::RepeatBodyOverrun { end: 0x4c010 },
        TrapKind::InvalidOperation { what: "an example" },
        TrapKind::MisalignedTarget { target: 0x4c002 },
        TrapKind::BadFlags {
            mnemonic: "f16v4cmac",
            flags: 0xf,
            reason: "an example",
        },
        TrapKind::Breakpoint { code: 0 },
        TrapKind::ExchangeConflict {
            address: 0x4c018,
            element: 0,
            fetch: 0x4c004,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_the_sdks() {
        for (i, t) in ExceptionType::ALL.iter().enumerate() {
            assert_eq!(t.code(), i as u32);
            assert_eq!(ExceptionType::from_code(i as u32), Some(*t));
        }
        assert_eq!(ExceptionType::from_code(16), None);
        let names: Vec<&str> = ExceptionType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names.join(" "),
            "NONE RBRK PBRK0 PBRK1 BOS FP CONFLICT EXCONF INVALID_ADDR INVALID_OP INVALID_PC DBRK INVALID_INSTR EXERR MEMERR IBRK"
        );
        let names: Vec<&str> = ReceiveError::ALL.iter().map(|e| e.name()).collect();
        assert_eq!(
            names.join(" "),
            "NONE CLASH_INSTR CLASH_IFETCH ADDR WORKERS DBRK CONF MODI"
        );
        for (i, e) in ReceiveError::ALL.iter().enumerate() {
            assert_eq!(e.code(), i as u32);
        }
    }

    #[test]
    fn the_traps_the_hardware_showed_map_to_its_exceptions() {
        assert_eq!(
            TrapKind::Breakpoint { code: 0 }.exception(),
            Some(ExceptionType::Pbrk0)
        );
        let conflict = TrapKind::ExchangeConflict {
            address: 0,
            element: 0,
            fetch: 0,
        };
        assert_eq!(conflict.exception(), Some(ExceptionType::Conflict));
        assert_eq!(ExceptionType::Conflict.code(), 6);
        // Every trap but the unmodelled behaviour is some hardware exception, never NONE; each
        // message starts with the trap's code, and the codes are distinct.
        let mut codes: Vec<&str> = trap_examples().iter().map(|k| k.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), trap_examples().len());
        for kind in trap_examples() {
            assert!(kind.to_string().starts_with(kind.code()), "{kind}");
            let e = kind.exception();
            assert_eq!(
                e.is_none(),
                matches!(kind, TrapKind::Unmodelled { .. }),
                "{kind}"
            );
            assert_ne!(e, Some(ExceptionType::None));
        }
    }
}
