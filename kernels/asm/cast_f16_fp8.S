// cast_f16_fp8: out[i] = FP8(in[i]) for n f16 values, in flat (row-major) order: each code is
// tessera_isa::numerics::f16_to_fp8(x, $FP_NFMT format, $FP_SCL scale, $FP_CTL.NANOO): the exact
// value x * 2^$FP_SCL rounded once to nearest even; overflow -> 0x80 (NaN) with NANOO, else
// +-max; NaN and +-inf -> 0x80; results that round to zero -> 0x00 (f16v8tof8, eight per
// instruction). Software writes the negated tensor scale into $FP_SCL; NANOO comes from the
// workers' $FP_CTL, which they inherit from the supervisor's $FP_ICTL.
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in     n halves, 8-byte aligned
//   1: out    FP8 codes, 8-byte aligned; ceil(n / 4) * 4 bytes: the bytes n .. of the last
//             32-bit word are written as 0
//   2: n      bits 0..30: element count (>= 1). Bit 31 FAST: `in` is in the interleaved region
//             and `out` in other memory elements at every offset (e.g. another element slot or
//             the standard region), so one ld2xst64pace loads a group of 8 halves (the two
//             8-byte atoms of an interleaved pair) and stores the previous group's 8 codes:
//             1 bundle per 8 values. Without it: 3 bundles per 8 values.
//   3: nfmt   value for $FP_NFMT (format in bit 1: 2 = F143, 0 = F152)
//   4: scl    value for $FP_SCL (the negated tensor scale, 6-bit two's complement)
//   5 + 2w: first group of 8 of worker w     6 + 2w: its number of groups
// The split table covers the n / 8 complete groups in order (worker 5 owns the last ones); worker
// 5 also converts the n % 8 tail: the tail halves are copied to its scratch ($mworker_base, 16
// bytes, zeros after them; whole words with ld32, an odd last half with ldz16, so nothing past
// the end of `in` is read), converted as one group, and stored as one 32-bit word (t <= 4) or
// two (the padding codes are FP8(+0) = 0).
// Memory: any region without FAST; scratch 16 bytes.
//
// Cost per worker with c groups: general 3c + 22 bundles, FAST c + 27 (c >= 2); worker 5's
// tail (t = n % 8 > 0) adds 13 + (t >= 2 ? 1 + 3 floor(t / 2) : 0) + (t odd ? 4 : 0) (and 5
// more after the FAST loop).
// Registers: $m0 worker, $m2 first group, $m3 groups, $m4 in, $m5 out, $m7 n word,
// $m8:9 packed pace addresses, $m10 pace strides; $a0:3 eight halves, $a4:5 eight codes.

#define V_IN    0
#define V_OUT   1
#define V_N     2
#define V_NFMT  3
#define V_SCL   4
#define V_SPLIT 5

    .section .text.cast_f16_fp8
    .globl cast_f16_fp8
    .type cast_f16_fp8, @function
    .worker
    .align 8
cast_f16_fp8:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }          // first group
    { ld32 $m3, $mvertex_base, $m1, V_SPLIT + 1 ; fnop }      // groups
    { ld32 $a0, $mvertex_base, $mzero, V_NFMT ; fnop }
    { ld32 $a1, $mvertex_base, $mzero, V_SCL ; fnop }
    { ld32 $m4, $mvertex_base, $mzero, V_IN ; uput $FP_NFMT, $a0 }
    { ld32 $m5, $mvertex_base, $mzero, V_OUT ; uput $FP_SCL, $a1 }
    { shl $m6, $m2, 4 ; fnop }
    { add $m4, $m4, $m6 ; fnop }                             // 16 bytes in per group
    { shl $m6, $m2, 3 ; fnop }
    { add $m5, $m5, $m6 ; fnop }                             // 8 bytes out per group
    { ld32 $m7, $mvertex_base, $mzero, V_N ; fnop }
    { brz $m3, .Ltail ; fnop }
    { brneg $m7, .Lfast ; fnop }
    // General: load group k + 1 (two bundles), convert k, store k - 1: a rpt of three bundles.
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m4+=, 1 ; fnop }
    { add $m6, $m3, -1 ; fnop }
    { rpt $m6, 2 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; f16v8tof8 $a4:5, $a0:3 }
    { ld64step $a2:3, $mzero, $m4+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m5+=, 1 ; fnop }
    { nop ; f16v8tof8 $a4:5, $a0:3 }
    { st64step $a4:5, $mzero, $m5+=, 1 ; fnop }
