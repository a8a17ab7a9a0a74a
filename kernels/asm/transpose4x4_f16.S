// transpose4x4_f16: 4 x 4 blocks of f16 transposed, 8 bytes at a time (a block of values into
// `$CWEI` order, a row-major block into its transpose): what gather_elements does two elements
// per word, here 16 elements per 12 bundles.
//   for o < O, b < B, c < 4, i < 4:
//     half at dst + o*dst_stride + T[b].dst + c*col + 2i =
//     half at src + o*src_stride + T[b].src + i*row + 2c
// (destination quad c of a block is column c of its source block: row i's element c in lane i.)
//
// Worker kernel (all six workers share one vertex; worker w reads its record).
// Vertex state (32-bit words):
//   0: src         source base address (any region)
//   1: dst         destination base address (any region)
//   2: table       B entries (src offset, dst offset), then one more word (read ahead, any
//                  value), 4-byte aligned
//   3: B           blocks per outer iteration (>= 1)
//   4: O           outer iterations (>= 1, bits 0..23; the kernel reads it only through the
//                  split) and in bits 24..28 K: the width of b in a first item (B <= 2^K)
//   5: src_stride  bytes from outer iteration o to o + 1 in src
//   6: dst_stride  bytes from outer iteration o to o + 1 in dst
//   7: row / 8     bytes from one source row of a block to the next, over 8
//   8: col / 8     bytes from one destination quad of a block to the next, over 8
//   9 + 2w: first item of worker w as (o << K) | b     10 + 2w: its item count
// Items are the (o, b) pairs numbered o*B + b, split in order (kernels/src/split.rs); the
// constructor writes each worker's first one as its (o, b) pair, so the kernel divides nothing.
// Requirements: bases, strides, offsets, row and col multiples of 8; no two quads share a
// destination byte; src and dst do not overlap; O*B <= 2^20.
// Scratch: none. Memory: any region (one access per bundle).
//
// Set-up (29 bundles): (o, b) of the worker's first item unpacked with K (word 4), the bases
// of outer iteration o, the table pointer of entry b and its source offset.
// Loop: 12 bundles a block: four ld64step (the rows), eight sort4x16lo/hi in the aux slots
// (quad c = {lo or hi of rows 0 and 1, of rows 2 and 3}), four st64 (the quads), the block's
// destination offset and the next block's source offset read from the table on the way.
// A segment (the blocks of one outer iteration) costs 3 bundles more, 7 for each new outer
// iteration; 1 to exit.
// Registers: $m0 src_stride, $m1 items left after this segment, $m2 blocks in it, $m3 B,
// $m4 source offset (stepped by row), $m5 destination offset (stepped by col), $m6 row / 8,
// $m7 col / 8, $m8 dst_stride, $m9 src base of the outer iteration, $m10 dst base, $m11 table
// pointer. ARF: $a0..$a7 the rows, $a8..$a13 and $a4:5 the quads.

#define V_SRC      0
#define V_DST      1
#define V_TABLE    2
#define V_B        3
#define V_O        4
#define O_K_SHIFT  24
#define V_SSTRIDE  5
#define V_DSTRIDE  6
#define V_ROW      7
#define V_COL      8
#define V_SPLIT    9

    .section .text.transpose4x4_f16
    .globl transpose4x4_f16
    .type transpose4x4_f16, @function
    .worker
    .align 8
transpose4x4_f16:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m0, $m0, 3 ; fnop }
    { ld32 $m1, $mvertex_base, $m0, V_SPLIT + 1 ; fnop }   // items of this worker
    { ld32 $m2, $mvertex_base, $m0, V_SPLIT ; fnop }       // first item
    { brz $m1, .Lexit ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_B ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_O ; fnop }
    { ld32 $m9, $mvertex_base, $mzero, V_SRC ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_DST ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { shr $m4, $m4, O_K_SHIFT ; fnop }                     // K
    { shr $m5, $m2, $m4 ; fnop }                           // o
    { shl $m6, $m5, $m4 ; fnop }
    { sub $m6, $m2, $m6 ; fnop }                           // b
    { mul $m7, $m5, $m0 ; fnop }
    { add $m9, $m9, $m7 ; fnop }                           // src of outer iteration o
    { mul $m7, $m5, $m8 ; fnop }
    { add $m10, $m10, $m7 ; fnop }                         // dst of outer iteration o
    { shl $m5, $m6, 3 ; fnop }
    { add $m11, $m11, $m5 ; fnop }                         // entry b
    { sub $m2, $m3, $m6 ; fnop }                           // blocks left in outer iteration o
    { min $m2, $m2, $m1 ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_ROW ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_COL ; fnop }
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }             // the first block's src offset
    { bri .Lgo ; fnop }

.Lwrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
.Lgo:
    { sub $m1, $m1, $m2 ; fnop }
    { rpt $m2, 11 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 1 ; fnop }             // this block's dst offset
    { ld64step $a0:1, $m9, $m4+=, $m6 ; fnop }              // row 0
    { ld64step $a2:3, $m9, $m4+=, $m6 ; fnop }              // row 1
    { ld64step $a4:5, $m9, $m4+=, $m6 ; sort4x16lo $a8, $a0, $a2 }
    { ld64 $a6:7, $m9, $m4, 0 ; sort4x16lo $a12, $a1, $a3 }           // row 3
    { ld32step $m4, $mzero, $m11+=, 1 ; sort4x16lo $a9, $a4, $a6 }     // the next src offset
    { st64step $a8:9, $m10, $m5+=, $m7 ; sort4x16hi $a10, $a0, $a2 }  // quad 0
    { nop ; sort4x16hi $a11, $a4, $a6 }
    { st64step $a10:11, $m10, $m5+=, $m7 ; sort4x16lo $a13, $a5, $a7 } // quad 1
    { st64step $a12:13, $m10, $m5+=, $m7 ; sort4x16hi $a4, $a1, $a3 }  // quad 2
    { nop ; sort4x16hi $a5, $a5, $a7 }
    { st64 $a4:5, $m10, $m5, 0 ; fnop }                                // quad 3
    { brnz $m1, .Lwrap ; fnop }
    exitz $mzero
    .align 8

.Lexit:
    exitz $mzero
    .size transpose4x4_f16, . - transpose4x4_f16
