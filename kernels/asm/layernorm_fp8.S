// layernorm_fp8: y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of an f16
// matrix, written directly as packed FP8 (one byte per element). The kernel's source is
// layernorm_stats.S (statistics passes and shared vertex layout documented there), this
// header, then layernorm_body.S: the code of layernorm_f16 (described in layernorm_f16.S),
// which the defines at the end of this header specialise for FP8.
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

#define V_NFMT    22
#define V_SCL     23

// The code follows in layernorm_body.S (appended to this header by the kernel's `source`).
// Where the two LayerNorms differ:
#define K_SUP           layernorm_fp8
#define K_SUP_TEXT      .text.layernorm_fp8
#define K_NORM          layernorm_norm_fp8
#define K_NORM_TEXT     .text.layernorm_norm_fp8
// Worker set-up: out += 4 bytes per group before the worker's first; the out advance to the
// next row is $m8 = n - 4 * groups, computed while $m11 still holds n.
#define OUT_POINTER                                           \
    { shl $m8, $m2, 2 ; fnop } ;                              \
    { add $m4, $m4, $m8 ; fnop } ;                            \
    { shl $m8, $m9, 2 ; fnop } ;                              \
    { sub $m8, $m11, $m8 ; fnop }
#define OUT_ADVANCE
// $FP_NFMT and $FP_SCL from the vertex (the scale's uput rides beside the next main
// instruction).
#define LOAD_FORMAT                                           \
    { ld32 $a0, $mvertex_base, $mzero, V_NFMT ; fnop } ;      \
    { ld32 $a1, $mvertex_base, $mzero, V_SCL ; uput $FP_NFMT, $a0 }
#define PUT_SCALE       uput $FP_SCL, $a1
// A group leaves f32v4tof16 as four halves in $a0:1; one more bundle makes them four FP8
// codes in $a0, stored with st32 (4 bytes per group).
#define CONVERT_OUT     { nop ; f16v8tof8 $a0:1, $a0:3 }
#define CONVERT_BUNDLES 1
#define STORE_OUT       st32step $a0, $mzero, $m4+=, 1
#define OUT_GROUP_SHIFT 2
// The n % 4 tail of a single row: the FP8 codes of the finished group in $a0:3; keep bytes
// 0 .. tail-1 of the new word and the rest of the old one.
#define TAIL_STORE                                            \
    { nop ; f32v4tof16 $a0:1, $a0:3 } ;                       \
    { nop ; f16v8tof8 $a0:1, $a0:3 } ;                        \
    { atom $m11, $a0 ; fnop } ;                               \
    { ld32 $m10, $m4, $mzero, 0 ; fnop } ;                    \
    { shl $m1, $m0, 3 ; fnop } ;                              \
    { setzi $m2, 1 ; fnop } ;                                 \
    { shl $m2, $m2, $m1 ; fnop } ;                            \
    { add $m2, $m2, -1 ; fnop } ;                             \
    { and $m11, $m11, $m2 ; fnop } ;                          \
    { andc $m10, $m10, $m2 ; fnop } ;                         \
    { or $m11, $m11, $m10 ; fnop } ;                          \
    { st32 $m11, $m4, $mzero, 0 ; fnop }
