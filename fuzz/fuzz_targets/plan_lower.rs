//! Fuzzes the planner and the lowering on random graphs (`tessera::random_graph`), the fast half
//! of `compile_graph`: the same bytes make the same graphs (byte 0 the rows, byte 1 the columns,
//! byte 2 the input type or a loop, then 4 bytes a step), which are planned and whose every
//! finalist is built, lowered and verified (`check_plans_and_lowers`), without placement,
//! emission or simulation. Checks: no panic; a verified graph plans or is refused naming an op.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::random_graph::{build, build_loop, check_plans_and_lowers, Step};

/// Steps beyond this are ignored (as in `compile_graph`).
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
    let (built, layer_loop) = if f32_input % 5 == 1 {
        let cols = 4 * (1 + *cols as usize % 10);
        let count = 2 + u32::from(*f32_input / 5 % 3);
        (build_loop(rows, cols, count, &steps), true)
    } else {
        let cols = 1 + *cols as usize % 40;
        (build(rows, cols, f32_input % 5 == 0, &steps), false)
    };
    let Some(built) = built else {
        return;
    };
    if let Err(broken) = check_plans_and_lowers(&built, "small", layer_loop) {
        panic!("{broken}");
    }
});
