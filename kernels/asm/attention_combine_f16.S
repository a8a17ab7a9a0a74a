// attention_combine_f16: the key blocks of an attention split along its keys combined. Row r has
// C partial outputs p_j (the products of block j's exponentials with its values) and their
// block statistics (m_j, l_j) from softmax_part_f16 (the block's scaled maximum and the sum of
// its exponentials relative to it); the row's attention output is
//   out[d] = sum_j exp(m_j - M) p_j[d] / sum_j exp(m_j - M) l_j,   M = max_j m_j.
//
// Numerics (f32 round-to-nearest-even through tessera_isa::numerics; the Rust reference in
// kernels/src/elementwise/attention_combine.rs repeats every step):
//   M   = max_j m_j                           f16 max (exact; a NaN m gives NaN)
//   g_j = f32exp(f32(m_j) - f32(M))           the subtraction rounded to f32
//   L   = (((0 + l_0 g_0) + l_1 g_1) + ...)   each product and each sum rounded to f32
//   a_j = f16(g_j * f32oox(L))
//   acc = 0; for j in order: acc = f16((1.0 * acc) + (a_j * p_j[d]))   f16v4mix, $TAS = (1.0, a_j)
//   out[d] = acc
// The accumulation rounds to f16 after every block: the result feeds an FP8 cast, whose 3-bit
// mantissa dwarfs C f16 roundings.
//
// Layout: `parts` rows `row_stride` halves apart, the C blocks of a row `part_stride` halves
// apart (% 8 == 0), each block 8 * pairs halves long (the padding columns of a block are
// combined like the others); rows outer (a row's blocks side by side) or blocks outer (a
// block's rows side by side, as the context products write them); `stats` rows `stats_row` halves apart, block j's
// (m16, l16) pair `2 * stats_step` halves after block j - 1's (1: a row's pairs dense; the rows
// of one block together, as the softmax parts' statistics arrive, with the rows' count);
// `out` rows of 8 * pairs halves, dense.
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: parts       8-byte aligned
//   1: stats       4-byte aligned
//   2: out         8-byte aligned
//   3: C           blocks per row (1..=32)
//   4: pairs       pairs of groups of 4 columns per row (>= 1)
//   5: part_stride halves from one block to the next (% 8 == 0, >= 8 * pairs)
//   6: row_stride  halves from one `parts` row to the next (% 4 == 0)
//   7: stats_row   halves from one `stats` row to the next (% 2 == 0)
//   8: K           bits of a pair index (pairs <= 2^K)
//   9: stats_step  32-bit words from one block's (m16, l16) to the next (>= 1)
//   10 + 2w: worker w's first unit packed as (row << K) | pair, 11 + 2w: its number of units
// The work is split in units of one pair of one row (row-major), so a few rows with many
// columns still keep all six workers busy; a worker computes the factors of every row it
// touches (its first and last rows may be shared with its neighbours).
// Worker w keeps its C factors ($TAS words (1.0, a_j)) in its scratch at $mworker_base.
// Memory: any region (one memory access per bundle).
//
// Per row touched: the maximum (2 bundles per block), g_j and L (6 per block), the factors (5
// per block), then per quad of groups A, B, C, D: 5 bundles per block, and for an odd pair
// A, B: 3 per block. The mix is a one-stage pipeline: each f16v4mix returns the previous
// one's result, so in a pair A's mix returns B's previous sum and B's returns A's new one (in
// a quad, each group's returns the group before it); the AACC is zeroed (with $TAS = 0)
// around a pair or quad.
// Registers: $m0 parts, $m1 out, $m2 pairs left in the row (then its odd pair), $m3 the
// pair's first block (in steps 1 and 2: the statistics' step), $m4 8-byte steps from B of a
// block to A of the next, $m5 the first pair of the row (bytes), then quads left, $m6 stats row, $m7 units left, $m8 C, $m9 factors (and
// the first row), $m10 parts row, $m11 temp (in the quads: 8-byte steps from D of a block to A
// of the next). ARF: $a0:3 values, $a5 L then 1 / L, $a6 1.0 (set per row), the sums: of a
// pair's A and B $a8:9 and $a10:11, of a quad's A, B, C, D $a4:5, $a6:7, $a8:9, $a10:11; $a12
// the next factor.

