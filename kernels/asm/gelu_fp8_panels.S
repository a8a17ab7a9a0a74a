// gelu_fp8_panels: GeLU of an M x K f16 matrix (row-major, contiguous rows, K % 4 == 0) written
// as FP8 codes straight into the AMP-left panel layout of kernels/src/layout.rs, the input of the
// next FP8 GEMM: byte c of panel row (kb, m) is FP8(gelu(x[m][32 kb + c])) for m < M and
// 32 kb + c < K, else 0; kb < ceil(K / 32), m < m_padded. With M = m_padded = 1 (the MLP's
// 1 x 2152 tail) this is the row in order followed by zeros up to a multiple of 32.
//
// Numerics: exactly those of gelu_fp8 (the f16 logistic form of gelu_sigm_groups.S, then the
// FP8 cast under $FP_NFMT / $FP_SCL / $FP_CTL.NANOO; see kernels/src/elementwise/gelu.rs).
//
// Worker kernel (all six workers share the vertex). Vertex state (32-bit words):
//   0: in        M * K halves, 8-byte aligned
//   1: out       ceil(K / 32) * m_padded * 32 bytes, 8-byte aligned
//   2: M         rows
//   3: K         columns, K % 4 == 0
//   4: m_padded  rows of the panels (>= M); rows M .. m_padded - 1 are zero
//   5: nfmt      value for $FP_NFMT (format in bit 1: 2 = F143, 0 = F152)
//   6: scl       value for $FP_SCL (the negated tensor scale, 6-bit two's complement)
//   7 + 4w: first row of worker w, 8 + 4w: first group of 4 in that row, 9 + 4w: its number of
//           groups, 10 + 4w: address of its first output word (in the panels)
//   31 + 4w: first K-block of worker w's zero rows, 32 + 4w: first zero row (>= M),
//           33 + 4w: number of zero (kb, m) rows, 34 + 4w: address of the first of them
// The groups of 4 are split in row-major order (worker 0 first); the zero rows (m >= M) of every
// panel in panel order. NANOO comes from $FP_CTL (inherited from $FP_ICTL).
// Memory: any region, no element constraints (one memory access per bundle).
//
// Algorithm: a worker's groups are cut into runs that are contiguous in the panels (the rest of
// a K-block when m_padded > 1, the rest of the row when m_padded = 1) and each run goes through
// the 8-bundle-per-group loop of gelu_fp8 (gelu_fp8_panels_groups, from gelu_sigm_groups.S: 4
// codes stored per group). After a row's last group the rest of its last K-block is zeroed (32-bit
// stores) when K % 32 != 0; between K-blocks the output jumps to the next panel. Then the
// worker zeroes its share of the padded rows, 4 x st64 of $azeros per row.
// Registers: $m0 in, $m1 out, $m2 run, $m3 constants, $m4 store step, $m5 row, $m7 group in
// the row, $m9 groups left, $m10 link, $m6 $m8 $m11 scratch.

#define V_IN     0
#define V_OUT    1
#define V_M      2
#define V_K      3
#define V_MPAD   4
#define V_NFMT   5
#define V_SCL    6
#define V_SPLIT  7
#define V_ZSPLIT 31

    // gelu_f16's f32 constants: the entry still puts B in $TAS, which the f16 loop does not read.
    .section .data.gelu_fp8_panels_consts
    .align 8
gelu_fp8_panels_consts:
    .int 0x3f000000, 0x3f000000     // 0.5, 0.5
    .int 0x3fcc422a, 0x3fcc422a     // A, A
    .int 0x3e922279                 // B ($TAS)

    .section .text.gelu_fp8_panels
    .globl gelu_fp8_panels
    .type gelu_fp8_panels, @function
    .worker
    .align 8
gelu_fp8_panels:
    get $m6, $WSR
    and $m6, $m6, CSR_W_WSR__CTXTID_M1__MASK
    shl $m6, $m6, 4
    setzi $m3, gelu_fp8_panels_consts
    ld32 $m5, $mvertex_base, $m6, V_SPLIT             // row
    ld32 $a0, $m3, $mzero, 4                          // B
    ld32 $m7, $mvertex_base, $m6, V_SPLIT + 1         // group in the row
    ld32 $a1, $mvertex_base, $mzero, V_NFMT
    {
        ld32 $a2, $mvertex_base, $mzero, V_SCL
        uput $TAS, $a0
    }
    {
        ld32 $m9, $mvertex_base, $m6, V_SPLIT + 2     // groups
        uput $FP_NFMT, $a1
    }
    {
        ld32 $m1, $mvertex_base, $m6, V_SPLIT + 3     // first output word
        uput $FP_SCL, $a2
    }
    {
        ld32 $m8, $mvertex_base, $mzero, V_K
        sort4x32lo $a4:5, $azeros, $azeros            // no junk (NaN) through the first iteration
    }
    {
        mul $m0, $m5, $m8                             // row * K
        sort4x32lo $a6:7, $azeros, $azeros
    }
    shl $m11, $m7, 2
    add $m0, $m0, $m11
    shl $m0, $m0, 1
    ld32 $m11, $mvertex_base, $mzero, V_IN
    add $m0, $m0, $m11                                // x of the first group
    brz $m9, .Lzero_rows

