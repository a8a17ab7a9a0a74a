// Cast1DSingleWorker<half, quarter>, written here in PopLibs' style: the FP8 cast PopLibs has
// only in C++ (popops' elemwiseMiscCodelets.cpp), as an assembly codelet with PopLibs' entry
// name, vertex and conventions, so that the calibration harness (scripts/poplibs_calibration.py
// --local) can run it beside PopLibs' own estimator (getCast1DSingleWorkerCycleEstimate) in CI.
//
// dst[i] = quarter(src[i]) for i < numElems: the FP8 code of src[i] · 2^-scale in the format of
// dst's metadata, rounded once to nearest even (`f16v8tof8`, `isa/src/numerics/fp8.rs`).
//
// Vertex state (32-bit words at $mvertex_base):
//   0: src           numElems halves, 8-byte aligned
//   1: dst           numElems FP8 codes, 8-byte aligned, in another memory element than src
//                    (the vertex's constraint `elem(*src) != elem(*dst)`)
//   2: numElems
//   3: dst metadata  the address of dst's metadata byte: bit 7 the format (1 = F143, 0 = F152),
//                    bits 5:0 the scale (6-bit two's complement). Where Poplar keeps a quarter
//                    vector's metadata in a vertex is not public: this word is the project's
//                    choice [A].
// The metadata goes to the CSRs as PopLibs' setFp8ConfigNegScale does: the byte broadcast by
// `ldb8` has bit 7 as the word's sign, so `f32cmplt` of it (one exponent bit cleared, so the
// word is never a NaN) against 0 is all ones for F143; the scale's negation 0x80 - scale is one
// `f16v2sub` of denormal halves (exact), whose low six bits are -scale.
//
// Groups of eight elements take 2 bundles each (the estimator's 2 cycles per vector): a
// software pipeline that loads group g + 1 while it converts group g and stores group g - 1,
// peeled so that nothing past the input is read. The 1..7 elements after the last group are
// converted as one group from the input atoms that hold them, and merged into the output atom
// with a byte mask, so bytes after dst[numElems - 1] are left as they were.
//
// Registers: $m0 src, $m1 dst, $m2 numElems, $m3 groups, $m4 remainder, $m5 the next input
// group's low atom, $m6:7 packed pace addresses (load: the next group's high atom, store: dst),
// $m8 pace strides; $a0:3 eight halves, $a4:5 eight codes, $a6:7 the output atom and masks.

#define VERTEX_SRC      0
#define VERTEX_DST      1
#define VERTEX_NUM      2
#define VERTEX_METADATA 3

    .section .text.__runCodelet_popops__Cast1DSingleWorker___half_quarter
    .globl __runCodelet_popops__Cast1DSingleWorker___half_quarter
    .type __runCodelet_popops__Cast1DSingleWorker___half_quarter, @function
    .worker
    .align 8
__runCodelet_popops__Cast1DSingleWorker___half_quarter:
    ld32      $m3, $mvertex_base, $mzero, VERTEX_METADATA
    ld32      $m0, $mvertex_base, $mzero, VERTEX_SRC
    { ldb8    $a0, $m3, $mzero, 0            // the metadata byte, in all four bytes
      fnop }
    { ld32    $m1, $mvertex_base, $mzero, VERTEX_DST
      andc    $a1, $a0, 0x40000000 }         // never a NaN: the sign is bit 7 of the byte
    { ld32    $m2, $mvertex_base, $mzero, VERTEX_NUM
      f32cmplt $a1, $a1, $azero }            // all ones for F143
    { shr     $m3, $m2, 3                    // complete groups of eight
      and     $a0, $a0, 0x3f }               // the scale
    { and     $m4, $m2, 7                    // the elements after them
      setzi   $a2, 0x80 }
    { brz     $m3, .Ltail
      f16v2sub $a0, $a2, $a0 }               // 0x80 - scale: -scale in the low six bits
    { ld64    $a2:3, $m0, $mzero, 1          // group 0 (the CSRs read $a0, $a1 before
      uput    $FP_SCL, $a0 }                 // the loads of this bundle write them)
    { ld64    $a0:1, $m0, $mzero, 0
      uput    $FP_NFMT, $a1 }
    add       $m5, $m0, 16                   // group 1, low atom
    add       $m7, $m0, 24                   // group 1, high atom
    tapack    $m6:7, $m7, $mzero, $m1
    add       $m3, $m3, -1
    setzi     $m8, 2                         // stride field 0: two atoms (one group of input)
    rpt       $m3, (.Lgroups_end - .Lgroups) / 8 - 1
.Lgroups:
    { ld64step $a0:1, $mzero, $m5+=, 2       // group g + 1, low atom
      f16v8tof8 $a4:5, $a0:3 }               // group g (the registers before this bundle)
    { ldst64pace $a2:3, $a4:5, $m6:7+=, $m8, 0b0001   // group g + 1, high atom; store group g
      fnop }
.Lgroups_end:
    { shl     $m3, $m2, 1                    // numElems * 2: where the tail's input starts...
      f16v8tof8 $a4:5, $a0:3 }               // the last group
    { andc    $m3, $m3, 15                   // ...rounded down to a group: 16 * groups
      fnop }
    st64pace  $a4:5, $m6:7+=, $mzero, 0b00
    bri       .Ltail_pointers

.Ltail:
    { mov     $m3, $mzero
      uput    $FP_SCL, $a0 }
    { bri     .Ltail_pointers
      uput    $FP_NFMT, $a1 }

.Ltail_pointers:
    // $m3 = 16 * groups: the tail's input at src + $m3, its output at dst + $m3 / 2.
    brz       $m4, .Lexit
    add       $m0, $m0, $m3
    shr       $m3, $m3, 1
    add       $m1, $m1, $m3
    { ld64    $a0:1, $m0, $mzero, 0          // elements 0..3 of the tail (one atom)
      setzi   $a2, 0 }
    { cmpult  $m3, $m4, 5
      setzi   $a3, 0 }
    brnz      $m3, .Lconvert_tail
    ld64      $a2:3, $m0, $mzero, 1          // elements 4..6 (the atom that holds them)
.Lconvert_tail:
    { setzi   $m3, .Ltail_masks
      f16v8tof8 $a4:5, $a0:3 }
    { shl     $m4, $m4, 3
      fnop }
    ld64      $a6:7, $m3, $m4, 0             // ones in the tail's bytes
    ld64      $a0:1, $m1, $mzero, 0          // the output atom as it is
    and64     $a4:5, $a4:5, $a6:7
    andc64    $a0:1, $a0:1, $a6:7
    or64      $a4:5, $a4:5, $a0:1
    st64      $a4:5, $m1, $mzero, 0
.Lexit:
    exitz     $mzero

.size __runCodelet_popops__Cast1DSingleWorker___half_quarter, . - __runCodelet_popops__Cast1DSingleWorker___half_quarter

    .section .rodata.__runCodelet_popops__Cast1DSingleWorker___half_quarter
    .align 8
// Entry r (r = 0..7): ones in the low r bytes of an atom.
.Ltail_masks:
    .int 0x00000000, 0x00000000
    .int 0x000000ff, 0x00000000
    .int 0x0000ffff, 0x00000000
    .int 0x00ffffff, 0x00000000
    .int 0xffffffff, 0x00000000
    .int 0xffffffff, 0x000000ff
    .int 0xffffffff, 0x0000ffff
    .int 0xffffffff, 0x00ffffff
