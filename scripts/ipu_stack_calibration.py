#!/usr/bin/env python3
"""Runs osmarks/ipu-stack's assembly kernels on Tessera as written and compares their cycles
with ipu-stack's hardware-fitted constants (issue 30; docs/reference/hardware-ipu-stack.md §3.1).

ipu-stack (Apache-2.0) is not part of this repository: point --ipu-stack at a local checkout
(`git clone https://github.com/osmarks/ipu-stack`, commit ce7c7e9 or later). Each kernel's
`device/*.S` is preprocessed with GNU cpp (`-D__IPU__`, an empty `arch/gc_tile_defines.h`:
Tessera's assembler predefines the SDK names the kernels use), assembled with
`tessera asm build`'s assembler and run with `tessera asm run` on one ipu21 tile from a small
supervisor harness that sets the kernel's ABI registers and calls it. Every output is checked
bit for bit against numpy, and the harness alone (the call replaced by a `br $m10`) is run to
take its cycles off.

Kernels and what ipu-stack says of them (crates/ipu-codegen/src/cost.rs@ce7c7e9):
  gemm        device/gemm_f16_amp.S, R rows x K 64 x N 64, `ld128putcs` or `ld64putcs` entry:
              294 per call + 940 (1,063 with ld64putcs) per 16-column x 64-K group + 16 a row
              a group ("block fixed cost 160 + 4/row" in mid.rs)
  amp_left    device/rearrange_amp_left_f16.S, rows x columns: "about 2,364 cycles for the
              640-element attention shards, including launch", 4 a element + 11
  transposed  device/rearrange_transposed_right_f16.S, 64 x 16: 3 a element + 11
  block_major device/rearrange_block_major_f16.S, 64 x N: 4,096 + 4 a element, "for both
              64x16 and 64x80 destinations"
  reduce      device/reduce_add_f16.S, halves x remote partials: "roughly one output byte per
              cycle"

Usage:
  scripts/ipu_stack_calibration.py --ipu-stack DIR [--tessera target/release/tessera]
                                   [--kernels gemm,amp_left,transposed,block_major,reduce]
Needs GNU cpp and numpy. Prints one line per case: Tessera's cycles, ipu-stack's figure, the
ratio and whether the output is exact.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HARNESS = """    .section .text.main, "ax"
    .supervisor
    .align 8
    .globl main
main:
    setzi $m9, ret_save
    st32 $m10, $m9, $mzero, 0
{setup}
    setzi $m11, stack_top
    call $m10, {entry}
    setzi $m9, ret_save
    ld32 $m10, $m9, $mzero, 0
    br $m10
stub:
    br $m10
    .section .data.ret
    .align 8
ret_save:
    .space 8
    .section .data.stack
    .align 8
stack:
    .space 256
