//! The macro and conditional-assembly corpus (`isa/tests/corpus/*.S`, PopLibs style): its
//! listing, what the directives decided, and error messages that name the line in a macro body
//! and the invocation. The root crate's `asm_corpus` test runs the corpus on a tile.

use expect_test::expect;
use tessera_isa::asm::*;

const POLY: &str = include_str!("../corpus/poly_macros.S");

fn word_at(object: &Object, symbol: &str, index: usize) -> u32 {
    let sym = object
        .symbol(symbol)
        .unwrap_or_else(|| panic!("no `{symbol}`"));
    let section = &object.sections[sym.section];
    let at = (sym.address - section.address) as usize + 4 * index;
    u32::from_le_bytes(section.bytes[at..at + 4].try_into().expect("a word"))
}

#[test]
fn poly_corpus_listing() {
    let object = assemble(&[("poly_macros.S", POLY)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        poly:
        0004c000  1904c0c0           setzi $m0, 0x4c0c0
        0004c004  1914c0e8           setzi $m1, 0x4c0e8
        0004c008  19200001           setzi $m2, 1
        0004c00c  19e00000           nop
        .Lloop:
        0004c010  0ef90001           ld32step $m9, $mzero, $m0+=, 1
        0004c014  22f80003           add $m8, $mzero, 3
        0004c018  20889009           mul $m8, $m8, $m9
        0004c01c  2288fffe           add $m8, $m8, -2
        0004c020  20889009           mul $m8, $m8, $m9
        0004c024  22880007           add $m8, $m8, 7
        0004c028  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c02c  0efa0001           ld32step $m10, $mzero, $m0+=, 1
        0004c030  22f80003           add $m8, $mzero, 3
        0004c034  2088a009           mul $m8, $m8, $m10
        0004c038  2288fffe           add $m8, $m8, -2
        0004c03c  2088a009           mul $m8, $m8, $m10
        0004c040  22880007           add $m8, $m8, 7
        0004c044  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c048  0efb0001           ld32step $m11, $mzero, $m0+=, 1
        0004c04c  22f80003           add $m8, $mzero, 3
        0004c050  2088b009           mul $m8, $m8, $m11
        0004c054  2288fffe           add $m8, $m8, -2
        0004c058  2088b009           mul $m8, $m8, $m11
        0004c05c  22880007           add $m8, $m8, 7
        0004c060  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c064  0ef70001           ld32step $m7, $mzero, $m0+=, 1
        0004c068  22f80003           add $m8, $mzero, 3
        0004c06c  20887009           mul $m8, $m8, $m7
        0004c070  2288fffe           add $m8, $m8, -2
        0004c074  20887009           mul $m8, $m8, $m7
        0004c078  22880007           add $m8, $m8, 7
        0004c07c  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c080  13293004           brnzdec $m2, 0x4c010
        0004c084  0ef30001           ld32step $m3, $mzero, $m0+=, 1
        0004c088  22f80003           add $m8, $mzero, 3
        0004c08c  20883009           mul $m8, $m8, $m3
        0004c090  2288fffe           add $m8, $m8, -2
        0004c094  20883009           mul $m8, $m8, $m3
        0004c098  22880007           add $m8, $m8, 7
        0004c09c  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c0a0  0ef30001           ld32step $m3, $mzero, $m0+=, 1
        0004c0a4  22f80003           add $m8, $mzero, 3
        0004c0a8  20883009           mul $m8, $m8, $m3
        0004c0ac  2288fffe           add $m8, $m8, -2
        0004c0b0  20883009           mul $m8, $m8, $m3
        0004c0b4  22880007           add $m8, $m8, 7
        0004c0b8  0ef81401           st32step $m8, $mzero, $m1+=, 1
        0004c0bc  37f00000           exitz $mzero
    "#]]
    .assert_eq(&object.listing_text());
    let names: Vec<&str> = object.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [".text.poly(worker)", ".data"]);
    let table: Vec<i32> = (0..10)
        .map(|k| word_at(&object, "x_in", k) as i32)
        .collect();
    assert_eq!(table, (-3..7).collect::<Vec<i32>>());
    assert_eq!(word_at(&object, "a_after", 0), 5);
    let poly = object.symbol("poly").expect("poly");
    assert_eq!(poly.kind, SymbolKind::Function);
    assert!(poly.global);
}

/// An error inside a macro body names the body line and every invocation around it, whatever
/// stage finds it (expansion, parser, operand check, layout).
#[test]
fn errors_in_macro_bodies_name_the_invocations() {
    let text = r#"
.macro load dst, kind=int
  .ifnc \kind, int
    .error "load: unsupported \kind"
  .endif
  ld32 \dst, $mzero, $mzero, 0
.endm
.macro twice a, b
  load \a
  load \b, kind=half
.endm
    twice $m1, $a9
    twice $m1, $q1
    load $m2,
    load
.rept 2
    .int undefined_here
.endr
"#;
    let errors = assemble(&[("m.S", text)], &LayoutOptions::default()).unwrap_err();
    expect![[r#"
        m.S:4:5: error[E-ASM-022]: load: unsupported half (in macro `load` invoked at line 10, in macro `twice` invoked at line 12)
        m.S:4:5: error[E-ASM-022]: load: unsupported half (in macro `load` invoked at line 10, in macro `twice` invoked at line 13)
        m.S:6:8: error[E-ASM-007]: unknown register or CSR `$q1` (in macro `load` invoked at line 10, in macro `twice` invoked at line 13)
        m.S:6:8: error[E-ASM-001]: expected an expression, found `,` (in macro `load` invoked at line 15)
        m.S:17:10: error[E-ASM-008]: undefined symbol `undefined_here` (in `.rept` at line 16)
        m.S:17:10: error[E-ASM-008]: undefined symbol `undefined_here` (in `.rept` at line 16)"#]]
    .assert_eq(&errors.to_string());
}

#[test]
fn equ_set_and_equiv() {
    let text = ".set x, 1\n.data\n.int x\n.set x, x + 1\n.int x\nx = x * 10\n.int x\n.equ y, 4\n.equ y, 5\n.int y\n";
    let object = assemble_str(text).unwrap_or_else(|e| panic!("{e}"));
    let data = &object.section(".data").expect("data").bytes;
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("word")))
        .collect();
    assert_eq!(words, [1, 2, 20, 5]);
    let error = assemble_str(".equiv z, 1\n.equiv z, 2\n")
        .unwrap_err()
        .to_string();
    expect!["<input>:2:1: error[E-ASM-009]: symbol `z` is already defined at <input>:1:1"]
        .assert_eq(&error);
    let error = assemble_str(".set w, 1\n.equiv w, 2\n")
        .unwrap_err()
        .to_string();
    expect!["<input>:2:1: error[E-ASM-009]: symbol `w` is already defined at <input>:1:1"]
        .assert_eq(&error);
}

#[test]
fn aliases_and_warnings() {
    let (object, warnings) = assemble_with_warnings(
        &[(
            "w.S",
            ".macro note\n.warning \"unrolled \\@\"\n.endm\nnote\nadd $sp, $lr, $fp\n",
        )],
        &LayoutOptions::default(),
    );
    let object = object.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(object.listing[0].text, "add $m11, $m10, $m9");
    let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings, ["w.S:2:1: warning: unrolled 0"]);
}

