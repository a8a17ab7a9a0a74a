//! The tile's numerics: the written definition of every floating-point result the Tessera model produces.
//!
//! This module *is* the project's numerics contract. The simulator and every kernel reference
//! compute through these functions, so the two cannot drift apart. Each rule below is marked
//! **\[public\]** when it rests on a public fact (see `reference/isa.md`, sections 3, 4 and 8) or
//! **\[assumption\]** when the public sources are silent and the project made its own choice.
//!
//! # Formats
//!
//! * f16 is IEEE 754 binary16 with subnormals; f32 is IEEE binary32 with subnormals. **\[public\]**
//!   for f16 (isa.md §8). That f32 subnormals are not flushed, and that infinities behave as in
//!   IEEE (the hardware notes say infinity is "not fully supported"), is **\[assumption\]**.
//! * FP8 ([`Fp8Format`]): F143 (1.4.3, bias 8, max 240, min subnormal 2^-10) and F152 (1.5.2,
//!   bias 16, max 57344, min subnormal 2^-17). Both are "FNUZ": no infinities, a single NaN
//!   [`FP8_NAN`] = 0x80, a single zero 0x00, subnormals. **\[public\]** (isa.md §4; the biases are
//!   inferred there and agree with the oracle tables in `testdata/fp8`). Format field:
//!   1 = F143, 0 = F152 **\[public\]**.
//!
//! # Rounding
//!
//! * Every narrowing step rounds to nearest, ties to even (RNE), computed with integer
//!   arithmetic in one place (`rounding.rs`). `$FP_CTL.RND` modes other than RNE and
//!   stochastic rounding (`$FP_CTL.ESR`) are **not modelled** here **\[assumption\]**.
//! * Overflow is decided IEEE-style: round as if the exponent were unbounded, then overflow if
//!   the rounded value exceeds max. So the boundary is max + ½ ulp and that midpoint itself
//!   overflows (it rounds to the even neighbour, a power of two beyond max): F143 overflows
//!   from 248, F152 from 61440, f16 from 65520. RNE is **\[public\]** for the FP8 casts
//!   (PopLibs) and is the `$FP_CTL.RND` default elsewhere; the exact overflow boundary is
//!   **\[assumption\]**, matched bit for bit to the `ml_dtypes` oracle tables.
//!
//! # NaN
//!
//! * Any operation whose result is NaN returns a canonical NaN: f16 [`F16_CANONICAL_NAN`] =
//!   0x7e00, f32 [`F32_CANONICAL_NAN`] = 0x7fc0_0000, FP8 0x80. Payloads are not propagated.
//!   **\[assumption\]** (public: the hardware has quiet NaNs only). [`f16_to_f32`] is the one
//!   exception: it is exact, keeping the payload but setting the quiet bit.
//! * `max`/`min` return the canonical NaN if either operand is NaN, and order −0 < +0.
//!   **\[assumption\]**
//! * Comparisons are IEEE quiet predicates (any NaN → false, except `ne` → true; +0 == −0) and
//!   give all-ones / zero masks. Masks **\[public\]**; NaN behaviour **\[assumption\]**.
//!
//! # FP8 conversions (`f16v2tof8`, `f16v8tof8`, `f8v2tof16`, `f8v4tof16`)
//!
//! * [`f16_to_fp8`]: the exact value `f16 × 2^$FP_SCL`, rounded once (RNE) **\[public\]**.
//!   Overflow → 0x80 if `FP_CTL.NANOO`, else ±max (0x7f / 0xff) **\[public\]**. NaN and ±inf
//!   → 0x80 whatever NANOO says **\[public\]**. Results that round to zero → 0x00 even for
//!   negative inputs, since 0x80 is NaN **\[public\]** (underflow → 0).
//! * [`fp8_to_f16`]: the exact value `fp8 × 2^$FP_SCL`, exact when it fits f16 **\[public\]**;
//!   otherwise RNE to f16, overflow → ±inf, underflow → f16 subnormal or signed zero; the NaN
//!   code → 0x7e00 **\[assumption\]**.
//! * `$FP_SCL` / `$FP_ISCL` hold a 6-bit two's-complement scale, −32..31
//!   ([`scale_from_field`], [`scale_to_field`]). The range is **\[public\]** (PopLibs metadata
//!   limits); that the CSR field itself is 6 bits wide is inferred in isa.md, so
//!   **\[assumption\]**. PopLibs writes `$FP_ISCL` = input scale + weight scale, which can
//!   leave −32..31; the AMP functions therefore take any `i32` scale, and only the CSR decoding
//!   ([`scale_from_field`]) wraps to 6 bits.
//!
//! # f16 / f32 arithmetic
//!
//! * f16 add, sub, mul are computed in f32 and rounded once to f16, which equals the correctly
//!   rounded IEEE binary16 result (see the comment in `float.rs`). f32 add, sub, mul, sqrt and
//!   1/x are the IEEE correctly rounded operations. **\[assumption\]** (the ISA text on
//!   rounding of these operations was not available).
//! * exp, tanh (f16 and f32) and 1/√x are evaluated in f64 with the pure-Rust `libm` crate
//!   (never the platform libm, so results are identical on every host) and rounded once to
//!   the destination format. **\[assumption\]**: the hardware's algorithms are not public.
//! * f32 division is the IEEE correctly rounded operation; clamp is `max` with the lower limit
//!   then `min` with the upper (so NaN in → canonical NaN); `absadd` clears both sign bits and
//!   adds. **\[assumption\]** beyond the public names ("min of maximum", "addition of absolute
//!   values").
//! * The logistic function (`sigm`) and ln (f16 and f32) are evaluated in f64 like exp and
//!   rounded once. **\[assumption\]**
//! * f32 ↔ integer conversions and `f32int` rounding: see [`intconv`].
//! * Floating-point status flags (`$FP_STS`) are not computed here.
//!
//! # AMP
//!
//! See [`amp`]. Public: f16 partials in and f16 results out, f32 accumulators, FP8 products
//! scaled by `2^$FP_ISCL`. **\[assumption\]**: partial in f16 → f32 exactly; per phase, each
//! lane's exact product is rounded to f32 and added to the accumulator lane by lane in
//! ascending order with one RNE rounding per addition; result out f32 → f16 RNE.

