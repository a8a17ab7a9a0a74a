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
// Per entry 10 instructions and the branches; four words a pass of 11 instructions (loads
// before stores, so no store waits), the last 0..3 words one at a time.
// Registers: $m0 src, $m1 dst, $m2 table, $m3 entries left, $m4 src address, $m5 dst address,
// $m6 words left, $m7 $m8 $m9 $m11 the words (and $m7 a test).

    .section .text.copy_runs_sup
    .globl copy_runs_sup
    .type copy_runs_sup, @function
    .supervisor
    .align 8
copy_runs_sup:
    ld32 $m0, $mvertex_base, $mzero, 0
    ld32 $m1, $mvertex_base, $mzero, 1
    ld32 $m2, $mvertex_base, $mzero, 2
    ld32 $m3, $mvertex_base, $mzero, 3
    add $m3, $m3, -1
.Lentry:
    ld32 $m4, $m2, $mzero, 0
    ld32 $m5, $m2, $mzero, 1
    ld32 $m6, $m2, $mzero, 2
    add $m2, $m2, 12
    add $m5, $m5, $m1
    brneg $m4, .Lzeros
    add $m4, $m4, $m0
    cmpult $m7, $m6, 4
    brnz $m7, .Lsingle
.Lquad:
    // Four words a pass while four or more are left: the loads first, so no store waits.
    ld32step $m7, $mzero, $m4+=, 1
    ld32step $m8, $mzero, $m4+=, 1
    ld32step $m9, $mzero, $m4+=, 1
    ld32step $m11, $mzero, $m4+=, 1
    st32step $m7, $mzero, $m5+=, 1
    st32step $m8, $mzero, $m5+=, 1
    st32step $m9, $mzero, $m5+=, 1
    st32step $m11, $mzero, $m5+=, 1
    add $m6, $m6, -4
    cmpult $m7, $m6, 4
    brz $m7, .Lquad
.Lsingle:
    brz $m6, .Lnext
.Lone:
    ld32step $m7, $mzero, $m4+=, 1
    add $m6, $m6, -1
    st32step $m7, $mzero, $m5+=, 1
    brnz $m6, .Lone
.Lnext:
    brnzdec $m3, .Lentry
    br $m10
.Lzeros:
    cmpult $m7, $m6, 4
    brnz $m7, .Lzero_single
.Lzero_quad:
    st32step $mzero, $mzero, $m5+=, 1
    st32step $mzero, $mzero, $m5+=, 1
    st32step $mzero, $mzero, $m5+=, 1
    st32step $mzero, $mzero, $m5+=, 1
    add $m6, $m6, -4
    cmpult $m7, $m6, 4
    brz $m7, .Lzero_quad
.Lzero_single:
    brz $m6, .Lnext
.Lzero_one:
    st32step $mzero, $mzero, $m5+=, 1
    add $m6, $m6, -1
    brnz $m6, .Lzero_one
    bri .Lnext
    .size copy_runs_sup, . - copy_runs_sup
