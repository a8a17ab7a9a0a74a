//! Tests of the instruction table: encodings, decoding, operands and the hardware words.

use super::*;

#[test]
fn table_is_in_opcode_order() {
    for (i, row) in INSTRUCTIONS.iter().enumerate() {
        assert_eq!(row.opcode as usize, i, "{}", row.mnemonic);
    }
}

#[test]
fn fixed_bits_lie_inside_the_mask() {
    for row in INSTRUCTIONS {
        assert_eq!(
            row.value & !row.mask,
            0,
            "{:?}: value 0x{:08x} mask 0x{:08x}",
            row.opcode,
            row.value,
            row.mask
        );
        assert!(row.operands.len() <= MAX_OPERANDS);
    }
}

#[test]
fn no_two_rows_can_match_the_same_word_but_the_carve_outs() {
    for (i, a) in INSTRUCTIONS.iter().enumerate() {
        for b in &INSTRUCTIONS[i + 1..] {
            if a.words != b.words {
                // A two-word row's prefix sets bit 31 (checked below).
                continue;
            }
            let common = a.mask & b.mask;
            if a.value & common != b.value & common {
                continue;
            }
            // They overlap: only a listed carve-out may, and it must lie wholly inside the
            // general row with more fixed bits, so the decoder's most specific match owns it.
            let (specific, general) = if a.mask.count_ones() > b.mask.count_ones() {
                (a, b)
            } else {
                (b, a)
            };
            assert!(
                CARVE_OUTS.contains(&(specific.opcode, general.opcode))
                    && specific.mask & general.mask == general.mask
                    && specific.value & general.mask == general.value,
                "{:?} and {:?} overlap",
                a.opcode,
                b.opcode
            );
        }
    }
    // A two-word row's prefix (bit 31 set) may share its low bits only with solo rows, which
    // can never start a pair: the decoder tells it from a bundle by that.
    for wide in INSTRUCTIONS.iter().filter(|row| row.words == 2) {
        for row in INSTRUCTIONS.iter().filter(|row| row.words == 1) {
            let common = wide.mask & row.mask;
            if wide.value & common == row.value & common {
                assert_eq!(
                    row.co_issue,
                    crate::table::CoIssue::Solo,
                    "{:?}'s prefix could start a pair as {:?}",
                    wide.opcode,
                    row.opcode
                );
            }
        }
    }
    for &(specific, general) in CARVE_OUTS {
        let word = specific.desc().value;
        assert_eq!(emit::find_row(word).map(|r| r.opcode), Some(specific));
        assert_eq!(word & general.desc().mask, general.desc().value);
    }
}

#[test]
fn operand_fields_do_not_overlap() {
    for row in INSTRUCTIONS {
        let mut used = 0u64;
        for operand in row.operands {
            let mask = operand.field.encoding_mask();
            assert_eq!(used & mask, 0, "{:?}", row.opcode);
            assert_eq!(mask >> 31 & 1, 0, "{:?} uses the co-issue bit", row.opcode);
            used |= mask;
        }
        assert_eq!(row.words == 2, used >> 32 != 0, "{:?}", row.opcode);
    }
}

/// Masks of the TableGen formats (which bits are fields), named as in LLVM-TD-W.
const FAXAB: u32 = 0x7f0f_0f0f; // d[7:4], a[23:20], b[15:12]
const FSXD: u32 = 0x7f0f_ff0f; // d[7:4], a[23:20]
const FSDI3: u32 = 0x7f00_f000; // d[19:16], a[23:20], imm12[11:0]
const FAXAX: u32 = 0x7f0f_0fff; // a[23:20], b[15:12]
const FM2PD: u32 = 0x7f00_0f0f; // base[23:20], delta[15:12], stride[19:16], d[7:4]
const FAX4: u32 = 0x7f0f_ffff; // a[23:20]
const FABI3: u32 = 0x7f00_f000; // d[19:16], a[23:20], imm12[11:0]
const FX3BX: u32 = 0x7fff_ff0f; // d[7:4]
const FABAJ2: u32 = 0x7f00_0fc0; // d[19:16], a[15:12], b[23:20], imm6[5:0]
const FXBXI2: u32 = 0x7ff0_ff00; // d[19:16], imm8[7:0]
const FMP2B: u32 = 0x7f00_0f0f; // base[23:20], addr++[15:12], delta@[19:16], d[7:4]

