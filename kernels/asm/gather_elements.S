// gather_elements: element-granular permutations (transposes of f16 or FP8 data) that word
// copies cannot do. Each destination 32-bit word is assembled from 4 / E source elements.
//   for o < O, w < W:  word at dst + o*dst_stride + T[w].dst =
//        lanes k = 0 .. 4/E - 1 (lane 0 at the lowest address, little-endian):
//        T[w].src[k] == 0xFFFFFFFF ? 0 : the E-byte element at src + o*src_stride + T[w].src[k]
//
// Worker kernel (all six workers share one vertex; worker w reads its record).
// Vertex state (32-bit words):
//   0: src         source base address (any region)
//   1: dst         destination base address (4-byte aligned, any region)
//   2: table       W entries: E = 2: (dst offset, src0, src1), 12 bytes;
//                  E = 1: (dst offset, src0, src1, src2, src3), 20 bytes; 4-byte aligned
//   3: W           destination words per outer iteration (>= 1)
//   4: O           outer iterations (>= 1; read only through the split)
//   5: src_stride  bytes from outer iteration o to o + 1 in src (a multiple of E)
//   6: dst_stride  bytes from outer iteration o to o + 1 in dst (a multiple of 4)
//   7: E           bits 0..1: element bytes, 1 (FP8) or 2 (f16); bit 31 NOZERO: no source
//                  offset is 0xFFFFFFFF (the kernel then runs the branch-free loops);
//                  bit 30 STRIDED: word w is at d0 + 4w and its lane k at s0 + (L w + k) ds,
//                  L = 4 / E, for d0 = entry 0's dst, s0 its lane 0, ds its lane 1 - lane 0
//                  (a transpose of rows that fill whole words), no zero lanes: the loop
//                  reads no table; bits 8..12 K: the width of w in a first item (W <= 2^K)
//   8 + 2w: first item of worker w as (o << K) | w     9 + 2w: its item count
// Items are the (o, w) pairs numbered o*W + w, split in order (kernels/src/split.rs); the
// constructor writes each worker's first one as its (o, w) pair, so the kernel divides nothing.
// Requirements: dst offsets multiples of 4, source offsets multiples of E (or 0xFFFFFFFF: any
// value with bit 31 set is a zero element), src base and stride multiples of E; no two words
// share a destination; src and dst do not overlap; O*W <= 2^20. Scratch: none. Memory: any
// region, no element constraints (one access per bundle).
//
// Set-up (35 bundles): (o, w) of the worker's first item unpacked with K (word 7), the
// bases of outer iteration o, the table pointer of entry w, and a jump through
// gather_elements_modes[4 NOZERO + 2 STRIDED + (E == 1)].
// Loops (bundles per destination word; every bundle makes one memory access):
//   E = 2, NOZERO   6    rpt { ld src0 ; ld src1 ; ldb16 ; ldb16 ; st32 previous word +
//                          sort4x16lo ; ld dst }
//   E = 2           9    the same with a brneg per lane (a zero lane costs the same: its
//                        fix-up { bri ; setzi $a, 0 } replaces the load)
//   E = 1, NOZERO   10   rpt { 4 offsets, 4 ldb8, st32 previous word, ld dst }, the lanes
//                        combined by sort4x16lo, sort4x16lo, sort8x8lo in the aux slots
//   E = 1           15   with a brneg per lane
//   E = 2, STRIDED  4    rpt { ldb16 ; ldb16 ; add delta + sort4x16lo ; st32step }
//   E = 1, STRIDED  6    rpt { 4 ldb8 ; add delta ; st32step previous word } (the lanes
//                        combined in the aux slots; the first word before the rpt)
// Each word is stored one iteration late (the store of the first iteration writes a junk word
// to the segment's first destination word, which the second store overwrites; the last word is
// stored after the loop; STRIDED stores in order). A worker's items are cut into segments, one
// per outer iteration; a segment costs 6 bundles plus 4 for each new outer iteration (STRIDED:
// 3 + 5 for f16, 4 + 7 for FP8). Set-up 48 bundles, mode entry 2 (STRIDED 18 / 20).
// Code: 1.8 KB.
// Registers: $m0 src_stride, $m1 items left after this segment, $m2 words in it, $m3 W,
// $m4 / $m7 source offsets, $m5 dst offset, $m6 source-offset pointer, $m8 dst_stride,
// $m9 src base of the outer iteration, $m10 dst base, $m11 dst-offset pointer (entry start);
// the STRIDED loops: $m9 / $m6 / $m10 / $m11 lane bases, $m4 delta, $m5 dst pointer, $m7 step.
// ARF: $a0..$a3 lanes (ldb16 / ldb8 broadcast them), $a2 / $a6 the assembled word.

