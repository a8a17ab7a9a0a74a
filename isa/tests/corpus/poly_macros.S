// Integer polynomial y[i] = (A*x[i] + B)*x[i] + C over N words, written the way PopLibs
// codelets are: macros with required, defaulted and variadic parameters, `.irp` over
// registers (ABI aliases among them), `.rept` for the unrolled tail and the input table,
// `.if`/`.ifc` to choose code, `.set` counters, and `\@` for unique names.

#define N 10
    .equ UNROLL, 4
    .set A, 3
    .set B, -2
    .set C, 7

// Refuses element types other than int (the `.error` fires at the invocation).
.macro check_kind kind=int
  .ifnc \kind, int
    .error "poly: unsupported element type \kind"
  .endif
.endm

// dst = the polynomial with coefficients `coeffs` (highest first) at x (Horner).
.macro horner dst:req, x:req, coeffs:vararg
  .set first_\@, 1
  .irp k, \coeffs
    .if first_\@
      add \dst, $mzero, \k
      .set first_\@, 0
    .else
      mul \dst, \dst, \x
      add \dst, \dst, \k
    .endif
  .endr
.endm

// One element: load x into `reg`, evaluate, store.
.macro step_one reg, kind=int
  check_kind \kind
  ld32step \reg, $mzero, $m0+=, 1
  horner $m8, \reg, A, B, C
  st32step $m8, $mzero, $m1+=, 1
.endm

    .section .text.poly(worker), "ax", @progbits
    .globl poly
    .type poly @function
    .worker
    .align 8
poly:
    setzi $m0, x_in
    setzi $m1, y_out
.if N / UNROLL
    setzi $m2, N / UNROLL - 1
    .align 8
.Lloop:
    .irp r, $fp, $lr, $sp, $m7
      step_one \r
    .endr
    brnzdec $m2, .Lloop
.endif
.ifne N % UNROLL
    .rept N % UNROLL
      step_one $m3, kind=int
    .endr
.endif
    exitz $mzero
    .size poly, . - poly

    .section .data
    .align 4
x_in:
    .set v, -3
    .rept N
    .int v
    .set v, v + 1
    .endr
y_out:
    .space 4 * N
// A later definition wins from there on: this word holds 5, the code above used 3.
    .set A, 5
a_after:
    .int A
