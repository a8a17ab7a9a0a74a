// bias_add_f16: out[r][c] = x[r][c] + bias[c] for an f16 matrix of `rows` x `cols` (row-major,
// contiguous rows), the bias broadcast over the rows. One f16 addition per element, rounded to
// nearest even (f16v4add; NaN results are the canonical 0x7e00).
//
// Worker kernel (all six workers share the vertex; each takes its own entry of the split table).
// Vertex state (32-bit words at $mvertex_base):
//   0: x         address of rows * cols halves (8-byte aligned)
//   1: bias      address of cols halves (8-byte aligned)
//   2: out       address of rows * cols halves (8-byte aligned)
//   3: rows      number of rows (informational; the split table defines the work)
//   4: cols      row length in halves; must be a multiple of 4 (so every row is 8-byte aligned)
//   5: distinct  1 if x, bias and out lie in three pairwise different memory elements (different
//                element slots), which allows the one-bundle-per-group fast loop; 0 otherwise
//   6 + 3w: first row of worker w,  7 + 3w: first 4-column group in that row,
//   8 + 3w: number of 4-element groups of worker w
// The split table covers the rows * cols / 4 groups in row-major order, worker 0 first.
// Memory: any region. With distinct = 1 every loop bundle does two loads (x, bias) and a store
// (out) in one ld2xst64pace, so the three buffers must not share a memory element; with
// distinct = 0 there is one memory access per bundle and no placement requirement, and out may
// be x (in place: every group is loaded before its result is stored).
//
// Algorithm: a worker's groups are cut into row segments (the rest of the first row, whole rows,
// the start of the last row); x and out run on contiguously, the bias pointer restarts at column 0
// for every new row. Per segment of n groups:
//   fast (distinct = 1 and n >= 2): pipelined rpt loop, load t / add t-1 / store t-2 in one bundle
//     { ld2xst64pace ; f16v4add }, n + 4 bundles in all;
//   general: { ld64step x } { ld64step bias } { st64step out ; f16v4add } per group (the store
//     lags one group), 3n + 3 bundles;
//   narrow (cols == 16, a segment that is a whole row, with or without distinct): that row and
//     every whole row after it in one `rpt` of 8 bundles a row (four loads, four adds of the
//     bias held in registers, four stores), the rest of the worker's groups (the start of its
//     last row) as a segment of their own.
// Registers: $m3 groups left, $m4 groups per row, $m6 x, $m7 out, $m8 bias base, $m9 bias,
// $m10 segment length, $m11 distinct; $m0:1 packed addresses, $m2 counts.
// ARF: $a0:1 x, $a2:3 bias, $a4:5 sum; the narrow rows $a0:5 a row's groups, the bias in
// $a8:13 and $a6:7 ($a14:15 is $azeros).

#define V_X        0
#define V_BIAS     1
#define V_OUT      2
#define V_COLS     4
#define V_DISTINCT 5
#define V_SPLIT    6

    .section .text.bias_add_f16
    .globl bias_add_f16
    .type bias_add_f16, @function
    .worker
    .align 8
bias_add_f16:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK
    mul $m0, $m0, 12
    ld32 $m4, $mvertex_base, $mzero, V_COLS
    ld32 $m3, $mvertex_base, $m0, V_SPLIT + 2          // groups of this worker
    ld32 $m1, $mvertex_base, $m0, V_SPLIT              // first row
    ld32 $m2, $mvertex_base, $m0, V_SPLIT + 1          // first group in the row
    brz $m3, .Lexit
    mul $m5, $m1, $m4                                  // row * cols
    shl $m0, $m2, 2
    add $m5, $m5, $m0
    shl $m5, $m5, 1                                    // byte offset of the first element
    ld32 $m6, $mvertex_base, $mzero, V_X
    ld32 $m7, $mvertex_base, $mzero, V_OUT
    ld32 $m8, $mvertex_base, $mzero, V_BIAS
    add $m6, $m6, $m5
    add $m7, $m7, $m5
    shl $m9, $m2, 3
    add $m9, $m8, $m9                                  // bias of the first column
    shr $m4, $m4, 2                                    // groups per row
    sub $m10, $m4, $m2                                 // groups left in the first row
    ld32 $m11, $mvertex_base, $mzero, V_DISTINCT

.Lsegment:
    min $m10, $m10, $m3
    sub $m3, $m3, $m10
    cmpeq $m2, $m10, 4                                 // a whole row of one AMP block?
    cmpeq $m0, $m4, 4
    and $m2, $m2, $m0
    brnz $m2, .Lnarrow
    brz $m11, .Lgeneral
    cmpult $m2, $m10, 2
    brnz $m2, .Lgeneral

    // Fast segment (n >= 2): load t, add t-1, store t-2 in one bundle.
    tapack $m0:1, $m6, $m9, $m7
    add $m2, $m10, -2
    ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0
    .align 8
    {
        ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0
        f16v4add $a4:5, $a0:1, $a2:3
    }
    { rpt $m2, 0 ; fnop }
    {
        ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0
        f16v4add $a4:5, $a0:1, $a2:3
    }
    {
        st64pace $a4:5, $m0:1+=, $mzero, 0
        f16v4add $a4:5, $a0:1, $a2:3
    }
    {
        st64pace $a4:5, $m0:1+=, $mzero, 0
        fnop
    }
    shl $m2, $m10, 3                                   // bytes of the segment
    add $m6, $m6, $m2
    add $m7, $m7, $m2
    bri .Lnext

.Lgeneral:
    // General segment: one memory access per bundle; the store lags one group.
    add $m2, $m10, -1
    ld64step $a0:1, $mzero, $m6+=, 1
    { ld64step $a2:3, $mzero, $m9+=, 1 ; fnop }
    { rpt $m2, 2 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m9+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m7+=, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }
    st64step $a4:5, $mzero, $m7+=, 1

.Lnext:
    mov $m9, $m8                                       // the next row starts at column 0
    mov $m10, $m4
    brnz $m3, .Lsegment
.Lexit:
    exitz $mzero

.Lnarrow:
    // Whole rows of 16 halves (one AMP output block; any placement, out may be x): this row
    // and every whole row after it in one `rpt`, the bias in $a8:13 and $a6:7, 8 bundles a row
    // (each group loaded before it is stored, so out may be x).
    shr $m2, $m3, 2                                    // whole rows after this one
    and $m3, $m3, 3                                    // then the start of the last row
    ld64 $a8:9, $m8, $mzero, 0
    ld64 $a10:11, $m8, $mzero, 1
    ld64 $a12:13, $m8, $mzero, 2
    ld64 $a6:7, $m8, $mzero, 3
    add $m2, $m2, 1
    .align 8
    { rpt $m2, 7 ; fnop }
    { ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m6+=, 1 ; f16v4add $a0:1, $a0:1, $a8:9 }
    { ld64step $a4:5, $mzero, $m6+=, 1 ; f16v4add $a2:3, $a2:3, $a10:11 }
    { st64step $a0:1, $mzero, $m7+=, 1 ; f16v4add $a4:5, $a4:5, $a12:13 }
    { ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }
    { st64step $a2:3, $mzero, $m7+=, 1 ; f16v4add $a0:1, $a0:1, $a6:7 }
    { st64step $a4:5, $mzero, $m7+=, 1 ; fnop }
    { st64step $a0:1, $mzero, $m7+=, 1 ; fnop }
    bri .Lnext
    .size bias_add_f16, . - bias_add_f16