#define V_PARTS       0
#define V_STATS       1
#define V_OUT         2
#define V_C           3
#define V_PAIRS       4
#define V_PART_STRIDE 5
#define V_ROW         6
#define V_STATS_ROW   7
#define V_K           8
#define V_STATS_STEP  9
#define V_SPLIT       10

    .section .text.attention_combine_f16
    .globl attention_combine_f16
    .type attention_combine_f16, @function
    .worker
    .align 8
attention_combine_f16:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    shl $m2, $m11, 3
    ld32 $m7, $mvertex_base, $m2, V_SPLIT + 1         // units
    ld32 $m3, $mvertex_base, $m2, V_SPLIT             // first unit, packed
    {
        brz $m7, .Lc_exit
        uput $TAS, $azero
    }
    {
        ld32 $m8, $mvertex_base, $mzero, V_C
        f16v4mix $a2:3, $azeros, $azeros              // AACC = 0
    }
    // The first row ($m9) and pair ($m5) from the packed unit.
    ld32 $m11, $mvertex_base, $mzero, V_K
    shr $m9, $m3, $m11
    setzi $m2, 1
    shl $m2, $m2, $m11
    add $m2, $m2, -1
    and $m5, $m3, $m2
    // Row pointers: parts + row * row_stride * 2, stats + row * stats_row * 2; out + (row *
    // pairs + pair) * 16, from where the worker's units run on densely.
    ld32 $m11, $mvertex_base, $mzero, V_ROW
    mul $m10, $m9, $m11
    shl $m10, $m10, 1
    ld32 $m11, $mvertex_base, $mzero, V_PARTS
    add $m10, $m10, $m11
    ld32 $m11, $mvertex_base, $mzero, V_STATS_ROW
    mul $m6, $m9, $m11
    shl $m6, $m6, 1
    ld32 $m11, $mvertex_base, $mzero, V_STATS
    add $m6, $m6, $m11
    ld32 $m11, $mvertex_base, $mzero, V_PAIRS
    mul $m1, $m9, $m11
    add $m1, $m1, $m5
    shl $m1, $m1, 4
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m1, $m1, $m11
    shl $m5, $m5, 4                                   // the first pair, in bytes
    ld32 $m4, $mvertex_base, $mzero, V_PART_STRIDE
    shr $m4, $m4, 2
    add $m4, $m4, -1                                  // part_stride * 2 / 8 - 1

.Lc_row:
    // 1. M = max_j m_j (the low halves; the high ones take the max of the l_j, unused).
    ld32 $m3, $mvertex_base, $mzero, V_STATS_STEP
    mov $m0, $m6
    {
        ld32step $a2, $mzero, $m0+=, $m3
        setzi $a6, 0x3c00                             // 1.0 (low half)
    }
    add $m11, $m8, -1
    .align 8
    { rpt $m11, 1 ; fnop }
    { ld32step $a0, $mzero, $m0+=, $m3 ; fnop }
    { nop ; f16v2max $a2, $a2, $a0 }
    { nop ; f16tof32 $a3, $a2 }                       // M

    // 2. g_j = exp(m_j - M) to the factor slots, L = sum_j l_j g_j.
    mov $m0, $m6
    {
        mov $m9, $mworker_base
        mov $a5, $azero
    }
    rpt $m8, 5
    { ld32step $a0, $mzero, $m0+=, $m3 ; fnop }
    { nop ; f16v2tof32 $a0:1, $a0 }                   // (m_j, l_j)
    { nop ; f32sub $a0, $a0, $a3 }
    { nop ; f32exp $a0, $a0 }                         // g_j
    { st32step $a0, $mzero, $m9+=, 1 ; f32mul $a1, $a1, $a0 }
    { nop ; f32add $a5, $a5, $a1 }

    // 3. The factors: $TAS words (1.0, f16(g_j / L)).
    { mov $m9, $mworker_base ; f32oox $a5, $a5 }
    mov $m0, $mworker_base
    rpt $m8, 4
    { ld32step $a0, $mzero, $m0+=, 1 ; fnop }
    { nop ; f32mul $a0, $a0, $a5 }
    { nop ; f32tof16 $a0, $a0 }
    { nop ; sort4x16lo $a0, $a6, $a0 }
    { st32step $a0, $mzero, $m9+=, 1 ; fnop }

    // 4. This row's pairs from its first, as many as are left: min(units, pairs - first);
    // AACC = 0 and $TAS = 0 here.
    ld32 $m2, $mvertex_base, $mzero, V_PAIRS
    shr $m11, $m5, 4
    sub $m2, $m2, $m11
    min $m2, $m2, $m7
    sub $m7, $m7, $m2
    add $m3, $m10, $m5
    shr $m5, $m2, 1                                   // quads (0 at the end: later rows
    and $m2, $m2, 1                                   // start at their first pair), a pair
    add $m11, $m4, -2                                 // 8-byte steps from D to the next A
    brz $m5, .Lc_pairs
    // Quads of groups A, B, C, D (16 columns): the mix returns the previous one's result, so
    // each group's mix returns the one before it (A's returns D's previous sum); the sums
    // A $a4:5, B $a6:7, C $a8:9 start at 0, D's from A's first mix.
