// layernorm_f16: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of an f16
// matrix, f16 out. The kernel's source is layernorm_stats.S (the statistics passes and the
// shared vertex layout are documented there), this header, then layernorm_body.S: the code,
// shared with layernorm_fp8, which the defines at the end of this header specialise.
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

// The code follows in layernorm_body.S (appended to this header by the kernel's `source`).
// Where the two LayerNorms differ:
#define K_SUP           layernorm_f16
#define K_SUP_TEXT      .text.layernorm_f16
#define K_NORM          layernorm_norm_f16
#define K_NORM_TEXT     .text.layernorm_norm_f16
// Worker set-up: out += 8 bytes per group before the worker's first ($m10 = 8 * first); the
// out advance to the next row ($m8) is the x advance ($m7).
#define OUT_POINTER     { add $m4, $m4, $m10 ; fnop }
#define OUT_ADVANCE     { mov $m8, $m7 ; fnop }
// No FP8 format or scale.
#define LOAD_FORMAT
#define PUT_SCALE       fnop
// A group leaves f32v4tof16 as four halves in $a0:1, stored as they are (8 bytes per group).
#define CONVERT_OUT
#define CONVERT_BUNDLES 0
#define STORE_OUT       st64step $a0:1, $mzero, $m4+=, 1
#define OUT_GROUP_SHIFT 3
// The n % 4 tail of a single row (1 to 3 halves from the finished group in $a0:3): a 32-bit
// store of the first two, then a lone last half by read-modify-write of its word.
#define TAIL_STORE                                            \
    { cmpeq $m11, $m0, 1 ; f32v4tof16 $a0:1, $a0:3 } ;        \
    { brnz $m11, .Lnorm_tail1 ; fnop } ;                      \
    { st32 $a0, $m4, $mzero, 0 ; fnop } ;                     \
    { cmpeq $m11, $m0, 2 ; fnop } ;                           \
    { brnz $m11, .Lnorm_done ; fnop } ;                       \
    { ld32 $a2, $m4, $mzero, 1 ; fnop } ;                     \
    { nop ; swap16 $a2, $a2 } ;                               \
    { nop ; sort4x16lo $a1, $a1, $a2 } ;                      \
    { st32 $a1, $m4, $mzero, 1 ; fnop } ;                     \
    { bri .Lnorm_done ; fnop } ;                              \
.Lnorm_tail1:                                                 \
    { ld32 $a2, $m4, $mzero, 0 ; fnop } ;                     \
    { nop ; swap16 $a2, $a2 } ;                               \
    { nop ; sort4x16lo $a0, $a0, $a2 } ;                      \
    { st32 $a0, $m4, $mzero, 0 ; fnop }
