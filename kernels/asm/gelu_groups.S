// gelu_groups: the GeLU loop shared by gelu_f16, gelu_fp8 and gelu_fp8_panels, appended last to
// each kernel's source (kernels/src/elementwise/gelu.rs). The headers define its names
// (K_GROUPS, K_GROUPS_TEXT), the conversion and store of a finished group after f32v4tof16
// (CONVERT_OUT, STORE_OUT) and the bundles CONVERT_OUT adds to the loop (CONVERT_BUNDLES).
// gelu_f16.S describes the loop and the numerics.
// ==== shared code of the GeLU kernels ====

// K_GROUPS: converts $m2 groups of 4 from $m0 to $m1 (both advance); returns to $m10.
// Clobbers $m4, $a0..$a7, the accumulators; needs $TAS = B and $m3 = the constants (K_CONSTS).
    .section K_GROUPS_TEXT
    .type K_GROUPS, @function
    .worker
    .align 8
K_GROUPS:
    brz $m2, .Lgroups_done
    setzi $m4, 0
    { rpt $m2, 19 + CONVERT_BUNDLES ; fnop }
    {
        ld64step $a4:5, $mzero, $m0+=, 1              // x (4 halves)
        f32v4tof16 $a0:1, $a4:7                       // previous group: r -> f16
    }
    CONVERT_OUT                                       // FP8: -> 4 codes (bytes 0..3)
    {
        STORE_OUT                                     // previous group (junk at first, step 0)
        f16v2tof32 $a0:1, $a4
    }
    {
        ld64 $a6:7, $m3, $mzero, 0                    // 0.5, 0.5
        f16v2tof32 $a2:3, $a5
    }
    {
        setzi $m4, 1
        f32v2mul $a0:1, $a0:1, $a6:7                  // h
    }
    {
        ld64 $a6:7, $m3, $mzero, 1                    // A, A
        f32v2mul $a2:3, $a2:3, $a6:7
    }
    { nop ; f32v2mul $a4:5, $a0:1, $a0:1 }            // s
    { nop ; f32v2axpy $azeros, $a4:5, $a6:7 }         // acc = B s + A (lanes 0, 1)
    { nop ; f32v2mul $a4:5, $a2:3, $a2:3 }
    { nop ; f32v2axpy $a4:5, $a4:5, $a6:7 }           // p (lanes 0, 1) out; lanes 2, 3 in
    { nop ; f32v2gina $a6:7, $azeros, 0 }             // p (lanes 2, 3)
    { nop ; f32v2mul $a4:5, $a4:5, $a0:1 }            // z
    { nop ; f32v2mul $a6:7, $a6:7, $a2:3 }
    { nop ; f32tanh $a4, $a4 }                        // t
    { nop ; f32tanh $a5, $a5 }
    { nop ; f32tanh $a6, $a6 }
    { nop ; f32tanh $a7, $a7 }
    { nop ; f32v2mul $a4:5, $a4:5, $a0:1 }            // t h
    { nop ; f32v2mul $a6:7, $a6:7, $a2:3 }
    { nop ; f32v2add $a4:5, $a4:5, $a0:1 }            // r = t h + h
    { nop ; f32v2add $a6:7, $a6:7, $a2:3 }
    { nop ; f32v4tof16 $a0:1, $a4:7 }
    CONVERT_OUT
    { STORE_OUT ; fnop }
.Lgroups_done:
    br $m10
    .size K_GROUPS, . - K_GROUPS
