// softmax_seg_f16: the row softmax of softmax_f16.S with every row cut into `nseg` segments of
// whole groups of 4, so that six workers share rows evenly when a tile holds fewer rows than
// workers or a number that does not divide among them (attention: 8 rows of 729 keys per
// tile, the pooling head's one row per tile). Two worker passes:
//   1. per (row, segment): m_j = s * max of the segment's x (f16 max, exact) rounded to f16,
//      e = exp(s x - m_j) in f16 (`f16v4mix`, `f16v2exp`), stored to `out`, l_j = the f32 sum of
//      the e (even and odd columns apart, then added), and (m_j, l_j) to `stats`;
//   2. per (row, segment): M = max_j m_j, L = sum_j l_j * exp(m_j - M) in segment order,
//      f = f16(exp(m_seg - M) * (1 / L)), and the segment's out *= f (f16 multiply, RNE).
//
// Numerics (f32 round-to-nearest-even through tessera_isa::numerics; the Rust reference in
// kernels/src/elementwise/softmax_seg.rs repeats every step):
//   m16  = f16(f32(s) * f32(max x over the segment))  (f32mul; -inf lanes pad the last group);
//          m_j = f32(m16)
//   t    = f16((f32(s16) * f32(x)) + (1.0 * f32(0 - m16)))  (f16v4mix, $TAS = (s16, 1.0),
//          s16 = f16(s); each product and the sum rounded to f32, then to f16)
//   e16  = f16v2exp(t) (exp in f64 rounded once to f16); e = f32(e16)
//   l_j  = E + O, E = sum of the even columns' e in order, O of the odd ones (segment-local
//          column parity, from the segment's first column)
//   M    = max(...max(m_0, m_1)..., m_{S-1});  L = (((0 + l_0 g_0) + l_1 g_1) + ...),
//          g_j = f32exp(m_j - M)
//   f    = f16(f32exp(m_seg - M) * f32oox(L));  out = f16(e16 * f)
// Specials: a NaN or +inf in a row makes its segments NaN as softmax_f16 does; a segment whose
// entries are all -inf has m_j = -inf and e = NaN, which makes the row NaN (softmax_f16 gives
// the finite entries' softmax there): callers use it for attention scores, which are finite.
//
// Layout: `rows` rows of `cols` halves; `out` rows are 4 * ceil(cols / 4) halves (the padding
// columns are written: 0, or NaN for a NaN row); `in` rows `in_stride` halves apart (% 4 == 0,
// >= cols). Segment j of a row is groups j*G .. j*G + G of the row's ceil(cols / 4) groups of 4,
// the last segment the rest (at least one group).
//
// Supervisor entry `softmax_seg_f16` ($mvertex_base = the vertex; returns with `br $m10`).
// Vertex state (32-bit words):
//   0: in        8-byte aligned
//   1: out       8-byte aligned
//   2: stats     rows * nseg * 8 bytes (f32 pairs m, l), 8-byte aligned
//   3: cols      row length (>= 1)
//   4: in_stride halves from one `in` row to the next
//   5: s         the scale, f32 bits (finite, > 0)
//   6: nseg      segments per row (>= 1)
//   7: G         groups per segment but the last ((nseg - 1) * G < ceil(cols / 4))
//   8 + 3w: first row of worker w, 9 + 3w: its first segment, 10 + 3w: its item count; items
//           are the (row, segment) pairs in row-major order, split in order.
// Worker scratch: 16 bytes at $mworker_base. Memory: any region (one access per bundle).
// Registers (pass 1): $m0 / $m1 in / out pointers, $m2 counts, $m3 in row, $m4 store step,
// $m5 out row, $m6 stats of the item, $m7 items left, $m8 segment, $m9 regular groups (all
// but the segment's last), $m10 link, $m11 temp. ARF: $a0:3 values, $a4:5 (-m, -m), $a6:7
// sums, $a8:9 the f16 e of a group.

