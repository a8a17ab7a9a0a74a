// softmax_part_f16: the key-block half of an attention softmax split along its keys. For every
// row r of an f16 block of scores (one block of keys), the block's own maximum m, the
// exponentials e_c = exp(s x[r][c] - m) and their sum l, written as one row of nb = ceil(cols/16)
// blocks of 16 halves and a statistics group
//   out[r] = (e_0, e_1, ..., e_{cols-1}, 0 padding to 16 nb, m16, l16, 0, 0)
// so that the products with the values read the exponentials (columns 0 .. 16 nb, whole AMP
// K-blocks) and the combine of the key blocks (attention_combine_f16) reads (m16, l16) (columns
// 16 nb, 16 nb + 1).
//
// Where the row goes: group i of 4 halves (i < 4 nb) at out + r RS + (i / 4) P + (i % 4) 8, the
// statistics group at out + r RS + nb P. Row-major rows: RS = 2 (16 nb + 4) bytes, P = 32. AMP
// panels (kernels/src/layout.rs, m_padded = the rows; s == 1 only): RS = 32, P = 32 rows, and the
// statistics block is written whole (the group, then 24 bytes of zeros).
//
// Numerics (f32 round-to-nearest-even through tessera_isa::numerics; the Rust reference in
// kernels/src/elementwise/softmax_part.rs repeats every step; they are softmax_seg_f16's pass 1
// with one segment):
//   m16 = f16(f32(s) * f32(max x))          f16 max (exact; -inf pads the last group), f32mul
//   t   = f16((f32(s16) * f32(x)) + (1.0 * f32(0 - m16)))   f16v4mix, $TAS = (s16, 1.0)
//   e   = f16v2exp(t)                        (exp in f64 rounded once to f16)
//   l   = E + O: E the f32 sum of the even columns' e in order, O of the odd ones
//   l16 = f16(l)
// At s == 1 (the scale folded into the queries) t = f16(x - m16) and
// l = ((S0 + S2) + (S4 + S6)) + ((S1 + S3) + (S5 + S7)), S_k the f32 sum in column order of the
// columns accumulator AACC[2k] takes: in the fast path's whole blocks of four regular groups
// (the first 16 floor((g - 1) / 4) columns, g = the row's groups of 4), those with c % 8 == k
// (one f16v8acc a pair of groups, one accumulator a half); past them, those with c % 4 == k (one
// f16v4acc a group; S4..S7 get none there). See the unit loops below.
// Specials: a NaN or +inf in a row makes its e NaN as softmax_f16 does; a row of -inf only has
// m = -inf and e = NaN (attention scores are finite).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in         8-byte aligned
//   1: out        8-byte aligned (see above)
//   2: cols       row length (>= 1)
//   3: in_stride  halves from one `in` row to the next (% 4 == 0, >= cols)
//   4: s          the scale, f32 bits (finite, > 0)
//   5: RS         bytes from one output row to the next (% 8 == 0; 32: panels)
//   6: P          bytes from one output block of 16 halves to the next (% 8 == 0)
//   7 + 2w: first row of worker w, 8 + 2w: its number of rows
// Worker w uses 16 bytes of its scratch at $mworker_base: the masked last group, a junk slot.
// Memory: any region (one memory access per bundle).
//
// Per row, with g = ceil(cols / 4) groups: the last group masked to worker scratch (lanes >=
// cols become -inf), the maximum (one bundle per group), the exponentials, the zero groups up to
// the block's end and the (m16, l16) group.
// Registers: $m0 in, $m1 out, $m2 counts, $m3 in row, $m4 P, $m5 out row, $m6 the path (0: s !=
// 1, 1: s == 1 in rows, 2: s == 1 in panels), $m7 rows
// left, $m8 groups, $m9 cols % 4, $m10 link, $m11 temp. ARF: $a0:3 values, $a4:5 (-m16, -m16),
// $a6:7 sums, $a10:13 (the exp loop), $a8 m16.

// zero_groups DONE: stores $m2 zero groups of 4 halves at $m1 (post-incremented; the rest of a
// row's last block of 16), one bundle a group, then goes on at DONE (which follows it).
.macro zero_groups done
    .align 8
    { brz $m2, \done ; fnop }
    { rpt $m2, 0 ; fnop }
    { st64step $azeros, $mzero, $m1+=, 1 ; fnop }
.endm

