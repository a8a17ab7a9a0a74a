//! The same program gives the same cycles and memory on every run.

use super::*;

#[test]
fn the_same_program_gives_the_same_cycles_and_memory() {
    // Six workers each summing a strided slice and storing to their own slot, launched with
    // per-worker vertex bases; run twice from scratch.
    let source = "    .text
    .align 8
sup:
    setzi $m1, work
    setzi $m2, vertices
    runall $m1, $m2, 2
    sync 2
    br $m10
    .align 8
work:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    get $m2, $COUNT_L
    setzi $m3, 20
1:  add $m1, $m1, $m0
    brnzdec $m3, 1b
    st32 $m1, $mvertex_base, $mzero, 1
    st32 $m2, $mworker_base, $mzero, 0
    exitz $mzero
    .data
    .align 8
vertices:
    .int 1, 100, 2, 200, 3, 300, 4, 400, 5, 500, 6, 600
";
    let first = run_supervisor(source, "sup");
    let second = run_supervisor(source, "sup");
    assert_eq!(first.0, second.0);
    assert_eq!(first.1.counters, second.1.counters);
    assert_eq!(first.1.spans, second.1.spans);
    assert!(
        first.1.memory.bytes() == second.1.memory.bytes(),
        "memory differs between runs"
    );
    // And the workers did their work: 100·w + 21·w for worker w (1-based values).
    let vertices = symbol(&first.2, "vertices");
    for w in 0..6u32 {
        assert_eq!(
            first.1.memory.read_u32(vertices + 8 * w + 4).unwrap(),
            121 * (w + 1)
        );
    }
}
