// layernorm_stats: the two statistics passes shared by the row-normalisation kernels
// (layernorm_f16, layernorm_fp8, add_layernorm_moments). Every kernel source is this file
// followed by the kernel's own file; each pass is a worker entry that the kernel's supervisor
// starts with `runall` (all six workers share the vertex), then waits for with `sync 2`.
//
// Shared vertex layout (32-bit words at $mvertex_base):
//   0: x        LayerNorm: input rows (f16)       AddLayerNormMoments: a (f16)
//   1:          LayerNorm: gamma (f32[n])          AddLayerNormMoments: b (f16)
//   2:          LayerNorm: beta (f32[n])           AddLayerNormMoments: sum_out (f16)
//   3:          LayerNorm: out                     AddLayerNormMoments: moments_out
//   4: scratch  48 bytes per row, 8-byte aligned: words 0..5 = the six workers' partial sums
//               of the row, words 6..11 = their partial sums of squared deviations
//   5: rows     number of rows (>= 1)
//   6: n        row width in elements (>= 1); rows > 1 needs n % 4 == 0 (rows are contiguous,
//               so every row then starts 8-byte aligned)
//   7: inv_n    f32 bits of 1/n (RNE), the host's division
//   8: eps      f32 bits of epsilon
//   9+2w, 10+2w: first 4-element group and group count of worker w (the split table of the
//               n/4 groups of a row, `split_words`); the n % 4 tail elements (single row only)
//               belong to worker 5, which owns the last groups.
//  21: LayerNorm: dev, the optional deviation buffer (see pass 2); AddLayerNormMoments: flags.
// Worker state is not assumed: every pass sets the registers, $TAS and the FP8 CSRs it uses and
// zeroes the accumulators ($FP_CLR.ZAACC) before each row's sums.
//
// Memory: the statistics input (x, or sum_out for add_layernorm_moments) is read 8 bytes at a
// time; the tail atom of a width that is not a multiple of 4 is read whole (up to 6 bytes past
// the row, never written). Any region, no element constraints (one access per bundle).
//
// Numerics (FP32 throughout, every operation RNE; mirrored bit for bit by the Rust reference):
// * Mean partial of worker w for a row: the accumulators start at +0; each of the worker's
//   groups (x0, x1, x2, x3) in order does AACC[2j] += xj (f16v8acc with the upper half of the
//   quad zero: one accumulator a half, each widened exactly, one rounding per addition;
//   AACC[8..14] add +0). The tail group has its missing lanes set to 0. The partial is
//   (L0 + L2) + (L1 + L3) with L0..L3 = AACC[0], [2], [4], [6].
// * Row sum = ((P0 + P2) + P4) + ((P1 + P3) + P5) over the six partials; mean = sum * inv_n
//   (the ISA has no f32 divide). For a constant row the sum n*c is exact, and sum * inv_n
//   gives c back exactly for every f16 c at n = 1152, 1728, 2152, 4304 (and most n; not all,
//   e.g. n = 7), so such rows have variance 0 and rstd = f32oorx(eps).
// * Variance partial of worker w: AACC[0,2,4,6] start at +0; for each group, d_i = f32(x_i) -
//   mean, and AACC[2i] += d_i * d_i (product rounded, then the sum rounded; f32v4sqacc). Tail
//   lanes past n are 0. The partial is (L0 + L2) + (L1 + L3).
// * Row sum of squares: the same combine as the sums; var = sumsq * inv_n (the consumers add
//   eps and take f32oorx: rstd = 1/sqrt(var + eps)).

// three_passes FIRST, SECOND, THIRD: the supervisor of a row-normalisation kernel (after its
// `.supervisor` label): the three worker passes in turn over all six workers, each followed by
// `sync 2`, then `br $m10`.
.macro three_passes first, second, third
    mov $m1, $mvertex_base
    setzi $m0, \first
    setzi $m3, \second
    setzi $m4, \third
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m3, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m4, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
.endm

#define V_X       0
#define V_SUM     2
#define V_SCRATCH 4
#define V_ROWS    5
#define V_N       6
#define V_INVN    7
#define V_SPLIT   9
#define ROW_SCRATCH_BYTES 48

// ------------------------------------------------------------------------------------------
// Pass 1 (LayerNorm): each worker's partial sum of every row, from x (word 0).
// Registers: $m0 worker, $m3 group count, $m4 x pointer, $m5 rows - 1, $m6 this worker's mean
// slot of the row, $m7 x advance from the end of the chunk to the next row's chunk, $m8 tail
// elements (worker 5, single row), $m9 count - 1 for rpt; $a0:3 = {group, 0, 0}, $a5 = 8.
    .section .text.layernorm_mean
    .globl layernorm_mean
    .type layernorm_mean, @function
    .worker
    .align 8
