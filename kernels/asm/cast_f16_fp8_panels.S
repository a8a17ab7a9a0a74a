// cast_f16_fp8_panels: an M x K f16 matrix -> FP8 codes in the AMP-left panel layout of
// kernels/src/layout.rs: panels[kb][m][32 bytes] for K-blocks kb < kb_padded and rows
// m < m_padded; byte c of (kb, m) is FP8(x[m][32 kb + c]) for m < M and 32 kb + c < K, else 0.
//
// Numerics: each code is f16_to_fp8(x, $FP_NFMT format, $FP_SCL scale, $FP_CTL.NANOO): the exact
// value x * 2^$FP_SCL rounded once to nearest even; overflow -> NaN (0x80) with NANOO, else
// +-max; NaN / inf -> 0x80; results that round to zero -> 0x00 (tessera_isa::numerics::f16_to_fp8).
// Software writes the negated tensor scale into $FP_SCL for a cast to FP8. NANOO comes from the
// workers' $FP_CTL, which they inherit from the supervisor's $FP_ICTL.
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in        f16 source, 8-byte aligned (layout below)
//   1: out       FP8 panels, kb_padded * m_padded * 32 bytes, 8-byte aligned
//   2: M         rows of data
//   3: K         columns of data; K % 4 == 0
//   4: m_padded  rows of the output panels (>= M)
//   5: nfmt      value for $FP_NFMT (format in bit 1: 2 = F143, 0 = F152)
//   6: scl       value for $FP_SCL (the negated tensor scale, 6-bit two's complement)
//   7: mode      0 general; 1 fast slot loops allowed; 2 also the fast row-wise loop (below).
//                Fast (1, 2) needs `in` and `out` in different memory elements; the kernel
//                falls back to 0 by itself when `in` is not in the interleaved region.
//   8: rowstep   bytes from source row m to row m + 1
//   9: kbstep    bytes from source K-block kb (32 values) to kb + 1
//  10: extra     bytes added between slot 1 and slot 2 (values 16..31 of a block)
//  11: sc        pace strides of the fast slot loops: f0 = rowstep / 8, f1 = 4
//  12: sr        pace strides of the row-wise loop: f0 = 2, f1 = 2 + extra / 8,
//                f2 = (rowstep - 48 - extra) / 8 (10-bit two's complement fields)
//  13: sr1       the same with f2 = (kbstep - 48 - extra) / 8: a single-row matrix
//                (m_padded = 1) runs its consecutive complete K-blocks as the "rows" of one loop
//  14: sbt       pace strides of the row-wise loop of the boundary block when K % 32 is 8, 16
//                or 24 (0: use the slot loops): g = (K % 32) / 8 loaded slots per row;
//                g = 1: f0 = rowstep / 8; g = 2: f0 = 2, f1 = (rowstep - 16) / 8;
//                g = 3: f0 = 2, f1 = 2 + extra / 8, f2 = (rowstep - 32 - extra) / 8
//  15 + 4w: first K-block of worker w, 16 + 4w: its first row, 17 + 4w: its number of
//           (kb, m) items, 18 + 4w: address of its first output row (out + 32 (kb m_padded + m))
// Source layouts (the Rust side computes words 7..14: Source::steps, derived_words and
// boundary_word in kernels/src/elementwise/cast_panels.rs):
//   row-major, row stride S halves (S % 4 == 0, S >= K): rowstep 2S, kbstep 64, extra 0;
//   "packed": the f16 panel order of layout.rs with P rows (F16 block b of row m = halves
//   16b..16b+15 at in + (b P + m) 32): rowstep 32, kbstep 64 P, extra 32 P - 32.
// mode 1 needs rowstep <= 511 atoms, mode 2 also the fields of sr and sr1 within -512..511.
// (The host sets mode 0 for `in` and `out` in the same element slot; the fast modes are a
// promise that they are not.)
// Items are the kb_padded * m_padded output rows of 32 bytes in panel order; each worker writes
// a contiguous run of them. With a fast mode complete vectors are loaded two 64-bit atoms at a
// time with ld2x64pace / ld2xst64pace (the two atoms sit in the two elements of an interleaved
// pair, the store goes to the other buffer's element); otherwise one memory access per bundle.
// Only f16 data is read: never the K padding (k >= K) nor rows m >= M (their bytes are stored
// as zeros directly).
//
// Algorithm. A worker's items are cut into segments, one per K-block kb (rows m0 .. m0 + n).
// In a segment the rows r < M - m0 carry data (if 32 kb < K), the rest are zero rows written
// with one st64 of $azeros per 8 bytes. A data row is four 8-byte slots; slot j holds values
// 32 kb + 8 j .. + 8 and is "full" (8 values), "half" (4 values then 4 zero bytes: the K % 8 == 4
// tail, loaded as one 64-bit atom next to a zeroed $a2:3) or "zero" (beyond K).
//   * Complete block (K - 32 kb >= 32), mode 2: one pipelined rpt loop over the rows, four
//     bundles per row { ld2xst64pace ; f16v8tof8 } (load t, convert t-1, store t-2), the pace
//     strides stepping slot to slot and row to row (4r + 5 bundles). With m_padded = 1 the
//     worker's consecutive complete blocks of the row go through the same loop in one run.
//   * Boundary block with 8, 16 or 24 values, mode 2: the same kind of loop, four bundles per row
//     (one per 8-byte store): g loads of 8 values per row and 4 - g stores of $azeros, the
//     schedule of each g written out (load t, convert t-1, store after).
//   * Otherwise slot by slot, each slot a loop over the rows (output stride 32 bytes):
//     fast: full { ld2xst64pace ; f16v8tof8 } 1 bundle per row, half { ldst64pace ; f16v8tof8 }
//     1 per row (rows >= 2); general: full 3 bundles per row (ld64, ld64step, st64step), half 2;
//     zero slots 1 store per row.
//
// Registers across segments: $m8 out (segment start), $m9 items left, $m10 kb, $m11 m.
// In a segment: $m1 data rows r, $m2 values left in the block from slot j, $m6 in (slot j),
// $m7 out (slot j), $m3 strides, $m4:5 packed addresses, $m0 counts.
// ARF: $a0:3 eight halves, $a4:5 eight FP8 codes. Worker scratch word 0 ($mworker_base) holds
// the worker's mode.

