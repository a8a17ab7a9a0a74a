"""Casts: PopLibs' NormaliseImage (uint8 to half) and the FP8 casts written here
(kernels/asm/poplibs_style/), with their references from testdata/fp8's oracle tables."""

import os
import struct

from calibration.common import Data, f16_bits, f16_value, read_npy

# ---- NormaliseImage (popops/codelets/asm/NormaliseImage.S): uint8 → half, multi-vertex -------


def normalise_image_case(shape, rng):
    """Pixels of three uint8 channels become four halves: ((x · inScale) − offset_c) · scale_c
    for c < 3 and +0 for the padding channel, each step one f16 RNE rounding (`f16v4mul`,
    `f16v4sub`; the byte becomes its half through `sort8x8lo` and two × 2^12, exactly). The
    vertex: in, out, scales (4 halves), offsets (4 halves), inScale (a half), the pixels packed
    as (per worker << 3) | remainder. All six workers run it (pixel p on worker p mod 6)."""
    (pixels,) = shape
    d = Data()
    x = [rng.randrange(0, 256) for _ in range(3 * pixels)]
    scales = [f16_bits(rng.uniform(0.5, 2.0)) for _ in range(3)] + [f16_bits(rng.uniform(1, 2))]
    offsets = [f16_bits(rng.uniform(-1, 1)) for _ in range(3)] + [f16_bits(rng.uniform(-1, 1))]
    in_scale = f16_bits(rng.choice([1 / 255, 0.5, 1.0]))
    d.lines += ["    .align 8", "pixels_in:"] + [f"    .byte {v}" for v in x]
    d.lines += ["    .align 8", "    .space 8"]
    d.halves("out", [0] * (4 * pixels))
    d.halves("scales", scales)
    d.halves("offsets", offsets)
    d.lines += ["    .align 8", "vertex:", "    .int pixels_in, out, scales, offsets",
                f"    .short {in_scale}, 0", f"    .int {(pixels // 6) << 3 | pixels % 6}"]

    def h(v):
        return f16_value(f16_bits(v))

    want = []
    for p in range(pixels):
        for c in range(4):
            if c == 3:
                want.append(0)
                continue
            t = h(x[3 * p + c] * f16_value(in_scale))
            t = h(t - f16_value(offsets[c]))
            want.append(f16_bits(h(t * f16_value(scales[c]))))
    return d, [("out", "float16", 4 * pixels, want)]


def normalise_image_estimate(shape):
    """NormaliseImage's estimator (uint8): six workers × (28 + 8 a pixel + 1)."""
    (pixels,) = shape
    per_worker, rem = pixels // 6, pixels % 6
    return 6 * (28 + (per_worker + (rem > 1)) * 8 + 1)


# ---- Cast1DSingleWorker<half,quarter>: written here (kernels/asm/poplibs_style/) ------------

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FP8_TABLES = os.path.join(REPO, "testdata", "fp8")


def fp8_table(fmt, fpscl):
    """The oracle: the FP8 code of every f16 pattern × 2^fpscl, made outside the project
    (testdata/fp8, NumPy and ml_dtypes), NANOO off (the workers' $FP_CTL as `asm run` starts
    them: saturating)."""
    return read_npy(os.path.join(FP8_TABLES, f"f16_to_{fmt}_fpscl{fpscl}_nanoo0.npy"))