layernorm_mean:
    { get $m0, $WSR ; setzi $a2, 0 }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; setzi $a3, 0 }
    { shl $m1, $m0, 3 ; setzi $a5, 8 }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }
    { ld32 $m3, $mvertex_base, $m1, V_SPLIT+1 ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_X ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { shl $m2, $m2, 3 ; fnop }
    { add $m4, $m4, $m2 ; fnop }
    { shl $m1, $m0, 2 ; fnop }
    { add $m6, $m6, $m1 ; fnop }
    { and $m8, $m7, 3 ; fnop }
    { cmpeq $m1, $m0, 5 ; fnop }
    { mul $m8, $m8, $m1 ; fnop }
    { shl $m7, $m7, 1 ; fnop }
    { shl $m1, $m3, 3 ; fnop }
    { sub $m7, $m7, $m1 ; fnop }
    { add $m9, $m3, -1 ; fnop }
    { add $m5, $m5, -1 ; fnop }
.Lmean_row:
    { brz $m3, .Lmean_tail ; uput $FP_CLR, $a5 }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { rpt $m9, 0 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; f16v8acc $a0:3 }
    { nop ; f16v8acc $a0:3 }
.Lmean_tail:
    { brz $m8, .Lmean_partial ; fnop }
    { ld64 $a0:1, $m4, $mzero, 0 ; fnop }
    { cmpeq $m1, $m8, 2 ; fnop }
    { brnz $m1, .Lmean_tail2 ; fnop }
    { cmpeq $m1, $m8, 3 ; fnop }
    { brnz $m1, .Lmean_tail3 ; fnop }
    { nop ; sort4x16lo $a0, $a0, $azero }
.Lmean_tail2:
    { bri .Lmean_tail_acc ; setzi $a1, 0 }
.Lmean_tail3:
    { nop ; sort4x16lo $a1, $a1, $azero }
.Lmean_tail_acc:
    { nop ; f16v8acc $a0:3 }
.Lmean_partial:
    { nop ; f32v2gina $a0:1, $azeros, 0 }
    { nop ; f32v2gina $a6:7, $azeros, 0 }
    { nop ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f32add $a0, $a0, $a1 }
    { st32 $a0, $m6, $mzero, 0 ; fnop }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; fnop }
    { add $m4, $m4, $m7 ; fnop }
    { brnzdec $m5, .Lmean_row ; fnop }
    exitz $mzero
    .size layernorm_mean, . - layernorm_mean

// ------------------------------------------------------------------------------------------
// Pass 2: each worker's partial sum of squared deviations of every row. Two entries that
// differ only in where the data comes from: `norm_var_word0` (x, word 0: LayerNorm) and
// `norm_var_word2` (sum_out, word 2: AddLayerNormMoments). The LayerNorm entry also reads
// word 21, `dev`: when it is not 0, it is a buffer of rows x 4*ceil(n/4) f32 (8-byte aligned)
// where this pass stores every deviation d_i = f32(x_i) - mean (the tail group's four lanes
// whole, the lanes past n unspecified), so that the normalising pass need not recompute them.
// Registers: $m0 worker, $m3 group count, $m4 data pointer, $m5 rows - 1, $m6 scratch row,
// $m7 data advance to the next row's chunk, $m8 tail elements, $m9 count - 1, $m10 byte offset
// of this worker's variance slot in a scratch row, $m11 deviation pointer (0: none).
// ARF: $a0:3 the four deviations / squares, $a4:5 = (mean, mean), $a6:7 the loaded group.
#define V_DEV 21
    .section .text.norm_var
    .globl norm_var_word0
    .type norm_var_word0, @function
    .globl norm_var_word2
    .type norm_var_word2, @function
    .worker
    .align 8
norm_var_word0:
    { ld32 $m4, $mvertex_base, $mzero, V_X ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_DEV ; fnop }
    { bri .Lvar_common ; fnop }
norm_var_word2:
    { ld32 $m4, $mvertex_base, $mzero, V_SUM ; fnop }
    { setzi $m11, 0 ; fnop }
