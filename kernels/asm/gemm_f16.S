// gemm_f16: C = A x B (+ C0), F16 activations and weights on the AMP (`f16v4hihov4amp`), F16
// partial sums and results: attention scores (Q x K^T per head) and attention x V.
//
// Supervisor entry `gemm_f16` ($mvertex_base = the vertex; returns with `br $m10`). Same
// structure, ABI, memory requirements and code as gemm_fp8 (kernels/asm/gemm_fp8.S has the full
// description); the differences:
//   * a K-block is 16 values (4 halves per AMP phase), so a panel row is still 32 bytes:
//     A[m][16kb .. 16kb+16] as halves, zero beyond K (kernels/src/layout.rs, f16 panels);
//   * the weight blocks hold halves: $CWEI_m_p = B[16kb + 4p .. +4][16nb + m];
//   * $FP_INFMT and $FP_ISCL are not used.
//
// Vertex (32-bit words): 0 A, 1 B, 2 C, 3 C0, 4 S (16 bytes scratch), 5 M, 6 kbs, 7 nbs,
// 8 flags (bit 0: add C0), 9..15 zero, 16+8w: the record of worker w (A + 32*first,
// C + RS*first, C0 + RS*first, count-3, stride = RS/8 - 3 | bit 31 if count < 3, S, RS, count).
// Worker scratch: 20 bytes at $mworker_base, kept across the kernel's launches.
// Memory: A, C0, C in different element slots; B and C in interleaved memory, 16-byte
// aligned; RS <= 4112 bytes.
//
// Numerics (isa/src/numerics/amp.rs): in every K-block the f16 partial enters the f32
// accumulator exactly, each of the 4 phases adds its 4 exact f16 x f16 products lane by lane
// with one f32 RNE rounding each (amp_phase_f16), and the result leaves rounded to f16 (RNE).
// Between K-blocks the partial goes through memory as f16.

#define AMP         f16v4hihov4amp
#define K_SUP       gemm_f16
#define K_WORKER    gemm_f16_worker
#define K_WORKER_Z  gemm_f16_worker_z
#define K_WORKER_N  gemm_f16_worker_n
#define K_WORKER_NF gemm_f16_worker_nf
#define K_WORKER_ZR gemm_f16_worker_zr
#define K_WORKER_NFC gemm_f16_worker_nfc
#define K_WORKER_C  gemm_f16_worker_c
#define K_WORKER_CD gemm_f16_worker_cd
#define K_WORKER_ZC gemm_f16_worker_zc
#define K_WORKER_CZ gemm_f16_worker_cz
#define K_WORKER_ZX gemm_f16_worker_zx

// The code follows in gemm_amp_body.S (appended to this header by the kernel's `source`).
