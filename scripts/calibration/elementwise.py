"""Element-wise codelets: scaled adds, fills, clamp, select, unary and binary ops, the
variance conversion and the vector-inner broadcast."""

import math

from calibration.common import Data, f16_bits, f16_value, f32, f32_bits, f32_value

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
