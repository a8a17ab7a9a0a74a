// layernorm_f16: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of an f16
// matrix, f16 out. Assembled after layernorm_stats.S (the statistics passes and the shared
// vertex layout are documented there).
//
// Supervisor entry `layernorm_f16` ($mvertex_base = the vertex). It runs three worker passes
// over all six workers, each followed by `sync 2`, then returns with `br $m10`:
//   1. layernorm_mean      partial sums of each row (scratch words 0..5 of the row)
//   2. norm_var_word0      partial sums of squared deviations (scratch words 6..11)
//   3. layernorm_norm_f16  every worker normalises its groups of every row
// Workers cannot wait for each other, so the passes exchange their partials through the
// scratch buffer, and the supervisor's `sync` is the barrier between them.
//
// Vertex (see layernorm_stats.S): 0 x (f16, rows x n), 1 gamma (f32[n]), 2 beta (f32[n]),
// 3 out (f16, rows x n), 4 scratch (48 bytes per row), 5 rows, 6 n, 7 inv_n (f32 bits of 1/n),
// 8 eps (f32 bits), 9..20 the split table of the n/4 groups, 21 dev: 0, or a scratch buffer of
// rows x 4*ceil(n/4) f32 for the deviations (pass 2 stores them, pass 3 reads them: 7 instead
// of 11 bundles per group in pass 3, for 16 bytes of scratch per element group).
// Memory: every buffer 8-byte aligned; rows > 1 needs n % 4 == 0. Any region, no element
// constraints (one memory access per bundle). Reads up to 6 bytes past the end of x and 12
// past gamma/beta when n % 4 != 0 (never written). The n % 4 tail of a single row is written
// with a read-modify-write of its last 32-bit word, keeping the bytes past the row as they were.
//
// Numerics of the normalising pass (all f32 RNE, mirrored by the Rust reference):
//   mean  = (((P0 + P2) + P4) + ((P1 + P3) + P5)) * inv_n
//   var   = (((V0 + V2) + V4) + ((V1 + V3) + V5)) * inv_n
//   rstd  = f32oorx(var + eps)          (1/sqrt in f64, rounded once to f32: numerics::f32_oorx)
//   d     = f32(x) - mean
//   t     = rstd * d + 0                (f32v2axpy with $TAS = rstd: two roundings, -0 -> +0)
//   y     = f16_rne(t * gamma + beta)   (multiply, then add, each rounded)
//
// Normalising loop from x, 11 bundles per group of 4: x is read two halves at a time into $a6,
// gamma and beta pairs into $a6:7; the f32v2axpy accumulator pipeline (1 pair deep) holds the
// scaled pair between bundles, so pair j's multiply by rstd comes out when pair j+1 goes in.
// From the deviations, 7 bundles per group: deviation, gamma and beta pairs alternate between
// $a4:5 and $a6:7, every bundle has a load or the store beside its aux instruction.
// Registers: $m0 tail elements, $m1 x or deviations, $m2 gamma, $m3 beta, $m4 out, $m5 rows - 1,
// $m6 scratch row, $m7 x/deviation advance to the next row, $m8 out advance, $m9 count - 1,
// $m10 16 * count, $m11 the dev word.
// ARF: $a0:1 even pair / result, $a2:3 odd pair, $a4:5 (mean, mean) or loads, $a6:7 loads.

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
#define V_DEV     21
#define ROW_SCRATCH_BYTES 48

    .section .text.layernorm_f16
    .globl layernorm_f16
    .type layernorm_f16, @function
    .supervisor
    .align 8
layernorm_f16:
    setzi $m2, TMEM_REGION0_BASE_ADDR
    sub $m1, $mvertex_base, $m2
    setzi $m0, layernorm_mean
    setzi $m3, norm_var_word0
    setzi $m4, layernorm_norm_f16
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m3, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m4, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    .size layernorm_f16, . - layernorm_f16

    .section .text.layernorm_norm_f16
    .globl layernorm_norm_f16
    .type layernorm_norm_f16, @function
    .worker
    .align 8
