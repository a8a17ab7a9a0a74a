// copy_runs: table-driven local data movement (rows -> AMP panels, padding, column slices,
// head-major -> row-major, any reorder of 4- or 8-byte granules).
//   for o < O, r < R:  dst[o*dst_stride + T[r].dst .. + T[r].bytes] =
//                      T[r].src == 0xFFFFFFFF ? zeros : src[o*src_stride + T[r].src .. + T[r].bytes]
//
// Worker kernel (all six workers share one vertex; worker w reads its record).
// Vertex state (32-bit words):
//   0: src         source base address (any region)
//   1: dst         destination base address (any region)
//   2: table       R entries of three words (src offset, dst offset, bytes), 4-byte aligned
//   3: R           runs per outer iteration (>= 1)
//   4: O           outer iterations (>= 1; the kernel reads it only through the split)
//   5: src_stride  bytes from outer iteration o to o + 1 in src
//   6: dst_stride  bytes from outer iteration o to o + 1 in dst
//   7: flags       bit 0 W8: 8-byte mode (else 4-byte mode)
//                  bit 1 PACE (W8 only, ignored otherwise): src and dst lie in different memory
//                        elements at every address the runs touch (e.g. two element slots), so
//                        one ldst64pace loads 8 bytes and stores 8 bytes in the same bundle
//                  bit 2 UNIFORM: every entry has the bytes of entry 0 and none is a zero run
//                        (the kernel then reads only (src, dst) per run, and with R = 1 keeps
//                        the single entry in registers)
//                  bit 3 STRIDED: R >= 2 and entry r = entry 0 + r * (entry 1 - entry 0) with
//                        entry 0's bytes, no zero runs (the kernel reads entries 0 and 1 only);
//                        with PACE both strides within -4088 .. 4088 bytes (10-bit atom fields)
//                  bits 4..8 K: the width of r in a worker's first item (R <= 2^K)
//   8 + 2w: first item of worker w as (o << K) | r     9 + 2w: its item count
// Items are the (o, r) pairs numbered o*R + r, split in order (kernels/src/split.rs); the
// constructor writes each worker's first one as its (o, r) pair, so the kernel divides nothing.
// Requirements: in 8-byte mode (4-byte mode) every base, stride, offset and length is a
// multiple of 8 (4); bytes >= 8 (4) and bytes / 8 (4) <= 65535 (the rpt count); a src offset of
// 0xFFFFFFFF (any value with bit 31 set) writes `bytes` zero bytes; runs do not overlap in dst;
// src and dst do not overlap; O*R <= 2^20; PACE addresses below 2 MiB.
// Scratch: 20 bytes at $mworker_base (word 4: the STRIDED loops' run length). Memory: any
// region, no element constraint except PACE's.
// Code: 2.8 KB (one loop per mode).
//
// Set-up (28 bundles): (o, r) of the worker's first item unpacked with K, then src/dst bases
// of outer iteration o, the table pointer of run r, and a jump through copy_runs_modes[flags &
// 15] to the mode's loop.
// Loops (n = bytes / 8 in 8-byte mode, bytes / 4 in 4-byte mode; bundles per run):
//   plain (4 and 8)   7 + 2n    ld32step x3 (src, dst, bytes), shr, brneg (zero run),
//                               rpt n { ld ; st } with base+delta addressing, brnzdec
//   zero run          7 + n     rpt n { st $azeros }
//   UNIFORM           4 + 2n    ld32step x2, rpt n { ld ; st }, brnzdec
//   PACE              12 + n    plain, + absolute addresses, one ld64, tapack, rpt n - 1
//                               { ldst64pace }, st64pace
//   PACE + UNIFORM    8 + n
//   UNIFORM, R = 1    4 + 2n per item (plain), 6 + n (PACE): the entry stays in registers,
//                     the pointers step by stride - bytes
//   STRIDED           per segment of len runs: n columns of 6 + 2 len (plain) or 6 + len
//                     (PACE): granule j of every run of the segment in one rpt with register
//                     strides (ld64step/st64step, or ldst64pace with the strides in the pace
//                     fields), no per-run overhead at all
// So 2 bundles per 8 bytes (per 4 bytes in 4-byte mode), 1 with PACE. A worker's items are cut
// into segments, one per outer iteration; each new segment costs 7 bundles (bases + strides,
// table pointer reload, min(R, items left)), 11 to 12 in the STRIDED loops.
// The constructor (kernels/src/movement/copy_runs.rs) picks the flags by this cost model:
// e.g. 46 rows x 1152 bytes to AMP panels (36 runs of 32 bytes) is 20.5k cycles UNIFORM,
// 15.5k STRIDED and 8.9k STRIDED + PACE.
// Registers: $m0 src_stride, $m1 items left after this segment, $m2 runs left in it (brnzdec),
// $m3 R, $m4 src offset, $m5 dst offset ($m4:5 packed PACE addresses), $m6 granules,
// $m8 dst_stride, $m9 src base of the outer iteration, $m10 dst base, $m11 table pointer.

