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
import math
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


# ---- DynamicSlice2D<half> (popops/codelets/asm/dynamicSlice.S + SliceCopyFunction.S) ---------

DELTAN_OFFSET_BITS_HALF = 20  # dynamicSlice.S, without the SDK's VECTORLIST_AVAIL_DELTAN


def dynamic_slice_case(shape, rng):
    """subT[r · sub + s] = baseT[r · base + (offset + s) mod base] for each region r (a slice of
    `sub` of the `base` vectors of each region, from `offset`, wrapping: numBaseElements' top
    bit set). shape = (regions, base, sub, region size, offset). Each of baseT and subT is a
    Poplar vector list laid out as the codelet unpacks it (the layout without the SDK's
    VECTORLIST_AVAIL_DELTAN): a base address and a table of one word per vector, its size in
    elements above bit 20 and its offset from the base in elements below. The vertex (the
    codelet's VOFF_* offsets): the offset's address, baseT's base, baseT's table, numSubElements
    (16 bits), subT's base, subT's table, numRegions (16 bits), numBaseElements."""
    regions, base, sub, size, offset = shape
    d = Data()
    vectors = [[f16_bits(rng.uniform(-8, 8)) for _ in range(size)] for _ in range(regions * base)]
    # baseT's vectors in a shuffled order inside one block, to check the table is followed.
    order = list(range(regions * base))
    rng.shuffle(order)
    flat, place = [], {}
    for v in order:
        place[v] = len(flat)
        flat += vectors[v]
        flat += [0x7E00] * (-len(flat) % 4)  # each vector 8-byte aligned
    d.halves("base_block", flat)
    d.words("base_table", [(size << DELTAN_OFFSET_BITS_HALF) | place[v] for v in range(regions * base)])
    outputs = []
    d.lines += ["    .section .data.interleaved_calibration"]
    stride = size + (-size % 4)
    d.halves("sub_block", [0x5A5A] * (regions * sub * stride))
    d.lines += ["    .section .data.calibration"]
    d.words("sub_table", [(size << DELTAN_OFFSET_BITS_HALF) | (i * stride) for i in range(regions * sub)])
    want = []
    for r in range(regions):
        for j in range(sub):
            src = vectors[r * base + (offset + j) % base]
            want += src + [0x5A5A] * (stride - size)
    outputs.append(("sub_block", "float16", len(want), want))
    d.words("offset_value", [offset])
    d.lines += [
        "    .align 8",
        "vertex:",
        "    .int offset_value, base_block, base_table",
        f"    .short {sub}, 0",
        "    .int sub_block, sub_table",
        f"    .short {regions}, 0",
        f"    .int {base | 0x80000000}",
    ]
    return d, outputs


def dynamic_slice_estimate(shape):
    """DynamicSlice2D<half>'s estimator (popopsCycleEstimators.cpp): 27 + per region
    (31 + 2 a vector of 4) · numSubElements + 13, in a worker's cycles. It charges 2 cycles per
    64 bits copied, but `Slice_copy_function_half` (SliceCopyFunction.S) copies 32 bits per
    2 bundles (`ld32step`, `st32step`) even when both sides are aligned: long regions simulate
    over it (100 halves: 166 against 121), the estimator is the one that is off."""
    regions, base, sub, size, offset = shape
    vectors = (size + 3) // 4
    return 27 + regions * ((31 + 2 * vectors) * sub + 13)


# ---- HasNaNOrInf2D<half,true> (popops/codelets/asm/HasNaN.S) --------------------------------