layernorm_norm_f16:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }
    { ld32 $m9, $mvertex_base, $m1, V_SPLIT+1 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_N ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_ROWS ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, V_SCRATCH ; fnop }
    { and $m10, $m11, 3 ; fnop }
    { cmpeq $m1, $m0, 5 ; fnop }
    { mul $m0, $m10, $m1 ; fnop }
    { shl $m10, $m2, 3 ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_OUT ; fnop }
    { add $m4, $m4, $m10 ; fnop }
    { shl $m7, $m11, 1 ; fnop }
    { shl $m11, $m9, 3 ; fnop }
    { sub $m7, $m7, $m11 ; fnop }
    { mov $m8, $m7 ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_DEV ; fnop }
    { brz $m1, .Lnorm_xptr ; fnop }
    // Deviations: 16 bytes per group, twice the x offsets.
    { add $m1, $m1, $m10 ; fnop }
    { add $m1, $m1, $m10 ; fnop }
    { add $m7, $m7, $m7 ; fnop }
    { bri .Lnorm_ptrs ; fnop }
.Lnorm_xptr:
    { ld32 $m1, $mvertex_base, $mzero, V_X ; fnop }
    { add $m1, $m1, $m10 ; fnop }
.Lnorm_ptrs:
    { shl $m10, $m2, 4 ; fnop }
    { ld32 $m2, $mvertex_base, $mzero, V_GAMMA ; fnop }
    { add $m2, $m2, $m10 ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_BETA ; fnop }
    { add $m3, $m3, $m10 ; fnop }
    { shl $m10, $m9, 4 ; fnop }
    { add $m9, $m9, -1 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_DEV ; fnop }
    { add $m5, $m5, -1 ; fnop }
    { brnz $m11, .Ldev_row ; fnop }
