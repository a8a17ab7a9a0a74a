// layernorm_body: the code shared by layernorm_f16.S and layernorm_fp8.S (the supervisor and
// the normalising pass; layernorm_f16.S describes it). Each kernel's source is
// `layernorm_stats.S + its header + this file` (kernels/src/norm/layernorm.rs); the headers
// define the entry names and the places where the output format makes the code differ:
//   OUT_POINTER, OUT_ADVANCE   worker set-up of the out pointer $m4 and its row advance $m8
//   LOAD_FORMAT, PUT_SCALE     the FP8 format and scale CSRs (nothing for f16)
//   CONVERT_OUT, STORE_OUT     after f32v4tof16: the conversion of a group and its store
//   CONVERT_BUNDLES            bundles in CONVERT_OUT (the rpt loops' lengths)
//   OUT_GROUP_SHIFT            log2 of the output bytes per group of 4
//   TAIL_STORE                 the n % 4 tail of a single row
// ==== shared code of layernorm_f16 and layernorm_fp8 ====

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

    .section K_SUP_TEXT
    .globl K_SUP
    .type K_SUP, @function
    .supervisor
    .align 8
K_SUP:
    three_passes layernorm_mean, norm_var_word0, K_NORM
    .size K_SUP, . - K_SUP

    .section K_NORM_TEXT
    .globl K_NORM
    .type K_NORM, @function
    .worker
    .align 8
K_NORM:
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
    OUT_POINTER
    { shl $m7, $m11, 1 ; fnop }
    { shl $m11, $m9, 3 ; fnop }
    { sub $m7, $m7, $m11 ; fnop }
    OUT_ADVANCE
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
    LOAD_FORMAT
    { shl $m10, $m2, 4 ; PUT_SCALE }
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
    { rpt $m9, 10 + CONVERT_BUNDLES ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a6:7, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { nop ; f32v4tof16 $a0:1, $a0:3 }
    CONVERT_OUT
    { STORE_OUT ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain: the last group (its odd pair leaves the pipeline through a zero push).
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { add $m1, $m1, $m7 ; f32v2axpy $a2:3, $azeros, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    CONVERT_OUT
    { STORE_OUT ; fnop }
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
    { rpt $m9, 6 + CONVERT_BUNDLES ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a4:5, $azeros }
    { ld64step $a4:5, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld64step $a6:7, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v4tof16 $a0:1, $a0:3 }
    CONVERT_OUT
    { STORE_OUT ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain.
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2axpy $a2:3, $azeros, $azeros }
    { add $m1, $m1, $m7 ; f32v2mul $a2:3, $a2:3, $a4:5 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    CONVERT_OUT
    { STORE_OUT ; fnop }
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
    { shl $m1, $m11, OUT_GROUP_SHIFT ; fnop }
    { add $m4, $m4, $m1 ; fnop }
    { shl $m10, $m11, 3 ; fnop }
    // x is at 8 bytes per group, the deviations at 16: callers add $m10 or twice it.
    { br $m7 ; fnop }
    // Store the first tail elements of the finished group in $a0:3.
.Ltail_store:
    TAIL_STORE
.Lnorm_done:
    exitz $mzero
    .size K_NORM, . - K_NORM
