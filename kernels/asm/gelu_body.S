// gelu_body: the constants and the entry code shared by gelu_f16.S and gelu_fp8.S (which
// describe it); each kernel's source is `its header + this file + gelu_groups.S`
// (kernels/src/elementwise/gelu.rs). The headers define the names (K_ENTRY, K_TEXT, K_CONSTS,
// K_CONSTS_DATA, K_GROUPS) and the three places where the output format makes the code differ:
//   LOAD_POINTERS     load in and out, and put B in $TAS (FP8: also $FP_NFMT and $FP_SCL)
//   OUT_OFFSET        out += the bytes before the worker's first group ($m7 = 8 * first)
//   TAIL_WRITE_BACK   worker 5's n % 4 tail results (scratch words 2, 3) to the output at $m8
// ==== shared code of gelu_f16 and gelu_fp8 ====

    .section K_CONSTS_DATA
    .align 8
K_CONSTS:
    .int 0x3f000000, 0x3f000000     // 0.5, 0.5
    .int 0x3fcc422a, 0x3fcc422a     // A, A
    .int 0x3e922279                 // B ($TAS)

    .section K_TEXT
    .globl K_ENTRY
    .type K_ENTRY, @function
    .worker
    .align 8
K_ENTRY:
    get $m5, $WSR
    and $m5, $m5, CSR_W_WSR__CTXTID_M1__MASK
    shl $m6, $m5, 3
    setzi $m3, K_CONSTS
    ld32 $m7, $mvertex_base, $m6, V_SPLIT             // first group
    ld32 $a0, $m3, $mzero, 4                          // B
    ld32 $m2, $mvertex_base, $m6, V_SPLIT + 1         // groups
    LOAD_POINTERS                                     // in, out ($m0, $m1), $TAS = B
    {
        shl $m7, $m7, 3
        sort4x32lo $a4:5, $azeros, $azeros            // no junk (NaN) through the first iteration
    }
    {
        add $m0, $m0, $m7
        sort4x32lo $a6:7, $azeros, $azeros
    }
    OUT_OFFSET                                        // out += the first group
    call $m10, K_GROUPS
    // The n % 4 tail, by worker 5 (at the end of the groups).
    cmpne $m6, $m5, 5
    brnz $m6, .Lexit
    ld32 $m5, $mvertex_base, $mzero, V_N
    and $m5, $m5, 3
    brz $m5, .Lexit
    // Copy the tail halves to scratch words 0, 1 (zeros after them).
    ldz16 $m6, $m0, $mzero, 0
    cmpult $m7, $m5, 2
    brnz $m7, .Ltail_in_1
    ldz16 $m7, $m0, $mzero, 1
    shl $m7, $m7, 16
    or $m6, $m6, $m7
.Ltail_in_1:
    st32 $m6, $mworker_base, $mzero, 0
    setzi $m6, 0
    cmpult $m7, $m5, 3
    brnz $m7, .Ltail_in_2
    ldz16 $m6, $m0, $mzero, 2
.Ltail_in_2:
    st32 $m6, $mworker_base, $mzero, 1
    mov $m8, $m1                                      // where the tail goes
    mov $m0, $mworker_base
    add $m1, $mworker_base, 8
    setzi $m2, 1
    call $m10, K_GROUPS
    TAIL_WRITE_BACK                                   // the results to $m8
.Lexit:
    exitz $mzero
    .size K_ENTRY, . - K_ENTRY
