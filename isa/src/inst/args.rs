//! Operand kinds, their access modes and where their bits sit in the instruction word.

/// What an operand is, which decides how it is parsed, printed, encoded and checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// `$mN`.
    MReg,
    /// `$aN`.
    AReg,
    /// `$mN:N+1`, N even.
    MPair,
    /// `$aN:N+1`, N even (`$azeros` = `$a14:15`).
    APair,
    /// `$aN:N+3`, N a multiple of 4.
    AQuad,
    /// `$mN+=`: a register that is read and post-incremented.
    MRegPostInc,
    /// `$mN:N+1+=`: a triple-packed address pair that is read and post-incremented.
    MPairPostInc,
    /// `$mN++`: an address register that is read and incremented by its access size
    /// (`ldd16*`'s delta pointer).
    MRegIncrement,
    /// `$mN@`: an address delta that is read and replaced by a loaded one (`ldd16*`).
    MRegDelta,
    /// `$aN:B`: an ARF register whose word stands for both f32 lanes of a pair operand.
    ABroadcast,
    /// `$aN:BL`: an ARF register whose low half stands for every f16 lane of the operand.
    ABroadcastLo,
    /// `$aN:BU`: an ARF register whose high half stands for every f16 lane of the operand.
    ABroadcastHi,
    /// Unsigned immediate; width from the field.
    Unsigned,
    /// Signed (two's complement) immediate; width from the field.
    Signed,
    /// Code address: written as a byte address or label, encoded as a word address.
    Target,
    /// Lower-space CSR (`get`/`put`): a name like `$WSR` or a number.
    LowerCsr,
    /// Upper-space CSR (`uget`/`uput`): a name like `$FP_CTL` or a number.
    UpperCsr,
    /// Data word address for `send`: written as a byte address, encoded as a word address.
    WordAddress,
}

impl OperandKind {
    /// How many consecutive registers the operand names (0 for immediates).
    pub fn register_width(self) -> u8 {
        match self {
            OperandKind::MReg
            | OperandKind::AReg
            | OperandKind::MRegPostInc
            | OperandKind::MRegIncrement
            | OperandKind::MRegDelta
            | OperandKind::ABroadcast
            | OperandKind::ABroadcastLo
            | OperandKind::ABroadcastHi => 1,
            OperandKind::MPair | OperandKind::APair | OperandKind::MPairPostInc => 2,
            OperandKind::AQuad => 4,
            OperandKind::Unsigned
            | OperandKind::Signed
            | OperandKind::Target
            | OperandKind::LowerCsr
            | OperandKind::UpperCsr
            | OperandKind::WordAddress => 0,
        }
    }

    /// Whether the operand is a broadcast ARF source (`$aN:B`, `:BL`, `:BU`).
    pub fn is_broadcast(self) -> bool {
        matches!(
            self,
            OperandKind::ABroadcast | OperandKind::ABroadcastLo | OperandKind::ABroadcastHi
        )
    }

    pub fn is_register(self) -> bool {
        self.register_width() > 0
    }

    /// Whether the field holds a two's-complement value (sign-extended when decoded).
    pub fn is_signed(self) -> bool {
        self == OperandKind::Signed
    }

    /// Whether the operand is a byte address: a branch target or a word address.
    pub fn is_address(self) -> bool {
        matches!(self, OperandKind::Target | OperandKind::WordAddress)
    }

    /// What the operand's value must be a multiple of: the group of a register pair or quad,
    /// 4 bytes for code and word addresses, else 1.
    pub fn alignment(self) -> u32 {
        if self.is_address() {
            4
        } else {
            u32::from(self.register_width()).max(1)
        }
    }

    /// The register file of a register operand.
    pub fn register_file(self) -> Option<crate::registers::RegisterFile> {
        use crate::registers::RegisterFile;
        match self {
            OperandKind::MReg
            | OperandKind::MPair
            | OperandKind::MRegPostInc
            | OperandKind::MPairPostInc
            | OperandKind::MRegIncrement
            | OperandKind::MRegDelta => Some(RegisterFile::M),
            OperandKind::AReg
            | OperandKind::APair
            | OperandKind::AQuad
            | OperandKind::ABroadcast
            | OperandKind::ABroadcastLo
            | OperandKind::ABroadcastHi => Some(RegisterFile::A),
            OperandKind::Unsigned
            | OperandKind::Signed
            | OperandKind::Target
            | OperandKind::LowerCsr
            | OperandKind::UpperCsr
            | OperandKind::WordAddress => None,
        }
    }

