// gemm_amp_body: the code shared by gemm_fp8.S and gemm_f16.S, which define AMP, K_SUP and the
// entry names; the kernels' sources are `header + this file` (kernels/src/gemm/mod.rs).
// ==== shared code of gemm_fp8 and gemm_f16 (each kernel's source is its header + this file) ====

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
#define V_XSTEP    9      // 8-byte atoms from A's K-block kb to kb + 1 (panels: 4M; rows: 4)
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
#define W_CEND     8      // (count - 2)*RS + 16: where a chained launch's stores resume, from the C row
#define W_WRAP     9      // the pace stride with field 0 = the wrap from row count-1 to row 0
#define RECORD_WORDS 10
#define FLAG_CHAIN 2      // flags bit 1: K-blocks 1 .. kbs-1 chained (see K_WORKER_C)
// Launch record (in S; the vertex of every worker in the kb >= 1 launches).
#define L_XDELTA   0      // 8 * kb * XSTEP: bytes from A's K-block 0 to kb
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

// load_cwei: one weight block's 16 columns (32 bytes each, in order) into the channels whose
// results phase p gives as lanes 0..3 (2p, 2p + 1, 2p + 8, 2p + 9: the hardware's AMP order,
// isa::semantics::amp::out_channel), so the outputs come in column order: $CWEI words 0-7,
// 32-39, 8-15, 40-47, ... as osmarks/ipu-stack's GEMM loads them on a C600.
.macro load_cwei
    ld128putcs 0
    ld128putcs 2
    ld128putcs 4
    ld128putcs 6
    ld128putcs 32
    ld128putcs 34
    ld128putcs 36
    ld128putcs 38
    ld128putcs 8
    ld128putcs 10
    ld128putcs 12
    ld128putcs 14
    ld128putcs 40
    ld128putcs 42
    ld128putcs 44
    ld128putcs 46
    ld128putcs 16
    ld128putcs 18
    ld128putcs 20
    ld128putcs 22
    ld128putcs 48
    ld128putcs 50
    ld128putcs 52
    ld128putcs 54
    ld128putcs 24
    ld128putcs 26
    ld128putcs 28
    ld128putcs 30
    ld128putcs 56
    ld128putcs 58
    ld128putcs 60
    ld128putcs 62
.endm

// ---------------------------------------------------------------------------------------------
// Supervisor.
// Registers: $m0 entry of the kb = 0 launches, $m8 that of column blocks nb >= 1 (the
// retained-state entry where it applies), $m1 worker records and $m9 S (absolute, as runall
// takes them), $m2 S, $m3 8 * kb * XSTEP, $m4 nb * 32, $m5 kb counter, $m6 nb counter, $m7
// M * 4 (the row check), then 8 * XSTEP, $m11 the kb >= 1 entry; $m10 is the return address.
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
    setzi $m8, K_WORKER_ZR              // kb = 0 of nb >= 1: retained state (no C0)
    and $m4, $m11, FLAG_CHAIN           // chained (0 otherwise: then it is the nb offset)
    and $m11, $m11, 1
    brz $m11, .Lsup_entry0
    setzi $m0, K_WORKER
    mov $m8, $m0
.Lsup_entry0:
    add $m1, $mvertex_base, V_WORKERS * 4
    mov $m9, $m2
    setzi $m11, K_WORKER_NF             // kb >= 1 entry: no row check if M >= 18
    cmpult $m3, $m7, 18 * 4
    brz $m3, .Lsup_entry_n
    setzi $m11, K_WORKER_N
    setzi $m3, K_WORKER_ZR              // without C0: the entry that sends workers with fewer
    cmpeq $m3, $m8, $m3                 // than 3 rows to their plain loop
    brz $m3, .Lsup_entry_n
    setzi $m8, .Lzr_small
.Lsup_entry_n:
    ld32 $m7, $mvertex_base, $mzero, V_XSTEP
    add $m6, $m6, -1
    brnz $m4, .Lsup_chained
    shl $m7, $m7, 3                     // bytes