.Lvar_common:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }
    { ld32 $m3, $mvertex_base, $m1, V_SPLIT+1 ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { shl $m2, $m2, 3 ; fnop }
    { add $m4, $m4, $m2 ; fnop }
    { brz $m11, .Lvar_nodev ; fnop }
    { add $m11, $m11, $m2 ; fnop }
    { add $m11, $m11, $m2 ; fnop }
.Lvar_nodev:
    { shl $m10, $m0, 2 ; fnop }
    { add $m10, $m10, 24 ; fnop }
    { and $m8, $m7, 3 ; fnop }
    { cmpeq $m1, $m0, 5 ; fnop }
    { mul $m8, $m8, $m1 ; fnop }
    { shl $m7, $m7, 1 ; fnop }
    { shl $m1, $m3, 3 ; fnop }
    { sub $m7, $m7, $m1 ; fnop }
    { add $m9, $m3, -1 ; fnop }
    { add $m5, $m5, -1 ; fnop }
.Lvar_row:
    // The row mean from the six partial sums, as (mean, mean) in $a4:5.
    { ld64 $a0:1, $m6, $mzero, 0 ; setzi $a6, 8 }
    { ld64 $a2:3, $m6, $mzero, 1 ; uput $FP_CLR, $a6 }
    { ld64 $a4:5, $m6, $mzero, 2 ; fnop }
    { ld32 $a7, $mvertex_base, $mzero, V_INVN ; f32v2add $a0:1, $a0:1, $a2:3 }
    { nop ; f32v2add $a0:1, $a0:1, $a4:5 }
    { nop ; f32add $a4, $a0, $a1 }
    { nop ; f32mul $a4, $a4, $a7 }
    { brz $m3, .Lvar_tail ; mov $a5, $a4 }
    { ld64step $a6:7, $mzero, $m4+=, 1 ; fnop }
    { brnz $m11, .Lvar_dev ; fnop }
    // f32v4sqacc squares each deviation (rounded to f32) and adds it (rounded): the same two
    // roundings as f32v2mul then f32v4acc, in two bundles fewer.
    { rpt $m9, 4 ; fnop }
    { nop ; f16v2tof32 $a0:1, $a6 }
    { ld64step $a6:7, $mzero, $m4+=, 1 ; f16v2tof32 $a2:3, $a7 }
    { nop ; f32v2sub $a0:1, $a0:1, $a4:5 }
    { nop ; f32v2sub $a2:3, $a2:3, $a4:5 }
    { nop ; f32v4sqacc $a0:3 }
    // The last group: the same without the load.
    { nop ; f16v2tof32 $a0:1, $a6 }
    { nop ; f16v2tof32 $a2:3, $a7 }
    { nop ; f32v2sub $a0:1, $a0:1, $a4:5 }
    { nop ; f32v2sub $a2:3, $a2:3, $a4:5 }
    { bri .Lvar_tail ; f32v4sqacc $a0:3 }
.Lvar_dev:
    // The same loop, storing each deviation pair before it is squared.
    { rpt $m9, 4 ; fnop }
    { nop ; f16v2tof32 $a0:1, $a6 }
    { ld64step $a6:7, $mzero, $m4+=, 1 ; f16v2tof32 $a2:3, $a7 }
    { nop ; f32v2sub $a0:1, $a0:1, $a4:5 }
    { st64step $a0:1, $mzero, $m11+=, 1 ; f32v2sub $a2:3, $a2:3, $a4:5 }
    { st64step $a2:3, $mzero, $m11+=, 1 ; f32v4sqacc $a0:3 }
    { nop ; f16v2tof32 $a0:1, $a6 }
    { nop ; f16v2tof32 $a2:3, $a7 }
    { nop ; f32v2sub $a0:1, $a0:1, $a4:5 }
    { st64step $a0:1, $mzero, $m11+=, 1 ; f32v2sub $a2:3, $a2:3, $a4:5 }
    { st64step $a2:3, $mzero, $m11+=, 1 ; f32v4sqacc $a0:3 }
.Lvar_tail:
    { brz $m8, .Lvar_partial ; fnop }
    { ld64 $a6:7, $m4, $mzero, 0 ; fnop }
    { nop ; f16v2tof32 $a0:1, $a6 }
    { nop ; f16v2tof32 $a2:3, $a7 }
    { nop ; f32v2sub $a0:1, $a0:1, $a4:5 }
    { brz $m11, .Lvar_tail_square ; f32v2sub $a2:3, $a2:3, $a4:5 }
    { st64 $a0:1, $m11, $mzero, 0 ; fnop }
    { st64 $a2:3, $m11, $mzero, 1 ; fnop }
.Lvar_tail_square:
    { nop ; f32v2mul $a0:1, $a0:1, $a0:1 }
    { cmpeq $m1, $m8, 3 ; f32v2mul $a2:3, $a2:3, $a2:3 }
    { brnz $m1, .Lvar_tail_acc ; setzi $a3, 0 }
    { cmpeq $m1, $m8, 2 ; fnop }
    { brnz $m1, .Lvar_tail_acc ; setzi $a2, 0 }
    { nop ; setzi $a1, 0 }
.Lvar_tail_acc:
    { nop ; f32v4acc $a0:3 }
.Lvar_partial:
    { nop ; f32v2gina $a0:1, $azeros, 0 }
    { add $m4, $m4, $m7 ; f32v2gina $a2:3, $azeros, 0 }
    { nop ; f32v2add $a0:1, $a0:1, $a2:3 }
    { brz $m11, .Lvar_store ; f32add $a0, $a0, $a1 }
    { add $m11, $m11, $m7 ; fnop }
    { add $m11, $m11, $m7 ; fnop }
.Lvar_store:
    { st32 $a0, $m6, $m10, 0 ; fnop }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; fnop }
    { brnzdec $m5, .Lvar_row ; fnop }
    exitz $mzero
    .size norm_var_word0, . - norm_var_word0
