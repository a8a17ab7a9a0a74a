//! Tests of `.equ` evaluation in the layout pass.

use crate::asm::assemble_str;

/// A chain of `.equ`s each using the previous one twice evaluates once per definition
/// (it took seconds at 26 links and never ended at 40 when every use re-evaluated).
#[test]
fn equ_chains_evaluate_in_linear_time() {
    let mut text = String::from(".equ a_0, 1\n");
    for k in 1..=62 {
        text += &format!(".equ a_{k}, a_{} + a_{}\n", k - 1, k - 1);
    }
    text += ".data\n.word a_30\n.word a_62 >> 32\n";
    let object = assemble_str(&text).unwrap();
    let data = &object.section(".data").unwrap().bytes;
    assert_eq!(&data[..4], &(1u32 << 30).to_le_bytes());
    assert_eq!(&data[4..8], &(1u32 << 30).to_le_bytes());
    // Deeper than the nesting bound: a clear error, at once.
    text += ".equ b_0, 1\n";
    for k in 1..=100 {
        text += &format!(".equ b_{k}, b_{} + b_{}\n", k - 1, k - 1);
    }
    text += ".word b_100\n";
    let error = assemble_str(&text).unwrap_err().to_string();
    assert!(error.contains("nested too deeply"), "{error}");
}

/// A definition in terms of itself is still refused, memo or not.
#[test]
fn circular_equ_is_refused() {
    let text = ".equ a, b + 1\n.equ b, a + 1\n.data\n.word a\n.word b\n";
    let error = assemble_str(text).unwrap_err().to_string();
    assert!(error.contains("in terms of itself"), "{error}");
}