.Lsup_nb:
    // K-block 0 of column block nb: every worker gets its record.
    sync TEXCH_SYNCZONE_LOCAL           // $CWEI and S are shared: wait for every worker
    load_cwei
    st32 $m4, $m2, $mzero, L_NBOFF
    runall $m0, $m1, RECORD_WORDS       // worker w: vertex = its record (10 words each)
    // Book-keeping runs while the workers do (in the slots they free as they exit).
    ld32 $m5, $m2, $mzero, L_KBM1
    mov $m3, $mzero
    brz $m5, .Lsup_nb_end
    add $m5, $m5, -1
.Lsup_kb:
    // K-blocks 1 .. kbs-1: every worker gets S (its own state is in its scratch).
    add $m3, $m3, $m7
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    st32 $m3, $m2, $mzero, L_XDELTA
    runall $m11, $m9, 0
    brnzdec $m5, .Lsup_kb
.Lsup_nb_end:
    add $m4, $m4, 32
    mov $m0, $m8
    brnzdec $m6, .Lsup_nb
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    // Chained (flags bit 1, kbs >= 3): per column block, K-block 0 as above, K-block 1 from an
    // empty pipeline that it leaves full (K_WORKER_NFC), K-blocks 2 .. kbs-2 continuing it
    // (K_WORKER_C), K-block kbs-1 continuing it and draining it (K_WORKER_CD).
.Lsup_chained:
    shl $m7, $m7, 3
    mov $m4, $mzero
    setzi $m3, K_WORKER_Z               // K-block 0 without C0: one chain over the call
    cmpeq $m3, $m0, $m3
    brnz $m3, .Lsup_full
.Lsup_nbc:
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    st32 $m4, $m2, $mzero, L_NBOFF
    runall $m0, $m1, RECORD_WORDS
    ld32 $m5, $m2, $mzero, L_KBM1
    mov $m3, $mzero
    add $m5, $m5, -2                    // K-blocks 2 .. kbs-2, counted down by brnzdec
    setzi $m11, K_WORKER_NFC
    // K-block 1: every worker gets its record (K_WORKER_NFC reads its chained state there).
    add $m3, $m3, $m7
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    st32 $m3, $m2, $mzero, L_XDELTA
    runall $m11, $m1, RECORD_WORDS
    setzi $m11, K_WORKER_C
    brz $m5, .Lsup_kbc_last
    add $m5, $m5, -1
.Lsup_kbc_s:
    sync TEXCH_SYNCZONE_LOCAL           // (the chained launches keep their own A pointer)
    load_cwei
    runall $m11, $m9, 0
    brnzdec $m5, .Lsup_kbc_s
.Lsup_kbc_last:
    sync TEXCH_SYNCZONE_LOCAL
    setzi $m11, K_WORKER_CD
    load_cwei
    runall $m11, $m9, 0
    add $m4, $m4, 32
    mov $m0, $m8
    brnzdec $m6, .Lsup_nbc
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    // Chained without C0: one chain over the whole call.
.Lsup_full:
    st32 $m7, $m2, $mzero, L_XDELTA     // K_WORKER_ZC's K-block step
    setzi $m11, K_WORKER_ZC
    setzi $m0, K_WORKER_ZX
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    runall $m11, $m1, RECORD_WORDS
.Lsup_full_nb:
    ld32 $m5, $m2, $mzero, L_KBM1
    setzi $m11, K_WORKER_C
    add $m5, $m5, -2                    // K-blocks 1 .. kbs-2, counted down by brnzdec
.Lsup_full_kb:
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    runall $m11, $m9, 0
    brnzdec $m5, .Lsup_full_kb
    setzi $m11, K_WORKER_CZ             // K-block kbs-1: into the next column block,
    brnz $m6, .Lsup_full_last
    setzi $m11, K_WORKER_CD             // or drained after the last
.Lsup_full_last:
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    runall $m11, $m9, 0
    brz $m6, .Lsup_full_end
    add $m6, $m6, -1
    sync TEXCH_SYNCZONE_LOCAL
    load_cwei
    runall $m0, $m9, 0                  // K-block 0 of the next column block
    bri .Lsup_full_nb
.Lsup_full_end:
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
    .size K_SUP, . - K_SUP

