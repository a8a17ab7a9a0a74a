//! Fuzzes the planner and the lowering on random graphs, the fast half of `compile_graph`: the
//! same bytes make the same graphs (`tessera_fuzz::graph_from_bytes`), which are planned and
//! whose every finalist is built, lowered and verified (`check_plans_and_lowers`), without
//! placement, emission or simulation. Checks: no panic; a verified graph plans or is refused
//! naming an op.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::random_graph::check_plans_and_lowers;
use tessera_fuzz::graph_from_bytes;

fuzz_target!(|data: &[u8]| {
    let Some((built, layer_loop)) = graph_from_bytes(data) else {
        return;
    };
    if let Err(broken) = check_plans_and_lowers(&built, "small", layer_loop) {
        panic!("{broken}");
    }
});