    /// Human description used in error messages and the reference.
    pub fn describe(self) -> &'static str {
        match self {
            OperandKind::MReg => "an MRF register ($mN)",
            OperandKind::AReg => "an ARF register ($aN)",
            OperandKind::MPair => "an aligned MRF pair ($mN:N+1)",
            OperandKind::APair => "an aligned ARF pair ($aN:N+1)",
            OperandKind::AQuad => "an aligned ARF quad ($aN:N+3)",
            OperandKind::MRegPostInc => "a post-incremented MRF register ($mN+=)",
            OperandKind::MPairPostInc => "a post-incremented MRF pair ($mN:N+1+=)",
            OperandKind::MRegIncrement => "an MRF register incremented by the access size ($mN++)",
            OperandKind::MRegDelta => "an MRF delta register replaced by a loaded delta ($mN@)",
            OperandKind::ABroadcast => "an ARF register broadcast to both f32 lanes ($aN:B)",
            OperandKind::ABroadcastLo => "an ARF register's low half broadcast ($aN:BL)",
            OperandKind::ABroadcastHi => "an ARF register's high half broadcast ($aN:BU)",
            OperandKind::Unsigned => "an unsigned immediate",
            OperandKind::Signed => "a signed immediate",
            OperandKind::Target => "a code address or label",
            OperandKind::LowerCsr => "a CSR name or index",
            OperandKind::UpperCsr => "an upper-space CSR name or index",
            OperandKind::WordAddress => "a word-aligned data address",
        }
    }
}

/// Whether the instruction reads, writes or both reads and writes an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
    /// Immediates.
    Constant,
}

impl Access {
    pub fn tag(self) -> &'static str {
        match self {
            Access::Read => "r",
            Access::Write => "w",
            Access::ReadWrite => "rw",
            Access::Constant => "imm",
        }
    }
}

/// Where an operand's bits sit: pieces `(lowest instruction bit, width)` from the value's low bits up,
/// after shifting the value right by `shift` (word addresses shift 2; `ld2xst64pace` quads shift 1).
/// Bits 32..63 are the inline word of a two-word instruction (`sendpicp`): bit 32 + n is bit n
/// of the word after the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub pieces: &'static [(u8, u8)],
    pub shift: u8,
}

impl Field {
    pub const fn new(pieces: &'static [(u8, u8)]) -> Field {
        Field { pieces, shift: 0 }
    }

    pub const fn shifted(pieces: &'static [(u8, u8)], shift: u8) -> Field {
        Field { pieces, shift }
    }

    /// Total number of encoded bits.
    pub const fn width(&self) -> u32 {
        let mut total = 0;
        let mut i = 0;
        while i < self.pieces.len() {
            total += self.pieces[i].1 as u32;
            i += 1;
        }
        total
    }

    /// Mask of the encoding bits this field occupies (the inline word in bits 32..63).
    pub const fn encoding_mask(&self) -> u64 {
        let mut mask = 0u64;
        let mut i = 0;
        while i < self.pieces.len() {
            let (lo, width) = self.pieces[i];
            mask |= ((1u64 << width) - 1) << lo;
            i += 1;
        }
        mask
    }

    /// Mask of the first word's bits this field occupies.
    pub const fn instruction_mask(&self) -> u32 {
        self.encoding_mask() as u32
    }

    /// Whether part of the field is in the inline word of a two-word instruction.
    pub const fn is_inline(&self) -> bool {
        self.encoding_mask() >> 32 != 0
    }

    /// Places an encoded field value (already shifted and range-checked) into the encoding's
    /// bits (the inline word in bits 32..63).
    pub fn insert(&self, encoded: u32) -> u64 {
        let mut bits = 0u64;
        let mut consumed = 0;
        for &(lo, width) in self.pieces {
            let part = (u64::from(encoded) >> consumed) & ((1u64 << width) - 1);
            bits |= part << lo;
            consumed += u32::from(width);
        }
        bits
    }

    /// Reads the encoded field value out of the encoding's bits (the inline word in bits
    /// 32..63).
    pub fn extract(&self, bits: u64) -> u32 {
        let mut value = 0u64;
        let mut consumed = 0;
        for &(lo, width) in self.pieces {
            let part = (bits >> lo) & ((1u64 << width) - 1);
            value |= part << consumed;
            consumed += u32::from(width);
        }
        value as u32
    }
}

/// One operand of an instruction row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandDesc {
    pub kind: OperandKind,
    pub access: Access,
    pub field: Field,
}

