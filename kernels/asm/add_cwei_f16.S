// add_cwei_f16: out = a + b for f16 blocks of `rows` x 16 (row-major, 32 bytes a row), the sum
// written in AMP weight order ($CWEI, kernels/src/layout.rs) over [k = rows, n = 16]: the sum of
// two partial products of a K-split product, laid out as the weights of a product that reads
// the rows as its K (an attention's values: keys as K, the head's columns as channels), so no
// relayout follows it.
//   out[(r / 16) * 256 + c * 16 + r % 16] = a[r][c] + b[r][c]     (halves)
// One f16 addition per element, rounded to nearest even (f16v4add; NaN results are the
// canonical 0x7e00): bit for bit residual_add_f16 on the same elements.
//
// Worker kernel (all six workers share the vertex; each takes its own entry of the split).
// Vertex state (32-bit words at $mvertex_base):
//   0: a      address of rows * 16 halves (8-byte aligned)
//   1: b      address of rows * 16 halves (8-byte aligned)
//   2: out    address of rows * 16 halves (8-byte aligned); neither a nor b
//   3: rows   a multiple of 16 (informational; the split defines the work)
//   4 + 2w: first group of 4 rows of worker w,  5 + 2w: its number of groups
// Memory: any region (one memory access per bundle).
//
// Algorithm: a group g of 4 rows is four 4 x 4 blocks (columns 4q .. 4q + 3, q < 4). A block's
// rows are loaded (a into $a0:1, $a2:3, $a4:5, $a6:7; b beside them) and added; its column c
// (rows 0 .. 3 of the group) is one quad of the output, assembled by sort4x16lo/hi from the
// rows' words as transpose4x4_f16 does, and stored at out + (g / 4) * 512 + (4q + c) * 32 +
// (g % 4) * 8. All offsets within a group are immediates: the a and b rows at
// g * 128 + i * 32 + q * 8, the output quads at (g / 4) * 512 + (g % 4) * 8 + q * 128 + c * 32.
// The blocks of a group are software-pipelined: a block's first loads run beside the previous
// block's last sorts and stores, as soon as the registers they fill are free, so a block costs
// 15 bundles (12 adds and sorts in the aux slots, 8 loads and 4 stores in the main ones).
// Per group: 3 bundles of prologue, 10 + 3 * 15 for the blocks, 6 of epilogue (the last
// block's sorts and stores, the next group's offsets beside them), 5 of offsets and loop;
// 16 bundles of set-up, 1 to exit.
// Registers: $m0 a, $m1 b, $m2 out, $m3 g, $m4 groups left - 1, $m5 a/b offset, $m6 output
// offset, $m7 and $m8 temps. ARF: $a0..$a7 the block's rows (sums), $a8..$a13 b's rows, then
// the quads ($a8:9, $a10:11, $a12:13, $a2:3).

#define V_A      0
#define V_B      1
#define V_OUT    2
#define V_SPLIT  4

// The steps of the block of columns 4Q .. 4Q + 3 of the group at $m5 (a, b) and $m6 (out).
// block_head Q: the first loads (B0, B1, A0) of the group's first block.
.macro block_head q
    { ld64 $a8:9, $m1, $m5, 0 + \q ; fnop }
    { ld64 $a10:11, $m1, $m5, 4 + \q ; fnop }
    { ld64 $a0:1, $m0, $m5, 0 + \q ; fnop }
.endm