#define V_IN      0
#define V_OUT     1
#define V_STATS   2
#define V_COLS    3
#define V_STRIDE  4
#define V_S       5
#define V_NSEG    6
#define V_G       7
#define V_SPLIT   8

    .section .text.softmax_seg_f16
    .globl softmax_seg_f16
    .type softmax_seg_f16, @function
    .supervisor
    .align 8
softmax_seg_f16:
    mov $m1, $mvertex_base
    setzi $m0, softmax_seg_exp
    setzi $m3, softmax_seg_scale
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m3, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    .size softmax_seg_f16, . - softmax_seg_f16

// ---- Pass 1: e, m_j and l_j of every item. ----
    .section .text.softmax_seg_exp
    .type softmax_seg_exp, @function
    .worker
    .align 8
softmax_seg_exp:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    mul $m11, $m11, 12
    ld32 $m7, $mvertex_base, $m11, V_SPLIT + 2        // items
    ld32 $m9, $mvertex_base, $m11, V_SPLIT            // first row
    ld32 $m8, $mvertex_base, $m11, V_SPLIT + 1        // first segment
    ld32 $a0, $mvertex_base, $mzero, V_S
    setzi $a1, 0x3c00                                 // 1.0
    f32tof16 $a0, $a0                                 // (s16, s16)
    { nop ; sort4x16lo $a0, $a0, $a1 }                // (s16, 1.0)
    {
        brz $m7, .Le_exit
        uput $TAS, $a0
    }
    ld32 $m11, $mvertex_base, $mzero, V_NSEG
    mul $m6, $m9, $m11
    add $m6, $m6, $m8
    shl $m6, $m6, 3
    ld32 $m11, $mvertex_base, $mzero, V_STATS
    add $m6, $m6, $m11                                // stats of the first item
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    mul $m3, $m9, $m11
    shl $m3, $m3, 1
    ld32 $m11, $mvertex_base, $mzero, V_IN
    add $m3, $m3, $m11                                // in row
    ld32 $m11, $mvertex_base, $mzero, V_COLS
    add $m11, $m11, 3
    shr $m11, $m11, 2
    shl $m11, $m11, 3                                 // bytes of an out row
    mul $m5, $m9, $m11
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m5, $m5, $m11                                // out row

.Le_item:
    // The segment: first group g0 = segment * G, G groups, or the rest of the row for the last.
    ld32 $m11, $mvertex_base, $mzero, V_G
    mul $m9, $m8, $m11                                // g0
    ld32 $m2, $mvertex_base, $mzero, V_NSEG
    add $m2, $m2, -1
    cmpeq $m4, $m8, $m2                               // 1: the row's last segment
    brz $m4, .Le_sized
    ld32 $m11, $mvertex_base, $mzero, V_COLS
    add $m11, $m11, 3
    shr $m11, $m11, 2
    sub $m11, $m11, $m9                               // groups of the last segment
.Le_sized:
    shl $m9, $m9, 3
    add $m0, $m3, $m9                                 // in of the segment
    add $m1, $m5, $m9                                 // out of the segment
    add $m9, $m11, -1                                 // regular groups
    st32 $m1, $mworker_base, $mzero, 2
    // The segment's last group to scratch words 0, 1: lanes >= cols become -inf when it is the
    // row's last group.
    shl $m11, $m9, 3
    {
        ld64 $a0:1, $m0, $m11, 0
        setzi $a4, 0xfc00
    }
    ld32 $m2, $mvertex_base, $mzero, V_COLS
    and $m2, $m2, 3
    {
        brz $m4, .Le_masked
        sort4x16lo $a4, $a4, $a4                      // $a4 = (-inf, -inf)
    }
    brz $m2, .Le_masked
    cmpeq $m11, $m2, 2
    brnz $m11, .Le_mask2
    cmpeq $m11, $m2, 1
    brnz $m11, .Le_mask1
    {
        bri .Le_masked
        sort4x16lo $a1, $a1, $a4                      // 3 columns: lane 3 masked
    }
