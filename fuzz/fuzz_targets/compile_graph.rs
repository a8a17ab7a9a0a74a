//! Fuzzes the graph builder, the compiler and the chip simulator on random graphs
//! (`tessera::random_graph`): byte 0 picks the rows (1..=20), byte 1 the columns (1..=40),
//! byte 2 an f32 or f16 input — or, when it is 1 mod 5, a loop of 2..=4 iterations of the
//! steps as one layer (`random_graph::build_loop`, columns a multiple of 4) — and every
//! following 4 bytes one step (at most 8). Checks the compiler's promise: a verified graph
//! compiles and runs on the `small` chip within 20 M cycles bit-exactly against the plan's
//! reference, or the planner refuses it naming an op.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::random_graph::{
    build, build_loop, check_compiles_or_is_refused, check_loop_compiles_or_is_refused, Step,
};

/// Steps beyond this are ignored (the property test draws 1..9).
const MAX_STEPS: usize = 8;

fuzz_target!(|data: &[u8]| {
    let [rows, cols, f32_input, rest @ ..] = data else {
        return;
    };
    let steps: Vec<Step> = rest
        .chunks_exact(4)
        .take(MAX_STEPS)
        .map(|c| Step::from_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if steps.is_empty() {
        return;
    }
    let rows = 1 + *rows as usize % 20;
    if f32_input % 5 == 1 {
        let cols = 4 * (1 + *cols as usize % 10);
        let count = 2 + u32::from(*f32_input / 5 % 3);
        let Some(built) = build_loop(rows, cols, count, &steps) else {
            return;
        };
        if let Err(broken) = check_loop_compiles_or_is_refused(&built, "small", 20_000_000) {
            panic!("{broken}");
        }
        return;
    }
    let cols = 1 + *cols as usize % 40;
    let Some(built) = build(rows, cols, f32_input % 5 == 0, &steps) else {
        return;
    };
    if let Err(broken) = check_compiles_or_is_refused(&built, "small", 20_000_000) {
        panic!("{broken}");
    }
});