// block_body Q: from the first add to the first store (10 bundles); S3 of the block before
// (its quad 3, $a2:3, at output immediate P) rides in the first bundle when PREV is 1.
.macro block_body q, prev, p
    .if \prev
    { st64 $a2:3, $m2, $m6, \p ; f16v4add $a0:1, $a0:1, $a8:9 }
    .else
    { nop ; f16v4add $a0:1, $a0:1, $a8:9 }
    .endif
    { ld64 $a2:3, $m0, $m5, 4 + \q ; fnop }
    { ld64 $a12:13, $m1, $m5, 8 + \q ; f16v4add $a2:3, $a2:3, $a10:11 }
    { ld64 $a4:5, $m0, $m5, 8 + \q ; fnop }
    { ld64 $a6:7, $m0, $m5, 12 + \q ; f16v4add $a4:5, $a4:5, $a12:13 }
    { ld64 $a8:9, $m1, $m5, 12 + \q ; fnop }
    { nop ; f16v4add $a6:7, $a6:7, $a8:9 }
    { nop ; sort4x16lo $a8, $a0, $a2 }
    { nop ; sort4x16lo $a9, $a4, $a6 }
    { st64 $a8:9, $m2, $m6, 16 * \q + 0 ; sort4x16hi $a10, $a0, $a2 }
.endm

// block_turn Q, N: block Q's last sorts and stores S1, S2 beside block N's first loads (5
// bundles; S3 of block Q goes with block N's first add).
.macro block_turn q, n
    { ld64 $a8:9, $m1, $m5, 0 + \n ; sort4x16hi $a11, $a4, $a6 }
    { st64 $a10:11, $m2, $m6, 16 * \q + 4 ; sort4x16lo $a12, $a1, $a3 }
    { ld64 $a10:11, $m1, $m5, 4 + \n ; sort4x16lo $a13, $a5, $a7 }
    { st64 $a12:13, $m2, $m6, 16 * \q + 8 ; sort4x16hi $a2, $a1, $a3 }
    { ld64 $a0:1, $m0, $m5, 0 + \n ; sort4x16hi $a3, $a5, $a7 }
.endm

    .section .text.add_cwei_f16
    .globl add_cwei_f16
    .type add_cwei_f16, @function
    .worker
    .align 8
add_cwei_f16:
    { get $m7, $WSR ; fnop }
    { and $m7, $m7, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m7, $m7, 3 ; fnop }
    { ld32 $m4, $mvertex_base, $m7, V_SPLIT + 1 ; fnop }   // groups of this worker
    { ld32 $m3, $mvertex_base, $m7, V_SPLIT ; fnop }       // its first group
    { brz $m4, .Lexit ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_A ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_B ; fnop }
    { ld32 $m2, $mvertex_base, $mzero, V_OUT ; fnop }
    { add $m4, $m4, -1 ; fnop }
    { shl $m5, $m3, 7 ; fnop }                             // g * 128
    { shr $m6, $m3, 2 ; fnop }
    { shl $m6, $m6, 9 ; fnop }                             // (g / 4) * 512
    { and $m7, $m3, 3 ; fnop }
    { shl $m7, $m7, 3 ; fnop }
    { add $m6, $m6, $m7 ; fnop }                           // + (g % 4) * 8
.Lgroup:
    block_head 0
    block_body 0, 0, 0
    block_turn 0, 1
    block_body 1, 1, 12
    block_turn 1, 2
    block_body 2, 1, 28
    block_turn 2, 3
    block_body 3, 1, 44
    // Block 3's last sorts and stores; the next group's a/b offset and (g + 1) / 4 beside them.
    { add $m3, $m3, 1 ; sort4x16hi $a11, $a4, $a6 }
    { st64 $a10:11, $m2, $m6, 16 * 3 + 4 ; sort4x16lo $a12, $a1, $a3 }
    { shl $m5, $m3, 7 ; sort4x16lo $a13, $a5, $a7 }
    { st64 $a12:13, $m2, $m6, 16 * 3 + 8 ; sort4x16hi $a2, $a1, $a3 }
    { shr $m8, $m3, 2 ; sort4x16hi $a3, $a5, $a7 }
    { st64 $a2:3, $m2, $m6, 16 * 3 + 12 ; fnop }
    { shl $m8, $m8, 9 ; fnop }
    { and $m7, $m3, 3 ; fnop }
    { shl $m7, $m7, 3 ; fnop }
    { add $m6, $m8, $m7 ; fnop }
    { brnzdec $m4, .Lgroup ; fnop }
.Lexit:
    exitz $mzero
    .size add_cwei_f16, . - add_cwei_f16
