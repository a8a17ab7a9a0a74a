"""AMP convolution: ConvPartial1x1Out, PopLibs' supervisor codelet and its workers."""

from calibration.common import Data, f16_bits, f16_value, f32, f32_bits

# ---- ConvPartial1x1Out<half,*> (poplin/codelets/asm/conv_partial_1x1_*.S): supervisor codelets ---

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


def conv_1x1_case(partials, units, ld128=False):
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
        # 128-bit weight loads (`ld128putcs`) need the weights in interleaved memory, 16-byte
        # aligned (the vertex's `Vector<…, weightsAlign, use128BitLoad>`).
        if not ld128:
            d.lines += ["    .section .data.calibration"]
        for c, i, o in order:
            d.lines += ["    .align 16"]
            d.halves(f"w_{c}_{i}_{o}", weights[c, i, o])
        d.lines += ["    .section .data.calibration"]
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


def conv_1x1_estimate(shape, partials, units, retention=False, ld128=False):
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

    # units × 32 weight bytes at 8 bytes a cycle (16 with `ld128putcs`)
    loads = units * (4 * 4 * 2) // (16 if ld128 else 8)
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
