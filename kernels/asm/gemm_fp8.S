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
// the later K-blocks in the worker's scratch. K-blocks >= 1 run gemm_fp8_worker_nf (M >= 18:
// 5 setup bundles; row 0's partials come from C with two ld128 and the rest of the setup rides
// in the warm-up bundles) or gemm_fp8_worker_n (M < 18: one more bundle to check the rows).
// Workers with fewer than 3 rows take a plain loop, one row at a time (18 bundles per row).
// Per K-block >= 1 launch a worker with count >= 3 rows issues 4*count + 18 bundles, of which
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

// ==== shared code below (gemm_f16.S has the same text after this line) ====

// Vertex words.
#define V_A        0
#define V_B        1
#define V_C        2
#define V_C0       3
#define V_S        4
#define V_M        5
#define V_KBS      6
#define V_NBS      7
#define V_FLAGS    8
#define V_WORKERS  16
// Worker record words (the vertex of a worker in the kb = 0 launches).
#define W_X0       0      // A + first*32
#define W_O0       1      // C + first*RS
#define W_P0       2      // C0 + first*RS
#define W_RM3      3      // count - 3
#define W_STRIDE   4      // pace stride | bit 31 when count < 3
#define W_S        5      // S
#define W_RS       6      // RS
#define W_COUNT    7      // count
// Launch record (in S; the vertex of every worker in the kb >= 1 launches).
#define L_XDELTA   0      // kb * M * 4: 8-byte atoms from panel 0 to panel kb
#define L_NBOFF    1      // nb * 32: bytes from C row start to column block nb
#define L_RS       2      // RS (for the kb >= 1 slow path)
#define L_KBM1     3      // kbs - 1 (the supervisor's constant)
// Worker scratch ($mworker_base), written by the kb = 0 launch for the kb >= 1 launches.
#define S_LO       0      // packed (A row, C row + RS, C row) of panel 0, column block nb
#define S_HI       1
#define S_STRIDE   2
#define S_RM3      3
#define S_O0       4      // the C row (its first 32 bytes are the partials of row 0)

#define P0 TAMP_F16V4_E4_P0
#define P1 TAMP_F16V4_E4_P1
#define P2 TAMP_F16V4_E4_P2
#define P3 TAMP_F16V4_E4_P3
#define ZAACC (1 << CSR_W_FP_CLR__ZAACC__SHIFT)

// ---------------------------------------------------------------------------------------------
// Supervisor.
// Registers: $m0 entry of the kb = 0 launches, $m1 worker records and $m9 S (both relative to
// TMEM_REGION0_BASE_ADDR, for runall), $m2 S, $m3 kb * M * 4, $m4 nb * 32, $m5 kb counter,
// $m6 nb counter, $m7 M * 4, $m11 the kb >= 1 entry; $m10 is the return address.
    .section .text.K_SUP
    .globl K_SUP
    .type K_SUP, @function
    .supervisor
    .align 8
K_SUP:
    ld32 $m0, $mvertex_base, $mzero, V_B
    ld32 $m2, $mvertex_base, $mzero, V_S
    ld32 $m7, $mvertex_base, $mzero, V_M
    ld32 $m5, $mvertex_base, $mzero, V_KBS
    ld32 $m6, $mvertex_base, $mzero, V_NBS
    ld32 $m11, $mvertex_base, $mzero, V_FLAGS
    put $CCCSLOAD, $m0                  // weight blocks are consecutive: one pointer for all
    shl $m9, $m6, 5
    st32 $m9, $m2, $mzero, L_RS
    add $m5, $m5, -1
    st32 $m5, $m2, $mzero, L_KBM1
    shl $m7, $m7, 2
    setzi $m0, K_WORKER_Z
    and $m11, $m11, 1
    brz $m11, .Lsup_entry0
    setzi $m0, K_WORKER
.Lsup_entry0:
    setzi $m11, TMEM_REGION0_BASE_ADDR
    sub $m1, $mvertex_base, $m11
    add $m1, $m1, V_WORKERS * 4
    sub $m9, $m2, $m11
    setzi $m11, K_WORKER_NF             // kb >= 1 entry: no row check if M >= 18
    cmpult $m8, $m7, 18 * 4
    brz $m8, .Lsup_entry_n
    setzi $m11, K_WORKER_N
.Lsup_entry_n:
    mov $m4, $mzero
    add $m6, $m6, -1
