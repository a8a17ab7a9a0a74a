// add_layernorm_moments: s = a + b (f16, RNE) over rows of f16 matrices; writes s and, per row,
// the FP32 moments (mean, rstd = 1/sqrt(var + eps)) of s, with the centred two-pass variance
// taken from the stored (rounded) s. Assembled after layernorm_stats.S (the variance pass
// `norm_var_word2` and the shared vertex layout are documented there).
//
// Supervisor entry `add_layernorm_moments`: three worker passes over all six workers, each
// followed by `sync 2`, then `br $m10`:
//   1. add_layernorm_moments_add    s = a + b, stored, and each worker's partial sum of s
//   2. norm_var_word2               partial sums of squared deviations, reading s back
//   3. add_layernorm_moments_final  worker w writes the moments of rows w, w + 6, ...
//
// Vertex (32-bit words):
//   0 a, 1 b          inputs, rows x n halves
//   2 sum_out         output, rows x n halves
//   3 moments_out     output, rows x 2 f32: (mean, rstd) per row, 8-byte aligned
//   4 scratch         48 bytes per row (partials, see layernorm_stats.S)
//   5 rows, 6 n, 7 inv_n (f32 bits of 1/n), 8 eps (f32 bits)
//   9..20             split table of the n/4 groups (first group, group count per worker)
//   21 flags          bit 0: a, b and sum_out are in three different memory elements at
//                     every offset (e.g. three element slots): pass 1 then uses ld2x64pace /
//                     ld2xst64pace (3 bundles per 8 elements) instead of single loads and
//                     stores (6 bundles per 8 elements). The results do not depend on it.
// Memory: all buffers 8-byte aligned; rows > 1 needs n % 4 == 0. Reads up to 6 bytes past the
// ends of a, b and sum_out when n % 4 != 0 (never written); the n % 4 tail of a single row is
// written with a read-modify-write of its last 32-bit word(s).
//
// Numerics (mirrored by the Rust reference): s_i = f16_rne(a_i + b_i) (f16v4add). Mean
// partials in blocks of 8 elements (two groups of the worker's chunk, from its first group):
// f16v8acc of the block, so AACC[2j] += s_j for j in 0..8 (one accumulator a half, as PopLibs'
// ReduceAdd reads them), each half widened exactly and each addition rounded; a lone last group
// and the tail group (missing lanes 0) are blocks whose upper half is 0. The partial is
// ((L0 + L2) + (L4 + L6)) + ((L1 + L3) + (L5 + L7)) (Lj = AACC[2j], four f32v2gina). The
// variance pass (layernorm_stats.S)
// reads the stored s; then
//   mean = (((P0 + P2) + P4) + ((P1 + P3) + P5)) * inv_n
//   rstd = f32oorx((((V0 + V2) + V4) + ((V1 + V3) + V5)) * inv_n + eps)
// every operation f32 RNE.

#define V_A       0
#define V_B       1
#define V_SUM     2
#define V_MOM     3
#define V_SCRATCH 4
#define V_ROWS    5
#define V_N       6
#define V_INVN    7
#define V_EPS     8
#define V_SPLIT   9
#define V_FLAGS   21
#define ROW_SCRATCH_BYTES 48

    .section .text.add_layernorm_moments
    .globl add_layernorm_moments
    .type add_layernorm_moments, @function
    .supervisor
    .align 8
add_layernorm_moments:
    three_passes add_layernorm_moments_add, norm_var_word2, add_layernorm_moments_final
    .size add_layernorm_moments, . - add_layernorm_moments

// ------------------------------------------------------------------------------------------
// Pass 1. Registers: $m0 fast flag, $m1 a, $m2 b, $m3 sum, $m4 group count, $m5 rows - 1,
// $m6 this worker's mean slot of the row, $m7 pointer advance to the next row, $m8 tail
// elements (worker 5, single row), $m9 rpt count / parity, $m10:11 packed pace addresses.
// ARF: $a0:1 a, $a2:3 b, $a4:5 s of the even group of a block, $a6:7 s of the odd group (0 for
// a lone last group and for the tail), so that $a4:7 is the f16v8acc quad of the block.
    .section .text.add_layernorm_moments_add
    .globl add_layernorm_moments_add
    .type add_layernorm_moments_add, @function
    .worker
    .align 8