/// Every row whose encoding basis is Confirmed and that comes from a TableGen record (as
/// opposed to the isa.md §7 table above) is listed here with its record's fixed bits and
/// format; a row given a public encoding must be added, so the two cannot drift.
#[test]
fn llvm_td_encodings_are_pinned() {
    use Opcode::*;
    let pinned: &[(Opcode, u32, u32)] = &[
        (Uget, 0x7ff0_ff00, 0x5100_0800), // FXBXI2: d[19:16], imm8
        (Uput, 0x7f0f_ff00, 0x5100_8000), // FAX3I2: a[23:20], imm8
        (SetziA, 0x7f00_0000, 0x1a00_0000),
        (F16v2add, FAXAB, 0x5800_0001),
        (F16v2sub, FAXAB, 0x5800_0305),
        (F16v2mul, FAXAB, 0x5800_0301),
        (F16v2max, FAXAB, 0x5800_0205),
        (F16v2min, FAXAB, 0x5800_020d),
        (F16v2cmpeq, FAXAB, 0x5800_000d),
        (F16v2cmpne, FAXAB, 0x5800_0201),
        (F16v2cmplt, FAXAB, 0x5800_010d),
        (F16v2cmple, FAXAB, 0x5800_0109),
        (F16v2cmpgt, FAXAB, 0x5800_0105),
        (F16v2cmpge, FAXAB, 0x5800_0101),
        (F16v4add, FAXAB, 0x5800_0002),
        (F16v4sub, FAXAB, 0x5800_0306),
        (F16v4mul, FAXAB, 0x5800_0302),
        (F16v4max, FAXAB, 0x5800_0206),
        (F16v4min, FAXAB, 0x5800_020e),
        (F16v4cmpeq, FAXAB, 0x5800_000e),
        (F16v4cmpne, FAXAB, 0x5800_0202),
        (F16v4cmplt, FAXAB, 0x5800_010e),
        (F16v4cmple, FAXAB, 0x5800_010a),
        (F16v4cmpgt, FAXAB, 0x5800_0106),
        (F16v4cmpge, FAXAB, 0x5800_0102),
        (F32add, FAXAB, 0x5800_0000),
        (F32sub, FAXAB, 0x5800_0304),
        (F32mul, FAXAB, 0x5800_0300),
        (F32max, FAXAB, 0x5800_0204),
        (F32min, FAXAB, 0x5800_020c),
        (F32cmpeq, FAXAB, 0x5800_000c),
        (F32cmplt, FAXAB, 0x5800_010c),
        (F32v2add, FAXAB, 0x5800_0003),
        (F32v2sub, FAXAB, 0x5800_0307),
        (F32v2mul, FAXAB, 0x5800_0303),
        (F32v2max, FAXAB, 0x5800_0207),
        (F32v2min, FAXAB, 0x5800_020f),
        (F32v2axpy, FAXAB, 0x5800_000b),
        (F32v4acc, FAX4, 0x5900_8200),
        (F16v8acc, FAX4, 0x5900_8100),
        (F32v2gina, FABI3, 0x5900_4000),
        (F16v2gina, FABI3, 0x5900_5000),
        (F32exp, FSXD, 0x5200_3100),
        (F16v2exp, FSXD, 0x5200_3200),
        (F32tanh, FSXD, 0x5200_5100),
        (F16v2tanh, FSXD, 0x5200_5200),
        (F32oorx, FSXD, 0x5200_0a00),
        (F32sqrt, FSXD, 0x5200_6100),
        (F32oox, FSXD, 0x5200_0b00),
        (F32tof16, FSXD, 0x5200_3500),
        (F16v8tof8, FSXD, 0x5200_6600),
        (Sort4x16loA, FAXAB, 0x5800_060c),
        (Sort4x16hiA, FAXAB, 0x5800_0608),
        (Roll16A, FAXAB, 0x5800_0604),
        (Sort4x32lo, FAXAB, 0x5800_060f),
        (Sort4x32hi, FAXAB, 0x5800_060b),
        (Sort8x8loA, FAXAB, 0x5800_0803),
        (Sort8x8hiA, FAXAB, 0x5800_0802),
        (Shuf8x8loA, FAXAB, 0x5800_0801),
        (Shuf8x8hiA, FAXAB, 0x5800_0800),
        (F16v4sisoamp, 0x7f00_0fc0, 0x5b00_0700),
        (OrImmHi, FSDI3, 0x4200_c000),
        (SubImmRev, 0x7f00_0000, 0x3900_0000), // FMNI4: d[19:16], s[23:20], simm16
        (MinImmZ, 0x7f00_0000, 0x3100_0000),   // FMNI4: d[19:16], a[23:20], zimm16
        (Xnor, FAXAB, 0x4400_0700),            // FMXMN, the MRF layout of FAXAB
        (AndA, FAXAB, 0x5800_0600),
        (AndImmA, FSDI3, 0x5200_8000),
        (AndImmHiA, FSDI3, 0x5200_c000),
        (AndcA, FAXAB, 0x5800_0601),
        (AndcImmA, FSDI3, 0x5200_b000),
        (AndcImmHiA, FSDI3, 0x5200_f000),
        (OrA, FAXAB, 0x5800_0e00),
        (OrImmA, FSDI3, 0x5200_9000),
        (OrImmHiA, FSDI3, 0x5200_d000),
        (NotA, FSXD, 0x5200_7800),
        (And64, FAXAB, 0x5800_0602),
        (Andc64, FAXAB, 0x5800_0603),
        (Or64, FAXAB, 0x5800_0e01),
        (Not64, FSXD, 0x5200_7900),
        (Abs, FSXD, 0x4200_7000),
        (Popc, FSXD, 0x4200_3000),
        (Roll8lM, FAXAB, 0x4400_0303),
        (Roll8rM, FAXAB, 0x4400_0400),
        (Stm32, 0x7f00_0fff, 0x4c00_0000), // FM3X2: base[23:20], offset[15:12], src[19:16]
        (Ldz8StepMReg, FM2PD, 0x4700_0700),
        (Ldz16StepMReg, FM2PD, 0x4700_0600),
        (Lds16StepMReg, FM2PD, 0x4700_0400),
        (Ldb16StepAReg, FM2PD, 0x4700_0601),
        (F32cmpne, FAXAB, 0x5800_0200),
        (F32cmple, FAXAB, 0x5800_0108),
        (F32cmpgt, FAXAB, 0x5800_0104),
        (F32cmpge, FAXAB, 0x5800_0100),
        (F32absadd, FAXAB, 0x5800_0008),
        (F32clamp, FAXAB, 0x5800_040c),
        (F32div, FAXAB, 0x5800_0500),
        (F32v2cmpeq, FAXAB, 0x5800_000f),
        (F32v2cmpne, FAXAB, 0x5800_0203),
        (F32v2cmplt, FAXAB, 0x5800_010f),
        (F32v2cmple, FAXAB, 0x5800_010b),
        (F32v2cmpgt, FAXAB, 0x5800_0107),
        (F32v2cmpge, FAXAB, 0x5800_0103),
        (F32v2absadd, FAXAB, 0x5800_030f),
        (F32v2clamp, FAXAB, 0x5800_040f),
        (F16v2absadd, FAXAB, 0x5800_030d),
        (F16v4absadd, FAXAB, 0x5800_030e),
        (F16v2clamp, FAXAB, 0x5800_040d),
        (F16v4clamp, FAXAB, 0x5800_040e),
        (F16v4acc, FAX4, 0x5900_8000),
        (F32mac, FAXAX, 0x5a00_0180),
        (F32v2mac, FAXAX, 0x5a00_0080),
        (F16v2cmac, FAXAX, 0x5a00_0300),
        (F16v4cmac, FAXAX, 0x5a00_0200),
        (F16v4mix, FAXAB, 0x5800_000a),
        (F32sigm, FSXD, 0x5200_5900),
        (F16v2sigm, FSXD, 0x5200_5a00),
        (F32ln, FSXD, 0x5200_1100),
        (F16v2ln, FSXD, 0x5200_1200),
        (F32toi32, FSXD, 0x5200_4000),
        (F32toui32, FSXD, 0x5200_5000),
        (F32fromi32, FSXD, 0x5200_7000),
        (F32fromui32, FSXD, 0x5200_0000),
        (F32int, 0x7f00_fff0, 0x5100_0000), // FABXI: d[19:16], a[23:20], mode[3:0]
        (Roll8lA, FAXAB, 0x5800_0605),
        (Roll8rA, FAXAB, 0x5800_0606),
        (Roll32, FAXAB, 0x5800_0607),
        (F16v2addBl, FAXAB, 0x5808_0001),
        (F16v2addBu, FAXAB, 0x580c_0001),
        (F16v4addBl, FAXAB, 0x5808_0002),
        (F16v4addBu, FAXAB, 0x580c_0002),
        (F16v2subBl, FAXAB, 0x5808_0305),
        (F16v2subBu, FAXAB, 0x580c_0305),
        (F16v4subBl, FAXAB, 0x5808_0306),
        (F16v4subBu, FAXAB, 0x580c_0306),
        (F16v2mulBl, FAXAB, 0x5808_0301),
        (F16v2mulBu, FAXAB, 0x580c_0301),
        (F16v4mulBl, FAXAB, 0x5808_0302),
        (F16v4mulBu, FAXAB, 0x580c_0302),
        (F16v2cmpeqBl, FAXAB, 0x5808_000d),
        (F16v2cmpeqBu, FAXAB, 0x580c_000d),
        (F16v4cmpeqBl, FAXAB, 0x5808_000e),
        (F16v4cmpeqBu, FAXAB, 0x580c_000e),
        (F16v2cmpneBl, FAXAB, 0x5808_0201),
        (F16v2cmpneBu, FAXAB, 0x580c_0201),
        (F16v4cmpneBl, FAXAB, 0x5808_0202),
        (F16v4cmpneBu, FAXAB, 0x580c_0202),
        (F16v2cmpltBl, FAXAB, 0x5808_010d),
        (F16v2cmpltBu, FAXAB, 0x580c_010d),
        (F16v4cmpltBl, FAXAB, 0x5808_010e),
        (F16v4cmpltBu, FAXAB, 0x580c_010e),
        (F16v2cmpleBl, FAXAB, 0x5808_0109),
        (F16v2cmpleBu, FAXAB, 0x580c_0109),
        (F16v4cmpleBl, FAXAB, 0x5808_010a),
        (F16v4cmpleBu, FAXAB, 0x580c_010a),
        (F16v2cmpgtBl, FAXAB, 0x5808_0105),
        (F16v2cmpgtBu, FAXAB, 0x580c_0105),
        (F16v4cmpgtBl, FAXAB, 0x5808_0106),
        (F16v4cmpgtBu, FAXAB, 0x580c_0106),
        (F16v2cmpgeBl, FAXAB, 0x5808_0101),
        (F16v2cmpgeBu, FAXAB, 0x580c_0101),
        (F16v4cmpgeBl, FAXAB, 0x5808_0102),
        (F16v4cmpgeBu, FAXAB, 0x580c_0102),
        (F32v2addB, FAXAB, 0x5808_0003),
        (F32v2subB, FAXAB, 0x5808_0307),
        (F32v2mulB, FAXAB, 0x5808_0303),
        (F32v2cmpeqB, FAXAB, 0x5808_000f),
        (F32v2cmpneB, FAXAB, 0x5808_0203),
        (F32v2cmpltB, FAXAB, 0x5808_010f),
        (F32v2cmpleB, FAXAB, 0x5808_010b),
        (F32v2cmpgtB, FAXAB, 0x5808_0107),
        (F32v2cmpgeB, FAXAB, 0x5808_0103),
        (F32v4sqacc, FAX4, 0x5900_8a00),
        (F16v8sqacc, FAX4, 0x5900_8900),
        (F32v4absacc, FAX4, 0x5900_8600),
        (F16v8absacc, FAX4, 0x5900_8500),
        (F16v4absacc, FAX4, 0x5900_8400),
        (F16v4gacc, FX3BX, 0x5000_0400),
        (F32class, FSXD, 0x5200_2900),
        (Urand32, FX3BX, 0x5000_0000),
        (Urand64, FX3BX, 0x5000_0100),
        (F16v2grand, FX3BX, 0x5000_0200),
        (F32v2grand, FX3BX, 0x5000_0300),
        (F16v4rmask, FAXAB, 0x5800_050a),
        (F32v2rmask, FAXAB, 0x5800_050b),
        (F16v4sufromui, FSXD, 0x5200_4e00),
        (F32v2sufromui, FSXD, 0x5200_4b00),
        (F16v4hihoamp, FABAJ2, 0x5b00_0100),
        (F32sisoamp, FABAJ2, 0x5b00_0f00),
        (F32sisov2amp, FABAJ2, 0x5b00_0f40),
        (F16v4sisoslic, FABAJ2, 0x5b00_0600),
        (F16v4hihoslic, FABAJ2, 0x5b00_0000),
        (F16v4hihov4slic, FABAJ2, 0x5b00_0640),
        (F16v4istacc, FABAJ2, 0x5b00_0800),
        (F16v4stacc, FXBXI2, 0x5100_0900),
        (Ldd16a32, FMP2B, 0x4500_0a00),
        (Ldd16a64, FMP2B, 0x4500_0b00),
        (Ldd16b16, FMP2B, 0x4500_0c00),
        (St64pace, 0x7f00_0f00, 0x5c00_0200), // FMIPAI: s[7:4], a[15:12], m[23:20], imm8
    ];
    for &(opcode, mask, value) in pinned {
        let row = opcode.desc();
        assert_eq!(row.encoding_basis, Basis::Confirmed, "{opcode:?}");
        assert_eq!((row.mask, row.value), (mask, value), "{opcode:?}");
    }
    // The rows of isa.md §7 (the test above) and of this list are all the Confirmed ones.
    let section7 = [
        Opcode::F16v2tof8,
        Opcode::F8v2tof16,
        Opcode::F8v4tof16,
        Opcode::F16v2tof32,
        Opcode::F16tof32,
        Opcode::F32v2tof16,
        Opcode::F32v4tof16,
        Opcode::F16v4hihov4amp,
        Opcode::F8v8hihov4amp,
        Opcode::Ld128Reg,
        Opcode::Ld128,
        Opcode::Ld32M,
        Opcode::Ld32A,
        Opcode::Ld2x64pace,
        Opcode::Ldst64pace,
        Opcode::Ld2xst64pace,
        Opcode::RptReg,
        Opcode::RptImm,
        Opcode::Brnzdec,
        Opcode::Run,
        Opcode::Runall,
        Opcode::Ld64putcs,
        Opcode::Ld128putcs,
    ];
    for row in INSTRUCTIONS {
        if row.encoding_basis == Basis::Confirmed {
            assert!(
                section7.contains(&row.opcode) || pinned.iter().any(|p| p.0 == row.opcode),
                "{:?} has a Confirmed encoding but is pinned nowhere",
                row.opcode
            );
        }
    }
}

