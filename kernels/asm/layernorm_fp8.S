// layernorm_fp8: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of an f16
// matrix, written directly as packed FP8 (one byte per element). Assembled after
// layernorm_stats.S (statistics passes and shared vertex layout documented there); the same
// three-pass supervisor scheme as layernorm_f16.
//
// Vertex: 0 x (f16, rows x n), 1 gamma (f32[n]), 2 beta (f32[n]), 3 out (FP8, rows x n bytes),
// 4 scratch (48 bytes per row), 5 rows, 6 n, 7 inv_n (f32 bits), 8 eps (f32 bits), 9..20 the
// split table of the n/4 groups, 21 dev (0 or the deviation buffer, as in layernorm_f16),
// 22 nfmt: the $FP_NFMT value (2 = F143, 0 = F152), 23 scl: the $FP_SCL value (6-bit two's complement s: the FP8 code encodes y * 2^s, i.e. s is
// the negated tensor scale). NaN-on-overflow comes from $FP_CTL.NANOO, which each worker
// inherits from the supervisor's $FP_ICTL (set by the caller).
// Memory: x, gamma, beta, scratch 8-byte aligned; out 4-byte aligned (8 in the checker);
// rows > 1 needs n % 4 == 0. Any region, no element constraints. Reads up to 6 bytes past x
// and 12 past gamma/beta when n % 4 != 0; the n % 4 tail bytes of a single row are written with
// a read-modify-write of the last 32-bit word (bytes past the row keep their values).
//
// Numerics: as layernorm_f16 up to the f16 value y16 = f16_rne(t * gamma + beta); then the FP8
// code = f16v8tof8(y16): y16 * 2^scl rounded once (RNE) to the format; overflow -> NaN (0x80)
// if NANOO else saturation; NaN/inf -> 0x80 (numerics::f16_to_fp8). The double rounding
// f32 -> f16 -> FP8 is part of the definition.
// Loops: 12 bundles per group of 4 from x, 8 from the deviations: the layernorm_f16 loops plus
// one f16v8tof8, which converts the group's four halves ($a0:1) and, harmlessly, the four
// unrelated halves of $a2:3 into $a1; $a0 (four FP8 bytes) is stored with st32.

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
#define V_NFMT    22
#define V_SCL     23
#define ROW_SCRATCH_BYTES 48

    .section .text.layernorm_fp8
    .globl layernorm_fp8
    .type layernorm_fp8, @function
    .supervisor
    .align 8
layernorm_fp8:
    setzi $m2, TMEM_REGION0_BASE_ADDR
    sub $m1, $mvertex_base, $m2
    setzi $m0, layernorm_mean
    setzi $m3, norm_var_word0
    setzi $m4, layernorm_norm_fp8
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m3, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    runall $m4, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    .size layernorm_fp8, . - layernorm_fp8

    .section .text.layernorm_norm_fp8
    .globl layernorm_norm_fp8
    .type layernorm_norm_fp8, @function
    .worker
    .align 8
layernorm_norm_fp8:
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
    { shl $m8, $m2, 2 ; fnop }
    { add $m4, $m4, $m8 ; fnop }
    { shl $m8, $m9, 2 ; fnop }
    { sub $m8, $m11, $m8 ; fnop }
    { shl $m7, $m11, 1 ; fnop }
    { shl $m11, $m9, 3 ; fnop }
    { sub $m7, $m7, $m11 ; fnop }
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
    { ld32 $a0, $mvertex_base, $mzero, V_NFMT ; fnop }
    { ld32 $a1, $mvertex_base, $mzero, V_SCL ; uput $FP_NFMT, $a0 }
    { shl $m10, $m2, 4 ; uput $FP_SCL, $a1 }
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
    { rpt $m9, 11 ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { nop ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a6:7, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld32step $a6, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { nop ; f32v4tof16 $a0:1, $a0:3 }
    { nop ; f16v8tof8 $a0:1, $a0:3 }
    { st32step $a0, $mzero, $m4+=, 1 ; f16v2tof32 $a6:7, $a6 }
    { nop ; f32v2sub $a6:7, $a6:7, $a4:5 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain: the last group (its odd pair leaves the pipeline through a zero push).
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { add $m1, $m1, $m7 ; f32v2axpy $a2:3, $azeros, $azeros }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    { nop ; f16v8tof8 $a0:1, $a0:3 }
    { st32step $a0, $mzero, $m4+=, 1 ; fnop }
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
    { rpt $m9, 7 ; fnop }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m1+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m2+=, 1 ; f32v2axpy $a2:3, $a4:5, $azeros }
    { ld64step $a4:5, $mzero, $m3+=, 1 ; f32v2mul $a2:3, $a2:3, $a6:7 }
    { ld64step $a6:7, $mzero, $m1+=, 1 ; f32v2add $a2:3, $a2:3, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v4tof16 $a0:1, $a0:3 }
    { nop ; f16v8tof8 $a0:1, $a0:3 }
    { st32step $a0, $mzero, $m4+=, 1 ; f32v2axpy $a0:1, $a6:7, $azeros }
    // Drain.
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2mul $a0:1, $a0:1, $a4:5 }
    { ld64step $a4:5, $mzero, $m2+=, 1 ; f32v2add $a0:1, $a0:1, $a6:7 }
    { ld64step $a6:7, $mzero, $m3+=, 1 ; f32v2axpy $a2:3, $azeros, $azeros }
    { add $m1, $m1, $m7 ; f32v2mul $a2:3, $a2:3, $a4:5 }
    { sub $m2, $m2, $m10 ; f32v2add $a2:3, $a2:3, $a6:7 }
    { sub $m3, $m3, $m10 ; f32v4tof16 $a0:1, $a0:3 }
    { nop ; f16v8tof8 $a0:1, $a0:3 }
    { st32step $a0, $mzero, $m4+=, 1 ; fnop }
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
    { shl $m1, $m11, 2 ; fnop }
    { add $m4, $m4, $m1 ; fnop }
    { shl $m10, $m11, 3 ; fnop }
    // x is at 8 bytes per group, the deviations at 16: callers add $m10 or twice it.
    { br $m7 ; fnop }
    // Store the first tail elements of the finished group in $a0:3.
.Ltail_store:
    { nop ; f32v4tof16 $a0:1, $a0:3 }
    { nop ; f16v8tof8 $a0:1, $a0:3 }
    // Keep bytes 0 .. tail-1 of the new word and the rest of the old one.
    { atom $m11, $a0 ; fnop }
    { ld32 $m10, $m4, $mzero, 0 ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { setzi $m2, 1 ; fnop }
    { shl $m2, $m2, $m1 ; fnop }
    { add $m2, $m2, -1 ; fnop }
    { and $m11, $m11, $m2 ; fnop }
    { andc $m10, $m10, $m2 ; fnop }
    { or $m11, $m11, $m10 ; fnop }
    { st32 $m11, $m4, $mzero, 0 ; fnop }
.Lnorm_done:
    exitz $mzero
    .size layernorm_norm_fp8, . - layernorm_norm_fp8
