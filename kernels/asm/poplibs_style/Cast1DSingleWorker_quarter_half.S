// Cast1DSingleWorker<quarter, half>, written here in PopLibs' style: the FP8 widening PopLibs
// has only in C++ (popops' elemwiseMiscCodelets.cpp), as an assembly codelet with PopLibs'
// entry name, vertex and conventions, run by the calibration harness
// (scripts/poplibs_calibration.py --local) beside PopLibs' estimator
// (getCast1DSingleWorkerCycleEstimate) in CI. Its pair is Cast1DSingleWorker_half_quarter.S.
//
// dst[i] = half(src[i]) for i < numElems: the value of the FP8 code in the format of src's
// metadata times 2^scale, rounded to f16 (exact wherever it fits; the NaN code gives the
// canonical f16 NaN; `f8v4tof16`, `isa/src/numerics/fp8.rs`).
//
// Vertex state (32-bit words at $mvertex_base):
//   0: src           numElems FP8 codes, 8-byte aligned
//   1: dst           numElems halves, 8-byte aligned, in another memory element than src
//   2: numElems
//   3: src metadata  the address of src's metadata byte: bit 7 the format (1 = F143,
//                    0 = F152), bits 5:0 the scale (6-bit two's complement) [A], as in
//                    Cast1DSingleWorker_half_quarter.S.
// The metadata goes to the CSRs as PopLibs' setFp8Config does: `$FP_SCL` takes the byte as it
// is (its low six bits are the scale: a widening multiplies by 2^scale), `$FP_NFMT` the
// `f32cmplt` of the broadcast byte (bit 7 is the word's sign) against 0.
//
// Groups of eight codes take 2 bundles each (the estimator's 1 cycle per vector of 4): one
// `ldst64pace` loads the next group and stores the low four halves of this one, one
// `st64step` stores its high four; peeled so that nothing past the input is read. The 1..7
// codes after the last group are converted from the one input atom that holds them and merged
// into the output atoms with masks, so halves after dst[numElems - 1] keep their values.
//
// Registers: $m0 src, $m1 dst, $m2 numElems, $m3 groups, $m4 remainder, $m5 scratch, $m6 the
// high-half output stream, $m7 pace strides, $m8:9 packed pace addresses (load: the next group,
// store: the low-half output stream); $a0:1 eight codes, $a2:3 and $a4:5 four halves each,
// $a6:7 masks.

#define VERTEX_SRC      0
#define VERTEX_DST      1
#define VERTEX_NUM      2
#define VERTEX_METADATA 3

    .section .text.__runCodelet_popops__Cast1DSingleWorker___quarter_half
    .globl __runCodelet_popops__Cast1DSingleWorker___quarter_half
    .type __runCodelet_popops__Cast1DSingleWorker___quarter_half, @function
    .worker
    .align 8
__runCodelet_popops__Cast1DSingleWorker___quarter_half:
    ld32      $m3, $mvertex_base, $mzero, VERTEX_METADATA
    ld32      $m0, $mvertex_base, $mzero, VERTEX_SRC
    { ldb8    $a0, $m3, $mzero, 0            // the metadata byte, in all four bytes
      fnop }
    { ld32    $m1, $mvertex_base, $mzero, VERTEX_DST
      andc    $a1, $a0, 0x40000000 }         // never a NaN: the sign is bit 7 of the byte
    { ld32    $m2, $mvertex_base, $mzero, VERTEX_NUM
      f32cmplt $a1, $a1, $azero }            // all ones for F143
    { shr     $m3, $m2, 3                    // complete groups of eight
      uput    $FP_SCL, $a0 }
    { and     $m4, $m2, 7                    // the codes after them
      uput    $FP_NFMT, $a1 }
    brz       $m3, .Ltail
    ld64      $a0:1, $m0, $mzero, 0          // group 0
    add       $m5, $m0, 8                    // group 1 (the pace load)
    add       $m6, $m1, 8                    // group 0's high halves (the plain stores)
    tapack    $m8:9, $m5, $mzero, $m1        // store: group 0's low halves
    setzi     $m7, 2                         // stride field 0: two atoms (one group of output)
    { add     $m3, $m3, -1
      f8v4tof16 $a2:3, $a0 }                 // group 0's low halves
    { rpt     $m3, (.Lgroups_end - .Lgroups) / 8 - 1
      fnop }                                 // (a bundle: the body starts 8-byte aligned)
.Lgroups:
    { ldst64pace $a0:1, $a2:3, $m8:9+=, $m7, 0b0100   // load group g + 1; store g's low halves
      f8v4tof16 $a4:5, $a1 }                 // group g's high halves
    { st64step $a4:5, $mzero, $m6+=, 2
      f8v4tof16 $a2:3, $a0 }                 // group g + 1's low halves
.Lgroups_end:
    { st64pace $a2:3, $m8:9+=, $mzero, 0b00  // the last group
      f8v4tof16 $a4:5, $a1 }
    { st64step $a4:5, $mzero, $m6+=, 2
      fnop }
    shr       $m3, $m2, 3
    shl       $m3, $m3, 3                    // 8 * groups: the tail's input offset

.Ltail:
    // $m3 = 8 * groups: the tail's codes at src + $m3, its halves at dst + 2 * $m3.
    brz       $m4, .Lexit
    add       $m0, $m0, $m3
    shl       $m3, $m3, 1
    add       $m1, $m1, $m3
    ld64      $a0:1, $m0, $mzero, 0          // the atom that holds the tail's codes
    { setzi   $m5, .Ltail_masks
      f8v4tof16 $a2:3, $a0 }                 // halves 0..3
    { cmpult  $m3, $m4, 4
      f8v4tof16 $a4:5, $a1 }                 // halves 4..6
    brnz      $m3, .Lmerge_first             // fewer than four: one partial atom
    st64      $a2:3, $m1, $mzero, 0          // four or more: the first atom whole
    add       $m4, $m4, -4
    brz       $m4, .Lexit
    add       $m1, $m1, 8
    { bri     .Lmerge_first
      or64    $a2:3, $a4:5, $azeros }        // the second atom's halves
.Lmerge_first:
    shl       $m4, $m4, 3
    ld64      $a6:7, $m5, $m4, 0             // ones in the tail's halves
    ld64      $a0:1, $m1, $mzero, 0          // the output atom as it is
    and64     $a2:3, $a2:3, $a6:7
    andc64    $a0:1, $a0:1, $a6:7
    or64      $a2:3, $a2:3, $a0:1
    st64      $a2:3, $m1, $mzero, 0
.Lexit:
    exitz     $mzero

.size __runCodelet_popops__Cast1DSingleWorker___quarter_half, . - __runCodelet_popops__Cast1DSingleWorker___quarter_half

    .section .rodata.__runCodelet_popops__Cast1DSingleWorker___quarter_half
    .align 8
// Entry k (k = 0..3): ones in the low k halves of an atom.
.Ltail_masks:
    .int 0x00000000, 0x00000000
    .int 0x0000ffff, 0x00000000
    .int 0xffffffff, 0x00000000
    .int 0xffffffff, 0x0000ffff
