// sum_parts_f16: the C parts of every row summed, column by column. Row r holds C blocks of
// 4 * groups halves, `part_stride` halves apart; its output is
//   out[r][d] = f16(((0 + p_0[d]) + p_1[d]) + ... + p_{C-1}[d])
// with every sum in f32 (f16v4acc widens each half exactly and rounds each addition to f32,
// RNE) and one rounding to f16 at the end (f16v4gacc, RNE). With a bias (word 6 not 0) the
// product's bias add follows in the same pass: out[r][d] = f16(that sum) + bias[d], one f16
// addition (f16v4add, RNE, canonical NaN), bit for bit bias_add_f16 after the plain sum. It
// sums the K-chunks of a product split along K (the chunks' partial products), where a product
// of a row of ones would need the chunks in the AMP's weight order.
//
// Layout: `parts` rows `row_stride` halves apart, the C blocks of a row `part_stride` halves
// apart; `out` rows of 4 * groups halves, dense.
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: parts       8-byte aligned
//   1: out         8-byte aligned
//   2: C           blocks per row (>= 1)
//   3: groups      groups of 4 columns per row (>= 1)
//   4: part_stride halves from one block to the next (% 4 == 0)
//   5: row_stride  halves from one row to the next (% 4 == 0)
//   6: bias        0, or 4 * groups halves (8-byte aligned), one per output column
//   7 + 3w: worker w's first row, 8 + 3w: its first group in that row, 9 + 3w: its groups
// Items are the (row, group) pairs in order; each worker sums a run of them (the constructor
// computes where each run starts, so the kernel needs no division).
// Memory: any region (one memory access per bundle).
//
// Per item: 3 bundles to set up, C - 1 in the load-and-add loop, 3 to finish and store (4 with
// the bias), 5 to step to the next group (3 more at a row's end, 4 with the bias). Set-up 31
// bundles (33 with the bias); the exit (7 for a worker without items).
// Registers: $m0 the block pointer, $m1 out, $m2 groups left in the row, $m3 the item's first
// block, $m4 8-byte steps between blocks, $m5 the step from a row's last group to the next
// row's first, $m6 the bias of the item's group, $m7 items left, $m8 C - 1, $m9 to $m11
// temporaries. ARF: $a0:1 a block's group, $a2:3 the sums, $a4:5 the bias group.

#define V_PARTS       0
#define V_OUT         1
#define V_C           2
#define V_GROUPS      3
#define V_PART_STRIDE 4
#define V_ROW         5
#define V_BIAS        6
#define V_SPLIT       7

    .section .text.sum_parts_f16
    .globl sum_parts_f16
    .type sum_parts_f16, @function
    .worker
    .align 8
sum_parts_f16:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    shl $m2, $m11, 2
    shl $m11, $m11, 3
    add $m2, $m2, $m11                                // 12 bytes of split per worker
    ld32 $m7, $mvertex_base, $m2, V_SPLIT + 2         // items
    ld32 $m3, $mvertex_base, $m2, V_SPLIT             // first row
    ld32 $m9, $mvertex_base, $m2, V_SPLIT + 1         // first group
    {
        brz $m7, .Ls_exit
        uput $TAS, $azero
    }
    // out + (row * groups + group) * 8, and the groups left in the first row.
    ld32 $m10, $mvertex_base, $mzero, V_GROUPS
    mul $m1, $m3, $m10
    add $m1, $m1, $m9
    shl $m1, $m1, 3
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m1, $m1, $m11
    sub $m2, $m10, $m9
    // parts + row * row_stride * 2 + group * 8; a row's end steps row_stride * 2 - groups * 8.
    shl $m5, $m10, 3
    ld32 $m11, $mvertex_base, $mzero, V_ROW
    mul $m3, $m3, $m11
    shl $m3, $m3, 1
    shl $m11, $m11, 1
    sub $m5, $m11, $m5
    shl $m9, $m9, 3
    add $m3, $m3, $m9
    ld32 $m11, $mvertex_base, $mzero, V_PARTS
    add $m3, $m3, $m11
    ld32 $m4, $mvertex_base, $mzero, V_PART_STRIDE
    shr $m4, $m4, 2                                   // 8-byte steps between blocks
    ld32 $m8, $mvertex_base, $mzero, V_C
    add $m8, $m8, -1
    ld32 $m6, $mvertex_base, $mzero, V_BIAS
    add $m11, $m6, $m9                                // the bias of the first group
    brnz $m6, .Lb_item_first

    .align 8
.Ls_item:
    {
        mov $m0, $m3
        f16v4mix $a2:3, $azeros, $azeros              // AACC = 0 ($TAS = 0)
    }
    { ld64step $a0:1, $mzero, $m0+=, $m4 ; fnop }    // block 0
    { rpt $m8, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, $m4 ; f16v4acc $a0:1 }
    { nop ; f16v4acc $a0:1 }                          // block C - 1
    { nop ; f16v4gacc $a2:3 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; fnop }
    // The next group, or the next row's first.
    add $m3, $m3, 8
    add $m2, $m2, -1
    brnz $m2, .Ls_next
    add $m3, $m3, $m5
    ld32 $m2, $mvertex_base, $mzero, V_GROUPS
.Ls_next:
    add $m7, $m7, -1
    brnz $m7, .Ls_item
.Ls_exit:
    exitz $mzero

    // With the bias: the same items, the bias group loaded beside the last block and added to
    // the rounded sum; the bias pointer restarts at the next row's first column.
.Lb_item_first:
    mov $m6, $m11
    .align 8
.Lb_item:
    {
        mov $m0, $m3
        f16v4mix $a2:3, $azeros, $azeros              // AACC = 0 ($TAS = 0)
    }
    { ld64step $a0:1, $mzero, $m0+=, $m4 ; fnop }    // block 0
    { rpt $m8, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, $m4 ; f16v4acc $a0:1 }
    { ld64step $a4:5, $mzero, $m6+=, 1 ; f16v4acc $a0:1 }  // the bias; block C - 1
    { nop ; f16v4gacc $a2:3 }
    { nop ; f16v4add $a2:3, $a2:3, $a4:5 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; fnop }
    add $m3, $m3, 8
    add $m2, $m2, -1
    brnz $m2, .Lb_next
    add $m3, $m3, $m5
    ld32 $m2, $mvertex_base, $mzero, V_GROUPS
    ld32 $m6, $mvertex_base, $mzero, V_BIAS
.Lb_next:
    add $m7, $m7, -1
    brnz $m7, .Lb_item
    exitz $mzero
    .size sum_parts_f16, . - sum_parts_f16