#define V_SRC      0
#define V_DST      1
#define V_TABLE    2
#define V_W        3
#define V_SSTRIDE  5
#define V_DSTRIDE  6
#define V_E        7
#define V_SPLIT    8
#define E_K_SHIFT  8

    .section .data.gather_elements_modes
    .align 4
gather_elements_modes:
    .int .Linit_g2, .Linit_g1, .Linit_s2, .Linit_s1
    .int .Linit_f2, .Linit_f1, .Linit_s2, .Linit_s1

    .section .text.gather_elements
    .globl gather_elements
    .type gather_elements, @function
    .worker
    .align 8
gather_elements:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m0, $m0, 3 ; fnop }
    { ld32 $m1, $mvertex_base, $m0, V_SPLIT + 1 ; fnop }   // items of this worker
    { ld32 $m2, $mvertex_base, $m0, V_SPLIT ; fnop }       // first item
    { brz $m1, .Lexit ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_W ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_E ; fnop }
    { ld32 $m9, $mvertex_base, $mzero, V_SRC ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_DST ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { shr $m4, $m7, E_K_SHIFT ; fnop }
    { and $m4, $m4, 31 ; fnop }                            // K
    { shr $m5, $m2, $m4 ; fnop }                           // o
    { shl $m6, $m5, $m4 ; fnop }
    { sub $m6, $m2, $m6 ; fnop }                           // w
    { mul $m4, $m5, $m0 ; fnop }
    { add $m9, $m9, $m4 ; fnop }                           // src of outer iteration o
    { mul $m4, $m5, $m8 ; fnop }
    { add $m10, $m10, $m4 ; fnop }                         // dst of outer iteration o
    { and $m4, $m7, 3 ; fnop }
    { cmpeq $m4, $m4, 1 ; fnop }                           // 1: FP8 elements
    { shl $m5, $m4, 3 ; fnop }
    { add $m5, $m5, 12 ; fnop }                            // entry bytes: 12 or 20
    { mul $m5, $m5, $m6 ; fnop }
    { add $m11, $m11, $m5 ; fnop }                         // entry w
    { shr $m7, $m7, 29 ; fnop }
    { and $m7, $m7, 6 ; fnop }
    { or $m7, $m7, $m4 ; fnop }                            // 4 NOZERO + 2 STRIDED + (E == 1)
    { sub $m2, $m3, $m6 ; fnop }                           // words left in outer iteration o
    { setzi $m6, gather_elements_modes ; fnop }
    { ld32 $m7, $m6, $mzero, $m7 ; fnop }
    { br $m7 ; fnop }

.Linit_f2:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lf2_go ; fnop }
.Linit_g2:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lg2_go ; fnop }
.Linit_f1:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lf1_go ; fnop }
.Linit_g1:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lg1_go ; fnop }

