// softmax_f16: out[r][c] = exp(s x[r][c] - m_r) / sum_c exp(s x[r][c] - m_r) for every row r of
// an f16 matrix (the attention probabilities), with a positive scale s; f32 max, exp and sum,
// f16 output.
//
// Numerics (all f32 round-to-nearest-even through tessera_isa::numerics; the Rust reference in
// kernels/src/elementwise/softmax.rs repeats the same steps):
//   xmax = max_c x[r][c]                  f16v4max (exact; a NaN anywhere gives NaN)
//   m    = s * f32(xmax)                  = max_c f32(s x) since s > 0 and rounding is monotonic
//   t_c  = (s * f32(x_c)) + (0 - m)       f32v2axpy ($TAS = s): multiply rounded, add rounded
//   e_c  = f32exp(t_c)                    exp in f64 rounded once to f32 (numerics::f32_exp)
//   sum  = E + O, where E = (((0 + e_0) + e_2) + e_4) + ... over the even columns in order and
//          O = (((0 + e_1) + e_3) + e_5) + ... over the odd columns in order
//   q    = f32oox(sum)                    1 / sum, IEEE
//   out  = f16(e_c * q)                   RNE
// Specials follow IEEE: a NaN or +inf in a row (inf - inf) makes the whole row NaN; -inf
// entries give 0 unless the whole row is -inf (NaN); a row whose s x overflows f32 is NaN.
//
// Layout: `rows` rows of `cols` halves, each row padded to stride = 4 * ceil(cols / 4) halves
// in `out`; `in` rows may have any stride (in halves, % 4 == 0, >= cols). The padding columns
// of `in` are never used (masked to -inf); those of `out` are written: exp(-inf) * q = +0
// (NaN for a NaN row).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in         8-byte aligned
//   1: out        rows * stride halves, 8-byte aligned
//   2: scratch    6 * stride * 4 bytes (f32), 8-byte aligned: worker w keeps the row's e_c at
//                 scratch + w * stride * 4
//   3: cols       row length (>= 1)
//   4: in_stride  halves from one `in` row to the next (% 4 == 0, >= cols)
//   5: s          the scale, f32 bits (finite, > 0)
//   6 + 2w: first row of worker w, 7 + 2w: its number of rows
// Rows are split among the workers (whole rows, a long row like 729 columns stays in one
// worker). Worker w also uses its 256-byte scratch at $mworker_base for the masked last group.
// Memory: any region, no element constraints (one memory access per bundle).
//
// Per row, with g = ceil(cols / 4) groups of 4 (the last group copied to worker scratch with
// its lanes >= cols set to -inf; it is group g-1 of every pass):
//   1. max: { ld64step ; f16v4max } one bundle per group, then a 4-lane reduction;
//   2. exp: 11 bundles per group (softmax_exp_groups: two f16v2tof32, two f32v2axpy and an
//      f32v2gina to get t out of the accumulators, four f32exp, two f32v2add into the (even,
//      odd) sum pair, e stored to scratch), the aux pipeline busy in every bundle;
//   3. normalise: 3 bundles per group (two ld64step of e, two f32v2mul by q, f32v4tof16,
//      st64step), group 0's products computed before the loop, the store lagging one group.
// The exp loop stores the previous group's (e2, e3) first, so its first store writes zeros with
// a zero increment ($m4 = 0) to the slot the next store then fills.
// Registers: $m0 source, $m1 e, $m2 counts, $m3 row start (in), $m4 store step, $m5 out,
// $m6 e of the row, $m7 rows left, $m8 groups in the row, $m9 cols % 4, $m10 link, $m11 temp.
// ARF: $a0:3 values, $a4:5 constant pair (-m, -m) then (q, q), $a6:7 sums / results.

#define V_IN      0
#define V_OUT     1
#define V_SCRATCH 2
#define V_COLS    3
#define V_STRIDE  4
#define V_S       5
#define V_SPLIT   6

    .section .text.softmax_f16
    .globl softmax_f16
    .type softmax_f16, @function
    .worker
    .align 8
