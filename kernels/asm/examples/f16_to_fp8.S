// f16 -> FP8 cast: one worker converts `count` groups of four halves to four FP8 bytes each.
//
// Vertex state (five words at $mvertex_base):
//   0: src    address of the f16 input (4-byte aligned), 4*count halves
//   1: dst    address of the FP8 output (4-byte aligned), 4*count bytes
//   2: count  number of 4-element groups (0 is allowed)
//   3: fmt    FP8 format: 1 = F143, 0 = F152
//   4: scale  value for $FP_SCL (6-bit two's complement): results are x * 2^scale
//
// Register use: $m0 src pointer, $m1 dst pointer, $m2 loop counter, $m3 fmt;
//               $a0/$a1 data, $a2 $FP_NFMT value, $a3 $FP_SCL value.

#define VERTEX_SRC   0
#define VERTEX_DST   1
#define VERTEX_COUNT 2
#define VERTEX_FMT   3
#define VERTEX_SCALE 4

    .section .text.f16_to_fp8, "ax", @progbits
    .globl f16_to_fp8
    .type f16_to_fp8, @function
    .worker
    .align 8
f16_to_fp8:
    ld32 $m0, $mvertex_base, $mzero, VERTEX_SRC
    ld32 $m1, $mvertex_base, $mzero, VERTEX_DST
    ld32 $m2, $mvertex_base, $mzero, VERTEX_COUNT
    ld32 $m3, $mvertex_base, $mzero, VERTEX_FMT
    ld32 $a3, $mvertex_base, $mzero, VERTEX_SCALE   // the scale goes straight into the ARF

    // $FP_NFMT wants the format in ARF_FMT (bit 1): shift in the MRF, then move the word to
    // the ARF through this worker's scratch (no MRF -> ARF move instruction exists).
    shl  $m3, $m3, 1
    st32 $m3, $mworker_base, $mzero, 0
    ld32 $a2, $mworker_base, $mzero, 0

    // Bundles (8-byte aligned): the CSR writes issue in the aux pipeline beside the
    // loop set-up. An empty vertex (count = 0) skips the loop.
    { brz $m2, .Ldone ; uput $FP_NFMT, $a2 }
    {
        add $m2, $m2, -1            // brnzdec runs the body count times for count - 1
        uput $FP_SCL, $a3
    }

    .align 8
.Lloop:
    ld32step $a0, $mzero, $m0+=, 1  // halves 0, 1
    ld32step $a1, $mzero, $m0+=, 1  // halves 2, 3
    f16v2tof8 $a0, $a0              // two FP8 bytes in the low 16 bits
    f16v2tof8 $a1, $a1
    sort4x16lo $a0, $a0, $a1        // {fp8 0, fp8 1, fp8 2, fp8 3}
    st32step $a0, $mzero, $m1+=, 1
    brnzdec $m2, .Lloop
.Ldone:
    exitz $mzero
    .size f16_to_fp8, . - f16_to_fp8

// The vertex and its buffers. `tessera asm run --input f16_to_fp8_src=... --set f16_to_fp8_vertex+8=N`
// overrides the data and the count; the buffers hold up to 65,536 halves (every f16 pattern).
    .section .data
    .align 4
f16_to_fp8_vertex:
    .int f16_to_fp8_src, f16_to_fp8_dst, 2, 1, 0
    .type f16_to_fp8_vertex, @object
    .size f16_to_fp8_vertex, . - f16_to_fp8_vertex
    .align 8
f16_to_fp8_src:
    // 1.0, -2.0, 0.5, 448.0, 0.0, -0.0, 1.5, 65504.0 (F143 saturates above 240)
    .short 0x3c00, 0xc000, 0x3800, 0x5f00, 0x0000, 0x8000, 0x3e00, 0x7bff
    .space 131072 - 16
f16_to_fp8_dst:
    .space 65536