// ---- f16, no zero lanes: 6 bundles per word. ----
.Lf2_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lf2_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m6, $m11, 4 ; fnop }
    { ld32 $m5, $m11, $mzero, 0 ; fnop }                   // first word: the junk store's target
    { rpt $m2, 5 ; fnop }
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { ld32step $m7, $mzero, $m6+=, 2 ; fnop }
    { ldb16 $a0, $m9, $m4, 0 ; fnop }
    { ldb16 $a1, $m9, $m7, 0 ; fnop }
    { st32 $a2, $m10, $m5, 0 ; sort4x16lo $a2, $a0, $a1 }   // the previous word; this one
    { ld32step $m5, $mzero, $m11+=, 3 ; fnop }
    { st32 $a2, $m10, $m5, 0 ; fnop }
    { brnz $m1, .Lf2_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- f16 with zero lanes: 9 bundles per word. ----
.Lg2_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lg2_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m6, $m11, 4 ; fnop }
    { ld32 $m5, $m11, $mzero, 0 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lg2:
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { ld32step $m7, $mzero, $m6+=, 2 ; fnop }
    { brneg $m4, .Lg2_z0 ; fnop }
    { ldb16 $a0, $m9, $m4, 0 ; fnop }
.Lg2_1:
    { brneg $m7, .Lg2_z1 ; fnop }
    { ldb16 $a1, $m9, $m7, 0 ; fnop }
.Lg2_2:
    { st32 $a2, $m10, $m5, 0 ; sort4x16lo $a2, $a0, $a1 }
    { ld32step $m5, $mzero, $m11+=, 3 ; fnop }
    { brnzdec $m2, .Lg2 ; fnop }
    { st32 $a2, $m10, $m5, 0 ; fnop }
    { brnz $m1, .Lg2_wrap ; fnop }
    exitz $mzero
    .align 8
.Lg2_z0:
    { bri .Lg2_1 ; setzi $a0, 0 }
.Lg2_z1:
    { bri .Lg2_2 ; setzi $a1, 0 }

// ---- FP8, no zero lanes: 10 bundles per word. ----
.Lf1_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lf1_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m6, $m11, 4 ; fnop }
    { ld32 $m5, $m11, $mzero, 0 ; fnop }
    { rpt $m2, 9 ; fnop }
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { ld32step $m7, $mzero, $m6+=, 1 ; fnop }
    { ldb8 $a0, $m9, $m4, 0 ; fnop }
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { ldb8 $a1, $m9, $m7, 0 ; fnop }
    { ld32step $m7, $mzero, $m6+=, 2 ; fnop }
    { ldb8 $a2, $m9, $m4, 0 ; sort4x16lo $a4, $a0, $a1 }   // e0 e0 e1 e1
    { ldb8 $a3, $m9, $m7, 0 ; fnop }
    { st32 $a6, $m10, $m5, 0 ; sort4x16lo $a5, $a2, $a3 }   // e2 e2 e3 e3
    { ld32step $m5, $mzero, $m11+=, 5 ; sort8x8lo $a6, $a4, $a5 }   // e0 e1 e2 e3
    { st32 $a6, $m10, $m5, 0 ; fnop }
    { brnz $m1, .Lf1_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- FP8 with zero lanes: 15 bundles per word. ----
.Lg1_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lg1_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m6, $m11, 4 ; fnop }
    { ld32 $m5, $m11, $mzero, 0 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lg1:
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { brneg $m4, .Lg1_z0 ; fnop }
    { ldb8 $a0, $m9, $m4, 0 ; fnop }
.Lg1_1:
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { brneg $m4, .Lg1_z1 ; fnop }
    { ldb8 $a1, $m9, $m4, 0 ; fnop }
.Lg1_2:
    { ld32step $m4, $mzero, $m6+=, 1 ; fnop }
    { brneg $m4, .Lg1_z2 ; sort4x16lo $a4, $a0, $a1 }
    { ldb8 $a2, $m9, $m4, 0 ; fnop }
.Lg1_3:
    { ld32step $m4, $mzero, $m6+=, 2 ; fnop }
    { brneg $m4, .Lg1_z3 ; fnop }
    { ldb8 $a3, $m9, $m4, 0 ; fnop }
.Lg1_4:
    { st32 $a6, $m10, $m5, 0 ; sort4x16lo $a5, $a2, $a3 }
    { ld32step $m5, $mzero, $m11+=, 5 ; sort8x8lo $a6, $a4, $a5 }
    { brnzdec $m2, .Lg1 ; fnop }
    { st32 $a6, $m10, $m5, 0 ; fnop }
    { brnz $m1, .Lg1_wrap ; fnop }
    exitz $mzero
    .align 8
.Lg1_z0:
    { bri .Lg1_1 ; setzi $a0, 0 }
.Lg1_z1:
    { bri .Lg1_2 ; setzi $a1, 0 }
.Lg1_z2:
    { bri .Lg1_3 ; setzi $a2, 0 }
.Lg1_z3:
    { bri .Lg1_4 ; setzi $a3, 0 }
    .align 8

// ---- STRIDED (no table reads in the loop): word w of an outer iteration is at d0 + 4w and its
// lane k at s0 + (L w + k) ds (L = 4 / E lanes), from entry 0 (d0, s0, s0 + ds). Lane k reads
// through its own base P_k = src + o*src_stride + s0 + k ds and a shared delta that steps by
// L ds per word; the words are stored with st32step. $m8 = dst_stride - 4W moves the
// destination pointer from the end of one outer iteration to the start of the next.
.Linit_s2:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m5, $m6, $mzero, 0 ; fnop }                    // d0
    { ld32 $m4, $m6, $mzero, 1 ; fnop }                    // s0
    { ld32 $m7, $m6, $mzero, 2 ; fnop }                    // s0 + ds
    { sub $m7, $m7, $m4 ; fnop }                           // ds
    { add $m9, $m9, $m4 ; fnop }                           // P0
    { add $m6, $m9, $m7 ; fnop }                           // P1
    { add $m5, $m10, $m5 ; fnop }                          // dst of outer iteration o, word 0
    { sub $m4, $m3, $m2 ; fnop }                           // w of the first item
    { min $m2, $m2, $m1 ; fnop }
    { shl $m0, $m4, 2 ; fnop }
    { add $m5, $m5, $m0 ; fnop }                           // its word
    { shl $m0, $m3, 2 ; fnop }
    { sub $m8, $m8, $m0 ; fnop }                           // dst_stride - 4W
    { ld32 $m0, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { shl $m7, $m7, 1 ; fnop }                             // 2 ds per word
    { mul $m4, $m4, $m7 ; fnop }                           // delta of the first word
    { bri .Ls2_go ; fnop }
.Ls2_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m6, $m6, $m0 ; fnop }
    { setzi $m4, 0 ; fnop }
    { add $m5, $m5, $m8 ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Ls2_go:
    { sub $m1, $m1, $m2 ; fnop }
    { rpt $m2, 3 ; fnop }
    { ldb16 $a0, $m9, $m4, 0 ; fnop }
    { ldb16 $a1, $m6, $m4, 0 ; fnop }
    { add $m4, $m4, $m7 ; sort4x16lo $a2, $a0, $a1 }
    { st32step $a2, $mzero, $m5+=, 1 ; fnop }
    { brnz $m1, .Ls2_wrap ; fnop }
    exitz $mzero
    .align 8

.Linit_s1:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m5, $m6, $mzero, 0 ; fnop }                    // d0
    { ld32 $m4, $m6, $mzero, 1 ; fnop }                    // s0
    { ld32 $m7, $m6, $mzero, 2 ; fnop }                    // s0 + ds
    { sub $m7, $m7, $m4 ; fnop }                           // ds
    { add $m5, $m10, $m5 ; fnop }
    { add $m9, $m9, $m4 ; fnop }                           // P0
    { add $m6, $m9, $m7 ; fnop }                           // P1
    { add $m10, $m6, $m7 ; fnop }                          // P2
    { add $m11, $m10, $m7 ; fnop }                         // P3
    { sub $m4, $m3, $m2 ; fnop }
    { min $m2, $m2, $m1 ; fnop }
    { shl $m0, $m4, 2 ; fnop }
    { add $m5, $m5, $m0 ; fnop }
    { shl $m0, $m3, 2 ; fnop }
    { sub $m8, $m8, $m0 ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { shl $m7, $m7, 2 ; fnop }                             // 4 ds per word
    { mul $m4, $m4, $m7 ; fnop }
    { bri .Ls1_go ; fnop }
// Each word is combined over two iterations: the rpt body stores word i - 1 while it
// assembles word i; the first word of a segment is assembled before the rpt.
.Ls1_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m6, $m6, $m0 ; fnop }
    { add $m10, $m10, $m0 ; fnop }
    { add $m11, $m11, $m0 ; fnop }
    { setzi $m4, 0 ; fnop }
    { add $m5, $m5, $m8 ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Ls1_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
    { ldb8 $a0, $m9, $m4, 0 ; fnop }
    { ldb8 $a1, $m6, $m4, 0 ; fnop }
    { ldb8 $a2, $m10, $m4, 0 ; sort4x16lo $a4, $a0, $a1 }
    { ldb8 $a3, $m11, $m4, 0 ; fnop }
    { add $m4, $m4, $m7 ; sort4x16lo $a5, $a2, $a3 }
    { rpt $m2, 5 ; sort8x8lo $a6, $a4, $a5 }
    { ldb8 $a0, $m9, $m4, 0 ; fnop }
    { ldb8 $a1, $m6, $m4, 0 ; fnop }
    { ldb8 $a2, $m10, $m4, 0 ; sort4x16lo $a4, $a0, $a1 }
    { ldb8 $a3, $m11, $m4, 0 ; fnop }
    { add $m4, $m4, $m7 ; sort4x16lo $a5, $a2, $a3 }
    { st32step $a6, $mzero, $m5+=, 1 ; sort8x8lo $a6, $a4, $a5 }
    { st32step $a6, $mzero, $m5+=, 1 ; fnop }
    { brnz $m1, .Ls1_wrap ; fnop }
    exitz $mzero
    .align 8

.Lexit:
    exitz $mzero
    .size gather_elements, . - gather_elements