#define V_SRC      0
#define V_DST      1
#define V_TABLE    2
#define V_R        3
#define V_SSTRIDE  5
#define V_DSTRIDE  6
#define V_FLAGS    7
#define V_SPLIT    8
#define FLAGS_SHIFT 4

    .section .data.copy_runs_modes
    .align 4
copy_runs_modes:
    .int .Linit_p4, .Linit_p8, .Linit_p4, .Linit_q8
    .int .Linit_u4, .Linit_u8, .Linit_u4, .Linit_qu8
    .int .Linit_t4, .Linit_t8, .Linit_t4, .Linit_qt8
    .int .Linit_t4, .Linit_t8, .Linit_t4, .Linit_qt8

    .section .text.copy_runs
    .globl copy_runs
    .type copy_runs, @function
    .worker
    .align 8
copy_runs:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }
    { shl $m0, $m0, 3 ; fnop }
    { ld32 $m1, $mvertex_base, $m0, V_SPLIT + 1 ; fnop }   // items of this worker
    { ld32 $m2, $mvertex_base, $m0, V_SPLIT ; fnop }       // first item
    { brz $m1, .Lexit ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, V_R ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, V_FLAGS ; fnop }
    { ld32 $m9, $mvertex_base, $mzero, V_SRC ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, V_DST ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m0, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { shr $m4, $m7, FLAGS_SHIFT ; fnop }                   // K
    { shr $m5, $m2, $m4 ; fnop }                           // o
    { shl $m6, $m5, $m4 ; fnop }
    { sub $m6, $m2, $m6 ; fnop }                           // r
    { and $m7, $m7, 15 ; fnop }                            // the mode
    { mul $m4, $m5, $m0 ; fnop }
    { add $m9, $m9, $m4 ; fnop }                           // src of outer iteration o
    { mul $m4, $m5, $m8 ; fnop }
    { add $m10, $m10, $m4 ; fnop }                         // dst of outer iteration o
    { mul $m4, $m6, 12 ; fnop }
    { add $m11, $m11, $m4 ; fnop }                         // entry r
    { sub $m2, $m3, $m6 ; fnop }                           // runs left in outer iteration o
    { setzi $m6, copy_runs_modes ; fnop }
    { ld32 $m7, $m6, $mzero, $m7 ; fnop }
    { br $m7 ; fnop }

// ---- Mode entries: the first segment is min(R - r, items) runs. ----
.Linit_p4:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lp4_go ; fnop }
.Linit_p8:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lp8_go ; fnop }
.Linit_q8:
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lq8_go ; fnop }
.Linit_u4:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m6, $m6, $mzero, 2 ; fnop }                    // bytes of every run
    { shr $m6, $m6, 2 ; fnop }
    { cmpeq $m7, $m3, 1 ; fnop }
    { brnz $m7, .Ls4_init ; fnop }
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lu4_go ; fnop }
.Linit_u8:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m6, $m6, $mzero, 2 ; fnop }
    { shr $m6, $m6, 3 ; fnop }
    { cmpeq $m7, $m3, 1 ; fnop }
    { brnz $m7, .Ls8_init ; fnop }
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lu8_go ; fnop }
.Linit_qu8:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m6, $m6, $mzero, 2 ; fnop }
    { shr $m6, $m6, 3 ; fnop }
    { add $m6, $m6, -1 ; fnop }                            // the rpt covers n - 1 granules
    { cmpeq $m7, $m3, 1 ; fnop }
    { brnz $m7, .Lsq8_init ; fnop }
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lqu8_go ; fnop }

