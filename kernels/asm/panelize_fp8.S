// panelize_fp8: FP8 rows -> AMP-left panels (kernels/src/layout.rs).
//   dst[(kb*M + m)*32 .. +32] = src[m*stride + 32*kb .. +32]   for m < M, kb < kbs
//
// Worker kernel; the chunks (kb, m) in destination order are split among the workers.
// Vertex state (32-bit words):
//   0: src      FP8 rows, 8-byte aligned; row m starts at src + m*stride
//   1: dst      panels, 8-byte aligned, kbs*M*32 bytes
//   2: M        rows (>= 1)
//   3: stride   source row stride in bytes (a multiple of 8, >= 32*kbs)
//   4: kbs      32-byte column blocks per row
//   5+4w: chunk count of worker w     6+4w: destination byte offset of its first chunk
//   7+4w: source byte offset of its first chunk     8+4w: row m of its first chunk
// Memory: any region, no element constraints (one access per bundle).
// Cost: 13 bundles per 32-byte chunk (4 loads, 4 stores, row/column bookkeeping).

    .section .text.panelize_fp8
    .globl panelize_fp8
    .type panelize_fp8, @function
    .worker
    .align 8
panelize_fp8:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK
    shl $m1, $m0, 4
    add $m1, $m1, 20                       // byte offset of this worker's record
    ld32 $m2, $mvertex_base, $m1, 0        // chunk count
    brz $m2, .Ldone
    ld32 $m3, $mvertex_base, $m1, 1
    ld32 $m4, $mvertex_base, $m1, 2
    ld32 $m5, $mvertex_base, $m1, 3        // row of the current chunk
    ld32 $m6, $mvertex_base, $mzero, 0
    ld32 $m7, $mvertex_base, $mzero, 1
    add $m6, $m6, $m4                      // source address of the current chunk
    add $m7, $m7, $m3                      // destination address
    ld32 $m8, $mvertex_base, $mzero, 2     // M
    ld32 $m9, $mvertex_base, $mzero, 3     // stride
    mul $m10, $m8, $m9
    sub $m10, $m9, $m10
    add $m10, $m10, 32                     // from row M-1 of block kb to row 0 of block kb+1
    add $m2, $m2, -1
.Lloop:
    ld64 $a0:1, $m6, $mzero, 0
    ld64 $a2:3, $m6, $mzero, 1
    ld64 $a4:5, $m6, $mzero, 2
    ld64 $a6:7, $m6, $mzero, 3
    st64step $a0:1, $mzero, $m7+=, 1
    st64step $a2:3, $mzero, $m7+=, 1
    st64step $a4:5, $mzero, $m7+=, 1
    st64step $a6:7, $mzero, $m7+=, 1
    add $m5, $m5, 1
    cmpeq $m0, $m5, $m8
    brnz $m0, .Lwrap
    add $m6, $m6, $m9
    brnzdec $m2, .Lloop
    exitz $mzero
.Lwrap:
    setzi $m5, 0
    add $m6, $m6, $m10
    brnzdec $m2, .Lloop
.Ldone:
    exitz $mzero
    .size panelize_fp8, . - panelize_fp8
