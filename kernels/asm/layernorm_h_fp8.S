// layernorm_h_fp8: layernorm_h_f16 written directly as packed FP8 (one byte per element): the
// f16 value y of layernorm_h_f16, then f16v8tof8: y * 2^scl rounded once (RNE) to the format;
// overflow -> NaN (0x80) if NANOO else saturation; NaN/inf -> 0x80 (numerics::f16_to_fp8).
// The kernel's source is layernorm_stats.S, this header, then layernorm_h_body.S.
//
// Vertex: as layernorm_h_f16 with 3 out (FP8, rows x n bytes, 4-byte aligned), then 22 nfmt:
// the $FP_NFMT value (2 = F143, 0 = F152), 23 scl: the $FP_SCL value (6-bit two's complement).
// NaN-on-overflow comes from $FP_CTL.NANOO, which each worker inherits from the supervisor's
// $FP_ICTL. The conversion reads gamma's four halves beside the group's as its upper half
// (their codes are not stored).

#define V_NFMT    22
#define V_SCL     23

#define K_SUP           layernorm_h_fp8
#define K_SUP_TEXT      .text.layernorm_h_fp8
#define K_NORM          layernorm_h_norm_fp8
#define K_NORM_TEXT     .text.layernorm_h_norm_fp8
#define K_VAR           layernorm_h_var_fp8
#define K_VAR_TEXT      .text.layernorm_h_var_fp8
// Worker set-up: out += 4 bytes per group before the worker's first; the out advance to the
// next row is n - 4 count, half the x advance.
#define OUT_POINTER                                           \
    { shr $m8, $m10, 1 ; fnop } ;                             \
    { add $m4, $m4, $m8 ; fnop }
#define OUT_ADVANCE     { shr $m8, $m7, 1 ; fnop }
#define LOAD_FORMAT                                           \
    { ld32 $a0, $mvertex_base, $mzero, V_NFMT ; fnop } ;      \
    { ld32 $a1, $mvertex_base, $mzero, V_SCL ; uput $FP_NFMT, $a0 }
#define PUT_SCALE       uput $FP_SCL, $a1
#define CONVERT_OUT     { nop ; f16v8tof8 $a0:1, $a0:3 }
#define CONVERT_BUNDLES 1
#define STORE_OUT       st32step $a0, $mzero, $m4+=, 1
// The normalising pass reads x (word 0) and its split (word 9) as the statistics passes do.
#define NORM_X          0
#define NORM_SPLIT      9