#define V_IN       0
#define V_OUT      1
#define V_M        2
#define V_K        3
#define V_MPAD     4
#define V_NFMT     5
#define V_SCL      6
#define V_MODE     7
#define V_ROWSTEP  8
#define V_KBSTEP   9
#define V_EXTRA    10
#define V_SC       11
#define V_SR       12
#define V_SR1      13
#define V_SBT      14
#define V_SPLIT    15

#define S_MODE     0

#define INTERLEAVED_BASE 0x80000

    .section .text.cast_f16_fp8_panels
    .globl cast_f16_fp8_panels
    .type cast_f16_fp8_panels, @function
    .worker
    .align 8
cast_f16_fp8_panels:
    get $m0, $WSR
    and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK
    shl $m0, $m0, 4
    ld32 $m9, $mvertex_base, $m0, V_SPLIT + 2         // items
    ld32 $a0, $mvertex_base, $mzero, V_NFMT
    ld32 $m10, $mvertex_base, $m0, V_SPLIT            // kb
    {
        ld32 $a1, $mvertex_base, $mzero, V_SCL
        uput $FP_NFMT, $a0
    }
    {
        brz $m9, .Lexit
        uput $FP_SCL, $a1
    }
    ld32 $m11, $mvertex_base, $m0, V_SPLIT + 1        // m
    ld32 $m8, $mvertex_base, $m0, V_SPLIT + 3         // out of the first item
    // Fast modes need `in` in the interleaved region (its adjacent atoms in different elements).
    ld32 $m1, $mvertex_base, $mzero, V_IN
    ld32 $m2, $mvertex_base, $mzero, V_MODE
    setzi $m3, INTERLEAVED_BASE
    cmpult $m3, $m1, $m3
    cmpeq $m3, $m3, 0
    mul $m2, $m2, $m3
    st32 $m2, $mworker_base, $mzero, S_MODE

