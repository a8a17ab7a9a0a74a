// gelu_f16: out[i] = gelu(x[i]) for n f16 values, the tanh form of SigLIP's gelu_pytorch_tanh
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// evaluated in f32 with one rounding to f16 at the end.
// Source: this header, gelu_body.S (the entry, shared with gelu_fp8) and gelu_groups.S (the
// loop, shared with both FP8 variants).
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
//   out = f16(r)                         f32v4tof16, RNE
// Specials: NaN in -> 0x7e00; +inf -> +inf; -inf -> NaN (h + h t = -inf + inf, as the literal
// PyTorch formula -inf * 0); x <= about -9 gives t = -1 exactly and r = h - h = +0; no
// intermediate overflows for finite f16 input (|h^3| < 2^45).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in     n halves, 8-byte aligned
//   1: out    n halves, 8-byte aligned
//   2: n      element count (any)
//   3, 4: unused here (the FP8 variants' $FP_NFMT / $FP_SCL words)
//   5 + 2w: first 4-element group of worker w, 6 + 2w: its number of groups
// The split table covers the n / 4 groups in order (worker 5 owns the last ones); worker 5 also
// converts the n % 4 tail, through its scratch ($mworker_base, 16 bytes): the tail halves are
// copied with 16-bit loads (nothing past the end of `in` is read), converted as one group, and
// written back with 32-bit stores, read-modify-write for a lone last half (the 2 bytes after
// `out` are rewritten with their own value).
// Memory: any region, no element constraints (one memory access per bundle); out may be in
// (in place: each group is loaded before its result is stored).
//
// Loop: one group of 4 per 20-bundle rpt iteration, the aux pipeline busy in every bundle (the
// 20 aux operations of a group, each using the previous one's result). The main pipeline loads
// the group, the constants (0.5 and A as f32 pairs, from gelu_f16_consts), and stores the
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
#define V_SPLIT 5

// The code follows in gelu_body.S and gelu_groups.S (appended to this header by the kernel's
// `source`). Where gelu_f16 and gelu_fp8 differ:
#define K_ENTRY         gelu_f16
#define K_TEXT          .text.gelu_f16
#define K_CONSTS        gelu_f16_consts
#define K_CONSTS_DATA   .data.gelu_f16_consts
#define K_GROUPS        gelu_f16_groups
#define K_GROUPS_TEXT   .text.gelu_f16_groups
// In and out; B goes to $TAS beside the second load.
#define LOAD_POINTERS                                         \
    ld32 $m0, $mvertex_base, $mzero, V_IN ;                   \
    { ld32 $m1, $mvertex_base, $mzero, V_OUT ; uput $TAS, $a0 }
// out is 8 bytes per group, like in.
#define OUT_OFFSET      { add $m1, $m1, $m7 ; fnop }
// The 1 to 3 tail halves: the full 32-bit word, then a lone last half by read-modify-write.
#define TAIL_WRITE_BACK                                       \
    ld32 $m6, $mworker_base, $mzero, 2 ;   /* results 0, 1 */ \
    ld32 $m7, $mworker_base, $mzero, 3 ;   /* results 2, 3 */ \
    and $m9, $m5, 2 ;                                         \
    brz $m9, .Ltail_out_odd ;                                 \
    st32 $m6, $m8, $mzero, 0 ;                                \
    add $m8, $m8, 4 ;                                         \
    mov $m6, $m7 ;                                            \
.Ltail_out_odd:                                               \
    and $m9, $m5, 1 ;                                         \
    brz $m9, .Lexit ;                                         \
    ld32 $m7, $m8, $mzero, 0 ;                                \
    shl $m6, $m6, 16 ;                                        \
    shr $m6, $m6, 16 ;                                        \
    andc $m7, $m7, 0xffff ;                                   \
    or $m6, $m6, $m7 ;                                        \
    st32 $m6, $m8, $mzero, 0
// A finished group (f32v4tof16 -> $a0:1) is stored as it is: 8 bytes.
#define CONVERT_OUT
#define CONVERT_BUNDLES 0
#define STORE_OUT       st64step $a0:1, $mzero, $m1+=, $m4