.Ltail:
    { cmpne $m6, $m0, 5 ; fnop }                             // only worker 5 has a tail
    { brnz $m6, .Lexit ; fnop }
.Ltail_rest:
    { and $m7, $m7, 7 ; fnop }                               // t = n % 8
    { brz $m7, .Lexit ; fnop }
    { st64 $azeros, $mworker_base, $mzero, 0 ; fnop }
    { st64 $azeros, $mworker_base, $mzero, 1 ; fnop }
    { shr $m6, $m7, 1 ; fnop }                               // whole words of two halves
    { brz $m6, .Ltail_odd ; fnop }
    { add $m6, $m6, -1 ; fnop }
.Ltail_copy:
    { ld32 $m8, $m4, $mzero, $m6 ; fnop }
    { st32 $m8, $mworker_base, $mzero, $m6 ; fnop }
    { brnzdec $m6, .Ltail_copy ; fnop }
.Ltail_odd:
    { and $m6, $m7, 1 ; fnop }
    { brz $m6, .Ltail_convert ; fnop }
    { add $m6, $m7, -1 ; fnop }
    { ldz16 $m8, $m4, $mzero, $m6 ; fnop }                   // the last half, upper half zero
    { shr $m6, $m7, 1 ; fnop }
    { st32 $m8, $mworker_base, $mzero, $m6 ; fnop }
.Ltail_convert:
    { ld64 $a0:1, $mworker_base, $mzero, 0 ; fnop }
    { ld64 $a2:3, $mworker_base, $mzero, 1 ; fnop }
    { cmpult $m6, $m7, 5 ; f16v8tof8 $a4:5, $a0:3 }
    { brnz $m6, .Ltail_word ; fnop }
    { st64 $a4:5, $m5, $mzero, 0 ; fnop }
    exitz $mzero
    .align 8
.Ltail_word:
    { st32 $a4, $m5, $mzero, 0 ; fnop }
.Lexit:
    exitz $mzero
    .align 8

// FAST: load group k, convert k - 1, store k - 2 in one bundle; the first two groups are loaded
// and the last two stored outside the rpt, so nothing outside the share is touched.
.Lfast:
    { add $m6, $m4, 8 ; fnop }
    { tapack $m8:9, $m4, $m6, $m5 ; fnop }                   // loads at +0 and +8, store
    { setzi $m10, 2 ; fnop }                                 // stride field 0: 2 atoms
    { ld2x64pace $a0:1, $a2:3, $m8:9+=, $m10, 5 ; fnop }
    { add $m6, $m3, -2 ; fnop }
    { brneg $m6, .Lfast_one ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m8:9+=, $m10, 5 ; f16v8tof8 $a4:5, $a0:3 }
    { rpt $m6, 0 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m8:9+=, $m10, 5 ; f16v8tof8 $a4:5, $a0:3 }
    { st64pace $a4:5, $m8:9+=, $m10, 0 ; f16v8tof8 $a4:5, $a0:3 }
    { st64pace $a4:5, $m8:9+=, $m10, 0 ; fnop }
.Lfast_done:
    { cmpne $m6, $m0, 5 ; fnop }
    { brnz $m6, .Lexit ; fnop }
    { shl $m6, $m3, 4 ; fnop }                               // the tail follows the share
    { add $m4, $m4, $m6 ; fnop }
    { shl $m6, $m3, 3 ; fnop }
    { add $m5, $m5, $m6 ; fnop }
    { bri .Ltail_rest ; fnop }
.Lfast_one:
    { nop ; f16v8tof8 $a4:5, $a0:3 }
    { st64pace $a4:5, $m8:9+=, $m10, 0 ; fnop }
    { bri .Lfast_done ; fnop }
    .size cast_f16_fp8, . - cast_f16_fp8