.Lsup_nb:
    // K-block 0 of column block nb: every worker gets its record.
    sync TEXCH_SYNCZONE_LOCAL           // $CWEI and S are shared: wait for every worker
    ld128putcs 0
    ld128putcs 2
    ld128putcs 4
    ld128putcs 6
    ld128putcs 8
    ld128putcs 10
    ld128putcs 12
    ld128putcs 14
    ld128putcs 16
    ld128putcs 18
    ld128putcs 20
    ld128putcs 22
    ld128putcs 24
    ld128putcs 26
    ld128putcs 28
    ld128putcs 30
    ld128putcs 32
    ld128putcs 34
    ld128putcs 36
    ld128putcs 38
    ld128putcs 40
    ld128putcs 42
    ld128putcs 44
    ld128putcs 46
    ld128putcs 48
    ld128putcs 50
    ld128putcs 52
    ld128putcs 54
    ld128putcs 56
    ld128putcs 58
    ld128putcs 60
    ld128putcs 62
    st32 $m4, $m2, $mzero, L_NBOFF
    runall $m0, $m1, 8                  // worker w: vertex = its record (8 words each)
    // Book-keeping runs while the workers do (in the slots they free as they exit).
    ld32 $m5, $m2, $mzero, L_KBM1
    mov $m3, $mzero
    brz $m5, .Lsup_nb_end
    add $m5, $m5, -1
.Lsup_kb:
    // K-blocks 1 .. kbs-1: every worker gets S (its own state is in its scratch).
    add $m3, $m3, $m7
    sync TEXCH_SYNCZONE_LOCAL
    ld128putcs 0
    ld128putcs 2
    ld128putcs 4
    ld128putcs 6
    ld128putcs 8
    ld128putcs 10
    ld128putcs 12
    ld128putcs 14
    ld128putcs 16
    ld128putcs 18
    ld128putcs 20
    ld128putcs 22
    ld128putcs 24
    ld128putcs 26
    ld128putcs 28
    ld128putcs 30
    ld128putcs 32
    ld128putcs 34
    ld128putcs 36
    ld128putcs 38
    ld128putcs 40
    ld128putcs 42
    ld128putcs 44
    ld128putcs 46
    ld128putcs 48
    ld128putcs 50
    ld128putcs 52
    ld128putcs 54
    ld128putcs 56
    ld128putcs 58
    ld128putcs 60
    ld128putcs 62
    st32 $m3, $m2, $mzero, L_XDELTA
    runall $m11, $m9, 0
    brnzdec $m5, .Lsup_kb
.Lsup_nb_end:
    add $m4, $m4, 32
    brnzdec $m6, .Lsup_nb
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    .size K_SUP, . - K_SUP

// ---------------------------------------------------------------------------------------------
// Workers. Registers: $m0:1 packed addresses (A row, partial row, C row), $m2 pace stride,
// $m6 count - 3 (the rpt count); $a0:1 input, $a2:3 partials, $a4:5 / $a6:7 results of even /
// odd calls. Pace stride selects: 0b00 = next atom, 0b01 = field 0 = the row jump (RS/8 - 3
// atoms, after phase 3), 0b10 = field 1 = 0 (hold).
//
// K_WORKER_NF: K-blocks 1 .. kbs-1 when every worker has 3 rows or more (M >= 18); the
// partials are C itself. Vertex = S; the rest of the state is in the worker's scratch.
    .section .text.K_WORKER_NF
    .globl K_WORKER_NF
    .type K_WORKER_NF, @function
    .worker
    .align 8
K_WORKER_NF:
    { ld32 $m2, $mworker_base, $mzero, S_STRIDE    ; setzi $a0, ZAACC }
    { ld32 $m9, $mworker_base, $mzero, S_O0        ; uput $FP_CLR, $a0 }   // zero the AMP state
    { ld32 $m0, $mworker_base, $mzero, S_LO        ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, L_XDELTA    ; fnop }
.Lnext:
    { ld32 $m6, $mworker_base, $mzero, S_RM3       ; fnop }
    // b = -1 .. 2: partials of row 0 straight from C (two 128-bit loads), setup in between.
    { ld128 $a0:3, $m9, $mzero, 0                  ; fnop }
    { ld128 $a4:7, $m9, $mzero, 1                  ; AMP $azeros, $azeros, $a0:1, P0 }
    { add $m0, $m0, $m3                            ; AMP $azeros, $azeros, $a2:3, P1 }  // A: panel kb
    { ld32 $m1, $mworker_base, $mzero, S_HI        ; AMP $azeros, $azeros, $a4:5, P2 }
.Lpipe3:
    // b = 3 .. 9: inputs from row 0, partials from row 1, no results yet.
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $azeros, $a6:7, P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0100 ; AMP $azeros, $a0:1, $a2:3, P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    // b = 10 .. 4count-2: the steady state (input, partials and result every bundle).
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000100 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    { rpt $m6, 3                                   ; fnop }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b000000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b010000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000100 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    // b = 4count-1 .. 4count+2: the last inputs, no partials.
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    // b = 4count+3 .. 4count+9: the last input phase, the drain, the last stores.
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P0 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b01 ; AMP $a6:7, $azeros, $azeros, P1 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $azeros, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; fnop }
    st64pace $a6:7, $m0:1+=, $m2, 0b00