// unit_blocks COUNT: the fast path's whole blocks of four regular groups, `rpt COUNT` of 14
// bundles (see 2'' below). The groups go in pairs: each group's x is loaded into $a6:7, the
// pair's e land in $a0:1 and $a2:3 and are summed by one f16v8acc at the next pair's start
// (AACC[0], [2], ..., [14] take the pair's columns 0 .. 7, one each); every e is
// stored as soon as it is complete except the block's last, stored at the next block's start
// through $m2 (the junk slot of worker scratch before the first block); $m1, the block's base,
// then moves on by P.
.macro unit_blocks count
    { rpt \count, 13 ; fnop }
    { ld64step $a6:7, $mzero, $m0+=, 1 ; f16v8acc $a0:3 }
    { st64 $a2:3, $m2, $mzero, 0 ; f16v4sub $a0:1, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m0+=, 1 ; f16v2exp $a0, $a0 }
    { add $m2, $m1, 24 ; f16v2exp $a1, $a1 }
    { st64 $a0:1, $m1, $mzero, 0 ; f16v4sub $a2:3, $a6:7, $a4:5 }
    { nop ; f16v2exp $a2, $a2 }
    { nop ; f16v2exp $a3, $a3 }
    { ld64step $a6:7, $mzero, $m0+=, 1 ; f16v8acc $a0:3 }
    { st64 $a2:3, $m1, $mzero, 1 ; f16v4sub $a0:1, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m0+=, 1 ; f16v2exp $a0, $a0 }
    { nop ; f16v2exp $a1, $a1 }
    { st64 $a0:1, $m1, $mzero, 2 ; f16v4sub $a2:3, $a6:7, $a4:5 }
    { add $m1, $m1, $m4 ; f16v2exp $a2, $a2 }
    { nop ; f16v2exp $a3, $a3 }
.endm

#define V_IN      0
#define V_OUT     1
#define V_COLS    2
#define V_STRIDE  3
#define V_S       4
#define V_RS      5
#define V_P       6
#define V_SPLIT   7

    .section .data.softmax_part_masks
    .align 8
softmax_part_masks:                                   // by cols % 4: keep (2 words), -inf (2)
    .int 0xffffffff, 0xffffffff, 0x00000000, 0x00000000
    .int 0x0000ffff, 0x00000000, 0xfc000000, 0xfc00fc00
    .int 0xffffffff, 0x00000000, 0x00000000, 0xfc00fc00
    .int 0xffffffff, 0x0000ffff, 0x00000000, 0xfc000000
softmax_part_zeros:                                   // the pairs' registers before a row
    .int 0x00000000, 0x00000000

    .section .text.softmax_part_f16
    .globl softmax_part_f16
    .type softmax_part_f16, @function
    .worker
    .align 8
softmax_part_f16:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    shl $m2, $m11, 3
    ld32 $m7, $mvertex_base, $m2, V_SPLIT + 1         // rows
    ld32 $m3, $mvertex_base, $m2, V_SPLIT             // first row
    ld32 $m6, $mvertex_base, $mzero, V_S
    setzi $m4, 0x3f800
    shl $m4, $m4, 12                                  // 1.0 as f32
    cmpeq $m6, $m6, $m4                               // s == 1: the unit loop
    ld32 $m11, $mvertex_base, $mzero, V_RS
    cmpeq $m11, $m11, 32
    mul $m11, $m11, $m6
    add $m6, $m6, $m11                                // 0: s != 1, 1: unit rows, 2: unit panels
    ld32 $a0, $mvertex_base, $mzero, V_S
    setzi $a1, 0x3c00                                 // 1.0
    f32tof16 $a0, $a0                                 // (s16, s16)
    { nop ; sort4x16lo $a0, $a0, $a1 }                // (s16, 1.0)
    {
        brz $m7, .Lp_exit
        uput $TAS, $a0
    }
    ld32 $m8, $mvertex_base, $mzero, V_COLS
    and $m9, $m8, 3                                   // cols % 4
    add $m8, $m8, 3
    shr $m8, $m8, 2                                   // groups per row
    ld32 $m4, $mvertex_base, $mzero, V_P
    // Row pointers: out + row * RS bytes, in + row * in_stride * 2.
    ld32 $m5, $mvertex_base, $mzero, V_RS
    mul $m5, $m5, $m3
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m5, $m5, $m11
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    mul $m3, $m3, $m11
    shl $m3, $m3, 1
    ld32 $m11, $mvertex_base, $mzero, V_IN
    add $m3, $m3, $m11

    // The fast unit path (s == 1 and g >= 4): the last group masked in registers, the counts
    // of the row's parts set up once (see .Lf_row).
    brz $m6, .Lp_row
    cmpult $m11, $m8, 4
    brnz $m11, .Lp_row
    setzi $m11, softmax_part_masks
    shl $m2, $m9, 4
    add $m11, $m11, $m2
    ld64 $a10:11, $m11, $mzero, 0                     // keep: 0xffff on lanes < cols % 4
    ld64 $a12:13, $m11, $mzero, 1                     // -inf on the others
    add $m9, $m8, -1                                  // g - 1 regular groups
    and $m2, $m9, 3
    st32 $m2, $mworker_base, $mzero, 0                // those of the last block
    sub $m2, $mzero, $m8
    and $m2, $m2, 3
    st32 $m2, $mworker_base, $mzero, 1                // zero groups to the block's end
    add $m10, $m8, -3                                 // the max loop's count
    shr $m8, $m9, 2                                   // whole blocks of four regular groups
    shl $m9, $m9, 3                                   // the last group's offset in a row
    bri .Lf_row

    .align 8
