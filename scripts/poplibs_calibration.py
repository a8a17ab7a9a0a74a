#!/usr/bin/env python3
"""Runs PopLibs' assembly codelets as written on one simulated tile, checks their outputs against
references written here, and sets their simulated cycles beside PopLibs' own cycle estimators
(issue 34: the estimators as the simulator's calibration).

Usage: scripts/poplibs_calibration.py POPLIBS_DIR [--tessera target/release/tessera]
                                      [--cpp clang] [--hardware FILE.csv] [--only NAME,...]

PopLibs is not part of this repository: point POPLIBS_DIR at a checkout of
https://github.com/graphcore/poplibs (measured at 7eac0f26). Each codelet's file is preprocessed
as `scripts/poplibs_corpus.py` does (clang, `-D__IPU__ -D__IPU_ARCH_VERSION__=21`, the stand-in
SDK headers), built with the files it links with, and run with `tessera asm run` as worker 0 on
an ipu21 tile, its vertex state and data written here. No PopLibs file is modified or copied.

The table (CASES below) has, per codelet: its class, file and entry, a builder of the vertex
state and data for a size, a reference of every output element (pure Python: f16 through
`struct`'s IEEE half), and PopLibs' estimator for it, transcribed from
`lib/popops/popopsCycleEstimators.cpp` and `lib/popops/PerformanceEstimation.cpp` (worker
cycles: one a bundle of that worker; the tile runs six workers in turn, so a worker alone issues
one bundle every 6 tile cycles).

`--hardware FILE.csv` takes measured cycles (`kernel,shape,cycles`, `kernel` the case's name,
`shape` as the report prints it, cycles in worker cycles as PopLibs' estimators count them) and
reports the simulator's error against them per class, so that a user with a C600 can calibrate
the simulator. Output: one line per case (class, codelet, shape, simulated, estimate, ratio,
outputs), then per class the range of simulated / estimate and, with --hardware, of simulated /
measured.
"""