.Lexit:
    exitz $mzero
    .size K_WORKER_NF, . - K_WORKER_NF

// ---------------------------------------------------------------------------------------------
// K_WORKER_N: K-blocks 1 .. kbs-1 when some worker has fewer than 3 rows (M < 18): the same
// setup, then the row check; the plain loop lives here too.
    .section .text.K_WORKER_N
    .globl K_WORKER_N
    .type K_WORKER_N, @function
    .worker
    .align 8
K_WORKER_N:
    { ld32 $m2, $mworker_base, $mzero, S_STRIDE    ; setzi $a0, ZAACC }
    { ld32 $m9, $mworker_base, $mzero, S_O0        ; uput $FP_CLR, $a0 }
    { ld32 $m0, $mworker_base, $mzero, S_LO        ; fnop }
    { ld32 $m3, $mvertex_base, $mzero, L_XDELTA    ; fnop }
    { brpos $m2, .Lnext                            ; fnop }
    { add $m0, $m0, $m3                            ; fnop }
    { shl $m4, $m0, 14                             ; fnop }
    { shr $m4, $m4, 11                             ; fnop }   // A row = packed address 0
    { mov $m8, $m9                                 ; fnop }   // C row = the partial row
    { ld32 $m6, $mworker_base, $mzero, S_RM3       ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, L_RS        ; fnop }
    { add $m6, $m6, 3                              ; fnop }
    { setzi $m3, .Lslow_row                        ; fnop }
    // Fewer than 3 rows: one row at a time (warm-up, inputs, drain, stores). In: $m4 A row,
    // $m9 partial row, $m8 C row, $m7 RS, $m6 rows, $m3 .Lslow_row (or .Lslow_zrow: zero
    // partials, no warm-up).
.Lslow_go:
    { brz $m6, .Lexit                              ; fnop }
    { add $m6, $m6, -1                             ; fnop }
    { br $m3                                       ; fnop }
.Lslow_row:
    { ld64 $a2:3, $m9, $mzero, 0                   ; fnop }
    { ld64 $a2:3, $m9, $mzero, 1                   ; AMP $azeros, $azeros, $a2:3, P0 }
    { ld64 $a2:3, $m9, $mzero, 2                   ; AMP $azeros, $azeros, $a2:3, P1 }
    { ld64 $a2:3, $m9, $mzero, 3                   ; AMP $azeros, $azeros, $a2:3, P2 }
    { add $m9, $m9, $m7                            ; AMP $azeros, $azeros, $a2:3, P3 }
.Lslow_zrow:
    { ld64 $a0:1, $m4, $mzero, 0                   ; fnop }
    { ld64 $a0:1, $m4, $mzero, 1                   ; AMP $azeros, $a0:1, $azeros, P0 }
    { ld64 $a0:1, $m4, $mzero, 2                   ; AMP $azeros, $a0:1, $azeros, P1 }
    { ld64 $a0:1, $m4, $mzero, 3                   ; AMP $azeros, $a0:1, $azeros, P2 }
    { add $m4, $m4, 32                             ; AMP $azeros, $a0:1, $azeros, P3 }
    { nop                                          ; AMP $a4:5, $azeros, $azeros, P0 }
    { st64 $a4:5, $m8, $mzero, 0                   ; AMP $a4:5, $azeros, $azeros, P1 }
    { st64 $a4:5, $m8, $mzero, 1                   ; AMP $a4:5, $azeros, $azeros, P2 }
    { st64 $a4:5, $m8, $mzero, 2                   ; AMP $a4:5, $azeros, $azeros, P3 }
    { st64 $a4:5, $m8, $mzero, 3                   ; fnop }
    { add $m8, $m8, $m7                            ; fnop }
    { brnzdec $m6, .Lslow_next                     ; fnop }
    exitz $mzero
    nop
.Lslow_next:
    { br $m3                                       ; fnop }
    .size K_WORKER_N, . - K_WORKER_N

// ---------------------------------------------------------------------------------------------
// K_WORKER: K-block 0 with partials from C0. Vertex = this worker's record. Saves the state of
// the kb >= 1 launches in the worker's scratch: packed (A row, C row + RS, C row), the C row,
// the stride and the rpt count.
    .section .text.K_WORKER
    .globl K_WORKER
    .type K_WORKER, @function
    .worker
    .align 8
