// gemm_fp8: C = A x B (+ C0), FP8 activations and weights on the AMP (`f8v8hihov4amp`), F16
// partial sums and results.
//
// Supervisor entry `gemm_fp8` ($mvertex_base = the vertex; returns with `br $m10`). For each
// column block nb (16 output channels) and K-block kb, in that order, it loads the 64 $CWEI
// registers while no worker runs (`sync` local first) and `runall`s the six workers over the
// rows. The supervisor CSRs are the caller's: $FP_INFMT (bit 1 = format of A, bit 0 = format of
// B; 1 = F143, 0 = F152) and $FP_ISCL (= scale of A + scale of B, 6-bit two's complement).
//
// Vertex (32-bit words):
//   0: A      AMP-left panels (kernels/src/layout.rs) with m_padded = M: panel kb is M rows of
//             32 bytes (row m = A[m][32kb .. 32kb+32], zero beyond K), panels consecutive
//   1: B      weights in $CWEI block order [nb][kb][channel 0..15][phase 0..3][8 bytes], 512
//             bytes per block, zero beyond N and K; interleaved memory, 16-byte aligned
//   2: C      output: M rows of Np = 16*nbs halves (row stride RS = 2*Np bytes); interleaved
//             memory, 16-byte aligned. Columns N..Np get what their zero weights give.
//   3: C0     partial sums in, same layout as C (read only when flags bit 0 is set)
//   4: S      16 bytes of scratch (the launch record), 4-byte aligned, any memory
//   5: M >= 1 rows       6: kbs >= 1 K-blocks       7: nbs >= 1 column blocks
//   8: flags  bit 0: add C0 (else the partial sums are +0)
//   9..15: 0
//   16+8w .. 23+8w: the record of worker w, for the split of the M rows into
//   (first, count) (remainder on the first workers). `runall` gives it to worker w as its
//   vertex in the kb = 0 launches:
//     +0 A + 32*first        +1 C + RS*first        +2 C0 + RS*first (0 without C0)
//     +3 count - 3 (signed)
//     +4 pace stride: bits 9:0 (field 0) = RS/8 - 3 (the row jump in 8-byte atoms), fields
//        1 and 2 zero (field 1 is the "hold" stride); bit 31 set when count < 3
//     +5 S                   +6 RS                  +7 count
//     +8 C + (first + count - 2)*RS + 16: where a chained launch's stores resume
//     +9 the pace stride with field 0 = -((count-1)*RS/8 + 3): the wrap from row count-1 to 0
//   flags bit 1: K-blocks 1 .. kbs-1 chained (M >= 24, kbs >= 3, every wrap fits 10 bits)
// Worker scratch: 20 bytes at $mworker_base ($WORKERn_BASE), written by a worker's kb = 0
// launch and read by its kb >= 1 launches (packed addresses, C row, stride, rpt count).
//
// Memory requirements. One `ld2xst64pace` reads A and the partials and writes C in the same
// cycle, so the three streams must be in different memory elements: A, C0 and C in three
// different element slots (A and C0 in either region, C in the interleaved region). After
// K-block 0 the partials come from C itself (accumulation in place): the partial read runs 2-3
// rows ahead of the store and one 8-byte atom off in phase, so the two addresses differ in bit
// 3 and always hit the two different elements of an interleaved pair (RS is a multiple of 32).
// RS <= 4112 bytes (N <= 2048) so the row jump fits the 10-bit stride field. Every access stays
// inside the buffers (no over-reads).
//
// Algorithm. Worker w streams its `count` rows through the AMP. AMP call c (phase c % 4)
// consumes input row c/4 - 1 and partial row c/4 and returns result row c/4 - 2: 4 warm-up
// calls (partials of row 0 only), 4*count calls, 4 drain calls. Bundle b issues call b in the
// aux slot and in the main slot loads the operands of call b+1 and stores the result of call
// b-2 (results alternate between $a4:5 and $a6:7, so a store reads the value from two calls
// ago). For count >= 3 the main slots are: b = -1..2 the partials of row 0 (ld2x64pace, or
// two ld128 plus setup for kb >= 1), b = 3..9 ld2x64pace (no results yet), b = 10 ..
// 4count-2 ld2xst64pace (a 4-bundle rpt body), b = 4count-1..4count+2 ldst64pace (no more
// partials), b = 4count+3..4count+9 st64pace; one bubble bundle for `rpt`.
// Entries: K-block 0 runs gemm_fp8_worker (partials from C0; 19 setup bundles) or
// gemm_fp8_worker_z (zero partials: no partial stream and no warm-up, since after
// `uput $FP_CLR, ZAACC` the pending partials are +0; 16 setup bundles); they leave the state of
// the later launches in the worker's registers ($m4 A's row in K-block 0, $m7 the C row + RS,
// $m8 the C row, $m2 the pace stride, $m6 the rpt count) and, for the plain loop, in the
// worker's scratch. K-blocks >= 1 run gemm_fp8_worker_nf (M >= 18: one setup bundle, which
// loads the K-block's byte offset from S; row 0's partials come from C with two ld128 and the
// rest of the setup rides in the warm-up bundles) or gemm_fp8_worker_n (M < 18: one more
// bundle to check the rows). K-block 0 of column blocks nb >= 1 without C0 and with M >= 18
// runs gemm_fp8_worker_zr: the C rows moved on by 32 bytes, 4 setup bundles.
// Chained (flags bit 1): K-block 1 runs gemm_fp8_worker_nfc, which starts like _nf but ends
// after its last input row, whose calls already take row 0's partials for the next K-block;
// K-blocks 2 .. kbs-2 run gemm_fp8_worker_c, which goes on from the pipeline the last launch
// left (3 setup bundles, then every bundle an input call: its first calls give out the last
// launch's row count-1) and leaves it full again; K-block kbs-1 runs gemm_fp8_worker_cd, the
// same start with the drain. Without C0 the whole call is one chain: K-block 0 of column
// block 0 runs gemm_fp8_worker_zc (every chained register from the record, leaving the
// pipeline full), K-block kbs-1 of the other column blocks but the last gemm_fp8_worker_cz (its
// last row's partials zero), K-block 0 of column blocks nb >= 1 gemm_fp8_worker_zx (going on
// from it: its first results are the last column block's); only the last launch drains. Per
// launch 4*count + 5 bundles for the chained K-blocks (+ 13 for K-block 1 with C0, + 11 for the
// drained one, + 8 for _zx, + 17 for _zc) against + 14 (_nf).
// The AMP's accumulators and pending partials persisting across exit and launch is [A]
// (gemm_amp_body.S, K_WORKER_C).
// Retained registers [HW]: a worker's $m and $a registers persist from one `runall` to the
// next. osmarks/ipu-stack's F16 GEMM (device/gemm_f16_amp.S, "Workers retain their activation
// and output state between invocations"), which runs numerically checked on a C600, launches
// its later blocks into entries that read only registers its previous launch left; the
// simulator keeps them too (the launch sets the PC, $VERTEX_BASE, $WORKER_BASE, $FP_CTL and
// $FP_STS and nothing else).
// Workers with fewer than 3 rows take a plain loop, one row at a time (18 bundles per row).
// Per K-block >= 1 launch a worker with count >= 3 rows issues 4*count + 14 bundles, of which
// 4*count carry useful AMP calls.
//
// Numerics (the documented AMP model, isa/src/numerics/amp.rs): in every K-block the f16
// partial enters the f32 accumulator exactly, the 4 phases add their 8 products lane by lane
// (amp_phase_fp8, products scaled by 2^FP_ISCL), and the result leaves rounded to f16 (RNE).
// Between K-blocks the partial goes through memory as f16: each K-block rounds once to f16.

#define AMP         f8v8hihov4amp
#define K_SUP       gemm_fp8
#define K_WORKER    gemm_fp8_worker
#define K_WORKER_Z  gemm_fp8_worker_z
#define K_WORKER_N  gemm_fp8_worker_n
#define K_WORKER_NF gemm_fp8_worker_nf
#define K_WORKER_ZR gemm_fp8_worker_zr
#define K_WORKER_NFC gemm_fp8_worker_nfc
#define K_WORKER_C  gemm_fp8_worker_c
#define K_WORKER_CD gemm_fp8_worker_cd
#define K_WORKER_ZC gemm_fp8_worker_zc
#define K_WORKER_CZ gemm_fp8_worker_cz
#define K_WORKER_ZX gemm_fp8_worker_zx

// The code follows in gemm_amp_body.S (appended to this header by the kernel's `source`).
