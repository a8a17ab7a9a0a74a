// residual_add_f16: out[i] = a[i] + b[i] for i < n, f16 with round-to-nearest-even.
//
// Worker kernel (all six workers share one vertex; each finds its share in the split table).
// Vertex state (32-bit words at $mvertex_base):
//   0: a        address of n halves (8-byte aligned)
//   1: b        address of n halves (8-byte aligned)
//   2: out      address of n halves (8-byte aligned)
//   3: n        bits 0..30: element count (any value; n % 4 tail elements are done by
//               worker 5). Bit 31 (FAST): a, b and out lie in three different memory
//               elements at every offset (e.g. three element slots), so one ld2xst64pace can
//               load a and b and store out in the same cycle: 1 bundle per 4 elements.
//               Without it: 3 bundles per 4 elements (one access per bundle).
//   4+2w: first 4-element group of worker w     5+2w: number of groups of worker w
// The split table covers the n / 4 groups in order (worker 5 owns the last ones).
// Memory: any region; out may alias a or b (each group is read before it is written), except
// with FAST, which needs the element separation above (the tile traps on a clash).
// The tail reads whole 32-bit words of a and b (up to 2 bytes past n) and writes the last odd
// element with a read-modify-write of its 32-bit word (the upper half keeps its value).
//
// Loops (each worker, c groups): general: rpt of {load a(k+1) ; add k} {load b(k+1)}
// {store k}; fast: rpt of {ld2xst64pace: load a, b of group k+1, store group k-1 ; add k}, with
// the first two groups and the last two stores peeled so nothing outside the chunk is touched.
// Registers: $m1 worker id * 8, $m2 groups, $m3 groups - 1 (or - 2), $m4 a, $m5 b, $m6 out,
// $m7 FAST, $m8:9 packed pace addresses; $a0:1 a, $a2:3 b, $a4:5 sum.

    .section .text.residual_add_f16
    .globl residual_add_f16
    .type residual_add_f16, @function
    .worker
    .align 8
residual_add_f16:
    { get $m0, $WSR ; fnop }
    { and $m0, $m0, CSR_W_WSR__CTXTID_M1__MASK ; fnop }  // worker id 0..5
    { shl $m1, $m0, 3 ; fnop }
    { ld32 $m3, $mvertex_base, $m1, 4 ; fnop }           // first group
    { ld32 $m2, $mvertex_base, $m1, 5 ; fnop }           // group count
    { shl $m3, $m3, 3 ; fnop }                           // byte offset of the first group
    { ld32 $m4, $mvertex_base, $mzero, 0 ; fnop }
    { ld32 $m5, $mvertex_base, $mzero, 1 ; fnop }
    { ld32 $m6, $mvertex_base, $mzero, 2 ; fnop }
    { add $m4, $m4, $m3 ; fnop }
    { add $m5, $m5, $m3 ; fnop }
    { add $m6, $m6, $m3 ; fnop }
    { ld32 $m7, $mvertex_base, $mzero, 3 ; fnop }
    { brz $m2, .Ltail ; fnop }
    { brneg $m7, .Lfast ; fnop }
    // General path.
    { ld64step $a0:1, $mzero, $m4+=, 1 ; fnop }
    { ld64step $a2:3, $mzero, $m5+=, 1 ; fnop }
    { add $m3, $m2, -1 ; fnop }
    { rpt $m3, 2 ; fnop }
    { ld64step $a0:1, $mzero, $m4+=, 1 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { ld64step $a2:3, $mzero, $m5+=, 1 ; fnop }
    { st64step $a4:5, $mzero, $m6+=, 1 ; fnop }
    { nop ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64step $a4:5, $mzero, $m6+=, 1 ; fnop }
    { bri .Ltail ; fnop }
.Lfast:
    { tapack $m8:9, $m4, $m5, $m6 ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m8:9+=, $mzero, 0 ; fnop }
    { add $m3, $m2, -2 ; fnop }
    { brneg $m3, .Lfast_one ; fnop }
    { ld2x64pace $a0:1, $a2:3, $m8:9+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { rpt $m3, 0 ; fnop }
    { ld2xst64pace $a0:3, $a4:5, $m8:9+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64pace $a4:5, $m8:9+=, $mzero, 0 ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64pace $a4:5, $m8:9+=, $mzero, 0 ; fnop }
    { bri .Lfast_done ; fnop }
.Lfast_one:
    { nop ; f16v4add $a4:5, $a0:1, $a2:3 }
    { st64pace $a4:5, $m8:9+=, $mzero, 0 ; fnop }
.Lfast_done:
    // The tail pointers: after the chunk.
    { shl $m3, $m2, 3 ; fnop }
    { add $m4, $m4, $m3 ; fnop }
    { add $m5, $m5, $m3 ; fnop }
    { add $m6, $m6, $m3 ; fnop }
.Ltail:
    { cmpne $m3, $m0, 5 ; fnop }                         // only worker 5 (at the end of the groups) does the tail
    { brnz $m3, .Ldone ; fnop }
    { and $m8, $m7, 3 ; fnop }
    { brz $m8, .Ldone ; fnop }
    { and $m9, $m8, 2 ; fnop }
    { brz $m9, .Lone ; fnop }
    { ld32step $a0, $mzero, $m4+=, 1 ; fnop }            // two more halves
    { ld32step $a1, $mzero, $m5+=, 1 ; fnop }
    { nop ; f16v2add $a0, $a0, $a1 }
    { st32step $a0, $mzero, $m6+=, 1 ; fnop }
.Lone:
    { and $m9, $m8, 1 ; fnop }
    { brz $m9, .Ldone ; fnop }
    { ld32 $a0, $m4, $mzero, 0 ; fnop }                  // the last half (and whatever follows it)
    { ld32 $a1, $m5, $mzero, 0 ; fnop }
    { ld32 $a2, $m6, $mzero, 0 ; f16v2add $a0, $a0, $a1 } // lane 0 is the result
    { nop ; swap16 $a2, $a2 }                            // there are no 16-bit stores: keep the upper half
    { nop ; sort4x16lo $a0, $a0, $a2 }                   // {result, old upper half}
    { st32 $a0, $m6, $mzero, 0 ; fnop }
.Ldone:
    exitz $mzero
    .size residual_add_f16, . - residual_add_f16