softmax_f16:
    get $m11, $WSR
    and $m11, $m11, CSR_W_WSR__CTXTID_M1__MASK
    shl $m2, $m11, 3
    ld32 $m7, $mvertex_base, $m2, V_SPLIT + 1         // rows
    ld32 $m3, $mvertex_base, $m2, V_SPLIT             // first row
    ld32 $a0, $mvertex_base, $mzero, V_S
    { ld32 $m8, $mvertex_base, $mzero, V_COLS ; fnop }
    {
        brz $m7, .Lexit
        uput $TAS, $a0
    }
    and $m9, $m8, 3                                   // cols % 4
    add $m8, $m8, 3
    shr $m8, $m8, 2                                   // groups per row
    // This worker's e buffer: scratch + w * 16 * groups.
    shl $m6, $m8, 4
    mul $m6, $m6, $m11
    ld32 $m11, $mvertex_base, $mzero, V_SCRATCH
    add $m6, $m6, $m11
    // Row pointers: in + row * in_stride * 2, out + row * groups * 8.
    shl $m5, $m8, 3
    mul $m5, $m5, $m3
    ld32 $m11, $mvertex_base, $mzero, V_OUT
    add $m5, $m5, $m11
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    mul $m3, $m3, $m11
    shl $m3, $m3, 1
    ld32 $m11, $mvertex_base, $mzero, V_IN
    add $m3, $m3, $m11

.Lrow:
    // The last group, masked: lanes >= cols become -inf, copied to worker scratch words 0, 1.
    add $m2, $m8, -1
    shl $m11, $m2, 3
    { ld64 $a0:1, $m3, $m11, 0 ; fnop }
    {
        setzi $m11, 0
        setzi $a4, 0xfc00
    }
    { brz $m9, .Lmasked ; sort4x16lo $a4, $a4, $a4 }  // $a4 = (-inf, -inf)
    cmpeq $m11, $m9, 2
    brnz $m11, .Lmask2
    cmpeq $m11, $m9, 1
    brnz $m11, .Lmask1
    { bri .Lmasked ; sort4x16lo $a1, $a1, $a4 }      // 3 columns: lane 3 masked
.Lmask1:
    { nop ; sort4x16lo $a0, $a0, $a4 }                // 1 column: lanes 1..3 masked
.Lmask2:
    { nop ; mov $a1, $a4 }                            // 2 columns: lanes 2, 3 masked
.Lmasked:
    { st64 $a0:1, $mworker_base, $mzero, 0 ; mov $a3, $a4 }

    // 1. The row maximum (f16, exact).
    { mov $m0, $m3 ; mov $a2, $a4 }                  // max accumulator = -inf
    brz $m2, .Lmax_last
    add $m11, $m2, -1
    { ld64step $a0:1, $mzero, $m0+=, 1 ; fnop }
    { rpt $m11, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; f16v4max $a2:3, $a2:3, $a0:1 }
    { nop ; f16v4max $a2:3, $a2:3, $a0:1 }
