// layernorm_h_body: the code shared by layernorm_h_f16.S and layernorm_h_fp8.S: the supervisor
// and the normalising pass of the LayerNorms with f16 gamma and beta. Each kernel's source is
// `layernorm_stats.S + its header + this file` (kernels/src/norm/layernorm_h.rs); the headers
// define the entry names and the places where the output format makes the code differ:
//   OUT_POINTER, OUT_ADVANCE   worker set-up of the out pointer $m4 and its row advance $m8
//   LOAD_FORMAT, PUT_SCALE     the FP8 format and scale CSRs (nothing for f16)
//   CONVERT_OUT, STORE_OUT     the finished group's conversion (FP8) and its store
//   CONVERT_BUNDLES            bundles in CONVERT_OUT
//   NORM_X, NORM_SPLIT         the vertex words of the normalising pass's x and split table (the
//                              statistics' own, 0 and 9; the column variants' 24 and 26)
//
// Supervisor entry K_SUP ($mvertex_base = the vertex): three worker passes, each followed by
// `sync 2`, then `br $m10`: the mean partials of layernorm_stats.S (f32, as layernorm_f16), the
// variance partials of K_VAR (below, from f16 deviations), the normalising pass K_NORM.
//
// Variance pass, per row: the mean from the six partials (f32, as norm_var), m16 = f16(mean),
// and for each worker's groups in pairs (a, b) in order, d = f16(x - m16) (f16v4sub), then
// f16v8sqacc {d_a, d_b}: AACC[2j] += d_aj^2 and AACC[8 + 2j] += d_bj^2 (one accumulator a half,
// each square exact in f32, each sum rounded); a lone last group goes as {d, 0}. The worker's
// partial is ((L0 + L2) + (L4 + L6)) + ((L1 + L3) + (L5 + L7)) (Lj = AACC[2j], four
// f32v2gina), stored in its variance slot (scratch word 6 + w) as norm_var does. 3 bundles a
// pair of groups.
//
// Normalising pass, per row: mean and rstd from the twelve partials exactly as layernorm_f16's
// pass (f32), m16 = f16(mean) and r16 = f16(rstd) (RNE), then per element in f16, every step
// one f16 operation rounded to nearest even:
//   d = x - m16; t = d * r16; u = t * gamma; y = u + beta
// then the header's output of y (f16, or FP8 under $FP_NFMT / $FP_SCL / $FP_CTL.NANOO).
// Per group of 4: four f16v4 operations (and the FP8 conversion), the loads of x, gamma and
// beta and the store beside them: 4 bundles (f16 out) or 5 (FP8). The first group is started
// before the loop and the last finished after it, so nothing past a worker's groups is read.
// Registers: $m1 x, $m2 gamma, $m3 beta, $m4 out, $m5 rows - 1, $m6 scratch row, $m7 x (and
// gamma, beta) bytes from the chunk's end to the next row's chunk, $m8 out advance, $m9 count - 1,
// $m10 8 * count (gamma and beta rewind), $m11 temp. ARF: $a0:1 the group through the steps,
// $a2:3 gamma, $a4:5 m16 x 4, $a6:7 r16 x 4, $a8:9 beta, $a10:11 x.
// ==== shared code of layernorm_h_f16 and layernorm_h_fp8 ====

#define V_X       0
#define V_GAMMA   1
#define V_BETA    2
#define V_OUT     3
#define V_SCRATCH 4
#define V_ROWS    5
#define V_N       6
#define V_INVN    7
#define V_EPS     8
#define V_SPLIT   9
#define ROW_SCRATCH_BYTES 48

    .section K_SUP_TEXT
    .globl K_SUP
    .type K_SUP, @function
    .supervisor
    .align 8
K_SUP:
    three_passes layernorm_mean, K_VAR, K_NORM
    .size K_SUP, . - K_SUP

    .section K_VAR_TEXT
    .globl K_VAR
    .type K_VAR, @function
    .worker
    .align 8