def cast_half_quarter_case(shape, rng):
    """dst[i] = FP8(src[i] · 2^−scale) for the metadata's format and scale; the vertex: src,
    dst, numElems, the metadata's address (the project's choice, see the kernel). shape = (n,
    format, scale): format 1 F143, 0 F152; scale one of 4, 0, −4 (the tables' $FP_SCL −4, 0,
    4). The inputs are any f16 patterns, NaNs and infinities among them; the output's atoms are
    filled with 0x5a first, and the bytes after the last element must keep it."""
    n, fmt, scale = shape
    d = Data()
    x = [rng.randrange(0, 1 << 16) for _ in range(n)]
    d.halves("src", x)
    table = fp8_table("f143" if fmt else "f152", -scale)
    padded = -(-n // 8) * 8
    want = [table[b] for b in x] + [0x5A] * (padded - n)
    d.lines += ["    .section .data.interleaved_calibration", "    .align 8", "dst:"]
    d.lines += [f"    .byte {0x5A}" for _ in range(padded)]
    d.guard("dst")
    d.lines += ["    .section .data.calibration", "metadata:", f"    .byte {(fmt << 7) | (scale & 0x3F)}"]
    d.words("vertex", ["src", "dst", n, "metadata"])
    return d, [("dst", "uint8", padded, want)]


def cast_half_quarter_estimate(shape):
    """getCast1DSingleWorkerCycleEstimate (popops/PerformanceEstimation.cpp) for half → quarter:
    3 + 2 + castWorkerCycles, the aux-pipeline form (a vector of 8 at 2 cycles, 19 of prologue,
    1 + 2 a remainder bit)."""
    n = shape[0]
    cycles = 19 + 2 * (n // 8)
    for bit in range(3):
        cycles += 1 + (2 if (n % 8) & (1 << bit) else 0)
    return 3 + 2 + cycles


def fp8_decode_table(fmt):
    """The oracle's value of every FP8 code, unscaled (testdata/fp8, NaN for 0x80)."""
    raw = read_npy(os.path.join(FP8_TABLES, f"{fmt}_decode.npy"))
    return [struct.unpack("<f", raw[4 * i : 4 * i + 4])[0] for i in range(256)]


def cast_quarter_half_case(shape, rng):
    """dst[i] = half(value(src[i]) · 2^scale) for the metadata's format and scale, rounded to
    nearest even (exact where it fits), the NaN code to the canonical f16 NaN 0x7e00
    (docs/reference/isa.md); the vertex: src, dst, numElems, the metadata's address. shape =
    (n, format, scale). The output's atoms are filled with 0x5a5a first, and the halves after
    the last element must keep it."""
    n, fmt, scale = shape
    d = Data()
    codes = [rng.randrange(0, 256) for _ in range(n)]
    d.lines += ["    .align 8", "src:"] + [f"    .byte {c}" for c in codes]
    d.guard("src")
    table = fp8_decode_table("f143" if fmt else "f152")
    padded = -(-n // 4) * 4
    want = []
    for c in codes:
        v = table[c]
        want.append(0x7E00 if v != v else f16_bits(v * 2.0**scale))
    want += [0x5A5A] * (padded - n)
    d.lines += ["    .section .data.interleaved_calibration"]
    d.halves("dst", [0x5A5A] * padded)
    d.lines += ["    .section .data.calibration", "metadata:", f"    .byte {(fmt << 7) | (scale & 0x3F)}"]
    d.words("vertex", ["src", "dst", n, "metadata"])
    return d, [("dst", "float16", padded, want)]


def cast_quarter_half_estimate(shape):
    """getCast1DSingleWorkerCycleEstimate for quarter → half: 3 + 2 + castWorkerCycles, the
    aux-pipeline form (a vector of 4 at 1 cycle: loads of 8 codes, stores of 4 halves; 19 of
    prologue; 1 + 2 a remainder bit of 2)."""
    n = shape[0]
    cycles = 19 + n // 4
    for bit in range(2):
        cycles += 1 + (2 if (n % 4) & (1 << bit) else 0)
    return 3 + 2 + cycles


def cast_half_quarter_bundles(shape):
    """Cast1DSingleWorker<half,quarter>'s own cost: the bundles its path issues (one worker
    alone: a worker cycle each), counted from the kernel: 8 to the groups test; with g groups,
    8 more to the loop, 2 a group after the first, 4 after it; then 2 to exit with no tail, or
    16 (17 with 5..7 leftovers, whose second atom is loaded) through the masked merge."""
    n = shape[0]
    groups, left = divmod(n, 8)
    cycles = 18 + 2 * groups if groups else 10
    return cycles + (2 if left == 0 else 16 + (left >= 5))


def cast_quarter_half_bundles(shape):
    """Cast1DSingleWorker<quarter,half>'s own cost, counted as its pair's: 8 to the groups test;
    with g groups 7 more, 2 a group after the first, 4 after it (17 + 2g); then 2 to exit with
    no tail, else 8 to the tail's branch and 8 to merge fewer than 4 halves, 4 for exactly 4, or
    13 for 5..7 (the first atom whole, the second merged)."""
    n = shape[0]
    groups, left = divmod(n, 4 * 2)
    cycles = 17 + 2 * groups if groups else 8
    if left == 0:
        return cycles + 2
    return cycles + 8 + (8 if left < 4 else 4 if left == 4 else 13)
