// y[i] = x[i] > T ? clamp(x[i], LO, HI) : -x[i] over N floats, and one flag byte per element
// packed four to a word (0xaa where x[i] > T, else 0x55), written the way PopLibs codelets
// are: `ldconst` for the float constants, an f32 compare against a broadcast scalar (`:B`),
// `f32v2clamp`, the select built from `and64`/`andc64`/`or64`, and the flag bytes rolled in
// with `movnz` and `roll8r`.

#define N 8
#define T_BITS 0x3f000000
#define LO_BITS 0xc0000000
#define HI_BITS 0x40000000
#define FLAG_SET 0xaa
#define FLAG_CLEAR 0x55

    .section .text.select(worker), "ax", @progbits
    .globl select
    .type select @function
    .worker
    .align 8
select:
    setzi $m0, x_in
    setzi $m1, y_out
    setzi $m3, flags_out
    setzi $m2, N / 2 - 1
    ldconst $a6, LO_BITS
    ldconst $a7, HI_BITS
    setzi $m8, FLAG_SET
    setzi $m9, FLAG_CLEAR
    zero $m7
.Lpair:
    ld64step $a0:1, $mzero, $m0+=, 1
    ldconst $a4, T_BITS
    f32v2cmplt $a4:5, $a4:B, $a0:1
    f32v2clamp $a2:3, $a0:1, $a6:7
    and64 $a2:3, $a2:3, $a4:5
    f32v2sub $a0:1, $azero:B, $a0:1
    andc64 $a0:1, $a0:1, $a4:5
    or64 $a0:1, $a0:1, $a2:3
    st64step $a0:1, $mzero, $m1+=, 1
    .irp lane, $a4, $a5
      atom $m4, \lane
      mov $m5, $m9
      movnz $m5, $m4, $m8
      roll8r $m7, $m7, $m5
    .endr
    // Four flags are in after every second pair: the counter is then even.
    and $m6, $m2, 1
    brnz $m6, 1f
    st32step $m7, $mzero, $m3+=, 1
1:
    brnzdec $m2, .Lpair
    exitz $mzero

    .data
    .align 8
x_in:
    .float 1.0, -3.0, 0.25, 5.0, -0.5, 0.75, 3.0, -1.5
y_out:
    .space 4 * N
flags_out:
    .space N
