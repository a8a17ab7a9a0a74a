//! Fuzzes the graph builder, the compiler and the chip simulator on random graphs
//! (`tessera::random_graph`, made from the bytes by `tessera_fuzz::graph_from_bytes`: rows,
//! columns, input type or a loop of 2..=4 iterations, then 4 bytes a step). Checks the
//! compiler's promise: a verified graph compiles and runs on the `small` chip within 20 M
//! cycles bit-exactly against the plan's reference, or the planner refuses it naming an op;
//! a loop that compiles keeps its loop.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::random_graph::{check_compiles_or_is_refused, check_loop_compiles_or_is_refused};
use tessera_fuzz::graph_from_bytes;

fuzz_target!(|data: &[u8]| {
    let Some((built, layer_loop)) = graph_from_bytes(data) else {
        return;
    };
    let checked = if layer_loop {
        check_loop_compiles_or_is_refused(&built, "small", 20_000_000)
    } else {
        check_compiles_or_is_refused(&built, "small", 20_000_000)
    };
    if let Err(broken) = checked {
        panic!("{broken}");
    }
});