// ---------------------------------------------------------------------------------------------
// Workers. Registers: $m0:1 packed addresses (A row, partial row, C row), $m2 pace stride,
// $m6 count - 3 (the rpt count); $a0:1 input, $a2:3 partials, $a4:5 / $a6:7 results of even /
// odd calls. Pace stride selects: 0b00 = next atom, 0b01 = field 0 = the row jump of C and
// the partials (RS/8 - 3 atoms, after phase 3), 0b10 = field 1 = 0 (hold), 0b11 = field 2 =
// A's row jump (RA/8 - 3 atoms after its row's 4th atom: 1 for panels, RA = 32). A's 4th atom
// of a row is loaded in the bundles b = 2 mod 4, the same as the partials' and before C's.
//
// nf_warm: b = -1 .. 2 of a K-block >= 1 from an empty pipeline (K_WORKER_NF, K_WORKER_NFC):
// the partials of row 0 straight from C (two 128-bit loads), setup in between.
.macro nf_warm
    { ld32 $m3, $mvertex_base, $mzero, L_XDELTA    ; setzi $a6, ZAACC }
    { ld128 $a0:3, $m8, $mzero, 0                  ; uput $FP_CLR, $a6 }   // zero the AMP state
    { ld128 $a4:7, $m8, $mzero, 1                  ; AMP $azeros, $azeros, $a0:1, P0 }
    { add $m9, $m4, $m3                            ; AMP $azeros, $azeros, $a2:3, P1 }  // A: panel kb
    { tapack $m0:1, $m9, $m7, $m8                  ; AMP $azeros, $azeros, $a4:5, P2 }
.endm

// pipe3: b = 3 .. 9, inputs from row 0, partials from row 1, no results yet; then b = 10, the
// steady state's first bundle.
.macro pipe3
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $azeros, $a6:7, P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P1 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0111 ; AMP $azeros, $a0:1, $a2:3, P2 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $azeros, $a0:1, $a2:3, P3 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000111 ; AMP $a4:5, $a0:1, $a2:3, P2 }
.endm

// row_body STRIDE: four bundles of the steady state (input, partials and result every bundle:
// phase 3 of one input row, phases 0 .. 2 of the next), the last one's jumps (A's row and the
// partials') from STRIDE: $m2, or $m10 where the partials wrap to row 0.
.macro row_body stride
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b000000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b010000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, \stride, 0b000111 ; AMP $a4:5, $a0:1, $a2:3, P2 }
.endm

// tail_drain: b = 11 .. 4count-2 (the steady state), the last inputs with no partials, the
// drain and the last stores (K_WORKER_NF, K_WORKER_CD). The caller exits.
.macro tail_drain
    { rpt $m6, 3                                   ; fnop }
    row_body $m2
    // b = 4count-1 .. 4count+2: the last inputs, no partials.
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    // b = 4count+3 .. 4count+9: the last input phase, the drain, the last stores.
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P0 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b01 ; AMP $a6:7, $azeros, $azeros, P1 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $azeros, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; fnop }
    st64pace $a6:7, $m0:1+=, $m2, 0b00
.endm

// tail_chain: b = 11 .. 4count+3 of a launch that leaves the pipeline full for the next
// K-block's (K_WORKER_NFC, K_WORKER_C): the steady state through the last input row, whose
// calls take the partials of row 0 (the partials' pointer wraps from row count-1 to row 0 with
// $m10's field 0), and no drain: the exit leaves row count-1 accumulating, row 0's partials
// pending, and the results of calls 4count+2, 4count+3 (row count-2's phases 2, 3) in $a4:5,
// $a6:7, for K_WORKER_C's first stores; the store pointer at row count-2's third atom ($m5), the
// partials' at row 1 ($m7).
.macro tail_chain
    { rpt $m11, 3                                  ; fnop }
    row_body $m2
    row_body $m10
    // b = 4count-1 .. 4count+2: the last inputs with the partials of row 0.
    row_body $m2
    // b = 4count+3: the last input phase; nothing loads.
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    exitz $mzero
.endm

// ---------------------------------------------------------------------------------------------
// K_WORKER_NF: K-blocks 1 .. kbs-1 when every worker has 3 rows or more (M >= 18); the
// partials are C itself. Vertex = S; the rest of the state is in the worker's scratch.
    .section .text.K_WORKER_NF
    .globl K_WORKER_NF
    .type K_WORKER_NF, @function
    .worker
    .align 8
