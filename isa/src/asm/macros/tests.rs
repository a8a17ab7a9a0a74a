//! Tests of macro expansion and conditional assembly: expansions as text, and error messages.

use super::expand;
use crate::asm::lexer::Tok;
use expect_test::{expect, Expect};

/// The expanded lines as the parser gets them: `line: tokens`, one line per statement.
fn lines(text: &str) -> String {
    let mut errors = Vec::new();
    let out = expand("t.S", text, &mut errors);
    let mut rendered = String::new();
    let mut current = String::new();
    let mut line = 0;
    for token in &out.tokens {
        let text = match &token.tok {
            Tok::Newline | Tok::Eof => {
                if !current.is_empty() {
                    rendered += &format!("L{line}: {}\n", current.trim_end());
                }
                current.clear();
                continue;
            }
            Tok::Ident(name) => name.clone(),
            Tok::Reg(name) => format!("${name}"),
            Tok::Int(v) => v.to_string(),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Punct(p) => p.text().to_string(),
            other @ (Tok::Float(_) | Tok::Half(_) | Tok::Local { .. }) => other.describe(),
        };
        line = token.pos.line;
        current += &text;
        current.push(' ');
    }
    for error in &mut errors {
        let note = out.note(error.loc().ctx);
        error.append_to_message(&note);
        rendered += &format!("{error}\n");
    }
    for warning in &out.warnings {
        rendered += &format!("{warning}\n");
    }
    rendered
}

fn check(text: &str, expected: Expect) {
    expected.assert_eq(&lines(text));
}