impl OperandDesc {
    /// Maps an arbitrary `raw` to a value this operand can encode (register number in range and
    /// aligned to its group, immediate within the field width, address aligned to the field's
    /// shift): how the round-trip tests and the fuzz targets make valid instructions from noise.
    pub fn fold_value(&self, raw: u32) -> u32 {
        let width = self.field.width();
        let shift = u32::from(self.field.shift);
        let mask = ((1u64 << width) - 1) as u32;
        match self.kind {
            OperandKind::MReg
            | OperandKind::AReg
            | OperandKind::MRegPostInc
            | OperandKind::MRegIncrement
            | OperandKind::MRegDelta
            | OperandKind::ABroadcast
            | OperandKind::ABroadcastLo
            | OperandKind::ABroadcastHi => raw % 16,
            OperandKind::MPair | OperandKind::APair | OperandKind::MPairPostInc => (raw % 8) * 2,
            OperandKind::AQuad => (raw % 4) * 4,
            OperandKind::Signed => {
                let bits = raw & mask;
                (((bits << (32 - width)) as i32) >> (32 - width)) as u32
            }
            OperandKind::Unsigned
            | OperandKind::LowerCsr
            | OperandKind::UpperCsr
            | OperandKind::Target
            | OperandKind::WordAddress => (raw & mask) << shift,
        }
    }
}

// Field positions shared by many rows. Names give the instruction bits: `B23` = [23:20].
pub const B23: Field = Field::new(&[(20, 4)]);
pub const B19: Field = Field::new(&[(16, 4)]);
pub const B15: Field = Field::new(&[(12, 4)]);
pub const B7: Field = Field::new(&[(4, 4)]);
pub const B3: Field = Field::new(&[(0, 4)]);
pub const IMM2: Field = Field::new(&[(0, 2)]);
pub const IMM3: Field = Field::new(&[(0, 3)]);
pub const IMM4: Field = Field::new(&[(0, 4)]);
pub const IMM8: Field = Field::new(&[(0, 8)]);
pub const IMM12: Field = Field::new(&[(0, 12)]);
pub const IMM16: Field = Field::new(&[(0, 16)]);
pub const IMM20: Field = Field::new(&[(0, 20)]);
/// AMP/SLIC/`istacc` flags (`imm6zi` at \[5:0\]). [C]
pub const IMM6: Field = Field::new(&[(0, 6)]);
/// A zero-tailed 12-bit immediate (`immz12`, LLVM's `imm12iz`): the value's bits \[31:20\] at
/// \[11:0\], its low 20 bits zero (`or $a0, $azero, 0x3f800000`). [C]
pub const IMM12_HI: Field = Field::shifted(&[(0, 12)], 20);
pub const RPT_COUNT12: Field = Field::new(&[(8, 12)]);
pub const TARGET19: Field = Field::shifted(&[(0, 19)], 2);
pub const DELAY19: Field = Field::new(&[(0, 19)]);
/// `run`/`runall` zimm16: value bits [11:0] at [11:0] and [15:12] at [19:16]. [C]
pub const RUN_IMM16: Field = Field::new(&[(0, 12), (16, 4)]);
/// `ld2xst64pace` imm6: value bits [3:0] at [3:0] and [5:4] at [9:8]. [C]
pub const PACE_IMM6: Field = Field::new(&[(0, 4), (8, 2)]);
/// `ld2xst64pace` destination quad: register number / 2 at [19:17]. [C]
pub const PACE_QUAD: Field = Field::shifted(&[(17, 3)], 1);
pub const SEND_COUNT6: Field = Field::new(&[(21, 6)]);
pub const SEND_ADDR18: Field = Field::shifted(&[(3, 18)], 2);
pub const SEND_MODE3: Field = Field::new(&[(0, 3)]);
/// `delaypic`: events − 1 at \[25:19\], the PIC selector at \[18\], the value at \[17:0\]. [S]
pub const PIC_EVENTS7: Field = Field::new(&[(19, 7)]);
pub const PIC_SELECT1: Field = Field::new(&[(18, 1)]);
pub const PIC_VALUE18: Field = Field::new(&[(0, 18)]);
/// `delayxpic`: events − 1 at \[25:14\], the XPIC stream at \[13\], the value at \[12:0\]. [S]
pub const XPIC_EVENTS12: Field = Field::new(&[(14, 12)]);
pub const XPIC_STREAM1: Field = Field::new(&[(13, 1)]);
pub const XPIC_VALUE13: Field = Field::new(&[(0, 13)]);
/// `sendoff`: words − 1 in 12 bits, the low six at \[26:21\] and the high six at \[19:14\]; the
/// source delta at \[13:3\]. [S]
pub const SENDOFF_COUNT12: Field = Field::new(&[(21, 6), (14, 6)]);
pub const SENDOFF_DELTA11: Field = Field::new(&[(3, 11)]);
/// `sendpic`: the control selector at \[19:18\] (0, 1 XPIC; 2, 3 PIC). [S]
pub const SENDPIC_SELECT2: Field = Field::new(&[(18, 2)]);
/// `sendpicp`, a prefix word and an inline word: the PIC selector at the prefix's \[27\]; the
/// inline word's \[31:18\] the 14-bit XPIC value (as `delayxpic`'s \[13:0\]: stream bit 13 and a
/// 13-bit source [A]) and its \[17:0\] the PIC value. [S]
pub const SENDPICP_SELECT1: Field = Field::new(&[(27, 1)]);
pub const SENDPICP_XPIC14: Field = Field::new(&[(50, 14)]);
pub const SENDPICP_PIC18: Field = Field::new(&[(32, 18)]);