K_WORKER_NF:
    // The state is the worker's own, retained from its K-block 0 launch in this call (a
    // worker's registers persist across exit and launch, as osmarks/ipu-stack's GEMM relies on
    // on the C600): $m4 A's row in K-block 0, $m7 the C row + RS, $m8 the C row, $m2 the pace
    // stride, $m6 count - 3. Only the K-block's offset comes from S.
    nf_warm
.Lpipe3:
    pipe3
    tail_drain
.Lexit:
    exitz $mzero
    .size K_WORKER_NF, . - K_WORKER_NF

// ---------------------------------------------------------------------------------------------
// Chained K-blocks (flags bit 1: M >= 24, so every worker has 4 rows or more, kbs >= 3, and the
// wrap from row count-1 to row 0, (count-1) RS/8 + 3 atoms, fits the pace stride's signed
// 10-bit field 0). A launch's last input row takes the partials of row 0 for the next K-block
// and the worker exits with the pipeline full; the next launch, once the supervisor has loaded
// the next weight block, goes on from it: no drain, no warm-up, no fresh set-up in between. The
// AMP's accumulators and pending partials persist across exit and launch like the registers
// [A]: the simulator keeps the whole context; ipu-stack's GEMM shows the registers kept on the
// C600 (see K_WORKER_NF), not yet the AMP's state. A call uses the weights of its own input,
// so the calls after the reload use the new block and nothing else changes: every output bit
// is the unchained kernel's.
// Retained: $m5 the store pointer where a chained launch resumes (row count-2's third atom of
// the column block), $m10 the pace stride with field 0 = -((count-1) RS/8 + 3), $m11 count - 4,
// set by K_WORKER_NFC from the worker's record (its vertex, as in the K-block 0 launches), and
// $m9 A's row in the last launch's K-block, $m3 the bytes from one K-block to the next.
//
// K_WORKER_NFC: K-block 1, from an empty pipeline, leaving it full; 5 bundles more than
// K_WORKER_NF's start for the chained state.
    .section .text.K_WORKER_NFC
    .globl K_WORKER_NFC
    .type K_WORKER_NFC, @function
    .worker
    .align 8
K_WORKER_NFC:
    // Vertex = the worker's record (the supervisor runs this launch with the records): the
    // chained launches' state first, then K_WORKER_NF's start.
    { ld32 $m3, $mvertex_base, $mzero, W_S         ; setzi $a6, ZAACC }
    { ld32 $m5, $mvertex_base, $mzero, W_CEND      ; uput $FP_CLR, $a6 }   // zero the AMP state
    { ld32 $m3, $m3, $mzero, L_XDELTA              ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, W_WRAP     ; fnop }
    { add $m5, $m5, $m8                            ; fnop }
    { add $m11, $m6, -1                            ; fnop }
    { ld128 $a0:3, $m8, $mzero, 0                  ; fnop }
    { ld128 $a4:7, $m8, $mzero, 1                  ; AMP $azeros, $azeros, $a0:1, P0 }
    { add $m9, $m4, $m3                            ; AMP $azeros, $azeros, $a2:3, P1 }
    { tapack $m0:1, $m9, $m7, $m8                  ; AMP $azeros, $azeros, $a4:5, P2 }
    pipe3
    tail_chain
    .size K_WORKER_NFC, . - K_WORKER_NFC

// c_head: a chained launch's first bundles: the pointers packed again (A at the K-block's row 0,
// one K-block on from the last launch's ($m9, by $m3 = 8 XSTEP bytes, both retained from
// K_WORKER_NFC), the partials at row 1, the stores where the last launch left them), the first
// operands, then
// the rows 0 and 1 (calls 0 .. 6): the first stores are the last launch's row count-2 (phases
// 2, 3) and row count-1, whose results the calls of row 0 give out; after its fourth atom the
// store pointer wraps to row 0 ($m10's field 0).
.macro c_head
    { add $m9, $m9, $m3                            ; fnop }   // A: the next K-block's row
    { tapack $m0:1, $m9, $m7, $m5                  ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m0:1+=, $m2, 0b0000 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b010000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000111 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b000000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m10, 0b010000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000111 ; AMP $a4:5, $a0:1, $a2:3, P2 }