K_VAR:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }
    { ld32 $m3, $mvertex_base, $m1, V_SPLIT+1 ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_X ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { shl $m2, $m2, 3 ; fnop }
    { add $m4, $m4, $m2 ; fnop }                      // x of the worker's first group
    { shl $m10, $m0, 2 ; fnop }
    { add $m10, $m10, 24 ; fnop }                     // its variance slot in a scratch row
    { shl $m7, $m7, 1 ; fnop }
    { shl $m1, $m3, 3 ; fnop }
    { sub $m7, $m7, $m1 ; fnop }                      // x from the chunk's end to the next row's
    { shr $m9, $m3, 1 ; fnop }                        // pairs of groups
    { and $m8, $m3, 1 ; fnop }                        // a lone last group
    { add $m3, $m9, -1 ; fnop }                       // pairs - 1: the loop's count
    { add $m5, $m5, -1 ; fnop }
.Lhv_row:
    // The row mean from the six partial sums (f32), then m16 in the four halves of $a4:5.
    { ld64 $a0:1, $m6, $mzero, 0 ; setzi $a6, 8 }
    { ld64 $a2:3, $m6, $mzero, 1 ; uput $FP_CLR, $a6 }
    { ld64 $a4:5, $m6, $mzero, 2 ; fnop }
    { ld32 $a7, $mvertex_base, $mzero, V_INVN ; f32v2add $a0:1, $a0:1, $a2:3 }
    { nop ; f32v2add $a0:1, $a0:1, $a4:5 }
    { nop ; f32add $a4, $a0, $a1 }
    { nop ; f32mul $a4, $a4, $a7 }
    { nop ; f32tof16 $a4, $a4 }
    { brz $m9, .Lhv_lone ; mov $a5, $a4 }
    // Pairs: the first pair's groups in, d_a; then per pair d_b and the squares while the next
    // pair comes in; the last pair after the loop.
    { ld64step $a6:7, $mzero, $m4+=, 1 ; fnop }
    { ld64step $a8:9, $mzero, $m4+=, 1 ; f16v4sub $a0:1, $a6:7, $a4:5 }
    { rpt $m3, 2 ; fnop }
    { ld64step $a6:7, $mzero, $m4+=, 1 ; f16v4sub $a2:3, $a8:9, $a4:5 }
    { ld64step $a8:9, $mzero, $m4+=, 1 ; f16v8sqacc $a0:3 }
    { nop ; f16v4sub $a0:1, $a6:7, $a4:5 }
    { nop ; f16v4sub $a2:3, $a8:9, $a4:5 }
    { nop ; f16v8sqacc $a0:3 }
.Lhv_lone:
    { brz $m8, .Lhv_partial ; fnop }
    { ld64step $a6:7, $mzero, $m4+=, 1 ; sort4x32lo $a2:3, $azeros, $azeros }
    { nop ; f16v4sub $a0:1, $a6:7, $a4:5 }
    { nop ; f16v8sqacc $a0:3 }
.Lhv_partial:
    { nop ; f32v2gina $a0:1, $azeros, 0 }                 // (L0, L1)
    { add $m4, $m4, $m7 ; f32v2gina $a2:3, $azeros, 0 }   // (L2, L3)
    { nop ; f32v2gina $a6:7, $azeros, 0 }                 // (L4, L5)
    { nop ; f32v2gina $a8:9, $azeros, 0 }                 // (L6, L7)
    { nop ; f32v2add $a0:1, $a0:1, $a2:3 }
    { nop ; f32v2add $a6:7, $a6:7, $a8:9 }
    { nop ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f32add $a0, $a0, $a1 }
    { st32 $a0, $m6, $m10, 0 ; fnop }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; fnop }
    { brnzdec $m5, .Lhv_row ; fnop }
    exitz $mzero
    .size K_VAR, . - K_VAR

    .section K_NORM_TEXT
    .globl K_NORM
    .type K_NORM, @function
    .worker
    .align 8