K_WORKER:
    { ld32 $m1, $mvertex_base, $mzero, W_S         ; setzi $a0, ZAACC }
    { ld32 $m4, $mvertex_base, $mzero, W_X0        ; uput $FP_CLR, $a0 }
    { ld32 $m3, $m1, $mzero, L_NBOFF               ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, W_O0        ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { add $m8, $m8, $m3                            ; fnop }   // C row
    { ld32 $m9, $mvertex_base, $mzero, W_P0        ; fnop }
    { add $m7, $m8, $m7                            ; fnop }   // C row + RS
    { add $m9, $m9, $m3                            ; fnop }   // C0 row
    { tapack $m0:1, $m4, $m7, $m8                  ; fnop }
    { st32 $m0, $mworker_base, $mzero, S_LO        ; fnop }
    { st32 $m1, $mworker_base, $mzero, S_HI        ; fnop }
    { st32 $m8, $mworker_base, $mzero, S_O0        ; fnop }
    { tapack $m0:1, $m4, $m9, $m8                  ; fnop }
    { ld32 $m2, $mvertex_base, $mzero, W_STRIDE    ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, W_RM3       ; fnop }
    { st32 $m2, $mworker_base, $mzero, S_STRIDE    ; fnop }
    { st32 $m6, $mworker_base, $mzero, S_RM3       ; fnop }
    { brneg $m2, .Lslow_w                          ; fnop }
    // b = -1 .. 2: partials of row 0 through the pace pair (C0 may be in the standard
    // region); the A address holds (stride select 0b10 = field 1 = 0).
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0010 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0010 ; AMP $azeros, $azeros, $a2:3, P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0010 ; AMP $azeros, $azeros, $a2:3, P1 }
    { ld2x64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0110 ; AMP $azeros, $azeros, $a2:3, P2 }
    { bri .Lpipe3                                  ; fnop }
.Lslow_w:
    { ld32 $m6, $mvertex_base, $mzero, W_COUNT     ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { setzi $m3, .Lslow_row                        ; fnop }
    { bri .Lslow_go                                ; fnop }
    .size K_WORKER, . - K_WORKER

// ---------------------------------------------------------------------------------------------
// K_WORKER_Z: K-block 0 with zero partial sums: no partial stream and no warm-up (after ZAACC
// the pending partials are +0). The packed pair's second address (unused by ldst64pace and
// st64pace) is C row 1 of the worker, read into $azeros while no store runs. Vertex = this
// worker's record; saves the kb >= 1 state like K_WORKER.
    .section .text.K_WORKER_Z
    .globl K_WORKER_Z
    .type K_WORKER_Z, @function
    .worker
    .align 8
K_WORKER_Z:
    { ld32 $m1, $mvertex_base, $mzero, W_S         ; setzi $a0, ZAACC }
    { ld32 $m4, $mvertex_base, $mzero, W_X0        ; uput $FP_CLR, $a0 }
    { ld32 $m3, $m1, $mzero, L_NBOFF               ; fnop }
    { ld32 $m8, $mvertex_base, $mzero, W_O0        ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { add $m8, $m8, $m3                            ; fnop }   // C row
    { ld32 $m2, $mvertex_base, $mzero, W_STRIDE    ; fnop }
    { add $m7, $m8, $m7                            ; fnop }   // C row + RS
    { tapack $m0:1, $m4, $m7, $m8                  ; fnop }
    { st32 $m0, $mworker_base, $mzero, S_LO        ; fnop }
    { st32 $m1, $mworker_base, $mzero, S_HI        ; fnop }
    { st32 $m8, $mworker_base, $mzero, S_O0        ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, W_RM3       ; fnop }
    { st32 $m2, $mworker_base, $mzero, S_STRIDE    ; fnop }
    { st32 $m6, $mworker_base, $mzero, S_RM3       ; fnop }
    { brneg $m2, .Lslow_z                          ; fnop }
    // b = 3 .. 9: inputs of row 0 and row 1 (the second address holds).
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; fnop }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P0 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P1 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P2 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P3 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $a6:7, $a0:1, $azeros, P1 }
    // b = 10 .. 4count+2: input and result every bundle.
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { rpt $m6, 3                                   ; fnop }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P2 }
    // b = 4count+3 .. 4count+9.
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P0 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b01 ; AMP $a6:7, $azeros, $azeros, P1 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $azeros, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; fnop }
    st64pace $a6:7, $m0:1+=, $m2, 0b00
    exitz $mzero
    .align 8
.Lslow_z:
    { ld32 $m6, $mvertex_base, $mzero, W_COUNT     ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { setzi $m3, .Lslow_zrow                       ; fnop }
    { bri .Lslow_go                                ; fnop }
    .size K_WORKER_Z, . - K_WORKER_Z