stack_top:
    .space 8
{data}
"""


def buffer(name, size, section=None, align=8):
    """A `.space` buffer in its own data section (`interleaved` in the name: that region, for
    the first such section of the program)."""
    return f"    .section .data.{section or name}\n    .align {align}\n{name}:\n    .space {size}\n"


class Runner:
    def __init__(self, tessera, ipu_stack, work):
        self.tessera, self.ipu_stack, self.work = tessera, ipu_stack, work
        os.makedirs(os.path.join(work, "arch"), exist_ok=True)
        open(os.path.join(work, "arch", "gc_tile_defines.h"), "w").close()

    def preprocess(self, kernel, defines):
        source = os.path.join(self.ipu_stack, "device", kernel)
        args = ["cpp", "-P", "-I", self.work, "-D__IPU__"]
        args += [f"-D{k}={v}" for k, v in defines.items()] + [source]
        text = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        with open(os.path.join(self.work, "kernel.S"), "w") as f:
            f.write(text)

    def run(self, setup, entry, data, inputs, outputs):
        """Cycles of the call alone and the outputs."""
        cycles, got = [], None
        for target in (entry, "stub"):
            with open(os.path.join(self.work, "harness.S"), "w") as f:
                f.write(HARNESS.format(setup=setup, entry=target, data=data))
            cmd = [self.tessera, "asm", "run", "--entry", "main", "harness.S", "kernel.S"]
            for name, array in inputs.items():
                np.save(os.path.join(self.work, f"{name}.npy"), array)
                cmd += ["--input", f"{name}={name}.npy"]
            for name, (dtype, count) in outputs.items():
                cmd += ["--output", f"{name}=out_{name}.npy:{dtype}:{count}"]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=self.work)
            if p.returncode != 0:
                raise RuntimeError(f"{entry}: {p.stdout}{p.stderr}")
            line = next(l for l in p.stdout.splitlines() if l.startswith("cycles:"))
            cycles.append(int(line.split()[1]))
            if got is None:
                got = {n: np.load(os.path.join(self.work, f"out_{n}.npy")) for n in outputs}
        return cycles[0] - cycles[1], got


def same_bits(a, b):
    return np.array_equal(np.asarray(a).view(np.uint16), np.asarray(b).view(np.uint16))


def gemm(r, rows, rng, load):
    """R x 64 x 64 through the F16 AMP GEMM; integer inputs so every sum is exact."""
    defines = {"GEMM_STOCHASTIC_ROUNDING": 0, "GEMM_SMALL_ROWS": rows}
    if load == "ld128putcs":
        defines["GEMM_INTERLEAVED_WEIGHTS"] = 1
    r.preprocess("gemm_f16_amp.S", defines)
    left = rng.integers(-2, 3, (rows, 64)).astype(np.float16)
    right = rng.integers(-2, 3, (64, 64)).astype(np.float16)
    panels = np.stack([left[:, g * 16:(g + 1) * 16] for g in range(4)]).reshape(-1)
    blocks = np.concatenate([right[k * 16:(k + 1) * 16, c * 16:(c + 1) * 16].T.reshape(-1)
                             for c in range(4) for k in range(4)])
    # One interleaved section holds both (only a program's first such section is placed there).
    data = (buffer("out", rows * 128, "interleaved.out", 16384)
            + f"    .align 16384\nright:\n    .space {64 * 128}\n"
            + buffer("left", rows * 128, "left", 16384))
    setup = "    setzi $m2, out\n    setzi $m3, left\n    setzi $m4, right"
    cycles, got = r.run(setup, "ipu_stack_gemm_f16_init_small_rows", data,
                        {"left": panels, "right": blocks}, {"out": ("float16", rows * 64)})
    out = got["out"].reshape(4, rows, 16)
    exact = np.array_equal(np.concatenate(list(out), axis=1).astype(np.float32),
                           left.astype(np.float32) @ right.astype(np.float32))
    # A call: 294, and per 16-column x 64-K group 940 (1,063 with ld64putcs) + 16 a row.
    group = 940 if load == "ld128putcs" else 1063
    return f"gemm {rows}x64x64 {load}", cycles, 294 + 4 * (group + 16 * rows), exact


def amp_left(r, rows, columns, rng):
    physical = (columns + 15) // 16 * 16
    r.preprocess("rearrange_amp_left_f16.S", {"REARRANGE_LOGICAL_ROWS": rows,
                                              "REARRANGE_LOGICAL_COLUMNS": columns,
                                              "REARRANGE_PHYSICAL_COLUMNS": physical})
    x = rng.standard_normal((rows, columns)).astype(np.float16)
    data = buffer("src", rows * columns * 2) + buffer("dst", rows * physical * 2)
    setup = "    setzi $m3, src\n    setzi $m2, dst"
    cycles, got = r.run(setup, "ipu_stack_rearrange_row_major_to_amp_left_f16", data,
                        {"src": x.reshape(-1)}, {"dst": ("float16", rows * physical)})
    padded = np.zeros((rows, physical), np.float16)
    padded[:, :columns] = x
    expected = padded.reshape(rows, physical // 16, 16).transpose(1, 0, 2).reshape(-1)
    return (f"amp_left {rows}x{columns}", cycles, 2364 if rows * columns == 640
            else 4 * rows * columns + 11, same_bits(got["dst"], expected))


def transposed(r, rng):
    r.preprocess("rearrange_transposed_right_f16.S", {})
    x = rng.standard_normal((64, 16)).astype(np.float16)
    data = buffer("src", 2048) + buffer("dst", 2048)
    setup = "    setzi $m3, src\n    setzi $m2, dst"
    cycles, got = r.run(setup, "ipu_stack_rearrange_row_major_to_amp_f16_transposed_right",
                        data, {"src": x.reshape(-1)}, {"dst": ("float16", 1024)})
    return "transposed 64x16", cycles, 3 * 1024 + 11, same_bits(got["dst"], x.reshape(-1))


def block_major(r, rows, columns, rng):
    r.preprocess("rearrange_block_major_f16.S", {"REARRANGE_PHYSICAL_COLUMNS": columns,
                                                 "REARRANGE_PHYSICAL_ROWS": rows})
    x = rng.standard_normal((rows, columns)).astype(np.float16)
    data = buffer("src", rows * columns * 2) + buffer("dst", rows * columns * 2)
    setup = f"    setzi $m3, src\n    setzi $m2, dst\n    setzi $m4, {rows}\n    setzi $m7, {columns}"
    cycles, got = r.run(setup, "ipu_stack_rearrange_row_major_to_block_major_f16_64x16", data,
                        {"src": x.reshape(-1)}, {"dst": ("float16", rows * columns)})
    # Rows 2i and 2i + 1 of four columns c..c+3 become the pairs of one 64 x 16 panel's row c.
    bits = x.view(np.uint16)
    expected = np.zeros(rows * columns, np.uint16)
    for row in range(0, rows, 2):
        for column in range(columns):
            base = ((column // 16) * 2048 + (row // 16) * 512 + (row % 16) * 2
                    + (column % 16) * 32) // 2
            expected[base] = bits[row, column]
            expected[base + 1] = bits[row + 1, column] if row + 1 < rows else 0
    return (f"block_major {rows}x{columns}", cycles, 4096 + 4 * rows * columns,
            same_bits(got["dst"], expected))


def reduce(r, halves, partials, rng):
    r.preprocess("reduce_add_f16.S", {})
    first = rng.standard_normal(halves).astype(np.float16)
    parts = rng.standard_normal((partials, halves)).astype(np.float16)
    data = (buffer("out", 2 * halves, "interleaved.out") + buffer("init", 2 * halves)
            + buffer("parts", 2 * halves * partials))
    setup = (f"    setzi $m2, out\n    setzi $m3, init\n    setzi $m4, parts\n"
             f"    setzi $m5, {partials}\n    setzi $m6, {halves}")
    cycles, got = r.run(setup, "ipu_stack_reduce_sum_f16", data,
                        {"init": first, "parts": parts.reshape(-1)},
                        {"out": ("float16", halves)})
    expected = first.copy()
    for p in parts:
        expected = (expected + p).astype(np.float16)
    # One output byte a cycle.
    return (f"reduce {halves} halves + {partials}", cycles, 2 * halves,
            same_bits(got["out"], expected))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ipu-stack", required=True, help="a local ipu-stack checkout")
    parser.add_argument("--tessera", default="target/release/tessera")
    parser.add_argument("--kernels", default="gemm,amp_left,transposed,block_major,reduce")
    args = parser.parse_args()
    tessera = os.path.abspath(args.tessera)
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as work:
        r = Runner(tessera, os.path.abspath(args.ipu_stack), work)
        cases = []
        kernels = set(args.kernels.split(","))
        if "gemm" in kernels:
            cases += [lambda rows=rows, load=load: gemm(r, rows, rng, load)
                      for load in ("ld128putcs", "ld64putcs") for rows in (12, 48)]
        if "amp_left" in kernels:
            cases += [lambda s=s: amp_left(r, *s, rng) for s in ((10, 64), (20, 32), (40, 16))]
        if "transposed" in kernels:
            cases.append(lambda: transposed(r, rng))
        if "block_major" in kernels:
            cases += [lambda c=c: block_major(r, 64, c, rng) for c in (16, 80)]
        if "reduce" in kernels:
            cases += [lambda s=s: reduce(r, *s, rng) for s in ((384, 1), (3072, 1))]
        print(f"{'case':32} {'tessera':>9} {'ipu-stack':>10} {'ratio':>6}  exact")
        failed = False
        for case in cases:
            name, cycles, figure, exact = case()
            failed |= not exact
            print(f"{name:32} {cycles:9} {figure:10} {cycles / figure:6.2f}  {exact}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