/// Several files are linked as they are assembled together: `.globl` names are shared,
/// `.extern` declares them, and a missing or twice-defined global is a typed error.
#[test]
fn files_link_through_globals() {
    let a = "    .globl f\n    .text\nf:\n    br $lr\nlocal_a:\n    nop\n";
    let b = "    .extern f\n    .globl main\nmain:\n    call $lr, f\n";
    let object = assemble(&[("a.S", a), ("b.S", b)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    expect![[r#"
        f:
        0004c000  43a00000           br $m10
        local_a:
        0004c004  19e00000           nop
        main:
        0004c008  18a13000           call $m10, 0x4c000
    "#]]
    .assert_eq(&object.listing_text());
    let c = "    .extern g\n    call $lr, g\n    call $lr, local_a\n";
    let d = "    .globl f\nf:\n    nop\n";
    let errors = assemble(
        &[("a.S", a), ("c.S", c), ("d.S", d)],
        &LayoutOptions::default(),
    )
    .unwrap_err();
    expect![[r#"
        c.S:2:15: error[E-ASM-008]: undefined symbol `g`
        c.S:3:15: error[E-ASM-008]: undefined symbol `local_a` (a.S defines it, but not as `.globl`)
        d.S:1:12: error[E-ASM-009]: global symbol `f` is also defined at a.S:3:1"#]]
    .assert_eq(&errors.to_string());
}

/// `.globl SYM, @function` (PopLibs' form for ipu21): the type in the list is taken and ignored
/// (`.type` says the same), the symbol is global; an unknown type is refused.
#[test]
fn globl_takes_a_symbol_type_in_its_list() {
    let a = "    .globl f, @function\n    .type f, @function\n    .text\nf:\n    br $lr\n";
    let b = "    .extern f\n    .globl main\nmain:\n    call $lr, f\n";
    let object = assemble(&[("a.S", a), ("b.S", b)], &LayoutOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        object.listing_text().contains("call $m10, 0x4c000"),
        "{}",
        object.listing_text()
    );
    let errors = assemble(
        &[("c.S", "    .globl g, @weird\ng:\n    nop\n")],
        &LayoutOptions::default(),
    )
    .unwrap_err();
    assert!(
        errors.to_string().contains("`@weird` in `.globl`"),
        "{errors}"
    );
}