.Le_mask1:
    { nop ; sort4x16lo $a0, $a0, $a4 }                // 1 column: lanes 1..3 masked
.Le_mask2:
    { nop ; mov $a1, $a4 }                            // 2 columns: lanes 2, 3 masked
.Le_masked:
    {
        st64 $a0:1, $mworker_base, $mzero, 0
        mov $a3, $a4
    }

    // 1. The segment's maximum (f16, exact), m_j = s * max.
    {
        mov $m2, $m0
        mov $a2, $a4
    }
    brz $m9, .Le_max_last
    add $m11, $m9, -1
    { ld64step $a0:1, $mzero, $m2+=, 1 ; fnop }
    { rpt $m11, 0 ; fnop }
    {
        ld64step $a0:1, $mzero, $m2+=, 1
        f16v4max $a2:3, $a2:3, $a0:1
    }
    { nop ; f16v4max $a2:3, $a2:3, $a0:1 }
.Le_max_last:
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
    { nop ; f32tof16 $a4, $a2 }                       // m16 in both halves
    { nop ; f16tof32 $a2, $a4 }                       // m_j = f32(m16), exact
    {
        st32 $a2, $m6, $mzero, 0
        f16v2sub $a4, $azero, $a4                     // (-m16, -m16)
    }
    { nop ; mov $a5, $a4 }

    // 2. e = exp(s x - m_j) as f16 to out, the sums in $a6:7 (even, odd columns).
    {
        ld32 $m1, $mworker_base, $mzero, 2
        sort4x32lo $a6:7, $azeros, $azeros
    }
    mov $m2, $m9
    call $m10, softmax_seg_exp_groups
    mov $m0, $mworker_base
    setzi $m2, 1
    { call $m10, softmax_seg_exp_groups ; fnop }
    { nop ; f32add $a6, $a6, $a7 }
    { st32 $a6, $m6, $mzero, 1 ; fnop }               // l_j

    // Next item: the next segment, or the next row's first.
    add $m6, $m6, 8
    add $m8, $m8, 1
    ld32 $m11, $mvertex_base, $mzero, V_NSEG
    cmpeq $m11, $m8, $m11
    brz $m11, .Le_next
    setzi $m8, 0
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    shl $m11, $m11, 1
    add $m3, $m3, $m11
    ld32 $m11, $mvertex_base, $mzero, V_COLS
    add $m11, $m11, 3
    shr $m11, $m11, 2
    shl $m11, $m11, 3
    add $m5, $m5, $m11
.Le_next:
    add $m7, $m7, -1
    brnz $m7, .Le_item
.Le_exit:
    exitz $mzero
    .size softmax_seg_exp, . - softmax_seg_exp

// ---- Pass 2: every segment scaled by its factor. ----
// Registers: $m0 out pointer (loads), $m1 stats walk then out pointer (stores), $m2 counts,
// $m3 G, $m5 out row, $m6 the row's stats, $m7 items left, $m8 segment, $m9 nseg, $m11 temp.
// ARF: $a4 M, $a5 1/L, $a2:3 f, $a0:1 a group, $a6:7 its product.
    .section .text.softmax_seg_scale
    .type softmax_seg_scale, @function
    .worker
    .align 8
softmax_seg_scale:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    mul $m11, $m11, 12
    ld32 $m7, $mvertex_base, $m11, V_SPLIT + 2        // items
    ld32 $m2, $mvertex_base, $m11, V_SPLIT            // first row
    ld32 $m8, $mvertex_base, $m11, V_SPLIT + 1        // first segment
    brz $m7, .Ls_exit
    ld32 $m9, $mvertex_base, $mzero, V_NSEG
    ld32 $m3, $mvertex_base, $mzero, V_G
    mul $m6, $m2, $m9
    shl $m6, $m6, 3
    ld32 $m11, $mvertex_base, $mzero, V_STATS
    add $m6, $m6, $m11                                // the row's stats
    ld32 $m11, $mvertex_base, $mzero, V_COLS
    add $m11, $m11, 3
    shr $m11, $m11, 2
    shl $m11, $m11, 3
    mul $m5, $m2, $m11
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m5, $m5, $m11                                // out row