#[test]
fn public_masks_match_the_reference() {
    // Masks from docs/reference/isa.md §7 (computed from the Graphcore TableGen files).
    let expected = [
        (Opcode::F16v2tof8, 0x7f0fff0f, 0x52006d00),
        (Opcode::F8v2tof16, 0x7f0fff0f, 0x52006c00),
        (Opcode::F8v4tof16, 0x7f0fff0f, 0x52006800),
        (Opcode::F16v2tof32, 0x7f0fff0f, 0x52001400),
        (Opcode::F16tof32, 0x7f0fff0f, 0x52000400),
        (Opcode::F32v2tof16, 0x7f0fff0f, 0x52006700),
        (Opcode::F32v4tof16, 0x7f0fff0f, 0x52006500),
        (Opcode::F16v4hihov4amp, 0x7f000fc0, 0x5b000740),
        (Opcode::F8v8hihov4amp, 0x7f000fc0, 0x5b000940),
        (Opcode::Ld128Reg, 0x7f000f0f, 0x4d000805),
        (Opcode::Ld128, 0x7f000000, 0x0b000000),
        (Opcode::Ld32M, 0x7f000000, 0x01000000),
        (Opcode::Ld32A, 0x7f000000, 0x08000000),
        (Opcode::Ld2x64pace, 0x7f000f00, 0x46000000),
        (Opcode::Ldst64pace, 0x7f000f00, 0x56000100),
        (Opcode::Ld2xst64pace, 0x7f010c00, 0x56000800),
        (Opcode::RptReg, 0x7f0fff00, 0x4300a000),
        (Opcode::RptImm, 0x7ff00000, 0x40000000),
        (Opcode::Brnzdec, 0x7f080000, 0x13080000),
        (Opcode::Run, 0x7f000000, 0x14000000),
        (Opcode::Runall, 0x7f000000, 0x15000000),
        (Opcode::Ld64putcs, 0x7fffff00, 0x4100c000),
        (Opcode::Ld128putcs, 0x7fffff00, 0x4100d000),
    ];
    for (opcode, mask, value) in expected {
        let row = opcode.desc();
        assert_eq!((row.mask, row.value), (mask, value), "{opcode:?}");
    }
}