K_NORM:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, NORM_SPLIT ; fnop }
    { ld32 $m9, $mvertex_base, $m1, NORM_SPLIT+1 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { shl $m10, $m2, 3 ; fnop }                       // 8 bytes a group before the worker's first
    { ld32 $m4, $mvertex_base, $mzero, V_OUT ; fnop }
    OUT_POINTER
    { shl $m7, $m11, 1 ; fnop }
    { shl $m11, $m9, 3 ; fnop }
    { sub $m7, $m7, $m11 ; fnop }                     // 2n - 8 count
    OUT_ADVANCE
    { ld32 $m1, $mvertex_base, $mzero, NORM_X ; fnop }
    { add $m1, $m1, $m10 ; fnop }
    LOAD_FORMAT
    { ld32 $m2, $mvertex_base, $mzero, V_GAMMA ; PUT_SCALE }
    { add $m2, $m2, $m10 ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_BETA ; fnop }
    { add $m3, $m3, $m10 ; fnop }
    { shl $m10, $m9, 3 ; fnop }
    { add $m9, $m9, -1 ; fnop }
    { add $m5, $m5, -1 ; fnop }
.Lh_row:
    // mean and rstd of the row from the twelve partials (as layernorm_body.S), then in f16.
    { ld64 $a0:1, $m6, $mzero, 0 ; fnop }
    { ld64 $a2:3, $m6, $mzero, 1 ; fnop }
    { ld64 $a6:7, $m6, $mzero, 2 ; f32v2add $a0:1, $a0:1, $a2:3 }
    { ld64 $a2:3, $m6, $mzero, 3 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 4 ; f32add $a4, $a0, $a1 }
    { ld32 $a5, $mvertex_base, $mzero, V_INVN ; f32v2add $a2:3, $a2:3, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 5 ; f32mul $a4, $a4, $a5 }   // mean
    { ld32 $a0, $mvertex_base, $mzero, V_EPS ; f32v2add $a2:3, $a2:3, $a6:7 }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; f32add $a2, $a2, $a3 }
    { nop ; f32mul $a2, $a2, $a5 }                    // var
    { nop ; f32add $a2, $a2, $a0 }
    { nop ; f32oorx $a2, $a2 }                        // rstd
    { nop ; f32tof16 $a4, $a4 }                       // m16 in both halves
    { nop ; f32tof16 $a6, $a2 }                       // r16 in both halves
    { nop ; mov $a5, $a4 }
    { brneg $m9, .Lh_next ; mov $a7, $a6 }
    // The first group up to u = t gamma.
    { ld64step $a10:11, $mzero, $m1+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; f16v4sub $a0:1, $a10:11, $a4:5 }
    { ld64step $a8:9, $mzero, $m3+=, 1 ; f16v4mul $a0:1, $a0:1, $a6:7 }
    { nop ; f16v4mul $a0:1, $a0:1, $a2:3 }
    // Group i: the previous group finished and stored, this one up to u.
    { rpt $m9, 3 + CONVERT_BUNDLES ; fnop }
    { ld64step $a10:11, $mzero, $m1+=, 1 ; f16v4add $a0:1, $a0:1, $a8:9 }
    CONVERT_OUT
    { STORE_OUT ; f16v4sub $a0:1, $a10:11, $a4:5 }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; f16v4mul $a0:1, $a0:1, $a6:7 }
    { ld64step $a8:9, $mzero, $m3+=, 1 ; f16v4mul $a0:1, $a0:1, $a2:3 }
    // The last group.
    { add $m1, $m1, $m7 ; f16v4add $a0:1, $a0:1, $a8:9 }
    CONVERT_OUT
    { STORE_OUT ; fnop }
    { sub $m2, $m2, $m10 ; fnop }
    { sub $m3, $m3, $m10 ; fnop }
    { add $m4, $m4, $m8 ; fnop }
.Lh_next:
    { brnzdec $m5, .Lh_row ; fnop }
    exitz $mzero
    .size K_NORM, . - K_NORM
