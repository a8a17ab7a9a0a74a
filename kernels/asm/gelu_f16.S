// gelu_f16: out[i] = gelu(x[i]) for n f16 values, the tanh form of SigLIP's gelu_pytorch_tanh
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// evaluated in f32 with one rounding to f16 at the end.
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

    .section .data.gelu_f16_consts
    .align 8
gelu_f16_consts:
    .int 0x3f000000, 0x3f000000     // 0.5, 0.5
    .int 0x3fcc422a, 0x3fcc422a     // A, A
    .int 0x3e922279                 // B ($TAS)

    .section .text.gelu_f16
    .globl gelu_f16
    .type gelu_f16, @function
    .worker
    .align 8
gelu_f16:
    get $m5, $WSR
    and $m5, $m5, CSR_W_WSR__CTXTID_M1__MASK
    shl $m6, $m5, 3
    setzi $m3, gelu_f16_consts
    ld32 $m7, $mvertex_base, $m6, V_SPLIT             // first group
    ld32 $a0, $m3, $mzero, 4                          // B
    ld32 $m2, $mvertex_base, $m6, V_SPLIT + 1         // groups
    ld32 $m0, $mvertex_base, $mzero, V_IN
    {
        ld32 $m1, $mvertex_base, $mzero, V_OUT
        uput $TAS, $a0
    }
    {
        shl $m7, $m7, 3
        sort4x32lo $a4:5, $azeros, $azeros            // no junk (NaN) through the first iteration
    }
    {
        add $m0, $m0, $m7
        sort4x32lo $a6:7, $azeros, $azeros
    }
    {
        add $m1, $m1, $m7
        fnop
    }
    call $m10, gelu_f16_groups
    // The n % 4 tail, by worker 5 (at the end of the groups).
    cmpne $m6, $m5, 5
    brnz $m6, .Lexit
    ld32 $m5, $mvertex_base, $mzero, V_N
    and $m5, $m5, 3
    brz $m5, .Lexit
    // Copy the tail halves to scratch words 0, 1 (zeros after them).
    ldz16 $m6, $m0, $mzero, 0
    cmpult $m7, $m5, 2
    brnz $m7, .Ltail_in_1
    ldz16 $m7, $m0, $mzero, 1
    shl $m7, $m7, 16
    or $m6, $m6, $m7
.Ltail_in_1:
    st32 $m6, $mworker_base, $mzero, 0
    setzi $m6, 0
    cmpult $m7, $m5, 3
    brnz $m7, .Ltail_in_2
    ldz16 $m6, $m0, $mzero, 2
.Ltail_in_2:
    st32 $m6, $mworker_base, $mzero, 1
    mov $m8, $m1                                      // where the tail goes
    mov $m0, $mworker_base
    add $m1, $mworker_base, 8
    setzi $m2, 1
    call $m10, gelu_f16_groups
    // Write back: the full 32-bit word(s), then a lone last half with a read-modify-write.
    ld32 $m6, $mworker_base, $mzero, 2                // results 0, 1
    ld32 $m7, $mworker_base, $mzero, 3                // results 2, 3
    and $m9, $m5, 2
    brz $m9, .Ltail_out_odd
    st32 $m6, $m8, $mzero, 0
    add $m8, $m8, 4
    mov $m6, $m7
.Ltail_out_odd:
    and $m9, $m5, 1
    brz $m9, .Lexit
    ld32 $m7, $m8, $mzero, 0
    and $m6, $m6, 0xffff
    andc $m7, $m7, 0xffff
    or $m6, $m6, $m7
    st32 $m6, $m8, $mzero, 0
.Lexit:
    exitz $mzero
    .size gelu_f16, . - gelu_f16

// gelu_f16_groups: converts $m2 groups of 4 from $m0 to $m1 (both advance); returns to $m10.
// Clobbers $m4, $a0..$a7, the accumulators; needs $TAS = B and $m3 = gelu_f16_consts.
    .section .text.gelu_f16_groups
    .type gelu_f16_groups, @function
    .worker
    .align 8
gelu_f16_groups:
    brz $m2, .Lgroups_done
    setzi $m4, 0
    { rpt $m2, 19 ; fnop }
    {
        ld64step $a4:5, $mzero, $m0+=, 1              // x (4 halves)
        f32v4tof16 $a0:1, $a4:7                       // previous group: r -> f16
    }
    {
        st64step $a0:1, $mzero, $m1+=, $m4            // previous group (junk at first, step 0)
        f16v2tof32 $a0:1, $a4
    }
    {
        ld64 $a6:7, $m3, $mzero, 0                    // 0.5, 0.5
        f16v2tof32 $a2:3, $a5
    }
    {
        setzi $m4, 1
        f32v2mul $a0:1, $a0:1, $a6:7                  // h
    }
    {
        ld64 $a6:7, $m3, $mzero, 1                    // A, A
        f32v2mul $a2:3, $a2:3, $a6:7
    }
    { nop ; f32v2mul $a4:5, $a0:1, $a0:1 }            // s
    { nop ; f32v2axpy $azeros, $a4:5, $a6:7 }         // acc = B s + A (lanes 0, 1)
    { nop ; f32v2mul $a4:5, $a2:3, $a2:3 }
    { nop ; f32v2axpy $a4:5, $a4:5, $a6:7 }           // p (lanes 0, 1) out; lanes 2, 3 in
    { nop ; f32v2gina $a6:7, $azeros, 0 }             // p (lanes 2, 3)
    { nop ; f32v2mul $a4:5, $a4:5, $a0:1 }            // z
    { nop ; f32v2mul $a6:7, $a6:7, $a2:3 }
    { nop ; f32tanh $a4, $a4 }                        // t
    { nop ; f32tanh $a5, $a5 }
    { nop ; f32tanh $a6, $a6 }
    { nop ; f32tanh $a7, $a7 }
    { nop ; f32v2mul $a4:5, $a4:5, $a0:1 }            // t h
    { nop ; f32v2mul $a6:7, $a6:7, $a2:3 }
    { nop ; f32v2add $a4:5, $a4:5, $a0:1 }            // r = t h + h
    { nop ; f32v2add $a6:7, $a6:7, $a2:3 }
    { nop ; f32v4tof16 $a0:1, $a4:7 }
    { st64step $a0:1, $mzero, $m1+=, $m4 ; fnop }
.Lgroups_done:
    br $m10
    .size gelu_f16_groups, . - gelu_f16_groups
