// gelu_sigm_groups: the GeLU loop of the FP8 kernels (gelu_fp8, gelu_fp8_panels), appended last
// to each one's source (kernels/src/elementwise/gelu.rs). The headers define its names
// (K_GROUPS, K_GROUPS_TEXT, K_SIGM_CONSTS, K_SIGM_CONSTS_DATA).
//
// Numerics: the tanh form of SigLIP's gelu_pytorch_tanh written with the logistic function,
// 0.5 (1 + tanh u) = sigm(2u), and evaluated in f16, every step one f16 operation rounded to
// nearest even (tessera_isa::numerics; the Rust reference gelu_sigm_f16 in
// kernels/src/elementwise/gelu.rs repeats the same steps):
//   s = x * x                            f16v4mul
//   q = s * B                            f16v4mul, B = f16(2 * 0.044715 * sqrt(2/pi)) = 0x2c91
//   p = q + A                            f16v4add, A = f16(2 sqrt(2/pi)) = 0x3e62
//   w = p * x                            w = 2u = 2 sqrt(2/pi) (x + 0.044715 x^3)
//   g = sigm(w)                          f16v2sigm (the logistic in f64, rounded once to f16)
//   r = g * x                            f16v4mul
// then the header's FP8 cast of r. The FP8 result has 4 (F143) or 3 (F152) significant bits, so
// the f16 steps (11 bits, relative error ~2^-9 in all) stay well inside one FP8 rounding, and the
// logistic form keeps that relative precision where x < 0 (no 1 + tanh cancellation).
// Specials: NaN in -> NaN; |x| >= 256 overflows s to +inf, so w = +-inf, g = 1 or 0 and r = x or
// -0 (x < 0); +inf -> +inf; -inf -> 0 * -inf = NaN; -0 -> -0.
//
// K_GROUPS: converts $m2 groups of 4 halves from $m0 to 4 FP8 codes each at $m1 (both advance);
// returns to $m10. Clobbers $m4, $m11, $a0..$a5, $a8..$a13 (and $a6:7 with K_PAIRS); needs
// $a4:7 finite (the callers zero them: the first conversion's junk) and $FP_NFMT / $FP_SCL set.
// Loop: one group per 8-bundle rpt iteration, the aux pipeline busy in every bundle. Iteration i
// loads group i, converts and stores group i - 1 (the first store of a call writes junk to the
// first output word with a zero increment, $m4 = 0, and the second overwrites it), and leaves
// r of group i in $a4:5; the last group is converted and stored after the loop. Nothing past the
// groups is read. Registers: $a0:1 x, $a2:3 s .. g, $a4:5 r, then its codes in $a4; $a8:9 B
// (4 halves), $a10:11 A.
// ==== the GeLU loop of the FP8 kernels ====

    .section K_SIGM_CONSTS_DATA
    .align 8
K_SIGM_CONSTS:
    .int 0x2c912c91, 0x2c912c91     // B x 4
    .int 0x3e623e62, 0x3e623e62     // A x 4

    .section K_GROUPS_TEXT
    .type K_GROUPS, @function
    .worker
    .align 8
K_GROUPS:
    brz $m2, .Lsigm_done
    setzi $m4, K_SIGM_CONSTS
    { ld64 $a8:9, $m4, $mzero, 0 ; fnop }
    { ld64 $a10:11, $m4, $mzero, 1 ; fnop }
.if K_PAIRS
    // Runs of at least 2^PAIR_SHIFT groups go a pair of groups at a time, 15 bundles a pair:
    // x of A in $a0:1 and of B in $a12:13, their chains in $a2:3 and $a6:7, r of A and B in
    // $a4:5 and $a6:7, converted together by the next pair's first bundle and stored by its
    // third and fourth (junk at first, step 0). The odd last group goes through the one-group
    // loop.
    { shr $m11, $m2, PAIR_SHIFT ; fnop }
    { brz $m11, .Lsigm_single ; fnop }
    { shr $m11, $m2, 1 ; fnop }                       // pairs
    { and $m2, $m2, 1 ; fnop }                        // the odd last group
    { setzi $m4, 0 ; fnop }
    { rpt $m11, 14 ; fnop }
    {
        ld64step $a0:1, $mzero, $m0+=, 1              // x of A
        f16v8tof8 $a4:5, $a4:7                        // the previous pair's codes in $a4:5
    }
    { ld64step $a12:13, $mzero, $m0+=, 1 ; f16v4mul $a2:3, $a0:1, $a0:1 }  // x of B; s of A
    {
        st32step $a4, $mzero, $m1+=, $m4              // the previous pair's A (junk at
        f16v4mul $a6:7, $a12:13, $a12:13              // first, step 0); s of B
    }
    { st32step $a5, $mzero, $m1+=, $m4 ; f16v4mul $a2:3, $a2:3, $a8:9 }  // its B; q of A
    { setzi $m4, 1 ; f16v4mul $a6:7, $a6:7, $a8:9 }   // q of B
    { nop ; f16v4add $a2:3, $a2:3, $a10:11 }          // p
    { nop ; f16v4add $a6:7, $a6:7, $a10:11 }
    { nop ; f16v4mul $a2:3, $a2:3, $a0:1 }            // w
    { nop ; f16v4mul $a6:7, $a6:7, $a12:13 }
    { nop ; f16v2sigm $a2, $a2 }                      // g
    { nop ; f16v2sigm $a3, $a3 }
    { nop ; f16v2sigm $a6, $a6 }
    { nop ; f16v2sigm $a7, $a7 }
    { nop ; f16v4mul $a4:5, $a2:3, $a0:1 }            // r of A
    { nop ; f16v4mul $a6:7, $a6:7, $a12:13 }          // r of B
    { nop ; f16v8tof8 $a4:5, $a4:7 }                  // the last pair
    { st32step $a4, $mzero, $m1+=, 1 ; sort4x32lo $a6:7, $azeros, $azeros }
    { st32step $a5, $mzero, $m1+=, 1 ; fnop }
    // The one-group loop's first conversion is junk: zeros, not the codes read as halves.
    { brz $m2, .Lsigm_done ; sort4x32lo $a4:5, $azeros, $azeros }
.endif
.Lsigm_single:
    { setzi $m4, 0 ; fnop }
    { rpt $m2, 7 ; fnop }
    {
        ld64step $a0:1, $mzero, $m0+=, 1              // x of this group
        f16v8tof8 $a4:5, $a4:7                        // the previous group's codes in $a4
    }
    {
        st32step $a4, $mzero, $m1+=, $m4              // stored (junk at first, step 0)
        f16v4mul $a2:3, $a0:1, $a0:1                  // s
    }
    { setzi $m4, 1 ; f16v4mul $a2:3, $a2:3, $a8:9 }   // q
    { nop ; f16v4add $a2:3, $a2:3, $a10:11 }          // p
    { nop ; f16v4mul $a2:3, $a2:3, $a0:1 }            // w
    { nop ; f16v2sigm $a2, $a2 }                      // g
    { nop ; f16v2sigm $a3, $a3 }
    { nop ; f16v4mul $a4:5, $a2:3, $a0:1 }            // r
    { nop ; f16v8tof8 $a4:5, $a4:7 }                  // the last group
    { st32step $a4, $mzero, $m1+=, $m4 ; fnop }
.Lsigm_done:
    br $m10
    .size K_GROUPS, . - K_GROUPS