.Lsegment:
    // n = min(items left, m_padded - m); r = clamp(M - m, 0, n), 0 if the block has no data.
    ld32 $m0, $mvertex_base, $mzero, V_MPAD
    sub $m0, $m0, $m11
    min $m0, $m0, $m9
    ld32 $m1, $mvertex_base, $mzero, V_M
    sub $m1, $m1, $m11
    min $m1, $m1, $m0
    max $m1, $m1, $mzero
    ld32 $m2, $mvertex_base, $mzero, V_K
    shl $m3, $m10, 5
    sub $m2, $m2, $m3                                 // values left from this block on (signed)
    cmpslt $m3, $mzero, $m2
    mul $m1, $m1, $m3
    brz $m1, .Lzero_rows
    // Source address of (kb, m, slot 0).
    ld32 $m3, $mvertex_base, $mzero, V_KBSTEP
    mul $m3, $m3, $m10
    ld32 $m4, $mvertex_base, $mzero, V_ROWSTEP
    mul $m4, $m4, $m11
    add $m3, $m3, $m4
    ld32 $m4, $mvertex_base, $mzero, V_IN
    add $m3, $m3, $m4
    ld32 $m4, $mworker_base, $mzero, S_MODE
    cmpeq $m4, $m4, 2
    add $m0, $m1, -1
    brz $m4, .Lslots                                  // row-wise loops need mode 2
    cmpslt $m5, $m2, 32
    brz $m5, .Lrowwise                                // a complete block
    and $m5, $m2, 7
    brnz $m5, .Lslots                                 // a K % 8 == 4 tail: slot loops
    ld32 $m5, $mvertex_base, $mzero, V_SBT
    brnz $m5, .Lboundary_rowwise                      // 8, 16 or 24 values, row-wise

.Lslots:
    // Slot by slot.
    mov $m6, $m3
    mov $m7, $m8
.Lslot:
    cmpslt $m4, $m2, 8
    brz $m4, .Lfull
    cmpslt $m4, $m2, 4
    brz $m4, .Lhalf
    bri .Lzero_slot

    .align 8
.Lfull:
    ld32 $m4, $mworker_base, $mzero, S_MODE
    cmpult $m5, $m1, 2
    brnz $m5, .Lfull_general
    brz $m4, .Lfull_general
    // Fast full slot: rows t: load t, convert t-1, store t-2.
    add $m4, $m6, 8
    tapack $m4:5, $m6, $m4, $m7
    ld32 $m3, $mvertex_base, $mzero, V_SC
    add $m0, $m1, -2
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101 ; fnop }
    {
        ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101
        f16v8tof8 $a4:5, $a0:3
    }
    { rpt $m0, 0 ; fnop }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b100101
        f16v8tof8 $a4:5, $a0:3
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0b10
        f16v8tof8 $a4:5, $a0:3
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0b10 ; fnop }
    bri .Lslot_next

    .align 8
.Lfull_general:
    // General full slot, 3 bundles per row; the store lags one row.
    add $m4, $m6, 8
    setzi $m5, 0
    ld32 $m3, $mvertex_base, $mzero, V_ROWSTEP
    shr $m3, $m3, 3                                   // row step in atoms
    add $m0, $m1, -1
    ld64 $a0:1, $m6, $m5, 0
    { ld64step $a2:3, $m4, $m5+=, $m3 ; fnop }
    { rpt $m0, 2 ; f16v8tof8 $a4:5, $a0:3 }
    { ld64 $a0:1, $m6, $m5, 0 ; fnop }
    { ld64step $a2:3, $m4, $m5+=, $m3 ; fnop }
    { st64step $a4:5, $mzero, $m7+=, 4 ; f16v8tof8 $a4:5, $a0:3 }
    st64step $a4:5, $mzero, $m7+=, 4
    bri .Lslot_restore

    .align 8
.Lhalf:
    ld32 $m4, $mworker_base, $mzero, S_MODE
    cmpult $m5, $m1, 2
    brnz $m5, .Lhalf_general
    brz $m4, .Lhalf_general
    // Fast half slot: one atom per row beside zeros in $a2:3; load t, convert t-1, store t-2.
    ld32 $m3, $mvertex_base, $mzero, V_ROWSTEP
    add $m0, $m1, -2
    {
        ld64 $a0:1, $m6, $mzero, 0
        sort4x32lo $a2:3, $azeros, $azeros
    }
    {
        ld64 $a0:1, $m6, $m3, 0
        f16v8tof8 $a4:5, $a0:3
    }
    add $m4, $m6, $m3
    add $m4, $m4, $m3
    tapack $m4:5, $m4, $m4, $m7
    ld32 $m3, $mvertex_base, $mzero, V_SC
    { rpt $m0, 0 ; fnop }
    {
        ldst64pace $a0:1, $a4:5, $m4:5+=, $m3, 0b1001
        f16v8tof8 $a4:5, $a0:3
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0b10
        f16v8tof8 $a4:5, $a0:3
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0b10 ; fnop }
    bri .Lslot_next

    .align 8