import collections
import csv
import importlib.util
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("poplibs_corpus", os.path.join(HERE, "poplibs_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


def f16_bits(x):
    """The IEEE half nearest to x (round to nearest even), as bits."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0x7C00 if x > 0 else 0xFC00


def f16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32(x):
    """x rounded to the nearest f32 (ties to even)."""
    return f32_value(f32_bits(x))


class Data:
    """The data file of one run: labelled blocks of words and halves, 8-byte aligned."""

    def __init__(self):
        self.lines = ["    .section .data.calibration", "    .align 8"]

    def words(self, label, values, guard=False):
        self.lines += ["    .align 8", f"{label}:"] + [f"    .int {v}" for v in values]
        if guard:
            self.guard(label)

    def halves(self, label, bits):
        self.lines += ["    .align 8", f"{label}:"] + [f"    .short {b}" for b in bits]
        self.guard(label)

    def guard(self, label):
        """Two words after an output, which the codelet must leave as they are."""
        self.lines += ["    .align 8", f"{label}_guard:", "    .int 0x5a5a5a5a, 0x5a5a5a5a"]

    def space(self, label, size, align=8):
        self.lines += [f"    .align {align}", f"{label}:", f"    .space {size}"]

    def text(self):
        return "\n".join(self.lines) + "\n"


# ---- ScaledAdd2D and friends (popops/codelets/asm/ScaledAdd2D_*.S) --------------------------


def scaled_2d_estimate(sizes, kind, operation, mem_constrained):
    """ScaledArithmetic2DCycleEstimate (popopsCycleEstimators.cpp)."""
    float_axpby = operation in ("axplusby", "axminusby") and kind == "float"
    inner = 2 if mem_constrained and not float_axpby else 3
    grain = 2 if kind == "float" else 4
    cycles = 9 + 1
    if operation == "subtract":
        cycles += 2
    if operation == "axplusby":
        cycles += 6
    for n in sizes:
        cycles += 15
        cycles += (5 if n // grain else 0) + (n // grain) * inner
        if kind == "float":
            cycles += 7 if n % grain else 0
        else:
            rem = n % grain
            cycles += (4 if rem else 0) + (6 if rem >= 2 else 0) + (7 if rem % 2 == 1 else 0)
    return cycles


def scaled_2d_case(kind, operation, fast):
    """A, a list of vectors, becomes a·A + b·B (b = k, a = 1 for ScaledAdd; b = −k for
    ScaledSubtract); the vertex: A (list of (pointer, size)), its count, B (list of pointers),
    the scale(s) by pointer. `fast` puts A and B in different memory elements (the codelet's
    memory-constrained entry); the slow entry finds them close and takes its other path."""

    def build(sizes, rng):
        d = Data()
        k = rng.choice([0.75, -1.5, 0.125, 3.0])
        a_coef = rng.choice([0.5, -2.0, 1.25]) if operation == "axplusby" else 1.0
        half = kind == "half"
        enc = f16_bits if half else f32_bits
        dec = f16_value if half else f32_value
        outputs, a_list, b_list = [], [], []
        for i, n in enumerate(sizes):
            a = [enc(rng.uniform(-4, 4)) for _ in range(n)]
            b = [enc(rng.uniform(-4, 4)) for _ in range(n)]
            if half:
                d.halves(f"a{i}", a)
            else:
                d.words(f"a{i}", a, guard=True)
            if fast:
                # Another memory element (16 KiB apart) for B.
                d.space(f"gap{i}", 0x4000)
            (d.halves if half else d.words)(f"b{i}", b)
            a_list += [f"a{i}", n]
            b_list += [f"b{i}"]
            # The instructions' rules (isa/src/semantics/accumulate.rs): `f16v4mix` rounds each
            # product to f32, then their sum to f32, then to f16; `f32v2axpy` rounds the
            # product, then the sum. ScaledSubtract is ScaledAdd with −k (exact).
            kk = -k if operation == "subtract" else k
            if half:
                want = [f32(f32(a_coef * dec(x)) + f32(kk * dec(y))) for x, y in zip(a, b)]
            else:
                want = [f32(f32(kk * dec(y)) + dec(x)) for x, y in zip(a, b)]
            outputs.append((f"a{i}", "float16" if half else "float32", n, [enc(w) for w in want]))
        d.words("alist", a_list)
        d.words("blist", b_list)
        scale = [f16_bits(k) if half else f32_bits(k)]
        if operation == "axplusby":
            d.halves("scale", [f16_bits(k)]) if half else d.words("scale", [f32_bits(k)])
            d.halves("scaleA", [f16_bits(a_coef)]) if half else d.words("scaleA", [f32_bits(a_coef)])
            d.words("vertex", ["alist", len(sizes), "blist", "scaleA", "scale"])
        else:
            (d.halves if half else d.words)("scale", scale)
            d.words("vertex", ["alist", len(sizes), "blist", "scale"])
        return d, outputs

    return build


def scaled_2d_name(kind, operation, fast):
    codelet = {"add": "ScaledAdd2D", "subtract": "ScaledSubtract2D", "axplusby": "aXPlusbY2D"}[operation]
    types = {"add": f"{kind}_{kind}_{kind}", "subtract": f"{kind}_{kind}", "axplusby": f"{kind}_{kind}"}[operation]
    return f"__runCodelet_popops__{codelet}___{types}_{'true' if fast else 'false'}"


# ---- Fill and Fill2d (popops/codelets/asm/Fill.S) -------------------------------------------


def fill_one(n, kind):
    """_fillCycleEstimate (PerformanceEstimation.cpp) for n elements."""
    width = 4 if kind == "half" else 2
    if kind == "half":
        return {1: 15, 2: 21}.get(n, 26 + n // width)
    return 16 + n // width + 6 + (n % width == 1) + 1


def fill_case(kind, two_d):
    def build(sizes, rng):
        d = Data()
        half = kind == "half"
        value = f16_bits(rng.uniform(-8, 8)) if half else f32_bits(rng.uniform(-8, 8))
        outputs = []
        for i, n in enumerate(sizes):
            d.space(f"pad{i}", 2 * (i % 4) if half else 0, align=8)  # vary the alignment
            d.lines += [f"out{i}:", f"    .space {n * (2 if half else 4)}"]
            d.lines += [f"out{i}_guard:", "    .int 0x5a5a5a5a, 0x5a5a5a5a"]
            outputs.append((f"out{i}", "float16" if half else "float32", n, [value] * n))
        if two_d:
            d.words("outlist", [x for i, n in enumerate(sizes) for x in (f"out{i}", n)])
            d.words("vertex", [value, "outlist", len(sizes)])
        else:
            d.words("vertex", [value, "out0", sizes[0]])
        return d, outputs

    return build


def fill_estimate(sizes, kind, two_d):
    if not two_d:
        return fill_one(sizes[0], kind)
    cycles = 5 + sum(fill_one(n, kind) for n in sizes)
    cycles += kind != "half"
    cycles -= (2 + (kind != "half")) * len(sizes)
    return cycles


# ---- Clamp (popops/codelets/asm/Clamp.S) ----------------------------------------------------


def clamp_case(kind):
    """out[i] = min(max(in1[i], in2[i]), in3[i]) per element (`f32clamp`, `f16v2clamp`); the
    vertex: lists of in1, in2, in3 pointers, the out list of (pointer, size), the count."""

    def build(sizes, rng):
        d = Data()
        half = kind == "half"
        enc = f16_bits if half else f32_bits
        lists = {"in1": [], "in2": [], "in3": [], "out": []}
        outputs = []
        for i, n in enumerate(sizes):
            x = [rng.uniform(-6, 6) for _ in range(n)]
            lo = [rng.uniform(-4, 0) for _ in range(n)]
            hi = [rng.uniform(0, 4) for _ in range(n)]
            x, lo, hi = ([enc(v) for v in vs] for vs in (x, lo, hi))
            dec = f16_value if half else f32_value
            for name, values in (("in1", x), ("in2", lo), ("in3", hi)):
                if half:
                    d.halves(f"{name}_{i}", values)
                else:
                    d.words(f"{name}_{i}", values)
                lists[name].append(f"{name}_{i}")
            if half and i % 2 == 1:
                d.space(f"skew{i}", 2, align=8)  # an output starting at 2 mod 4
                d.lines += [f"out_{i}:", f"    .space {2 * n}"]
                d.guard(f"out_{i}")
            elif half:
                d.halves(f"out_{i}", [0] * n)
            else:
                d.words(f"out_{i}", [0] * n, guard=True)
            lists["out"] += [f"out_{i}", n]
            want = [enc(min(max(dec(a), dec(b)), dec(c))) for a, b, c in zip(x, lo, hi)]
            outputs.append((f"out_{i}", "float16" if half else "float32", n, want))
        for name in ("in1", "in2", "in3", "out"):
            d.words(f"{name}_list", lists[name])
        d.words("vertex", ["in1_list", "in2_list", "in3_list", "out_list", len(sizes)])
        return d, outputs

    return build


def clamp_estimate(sizes, kind):
    """Clamp's estimator: 5 + per vector 6 + 2 per vector of the 64-bit data path."""
    width = 4 if kind == "half" else 2
    return 5 + sum(6 + 2 * ((n + width - 1) // width) for n in sizes)


# ---- Select (popops/codelets/asm/select_half.S) -----------------------------------------------


def select_case(sizes, rng):
    """out[i] = in3[i] ? in1[i] : in2[i] (in3 bools, one byte each); the vertex: lists of in1,
    in2, in3 pointers, the out list of (pointer, size), the count."""
    d = Data()
    lists = {"in1": [], "in2": [], "in3": [], "out": []}
    outputs = []
    for i, n in enumerate(sizes):
        a = [f16_bits(rng.uniform(-4, 4)) for _ in range(n)]
        b = [f16_bits(rng.uniform(-4, 4)) for _ in range(n)]
        c = [rng.choice([0, 1]) for _ in range(n)]
        d.halves(f"in1_{i}", a)
        d.halves(f"in2_{i}", b)
        d.lines += ["    .align 8", f"in3_{i}:"] + [f"    .byte {v}" for v in c]
        d.halves(f"out_{i}", [0] * n)
        for name in ("in1", "in2", "in3"):
            lists[name].append(f"{name}_{i}")
        lists["out"] += [f"out_{i}", n]
        outputs.append((f"out_{i}", "float16", n, [x if t else y for x, y, t in zip(a, b, c)]))
    for name in ("in1", "in2", "in3", "out"):
        d.words(f"{name}_list", lists[name])
    d.words("vertex", ["in1_list", "in2_list", "in3_list", "out_list", len(sizes)])
    return d, outputs


def select_estimate(sizes):
    """Select's estimator (selectCycles): 5 + per vector 6 + 5 an element."""
    return 5 + sum(6 + 5 * n for n in sizes)


# ---- UnaryOp2D (popops/codelets/asm/unaryOps2D.S) -------------------------------------------


def unary_2d_case(op):
    """out[i] = op(in[i]) per element (SIGNUM of halves: −1, +0 or 1; BITWISE_NOT of shorts); the vertex: the list of in pointers, the out list of (pointer,
    size), the count."""

    def build(sizes, rng):
        d = Data()
        ins, outs, outputs = [], [], []
        for i, n in enumerate(sizes):
            if op == "SIGNUM":
                values = [rng.choice([0.0, -0.0, rng.uniform(-3, 3)]) for _ in range(n)]
                x = [f16_bits(v) for v in values]
                # PopLibs' definition, (0 < x) − (x < 0): +0 for either zero.
                want = [f16_bits(float((f16_value(b) > 0) - (f16_value(b) < 0))) for b in x]
            else:
                x = [rng.randrange(0, 1 << 16) for _ in range(n)]
                want = [~v & 0xFFFF for v in x]
            d.halves(f"in{i}", x)
            d.halves(f"out{i}", [0] * n)
            ins.append(f"in{i}")
            outs += [f"out{i}", n]
            outputs.append((f"out{i}", "float16" if op == "SIGNUM" else "uint16", n, want))
        d.words("in_list", ins)
        d.words("out_list", outs)
        d.words("vertex", ["in_list", "out_list", len(sizes)])
        return d, outputs

    return build


def unary_2d_estimate(sizes, op):
    """UnaryOp2D's estimator: 20 + per vector unaryOpInnerLoopCycles (SIGNUM half: (5 + 4) a
    vector of 4; BITWISE_NOT short: 2 a loop of 4)."""
    per_four = 9 if op == "SIGNUM" else 2
    return 20 + sum(per_four * ((n + 3) // 4) for n in sizes)


# ---- BinaryOp2D (popops/codelets/asm/binaryOps2D.S) ------------------------------------------


def binary_2d_case(op, kind):
    """out[i] = in1[i] op in2[i] (ADD, MULTIPLY; one rounding to the type, `f16v4add`,
    `f32v2mul`, ...); the vertex: lists of in1 and in2 pointers, the out list of (pointer,
    size), the count."""

    def build(sizes, rng):
        d = Data()
        half = kind == "half"
        enc, dec = (f16_bits, f16_value) if half else (f32_bits, f32_value)
        l1, l2, lo, outputs = [], [], [], []
        for i, n in enumerate(sizes):
            a = [enc(rng.uniform(-8, 8)) for _ in range(n)]
            b = [enc(rng.uniform(-8, 8)) for _ in range(n)]
            for name, values in (("x", a), ("y", b), ("z", [0] * n)):
                if half:
                    d.halves(f"{name}{i}", values)
                else:
                    d.words(f"{name}{i}", values, guard=True)
            l1.append(f"x{i}")
            l2.append(f"y{i}")
            lo += [f"z{i}", n]
            f = (lambda u, v: u + v) if op == "ADD" else (lambda u, v: u * v)
            outputs.append((f"z{i}", "float16" if half else "float32", n,
                            [enc(f(dec(u), dec(v))) for u, v in zip(a, b)]))
        d.words("in1_list", l1)
        d.words("in2_list", l2)
        d.words("out_list", lo)
        d.words("vertex", ["in1_list", "in2_list", "out_list", len(sizes)])
        return d, outputs

    return build


def binary_2d_estimate(sizes, kind):
    """BinaryOp2D's estimator for an op with an assembly codelet: 5 + per vector (1 + 2) a
    natural vector (4 halves, 2 floats)."""
    width = 4 if kind == "half" else 2
    return 5 + sum(3 * ((n + width - 1) // width) for n in sizes)


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


# ---- ReduceAdd (poplin/codelets/asm/ReduceAdd.S): all six workers on one vertex ----------


def reduce_add_case(out_kind, partials_kind):
    """out[c] = the sum over partials p of partials[p][c], accumulated in f32 in order p; the
    vertex: a list of pointers to the partial vectors, out, numPartials and numElems (16 bits
    each). A multi-vertex: every worker runs the entry on the same vertex (the harness's
    supervisor `runall`s it)."""

    def build(shape, rng):
        num_partials, num_elems = shape
        d = Data()
        half_in = partials_kind == "half"
        pointers = []
        columns = [[] for _ in range(num_elems)]
        for p in range(num_partials):
            values = [rng.uniform(-2, 2) for _ in range(num_elems)]
            if half_in:
                bits = [f16_bits(v) for v in values]
                d.halves(f"partial{p}", bits)
                values = [f16_value(b) for b in bits]
            else:
                bits = [f32_bits(v) for v in values]
                d.words(f"partial{p}", bits)
                values = [f32_value(b) for b in bits]
            pointers.append(f"partial{p}")
            for c, v in enumerate(values):
                columns[c].append(v)
        # Columns in whole groups of 8 (and with half partials a last group of 4) sum in f32
        # (`f16v8acc`, `f16v4acc`, `f32v4acc`); with half partials the last 1 to 3 columns sum
        # in f16, rounded at every add (`f16v2add`: the codelet's remainder paths).
        f16_sum = set()
        if half_in:
            r = num_elems % 8
            start = num_elems - r + (4 if r >= 4 else 0)
            f16_sum = set(range(start, num_elems))
        want = []
        for c, col in enumerate(columns):
            acc = 0.0
            for v in col:
                acc = f16_value(f16_bits(acc + v)) if c in f16_sum else f32(acc + v)
            want.append(f32_bits(acc) if out_kind == "float" else f16_bits(acc))
        d.words("partials", pointers)
        if out_kind == "float":
            d.words("out", [0] * num_elems, guard=True)
        else:
            d.halves("out", [0] * num_elems)
        d.lines += ["    .align 8", "vertex:", "    .int partials, out",
                    f"    .short {num_partials}, {num_elems}"]
        return d, [("out", "float32" if out_kind == "float" else "float16", num_elems, want)]

    return build


def reduce_add_estimate(shape, out_kind, partials_kind):
    """getReduceCycleEstimate (poplin/PerformanceEstimation.hpp), the multi-input form, in tile
    cycles (its worker cycles times six)."""
    num_partials, out_size = shape
    partials_float = partials_kind == "float"
    acc_width = 4 if partials_float else 8
    in_path = 64 // (32 if partials_float else 16)
    cycles = 32
    per_loop = acc_width // min(acc_width, in_path) + 1
    loops = out_size // acc_width
    for i in range((acc_width - 1).bit_length()):
        if out_size & (1 << i):
            loops += 1
    per_worker = loops // 6
    if loops % 6:
        if out_size & (acc_width - 1):
            cycles += 2 * num_partials + (13 if partials_float else 11)
        else:
            per_worker += 1
    if out_kind == "float":
        cycles += (per_loop * num_partials + (7 if partials_float else 9)) * per_worker
    else:
        cycles += (per_loop * num_partials + (6 if partials_float else 8)) * per_worker
    return cycles * 6


Case = collections.namedtuple(
    "Case", "name klass source entry build estimate shapes multi", defaults=(False,)
)

# A multi-vertex runs on all six workers from this supervisor, which `runall`s the entry on
# the vertex and waits; its own cost is a few cycles beside the codelet's.
MULTI_HARNESS = """
    .section .text.calibration_harness
    .supervisor
    .align 8
calibration_harness:
    setzi $m0, {entry}
    setzi $m1, vertex
    runall $m0, $m1, 0
    sync TEXCH_SYNCZONE_LOCAL
    br $m10
"""


def case(entry, klass, source, build, estimate, shapes, multi=False):
    """A row of the table, named after its entry without the `__runCodelet_LIB__` prefix."""
    name = re.sub(r"^__runCodelet_[a-z]+__", "", entry)
    return Case(name, klass, source, entry, build, estimate, shapes, multi)


def cases():
    out = []
    scaled_shapes = [[37], [4, 64, 3], [256], [9, 1, 2, 130]]
    for kind, operation, fast in [
        ("half", "add", True),
        ("half", "add", False),
        ("float", "add", True),
        ("float", "add", False),
        ("half", "subtract", True),
        ("half", "axplusby", True),
    ]:
        out.append(
            case(
                scaled_2d_name(kind, operation, fast),
                "elementwise (scaled add)",
                f"lib/popops/codelets/asm/ScaledAdd2D_{kind}.S",
                scaled_2d_case(kind, operation, fast),
                lambda s, k=kind, o=operation, f=fast: scaled_2d_estimate(s, k, o, f),
                scaled_shapes,
            )
        )
    for kind in ("half", "float"):
        for two_d in (False, True):
            out.append(
                case(
                    f"__runCodelet_popops__Fill{'2d' if two_d else ''}___{kind}",
                    "fill",
                    "lib/popops/codelets/asm/Fill.S",
                    fill_case(kind, two_d),
                    lambda s, k=kind, t=two_d: fill_estimate(s, k, t),
                    [[3, 64], [1, 2, 5, 100]] if two_d else [[1], [2], [7], [64], [301]],
                )
            )
        out.append(
            case(
                f"__runCodelet_popops__Clamp___{kind}",
                "elementwise (clamp)",
                "lib/popops/codelets/asm/Clamp.S",
                clamp_case(kind),
                lambda s, k=kind: clamp_estimate(s, k),
                [[1], [8], [33], [2, 7, 64]],
            )
        )
    out.append(
        case(
            "__runCodelet_popops__Select___half",
            "select",
            "lib/popops/codelets/asm/select_half.S",
            select_case,
            select_estimate,
            [[1], [2], [9], [3, 40]],
        )
    )
    for op, kind in (("SIGNUM", "half"), ("BITWISE___NOT", "short")):
        out.append(
            case(
                f"__runCodelet_popops__UnaryOp2D___popops__expr__UnaryOpType__{op}_{kind}",
                "elementwise (unary)",
                "lib/popops/codelets/asm/unaryOps2D.S",
                unary_2d_case(op.replace("___", "_")),
                lambda s, o=op: unary_2d_estimate(s, "SIGNUM" if o == "SIGNUM" else "NOT"),
                [[1], [4], [7], [3, 64]],
            )
        )
    for op, kind in (("ADD", "half"), ("MULTIPLY", "half"), ("ADD", "float")):
        out.append(
            case(
                f"__runCodelet_popops__BinaryOp2D___popops__expr__BinaryOpType__{op}_{kind}",
                "elementwise (binary)",
                "lib/popops/codelets/asm/binaryOps2D.S",
                binary_2d_case(op, kind),
                lambda s, k=kind: binary_2d_estimate(s, k),
                [[1], [5], [64], [3, 33]],
            )
        )
    out.append(
        case(
            "__runCodelet_popops__NormaliseImage___unsigned_char_half",
            "cast (uint8 to half)",
            "lib/popops/codelets/asm/NormaliseImage.S",
            normalise_image_case,
            normalise_image_estimate,
            [[1], [6], [13], [200]],
            multi=True,
        )
    )
    for out_kind, partials_kind in (("float", "half"), ("half", "half"), ("float", "float")):
        out.append(
            case(
                f"__runCodelet_poplin__ReduceAdd___{out_kind}_{partials_kind}_false_false",
                "reduction",
                "lib/poplin/codelets/asm/ReduceAdd.S",
                reduce_add_case(out_kind, partials_kind),
                lambda s, o=out_kind, p=partials_kind: reduce_add_estimate(s, o, p),
                [[2, 8], [5, 48], [16, 100], [3, 7]],
                multi=True,
            )
        )
    return out


def read_npy(path):
    raw = open(path, "rb").read()
    header = struct.unpack("<H", raw[8:10])[0]
    return raw[10 + header :]


def run_case(case, shape, args, work, built):
    rng = random.Random(hash((case.name, tuple(shape))) & 0xFFFFFFFF)
    data, outputs = case.build(shape, rng)
    data_path = os.path.join(work, "data.S")
    with open(data_path, "w") as f:
        f.write(data.text())
        if case.multi:
            f.write(MULTI_HARNESS.format(entry=case.entry))
    if case.multi:
        cmd = [args.tessera, "asm", "run", *built, data_path, "--entry", "calibration_harness"]
    else:
        cmd = [args.tessera, "asm", "run", *built, data_path, "--worker", "--entry", case.entry, "--vertex", "vertex"]
    files = []
    for i, (sym, dtype, count, _) in enumerate(outputs):
        path = os.path.join(work, f"out{i}.npy")
        cmd += ["--output", f"{sym}={path}:{dtype}:{count}"]
        # The guard words after the output, which the codelet must leave alone.
        gpath = os.path.join(work, f"guard{i}.npy")
        cmd += ["--output", f"{sym}_guard={gpath}:uint32:2"]
        files.append((path, gpath))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[0]
    cycles = int(re.search(r"^cycles: (\d+)", r.stdout, re.M).group(1))
    bad = 0
    for (path, gpath), (_, dtype, count, want) in zip(files, outputs):
        raw = read_npy(path)
        width = {"float16": 2, "uint16": 2, "float32": 4, "uint32": 4}[dtype]
        got = [int.from_bytes(raw[width * i : width * i + width], "little") for i in range(count)]
        bad += sum(g != w for g, w in zip(got, want))
        guard = read_npy(gpath)
        if guard != b"\x5a" * 8:
            bad += 1
    return cycles, "exact" if bad == 0 else f"{bad} wrong"


def shape_text(shape):
    return "x".join(str(n) for n in shape)


def main():
    ap = corpus.arguments(__doc__)
    ap.add_argument("--hardware", help="measured cycles: kernel,shape,cycles")
    ap.add_argument("--only", help="comma-separated case names")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="poplibs-calibration-")
    sdk = os.path.join(work, "_sdk")
    corpus.write_stand_ins(sdk)
    includes = [sdk] + corpus.include_dirs(a.poplibs)
    measured = {}
    if a.hardware:
        with open(a.hardware) as f:
            for row in csv.DictReader(f):
                measured[(row["kernel"], row["shape"])] = float(row["cycles"])
    built_sources = {}
    per_class = collections.defaultdict(list)
    wanted = set(a.only.split(",")) if a.only else None
    print(f"{'class':26s} {'codelet':44s} {'shape':14s} {'simulated':>9s} {'estimate':>8s} {'ratio':>6s}  outputs")
    for case in cases():
        if wanted and case.name not in wanted:
            continue
        if case.source not in built_sources:
            out = os.path.join(work, os.path.basename(case.source) + ".s")
            ok, err = corpus.preprocess(a.cpp, os.path.join(a.poplibs, case.source), includes, out)
            built_sources[case.source] = [out] if ok else None
        built = built_sources[case.source]
        for shape in case.shapes:
            if built is None:
                print(f"{case.klass:26s} {case.name:44s} does not preprocess")
                break
            cycles, outcome = run_case(case, shape, a, work, built)
            if cycles is None:
                print(f"{case.klass:26s} {case.name:44s} {shape_text(shape):14s} failed: {outcome}")
                continue
            # Worker estimates count a worker's cycles (one in six tile cycles); a multi-vertex's
            # counts tile cycles.
            worker = cycles if case.multi else cycles / 6
            estimate = case.estimate(shape)
            ratio = worker / estimate
            hw = measured.get((case.name, shape_text(shape)))
            per_class[case.klass].append((ratio, worker / hw if hw else None))
            print(f"{case.klass:26s} {case.name:44s} {shape_text(shape):14s} {worker:9.1f} {estimate:8d} {ratio:6.3f}  {outcome}")
    print()
    for klass, rows in per_class.items():
        ratios = [r for r, _ in rows]
        line = f"{klass:26s} simulated / estimate {min(ratios):.3f} .. {max(ratios):.3f} over {len(rows)} cases"
        hw = [h for _, h in rows if h is not None]
        if hw:
            line += f"; simulated / measured {min(hw):.3f} .. {max(hw):.3f} over {len(hw)}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