def has_nan_case(shape, rng):
    """out = 1.0f if any element of the vectors is a NaN or an infinity, else 0.0f. The codelet
    sums |x| in the accumulators (`f16v8absacc`, `f16v4absacc`), adds the sums with `f32v2gina`
    and `f32v2add`, and asks `f32class` of (s − s) for a NaN: so it checks the accumulators'
    model too. shape = (where, sizes...): where = −1 puts no special value, 0 an infinity in
    the first vector, 1 a NaN in the last element of the last vector, 2 a −infinity in the
    middle of the last vector. The vertex (the codelet's offsets): the list of (pointer, size)
    pairs, its length, out."""
    where, *sizes = shape
    d = Data()
    pairs = []
    vectors = []
    for i, n in enumerate(sizes):
        vectors.append([f16_bits(rng.uniform(-60000, 60000)) for _ in range(n)])
    if where == 0:
        vectors[0][len(vectors[0]) // 3] = 0x7C00
    elif where == 1:
        vectors[-1][-1] = 0x7E01
    elif where == 2:
        vectors[-1][len(vectors[-1]) // 2] = 0xFC00
    for i, v in enumerate(vectors):
        d.halves(f"v{i}", v)
        pairs += [f"v{i}", len(v)]
    d.words("pairs", pairs)
    d.words("out", [0x5A5A5A5A], guard=True)
    d.words("vertex", ["pairs", len(sizes), "out"])
    want = f32_bits(1.0) if where >= 0 else f32_bits(0.0)
    return d, [("out", "uint32", 1, [want])]


def has_nan_estimate(shape):
    """hasNan2DCycles for half, NaN or infinity (popopsCycleEstimators.cpp), in a worker's
    cycles: 6 + 1 + per vector 12 + 2 a group of 8 + 2 for each of the 4, 2 and 1 remainders,
    then 12 of the NaN check and 2 to store."""
    _, *sizes = shape
    cycles = 6 + 1
    for n in sizes:
        cycles += 12 + 2 * (n // 8) + sum(2 for bit in (4, 2, 1) if n & bit)
    return cycles + 1 + 11 + 2


# ---- EncodeOneHot<unsigned,half> (popops/codelets/asm/EncodeOneHot.S): a supervisor ----------

MASKED_LABEL_CODE = 0xFFFFFFFF  # PopLibs' include/popops/EncodingConstants.hpp


def one_hot_case(shape, rng):
    """Row i of out (slice halves wide) gets 1.0 at indices[i] − offset when that is in
    [0, slice) and indices[i] is not MASKED_LABEL_CODE; every other half keeps its value (the
    codelet writes whole words with `stm32`, merging the neighbouring half). shape = (indices,
    slice, offset). The vertex (from the codelet's offsets): indices, their count, out, slice,
    offset."""
    count, width, offset = shape
    d = Data()
    indices = []
    for i in range(count):
        kind = i % 5
        if kind == 3:
            indices.append(MASKED_LABEL_CODE)
        elif kind == 4:
            indices.append(rng.choice([max(offset - 1, 0) if offset else width + offset, width + offset + 3]))
        else:
            indices.append(offset + rng.randrange(width))
    before = [rng.randrange(0, 0x3C00) for _ in range(count * width)]
    want = list(before)
    for i, index in enumerate(indices):
        if index != MASKED_LABEL_CODE and 0 <= index - offset < width:
            want[i * width + index - offset] = 0x3C00
    d.words("indices", indices)
    d.halves("out", before)
    d.words("vertex", ["indices", count, "out", width, offset])
    return d, [("out", "float16", count * width, want)]


def one_hot_estimate(shape):
    """EncodeOneHot<unsigned, half>'s estimator (popopsCycleEstimators.cpp): the supervisor
    overhead (11) and the worst case of its loop, 62 + 12 an index, for every index (it cannot
    tell which branch an index takes), in tile cycles. The table's indices take every path
    (in range, masked, out of range), so the simulation reads under it; an index in range
    simulates at 67–68 cycles against the codelet's own count of 64 or 58 + 12. This codelet is
    the evidence for the supervisor's result-use rule (sim/src/tile/mod.rs): its comments count
    6 cycles for the reader of an `and` result and of a post-incremented pointer, and before
    the rule covered ALU results the whole class simulated at 0.49–0.53 of the estimate."""
    return 11 + (62 + 12) * shape[0]


# ---- BroadcastScalar2Types2DData<VARIANCE_TO_INV_STD_DEV,float,half> (VarianceConversion2D.S) -


def variance_case(sizes, rng):
    """out[i] = 1 / √(in[i] + ε), floats in and halves out: LayerNorm's statistics step. The
    vertex (from the codelet's offsets): the in list of (pointer, count) pairs, its length, the
    out list of pointers, a pointer to ε. Each element: `f32v2add` (one f32 rounding), `f32oorx`
    (the model: 1/√x in f64, rounded once to f32: isa/src/numerics/float.rs), `f32v2tof16`
    (RNE); an odd last element is merged into its word with `roll16`, so the half after it must
    keep its value."""
    d = Data()
    eps = f32(rng.choice([1e-6, 1e-5, 0.01]))
    ins, outs, outputs = [], [], []
    for i, n in enumerate(sizes):
        x = [f32(rng.uniform(0.0, 4.0)) for _ in range(n)]
        d.words(f"in{i}", [f32_bits(v) for v in x])
        d.lines += ["    .section .data.interleaved_calibration"]
        d.halves(f"out{i}", [0x7E00] * n + ([0x1234] if n % 2 else []))
        d.lines += ["    .section .data.calibration"]
        want = [f16_bits(f32(1.0 / math.sqrt(f32(v + eps)))) for v in x]
        if n % 2:
            want.append(0x1234)
        ins += [f"in{i}", n]
        outs.append(f"out{i}")
        outputs.append((f"out{i}", "float16", len(want), want))
    d.words("in_list", ins)
    d.words("out_list", outs)
    d.words("epsilon", [f32_bits(eps)])
    d.words("vertex", ["in_list", len(sizes), "out_list", "epsilon"])
    return d, outputs


def variance_estimate(sizes):
    """broadcastArithmeticCycleEstimate for VARIANCE_TO_INV_STD_DEV, float in and half out
    (popopsCycleEstimators.cpp; its perf table: 12 cycles a loop of 2 floats, no per-loop
    overhead): 20 + per vector 28 + 12 · ⌈n / 2⌉. The table is the binary ops' generic one;
    this codelet's loop issues 4 bundles a pair (`{ld64step; f32v2tof16}`, `{st32step;
    f32v2add}`, `f32oorx`, `f32oorx`), and a lone worker issues one bundle every six tile
    cycles, which hides any latency of `f32oorx` shorter than that: the simulator counts the
    4 (0.34 .. 0.37 of the estimate), the estimator is the one that is off."""
    return 20 + sum(28 + 12 * ((n + 1) // 2) for n in sizes)


# ---- BroadcastVectorInner2D<ADD,half> (popops/codelets/asm/vectorInnerAdd_half.S) ----------


def broadcast_inner_case(shape, rng):
    """out[i][b·len + a] = data[i][b·len + a] + B[i][a]: a vector B repeated over the blocks of
    data. shape: (len, blockCount) per vector. The vertex (BroadcastVectorInner2D.cpp): the B
    list, the workList (n − 1, then len and blockCount per vector, 16 bits each), the data
    list, the out list (another memory element: `elem(**data) != elem(**out)`). Values are
    multiples of 2^−8 in (−4, 4), so x + y is exact in f32 and the fast paths' f16v4mix (sum
    rounded to f32, then to f16) and the slow path's f16v2add agree: one RNE rounding to f16."""
    pairs = [tuple(shape[k : k + 2]) for k in range(0, len(shape), 2)]
    d = Data()
    outs = []

    def value():
        return f16_bits(rng.randrange(-1023, 1024) / 256)

    for i, (length, blocks) in enumerate(pairs):
        b = [value() for _ in range(length)]
        x = [value() for _ in range(length * blocks)]
        d.halves(f"B{i}", b)
        d.halves(f"data{i}", x)
        want = [f16_bits(f16_value(x[k]) + f16_value(b[k % length])) for k in range(length * blocks)]
        outs.append((f"out{i}", "float16", length * blocks, want))
    d.lines += ["    .section .data.interleaved_calibration"]
    for label, _, count, _ in outs:
        d.halves(label, [0x7E00] * count)
    d.lines += ["    .section .data.calibration"]
    d.words("B_list", [f"B{i}" for i in range(len(pairs))])
    d.words("data_list", [f"data{i}" for i in range(len(pairs))])
    d.words("out_list", [f"out{i}" for i in range(len(pairs))])
    work = [len(pairs) - 1] + [v for pair in pairs for v in pair]
    d.lines += ["    .align 8", "work_list:"] + [f"    .short {v}" for v in work]
    d.words("vertex", ["B_list", "work_list", "data_list", "out_list"])
    return d, outs


def broadcast_inner_estimate(shape):
    """BroadcastVectorInner2D<ADD, half>'s estimator (popopsCycleEstimators.cpp):
    vectorInner2DAddCycles + 3, the core's paths transcribed (vector width 4). It does not know
    the codelet's own path for a B of exactly 4 halves (`.Lfour_addends_pipeline`, "an
    optimisation for a length of exactly 4"), which it charges as the multiple-of-4 pipeline:
    such vectors simulate ~13 cycles under it (4×2: 37 against 50), the estimator's error."""
    pairs = [tuple(shape[k : k + 2]) for k in range(0, len(shape), 2)]

    def scalar(length, blocks):
        return 5 + length * (2 + blocks * 9 + 3) + 1

    def multiple_of_8(length, blocks):
        cycles = 2
        loops = length // 8
        if blocks == 1:
            return cycles + 3 + 7 * loops + 1
        return cycles + 4 + loops * (8 + 2 * (blocks - 1) + 7) + 1

    def multiple_of_4(length, blocks):
        loops = length // 4
        return 5 + loops * (7 + 2 * (blocks // 2 - 1) + 1 + blocks % 2 + 5) + 1

    def core(length, blocks):
        cycles = 1
        if blocks == 0:
            return cycles
        cycles += 2
        if length > 2048:
            return cycles + scalar(length, blocks)
        cycles += 2
        if length % 8 == 0:
            return cycles + multiple_of_8(length, blocks)
        cycles += 2
        if blocks < 2:
            return cycles + scalar(length, blocks)
        cycles += 2
        if length % 4 == 0:
            return cycles + multiple_of_4(length, blocks)
        return cycles + scalar(length, blocks)

    return 3 + sum(15 + core(length, blocks) for length, blocks in pairs) + 1 + 3


# ---- ConvPartial1x1Out<half,*> (poplin/codelets/asm/conv_partial_1x1_*.S): supervisor codelets ---

# The order `ld64putcs` fills `$CWEI` from 8-byte weight chunks (LOAD_WEIGHTS_1X1 in
# conv_partial_1x1_supervisor.S, 64-bit loads): 8 units take slots 0..31 in turn, 16 units
# 0–7, 32–39, 8–15, 40–47, ...
CWEI_LOAD_ORDER = {
    8: list(range(32)),
    16: [b + k for q in range(4) for b in (8 * q, 32 + 8 * q) for k in range(8)],
}


def conv_partitions(field):
    """The field split over the six workers as PopLibs' planner does: contiguous runs of
    ⌈field / 6⌉ positions, the last ones short or empty."""
    per_worker = -(-field // 6)
    out, start = [], 0
    for _ in range(6):
        n = max(0, min(per_worker, field - start))
        out.append((start, n))
        start += n
    return out


def conv_1x1_case(partials, units):
    """A multi-group 1×1 convolution on the AMP, PopLibs' supervisor codelet and its workers as
    written. shape = (conv groups, in-channel groups, out-channel groups, AMP passes, field
    positions): 16 input channels a group, `units` · passes output channels a group.

    The vertex (ConvPartial1x1Out.cpp, the SUP_* offsets of conv_partial_1x1_supervisor.S):
    in (cg·ig pointers, row cg·ig + i), weights (cg·ig·og pointers, row cg·og·ig + i·og +
    (og − 1 − o), and one more the supervisor prefetches), out (cg·og pointers), the worklist
    (per worker: out offset and in offset in 8-byte units, field positions − 3), then
    numConvGroupsM1, numOutGroupsM1, numInGroups, transformedInStride (1: contiguous),
    outChansPerGroup, transformedOutStride (getTransformedOutStride, not flipped),
    inChansPerGroup. The weights of an out group are laid out as PopLibs' C++ codelet reads them
    (channel-major, wCol = outChan · 16 + inChan), and its outputs must come out in the same
    natural order: with 16 units that checks the `$CWEI` slot and output-lane order the AMP model
    takes from hardware (isa/src/semantics/amp/mod.rs).

    The reference follows the AMP's rules: per output channel and field position, the partial
    (0 in the first in-channel group: the codelet zeroes its outputs first) enters as f32, the
    16 products (exact in f32) are added in input-channel order with one f32 rounding each, and
    the result leaves as the partials' type (f16 RNE, or the f32 itself)."""
    half_out = partials == "half"

    def build(shape, rng):
        groups, in_groups, out_groups, passes, field = shape
        out_chans = units * passes
        d = Data()
        inputs = {}
        for c in range(groups):
            for i in range(in_groups):
                inputs[c, i] = [f16_bits(rng.uniform(-2, 2)) for _ in range(16 * field)]
                d.halves(f"in_{c}_{i}", inputs[c, i])
        weights = {}
        order = []
        for c in range(groups):
            for i in range(in_groups):
                for o in reversed(range(out_groups)):
                    weights[c, i, o] = [f16_bits(rng.uniform(-1, 1)) for _ in range(16 * out_chans)]
                    order.append((c, i, o))
        # The outputs in interleaved memory, as the vertex declares them (`Output<Vector<…,
        # ONE_PTR, outAlign, true>>`: the h16 worker reads partials with `ld128step`), and so
        # in another memory element than the inputs (`elem(**in) != elem(**out)`: a pace
        # instruction reads an input and a partial in one cycle).
        d.lines += ["    .section .data.interleaved_calibration", "    .align 16"]
        outputs, out_labels = [], []
        for c in range(groups):
            for o in range(out_groups):
                label = f"out_{c}_{o}"
                d.lines += ["    .align 16"]
                garbage = [rng.randrange(0x3C00, 0x4000) for _ in range(out_chans * field)]
                if half_out:
                    d.halves(label, garbage)
                else:
                    d.words(label, [g << 16 for g in garbage], guard=True)
                out_labels.append(label)
                want = []
                for pos in range(field):
                    for m in range(out_chans):
                        acc = 0.0
                        for i in range(in_groups):
                            x = inputs[c, i][16 * pos : 16 * pos + 16]
                            w = weights[c, i, o][16 * m : 16 * m + 16]
                            for xb, wb in zip(x, w):
                                acc = f32(acc + f16_value(xb) * f16_value(wb))
                            if half_out:
                                acc = f16_value(f16_bits(acc))
                        want.append(f16_bits(acc) if half_out else f32_bits(acc))
                outputs.append((label, "float16" if half_out else "float32", out_chans * field, want))
        d.lines += ["    .section .data.calibration"]
        for c, i, o in order:
            d.halves(f"w_{c}_{i}_{o}", weights[c, i, o])
        d.words("in_list", [f"in_{c}_{i}" for c in range(groups) for i in range(in_groups)])
        labels = [f"w_{c}_{i}_{o}" for c, i, o in order]
        d.words("weights_list", labels + [labels[0]])
        d.words("out_list", out_labels)
        out_bytes = 2 if half_out else 4
        worklist = []
        for start, n in conv_partitions(field):
            worklist += [start * out_chans * out_bytes // 8, (n - 3) & 0xFFFF, start * 16 * 2 // 8]
        d.lines += ["    .align 8", "worklist:"] + [f"    .short {v}" for v in worklist]
        threshold = (-4 if half_out else -6) - (8 if units > 8 else 0)
        out_stride = (threshold + out_chans) & 0xFFFF
        d.lines += [
            "    .align 8",
            "vertex:",
            "    .int in_list, weights_list, out_list, worklist",
            f"    .short {groups - 1}, {out_groups - 1}, {in_groups}, 1, {out_chans}, {out_stride}, 16, 0",
        ]
        return d, outputs

    return build


def conv_1x1_estimate(shape, partials, units, retention=False):
    """getConvPartial1x1SupervisorCycleEstimate (poplin/PerformanceEstimation.hpp) for half
    activations, 64-bit weight loads: tile cycles. With `retention`, less the worker-state
    savings the code has and the estimator leaves out."""
    groups, in_groups, out_groups, passes, field = shape
    float_partials = partials == "float"
    # Half activations with float partials, or on 16 units, share one worker (the h16 file).
    common = units == 16 or float_partials
    keep_first, keep_rest = (7, 3) if common else (0, 0)

    def inner(zeroing):
        most, least = 0, None
        for _, n in conv_partitions(field):
            if common:
                tail = 1 if zeroing else 2
                cycles = {0: 20 + tail, 1: 31 + tail, 2: 40 + tail}.get(n)
                if cycles is None:
                    cycles = (37 if zeroing else 38) + (n - 3) * 4
            elif n == 0:
                cycles = 24
            elif n == 1:
                cycles = 39 + (2 + 2) * zeroing
            elif n == 2:
                cycles = 40 + (2 + 2 * 2) * zeroing
            else:
                cycles = 41 + (2 + 2 * n) * zeroing + (n - 3) * 4
            cycles -= keep_first
            most = max(most, 6 * cycles)
            least = 6 * cycles if least is None else min(least, 6 * cycles)
        return max(most, least + 14)

    loads = units * (4 * 4 * 2) // 8  # units × 32 weight bytes at 8 bytes a cycle
    with_zero, without = inner(True), inner(False)
    saved = 0
    if retention:
        # The worker keeps its partition (and within an input channel group its input pointer)
        # between calls: a call after the first enters at convPartialFlattenedFieldStateRetained
        # (skipping the partition's 8 bundles on 8 units with half partials, 12 in the h16
        # file) or at ...StateRetainedInChanPtr (2 bundles more). PopLibs' estimator credits
        # none of it for half partials on 8 units (conv1x1WorkerRetentionSavings: (0, 0)) and
        # 7 (4 when the input channel group changes) in the h16 file; the rest is taken off
        # here, one worker bundle = 6 tile cycles.
        calls = groups * in_groups * out_groups * passes
        changes = groups * in_groups - 1
        same_group, new_group = (14 - 7, 12 - 4) if common else (10, 8)
        saved = 6 * (same_group * (calls - 1 - changes) + new_group * changes)
    return (
        -saved
        + 50
        + 6 * (keep_first + keep_rest * (in_groups * groups - 1))
        + groups
        * (
            12
            + common
            + (in_groups - 1) * (15 - common + 1 + out_groups * (19 + passes * (6 + loads + without)))
            + (10 + 1 + out_groups * (19 - common + passes * (7 + loads + with_zero)))
        )
    )


# ---- Cast1DSingleWorker<half,quarter>: written here (kernels/asm/poplibs_style/) ------------

REPO = os.path.dirname(HERE)
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

# A supervisor codelet is called as Poplar calls it: the vertex in $m0, a stack in $sp, the
# return address in $lr. The host's return address is kept in memory across the call.
SUPERVISOR_HARNESS = """
    .section .data.calibration_stack
    .align 8
calibration_return:
    .int 0, 0
calibration_stack:
    .space 512
calibration_stack_top:
    .section .text.calibration_harness
    .supervisor
    .align 8
calibration_harness:
    setzi $m1, calibration_return
    st32 $m10, $m1, 0
    setzi $m0, vertex
    setzi $sp, calibration_stack_top
    call $lr, {entry}
    setzi $m1, calibration_return
    ld32 $m10, $m1, 0
    br $m10
    .align 8
calibration_empty:
    br $lr
"""

# How a codelet is started: as worker 0 alone (its estimate counts that worker's cycles, one
# in six of the tile's), as a multi-vertex on all six workers, or as a supervisor codelet
# (both estimates count tile cycles).
WORKER, MULTI, SUPERVISOR = "worker", "multi", "supervisor"
HARNESS = {MULTI: MULTI_HARNESS, SUPERVISOR: SUPERVISOR_HARNESS}

# `adjusted`: where PopLibs' estimator is the one that is off, the estimate corrected as its
# docstring says; the summary gives the ratio to both.
# `local`: the source is in this repository (kernels/asm/poplibs_style/), not in PopLibs;
# `tolerance`: with --check, the largest |simulated / estimate − 1| the case may show.
Case = collections.namedtuple(
    "Case",
    "name klass source entry build estimate shapes mode adjusted local tolerance extra_sources own",
    defaults=(WORKER, None, False, None, (), None),
)


def case(entry, klass, source, build, estimate, shapes, mode=WORKER, adjusted=None, local=False,
         tolerance=None, extra_sources=(), own=None):
    """A row of the table, named after its entry without the `__runCodelet_LIB__` prefix;
    `extra_sources` are the files it links with (PopLibs' shared functions); `own`, for a
    codelet written here, its exact cost model, which `--check` holds the simulation to."""
    name = re.sub(r"^__runCodelet_[a-z]+__", "", entry)
    return Case(name, klass, source, entry, build, estimate, shapes, mode, adjusted, local,
                tolerance, tuple(extra_sources), own)


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
            mode=MULTI,
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
                mode=MULTI,
            )
        )
    out.append(
        case(
            "__runCodelet_popops__DynamicSlice2D___half",
            "movement (dynamic slice)",
            "lib/popops/codelets/asm/dynamicSlice.S",
            dynamic_slice_case,
            dynamic_slice_estimate,
            [[1, 4, 2, 8, 1], [2, 5, 3, 6, 3], [3, 4, 4, 13, 2], [1, 8, 1, 100, 7]],
            extra_sources=["lib/popops/codelets/asm/SliceCopyFunction.S"],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__HasNaNOrInf2D___half_true",
            "check (NaN or infinity)",
            "lib/popops/codelets/asm/HasNaN.S",
            has_nan_case,
            has_nan_estimate,
            [[-1, 8], [-1, 13, 1, 7], [0, 64, 3], [1, 5, 40], [2, 2, 100], [-1, 300]],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__EncodeOneHot___unsigned_int_half",
            "encode (one-hot)",
            "lib/popops/codelets/asm/EncodeOneHot.S",
            one_hot_case,
            one_hot_estimate,
            [[1, 8, 0], [5, 10, 3], [12, 7, 0], [40, 64, 100]],
            mode=SUPERVISOR,
        )
    )
    out.append(
        case(
            "__runCodelet_popops__BroadcastScalar2Types2DData___popops__expr__BinaryOpType__"
            "VARIANCE___TO___INV___STD___DEV_float_half",
            "normalisation (variance to 1/std)",
            "lib/popops/codelets/asm/VarianceConversion2D.S",
            variance_case,
            variance_estimate,
            [[1], [2], [7], [64], [3, 10, 33]],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__BroadcastVectorInner2D___popops__expr__BinaryOpType__ADD_half",
            "broadcast (vector inner)",
            "lib/popops/codelets/asm/vectorInnerAdd_half.S",
            broadcast_inner_case,
            broadcast_inner_estimate,
            [[8, 4], [16, 3, 4, 5], [3, 4, 12, 2], [24, 1], [5, 2, 8, 1, 4, 6], [64, 16]],
        )
    )
    for partials, units in (("half", 8), ("float", 8), ("half", 16)):
        out.append(
            case(
                f"__runCodelet_poplin__ConvPartial1x1Out___half_{partials}_true_false_{units}_4_false",
                "AMP convolution (1x1)",
                "lib/poplin/codelets/asm/"
                + ("conv_partial_1x1_half_half.S" if (partials, units) == ("half", 8)
                   else "conv_partial_1x1_half_float_8_and_half_half_h16.S"),
                conv_1x1_case(partials, units),
                lambda s, p=partials, u=units: conv_1x1_estimate(s, p, u),
                [[1, 1, 1, 1, 6], [1, 1, 1, 1, 30], [2, 2, 1, 1, 20], [1, 2, 2, 2, 48], [3, 1, 2, 1, 13]],
                mode=SUPERVISOR,
                adjusted=lambda s, p=partials, u=units: conv_1x1_estimate(s, p, u, retention=True),
            )
        )
    out.append(
        case(
            "__runCodelet_popops__Cast1DSingleWorker___half_quarter",
            "cast (half to FP8)",
            "kernels/asm/poplibs_style/Cast1DSingleWorker_half_quarter.S",
            cast_half_quarter_case,
            cast_half_quarter_estimate,
            [[n, fmt, scale] for n, fmt, scale in
             [(0, 1, 0), (1, 1, 0), (4, 0, 0), (5, 1, 4), (7, 0, 4), (8, 1, -4), (13, 1, 4),
              (64, 0, 0), (203, 1, 0), (1000, 0, -4)]],
            local=True,
            # `--check` holds the simulation to the kernel's own bundle count, cycle for cycle.
            # Against PopLibs' estimator, whose constants are its C++ codelet's (19 cycles of
            # prologue), small sizes read 0.44 .. 1.12 (an empty vertex 12 against 27).
            own=cast_half_quarter_bundles,
        )
    )
    out.append(
        case(
            "__runCodelet_popops__Cast1DSingleWorker___quarter_half",
            "cast (FP8 to half)",
            "kernels/asm/poplibs_style/Cast1DSingleWorker_quarter_half.S",
            cast_quarter_half_case,
            cast_quarter_half_estimate,
            [[n, fmt, scale] for n, fmt, scale in
             [(0, 0, 0), (1, 1, 0), (3, 0, 4), (4, 1, -4), (5, 0, 0), (7, 1, 4), (8, 0, 0),
              (12, 1, 0), (13, 0, -4), (64, 1, 0), (1003, 0, 4)]],
            local=True,
            # As its pair: exact against its own bundle count; against PopLibs' C++ constants
            # (19 of prologue, 1 + 2 a remainder bit) this kernel's shorter prologue and longer
            # tail (masks and merges) read 0.39 .. 1.29 at small sizes, 1.01 at 1003.
            own=cast_quarter_half_bundles,
        )
    )
    return out


def harness_cycles(mode, args, work):
    """The cycles of a harness around a codelet that returns at once (`calibration_empty`):
    what the caller adds to a supervisor codelet's run, taken off before the comparison
    (PopLibs' estimators count the codelet from its first instruction to its return)."""
    path = os.path.join(work, "empty.S")
    with open(path, "w") as f:
        f.write("    .section .data.calibration\n    .align 8\nvertex:\n    .int 0\n")
        f.write(HARNESS[mode].format(entry="calibration_empty"))
    cmd = [args.tessera, "asm", "run", path, "--entry", "calibration_harness"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return int(re.search(r"^cycles: (\d+)", r.stdout, re.M).group(1))


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
        if case.mode != WORKER:
            f.write(HARNESS[case.mode].format(entry=case.entry))
    if case.mode != WORKER:
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
        width = {"uint8": 1, "float16": 2, "uint16": 2, "float32": 4, "uint32": 4}[dtype]
        got = [int.from_bytes(raw[width * i : width * i + width], "little") for i in range(count)]
        bad += sum(g != w for g, w in zip(got, want))
        guard = read_npy(gpath)
        if guard != b"\x5a" * 8:
            bad += 1
    return cycles, "exact" if bad == 0 else f"{bad} wrong"


def shape_text(shape):
    return "x".join(str(n) for n in shape)


def main():
    ap = corpus.arguments(__doc__, poplibs_optional=True)
    ap.add_argument("--hardware", help="measured cycles: kernel,shape,cycles")
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--local", action="store_true",
                    help="run the codelets written here in PopLibs' style (no POPLIBS_DIR needed)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if an output is wrong, a case fails, or a case with a tolerance is off by more")
    ap.add_argument("--tolerance", type=float,
                    help="with --check, the tolerance of every case (instead of the table's)")
    a = ap.parse_args()
    if not a.local and not a.poplibs:
        ap.error("give POPLIBS_DIR (a checkout of graphcore/poplibs) or --local")
    work = tempfile.mkdtemp(prefix="poplibs-calibration-")
    includes = []
    if a.poplibs:
        sdk = os.path.join(work, "_sdk")
        corpus.write_stand_ins(sdk)
        includes = [sdk] + corpus.include_dirs(a.poplibs)
    measured = {}
    if a.hardware:
        with open(a.hardware) as f:
            for row in csv.DictReader(f):
                measured[(row["kernel"], row["shape"])] = float(row["cycles"])
    built_sources = {}
    baseline = {}
    per_class = collections.defaultdict(list)
    own_exact = collections.defaultdict(list)
    failures = []
    wanted = set(a.only.split(",")) if a.only else None
    print(f"{'class':26s} {'codelet':44s} {'shape':14s} {'simulated':>9s} {'estimate':>8s} {'ratio':>6s}  outputs")
    for case in cases():
        if wanted and case.name not in wanted:
            continue
        if case.local != a.local:
            continue
        if case.source not in built_sources:
            if case.local:
                # Written here: the assembler's own `#define`s suffice.
                built_sources[case.source] = [os.path.join(REPO, case.source)]
            else:
                built = []
                for source in (case.source,) + case.extra_sources:
                    out = os.path.join(work, os.path.basename(source) + ".s")
                    ok, err = corpus.preprocess(a.cpp, os.path.join(a.poplibs, source), includes, out)
                    built = built + [out] if ok and built is not None else None
                built_sources[case.source] = built
        built = built_sources[case.source]
        for shape in case.shapes:
            if built is None:
                print(f"{case.klass:26s} {case.name:44s} does not preprocess")
                break
            cycles, outcome = run_case(case, shape, a, work, built)
            if cycles is None:
                print(f"{case.klass:26s} {case.name:44s} {shape_text(shape):14s} failed: {outcome}")
                failures.append(f"{case.name} {shape_text(shape)}: {outcome}")
                continue
            # Worker estimates count a worker's cycles (one in six tile cycles); a multi-vertex's
            # counts tile cycles.
            worker = cycles / 6 if case.mode == WORKER else cycles
            if case.mode == SUPERVISOR:
                if SUPERVISOR not in baseline:
                    baseline[SUPERVISOR] = harness_cycles(SUPERVISOR, a, work)
                worker -= baseline[SUPERVISOR]
            estimate = case.estimate(shape)
            ratio = worker / estimate
            hw = measured.get((case.name, shape_text(shape)))
            adjusted = worker / case.adjusted(shape) if case.adjusted else None
            per_class[case.klass].append((ratio, worker / hw if hw else None, adjusted))
            if case.own is not None:
                own_exact[case.klass].append(worker == case.own(shape))
            print(f"{case.klass:26s} {case.name:44s} {shape_text(shape):14s} {worker:9.1f} {estimate:8d} {ratio:6.3f}  {outcome}")
            if outcome != "exact":
                failures.append(f"{case.name} {shape_text(shape)}: outputs {outcome}")
            if case.own is not None and worker != case.own(shape):
                failures.append(
                    f"{case.name} {shape_text(shape)}: simulated {worker:.0f}, its own cost model "
                    f"{case.own(shape)}"
                )
            tolerance = a.tolerance if a.tolerance is not None else case.tolerance
            if tolerance is not None and abs(ratio - 1) > tolerance:
                failures.append(
                    f"{case.name} {shape_text(shape)}: simulated / estimate {ratio:.3f}, "
                    f"outside 1 ± {tolerance}"
                )
    print()
    for klass, rows in per_class.items():
        ratios = [r for r, _, _ in rows]
        line = f"{klass:26s} simulated / estimate {min(ratios):.3f} .. {max(ratios):.3f} over {len(rows)} cases"
        adjusted = [j for _, _, j in rows if j is not None]
        if adjusted:
            line += f" (corrected estimate: {min(adjusted):.3f} .. {max(adjusted):.3f})"
        if own_exact[klass]:
            hits = sum(own_exact[klass])
            line += f"; its own cost model exact in {hits} of {len(own_exact[klass])}"
        hw = [h for _, h, _ in rows if h is not None]
        if hw:
            line += f"; simulated / measured {min(hw):.3f} .. {max(hw):.3f} over {len(hw)}"
        print(line)
    if a.check and failures:
        print(f"\n{len(failures)} check(s) failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