.Lrun:
    // run = min(groups left, groups left in the row[, groups left in the K-block if m_padded > 1])
    ld32 $m8, $mvertex_base, $mzero, V_K
    shr $m8, $m8, 2                                   // groups per row
    sub $m2, $m8, $m7
    min $m2, $m2, $m9
    ld32 $m6, $mvertex_base, $mzero, V_MPAD
    cmpeq $m6, $m6, 1
    brnz $m6, .Lrun_go
    and $m11, $m7, 7
    sub $m11, $mzero, $m11
    add $m11, $m11, 8
    min $m2, $m2, $m11
.Lrun_go:
    sub $m9, $m9, $m2
    add $m7, $m7, $m2
    call $m10, gelu_fp8_panels_groups
    cmpeq $m6, $m7, $m8
    brnz $m6, .Lrow_end
    and $m6, $m7, 7
    brnz $m6, .Lrun_next
    // End of a K-block with m_padded > 1: on to the same row of the next panel.
    ld32 $m6, $mvertex_base, $mzero, V_MPAD
    shl $m6, $m6, 5
    add $m1, $m1, $m6
    add $m1, $m1, -32
    bri .Lrun_next
.Lrow_end:
    // Zero the rest of the row's last K-block (K % 32 values were written), then the next row.
    ld32 $m6, $mvertex_base, $mzero, V_K
    sub $m6, $mzero, $m6
    and $m6, $m6, 31
    shr $m6, $m6, 2                                   // (32 - K % 32) % 32 / 4 words
    add $m5, $m5, 1
    .align 8
    { rpt $m6, 0 ; fnop }
    { st32step $azero, $mzero, $m1+=, 1 ; fnop }
    setzi $m7, 0
    shl $m6, $m5, 5
    ld32 $m1, $mvertex_base, $mzero, V_OUT
    add $m1, $m1, $m6                                 // block 0 of the next row
.Lrun_next:
    brnz $m9, .Lrun

.Lzero_rows:
    // This worker's padded rows: segments of consecutive rows M .. m_padded - 1 of a panel.
    get $m6, $WSR
    and $m6, $m6, CSR_W_WSR__CTXTID_M1__MASK
    shl $m6, $m6, 4
    ld32 $m9, $mvertex_base, $m6, V_ZSPLIT + 2        // rows
    ld32 $m5, $mvertex_base, $m6, V_ZSPLIT + 1        // first row
    ld32 $m1, $mvertex_base, $m6, V_ZSPLIT + 3        // its address
    ld32 $m7, $mvertex_base, $mzero, V_MPAD
    ld32 $m8, $mvertex_base, $mzero, V_M
    brz $m9, .Lexit
.Lzero_segment:
    sub $m2, $m7, $m5
    min $m2, $m2, $m9                                 // rows in this panel
    sub $m9, $m9, $m2
    shl $m2, $m2, 2
    .align 8
    { rpt $m2, 0 ; fnop }
    { st64step $azeros, $mzero, $m1+=, 1 ; fnop }
    shl $m6, $m8, 5
    add $m1, $m1, $m6                                 // skip the next panel's M data rows
    mov $m5, $m8
    brnz $m9, .Lzero_segment
.Lexit:
    exitz $mzero
    .size gelu_fp8_panels, . - gelu_fp8_panels

// The groups loop follows in gelu_sigm_groups.S (appended to this file by the kernel's `source`):
#define K_GROUPS        gelu_fp8_panels_groups
#define K_GROUPS_TEXT   .text.gelu_fp8_panels_groups
#define K_SIGM_CONSTS   gelu_fp8_panels_sigm_consts
#define K_SIGM_CONSTS_DATA .data.gelu_fp8_panels_sigm_consts
// Runs end at K-blocks (8 groups at most where m_padded > 1): one group at a time.
#define K_PAIRS         0
#define PAIR_SHIFT      5
