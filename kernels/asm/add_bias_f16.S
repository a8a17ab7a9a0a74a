// add_bias_f16: out[r][c] = (a[r][c] + b[r][c]) + bias[c] for f16 matrices of `rows` x `cols`
// (row-major, contiguous rows), the bias broadcast over the rows: a sum of two partial products
// and the bias after it in one pass. Two f16 additions per element, each rounded to nearest
// even (f16v4add; NaN results are the canonical 0x7e00), in that order, so the result is bit
// for bit residual_add_f16 followed by bias_add_f16.
//
// Worker kernel (all six workers share the vertex; each takes its own entry of the split table).
// Vertex state (32-bit words at $mvertex_base):
//   0: a         address of rows * cols halves (8-byte aligned)
//   1: b         address of rows * cols halves (8-byte aligned)
//   2: bias      address of cols halves (8-byte aligned)
//   3: out       address of rows * cols halves (8-byte aligned)
//   4: rows      number of rows (informational; the split table defines the work)
//   5: cols      row length in halves; must be a multiple of 4 (so every row is 8-byte aligned)
//   6: distinct  1 if a, b and out lie in three pairwise different memory elements (different
//                element slots; the bias anywhere), which allows the two-bundle-per-group
//                loops; 0 otherwise
//   7 + 3w: first row of worker w,  8 + 3w: first 4-column group in that row,
//   9 + 3w: number of 4-element groups of worker w
// The split table covers the rows * cols / 4 groups in row-major order, worker 0 first.
// Memory: any region. With distinct = 1 a bundle loads a and b and stores out in one
// ld2xst64pace, so those three must not share a memory element; with distinct = 0 there is one
// memory access per bundle and no placement requirement, and out may be a or b (every group is
// loaded before its result is stored).
//
// Algorithm: a worker's groups are cut into row segments (the rest of the first row, whole rows,
// the start of the last row); a, b and out run on contiguously, the bias pointer restarts at
// column 0 for every new row. Per segment of n groups (A, B, C: a group of a, b, bias; T = A + B,
// O = T + C):
//   fast (distinct = 1 and n >= 2): {ld2xst64pace A(j), B(j), store O(j-2) ; T(j-1)}
//     {ld64 C(j) ; O(j-1)}, 2n + 3 bundles;
//   general: {ld A(j) ; O(j-1)} {ld B(j)} {ld C(j) ; T(j)} {store O(j-1)}, 4n + 2 bundles;
//   narrow (distinct = 1, cols == 16, a segment that is a whole row): that row and every whole
//     row after it as one pace stream with the row's bias in registers, 8 bundles a row (two a
//     group), the rest of the worker's groups (the start of its last row) as a segment of
//     their own.
// Registers: $m3 groups left, $m4 groups per row, $m5 b, $m6 a, $m7 out, $m8 bias base, $m9
// bias, $m10 segment length, $m11 distinct; $m0:1 packed addresses, $m2 counts.
// ARF: $a0:1 A, $a2:3 B, $a4:5 T (narrow: T then O), $a6:7 O, $a8:9 C; the narrow rows' bias in
// $a6:7, $a8:9, $a10:11, $a12:13 ($a14:15 is $azeros).

#define V_A        0
#define V_B        1
#define V_BIAS     2
#define V_OUT      3
#define V_COLS     5
#define V_DISTINCT 6
#define V_SPLIT    7

    .section .text.add_bias_f16
    .globl add_bias_f16
    .type add_bias_f16, @function
    .worker
    .align 8
add_bias_f16:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK
    mul $m0, $m0, 12
    ld32 $m4, $mvertex_base, $mzero, V_COLS
    ld32 $m3, $mvertex_base, $m0, V_SPLIT + 2          // groups of this worker
    ld32 $m1, $mvertex_base, $m0, V_SPLIT              // first row
    ld32 $m2, $mvertex_base, $m0, V_SPLIT + 1          // first group in the row
    brz $m3, .Lexit
    mul $m1, $m1, $m4                                  // row * cols
    shl $m0, $m2, 2
    add $m1, $m1, $m0
    shl $m1, $m1, 1                                    // byte offset of the first element
    ld32 $m6, $mvertex_base, $mzero, V_A
    ld32 $m5, $mvertex_base, $mzero, V_B
    ld32 $m7, $mvertex_base, $mzero, V_OUT
    ld32 $m8, $mvertex_base, $mzero, V_BIAS
    add $m6, $m6, $m1
    add $m5, $m5, $m1
    add $m7, $m7, $m1
    shl $m9, $m2, 3
    add $m9, $m8, $m9                                  // bias of the first column
    shr $m4, $m4, 2                                    // groups per row
    sub $m10, $m4, $m2                                 // groups left in the first row
    ld32 $m11, $mvertex_base, $mzero, V_DISTINCT