.Lhalf_general:
    setzi $m5, 0
    ld32 $m3, $mvertex_base, $mzero, V_ROWSTEP
    shr $m3, $m3, 3                                   // row step in atoms
    add $m0, $m1, -1
    {
        ld64step $a0:1, $m6, $m5+=, $m3
        sort4x32lo $a2:3, $azeros, $azeros
    }
    { rpt $m0, 1 ; f16v8tof8 $a4:5, $a0:3 }
    { ld64step $a0:1, $m6, $m5+=, $m3 ; fnop }
    { st64step $a4:5, $mzero, $m7+=, 4 ; f16v8tof8 $a4:5, $a0:3 }
    st64step $a4:5, $mzero, $m7+=, 4
    bri .Lslot_restore

    .align 8
.Lzero_slot:
    // Zero slot: one store of 8 zero bytes per row.
    { rpt $m1, 0 ; fnop }
    { st64step $azeros, $mzero, $m7+=, 4 ; fnop }

.Lslot_restore:
    // The general and zero loops moved $m7 down the rows: back to row 0 of the slot.
    shl $m0, $m1, 5
    sub $m7, $m7, $m0
.Lslot_next:
    add $m6, $m6, 16
    add $m7, $m7, 8
    add $m2, $m2, -8
    sub $m0, $m7, $m8                                 // 8 * (next slot)
    cmpeq $m4, $m0, 16
    brz $m4, .Lslot_check
    ld32 $m4, $mvertex_base, $mzero, V_EXTRA          // slot 2 starts in the next f16 panel
    add $m6, $m6, $m4
.Lslot_check:
    cmpult $m4, $m0, 32
    brnz $m4, .Lslot
    bri .Lzero_rows

    .align 8
.Lrowwise:
    // Complete block, fast, row-wise: 4 bundles per row, pace strides f0 (+16 bytes), f1 (slot 1
    // -> 2), f2 (slot 3 -> next row); the store advances one atom at a time.
    ld32 $m2, $mvertex_base, $mzero, V_MPAD
    cmpeq $m2, $m2, 1                                 // single row: a run of blocks
    brnz $m2, .Lblock_run
    add $m4, $m3, 8
    tapack $m4:5, $m3, $m4, $m8
    ld32 $m3, $mvertex_base, $mzero, V_SR
.Lrowwise_loop:
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101 ; fnop }
    {
        ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b1010
        f16v8tof8 $a4:5, $a0:3
    }
    { rpt $m0, 3 ; fnop }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b000101
        f16v8tof8 $a4:5, $a0:3
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b001111
        f16v8tof8 $a4:5, $a0:3
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b000101
        f16v8tof8 $a4:5, $a0:3
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b001010
        f16v8tof8 $a4:5, $a0:3
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b000101
        f16v8tof8 $a4:5, $a0:3
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b001111
        f16v8tof8 $a4:5, $a0:3
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0
        f16v8tof8 $a4:5, $a0:3
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }
    brnz $m2, .Lblock_run_done

.Lzero_rows:
    // Rows r .. n of the segment are zero: 4 stores each. Then the next K-block.
    ld32 $m0, $mvertex_base, $mzero, V_MPAD
    sub $m0, $m0, $m11
    min $m0, $m0, $m9                                 // n again
    sub $m9, $m9, $m0
    sub $m2, $m0, $m1                                 // zero rows
    { shl $m3, $m1, 5 ; fnop }
    { add $m3, $m8, $m3 ; fnop }
    { shl $m2, $m2, 2 ; fnop }
    { rpt $m2, 0 ; fnop }
    { st64step $azeros, $mzero, $m3+=, 1 ; fnop }
    shl $m0, $m0, 5
    add $m8, $m8, $m0
    add $m10, $m10, 1
    setzi $m11, 0
    brnz $m9, .Lsegment
