//! Snapshot tests of the assembler: the FP8 cast kernel's listing and disassembly, a tour of the
//! directives and expressions, multi-file layout, and the text of the error messages.

use expect_test::expect;
use std::fmt::Write as _;
use tessera_isa::asm::*;

const KERNEL: &str = include_str!("../../../kernels/asm/examples/f16_to_fp8.S");

fn kernel() -> Object {
    assemble(&[("f16_to_fp8.S", KERNEL)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Sections, symbols and data bytes of an object, one fact per line.
fn summary(object: &Object) -> String {
    let mut out = String::new();
    for s in &object.sections {
        let _ = writeln!(
            out,
            "section {} at {:#x}, {} bytes, align {}, code {}, context {:?}",
            s.name,
            s.address,
            s.bytes.len(),
            s.align,
            s.has_code,
            s.context
        );
        if !s.has_code {
            hex_rows(&mut out, s.address as usize, &s.bytes);
        }
    }
    for (name, sym) in &object.symbols {
        let _ = writeln!(
            out,
            "symbol {name} = {:#x} (section {}, global {}, {:?}, size {:?}, context {:?})",
            sym.address, sym.section, sym.global, sym.kind, sym.size, sym.context
        );
    }
    out
}

/// The bytes of a data section as hex rows of 16. As in `hexdump`, a run of rows equal to the
/// one before it is elided (beyond a single repeat): one `*` line gives the count and the
/// address range, so only the rows that differ are spelled out.
fn hex_rows(out: &mut String, address: usize, bytes: &[u8]) {
    let rows: Vec<&[u8]> = bytes.chunks(16).collect();
    let mut i = 0;
    while i < rows.len() {
        let hex: Vec<String> = rows[i].iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(out, "  {:08x}  {}", address + 16 * i, hex.join(" "));
        let same = rows[i + 1..].iter().take_while(|&&r| r == rows[i]).count();
        if same > 1 {
            let (from, to) = (address + 16 * (i + 1), address + 16 * (i + 1 + same));
            let _ = writeln!(
                out,
                "  *         {same} more rows like the one above ({from:#x}..{to:#x})"
            );
            i += 1 + same;
        } else {
            i += 1;
        }
    }
}

#[test]
fn kernel_listing() {
    let object = kernel();
    expect![[r#"
        f16_to_fp8:
        0004c000  01d0f000           ld32 $m0, $mvertex_base, $mzero, 0
        0004c004  01d1f001           ld32 $m1, $mvertex_base, $mzero, 1
        0004c008  01d2f002           ld32 $m2, $mvertex_base, $mzero, 2
        0004c00c  01d3f003           ld32 $m3, $mvertex_base, $mzero, 3
        0004c010  08d3f004           ld32 $a3, $mvertex_base, $mzero, 4
        0004c014  4233a001           shl $m3, $m3, 1
        0004c018  4fc3f000           st32 $m3, $mworker_base, $mzero, 0
        0004c01c  08c2f000           ld32 $a2, $mworker_base, $mzero, 0
        0004c020  93213013 51208009  { brz $m2, 0x4c04c ; uput $FP_NFMT, $a2 }
        0004c028  a222ffff 5130800a  { add $m2, $m2, -1 ; uput $FP_SCL, $a3 }
        .Lloop:
        0004c030  0ef00101           ld32step $a0, $mzero, $m0+=, 1
        0004c034  0ef10101           ld32step $a1, $mzero, $m0+=, 1
        0004c038  52006d00           f16v2tof8 $a0, $a0
        0004c03c  52106d10           f16v2tof8 $a1, $a1
        0004c040  5800160c           sort4x16lo $a0, $a0, $a1
        0004c044  0ef01501           st32step $a0, $mzero, $m1+=, 1
        0004c048  1329300c           brnzdec $m2, 0x4c030
        .Ldone:
        0004c04c  37f00000           exitz $mzero

        section .text.f16_to_fp8 at 0x4c000, 80 bytes, align 8, code true, context Some(Worker)
        section .data at 0x4c050, 196632 bytes, align 8, code false, context None
          0004c050  68 c0 04 00 68 c0 06 00 02 00 00 00 01 00 00 00
          0004c060  00 00 00 00 00 00 00 00 00 3c 00 c0 00 38 00 5f
          0004c070  00 00 00 80 00 3e ff 7b 00 00 00 00 00 00 00 00
          0004c080  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
          *         12285 more rows like the one above (0x4c090..0x7c060)
          0007c060  00 00 00 00 00 00 00 00
        symbol .Ldone = 0x4c04c (section 0, global false, NoType, size None, context Some(Worker))
        symbol .Lloop = 0x4c030 (section 0, global false, NoType, size None, context Some(Worker))
        symbol f16_to_fp8 = 0x4c000 (section 0, global true, Function, size Some(80), context Some(Worker))
        symbol f16_to_fp8_dst = 0x6c068 (section 1, global false, NoType, size None, context None)
        symbol f16_to_fp8_src = 0x4c068 (section 1, global false, NoType, size None, context None)
        symbol f16_to_fp8_vertex = 0x4c050 (section 1, global false, Object, size Some(20), context None)
    "#]].assert_eq(&format!("{}\n{}", object.listing_text(), summary(&object)));
    assert_eq!(object.code_ranges(), vec![0x4c000..0x4c050]);
    let entry = object.symbol("f16_to_fp8").unwrap();
    assert_eq!(
        (entry.address, entry.global, entry.context),
        (0x4c000, true, Some(CodeContext::Worker))
    );
}

#[test]
fn kernel_disassembly() {
    // The disassembly of the object's bytes prints the listing line for line (labels, words,
    // text); `kernel_listing` holds the snapshot of that text.
    let object = kernel();
    assert_eq!(render(&disassemble_object(&object)), object.listing_text());
}

#[test]
fn directives_and_expressions() {
    let source = r#"
#define STRIDE  (2 + 1)           // object-like macros substitute whole tokens
#define PTR     $m4
        .text
        .supervisor
start:  setzi PTR, table          // a label as an immediate
        add $m0, $m1, -STRIDE * 4
        add $m0, $m1, 1 << 4 | 3  // C precedence: (1 << 4) | 3
        and $m2, $m2, ~0xfff0 & 0xffff
        or  $m3, $mzero, (end - start) / 4
        get $m5, $CTXT_STS ; put $FP_ICTL, $m5  // `;` separates statements
        get $m6, 0x60            // CSR by number
        sync TEXCH_SYNCZONE_LOCAL
        mov $m7, $m0
1:      brnz $m0, 1f              // numeric local labels
        brz  $m0, 1b
1:      bri  2f
        .align 16                 // code is padded with nops
2:      bri  .
end:

        .section .rodata, "a", @progbits
        .align 8
table:  .int start, end, . - table, -1
        .short 0xffff, -2
        .byte 1, 2, 255
        .align 4
        .quad 0x0123456789abcdef
        .float 1.5, -0.0, inf
        .space 3, 0xaa
        .zero 1
        .equ COUNT, (. - table) / 4
        .int COUNT, CSR_W_FP_CTL__NANOO__SHIFT, TAMP_F16V4_E4_P3
        .set LAST, table + 4 * (COUNT - 1)
        .int LAST
"#;
    let object = assemble(&[("tour.S", source)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        start:
        0004c000  1944c048           setzi $m4, 0x4c048
        0004c004  2210fff4           add $m0, $m1, -12
        0004c008  22100013           add $m0, $m1, 19
        0004c00c  4222000f           and $m2, $m2, 15
        0004c010  24f30011           or $m3, $mzero, 17
        0004c014  41050072           get $m5, $CTXT_STS
        0004c018  43508020           put $FP_ICTL, $m5
        0004c01c  41060060           get $m6, $COUNT_L
        0004c020  41800002           sync 2
        0004c024  20070018           mov $m7, $m0
        0004c028  3209300c           brnz $m0, 0x4c030
        0004c02c  1301300a           brz $m0, 0x4c028
        0004c030  34013010           bri 0x4c040
        0004c034  19e00000           nop
        0004c038  19e00000           nop
        0004c03c  19e00000           nop
        0004c040  34013010           bri 0x4c040

        section .text at 0x4c000, 68 bytes, align 16, code true, context Some(Supervisor)
        section .rodata at 0x4c048, 64 bytes, align 8, code false, context None
          0004c048  00 c0 04 00 44 c0 04 00 08 00 00 00 ff ff ff ff
          0004c058  ff ff fe ff 01 02 ff 00 ef cd ab 89 67 45 23 01
          0004c068  00 00 c0 3f 00 00 00 80 00 00 80 7f aa aa aa 00
          0004c078  0c 00 00 00 14 00 00 00 0f 00 00 00 74 c0 04 00
        symbol end = 0x4c044 (section 0, global false, NoType, size None, context Some(Supervisor))
        symbol start = 0x4c000 (section 0, global false, NoType, size None, context Some(Supervisor))
        symbol table = 0x4c048 (section 1, global false, NoType, size None, context None)
    "#]].assert_eq(&format!("{}\n{}", object.listing_text(), summary(&object)));
}

/// `.p2align N` aligns to 2^N bytes and `.balign N` to N, as GNU's assemblers and the SDK's
/// (osmarks/ipu-stack's kernels write them) do: the same object as `.align` here.
#[test]
fn p2align_and_balign_are_align_in_other_units() {
    let text = |align: &str| {
        format!(
            "        .text\n        .supervisor\nstart:  nop\n        {align}\nnext:   put CSR_S_FP_INFMT__INDEX, $m0\n        setzi $m1, CSR_S_FP_ICTL__ESR__SHIFT\n"
        )
    };
    let build = |align: &str| {
        assemble(&[("a.S", text(align).as_str())], &LayoutOptions::default())
            .unwrap_or_else(|e| panic!("{align}: {e}"))
    };
    let align = build(".align 16");
    assert_eq!(align.symbol("next").map(|s| s.address), Some(0x4c010));
    for other in [".p2align 4", ".balign 16"] {
        assert_eq!(build(other).listing_text(), align.listing_text(), "{other}");
    }
    // `$FP_INFMT` by the SDK's index name, and `$FP_ICTL.ESR`'s shift (bit 19).
    assert!(
        align.listing_text().contains("put $FP_INFMT, $m0"),
        "{}",
        align.listing_text()
    );
    let listing = align.listing_text();
    assert!(
        listing.contains("setzi $m1, 19") || listing.contains("setzi $m1, 0x13"),
        "{listing}"
    );
}

#[test]
fn bundles_are_emitted_main_first_whatever_the_order() {
    let written = [
        "{ ld64step $a0:1, $mzero, $m1+=, 1 ; f16v4mul $a2:3, $a0:1, $a4:5 }",
        "{ f16v4mul $a2:3, $a0:1, $a4:5 ; ld64step $a0:1, $mzero, $m1+=, 1 }",
        "{\n  ld64step $a0:1, $mzero, $m1+=, 1\n  f16v4mul $a2:3, $a0:1, $a4:5\n}",
        "{\n  f16v4mul $a2:3, $a0:1, $a4:5 ;\n  ld64step $a0:1, $mzero, $m1+=, 1\n}",
    ];
    let objects: Vec<Object> = written
        .iter()
        .map(|text| assemble_str(text).unwrap())
        .collect();
    for object in &objects {
        assert_eq!(object.sections[0].bytes, objects[0].sections[0].bytes);
    }
    expect![[r#"
        0004c000  8ef01201 58004322  { ld64step $a0:1, $mzero, $m1+=, 1 ; f16v4mul $a2:3, $a0:1, $a4:5 }
    "#]].assert_eq(&objects[0].listing_text());
}

#[test]
fn delta_loads_and_the_f32_amp_as_popsparse_and_poplin_write_them() {
    // `ldd16*` with the `$mN++` delta pointer and the `$mN@` delta (SparseDenseMatMul*), the
    // f32 AMP with its predefined 8-phase flags, and the transpose through AACC.
    let source = "\
    .worker
    { ldd16a64 $a4:5, $m4++, $m2, $m5@ ; f32v4acc $a4:7 }
    ldd16a32 $a0, $m4++, $m2, $m5@
    ldd16b16 $a1, $m4++, $m2, $m5@
    f32sisoamp $a6:7, $a0, $a2:3, TAMP_F32_E4_P6
    f32sisov2amp $a6:7, $a1, $a2:3, TAMP_F32_E4_P7
    f16v4hihoamp $a6, $a0:1, $a2, TAMP_F16V4_E4_P1
    f16v4sisoslic $a4:5, $a0:1, $azeros, TSLIC_F16V4_1x4_W1
    f16v4hihov4slic $a4:5, $a0:1, $a2:3, TSLIC_F16V4_1x4_W0
    f16v4istacc $azeros, $a0:1, $a2:3, TISTACC_P0
    f16v4stacc $a6:7, TSTACC_P1
";
    let object = assemble_str(source).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(render(&disassemble_object(&object)), object.listing_text());
    expect![[r#"
        0004c000  c5254b40 59408200  { ldd16a64 $a4:5, $m4++, $m2, $m5@ ; f32v4acc $a4:7 }
        0004c008  45254a00           ldd16a32 $a0, $m4++, $m2, $m5@
        0004c00c  45254c10           ldd16b16 $a1, $m4++, $m2, $m5@
        0004c010  5b260f1e           f32sisoamp $a6:7, $a0, $a2:3, 30
        0004c014  5b261f5f           f32sisov2amp $a6:7, $a1, $a2:3, 31
        0004c018  5b26010d           f16v4hihoamp $a6, $a0:1, $a2, 13
        0004c01c  5be40607           f16v4sisoslic $a4:5, $a0:1, $azeros, 7
        0004c020  5b240643           f16v4hihov4slic $a4:5, $a0:1, $a2:3, 3
        0004c024  5b2e0810           f16v4istacc $azeros, $a0:1, $a2:3, 16
        0004c028  51060911           f16v4stacc $a6:7, 17
    "#]]
    .assert_eq(&object.listing_text());
}

#[test]
fn gnu_as_accepts_what_these_do() {
    // As GNU as: `.type`/`.size` of a name the program never defines are warnings (the name
    // would be an undefined symbol nothing refers to); an unquoted section name runs to the
    // comma (a stray `)` included); a zero-tailed immediate takes a negative value as its
    // 32-bit word.
    let source = "\
    .section .text.entry_stride2), \"ax\"
    .type elsewhere, @function
    or $m0, $mzero, ~((1 << 24) - 1)
    or $a0, $azero, -0x800000 & ~0xfffff
    .size elsewhere, 8
";
    let (object, warnings) =
        assemble_with_warnings(&[("lenient.S", source)], &LayoutOptions::default());
    let object = object.unwrap_or_else(|e| panic!("{e}"));
    let mut out = object.listing_text();
    for s in &object.sections {
        let _ = writeln!(out, "section {}", s.name);
    }
    for w in &warnings {
        let _ = writeln!(out, "{w}");
    }
    expect![[r#"
        0004c000  42f0cff0           or $m0, $mzero, 0xff000000
        0004c004  52f0dff8           or $a0, $azero, 0xff800000
        section .text.entry_stride2)
        lenient.S:2:11: warning: `.type` names `elsewhere`, which the program does not define: ignored
        lenient.S:5:11: warning: `.size` names `elsewhere`, which the program does not define: ignored
    "#]].assert_eq(&out);
}

#[test]
fn files_concatenate_and_sections_can_be_pinned() {
    let a = ".text\n.globl shared\nshared: nop\nlocal: nop\n.data\n.int shared\n";
    let b = ".text\nlocal: bri shared\n.section .bss\n.space 16\n";
    let options = LayoutOptions {
        base: 0x4c000,
        placements: vec![(".bss".to_string(), 0x60000)],
    };
    let object = assemble(&[("a.S", a), ("b.S", b)], &options).unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        section .text at 0x4c000, 12 bytes, align 8, code true, context None
        section .data at 0x4c00c, 4 bytes, align 1, code false, context None
          0004c00c  00 c0 04 00
        section .bss at 0x60000, 16 bytes, align 1, code false, context None
          00060000  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        symbol a.S:local = 0x4c004 (section 0, global false, NoType, size None, context None)
        symbol b.S:local = 0x4c008 (section 0, global false, NoType, size None, context None)
        symbol shared = 0x4c000 (section 0, global true, NoType, size None, context None)
    "#]]
    .assert_eq(&summary(&object));

    // Pinning a section on top of another is an error naming both.
    let options = LayoutOptions {
        base: 0x4c000,
        placements: vec![(".data".to_string(), 0x4c004)],
    };
    let errors = assemble(&[("a.S", a), ("b.S", b)], &options).unwrap_err();
    expect!["a.S:5:1: error[E-ASM-015]: sections `.text` (0x4c000..0x4c00c) and `.data` (0x4c004..0x4c008) overlap"].assert_eq(&errors.to_string());
}

/// Malformed inputs and the diagnostics they produce (every error of a file is reported).
#[test]
fn error_messages() {
    let cases: &[(&str, &str)] = &[
        ("unknown mnemonic", "    foo $m0, 1\n"),
        ("wrong operand kind", "    ld32step $a0, $a1, $m1+=, 1\n"),
        ("wrong operand count", "    add $m0, $m1\n"),
        ("CSR of the wrong space", "    uput $WSR, $a0\n"),
        ("immediate out of range", "    add $m0, $m1, 70000\n    ld32 $m0, $m1, $m2, -1\n    .byte 300\n"),
        ("misaligned pair and quad", "    f16v4add $a1:2, $a0:1, $a2:3\n    ld128 $a2:5, $m0, $mzero, 0\n"),
        ("not a pair", "    ld64 $a0:2, $m0, $mzero, 0\n    tapack $m1:2, $m0, $m1, $m2\n"),
        ("unknown register", "    mov $m0, $m16\n    mov $m0, $foo\n"),
        ("undefined symbol", "    brz $m0, nowhere\n    .int missing + 4\n    bri 1f\n    brz $m1, 2b\n"),
        ("unterminated comment", "    nop /* this comment\n    never ends\n"),
        ("misaligned branch target", "    bri 0x4c002\n"),
        ("bad bundles", "    .align 8\n    { nop ; add $m0, $m0, 1 }\n    { exitz $mzero ; fnop }\n    { nop ; fnop ; nop }\n    { nop\n"),
        ("bad directives", "    .align 3\n    .frobnicate 1\n    .type x, @thing\n    .space -1\n    .section\n"),
        ("preprocessor", "#include \"consts.h\"\n#ifdef X\n#define F(x) x\n# 1 \"ok, a line marker\"\n"),
        ("wrong context", "    .worker\n    run $m0, $m1, 0\n    .supervisor\n    f32add $a0, $a1, $a2\n"),
        ("duplicate symbol", "x:  nop\nx:  nop\n    .equ x, 3\n"),
        ("bad expressions", "    .int 1 / 0\n    .int 1 << 64\n    .equ a, b\n    .equ b, a\n    .int a\n    .space later\nlater:\n"),
        ("register suffixes", "    ldd16a64 $a4:5, $a4++, $m2, $m5@\n    ldd16a32 $a0, $m4:5++, $m2, $m5@\n    ldd16a32 $a0, $m4+=, $m2, $m5\n"),
        ("syntax", "    add $m0, $m1, (2\n    nop nop\n    $a0\n    .int 1.5\n    .int 0x\n    .int 12ab\n"),
    ];
    let mut out = String::new();
    for (name, source) in cases {
        let _ = writeln!(out, "== {name}");
        match assemble(&[("bad.S", *source)], &LayoutOptions::default()) {
            Ok(_) => {
                let _ = writeln!(out, "(assembled without errors)");
            }
            Err(errors) => {
                let _ = writeln!(out, "{errors}");
            }
        }
    }
    expect![[r#"
        == unknown mnemonic
        bad.S:1:5: error[E-ASM-004]: unknown instruction `foo`
        == wrong operand kind
        bad.S:1:5: error[E-ASM-005]: `ld32step` expects: $mN|$aN, $mN, $mN+=, imm|$mN; got: $aN, $aN, $mN+=, imm
        == wrong operand count
        bad.S:1:5: error[E-ASM-005]: `add` expects: $mN, $mN, $mN|imm; got: $mN, $mN
        == CSR of the wrong space
        bad.S:1:5: error[E-ASM-005]: `uput` expects: $CSR, $aN; got: $WSR (a lower-space CSR: get/put), $aN
        == immediate out of range
        bad.S:1:19: error[E-ASM-006]: immediate 70000 is out of range for operand 3 of `add` (signed 16-bit: -32768..=32767)
        bad.S:2:25: error[E-ASM-006]: immediate -1 is out of range for operand 4 of `ld32` (unsigned 12-bit: 0..=4095)
        bad.S:3:11: error[E-ASM-006]: value 300 does not fit in `.byte` (-128..=255)
        == misaligned pair and quad
        bad.S:1:14: error[E-ASM-007]: $a1:2 is not an aligned pair (pairs start at an even register)
        bad.S:2:11: error[E-ASM-007]: $a2:5 is not an aligned quad (quads start at a multiple of 4)
        == not a pair
        bad.S:1:10: error[E-ASM-007]: $a0:2 is not a register pair ($aN:N+1) or quad ($aN:N+3)
        bad.S:2:12: error[E-ASM-007]: $m1:2 is not an aligned pair (pairs start at an even register)
        == unknown register
        bad.S:1:14: error[E-ASM-007]: unknown register or CSR `$m16`
        bad.S:2:14: error[E-ASM-007]: unknown register or CSR `$foo`
        == undefined symbol
        bad.S:1:14: error[E-ASM-008]: undefined symbol `nowhere`
        bad.S:2:10: error[E-ASM-008]: undefined symbol `missing`
        bad.S:3:9: error[E-ASM-008]: local label `1f` has no following `1:`
        bad.S:4:14: error[E-ASM-008]: local label `2b` has no preceding `2:`
        == unterminated comment
        bad.S:1:9: error[E-ASM-002]: unterminated comment: `/*` has no matching `*/`
        == misaligned branch target
        bad.S:1:9: error[E-ASM-006]: branch target 0x4c002 is not 4-byte aligned
        == bad bundles
        bad.S:2:7: error[E-ASM-010]: `nop` and `add` are both main-pipeline instructions: a bundle pairs one main and one aux instruction
        bad.S:3:7: error[E-ASM-010]: `exitz` must issue alone: it cannot be bundled
        bad.S:4:20: error[E-ASM-010]: a bundle holds at most two instructions (one main, one aux)
        bad.S:5:5: error[E-ASM-001]: unterminated bundle: `{` has no matching `}`
        == bad directives
        bad.S:1:5: error[E-ASM-013]: `.align 3`: the alignment must be a power of two from 1 to 65536
        bad.S:2:5: error[E-ASM-012]: unknown directive `.frobnicate`
        bad.S:3:5: error[E-ASM-013]: unknown symbol type `thing` (use @function, @object or @notype)
        bad.S:4:5: error[E-ASM-013]: `.space` size -1 is not in 0..=16777216
        bad.S:5:13: error[E-ASM-001]: expected a section name after `.section`, found end of line
        == preprocessor
        bad.S:1:2: error[E-ASM-003]: preprocessor directive #include is not supported: run the C preprocessor first
        bad.S:2:2: error[E-ASM-003]: preprocessor directive #ifdef is not supported: run the C preprocessor first
        bad.S:3:9: error[E-ASM-003]: function-like macro `F` is not supported: run the C preprocessor first
        == wrong context
        bad.S:2:5: error[E-ASM-016]: `run` is a supervisor-only instruction, but this code is marked `.worker`
        bad.S:4:5: error[E-ASM-016]: `f32add` is a worker-only instruction, but this code is marked `.supervisor`
        == duplicate symbol
        bad.S:2:1: error[E-ASM-009]: symbol `x` is already defined at bad.S:1:1
        bad.S:3:5: error[E-ASM-009]: symbol `x` is already defined at bad.S:1:1
        == bad expressions
        bad.S:1:12: error[E-ASM-014]: division by zero in `1 / 0`
        bad.S:2:12: error[E-ASM-014]: shift amount 64 is outside 0..=63
        bad.S:4:13: error[E-ASM-014]: `a` is defined in terms of itself
        bad.S:6:12: error[E-ASM-014]: the size of `.space` must be a constant known at this point, but `later` is defined later
        == register suffixes
        bad.S:1:21: error[E-ASM-007]: `$a4++`: only MRF registers can be post-incremented or loaded as a delta
        bad.S:2:19: error[E-ASM-007]: `++` after `$m4`: it applies to a single MRF register, not a pair
        bad.S:3:5: error[E-ASM-005]: `ldd16a32` expects: $aN, $mN++, $mN, $mN@; got: $aN, $mN+=, $mN, $mN
        == syntax
        bad.S:1:21: error[E-ASM-001]: expected `)`, found end of line
        bad.S:2:5: error[E-ASM-005]: `nop` expects: no operands; got: imm
        bad.S:3:5: error[E-ASM-001]: expected a label, directive or instruction, found `$a0`
        bad.S:4:10: error[E-ASM-001]: floating-point numbers are only allowed in `.float`
        bad.S:5:10: error[E-ASM-001]: bad number: unexpected `x` after the digits
        bad.S:6:10: error[E-ASM-001]: bad number: unexpected `ab` after the digits
    "#]].assert_eq(&out);
}

#[test]
fn errors_display_with_location_and_id() {
    let errors = assemble(&[("k.S", "nop\n  foo\n")], &LayoutOptions::default()).unwrap_err();
    let error = errors.iter().next().unwrap();
    assert_eq!(error.id(), "E-ASM-004");
    assert_eq!(error.loc(), &Loc::new("k.S", 2, 3));
    assert_eq!(
        error.to_string(),
        "k.S:2:3: error[E-ASM-004]: unknown instruction `foo`"
    );
}

#[test]
fn object_serializes() {
    // serde derives exist (checked through a trait bound; no format crate is a dependency).
    fn is_serde<T: serde::Serialize + for<'de> serde::Deserialize<'de>>(_: &T) {}
    is_serde(&kernel());
}

#[test]
fn huge_inputs_are_errors_not_crashes() {
    let many: String = (0..8)
        .map(|i| format!(".section s{i}\n.space 0xf00000\n"))
        .collect();
    let errors = assemble(&[("big.S", many.as_str())], &LayoutOptions::default()).unwrap_err();
    expect!["big.S:10:1: error[E-ASM-015]: the sections hold more than 67108864 bytes in total"]
        .assert_eq(&errors.to_string());
    let deep = format!(".int {}1{}\n", "(".repeat(500), ")".repeat(500));
    assert_eq!(
        assemble_str(&deep).unwrap_err().iter().next().unwrap().id(),
        "E-ASM-014"
    );
    let long = format!(".int 0{}\n", "+1".repeat(5000));
    assert_eq!(
        assemble_str(&long).unwrap_err().iter().next().unwrap().id(),
        "E-ASM-014"
    );
    let chain: String = (0..200)
        .map(|i| format!("#define M{} M{} M{}\n", i + 1, i, i))
        .collect::<String>()
        + "M200\n";
    assert_eq!(
        assemble_str(&chain)
            .unwrap_err()
            .iter()
            .next()
            .unwrap()
            .id(),
        "E-ASM-003"
    );
}