.endm

// K_WORKER_C: K-blocks 2 .. kbs-2 (1 .. kbs-2 in one chain without C0), from the pipeline the
// last launch left, leaving it full.
    .section .text.K_WORKER_C
    .globl K_WORKER_C
    .type K_WORKER_C, @function
    .worker
    .align 8
K_WORKER_C:
    c_head
    tail_chain
    .size K_WORKER_C, . - K_WORKER_C

// K_WORKER_CD: K-block kbs-1, from the pipeline the last launch left, drained.
    .section .text.K_WORKER_CD
    .globl K_WORKER_CD
    .type K_WORKER_CD, @function
    .worker
    .align 8
K_WORKER_CD:
    c_head
    tail_drain
    exitz $mzero
    .size K_WORKER_CD, . - K_WORKER_CD

// ---------------------------------------------------------------------------------------------
// Chained without C0 (flags bit 1 and not bit 0): the whole call is one chain. K-block 0 of
// column block 0 runs K_WORKER_ZC (fresh, zero partials, leaving the pipeline full), K-blocks
// 1 .. kbs-2 K_WORKER_C, K-block kbs-1 K_WORKER_CZ (its last input row's partials zero, for the
// next column block) or, in the last column block, K_WORKER_CD; K-block 0 of column blocks
// nb >= 1 runs K_WORKER_ZX, which goes on from K_WORKER_CZ's pipeline: its first results are the
// last column block's, and the stores wrap to this one's row 0 ($m10's field 1 = field 0 + 4
// atoms). Zero-partial K-blocks hold the partials' pointer at C row 0 (read into $azeros), whose
// K-block 0 results the last input row takes as the next K-block's partials.

// z_pipe: b = 3 .. 9 of a zero-partial K-block 0 from an empty pipeline (K_WORKER_Z,
// K_WORKER_ZR, K_WORKER_ZC): inputs of row 0 and row 1, the partials' address held (read into
// $azeros), no results before b = 8.
.macro z_pipe
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; fnop }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P0 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P1 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1011 ; AMP $azeros, $a0:1, $azeros, P2 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $azeros, $a0:1, $azeros, P3 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; AMP $a6:7, $a0:1, $azeros, P1 }
.endm

// z_body: four bundles of the zero-partial stream (phase 3 of one input row, phases 0 .. 2 of
// the next; A and the stores only).
.macro z_body
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
.endm