.Lexit:
    exitz $mzero

.Lblock_run:
    // m_padded = 1: the next min(items, (K - 32 kb) / 32) blocks are complete and contiguous in
    // the output; the row-wise loop walks them with f2 = the K-block step (sr1).
    ld32 $m1, $mvertex_base, $mzero, V_K
    shl $m0, $m10, 5
    sub $m1, $m1, $m0
    shr $m1, $m1, 5
    min $m1, $m1, $m9                                 // blocks in the run
    add $m0, $m1, -1
    add $m4, $m3, 8
    tapack $m4:5, $m3, $m4, $m8
    ld32 $m3, $mvertex_base, $mzero, V_SR1
    bri .Lrowwise_loop
.Lblock_run_done:
    sub $m9, $m9, $m1
    add $m10, $m10, $m1
    shl $m0, $m1, 5
    add $m8, $m8, $m0
    brnz $m9, .Lsegment
    exitz $mzero

.Lboundary_rowwise:
    // Boundary block, g = rem / 8 loaded slots per row, row-wise; $m0 = r - 1.
    add $m4, $m3, 8
    tapack $m4:5, $m3, $m4, $m8
    ld32 $m3, $mvertex_base, $mzero, V_SBT
    cmpeq $m6, $m2, 16
    brnz $m6, .Lboundary2
    cmpeq $m6, $m2, 8
    { brnz $m6, .Lboundary1 ; fnop }
    // g = 3: stores d0 d1 d2 0 per row.
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101 ; fnop }
    {
        ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b1010
        f16v8tof8 $a4:5, $a0:3                        // d0 of row 0
    }
    { rpt $m0, 3 ; fnop }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b001111   // load slot 2, store d0
        f16v8tof8 $a4:5, $a0:3                        // d1
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0               // d1
        f16v8tof8 $a4:5, $a0:3                        // d2
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b000101   // next row's slot 0, store d2
        fnop
    }
    {
        ld2xst64pace $a0:3, $azeros, $m4:5+=, $m3, 0b001010 // next row's slot 1, store 0
        f16v8tof8 $a4:5, $a0:3                        // next row's d0
    }
    {
        ld2xst64pace $a0:3, $a4:5, $m4:5+=, $m3, 0b001111
        f16v8tof8 $a4:5, $a0:3
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0
        f16v8tof8 $a4:5, $a0:3
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { bri .Lzero_rows ; fnop }

.Lboundary2:
    // g = 2: stores d0 d1 0 0 per row.
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101 ; fnop }
    {
        ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b1010
        f16v8tof8 $a4:5, $a0:3                        // d0 of row 0
    }
    { rpt $m0, 3 ; fnop }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0               // d0
        f16v8tof8 $a4:5, $a0:3                        // d1
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }        // d1
    {
        ld2xst64pace $a0:3, $azeros, $m4:5+=, $m3, 0b000101 // next row's slot 0, store 0
        fnop
    }
    {
        ld2xst64pace $a0:3, $azeros, $m4:5+=, $m3, 0b001010 // next row's slot 1, store 0
        f16v8tof8 $a4:5, $a0:3                        // next row's d0
    }
    {
        st64pace $a4:5, $m4:5+=, $m3, 0
        f16v8tof8 $a4:5, $a0:3
    }
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { bri .Lzero_rows ; fnop }

.Lboundary1:
    // g = 1: stores d0 0 0 0 per row.
    { ld2x64pace $a0:1, $a2:3, $m4:5+=, $m3, 0b0101 ; fnop }
    { rpt $m0, 3 ; f16v8tof8 $a4:5, $a0:3 }           // d0 of row 0
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }        // d0
    {
        ld2xst64pace $a0:3, $azeros, $m4:5+=, $m3, 0b000101 // next row's slot 0, store 0
        fnop
    }
    {
        st64pace $azeros, $m4:5+=, $m3, 0
        f16v8tof8 $a4:5, $a0:3                        // next row's d0
    }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $a4:5, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    { st64pace $azeros, $m4:5+=, $m3, 0 ; fnop }
    bri .Lzero_rows

    .size cast_f16_fp8_panels, . - cast_f16_fp8_panels
