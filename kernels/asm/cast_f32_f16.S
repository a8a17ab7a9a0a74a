// cast_f32_f16: out[i] = f16(in[i]) for n float32 values: round to nearest even, overflow to
// +-inf, subnormal results kept, signed zeros kept, NaN -> the canonical quiet NaN 0x7e00
// (f32v4tof16 = tessera_isa::numerics::f32_to_f16 per lane).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in     n f32 values, 8-byte aligned
//   1: out    f16 values, 8-byte aligned; ceil(n / 4) * 4 halves: the halves n .. of the last
//             group of 4 are written as +0
//   2: n      bits 0..30: element count (>= 1). Bit 31 FAST: `in` is in the interleaved region
//             and `out` in other memory elements at every offset (e.g. another element slot or
//             the standard region), so one ld2xst64pace loads a group of 4 (the two 8-byte atoms
//             of an interleaved pair) and stores the previous one: 1 bundle per 4 values.
//             Without it: 3 bundles per 4 values (one access per bundle).
//   3 + 2w: first group of 4 of worker w     4 + 2w: its number of groups
// The split table covers the n / 4 complete groups in order (worker 5 owns the last ones); worker
// 5 also converts the n % 4 tail: the tail values are copied to its scratch ($mworker_base, 16
// bytes, zeros after them; nothing past the end of `in` is read), converted as one group, and
// stored as one 8-byte group (the padding halves are f16(+0) = 0).
// Memory: any region without FAST; scratch 16 bytes.
//
// Cost per worker with c groups: general 3c + 20 bundles, FAST c + 25 (c >= 2); worker 5's
// tail (t = n % 4 > 0) adds 3t + 9 (and 5 more after the FAST loop).
// Registers: $m0 worker, $m2 first group, $m3 groups, $m4 in, $m5 out, $m7 n word,
// $m8:9 packed pace addresses, $m10 pace strides; $a0:3 four f32, $a4:5 four halves.

#define V_IN    0
#define V_OUT   1
#define V_N     2
#define V_SPLIT 3

    .section .text.cast_f32_f16
    .globl cast_f32_f16
    .type cast_f32_f16, @function
    .worker
    .align 8
cast_f32_f16:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m2, $mvertex_base, $m1, V_SPLIT ; fnop }          // first group
    { ld32 $m3, $mvertex_base, $m1, V_SPLIT + 1 ; fnop }      // groups
    { ld32 $m4, $mvertex_base, $mzero, V_IN ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, V_OUT ; fnop }
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
    { ld64step $a0:1, $mzero, $m4+=, 1 ; f32v4tof16 $a4:5, $a0:3 }
    { ld64step $a2:3, $mzero, $m4+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m5+=, 1 ; fnop }
    { nop ; f32v4tof16 $a4:5, $a0:3 }
    { st64step $a4:5, $mzero, $m5+=, 1 ; fnop }
.Ltail:
    { cmpne $m6, $m0, 5 ; fnop }                             // only worker 5 has a tail
    { brnz $m6, .Lexit ; fnop }
.Ltail_rest:
    { and $m7, $m7, 3 ; fnop }                               // t = n % 4
    { brz $m7, .Lexit ; fnop }
    { st64 $azeros, $mworker_base, $mzero, 0 ; fnop }
    { st64 $azeros, $mworker_base, $mzero, 1 ; fnop }
    { add $m7, $m7, -1 ; fnop }
.Ltail_copy:
    { ld32 $m6, $m4, $mzero, $m7 ; fnop }
    { st32 $m6, $mworker_base, $mzero, $m7 ; fnop }
    { brnzdec $m7, .Ltail_copy ; fnop }
    { ld64 $a0:1, $mworker_base, $mzero, 0 ; fnop }
    { ld64 $a2:3, $mworker_base, $mzero, 1 ; fnop }
    { nop ; f32v4tof16 $a4:5, $a0:3 }
    { st64 $a4:5, $m5, $mzero, 0 ; fnop }
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
    { ld2x64pace $a0:1, $a2:3, $m8:9+=, $m10, 5 ; f32v4tof16 $a4:5, $a0:3 }
    { rpt $m6, 0 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m8:9+=, $m10, 5 ; f32v4tof16 $a4:5, $a0:3 }
    { st64pace $a4:5, $m8:9+=, $m10, 0 ; f32v4tof16 $a4:5, $a0:3 }
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
    { nop ; f32v4tof16 $a4:5, $a0:3 }
    { st64pace $a4:5, $m8:9+=, $m10, 0 ; fnop }
    { bri .Lfast_done ; fnop }
    .size cast_f32_f16, . - cast_f32_f16
