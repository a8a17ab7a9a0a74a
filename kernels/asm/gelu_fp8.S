// gelu_fp8: out[i] = FP8(gelu(x[i])) for n f16 values: the GeLU of SigLIP's gelu_pytorch_tanh
// evaluated in f16 in its logistic form (gelu_sigm_groups.S has the steps and the specials),
// then cast to FP8 with f16v8tof8 under $FP_NFMT / $FP_SCL / $FP_CTL.NANOO, four codes per
// 32-bit store: out = FP8(r) is r * 2^$FP_SCL rounded once (RNE) to the $FP_NFMT format;
// overflow -> 0x80 with NANOO, else +-max; NaN / inf -> 0x80 (numerics::f16_to_fp8). gelu_f16
// keeps the f32 evaluation for its f16 output; the FP8 output's 3 or 4 significant bits do not
// need it (the f16 loop takes 8 bundles a group of 4 against 21 in f32).
// Source: this header, gelu_body.S (the entry code of gelu_f16) and gelu_sigm_groups.S (the
// loop).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in     n halves, 8-byte aligned
//   1: out    n FP8 codes, 8-byte aligned
//   2: n      element count (any)
//   3: nfmt   value for $FP_NFMT (format in bit 1: 2 = F143, 0 = F152)
//   4: scl    value for $FP_SCL (the negated tensor scale, 6-bit two's complement)
// NANOO comes from $FP_CTL, which the workers inherit from the supervisor's $FP_ICTL.
//   5 + 2w: first 4-element group of worker w, 6 + 2w: its number of groups
// The split table covers the n / 4 groups in order (worker 5 owns the last ones); worker 5 also
// converts the n % 4 tail, through its scratch ($mworker_base, 12 bytes): the tail halves are
// copied with 16-bit loads (nothing past the end of `in` is read), converted as one group, and
// written back with one read-modify-write of the last 32-bit word (the bytes after `out` are
// rewritten with their own value).
// Memory: any region, no element constraints (one memory access per bundle).
//
// Loop: gelu_sigm_groups.S. The entry (gelu_body.S) still puts gelu_f16's B in $TAS, which
// the f16 loop does not read.
// Registers: $m0 in, $m1 out, $m2 groups, $m4 store step, $m10 link.

#define V_IN    0
#define V_OUT   1
#define V_N     2
#define V_NFMT  3
#define V_SCL   4
#define V_SPLIT 5

// The code follows in gelu_body.S and gelu_sigm_groups.S (appended to this header by the kernel's
// `source`). Where gelu_f16 and gelu_fp8 differ:
#define K_ENTRY         gelu_fp8
#define K_TEXT          .text.gelu_fp8
#define K_CONSTS        gelu_fp8_consts
#define K_CONSTS_DATA   .data.gelu_fp8_consts
#define K_GROUPS        gelu_fp8_groups
#define K_GROUPS_TEXT   .text.gelu_fp8_groups
#define K_SIGM_CONSTS   gelu_fp8_sigm_consts
#define K_SIGM_CONSTS_DATA .data.gelu_fp8_sigm_consts
// A worker's run of groups is long (all its groups): runs of 2^PAIR_SHIFT groups or more go a
// pair of groups at a time (one f16v8tof8 a pair: 15 bundles where two groups take 16).
#define K_PAIRS         1
#define PAIR_SHIFT      5
// The FP8 format and scale, in and out; B goes to $TAS beside the second load.
#define LOAD_POINTERS                                                 \
    ld32 $a1, $mvertex_base, $mzero, V_NFMT ;                         \
    { ld32 $a2, $mvertex_base, $mzero, V_SCL ; uput $TAS, $a0 } ;     \
    { ld32 $m0, $mvertex_base, $mzero, V_IN ; uput $FP_NFMT, $a1 } ;  \
    { ld32 $m1, $mvertex_base, $mzero, V_OUT ; uput $FP_SCL, $a2 }
// out is 4 bytes (4 codes) per group.
#define OUT_OFFSET                                            \
    { shr $m7, $m7, 1 ; fnop } ;                              \
    add $m1, $m1, $m7
// The 1 to 3 tail codes: bytes 0 .. t-1 of the result word into the last output word.
#define TAIL_WRITE_BACK                                       \
    ld32 $m6, $mworker_base, $mzero, 2 ;   /* four codes */   \
    ld32 $m7, $m8, $mzero, 0 ;                                \
    shl $m9, $m5, 3 ;                                         \
    setzi $m5, 1 ;                                            \
    shl $m5, $m5, $m9 ;                                       \
    add $m5, $m5, -1 ;   /* mask of the t tail bytes */       \
    and $m6, $m6, $m5 ;                                       \
    andc $m7, $m7, $m5 ;                                      \
    or $m6, $m6, $m7 ;                                        \
    st32 $m6, $m8, $mzero, 0
