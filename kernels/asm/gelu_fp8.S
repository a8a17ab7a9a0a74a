// gelu_fp8: out[i] = FP8(gelu(x[i])) for n f16 values: the GeLU of gelu_f16 (tanh form of
// SigLIP's gelu_pytorch_tanh, evaluated in f32, rounded once to f16), then cast to FP8 with
// f16v8tof8 under $FP_NFMT / $FP_SCL / $FP_CTL.NANOO, four codes per 32-bit store.
// Source: this header, gelu_body.S (the entry code of gelu_f16) and gelu_groups.S (the loop).
//
// Numerics (every step f32 round-to-nearest-even through tessera_isa::numerics; the Rust
// reference in kernels/src/elementwise/gelu.rs repeats the same steps):
//   h = f32(x) * 0.5                     exact (f16 -> f32 is exact, halving is exact)
//   s = h * h
//   p = (B * s) + A                      f32v2axpy ($TAS = B): multiply rounded, then add rounded
//   z = p * h                            z = sqrt(2/pi) (x + 0.044715 x^3) written in h = x / 2:
//                                        A = f32(2 sqrt(2/pi)) = 0x3fcc422a,
//                                        B = f32(8 * 0.044715 * sqrt(2/pi)) = 0x3e922279
//   t = f32tanh(z)                       tanh in f64 rounded once to f32 (numerics::f32_tanh)
//   r = (t * h) + h                      0.5 x (1 + t) = h + h t, multiply rounded, add rounded
//   g = f16(r)                           f32v4tof16, RNE
//   out = FP8(g)                         f16v8tof8: g * 2^$FP_SCL rounded once (RNE) to the
//                                        $FP_NFMT format; overflow -> 0x80 with NANOO, else
//                                        +-max; NaN / inf -> 0x80 (numerics::f16_to_fp8)
// Specials: NaN in -> 0x7e00; +inf -> +inf; -inf -> NaN (h + h t = -inf + inf, as the literal
// PyTorch formula -inf * 0); x <= about -9 gives t = -1 exactly and r = h - h = +0; no
// intermediate overflows for finite f16 input (|h^3| < 2^45).
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
// Loop: one group of 4 per 21-bundle rpt iteration, the aux pipeline busy in every bundle (the
// 21 aux operations of a group, each using the previous one's result). The main pipeline loads
// the group, the constants (0.5 and A as f32 pairs, from gelu_fp8_consts), and stores the
// previous group's result: iteration i stores group i-1, so the first store of a call writes
// junk to the first output word with a zero increment ($m4 = 0) and is overwritten by the
// second; the last group is stored after the loop.
// The two f32v2axpy of a group leave the second product in the accumulators; f32v2gina reads it
// out (and pushes zeros), so no result crosses from one group to the next.
// Registers: $m0 in, $m1 out, $m2 groups, $m3 constants, $m4 store step, $m10 link.
// ARF: $a0:3 h (4 x f32), $a4:7 work (f16 input, s, p, z, t, r), $a6:7 constants.

#define V_IN    0
#define V_OUT   1
#define V_N     2
#define V_NFMT  3
#define V_SCL   4
#define V_SPLIT 5

// The code follows in gelu_body.S and gelu_groups.S (appended to this header by the kernel's
// `source`). Where gelu_f16 and gelu_fp8 differ:
#define K_ENTRY         gelu_fp8
#define K_TEXT          .text.gelu_fp8
#define K_CONSTS        gelu_fp8_consts
#define K_CONSTS_DATA   .data.gelu_fp8_consts
#define K_GROUPS        gelu_fp8_groups
#define K_GROUPS_TEXT   .text.gelu_fp8_groups
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
// A finished group (f32v4tof16 -> $a0:1) becomes 4 FP8 codes in $a0: 4 bytes.
#define CONVERT_OUT     { nop ; f16v8tof8 $a0:1, $a0:3 }
#define CONVERT_BUNDLES 1
#define STORE_OUT       st32step $a0, $mzero, $m1+=, $m4