const fn operand(kind: OperandKind, access: Access, field: Field) -> OperandDesc {
    OperandDesc {
        kind,
        access,
        field,
    }
}
pub const fn mr(field: Field) -> OperandDesc {
    operand(OperandKind::MReg, Access::Read, field)
}
pub const fn mw(field: Field) -> OperandDesc {
    operand(OperandKind::MReg, Access::Write, field)
}
pub const fn mrw(field: Field) -> OperandDesc {
    operand(OperandKind::MReg, Access::ReadWrite, field)
}
pub const fn minc(field: Field) -> OperandDesc {
    operand(OperandKind::MRegPostInc, Access::ReadWrite, field)
}
/// `$mN++` (read, then incremented by the access size).
pub const fn mstep(field: Field) -> OperandDesc {
    operand(OperandKind::MRegIncrement, Access::ReadWrite, field)
}
/// `$mN@` (read as a delta, then replaced by a loaded delta).
pub const fn mdelta(field: Field) -> OperandDesc {
    operand(OperandKind::MRegDelta, Access::ReadWrite, field)
}
pub const fn mpw(field: Field) -> OperandDesc {
    operand(OperandKind::MPair, Access::Write, field)
}
pub const fn mpinc(field: Field) -> OperandDesc {
    operand(OperandKind::MPairPostInc, Access::ReadWrite, field)
}
pub const fn ar(field: Field) -> OperandDesc {
    operand(OperandKind::AReg, Access::Read, field)
}
pub const fn aw(field: Field) -> OperandDesc {
    operand(OperandKind::AReg, Access::Write, field)
}
/// `$aN:B` (read).
pub const fn abr(field: Field) -> OperandDesc {
    operand(OperandKind::ABroadcast, Access::Read, field)
}
/// `$aN:BL` (read).
pub const fn ablr(field: Field) -> OperandDesc {
    operand(OperandKind::ABroadcastLo, Access::Read, field)
}
/// `$aN:BU` (read).
pub const fn abur(field: Field) -> OperandDesc {
    operand(OperandKind::ABroadcastHi, Access::Read, field)
}
pub const fn apr(field: Field) -> OperandDesc {
    operand(OperandKind::APair, Access::Read, field)
}
pub const fn apw(field: Field) -> OperandDesc {
    operand(OperandKind::APair, Access::Write, field)
}
pub const fn aqr(field: Field) -> OperandDesc {
    operand(OperandKind::AQuad, Access::Read, field)
}
pub const fn aqw(field: Field) -> OperandDesc {
    operand(OperandKind::AQuad, Access::Write, field)
}
pub const fn zimm(field: Field) -> OperandDesc {
    operand(OperandKind::Unsigned, Access::Constant, field)
}
pub const fn simm(field: Field) -> OperandDesc {
    operand(OperandKind::Signed, Access::Constant, field)
}
pub const fn target(field: Field) -> OperandDesc {
    operand(OperandKind::Target, Access::Constant, field)
}
pub const fn lcsr(field: Field) -> OperandDesc {
    operand(OperandKind::LowerCsr, Access::Constant, field)
}
pub const fn ucsr(field: Field) -> OperandDesc {
    operand(OperandKind::UpperCsr, Access::Constant, field)
}
pub const fn waddr(field: Field) -> OperandDesc {
    operand(OperandKind::WordAddress, Access::Constant, field)
}