.Ls_item:
    // M = max_j m_j.
    ld32 $a4, $m6, $mzero, 0
    add $m2, $m9, -1
    add $m1, $m6, 8
    brz $m2, .Ls_max_done
.Ls_max:
    ld32 $a0, $m1, $mzero, 0
    add $m1, $m1, 8
    {
        add $m2, $m2, -1
        f32max $a4, $a4, $a0
    }
    brnz $m2, .Ls_max
.Ls_max_done:
    // L = sum_j l_j * exp(m_j - M), then 1 / L.
    {
        mov $m1, $m6
        mov $a5, $azero
    }
    mov $m2, $m9
.Ls_sum:
    ld64 $a0:1, $m1, $mzero, 0                        // (m_j, l_j)
    {
        add $m1, $m1, 8
        f32sub $a0, $a0, $a4
    }
    { nop ; f32exp $a0, $a0 }
    { nop ; f32mul $a0, $a0, $a1 }
    {
        add $m2, $m2, -1
        f32add $a5, $a5, $a0
    }
    brnz $m2, .Ls_sum
    { nop ; f32oox $a5, $a5 }
    // f = f16(exp(m_seg - M) / L) in all four lanes.
    shl $m11, $m8, 3
    ld32 $a0, $m6, $m11, 0
    { nop ; f32sub $a0, $a0, $a4 }
    { nop ; f32exp $a0, $a0 }
    { nop ; f32mul $a0, $a0, $a5 }
    { nop ; f32tof16 $a2, $a0 }
    { nop ; mov $a3, $a2 }
    // The segment's groups: G, or the rest of the row for the last segment.
    mul $m11, $m8, $m3                                // g0
    shl $m0, $m11, 3
    add $m0, $m5, $m0
    add $m2, $m9, -1
    cmpeq $m2, $m8, $m2
    brz $m2, .Ls_mid
    ld32 $m2, $mvertex_base, $mzero, V_COLS
    add $m2, $m2, 3
    shr $m2, $m2, 2
    sub $m2, $m2, $m11
    bri .Ls_scale
.Ls_mid:
    mov $m2, $m3
.Ls_scale:
    // In place, 2 bundles per group: group i + 1 loads as group i is multiplied, then stored.
    mov $m1, $m0
    { ld64step $a0:1, $mzero, $m0+=, 1 ; fnop }
    add $m2, $m2, -1
    { rpt $m2, 1 ; fnop }
    {
        ld64step $a0:1, $mzero, $m0+=, 1
        f16v4mul $a6:7, $a0:1, $a2:3
    }
    { st64step $a6:7, $mzero, $m1+=, 1 ; fnop }
    { nop ; f16v4mul $a6:7, $a0:1, $a2:3 }
    { st64step $a6:7, $mzero, $m1+=, 1 ; fnop }

    // Next item.
    add $m8, $m8, 1
    cmpeq $m11, $m8, $m9
    brz $m11, .Ls_next
    setzi $m8, 0
    shl $m11, $m9, 3
    add $m6, $m6, $m11
    ld32 $m11, $mvertex_base, $mzero, V_COLS
    add $m11, $m11, 3
    shr $m11, $m11, 2
    shl $m11, $m11, 3
    add $m5, $m5, $m11
.Ls_next:
    add $m7, $m7, -1
    brnz $m7, .Ls_item
.Ls_exit:
    exitz $mzero
    .size softmax_seg_scale, . - softmax_seg_scale
