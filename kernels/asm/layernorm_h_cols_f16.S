// layernorm_h_cols_f16: layernorm_h_f16 over a block of each row's columns: the statistics of
// the whole rows (x, as layernorm_h_f16 takes them), the affine steps and the output on the
// block only. A row split over several tiles by columns runs it on each tile with the whole
// rows beside its block (the row's tiles repeat the statistics and share the normalising),
// where layernorm_h_f16 normalises every column on the one tile holding the row. The kernel's
// source is layernorm_stats.S, this header, then layernorm_h_body.S; the numerics are
// layernorm_h_f16's, value for value.
//
// Vertex: as layernorm_h_f16 (0 x: whole rows of n, 1 gamma and 2 beta: f16[n_own], the block's,
// 3 out: rows x n_own, 4 scratch, 5 rows, 6 n, 7 inv_n = 1/n, 8 eps, 9..20 the split of the n/4
// groups, 21 dev: 0), then 22, 23: 0, 24 x_own: the block's first column of x's first row (rows
// n halves apart), 25 n_own (% 4 == 0), 26..37 the split of the n_own/4 groups of the block.
// Memory: every buffer 8-byte aligned (x_own too). Any region, no element constraints.

#define V_X_OWN   24
#define V_N_OWN   25

#define K_SUP           layernorm_h_cols_f16
#define K_SUP_TEXT      .text.layernorm_h_cols_f16
#define K_NORM          layernorm_h_cols_norm_f16
#define K_NORM_TEXT     .text.layernorm_h_cols_norm_f16
#define K_VAR           layernorm_h_cols_var_f16
#define K_VAR_TEXT      .text.layernorm_h_cols_var_f16
// Worker set-up: out += 8 bytes per group before the worker's first ($m10); the out advance
// to the next row is 2 n_own - 8 count ($m11 = 8 count).
#define OUT_POINTER     { add $m4, $m4, $m10 ; fnop }
#define OUT_ADVANCE                                           \
    { ld32 $m8, $mvertex_base, $mzero, V_N_OWN ; fnop } ;     \
    { shl $m8, $m8, 1 ; fnop } ;                              \
    { sub $m8, $m8, $m11 ; fnop }
#define LOAD_FORMAT
#define PUT_SCALE       fnop
#define CONVERT_OUT
#define CONVERT_BUNDLES 0
#define STORE_OUT       st64step $a0:1, $mzero, $m4+=, 1
// The normalising pass reads the block (word 24) and its split (word 26).
#define NORM_X          24
#define NORM_SPLIT      26