// z_tail_chain: the zero-partial stream from row 1's phase 3 to the last input row, whose calls
// take C row 0's partials (the partials' pointer, held there, moves on to row 1), no drain.
.macro z_tail_chain
    { rpt $m6, 3                                   ; fnop }
    z_body
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b000000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000000 ; AMP $a4:5, $a0:1, $a2:3, P0 }
    { ld2xst64pace $a0:3, $a6:7, $m0:1+=, $m2, 0b010000 ; AMP $a6:7, $a0:1, $a2:3, P1 }
    { ld2xst64pace $a0:3, $a4:5, $m0:1+=, $m2, 0b000111 ; AMP $a4:5, $a0:1, $a2:3, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    exitz $mzero
.endm

// K_WORKER_ZC: K-block 0 of column block 0, zero partials, from an empty pipeline, leaving it
// full. Vertex = the worker's record; every chained register set here.
    .section .text.K_WORKER_ZC
    .globl K_WORKER_ZC
    .type K_WORKER_ZC, @function
    .worker
    .align 8
K_WORKER_ZC:
    { ld32 $m3, $mvertex_base, $mzero, W_S         ; setzi $a0, ZAACC }
    { ld32 $m4, $mvertex_base, $mzero, W_X0        ; uput $FP_CLR, $a0 }
    { ld32 $m8, $mvertex_base, $mzero, W_O0        ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { ld32 $m3, $m3, $mzero, L_XDELTA              ; fnop }   // 8 XSTEP: one K-block
    { ld32 $m5, $mvertex_base, $mzero, W_CEND      ; fnop }
    { tapack $m0:1, $m4, $m8, $m8                  ; fnop }   // the partials held at C row 0
    { ld32 $m2, $mvertex_base, $mzero, W_STRIDE    ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, W_RM3       ; fnop }
    { ld32 $m10, $mvertex_base, $mzero, W_WRAP     ; fnop }
    { add $m7, $m8, $m7                            ; fnop }   // C row + RS
    { add $m5, $m5, $m8                            ; fnop }
    { add $m11, $m6, -1                            ; fnop }
    { mov $m9, $m4                                 ; fnop }   // A's row in this K-block
    z_pipe
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    z_tail_chain
    .size K_WORKER_ZC, . - K_WORKER_ZC

// K_WORKER_CZ: K-block kbs-1 of a column block before the last, from the pipeline the last
// launch left, leaving it full with zero partials pending (the next column block's K-block 0).
    .section .text.K_WORKER_CZ
    .globl K_WORKER_CZ
    .type K_WORKER_CZ, @function
    .worker
    .align 8
K_WORKER_CZ:
    c_head
    { rpt $m6, 3                                   ; fnop }
    row_body $m2
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $a2:3, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $azeros, P3 }
    exitz $mzero
    .size K_WORKER_CZ, . - K_WORKER_CZ

// K_WORKER_ZX: K-block 0 of column block nb >= 1, zero partials, from K_WORKER_CZ's pipeline,
// leaving it full: the C rows moved on by one column block, A at K-block 0, the partials held at
// the new C row 0, the stores where the last launch left them; its first results (rows count-2
// and count-1 of the last column block) stored, the store pointer wraps to this column block's
// row 0 with $m10's field 1.
    .section .text.K_WORKER_ZX
    .globl K_WORKER_ZX
    .type K_WORKER_ZX, @function
    .worker
    .align 8
K_WORKER_ZX:
    { add $m8, $m8, 32                             ; fnop }
    { add $m7, $m7, 32                             ; fnop }
    { tapack $m0:1, $m4, $m8, $m5                  ; fnop }
    { add $m5, $m5, 32                             ; fnop }
    { mov $m9, $m4                                 ; fnop }
    { ld2x64pace $a0:1, $azeros, $m0:1+=, $m2, 0b1000 ; fnop }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m10, 0b1000 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    z_tail_chain
    .size K_WORKER_ZX, . - K_WORKER_ZX

// ---------------------------------------------------------------------------------------------
// K_WORKER_N: K-blocks 1 .. kbs-1 when some worker has fewer than 3 rows (M < 18): the row
// check, then K_WORKER_NF's path or the plain loop, which lives here too.
    .section .text.K_WORKER_N
    .globl K_WORKER_N
    .type K_WORKER_N, @function
    .worker
    .align 8
K_WORKER_N:
    // $m2, the pace stride, is retained from the worker's K-block 0 launch: 3 rows or more
    // take K_WORKER_NF's path with the rest of their retained state. Fewer rows retain theirs
    // from the plain loop's first launch (.Lslow_go): $m1 rows, $m10 A's row in K-block 0,
    // $m11 the C row, $m7 RS, $m5 RA.
    { brpos $m2, K_WORKER_NF                       ; setzi $a0, ZAACC }
    { brz $m1, .Lexit                              ; uput $FP_CLR, $a0 }
    { ld32 $m3, $mvertex_base, $mzero, L_XDELTA    ; fnop }
    { mov $m8, $m11                                ; fnop }   // C row = the partial row
    { add $m4, $m10, $m3                           ; fnop }   // A row of K-block kb
    { mov $m9, $m11                                ; fnop }
    { add $m6, $m1, -1                             ; fnop }
    { setzi $m3, .Lslow_row                        ; fnop }
    // Fewer than 3 rows: one row at a time (warm-up, inputs, drain, stores). In: $m4 A row,
    // $m9 partial row, $m8 C row, $m7 RS, $m6 rows - 1, $m5 RA, $m3 .Lslow_row (or
    // .Lslow_zrow: zero partials, no warm-up).
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
    { add $m4, $m4, $m5                            ; AMP $azeros, $a0:1, $azeros, P3 }
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
    // The plain loop's first launch in a call (from K_WORKER or K_WORKER_Z; In: $m6 rows, $m4
    // A's row in K-block 0, $m8 the C row, $m7 RS, $m3 the row entry): what the later launches
    // retain, then the rows.
.Lslow_go:
    { mov $m1, $m6                                 ; fnop }   // rows
    { brz $m6, .Lexit                              ; fnop }
    { mov $m10, $m4                                ; fnop }   // A's row in K-block 0
    { mov $m11, $m8                                ; fnop }   // the C row
    { add $m6, $m6, -1                             ; fnop }
    { shl $m5, $m2, 2                              ; fnop }   // RA = 8 (field 2 + 3)
    { shr $m5, $m5, 22                             ; fnop }
    { add $m5, $m5, 3                              ; fnop }
    { shl $m5, $m5, 3                              ; fnop }
    { br $m3                                       ; fnop }
    // K_WORKER_ZR's entry where M < 18: workers with 3 rows or more go on to it, the others
    // take the plain loop for column block nb >= 1 with zero partials, from the state their
    // first launch retained, the C row moved on by one column block.
.Lzr_small:
    { brneg $m2, .Lzr_slow                         ; setzi $a0, ZAACC }
    { bri K_WORKER_ZR                              ; fnop }
.Lzr_slow:
    { brz $m1, .Lexit                              ; uput $FP_CLR, $a0 }
    { add $m11, $m11, 32                           ; fnop }   // the C row of column block nb
    { mov $m4, $m10                                ; fnop }
    { mov $m8, $m11                                ; fnop }
    { add $m6, $m1, -1                             ; fnop }
    { setzi $m3, .Lslow_zrow                       ; fnop }
    { bri .Lslow_zrow                              ; fnop }
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
    { brpos $m2, .Lz_stream                        ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, W_COUNT     ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, W_RS        ; fnop }
    { setzi $m3, .Lslow_zrow                       ; fnop }
    { bri .Lslow_go                                ; fnop }
    .size K_WORKER_Z, . - K_WORKER_Z

// ---------------------------------------------------------------------------------------------
// K_WORKER_ZR: K-block 0 of column block nb >= 1 with zero partial sums: the state retained
// from the worker's previous launches in this call ($m4 A's row in K-block 0, $m7 the C row +
// RS, $m8 the C row of column block nb - 1, $m2, $m6), the C rows moved on by one column block;
// then K_WORKER_Z's stream. Where some worker has fewer than 3 rows (M < 18), the launches
// enter at .Lzr_small, which sends those workers to the plain loop from their own retained
// state (.Lzr_slow).
    .section .text.K_WORKER_ZR
    .globl K_WORKER_ZR
    .type K_WORKER_ZR, @function
    .worker
    .align 8
K_WORKER_ZR:
    { add $m8, $m8, 32                             ; setzi $a0, ZAACC }
    { add $m7, $m7, 32                             ; uput $FP_CLR, $a0 }
    { tapack $m0:1, $m4, $m7, $m8                  ; fnop }
.Lz_stream:
    // b = 3 .. 9: inputs of row 0 and row 1 (the second address holds).
    z_pipe
    // b = 10 .. 4count+2: input and result every bundle.
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { rpt $m6, 3                                   ; fnop }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0000 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0000 ; AMP $a4:5, $a0:1, $azeros, P0 }
    { ldst64pace $a0:1, $a6:7, $m0:1+=, $m2, 0b0100 ; AMP $a6:7, $a0:1, $azeros, P1 }
    { ldst64pace $a0:1, $a4:5, $m0:1+=, $m2, 0b0011 ; AMP $a4:5, $a0:1, $azeros, P2 }
    // b = 4count+3 .. 4count+9.
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $a0:1, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P0 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b01 ; AMP $a6:7, $azeros, $azeros, P1 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; AMP $a4:5, $azeros, $azeros, P2 }
    { st64pace $a6:7, $m0:1+=, $m2, 0b00 ; AMP $a6:7, $azeros, $azeros, P3 }
    { st64pace $a4:5, $m0:1+=, $m2, 0b00 ; fnop }
    st64pace $a6:7, $m0:1+=, $m2, 0b00
    exitz $mzero
    .size K_WORKER_ZR, . - K_WORKER_ZR