pub mod amp;
pub mod classify;
pub mod float;
pub mod fp8;
pub mod intconv;
pub mod random;
mod rounding;

pub use amp::{
    amp_partial_in, amp_phase_channels, amp_phase_f16, amp_phase_fp8, amp_result_out, F16Phase,
    Fp8Phase,
};
pub use classify::{f32_class, F32Class};
pub use float::{
    f16_absadd, f16_add, f16_clamp, f16_cmpeq, f16_cmpge, f16_cmpgt, f16_cmple, f16_cmplt,
    f16_cmpne, f16_exp, f16_is_nan, f16_ln, f16_max, f16_min, f16_mul, f16_sigm, f16_sub, f16_tanh,
    f16_to_f32, f32_absadd, f32_add, f32_clamp, f32_cmpeq, f32_cmpge, f32_cmpgt, f32_cmple,
    f32_cmplt, f32_cmpne, f32_div, f32_exp, f32_ln, f32_max, f32_min, f32_mul, f32_oorx, f32_oox,
    f32_sigm, f32_sqrt, f32_sub, f32_tanh, f32_to_f16, f64_to_f16, f64_to_f32, F16_TRUE,
    F32_CANONICAL_NAN, F32_TRUE,
};
pub use fp8::{
    f16_to_fp8, fp8_decode, fp8_to_f16, fp8_values, scale_from_field, scale_to_field, Fp8Format,
    F16_CANONICAL_NAN, FP8_NAN,
};
pub use intconv::{
    f32_round_integral, f32_to_i32, f32_to_u32, i32_to_f32, u32_to_f32, IntegralRounding,
};