add_layernorm_moments_add:
    { get $m0, $WSR ; setzi $a6, 0 }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; setzi $a7, 0 }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }
    { ld32 $m4, $mvertex_base, $m1, V_SPLIT+1 ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { shl $m1, $m0, 2 ; fnop }
    { add $m6, $m6, $m1 ; fnop }
    { and $m8, $m7, 3 ; fnop }
    { cmpeq $m1, $m0, 5 ; fnop }
    { mul $m8, $m8, $m1 ; fnop }
    { shl $m9, $m2, 3 ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_A ; fnop }
    { add $m1, $m1, $m9 ; fnop }
    { ld32 $m2, $mvertex_base, $mzero, V_B ; fnop }
    { add $m2, $m2, $m9 ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_SUM ; fnop }
    { add $m3, $m3, $m9 ; fnop }
    { shl $m7, $m7, 1 ; fnop }
    { add $m5, $m5, -1 ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_FLAGS ; fnop }
    { and $m0, $m0, 1 ; fnop }
    { brnz $m0, .Ladd_fast_row ; setzi $a0, 8 }
    { shl $m9, $m4, 3 ; fnop }
    { sub $m7, $m7, $m9 ; fnop }
.Ladd_row:
    { brnz $m0, .Ladd_fast_row ; setzi $a0, 8 }
    // General path: 3 bundles per group (a, b, s each one access). Blocks of two groups:
    // s of the even group in $a4:5, of the odd one in $a6:7, then one f16v8acc of $a4:7.
    { brz $m4, .Ladd_tail ; uput $FP_CLR, $a0 }
    { add $m9, $m4, -1 ; fnop }
    { shr $m9, $m9, 1 ; fnop }
    { ld64step $a0:1, $mzero, $m1+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; fnop }
    { rpt $m9, 5 ; fnop }
    { ld64step $a0:1, $mzero, $m1+=, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m3+=, 1 ; f16v4add $a6:7, $a0:1, $a2:3 }
    { ld64step $a0:1, $mzero, $m1+=, 1 ; f16v8acc $a4:7 }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; fnop }
    { st64step $a6:7, $mzero, $m3+=, 1 ; fnop }
    { and $m9, $m4, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { brnz $m9, .Ladd_gen_odd ; fnop }
    // Even count: the last block, without loads past the chunk.
    { ld64step $a0:1, $mzero, $m1+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m2+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m3+=, 1 ; f16v4add $a6:7, $a0:1, $a2:3 }
    { nop ; f16v8acc $a4:7 }
    { st64step $a6:7, $mzero, $m3+=, 1 ; fnop }
    { bri .Ladd_tail ; fnop }
.Ladd_gen_odd:
    // Odd count: the last group alone, {s, 0}.
    { st64step $a4:5, $mzero, $m3+=, 1 ; f16v4add $a6:7, $azeros, $azeros }
    { bri .Ladd_tail ; f16v8acc $a4:7 }
.Ladd_fast_row:
    // Fast path, 3 bundles per two groups: each ld2xst64pace loads a and b of group g+1 and
    // stores s of group g-1 while the aux pipeline adds group g (even groups into $a4:5, odd
    // into $a6:7); one f16v8acc per block.
    { brz $m4, .Ladd_tail ; uput $FP_CLR, $a0 }
    { tapack $m10:11, $m1, $m2, $m3 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m10:11+=, $mzero, 0 ; fnop }
    { add $m9, $m4, -1 ; fnop }
    { brz $m9, .Ladd_fast_one ; fnop }
    { shr $m9, $m4, 1 ; fnop }
    { add $m9, $m9, -1 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m10:11+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { rpt $m9, 2 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m10:11+=, $mzero, 0 ; f16v4add $a6:7, $a0:1, $a2:3 }
    { nop ; f16v8acc $a4:7 }
    { ld2xst64pace $a0:3, $a6:7, $m10:11+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { and $m9, $m4, 1 ; fnop }
    { brnz $m9, .Ladd_fast_odd ; fnop }
    // Even count: store the last two groups.
    { st64pace $a4:5, $m10:11+=, $mzero, 0 ; f16v4add $a6:7, $a0:1, $a2:3 }
    { nop ; f16v8acc $a4:7 }
    { st64pace $a6:7, $m10:11+=, $mzero, 0 ; fnop }
    { bri .Ladd_tail ; fnop }
.Ladd_fast_odd:
    // Odd count: one more load (the last group), then the last block and the lone group.
    { ld2xst64pace $a0:3, $a4:5, $m10:11+=, $mzero, 0 ; f16v4add $a6:7, $a0:1, $a2:3 }
    { nop ; f16v8acc $a4:7 }
    { st64pace $a6:7, $m10:11+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64pace $a4:5, $m10:11+=, $mzero, 0 ; f16v4add $a6:7, $azeros, $azeros }
    { bri .Ladd_tail ; f16v8acc $a4:7 }
.Ladd_fast_one:
    { nop ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64pace $a4:5, $m10:11+=, $mzero, 0 ; f16v4add $a6:7, $azeros, $azeros }
    { nop ; f16v8acc $a4:7 }
.Ladd_tail:
    // The n % 4 tail of a single row (worker 5), from the tail atoms.
    { brz $m8, .Ladd_partial ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_N ; fnop }
    { shr $m11, $m11, 2 ; fnop }
    { shl $m11, $m11, 3 ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_A ; fnop }
    { ld64 $a0:1, $m10, $m11, 0 ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_B ; fnop }
    { ld64 $a2:3, $m10, $m11, 0 ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_SUM ; fnop }
    { add $m10, $m10, $m11 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { cmpeq $m11, $m8, 2 ; f16v4add $a6:7, $azeros, $azeros }
    { brnz $m11, .Ladd_tail2 ; fnop }
    { cmpeq $m11, $m8, 3 ; fnop }
    { brnz $m11, .Ladd_tail3 ; fnop }
    // One element: {s0, old upper half} into word 0.
    { ld32 $a0, $m10, $mzero, 0 ; sort4x16lo $a4, $a4, $azero }
    { nop ; swap16 $a0, $a0 }
    { nop ; sort4x16lo $a0, $a4, $a0 }
    { st32 $a0, $m10, $mzero, 0 ; setzi $a5, 0 }
    { bri .Ladd_tail_acc ; fnop }
.Ladd_tail2:
    { st32 $a4, $m10, $mzero, 0 ; setzi $a5, 0 }
    { bri .Ladd_tail_acc ; fnop }
.Ladd_tail3:
    { ld32 $a0, $m10, $mzero, 1 ; sort4x16lo $a5, $a5, $azero }
    { st32 $a4, $m10, $mzero, 0 ; swap16 $a0, $a0 }
    { nop ; sort4x16lo $a0, $a5, $a0 }
    { st32 $a0, $m10, $mzero, 1 ; fnop }
.Ladd_tail_acc:
    { nop ; f16v8acc $a4:7 }
.Ladd_partial:
    { nop ; f32v2gina $a0:1, $azeros, 0 }     // (L0, L1)
    { nop ; f32v2gina $a2:3, $azeros, 0 }     // (L2, L3)
    { nop ; f32v2gina $a4:5, $azeros, 0 }     // (L4, L5)
    { nop ; f32v2gina $a6:7, $azeros, 0 }     // (L6, L7)
    { nop ; f32v2add $a0:1, $a0:1, $a2:3 }
    { nop ; f32v2add $a4:5, $a4:5, $a6:7 }
    { nop ; f32v2add $a0:1, $a0:1, $a4:5 }
    { nop ; f32add $a0, $a0, $a1 }
    { st32 $a0, $m6, $mzero, 0 ; fnop }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; fnop }
    { add $m1, $m1, $m7 ; fnop }
    { add $m2, $m2, $m7 ; fnop }
    { add $m3, $m3, $m7 ; setzi $a0, 8 }
    { brnzdec $m5, .Ladd_row ; fnop }
    exitz $mzero
    .size add_layernorm_moments_add, . - add_layernorm_moments_add

// ------------------------------------------------------------------------------------------
// Pass 3: worker w writes the moments of rows w, w + 6, w + 12, ...
// Registers: $m0 row, $m1 rows, $m6 scratch row, $m4 moments pointer.
    .section .text.add_layernorm_moments_final
    .globl add_layernorm_moments_final
    .type add_layernorm_moments_final, @function
    .worker
    .align 8
add_layernorm_moments_final:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_ROWS ; fnop }
    { cmpult $m2, $m0, $m1 ; fnop }
    { brz $m2, .Lfinal_done ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { mul $m2, $m0, ROW_SCRATCH_BYTES ; fnop }
    { add $m6, $m6, $m2 ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_MOM ; fnop }
    { shl $m2, $m0, 3 ; fnop }
    { add $m4, $m4, $m2 ; fnop }
.Lfinal_row:
    { ld64 $a0:1, $m6, $mzero, 0 ; fnop }
    { ld64 $a2:3, $m6, $mzero, 1 ; fnop }
    { ld64 $a6:7, $m6, $mzero, 2 ; f32v2add $a0:1, $a0:1, $a2:3 }
    { ld64 $a2:3, $m6, $mzero, 3 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 4 ; f32add $a4, $a0, $a1 }
    { ld32 $a5, $mvertex_base, $mzero, V_INVN ; f32v2add $a2:3, $a2:3, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 5 ; f32mul $a4, $a4, $a5 }
    { ld32 $a0, $mvertex_base, $mzero, V_EPS ; f32v2add $a2:3, $a2:3, $a6:7 }
    { add $m0, $m0, 6 ; f32add $a2, $a2, $a3 }
    { add $m6, $m6, 6 * ROW_SCRATCH_BYTES ; f32mul $a2, $a2, $a5 }
    { cmpult $m2, $m0, $m1 ; f32add $a2, $a2, $a0 }
    { nop ; f32oorx $a5, $a2 }
    { st64step $a4:5, $mzero, $m4+=, 6 ; fnop }
    { brnz $m2, .Lfinal_row ; fnop }
.Lfinal_done:
    exitz $mzero
    .size add_layernorm_moments_final, . - add_layernorm_moments_final
