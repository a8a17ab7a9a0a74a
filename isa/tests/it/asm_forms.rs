//! The assembler's shorthand forms (`asm/forms.rs`), half literals and code alignment: each
//! shorthand assembles to the same words as its full form and prints as the full form; bundles
//! may sit at 4 mod 8; an `rpt` body that is not 8-byte aligned is warned of (or aligned with a
//! `nop` after `.allow_optimizations`); bad forms are
//! typed errors.

use expect_test::expect;
use std::fmt::Write as _;
use tessera_isa::asm::*;

fn listing(source: &str) -> String {
    let (result, warnings) = assemble_with_warnings(&[("f.S", source)], &LayoutOptions::default());
    let mut out = String::new();
    match result {
        Ok(object) => {
            for line in &object.listing {
                let words: Vec<String> = line.words.iter().map(|w| format!("{w:08x}")).collect();
                let _ = writeln!(
                    out,
                    "{:#x}  {:<17}  {}",
                    line.address,
                    words.join(" "),
                    line.text
                );
            }
        }
        Err(errors) => {
            let _ = writeln!(out, "{errors}");
        }
    }
    for warning in warnings {
        let _ = writeln!(out, "{warning}");
    }
    out
}

fn words(source: &str) -> Vec<u8> {
    let object = assemble_str(source).unwrap_or_else(|e| panic!("{e}"));
    object.sections[0].bytes.clone()
}

#[test]
fn shorthands_assemble_as_their_full_forms() {
    let pairs = [
        ("ld32 $a0, $m1, 3", "ld32 $a0, $m1, $mzero, 3"),
        ("ld32 $m2, $m1, 0", "ld32 $m2, $m1, $m15, 0"),
        ("ld32 $m2, $m1, $m3", "ld32 $m2, $m1, $mzero, $m3"),
        ("st32 $a0, $m1, $m3", "st32 $a0, $m1, $mzero, $m3"),
        ("ld64 $a2:3, $m4, 1", "ld64 $a2:3, $m4, $mzero, 1"),
        ("st32 $m0, $m1, 2", "st32 $m0, $m1, $mzero, 2"),
        ("st64 $a0:1, $m1, 7", "st64 $a0:1, $m1, $mzero, 7"),
        ("ldz16 $m0, $m1, 5", "ldz16 $m0, $m1, $mzero, 5"),
        ("ldb16 $a0, $m1, 5", "ldb16 $a0, $m1, $mzero, 5"),
        ("ld128 $a0:3, $m1, 1", "ld128 $a0:3, $m1, $mzero, 1"),
        ("mov $a2:3, $azeros", "or64 $a2:3, $azeros, $azeros"),
        ("mov $a2:3, $a6:7", "or64 $a2:3, $a6:7, $azeros"),
        ("setzi $a0, 1.0h", "setzi $a0, 0x3c00"),
        ("setzi $a0, -1.0h", "setzi $a0, 0xbc00"),
        ("setzi $a0, 0.5h + 1", "setzi $a0, 0x3801"),
        ("setzi $a0, 2h", "setzi $a0, 0x4000"),
        ("zero $m3", "or $m3, $mzero, 0"),
        ("zero $a3", "or $a3, $azero, 0"),
        ("zero $a2:3", "or64 $a2:3, $azeros, $azeros"),
        ("zero $azeros", "or64 $azeros, $azeros, $azeros"),
        // PopLibs' spellings (issue 34), each against the row Graphcore's assembler builds.
        ("mov $m0, $a6", "atom $m0, $a6"),
        ("get $a6, $TAS", "uget $a6, $TAS"),
        ("put $TAS, $a6", "uput $TAS, $a6"),
        ("ld32 $a0, $m1, $azero, 3", "ld32 $a0, $m1, $mzero, 3"),
        (
            "ld32step $a0, $azero, $m1+=, 1",
            "ld32step $a0, $mzero, $m1+=, 1",
        ),
        (
            "f16v4mul $a0:1, $a2:B, $a4:5",
            "f16v4mul $a0:1, $a2:BL, $a4:5",
        ),
        (
            "f32v2mul $a0:1, $a2:BL, $a4:5",
            "f32v2mul $a0:1, $a2:B, $a4:5",
        ),
        (
            "f32v2add $a0:1, $a2:BL, $a4:5",
            "f32v2add $a0:1, $a2:B, $a4:5",
        ),
    ];
    for (short, full) in pairs {
        assert_eq!(words(short), words(full), "{short}");
    }
}