#[test]
fn macro_with_defaults_named_args_and_separator() {
    check(
        r#"
.macro load dst, base=$m1, off=0
ld32 \dst, \base, $mzero, \off
lbl_\@\()_end:
.endm
load $m2
load $m3, off=4
LOAD $m4 $m5 2
load $m6, , 1 + 2
"#,
        expect![[r#"
            L3: ld32 $m2 , $m1 , $mzero , 0
            L4: lbl_0_end :
            L3: ld32 $m3 , $m1 , $mzero , 4
            L4: lbl_1_end :
            L3: ld32 $m4 , $m5 , $mzero , 2
            L4: lbl_2_end :
            L3: ld32 $m6 , $m1 , $mzero , 1 + 2
            L4: lbl_3_end :
        "#]],
    );
}

#[test]
fn counter_nesting_vararg_and_exitm() {
    check(
        r#"
.macro outer n
.macro inner_\n x:vararg
.word \x
.endm
inner_\n \n, \@
L\@:
.if \n > 1
.exitm
.endif
.byte \n
.endm
outer 1
outer 2
inner_2 7 8
.purgem inner_1
.macro inner_1
nop
.endm
inner_1
"#,
        expect![[r#"
            L4: .word 1 , 0
            L7: L0 :
            L11: .byte 1
            L4: .word 2 , 2
            L7: L2 :
            L4: .word 7 8
            L18: nop
        "#]],
    );
}

#[test]
fn conditionals() {
    check(
        r#"
#define WIDTH 4
.set depth, 2
.if WIDTH == 4
a1
.elseif depth
a2
.else
a3
.endif
.ifeq depth - 1
b1
.elseif depth - 2
b2
.else
b3
.endif
.iflt -1
.ifgt 0
c1
.endif
c2
.endif
.ifdef depth
d1
.endif
.ifndef later
d2
.endif
later:
.ifdef later
d3
.endif
.ifc "a b", a b
e1
.endif
.ifnc ab, "ab"
e2
.endif
.macro opt x
.ifb \x
f_blank
.else
f_\x
.endif
.endm
opt
opt y
"#,
        expect![[r#"
            L3: .set depth , 2
            L5: a1
            L16: b3
            L22: c2
            L25: d1
            L28: d2
            L30: later :
            L32: d3
            L35: e1
            L42: f_blank
            L44: f_y
        "#]],
    );
}

#[test]
fn repeats() {
    check(
        r#"
.set i, 0
.rept 3
.word i
.set i, i + 1
.endr
.irp r, $m1, $m2 $m3
st32 \r, $mzero, 0
.endr
.irpc c, 012
.byte \c
.endr
.rept 2
.rept 2
x:
.endr
.endr
.rept 0
never
.endr
.if i == 3
done
.endif
"#,
        expect![[r#"
            L2: .set i , 0
            L4: .word i
            L5: .set i , i + 1
            L4: .word i
            L5: .set i , i + 1
            L4: .word i
            L5: .set i , i + 1
            L8: st32 $m1 , $mzero , 0
            L8: st32 $m2 , $mzero , 0
            L8: st32 $m3 , $mzero , 0
            L11: .byte 0
            L11: .byte 1
            L11: .byte 2
            L15: x :
            L15: x :
            L15: x :
            L15: x :
            L22: done
        "#]],
    );
}

#[test]
fn label_before_a_macro_and_defines_in_arguments() {
    check(
        r#"
#define SRC $m1
.macro copy from
ld32 $m2, \from, $mzero, 0
.endm
start: copy SRC
"#,
        expect![[r#"
            L6: start :
            L4: ld32 $m2 , $m1 , $mzero , 0
        "#]],
    );
}

#[test]
fn errors_name_the_line_in_the_body_and_the_invocation() {
    check(
        r#"
.macro check x:req
.ifc \x, bad
.error "bad argument \x"
.endif
.warning "checked \x"
.endm
.macro twice x
check \x
.endm
twice bad
check
check a, b
.rept 2
\y
.endr
"#,
        expect![[r#"
            t.S:4:1: error[E-ASM-022]: bad argument bad (in macro `check` invoked at line 9, in macro `twice` invoked at line 11)
            t.S:12:1: error[E-ASM-019]: macro `check`: missing value for required parameter `x`
            t.S:13:1: error[E-ASM-019]: macro `check`: too many arguments (it takes 1): `b`
            t.S:15:1: error[E-ASM-001]: `\y` is not a parameter of the enclosing macro or `.irp` (or is outside any) (in `.rept` at line 14)
            t.S:15:1: error[E-ASM-001]: `\y` is not a parameter of the enclosing macro or `.irp` (or is outside any) (in `.rept` at line 14)
            t.S:6:1: warning: checked bad
        "#]],
    );
}

#[test]
fn structure_errors() {
    check(
        ".endm\n.endr\n.else\n.endif\n.exitm\n.purgem nope\n.macro m\n.endm\n.macro M\n.endm\n.if 1\n.else\n.else\n.endif\n.ifc a\n.endif\n.if\n.endif\n.if undefined_sym\n.endif\n.macro\n.endm\n.macro bad a a\n.endm\n.if 1\n.rept 3\n",
        expect![[r#"
            t.S:1:1: error[E-ASM-018]: `.endm` without `.macro`
            t.S:2:1: error[E-ASM-018]: `.endr` without `.rept`, `.irp` or `.irpc`
            t.S:3:1: error[E-ASM-021]: `.else` without `.if`
            t.S:4:1: error[E-ASM-021]: `.endif` without `.if`
            t.S:5:1: error[E-ASM-018]: `.exitm` outside a macro
            t.S:6:1: error[E-ASM-018]: `.purgem`: no macro `nope` is defined
            t.S:9:1: error[E-ASM-018]: macro `M` is already defined at line 7 (`.purgem` it first)
            t.S:13:1: error[E-ASM-021]: `.else` twice in one `.if`
            t.S:15:1: error[E-ASM-021]: `.ifc`: expected two strings separated by `,`
            t.S:17:1: error[E-ASM-021]: `.if` needs an expression
            t.S:19:5: error[E-ASM-008]: undefined symbol `undefined_sym` (conditions and counts see only symbols defined above them)
            t.S:21:1: error[E-ASM-018]: `.macro` needs a name
            t.S:23:1: error[E-ASM-018]: `.macro bad`: parameter `a` is named twice
            t.S:26:1: error[E-ASM-018]: `.rept` has no `.endr`
            t.S:25:1: error[E-ASM-021]: this conditional has no `.endif`
        "#]],
    );
}

#[test]
fn bounds_give_errors_not_hangs() {
    check(
        ".macro r\nr\n.endm\nr\n",
        expect![[r#"
            t.S:2:1: error[E-ASM-020]: expansions nest more than 64 deep here (a macro that invokes itself without end?) (in macro `r` invoked at line 2, in macro `r` invoked at line 2, in macro `r` invoked at line 2, in 59 more expansions, in macro `r` invoked at line 2, in macro `r` invoked at line 4)
        "#]],
    );
    check(
        ".rept 1 << 30\nnop\n.endr\n.rept -1\n.endr\n",
        expect![[r#"
            t.S:1:1: error[E-ASM-020]: `.rept` count 1073741824 is above the limit of 1048576
            t.S:4:1: error[E-ASM-013]: `.rept` count -1 is negative
        "#]],
    );
    check(
        ".rept 1000\n.rept 1000\n.rept 1000\n.endr\n.endr\n.endr\n",
        expect![[r#"
            t.S:3:1: error[E-ASM-020]: expansion produces more than 1048576 lines (a `.rept` or a recursive macro without end?) (in `.rept` at line 2, in `.rept` at line 1)
        "#]],
    );
    check(
        ".macro grow a\ngrow \\a\\a\\a\\a\n.endm\ngrow x\n",
        expect![[r#"
            t.S:2:1: error[E-ASM-020]: the expanded line is longer than 65536 bytes (in macro `grow` invoked at line 2, in macro `grow` invoked at line 2, in macro `grow` invoked at line 2, in 3 more expansions, in macro `grow` invoked at line 2, in macro `grow` invoked at line 4)
        "#]],
    );
}

/// Malformed input of every kind gives errors (or nothing), never a panic.
#[test]
fn malformed_input_never_panics() {
    let inputs = [
        ".macro m a=\"x\n\\a\n.endm\nm \"unterminated\n",
        ".macro m, a\n\\\n.endm\nm 1\n",
        ".macro\u{e9} \u{e9}\n.endm\n\u{e9} \u{e9}\n",
        ".irp\n.endr\n.irpc c\n\\c\n.endr\n.irp x, \"a\n.endr\n",
        ".ifc \"a\n.endif\n.ifc \"a\" b\n.endif\n.ifdef\n.endif\n.ifdef 1 2\n.endif\n",
        ".rept 99999999999999999999\n.endr\n.rept 1/0\n.endr\n.if 1 <<\n.endif\n",
        ".elseif 1\n.if 0\n.elseif\n.endif\n.exitm\n.error\n.warning\n.purgem\n",
        ".macro m x:vararg\nm \\x \\x\n.endm\nm a,b\n",
        "x: .endm\nlabel: .if 1\n.endif\n:\n\\@\n\\()\n",
        "#define A \\\n.macro A\n.endm\n",
        ".macro a\n.macro b\n.endm\n.endm\na\na\n",
    ];
    for input in inputs {
        let mut errors = Vec::new();
        let out = expand("t.S", input, &mut errors);
        assert!(matches!(out.tokens.last().map(|t| &t.tok), Some(Tok::Eof)));
        let _ = crate::asm::assemble_str(input);
    }
}

#[test]
fn conditions_on_places_in_a_section() {
    // PopLibs' RPT_ALIGNED_TO: whether `.` is 8-byte aligned relative to an aligned label
    // decides between a lone `rpt` and an `rpt` bundle. Places are known while every size is.
    check(
        r#"
.macro ALIGNED LABEL
.if (. - \LABEL) & 0x7
  odd
.else
  even
.endif
.endm
    .section .text.k, "ax"
    .align 8
start:
    ALIGNED start
    nop
    ALIGNED start
    { nop ; fnop }
    ALIGNED start
    .int 1, 2, 3
    ALIGNED start
2:  nop
.if (. - 2b) != 4
    .error "a numeric label's place"
.endif
    .section .data
    .byte 1
    .section .text.k
    ALIGNED start
"#,
        expect![[r#"
            L9: .section .text.k , "ax"
            L10: .align 8
            L11: start :
            L6: even
            L13: nop
            L6: even
            L15: { nop ; fnop }
            L4: odd
            L17: .int 1 , 2 , 3
            L4: odd
            L19: 2 : nop
            L23: .section .data
            L24: .byte 1
            L25: .section .text.k
            L4: odd
        "#]],
    );
    // `.` alone, a label of another section and a place after `ldconst` have no value then.
    check(
        r#"
    .section .data
d:  .int 0
    .text
.if . & 7
.endif
.if . - d
.endif
    ldconst $m0, 0x12345678
.if . - d
.endif
.if 3f - .
.endif
"#,
        expect![[r#"
            L2: .section .data
            L3: d : .int 0
            L4: .text
            L9: ldconst $m0 , 305419896
            t.S:5:4: error[E-ASM-014]: `.if` depends on where a section is placed: it needs `.` and labels only as differences of places in one section
            t.S:7:4: error[E-ASM-014]: `.if` depends on where a section is placed: it needs `.` and labels only as differences of places in one section
            t.S:10:5: error[E-ASM-014]: `.` has no value here: something of unknown size (`ldconst`, a `.space` of a symbol) precedes it in its section
            t.S:12:5: error[E-ASM-008]: local label `3f` has no known place here (conditions see only the `3:` above them, in code of known size)
        "#]],
    );
}
