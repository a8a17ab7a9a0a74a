// residual_add_f16: out[i] = a[i] + b[i] for i < n, f16 with round-to-nearest-even.
//
// Worker kernel (all six workers share one vertex; each finds its share in the split table).
// Vertex state (32-bit words at $mvertex_base):
//   0: a        address of n halves (8-byte aligned)
//   1: b        address of n halves (8-byte aligned)
//   2: out      address of n halves (8-byte aligned)
//   3: n        element count (any value; n % 4 tail elements are done by worker 5)
//   4+2w: first 4-element group of worker w     5+2w: number of groups of worker w
// The split table covers the n / 4 groups in order (worker 5 owns the last ones).
// Memory: any region; no element constraints (one access per bundle).

    .section .text.residual_add_f16
    .globl residual_add_f16
    .type residual_add_f16, @function
    .worker
    .align 8
residual_add_f16:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK   // worker id 0..5
    shl $m1, $m0, 3
    add $m1, $m1, 16                          // byte offset of this worker's split entry
    ld32 $m2, $mvertex_base, $m1, 0           // first group
    ld32 $m3, $mvertex_base, $m1, 1           // group count
    shl $m2, $m2, 3                           // byte offset of the first group
    ld32 $m4, $mvertex_base, $mzero, 0
    ld32 $m5, $mvertex_base, $mzero, 1
    ld32 $m6, $mvertex_base, $mzero, 2
    add $m4, $m4, $m2
    add $m5, $m5, $m2
    add $m6, $m6, $m2
    brz $m3, .Ltail
    add $m3, $m3, -1                          // brnzdec runs count times for count - 1
.Lloop:
    ld64step $a0:1, $mzero, $m4+=, 1
    ld64step $a2:3, $mzero, $m5+=, 1
    f16v4add $a0:1, $a0:1, $a2:3
    st64step $a0:1, $mzero, $m6+=, 1
    brnzdec $m3, .Lloop
.Ltail:
    cmpne $m7, $m0, 5                         // only worker 5 (at the end of the groups) does the tail
    brnz $m7, .Ldone
    ld32 $m7, $mvertex_base, $mzero, 3
    and $m8, $m7, 3
    brz $m8, .Ldone
    and $m9, $m8, 2
    brz $m9, .Lone
    ld32step $a0, $mzero, $m4+=, 1            // two more halves
    ld32step $a1, $mzero, $m5+=, 1
    f16v2add $a0, $a0, $a1
    st32step $a0, $mzero, $m6+=, 1
.Lone:
    and $m9, $m8, 1
    brz $m9, .Ldone
    ld32 $a0, $m4, $mzero, 0                  // the last half (and whatever follows it)
    ld32 $a1, $m5, $mzero, 0
    f16v2add $a0, $a0, $a1                    // lane 0 is the result
    ld32 $a2, $m6, $mzero, 0                  // there are no 16-bit stores: keep the upper half
    swap16 $a2, $a2
    sort4x16lo $a0, $a0, $a2                  // {result, old upper half}
    st32 $a0, $m6, $mzero, 0
.Ldone:
    exitz $mzero
    .size residual_add_f16, . - residual_add_f16