.Lmax_last:
    { ld64 $a0:1, $mworker_base, $mzero, 0 ; fnop }
    { nop ; f16v4max $a2:3, $a2:3, $a0:1 }
    { nop ; f16v2max $a2, $a2, $a3 }
    {
        ld32 $a1, $mvertex_base, $mzero, V_S
        swap16 $a3, $a2
    }
    { nop ; f16v2max $a2, $a2, $a3 }
    { nop ; f16tof32 $a2, $a2 }
    { nop ; f32mul $a2, $a1, $a2 }                    // m = s * xmax
    { nop ; f32sub $a4, $azero, $a2 }                 // -m
    { nop ; mov $a5, $a4 }

    // 2. e = exp(s x - m) to the e buffer, sums in $a6:7 (even, odd columns).
    {
        mov $m0, $m3
        sort4x32lo $a6:7, $azeros, $azeros
    }
    mov $m1, $m6
    call $m10, softmax_exp_groups
    mov $m0, $mworker_base
    setzi $m2, 1
    { call $m10, softmax_exp_groups ; fnop }

    // 3. out = f16(e * (1 / sum)).
    { nop ; f32add $a6, $a6, $a7 }
    { mov $m1, $m6 ; f32oox $a4, $a6 }
    { nop ; mov $a5, $a4 }
    // Group 0 first (products in $a0:3), then per group: convert the previous products and
    // store them, load and multiply the next group.
    { ld64step $a0:1, $mzero, $m1+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m1+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { add $m2, $m8, -1 ; f32v2mul $a2:3, $a2:3, $a4:5 }
    { rpt $m2, 2 ; fnop }
    {
        ld64step $a0:1, $mzero, $m1+=, 1
        f32v4tof16 $a6:7, $a0:3
    }
    {
        ld64step $a2:3, $mzero, $m1+=, 1
        f32v2mul $a0:1, $a0:1, $a4:5
    }
    {
        st64step $a6:7, $mzero, $m5+=, 1
        f32v2mul $a2:3, $a2:3, $a4:5
    }
    { nop ; f32v4tof16 $a6:7, $a0:3 }
    { st64step $a6:7, $mzero, $m5+=, 1 ; fnop }

    // Next row.
    ld32 $m11, $mvertex_base, $mzero, V_STRIDE
    shl $m11, $m11, 1
    add $m3, $m3, $m11
    add $m7, $m7, -1
    brnz $m7, .Lrow
.Lexit:
    exitz $mzero
    .size softmax_f16, . - softmax_f16

// softmax_exp_groups: for $m2 groups of 4 halves at $m0: e = f32exp(s x + (-m)) with $TAS = s and
// $a4:5 = (-m, -m); e stored to $m1 (16 bytes per group), $a6:7 += (e0, e1) then += (e2, e3).
// Both pointers advance. Clobbers $m4, $a0:3, the accumulators; returns to $m10.
    .section .text.softmax_exp_groups
    .type softmax_exp_groups, @function
    .worker
    .align 8
softmax_exp_groups:
    brz $m2, .Lexp_done
    setzi $m4, 0
    { rpt $m2, 10 ; sort4x32lo $a2:3, $azeros, $azeros }
    {
        ld64step $a0:1, $mzero, $m0+=, 1              // x (4 halves)
        f32v2add $a6:7, $a6:7, $a2:3                  // previous group: sums += (e2, e3)
    }
    {
        st64step $a2:3, $mzero, $m1+=, $m4            // previous group's (e2, e3); junk at first
        f16v2tof32 $a2:3, $a1
    }
    {
        setzi $m4, 1
        f16v2tof32 $a0:1, $a0
    }
    { nop ; f32v2axpy $azeros, $a0:1, $a4:5 }         // acc = s x + (-m), lanes 0, 1
    { nop ; f32v2axpy $a0:1, $a2:3, $a4:5 }           // t (lanes 0, 1) out; lanes 2, 3 in
    { nop ; f32v2gina $a2:3, $azeros, 0 }             // t (lanes 2, 3)
    { nop ; f32exp $a0, $a0 }
    { nop ; f32exp $a1, $a1 }
    { nop ; f32exp $a2, $a2 }
    {
        st64step $a0:1, $mzero, $m1+=, 1              // (e0, e1)
        f32exp $a3, $a3
    }
    { nop ; f32v2add $a6:7, $a6:7, $a0:1 }            // sums += (e0, e1)
    {
        st64step $a2:3, $mzero, $m1+=, 1              // the last group's (e2, e3)
        f32v2add $a6:7, $a6:7, $a2:3
    }
.Lexp_done:
    br $m10
    .size softmax_exp_groups, . - softmax_exp_groups
