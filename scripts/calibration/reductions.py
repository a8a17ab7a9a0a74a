"""Reductions and checks: ReduceAdd, HasNaNOrInf2D and EncodeOneHot."""

from calibration.common import Data, f16_bits, f16_value, f32, f32_bits, f32_value

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
