// copy_runs_sup: copy_runs for small copies, run by the supervisor alone: no workers start, so
// a copy of a few words costs tens of cycles where copy_runs' launch, set-up and sync cost
// ~330 (the copy of a tile's own part into a product's parts, a received bias, ...).
//
// Supervisor entry `copy_runs_sup` ($mvertex_base = the vertex; returns with `br $m10`).
// Vertex state (32-bit words):
//   0: src     source base address (4-byte aligned, any region)
//   1: dst     destination base address (4-byte aligned, any region)
//   2: table   E entries of three words: (src offset | 0xFFFFFFFF = zeros, dst offset,
//              words >= 1), offsets in bytes, multiples of 4
//   3: E       entries (>= 1)
// Every item (o, r) of a copy_runs table is one entry here (kernels/src/movement/copy_runs/
// sup.rs flattens them), so the kernel has no outer loop and no strides.
// A supervisor register written by any instruction is read 6 cycles after it at the earliest
// (sim/src/tile/mod.rs), so nothing here reads a register right after writing it: a pass copies
// four words with fixed-offset loads and stores (the stores 6 cycles after their loads) and one
// pointer add each side, and a loop counts passes with `brnzdec`. The last 0..3 words go one at
// a time. `src` is loaded again per entry, so $m0 serves as the fourth word of a pass.
// Registers: $m0 src (then a word), $m1 dst, $m2 table, $m3 entries left, $m4 src address, $m5
// dst address, $m6 words after the passes, $m7 passes left, $m8 $m9 $m11 the words.

    .section .text.copy_runs_sup
    .globl copy_runs_sup
    .type copy_runs_sup, @function
    .supervisor
    .align 8
copy_runs_sup:
    ld32 $m1, $mvertex_base, $mzero, 1
    ld32 $m2, $mvertex_base, $mzero, 2
    ld32 $m3, $mvertex_base, $mzero, 3
    add $m3, $m3, -1
.Lentry:
    ld32 $m6, $m2, $mzero, 2                // words
    ld32 $m4, $m2, $mzero, 0                // src offset (or zeros)
    ld32 $m5, $m2, $mzero, 1                // dst offset
    ld32 $m0, $mvertex_base, $mzero, 0      // src
    add $m2, $m2, 12
    shr $m7, $m6, 2                         // passes of four words
    and $m6, $m6, 3                         // the words after them
    add $m5, $m5, $m1
    brneg $m4, .Lzeros
    add $m4, $m4, $m0
    brz $m7, .Lsingle
    add $m7, $m7, -1
.Lquad:
    ld32 $m8, $m4, $mzero, 0
    ld32 $m9, $m4, $mzero, 1
    ld32 $m11, $m4, $mzero, 2
    ld32 $m0, $m4, $mzero, 3
    add $m4, $m4, 16
    st32 $m8, $m5, $mzero, 0
    st32 $m9, $m5, $mzero, 1
    st32 $m11, $m5, $mzero, 2
    st32 $m0, $m5, $mzero, 3
    add $m5, $m5, 16
    brnzdec $m7, .Lquad
.Lsingle:
    brz $m6, .Lnext
    add $m6, $m6, -1
.Lone:
    ld32 $m8, $m4, $mzero, 0
    add $m4, $m4, 4
    st32 $m8, $m5, $mzero, 0
    add $m5, $m5, 4
    brnzdec $m6, .Lone
.Lnext:
    brnzdec $m3, .Lentry
    br $m10
.Lzeros:
    brz $m7, .Lzero_single
    add $m7, $m7, -1
.Lzero_quad:
    st32 $mzero, $m5, $mzero, 0
    st32 $mzero, $m5, $mzero, 1
    st32 $mzero, $m5, $mzero, 2
    st32 $mzero, $m5, $mzero, 3
    add $m5, $m5, 16
    brnzdec $m7, .Lzero_quad
.Lzero_single:
    brz $m6, .Lnext
    add $m6, $m6, -1
.Lzero_one:
    st32 $mzero, $m5, $mzero, 0
    add $m5, $m5, 4
    brnzdec $m6, .Lzero_one
    bri .Lnext
    .size copy_runs_sup, . - copy_runs_sup