.Lp_row:
    // The last group, masked: lanes >= cols become -inf, copied to worker scratch words 0, 1.
    add $m2, $m8, -1
    shl $m11, $m2, 3
    { ld64 $a0:1, $m3, $m11, 0 ; fnop }
    {
        setzi $m11, 0
        setzi $a4, 0xfc00
    }
    { brz $m9, .Lp_masked ; sort4x16lo $a4, $a4, $a4 }  // $a4 = (-inf, -inf)
    cmpeq $m11, $m9, 2
    brnz $m11, .Lp_mask2
    cmpeq $m11, $m9, 1
    brnz $m11, .Lp_mask1
    { bri .Lp_masked ; sort4x16lo $a1, $a1, $a4 }    // 3 columns: lane 3 masked
.Lp_mask1:
    { nop ; sort4x16lo $a0, $a0, $a4 }                // 1 column: lanes 1..3 masked
.Lp_mask2:
    { nop ; mov $a1, $a4 }                            // 2 columns: lanes 2, 3 masked
.Lp_masked:
    { st64 $a0:1, $mworker_base, $mzero, 0 ; mov $a3, $a4 }

    // 1. The row maximum (f16, exact), m16 = f16(s * max).
    { mov $m0, $m3 ; mov $a2, $a4 }                  // max accumulator = -inf
    brz $m2, .Lp_max_last
    add $m11, $m2, -1
    { ld64step $a0:1, $mzero, $m0+=, 1 ; fnop }
    { rpt $m11, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
    { nop ; f16v4max $a2:3, $a2:3, $a0:1 }
.Lp_max_last:
    { ld64 $a0:1, $mworker_base, $mzero, 0 ; fnop }
    { nop ; f16v4max $a2:3, $a2:3, $a0:1 }
    { nop ; f16v2max $a2, $a2, $a3 }
    {
        ld32 $a1, $mvertex_base, $mzero, V_S
        swap16 $a3, $a2
    }
    { nop ; f16v2max $a2, $a2, $a3 }
    { nop ; f16tof32 $a2, $a2 }
    { nop ; f32mul $a2, $a1, $a2 }                    // s * max
    { nop ; f32tof16 $a8, $a2 }                      // m16 in both halves
    { nop ; f16v2sub $a4, $azero, $a8 }              // (-m16, -m16)
    { brnz $m6, .Lp_unit ; mov $a5, $a4 }

    // 2. e = exp(s x - m16) from the row's start (row-major rows: the blocks are contiguous),
    // the sums in $a6:7.
    {
        mov $m1, $m5
        sort4x32lo $a6:7, $azeros, $azeros
    }
    mov $m0, $m3
    call $m10, softmax_seg_exp_groups                 // the g - 1 regular groups
    mov $m0, $mworker_base
    setzi $m2, 1
    { call $m10, softmax_seg_exp_groups ; fnop }      // the masked last group
    { sub $m2, $mzero, $m8 ; f32add $a6, $a6, $a7 }   // l = E + O
    and $m2, $m2, 3                                   // zero groups to the block's end
    zero_groups .Lp_sum
    // $m1: the statistics group.
.Lp_sum:
    { nop ; f32tof16 $a6, $a6 }                       // l16 in both halves
    { nop ; sort4x16lo $a0, $a8, $a6 }               // (m16, l16)
    { ld32 $m11, $mvertex_base, $mzero, V_RS ; mov $a1, $azero }
    { st64 $a0:1, $m1, $mzero, 0 ; fnop }
    add $m5, $m5, $m11
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    shl $m11, $m11, 1
    add $m3, $m3, $m11
    add $m7, $m7, -1
    brnz $m7, .Lp_row
.Lp_exit:
    exitz $mzero

    // Panels: the rest of the statistics block is zero.
.Lp_sum_panels:
    { st64 $azeros, $m1, $mzero, 1 ; fnop }
    { st64 $azeros, $m1, $mzero, 2 ; fnop }
    { st64 $azeros, $m1, $mzero, 3 ; fnop }
    { bri .Lp_sum ; fnop }

    // 2'. s == 1 (the scale folded into the queries) with g < 4 groups (no whole block of four
    // regular groups; g >= 4 takes the fast path): t = f16(x - m16) (`f16v4sub`), e =
    // f16v2exp(t), the e summed in the accumulators, column c into AACC[2 (c % 4)] (f32, in
    // column order), l = (S0 + S2) + (S1 + S3). The regular groups, the masked group and the
    // zero groups follow one group at a time.
    .align 8
.Lp_unit:
    { mov $m1, $m5 ; mov $a4, $a8 }
    { mov $m0, $m3 ; mov $a5, $a8 }                  // (m16, m16, m16, m16)
    { add $m2, $mworker_base, 8 ; sort4x32lo $a2:3, $azeros, $azeros }  // junk slot, e = 0
    { add $m11, $m8, -1 ; setzi $a6, 8 }
    { shr $m11, $m11, 2 ; uput $FP_CLR, $a6 }        // accumulators = 0; whole blocks: none
    { brz $m11, .Lu_tail ; fnop }
.Lu_tail:
    { add $m11, $m8, -1 ; f16v4acc $a2:3 }           // e = 0 (no block before)
    { st64 $a2:3, $m2, $mzero, 0 ; fnop }
    and $m2, $m11, 3                                  // regular groups of the last block
    brz $m2, .Lu_masked
.Lu_rest:
    { ld64step $a0:1, $mzero, $m0+=, 1 ; fnop }
    { nop ; f16v4sub $a2:3, $a0:1, $a4:5 }
    { nop ; f16v2exp $a2, $a2 }
    { add $m2, $m2, -1 ; f16v2exp $a3, $a3 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; f16v4acc $a2:3 }
    brnz $m2, .Lu_rest
.Lu_masked:
    { ld64 $a0:1, $mworker_base, $mzero, 0 ; fnop }  // the masked last group
    { nop ; f16v4sub $a2:3, $a0:1, $a4:5 }
    { nop ; f16v2exp $a2, $a2 }
    { sub $m2, $mzero, $m8 ; f16v2exp $a3, $a3 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; f16v4acc $a2:3 }
    and $m2, $m2, 3                                   // zero groups to the block's end
    zero_groups .Lu_sums
.Lu_sums:
    { add $m1, $m1, $m4 ; f32v2gina $a6:7, $azeros, 0 }  // (S0, S1)
    { add $m1, $m1, -32 ; f32v2gina $a2:3, $azeros, 0 }  // (S2, S3); $m1: the statistics
    { cmpeq $m11, $m6, 2 ; f32v2add $a6:7, $a6:7, $a2:3 }
    { brnz $m11, .Lp_sum_panels ; f32add $a6, $a6, $a7 }  // l = (S0 + S2) + (S1 + S3)
    { bri .Lp_sum ; fnop }

    // 2''. The fast unit path, per row: the last group masked in registers ($a8:9, lanes >=
    // cols made -inf by and/or with the set-up's masks) is the maximum's first operand, and
    // the exponentials' last group; m16 = max (s = 1) without the f32 round trip; the whole
    // blocks of four regular groups in pairs of groups (`unit_blocks`); the counts
    // of the row's parts from worker scratch (word 0: the last block's regular groups, word
    // 1: its zero groups); the next row's pointers beside the sums. Same values, bit for bit,
    // as the paths above. Registers: $m8 whole blocks, $m9 the last group's offset, $m10 g - 3,
    // $m0 the panels flag once the row's input is read; $a8:9 the masked last group, $a10:13
    // the masks.
    .align 8
.Lf_row:
    { ld64 $a8:9, $m3, $m9, 0 ; setzi $a6, 8 }       // the last group; $FP_CLR's ZAACC
    { mov $m0, $m3 ; and64 $a8:9, $a8:9, $a10:11 }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; or64 $a8:9, $a8:9, $a12:13 }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4max $a2:3, $a8:9, $a0:1 }
    { rpt $m10, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
    { setzi $m11, softmax_part_zeros ; f16v4max $a2:3, $a2:3, $a0:1 }
    { ld64 $a0:1, $m11, $mzero, 0 ; f16v2max $a2, $a2, $a3 }  // e = 0 for the first f16v8acc
    { mov $m1, $m5 ; swap16 $a3, $a2 }
    { mov $m0, $m3 ; f16v2max $a4, $a2, $a3 }         // (m16, m16)
    { ld64 $a2:3, $m11, $mzero, 0 ; mov $a5, $a4 }    // and the first junk store
    { add $m2, $mworker_base, 8 ; uput $FP_CLR, $a6 }  // junk slot
    { brz $m8, .Lf_tail ; fnop }
    unit_blocks $m8
.Lf_tail:
    { ld32 $m11, $mworker_base, $mzero, 0 ; f16v8acc $a0:3 }  // the last whole block's last pair
    { st64 $a2:3, $m2, $mzero, 0 ; fnop }
    { brz $m11, .Lf_masked ; fnop }
.Lf_rest:
    { ld64step $a0:1, $mzero, $m0+=, 1 ; fnop }
    { nop ; f16v4sub $a2:3, $a0:1, $a4:5 }
    { nop ; f16v2exp $a2, $a2 }
    { add $m11, $m11, -1 ; f16v2exp $a3, $a3 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; f16v4acc $a2:3 }
    { brnz $m11, .Lf_rest ; fnop }
.Lf_masked:
    { ld32 $m2, $mworker_base, $mzero, 1 ; f16v4sub $a2:3, $a8:9, $a4:5 }
    { cmpeq $m0, $m6, 2 ; f16v2exp $a2, $a2 }
    { add $m7, $m7, -1 ; f16v2exp $a3, $a3 }
    { st64step $a2:3, $mzero, $m1+=, 1 ; f16v4acc $a2:3 }
    zero_groups .Lf_sums
.Lf_sums:
    { add $m1, $m1, $m4 ; f32v2gina $a6:7, $azeros, 0 }  // (S0, S1)
    { add $m1, $m1, -32 ; f32v2gina $a2:3, $azeros, 0 }  // (S2, S3); $m1: the statistics
    { ld32 $m11, $mvertex_base, $mzero, V_RS ; f32v2gina $a0:1, $azeros, 0 }  // (S4, S5)
    { add $m5, $m5, $m11 ; f32v2gina $a8:9, $azeros, 0 }  // (S6, S7)
    { nop ; f32v2add $a6:7, $a6:7, $a2:3 }
    { nop ; f32v2add $a0:1, $a0:1, $a8:9 }
    { nop ; f32v2add $a6:7, $a6:7, $a0:1 }
    { nop ; f32add $a6, $a6, $a7 }     // l = ((S0 + S2) + (S4 + S6)) + ((S1 + S3) + (S5 + S7))
    { ld32 $m11, $mvertex_base, $mzero, V_STRIDE ; f32tof16 $a6, $a6 }
    { shl $m11, $m11, 1 ; sort4x16lo $a0, $a4, $a6 }  // (m16, l16)
    { add $m3, $m3, $m11 ; mov $a1, $azero }
    { st64 $a0:1, $m1, $mzero, 0 ; fnop }
    { brz $m0, .Lf_next ; fnop }
    { st64 $azeros, $m1, $mzero, 1 ; fnop }           // panels: the rest of the block is zero
    { st64 $azeros, $m1, $mzero, 2 ; fnop }
    { st64 $azeros, $m1, $mzero, 3 ; fnop }
.Lf_next:
    { brnz $m7, .Lf_row ; fnop }
    exitz $mzero
    .size softmax_part_f16, . - softmax_part_f16

