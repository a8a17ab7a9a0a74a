// layernorm_h_f16: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of an f16
// matrix with f16 gamma and beta, f16 out: layernorm_f16's statistics (f32, centred), the
// affine steps in f16 (layernorm_h_body.S has the numerics). The kernel's source is
// layernorm_stats.S, this header, then layernorm_h_body.S.
//
// Vertex (see layernorm_stats.S): 0 x (f16, rows x n), 1 gamma (f16[n]), 2 beta (f16[n]),
// 3 out (f16, rows x n), 4 scratch (48 bytes per row), 5 rows, 6 n (n % 4 == 0), 7 inv_n (f32
// bits of 1/n), 8 eps (f32 bits), 9..20 the split table of the n/4 groups, 21 dev: 0 (the
// variance pass keeps no deviations).
// Memory: every buffer 8-byte aligned. Any region, no element constraints (one memory access
// per bundle); nothing past a buffer is read or written.

#define K_SUP           layernorm_h_f16
#define K_SUP_TEXT      .text.layernorm_h_f16
#define K_NORM          layernorm_h_norm_f16
#define K_NORM_TEXT     .text.layernorm_h_norm_f16
#define K_VAR           layernorm_h_var_f16
#define K_VAR_TEXT      .text.layernorm_h_var_f16
// Worker set-up: out += 8 bytes per group before the worker's first ($m10); the out advance
// to the next row is the x advance ($m7).
#define OUT_POINTER     { add $m4, $m4, $m10 ; fnop }
#define OUT_ADVANCE     { mov $m8, $m7 ; fnop }
#define LOAD_FORMAT
#define PUT_SCALE       fnop
#define CONVERT_OUT
#define CONVERT_BUNDLES 0
#define STORE_OUT       st64step $a0:1, $mzero, $m4+=, 1
// The normalising pass reads x (word 0) and its split (word 9) as the statistics passes do.
#define NORM_X          0
#define NORM_SPLIT      9
