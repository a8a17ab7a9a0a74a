// softmax_seg_exp_groups, the exp loop that softmax_seg_f16 and softmax_part_f16 share (their
// sources are concatenated with this file).

// softmax_seg_exp_groups: for $m2 groups of 4 halves at $m0: t = f16(s16 x + 1.0 (-m16))
// (`f16v4mix` with $TAS = (s16, 1.0) and $a4:5 = -m16 in every lane), e = f16v2exp(t) stored
// to $m1 (8 bytes per group), $a6:7 += (f32(e0), f32(e1)) then += (f32(e2), f32(e3)). Both
// pointers advance. The mix is a one-stage pipeline: group g's mix gives group g - 1's t, so the
// first group is mixed before the loop and the last after it. 7 bundles per group.
// Clobbers $a0:3, $a10:13, the accumulators; returns to $m10.
    .section .text.softmax_seg_exp_groups
    .type softmax_seg_exp_groups, @function
    .worker
    .align 8
softmax_seg_exp_groups:
    { brz $m2, .Lg_done ; fnop }
    { ld64step $a0:1, $mzero, $m0+=, 1 ; sort4x32lo $a12:13, $azeros, $azeros }
    { add $m2, $m2, -1 ; f16v4mix $azeros, $a0:1, $a4:5 }   // acc = group 0's t
    { rpt $m2, 6 ; fnop }
    {
        ld64step $a0:1, $mzero, $m0+=, 1              // x of the next group
        f32v2add $a6:7, $a6:7, $a12:13                // sums += the group before's (e2, e3)
    }
    { nop ; f16v4mix $a2:3, $a0:1, $a4:5 }            // this group's t out, the next one's in
    { nop ; f16v2exp $a2, $a2 }
    { nop ; f16v2exp $a3, $a3 }
    {
        st64step $a2:3, $mzero, $m1+=, 1
        f16v2tof32 $a10:11, $a2
    }
    { nop ; f16v2tof32 $a12:13, $a3 }
    { nop ; f32v2add $a6:7, $a6:7, $a10:11 }          // sums += (e0, e1)
    // The last group: its t is in the accumulators.
    {
        nop
        f32v2add $a6:7, $a6:7, $a12:13
    }
    { nop ; f16v4mix $a2:3, $azeros, $a4:5 }
    { nop ; f16v2exp $a2, $a2 }
    { nop ; f16v2exp $a3, $a3 }
    {
        st64step $a2:3, $mzero, $m1+=, 1
        f16v2tof32 $a10:11, $a2
    }
    { nop ; f16v2tof32 $a12:13, $a3 }
    { nop ; f32v2add $a6:7, $a6:7, $a10:11 }
    { nop ; f32v2add $a6:7, $a6:7, $a12:13 }
.Lg_done:
    br $m10
    .size softmax_seg_exp_groups, . - softmax_seg_exp_groups