/// Rows of one shape that differ in an immediate field: the first whose range takes the value.
#[test]
fn an_immediate_picks_the_row_whose_field_takes_it() {
    expect![[r#"
        0x4c000  52f19001           or $a1, $azero, 1
        0x4c004  52f1d3f8           or $a1, $azero, 0x3f800000
        0x4c008  52f1cfff           and $a1, $azero, 0xfff00000
        0x4c00c  52f1b007           andc $a1, $azero, 7
        0x4c010  42f0c300           or $m0, $mzero, 0x30000000
        0x4c014  24f00005           or $m0, $mzero, 5
        0x4c018  22108000           add $m0, $m1, -32768
        0x4c01c  3e108000           add $m0, $m1, 0x8000
        0x4c020  2a787fff           min $m8, $m7, 32767
        0x4c024  3178ffff           min $m8, $m7, 0xffff
        0x4c028  39000020           sub $m0, 32, $m0
        0x4c02c  42320fff           and $m2, $m3, 4095
        0x4c030  2332ffff           and $m2, $m3, 0xffff
    "#]]
    .assert_eq(&listing(
        "or $a1, $azero, 1\nor $a1, $azero, 0x3f800000\nand $a1, $azero, 0xfff00000\nandc $a1, $azero, 7\nor $m0, $mzero, 0x30000000\nor $m0, $mzero, 5\nadd $m0, $m1, -32768\nadd $m0, $m1, 32768\nmin $m8, $m7, 0x7fff\nmin $m8, $m7, 0xffff\nsub $m0, 32, $m0\nand $m2, $m3, 0xfff\nand $m2, $m3, 0xffff\n",
    ));
    expect![[r#"
        f.S:1:17: error[E-ASM-006]: immediate 1065353217 is out of range for operand 3 of `or` (unsigned 12-bit: 0..=4095)
    "#]]
    .assert_eq(&listing("or $a1, $azero, 0x3f800001\n"));
}

/// `ldconst`: one `setzi` for a value of 20 bits, else `setzi` + the zero-tailed `or`; a value
/// not known at layout takes both words; it never shares a bundle.
#[test]
fn ldconst_is_one_or_two_instructions() {
    expect![[r#"
        0x4c000  19300005           setzi $m3, 5
        0x4c004  1a2fffff           setzi $a2, 0xfffff
        0x4c008  1a200000           setzi $a2, 0
        0x4c00c  5222d3f8           or $a2, $a2, 0x3f800000
        0x4c010  19303c00           setzi $m3, 0x3c00
        0x4c014  4233cbc0           or $m3, $m3, 0xbc000000
        0x4c018  19312345           setzi $m3, 0x12345
        0x4c01c  24330000           or $m3, $m3, 0
        0x4c020  19f00000           setzi $mzero, 0
    "#]]
    .assert_eq(&listing(
        "ldconst $m3, 5\nldconst $a2, 0xfffff\nldconst $a2, 0x3f800000\nldconst $m3, 0xbc003c00\nldconst $m3, LATER\nsetzi $mzero, 0\n.equ LATER, 0x12345\n",
    ));
    let ones = words("ldconst $m0, -1\n");
    assert_eq!(ones, words("setzi $m0, 0xfffff\nor $m0, $m0, 0xfff00000\n"));
    expect![[r#"
        f.S:1:3: error[E-ASM-010]: `ldconst` stands for one or two instructions of its own and cannot share a bundle
        f.S:2:1: error[E-ASM-005]: `ldconst` value 4294967296 does not fit in 32 bits
        f.S:3:1: error[E-ASM-005]: `ldconst` loads one MRF or ARF register: `ldconst $mN|$aN, imm`
    "#]]
    .assert_eq(&listing(
        "{ ldconst $a0, 1 ; fnop }\nldconst $m0, 0x100000000\nldconst $a0:1, 1\n",
    ));
}

#[test]
fn shorthand_listing() {
    let source = "    ld32 $a0, $mzero, 1\n    { ld64 $a0:1, $m2, 1 ; mov $a2:3, $azeros }\n    st32 $m3, $m4, TMEM_REGION0_BASE_ADDR / 4 - 0x13000\n    setzi $a1, -0.5h\n";
    expect![[r#"
        0x4c000  08f0f001           ld32 $a0, $mzero, $mzero, 1
        0x4c004  8920f001 58e0ee21  { ld64 $a0:1, $m2, $mzero, 1 ; or64 $a2:3, $azeros, $azeros }
        0x4c00c  4f43f000           st32 $m3, $m4, $mzero, 0
        0x4c010  1a10b800           setzi $a1, 0xb800
    "#]]
    .assert_eq(&listing(source));
}

/// The placement PopLibs uses: a bundle at 4 mod 8, so that the `rpt` body after it starts
/// 8-byte aligned without a padding `nop`.
#[test]
fn bundles_may_sit_at_4_mod_8_before_an_aligned_rpt_body() {
    let source = "    .align 8\n    nop\n    { add $m0, $m0, 1 ; fnop }\n    rpt $m1, 0\n    { add $m2, $m2, 1 ; fnop }\n";
    expect![[r#"
        0x4c000  19e00000           nop
        0x4c004  a2000001 68000000  { add $m0, $m0, 1 ; fnop }
        0x4c00c  4310a000           rpt $m1, 0
        0x4c010  a2220001 68000000  { add $m2, $m2, 1 ; fnop }
    "#]]
    .assert_eq(&listing(source));
}

#[test]
fn a_misaligned_rpt_body_is_warned_of() {
    let source = "    .align 8\n    rpt $m1, 0\n    { add $m2, $m2, 1 ; fnop }\n    nop\n    { rpt $m1, 0 ; fnop }\n    nop\n";
    expect![[r#"
        0x4c000  4310a000           rpt $m1, 0
        0x4c004  a2220001 68000000  { add $m2, $m2, 1 ; fnop }
        0x4c00c  19e00000           nop
        0x4c010  c310a000 68000000  { rpt $m1, 0 ; fnop }
        0x4c018  19e00000           nop
        f.S:2:5: warning: the body of this `rpt` starts at 0x4c004, which is not 8-byte aligned: it traps when it runs (bundle the `rpt` with an aux instruction such as `fnop`, or move it by 4 bytes)
    "#]]
    .assert_eq(&listing(source));
}

/// After `.allow_optimizations` the same code assembles with a `nop` before each `rpt` whose
/// body would be misaligned, and nothing to warn of (ipu-stack's kernels rely on the SDK's
/// assembler doing as much).
#[test]
fn allow_optimizations_aligns_rpt_bodies_with_a_nop() {
    let source = "    .allow_optimizations\n    .align 8\n    rpt $m1, 0\n    { add $m2, $m2, 1 ; fnop }\n    nop\n    { rpt $m1, 0 ; fnop }\n    nop\n";
    expect![[r#"
        0x4c000  19e00000           nop
        0x4c004  4310a000           rpt $m1, 0
        0x4c008  a2220001 68000000  { add $m2, $m2, 1 ; fnop }
        0x4c010  19e00000           nop
        0x4c014  19e00000           nop
        0x4c018  c310a000 68000000  { rpt $m1, 0 ; fnop }
        0x4c020  19e00000           nop
    "#]]
    .assert_eq(&listing(source));
}

/// Broadcast first sources: `$aN:BL`/`:BU` on the f16 rows, `$aN:B` on the f32 pair rows; any
/// register, not only an even one.
#[test]
fn broadcast_sources() {
    expect![[r#"
        0x4c000  58380302           f16v4mul $a0:1, $a3:BL, $a0:1
        0x4c004  584c2322           f16v4mul $a2:3, $a4:BU, $a2:3
        0x4c008  58582321           f16v2mul $a2, $a5:BL, $a2
        0x4c00c  58784147           f32v2cmpgt $a4:5, $a7:B, $a4:5
        0x4c010  a222ffff 58384043  { add $m2, $m2, -1 ; f32v2add $a4:5, $a3:B, $a4:5 }
    "#]]
    .assert_eq(&listing(
        "f16v4mul $a0:1, $a3:BL, $a0:1\nf16v4mul $a2:3, $a4:BU, $a2:3\nf16v2mul $a2, $a5:BL, $a2\nf32v2cmpgt $a4:5, $a7:B, $a4:5\n{ add $m2, $m2, -1 ; f32v2add $a4:5, $a3:B, $a4:5 }\n",
    ));
}

#[test]
fn bad_forms_are_typed_errors() {
    let source = "    f16v4max $a0:1, $a2:BL, $a0:1\n    add $m0, $m1:BL, $m2\n    ld32 $a0, $m1, $a2\n    setzi $a0, 70000.0h\n    ld32 $a0, $m1, 4096\n    mov $a0, $azeros\n";
    expect![[r#"
        f.S:1:5: error[E-ASM-005]: `f16v4max` expects: $aN:N+1, $aN:N+1, $aN:N+1; got: $aN:N+1, $aN:BL, $aN:N+1
        f.S:2:14: error[E-ASM-007]: `$m1:BL`: only ARF registers can be broadcast
        f.S:3:5: error[E-ASM-005]: `ld32` expects: $mN|$aN, $mN, $mN, imm|$mN; or the shorthand `ld32 $x, $mBase, imm`; or the shorthand `ld32 $x, $mBase, $mOffset`; got: $aN, $mN, $aN
        f.S:4:16: error[E-ASM-006]: half literal 70000 is beyond the largest half (65504)
        f.S:5:20: error[E-ASM-006]: immediate 4096 is out of range for operand 4 of `ld32` (unsigned 12-bit: 0..=4095)
        f.S:6:5: error[E-ASM-005]: `mov` expects: $mN|$aN, $mN|$aN; or the shorthand `mov $aD:D+1, $aS:S+1`; or the shorthand `mov $mD, $aS`; got: $aN, $aN:N+1
    "#]]
    .assert_eq(&listing(source));
}
