"""Data movement: DynamicSlice2D with PopLibs' shared copy function."""

from calibration.common import Data, f16_bits

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