.Lc_quad:
    {
        mov $m0, $m3
        f16v4mix $a4:5, $azeros, $azeros              // A's sum = 0
    }
    {
        mov $m9, $mworker_base
        f16v4mix $a6:7, $azeros, $azeros              // B's sum = 0
    }
    {
        ld32step $a12, $mzero, $m9+=, 1               // block 0's factor
        f16v4mix $a8:9, $azeros, $azeros              // C's sum = 0
    }
    .align 8
    { rpt $m8, 4 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; uput $TAS, $a12 }
    { ld64step $a2:3, $mzero, $m0+=, 1 ; f16v4mix $a10:11, $a4:5, $a0:1 }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4mix $a4:5, $a6:7, $a2:3 }
    { ld64step $a2:3, $mzero, $m0+=, $m11 ; f16v4mix $a6:7, $a8:9, $a0:1 }
    { ld32step $a12, $mzero, $m9+=, 1 ; f16v4mix $a8:9, $a10:11, $a2:3 }
    { nop ; f16v4mix $a10:11, $azeros, $azeros }      // D's sum out
    { st64step $a4:5, $mzero, $m1+=, 1 ; uput $TAS, $azero }
    {
        st64step $a6:7, $mzero, $m1+=, 1
        f16v4mix $a2:3, $azeros, $azeros              // AACC = 0
    }
    st64step $a8:9, $mzero, $m1+=, 1
    st64step $a10:11, $mzero, $m1+=, 1
    add $m3, $m3, 32
    add $m5, $m5, -1
    brnz $m5, .Lc_quad
.Lc_pairs:
    brz $m2, .Lc_next_row
.Lc_pair:
    {
        mov $m0, $m3
        f16v4mix $a8:9, $azeros, $azeros              // A's sum = 0
    }
    mov $m9, $mworker_base
    { ld32step $a12, $mzero, $m9+=, 1 ; fnop }        // block 0's factor
    .align 8
    { rpt $m8, 2 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; uput $TAS, $a12 }
    { ld64step $a2:3, $mzero, $m0+=, $m4 ; f16v4mix $a10:11, $a8:9, $a0:1 }
    { ld32step $a12, $mzero, $m9+=, 1 ; f16v4mix $a8:9, $a10:11, $a2:3 }
    { nop ; f16v4mix $a10:11, $azeros, $azeros }      // B's sum out
    { st64step $a8:9, $mzero, $m1+=, 1 ; uput $TAS, $azero }
    {
        st64step $a10:11, $mzero, $m1+=, 1
        f16v4mix $a2:3, $azeros, $azeros              // AACC = 0
    }
    add $m3, $m3, 16
    add $m2, $m2, -1
    brnz $m2, .Lc_pair

.Lc_next_row:
    ld32 $m11, $mvertex_base, $mzero, V_ROW
    shl $m11, $m11, 1
    add $m10, $m10, $m11
    ld32 $m11, $mvertex_base, $mzero, V_STATS_ROW
    shl $m11, $m11, 1
    add $m6, $m6, $m11
    brnz $m7, .Lc_row
.Lc_exit:
    exitz $mzero
    .size attention_combine_f16, . - attention_combine_f16
