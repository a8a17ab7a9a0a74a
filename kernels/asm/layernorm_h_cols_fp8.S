// layernorm_h_cols_fp8: layernorm_h_cols_f16 written directly as packed FP8, as layernorm_h_fp8
// writes layernorm_h_f16's values (one byte per element; the format and scale in words 22 and
// 23). The kernel's source is layernorm_stats.S, this header, then layernorm_h_body.S.
//
// Vertex: as layernorm_h_cols_f16 with 3 out (FP8, rows x n_own bytes, 4-byte aligned), 22
// nfmt: the $FP_NFMT value (2 = F143, 0 = F152), 23 scl: the $FP_SCL value.

#define V_NFMT    22
#define V_SCL     23
#define V_X_OWN   24
#define V_N_OWN   25

#define K_SUP           layernorm_h_cols_fp8
#define K_SUP_TEXT      .text.layernorm_h_cols_fp8
#define K_NORM          layernorm_h_cols_norm_fp8
#define K_NORM_TEXT     .text.layernorm_h_cols_norm_fp8
#define K_VAR           layernorm_h_cols_var_fp8
#define K_VAR_TEXT      .text.layernorm_h_cols_var_fp8
// Worker set-up: out += 4 bytes per group before the worker's first; the out advance to the
// next row is n_own - 4 count ($m11 = 8 count).
#define OUT_POINTER                                           \
    { shr $m8, $m10, 1 ; fnop } ;                             \
    { add $m4, $m4, $m8 ; fnop }
#define OUT_ADVANCE                                           \
    { ld32 $m8, $mvertex_base, $mzero, V_N_OWN ; fnop } ;     \
    { shr $m0, $m11, 1 ; fnop } ;                             \
    { sub $m8, $m8, $m0 ; fnop }
#define LOAD_FORMAT                                           \
    { ld32 $a0, $mvertex_base, $mzero, V_NFMT ; fnop } ;      \
    { ld32 $a1, $mvertex_base, $mzero, V_SCL ; uput $FP_NFMT, $a0 }
#define PUT_SCALE       uput $FP_SCL, $a1
#define CONVERT_OUT     { nop ; f16v8tof8 $a0:1, $a0:3 }
#define CONVERT_BUNDLES 1
#define STORE_OUT       st32step $a0, $mzero, $m4+=, 1
// The normalising pass reads the block (word 24) and its split (word 26).
#define NORM_X          24
#define NORM_SPLIT      26