.Lnorm_row:
    // mean and rstd of the row from the twelve partials.
    { ld64 $a0:1, $m6, $mzero, 0 ; fnop }
    { ld64 $a2:3, $m6, $mzero, 1 ; fnop }
    { ld64 $a6:7, $m6, $mzero, 2 ; f32v2add $a0:1, $a0:1, $a2:3 }
    { ld64 $a2:3, $m6, $mzero, 3 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 4 ; f32add $a4, $a0, $a1 }
    { ld32 $a5, $mvertex_base, $mzero, V_INVN ; f32v2add $a2:3, $a2:3, $a6:7 }
    { ld64 $a6:7, $m6, $mzero, 5 ; f32mul $a4, $a4, $a5 }
    { ld32 $a0, $mvertex_base, $mzero, V_EPS ; f32v2add $a2:3, $a2:3, $a6:7 }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; f32add $a2, $a2, $a3 }
    { nop ; f32mul $a2, $a2, $a5 }
    { nop ; f32add $a2, $a2, $a0 }
    { brneg $m9, .Lnorm_nogroups ; f32oorx $a2, $a2 }
    { ld32step $a6, $mzero, $m1+=, 1 ; uput $TAS, $a2 }
    { nop ; mov $a5, $a4 }
    // Pipeline fill: pairs 0 and 1 in; pair 0 comes out scaled.
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { rpt $m9, 10 ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a6:7, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { nop ; f32v4tof16 $a0:1, $a0:3 }
    { st64step $a0:1, $mzero, $m4+=, 1 ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain: the last group (its odd pair leaves the pipeline through a zero push).
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { add $m1, $m1, $m7 ; f32v2axpy $a2:3, $azeros, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    { st64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { add $m4, $m4, $m8 ; fnop }
.Lnorm_next:
    { brnzdec $m5, .Lnorm_row ; fnop }
    // The n % 4 tail of a single row (worker 5): one more group on the tail atom, then a
    // partial store. $a4:5 and $TAS still hold the row's mean and rstd.
    { brz $m0, .Lnorm_done ; fnop }
    { call $m7, .Ltail_ptrs ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_X ; fnop }
    { add $m1, $m1, $m10 ; fnop }
    { ld32step $a6, $mzero, $m1+=, 1 ; fnop }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f32v2axpy $a2:3, $azeros, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { bri .Ltail_store ; f32v2add $a2:3, $a2:3, $a6:7 }
.Lnorm_nogroups:
    { nop ; uput $TAS, $a2 }
    { bri .Lnorm_next ; mov $a5, $a4 }
.Ldev_row:
    // rstd of the row from the six partial sums of squares (the mean is in the deviations).
    { ld64 $a2:3, $m6, $mzero, 3 ; fnop }
    { ld64 $a6:7, $m6, $mzero, 4 ; fnop }
    { ld64 $a0:1, $m6, $mzero, 5 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { ld32 $a5, $mvertex_base, $mzero, V_INVN ; f32v2add $a2:3, $a2:3, $a0:1 }
    { ld32 $a0, $mvertex_base, $mzero, V_EPS ; f32add $a2, $a2, $a3 }
    { add $m6, $m6, ROW_SCRATCH_BYTES ; f32mul $a2, $a2, $a5 }
    { nop ; f32add $a2, $a2, $a0 }
    { brneg $m9, .Ldev_nogroups ; f32oorx $a2, $a2 }
    // Fill: deviation pairs 0 and 1 in, pair 0 out scaled; gamma pair 0 loaded.
    { ld64step $a6:7, $mzero, $m1+=, 1 ; uput $TAS, $a2 }
    { ld64step $a4:5, $mzero, $m1+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a4:5, $azeros }
    { rpt $m9, 6 ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a4:5, $azeros }
    { ld64step $a4:5, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld64step $a6:7, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v4tof16 $a0:1, $a0:3 }
    { st64step $a0:1, $mzero, $m4+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain.
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2axpy $a2:3, $azeros, $azeros }
    { add $m1, $m1, $m7 ; f32v2mul $a2:3, $a2:3, $a4:5 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    { st64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { add $m4, $m4, $m8 ; fnop }
.Ldev_next:
    { brnzdec $m5, .Ldev_row ; fnop }
    { brz $m0, .Lnorm_done ; fnop }
    { call $m7, .Ltail_ptrs ; fnop }
    { ld32 $m1, $mvertex_base, $mzero, V_DEV ; fnop }
    { add $m1, $m1, $m10 ; fnop }
    { add $m1, $m1, $m10 ; fnop }
    { ld64step $a6:7, $mzero, $m1+=, 1 ; fnop }
    { ld64step $a4:5, $mzero, $m1+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a4:5, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2axpy $a2:3, $azeros, $azeros }
    { nop ; f32v2mul $a2:3, $a2:3, $a4:5 }
    { bri .Ltail_store ; f32v2add $a2:3, $a2:3, $a6:7 }
.Ldev_nogroups:
    { bri .Ldev_next ; uput $TAS, $a2 }
    // Tail pointers: $m2, $m3 = gamma, beta at group n/4, $m4 = out there, $m10 = 16 * (n/4)
    // (the offset of the tail group in the deviations), $m11 = 8 * (n/4). Returns to $m7.
.Ltail_ptrs:
    { ld32 $m11, $mvertex_base, $mzero, V_N ; fnop }
    { shr $m11, $m11, 2 ; fnop }
    { shl $m10, $m11, 4 ; fnop }
    { ld32 $m2, $mvertex_base, $mzero, V_GAMMA ; fnop }
    { add $m2, $m2, $m10 ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_BETA ; fnop }
    { add $m3, $m3, $m10 ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_OUT ; fnop }
    { shl $m1, $m11, 3 ; fnop }
    { add $m4, $m4, $m1 ; fnop }
    { shl $m10, $m11, 3 ; fnop }
    // x is at 8 bytes per group, the deviations at 16: callers add $m10 or twice it.
    { br $m7 ; fnop }
    // Store the first tail elements of the finished group in $a0:3.
.Ltail_store:
    { cmpeq $m11, $m0, 1 ; f32v4tof16 $a0:1, $a0:3 }
    { brnz $m11, .Lnorm_tail1 ; fnop }
    { st32 $a0, $m4, $mzero, 0 ; fnop }
    { cmpeq $m11, $m0, 2 ; fnop }
    { brnz $m11, .Lnorm_done ; fnop }
    { ld32 $a2, $m4, $mzero, 1 ; fnop }
    { nop ; swap16 $a2, $a2 }
    { nop ; sort4x16lo $a1, $a1, $a2 }
    { st32 $a1, $m4, $mzero, 1 ; fnop }
    { bri .Lnorm_done ; fnop }
.Lnorm_tail1:
    { ld32 $a2, $m4, $mzero, 0 ; fnop }
    { nop ; swap16 $a2, $a2 }
    { nop ; sort4x16lo $a0, $a0, $a2 }
    { st32 $a0, $m4, $mzero, 0 ; fnop }
.Lnorm_done:
    exitz $mzero
    .size layernorm_norm_f16, . - layernorm_norm_f16