.Lsegment:
    min $m10, $m10, $m3
    sub $m3, $m3, $m10
    brz $m11, .Lgeneral
    cmpeq $m2, $m10, 4                                 // a whole row of one AMP block?
    cmpeq $m0, $m4, 4
    and $m2, $m2, $m0
    brnz $m2, .Lnarrow
    cmpult $m2, $m10, 2
    brnz $m2, .Lgeneral

    // Fast segment (n >= 2): a and b loaded and out stored by one pace bundle, the bias by the
    // next; the sums two groups behind the loads, the stores two behind the sums.
    tapack $m0:1, $m6, $m5, $m7
    add $m2, $m10, -2
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; fnop }                          // A0 B0
    { ld64step $a8:9, $mzero, $m9+=, 1 ; fnop }                                      // C0
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }  // A1 B1; T0
    { ld64step $a8:9, $mzero, $m9+=, 1 ; f16v4add $a6:7, $a4:5, $a8:9 }             // C1; O0
    .align 8
    { rpt $m2, 1 ; fnop }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { ld64step $a8:9, $mzero, $m9+=, 1 ; f16v4add $a6:7, $a4:5, $a8:9 }
    { st64pace $a6:7, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }           // O(n-2); T(n-1)
    { nop ; f16v4add $a6:7, $a4:5, $a8:9 }                                           // O(n-1)
    { st64pace $a6:7, $m0:1+=, $mzero, 0 ; fnop }
    shl $m2, $m10, 3                                   // bytes of the segment
    add $m6, $m6, $m2
    add $m5, $m5, $m2
    add $m7, $m7, $m2
    bri .Lnext

.Lgeneral:
    // General segment: one memory access per bundle; the store lags one group.
    add $m2, $m10, -1
    { ld64step $a0:1, $mzero, $m6+=, 1 ; fnop }                            // A0
    { ld64step $a2:3, $mzero, $m5+=, 1 ; fnop }                            // B0
    { ld64step $a8:9, $mzero, $m9+=, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }    // C0; T0
    .align 8
    { rpt $m2, 3 ; fnop }
    { ld64step $a0:1, $mzero, $m6+=, 1 ; f16v4add $a6:7, $a4:5, $a8:9 }    // A(j); O(j-1)
    { ld64step $a2:3, $mzero, $m5+=, 1 ; fnop }                            // B(j)
    { ld64step $a8:9, $mzero, $m9+=, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }    // C(j); T(j)
    { st64step $a6:7, $mzero, $m7+=, 1 ; fnop }                            // O(j-1)
    { nop ; f16v4add $a6:7, $a4:5, $a8:9 }                                  // O(n-1)
    { st64step $a6:7, $mzero, $m7+=, 1 ; fnop }

.Lnext:
    mov $m9, $m8                                       // the next row starts at column 0
    mov $m10, $m4
    brnz $m3, .Lsegment
.Lexit:
    exitz $mzero

.Lnarrow:
    // Whole rows of 16 halves (one AMP output block; distinct = 1): this row and every whole
    // row after it as one pace stream, the row's bias in $a6:7, $a8:9, $a10:11, $a12:13, two
    // bundles a group: {ld2xst64pace A(k), B(k), store O(k-2) ; T(k-1)} {O(k-1) = T(k-1) +
    // C((k-1) % 4)}, the first two groups and the last two stores peeled.
    shr $m2, $m3, 2                                    // whole rows after this one
    and $m3, $m3, 3                                    // then the start of the last row
    ld64 $a6:7, $m8, $mzero, 0
    ld64 $a8:9, $m8, $mzero, 1
    ld64 $a10:11, $m8, $mzero, 2
    ld64 $a12:13, $m8, $mzero, 3
    tapack $m0:1, $m6, $m5, $m7
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; fnop }                          // A0 B0
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }  // A1 B1; T0
    { nop ; f16v4add $a4:5, $a4:5, $a6:7 }                                           // O0
    .align 8
    { rpt $m2, 7 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a8:9 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a10:11 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a12:13 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a6:7 }
    // The last row's groups 2 and 3, then the last two stores.
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a8:9 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a10:11 }
    { st64pace $a4:5, $m0:1+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { nop ; f16v4add $a4:5, $a4:5, $a12:13 }
    { st64pace $a4:5, $m0:1+=, $mzero, 0 ; fnop }
    add $m2, $m2, 1
    shl $m2, $m2, 5                                    // bytes of the rows
    add $m6, $m6, $m2
    add $m5, $m5, $m2
    add $m7, $m7, $m2
    bri .Lnext
    .size add_bias_f16, . - add_bias_f16