// ---- Plain, 4-byte granules. ----
.Lp4_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lp4_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lp4:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m6, $mzero, $m11+=, 1 ; fnop }
    { shr $m6, $m6, 2 ; fnop }
    { brneg $m4, .Lz4 ; fnop }
    { rpt $m6, 1 ; fnop }
    { ld32step $a0, $m9, $m4+=, 1 ; fnop }
    { st32step $a0, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lp4 ; fnop }
    { brnz $m1, .Lp4_wrap ; fnop }
    exitz $mzero
    .align 8
.Lz4:
    { rpt $m6, 0 ; fnop }
    { st32step $azero, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lp4 ; fnop }
    { brnz $m1, .Lp4_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- Plain, 8-byte granules. ----
.Lp8_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lp8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lp8:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m6, $mzero, $m11+=, 1 ; fnop }
    { shr $m6, $m6, 3 ; fnop }
    { brneg $m4, .Lz8 ; fnop }
    { rpt $m6, 1 ; fnop }
    { ld64step $a0:1, $m9, $m4+=, 1 ; fnop }
    { st64step $a0:1, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lp8 ; fnop }
    { brnz $m1, .Lp8_wrap ; fnop }
    exitz $mzero
    .align 8
.Lz8:
    { rpt $m6, 0 ; fnop }
    { st64step $azeros, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lp8 ; fnop }
    { brnz $m1, .Lp8_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- PACE, 8-byte granules: load t + 1 and store t in one bundle. ----
.Lq8_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lq8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lq8:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m6, $mzero, $m11+=, 1 ; fnop }
    { shr $m6, $m6, 3 ; fnop }
    { brneg $m4, .Lzq8 ; fnop }
    { add $m4, $m4, $m9 ; fnop }
    { add $m5, $m5, $m10 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }            // granule 0
    { tapack $m4:5, $m4, $m4, $m5 ; fnop }                 // load: granule 1 on, store: 0 on
    { add $m6, $m6, -1 ; fnop }
    { rpt $m6, 0 ; fnop }
    { ldst64pace $a0:1, $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { st64pace $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { brnzdec $m2, .Lq8 ; fnop }
    { brnz $m1, .Lq8_wrap ; fnop }
    exitz $mzero
    .align 8
.Lzq8:
    { rpt $m6, 0 ; fnop }
    { st64step $azeros, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lq8 ; fnop }
    { brnz $m1, .Lq8_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- UNIFORM, 4-byte granules ($m6 = n for every run). ----
.Lu4_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lu4_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lu4:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 2 ; fnop }
    { rpt $m6, 1 ; fnop }
    { ld32step $a0, $m9, $m4+=, 1 ; fnop }
    { st32step $a0, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lu4 ; fnop }
    { brnz $m1, .Lu4_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- UNIFORM, 8-byte granules. ----
.Lu8_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lu8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lu8:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 2 ; fnop }
    { rpt $m6, 1 ; fnop }
    { ld64step $a0:1, $m9, $m4+=, 1 ; fnop }
    { st64step $a0:1, $m10, $m5+=, 1 ; fnop }
    { brnzdec $m2, .Lu8 ; fnop }
    { brnz $m1, .Lu8_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- PACE + UNIFORM ($m6 = n - 1). ----
.Lqu8_wrap:
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_TABLE ; fnop }
    { min $m2, $m3, $m1 ; fnop }
.Lqu8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m2, $m2, -1 ; fnop }
.Lqu8:
    { ld32step $m4, $mzero, $m11+=, 1 ; fnop }
    { ld32step $m5, $mzero, $m11+=, 2 ; fnop }
    { add $m4, $m4, $m9 ; fnop }
    { add $m5, $m5, $m10 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { tapack $m4:5, $m4, $m4, $m5 ; fnop }
    { rpt $m6, 0 ; fnop }
    { ldst64pace $a0:1, $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { st64pace $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { brnzdec $m2, .Lqu8 ; fnop }
    { brnz $m1, .Lqu8_wrap ; fnop }
    exitz $mzero
    .align 8

// ---- UNIFORM with R = 1: one entry, kept in registers; items are outer iterations. ----
// $m4 / $m5 walk src / dst: after a run they step by stride - bytes.
.Ls4_init:
    { ld32 $m4, $m11, $mzero, 0 ; fnop }
    { ld32 $m5, $m11, $mzero, 1 ; fnop }
    { add $m4, $m4, $m9 ; fnop }
    { add $m5, $m5, $m10 ; fnop }
    { ld32 $m7, $m11, $mzero, 2 ; fnop }
    { sub $m0, $m0, $m7 ; fnop }
    { sub $m8, $m8, $m7 ; fnop }
    { add $m1, $m1, -1 ; fnop }
.Ls4:
    { rpt $m6, 1 ; fnop }
    { ld32step $a0, $mzero, $m4+=, 1 ; fnop }
    { st32step $a0, $mzero, $m5+=, 1 ; fnop }
    { add $m4, $m4, $m0 ; fnop }
    { add $m5, $m5, $m8 ; fnop }
    { brnzdec $m1, .Ls4 ; fnop }
    exitz $mzero
    .align 8
.Ls8_init:
    { ld32 $m4, $m11, $mzero, 0 ; fnop }
    { ld32 $m5, $m11, $mzero, 1 ; fnop }
    { add $m4, $m4, $m9 ; fnop }
    { add $m5, $m5, $m10 ; fnop }
    { ld32 $m7, $m11, $mzero, 2 ; fnop }
    { sub $m0, $m0, $m7 ; fnop }
    { sub $m8, $m8, $m7 ; fnop }
    { add $m1, $m1, -1 ; fnop }
.Ls8:
    { rpt $m6, 1 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { st64step $a0:1, $mzero, $m5+=, 1 ; fnop }
    { add $m4, $m4, $m0 ; fnop }
    { add $m5, $m5, $m8 ; fnop }
    { brnzdec $m1, .Ls8 ; fnop }
    exitz $mzero
    .align 8
// PACE: $m9 / $m10 walk the run starts; the first load steps $m9 by 8.
.Lsq8_init:
    { ld32 $m4, $m11, $mzero, 0 ; fnop }
    { ld32 $m5, $m11, $mzero, 1 ; fnop }
    { add $m9, $m9, $m4 ; fnop }
    { add $m10, $m10, $m5 ; fnop }
    { add $m0, $m0, -8 ; fnop }
    { add $m1, $m1, -1 ; fnop }
.Lsq8:
    { ld64step $a0:1, $mzero, $m9+=, 1 ; fnop }
    { tapack $m4:5, $m9, $m9, $m10 ; fnop }
    { rpt $m6, 0 ; fnop }
    { ldst64pace $a0:1, $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { st64pace $a0:1, $m4:5+=, $mzero, 0 ; fnop }
    { add $m9, $m9, $m0 ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { brnzdec $m1, .Lsq8 ; fnop }
    exitz $mzero
    .align 8

// ---- STRIDED: entry r = entry 0 + r (entry 1 - entry 0), all of entry 0's length (R >= 2).
// A segment runs column by column: granule j of all its runs is one rpt with register strides
// (ds, dd in granules), so the per-run overhead is gone. $m0 / $m3 hold the column's src / dst
// start, $m7 / $m11 the strides, scratch word 4 the granules per run - 1; R and the outer
// strides are reloaded from the vertex at each new outer iteration.
.Linit_t4:
    { setzi $m8, 2 ; fnop }                                // log2 of the granule
    { bri .Lt_init ; fnop }
.Linit_t8:
    { setzi $m8, 3 ; fnop }
.Lt_init:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m4, $m6, $mzero, 0 ; fnop }                    // s0
    { ld32 $m5, $m6, $mzero, 3 ; fnop }                    // s1
    { sub $m7, $m5, $m4 ; fnop }                           // ds
    { add $m9, $m9, $m4 ; fnop }                           // src base + s0
    { ld32 $m4, $m6, $mzero, 1 ; fnop }                    // d0
    { ld32 $m5, $m6, $mzero, 4 ; fnop }                    // d1
    { sub $m11, $m5, $m4 ; fnop }                          // dd
    { add $m10, $m10, $m4 ; fnop }                         // dst base + d0
    { ld32 $m6, $m6, $mzero, 2 ; fnop }                    // bytes
    { shr $m6, $m6, $m8 ; fnop }
    { add $m6, $m6, -1 ; fnop }
    { st32 $m6, $mworker_base, $mzero, 4 ; fnop }          // granules per run - 1
    { sub $m4, $m3, $m2 ; fnop }                           // r of the first item
    { mul $m5, $m4, $m7 ; fnop }
    { add $m0, $m9, $m5 ; fnop }                           // src of run r, granule 0
    { mul $m5, $m4, $m11 ; fnop }
    { add $m3, $m10, $m5 ; fnop }                          // dst of run r, granule 0
    { shrs $m7, $m7, $m8 ; fnop }                          // strides in granules
    { shrs $m11, $m11, $m8 ; fnop }
    { min $m2, $m2, $m1 ; fnop }
    { cmpeq $m8, $m8, 3 ; fnop }
    { brnz $m8, .Lt8_go ; fnop }
    { bri .Lt4_go ; fnop }

.Lt4_wrap:
    { ld32 $m8, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { add $m9, $m9, $m8 ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_R ; fnop }
    { min $m2, $m8, $m1 ; fnop }
    { mov $m0, $m9 ; fnop }
    { mov $m3, $m10 ; fnop }
.Lt4_go:
    { sub $m1, $m1, $m2 ; fnop }
    { ld32 $m6, $mworker_base, $mzero, 4 ; fnop }
.Lt4_col:
    { mov $m4, $m0 ; fnop }
    { mov $m5, $m3 ; fnop }
    { rpt $m2, 1 ; fnop }
    { ld32step $a0, $mzero, $m4+=, $m7 ; fnop }
    { st32step $a0, $mzero, $m5+=, $m11 ; fnop }
    { add $m0, $m0, 4 ; fnop }
    { add $m3, $m3, 4 ; fnop }
    { brnzdec $m6, .Lt4_col ; fnop }
    { brnz $m1, .Lt4_wrap ; fnop }
    exitz $mzero
    .align 8

.Lt8_wrap:
    { ld32 $m8, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { add $m9, $m9, $m8 ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { add $m10, $m10, $m8 ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, V_R ; fnop }
    { min $m2, $m8, $m1 ; fnop }
    { mov $m0, $m9 ; fnop }
    { mov $m3, $m10 ; fnop }
.Lt8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { ld32 $m6, $mworker_base, $mzero, 4 ; fnop }
.Lt8_col:
    { mov $m4, $m0 ; fnop }
    { mov $m5, $m3 ; fnop }
    { rpt $m2, 1 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, $m7 ; fnop }
    { st64step $a0:1, $mzero, $m5+=, $m11 ; fnop }
    { add $m0, $m0, 8 ; fnop }
    { add $m3, $m3, 8 ; fnop }
    { brnzdec $m6, .Lt8_col ; fnop }
    { brnz $m1, .Lt8_wrap ; fnop }
    exitz $mzero
    .align 8

// STRIDED + PACE: per column one tapack (load src, a harmless second load from dst, store
// dst), the first granule with ld2x64pace, then rpt len - 1 { ldst64pace } stepping the load by
// field 0 (ds / 8) and the store by field 1 (dd / 8) of $m7; both within -512 .. 511 atoms.
.Linit_qt8:
    { ld32 $m6, $mvertex_base, $mzero, V_TABLE ; fnop }
    { ld32 $m4, $m6, $mzero, 0 ; fnop }
    { ld32 $m5, $m6, $mzero, 3 ; fnop }
    { sub $m7, $m5, $m4 ; fnop }                           // ds
    { add $m9, $m9, $m4 ; fnop }
    { ld32 $m4, $m6, $mzero, 1 ; fnop }
    { ld32 $m5, $m6, $mzero, 4 ; fnop }
    { sub $m11, $m5, $m4 ; fnop }                          // dd
    { add $m10, $m10, $m4 ; fnop }
    { ld32 $m6, $m6, $mzero, 2 ; fnop }
    { shr $m6, $m6, 3 ; fnop }
    { add $m6, $m6, -1 ; fnop }
    { st32 $m6, $mworker_base, $mzero, 4 ; fnop }
    { sub $m4, $m3, $m2 ; fnop }
    { mul $m5, $m4, $m7 ; fnop }
    { add $m0, $m9, $m5 ; fnop }
    { mul $m5, $m4, $m11 ; fnop }
    { add $m3, $m10, $m5 ; fnop }
    { shrs $m7, $m7, 3 ; fnop }
    { and $m7, $m7, 0x3ff ; fnop }                         // field 0: ds / 8
    { shrs $m11, $m11, 3 ; fnop }
    { and $m11, $m11, 0x3ff ; fnop }
    { shl $m11, $m11, 10 ; fnop }
    { or $m7, $m7, $m11 ; fnop }                           // field 1: dd / 8
    { min $m2, $m2, $m1 ; fnop }
    { bri .Lqt8_go ; fnop }
.Lqt8_wrap:
    { ld32 $m11, $mvertex_base, $mzero, V_SSTRIDE ; fnop }
    { add $m9, $m9, $m11 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_DSTRIDE ; fnop }
    { add $m10, $m10, $m11 ; fnop }
    { ld32 $m11, $mvertex_base, $mzero, V_R ; fnop }
    { min $m2, $m11, $m1 ; fnop }
    { mov $m0, $m9 ; fnop }
    { mov $m3, $m10 ; fnop }
.Lqt8_go:
    { sub $m1, $m1, $m2 ; fnop }
    { add $m8, $m2, -1 ; fnop }
    { ld32 $m6, $mworker_base, $mzero, 4 ; fnop }
.Lqt8_col:
    { tapack $m4:5, $m0, $m3, $m3 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m7, 1 ; fnop }
    { rpt $m8, 0 ; fnop }
    { ldst64pace $a0:1, $a0:1, $m4:5+=, $m7, 9 ; fnop }
    { st64pace $a0:1, $m4:5+=, $m7, 0 ; fnop }
    { add $m0, $m0, 8 ; fnop }
    { add $m3, $m3, 8 ; fnop }
    { brnzdec $m6, .Lqt8_col ; fnop }
    { brnz $m1, .Lqt8_wrap ; fnop }
    exitz $mzero
    .align 8

.Lexit:
    exitz $mzero
    .size copy_runs, . - copy_runs
