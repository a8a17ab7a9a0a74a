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
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from calibration import casts, common, conv, elementwise, movement, reductions  # noqa: E402
_spec = importlib.util.spec_from_file_location("poplibs_corpus", os.path.join(HERE, "poplibs_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)


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
                elementwise.scaled_2d_name(kind, operation, fast),
                "elementwise (scaled add)",
                f"lib/popops/codelets/asm/ScaledAdd2D_{kind}.S",
                elementwise.scaled_2d_case(kind, operation, fast),
                lambda s, k=kind, o=operation, f=fast: elementwise.scaled_2d_estimate(s, k, o, f),
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
                    elementwise.fill_case(kind, two_d),
                    lambda s, k=kind, t=two_d: elementwise.fill_estimate(s, k, t),
                    [[3, 64], [1, 2, 5, 100]] if two_d else [[1], [2], [7], [64], [301]],
                )
            )
        out.append(
            case(
                f"__runCodelet_popops__Clamp___{kind}",
                "elementwise (clamp)",
                "lib/popops/codelets/asm/Clamp.S",
                elementwise.clamp_case(kind),
                lambda s, k=kind: elementwise.clamp_estimate(s, k),
                [[1], [8], [33], [2, 7, 64]],
            )
        )
    out.append(
        case(
            "__runCodelet_popops__Select___half",
            "select",
            "lib/popops/codelets/asm/select_half.S",
            elementwise.select_case,
            elementwise.select_estimate,
            [[1], [2], [9], [3, 40]],
        )
    )
    for op, kind in (("SIGNUM", "half"), ("BITWISE___NOT", "short")):
        out.append(
            case(
                f"__runCodelet_popops__UnaryOp2D___popops__expr__UnaryOpType__{op}_{kind}",
                "elementwise (unary)",
                "lib/popops/codelets/asm/unaryOps2D.S",
                elementwise.unary_2d_case(op.replace("___", "_")),
                lambda s, o=op: elementwise.unary_2d_estimate(s, "SIGNUM" if o == "SIGNUM" else "NOT"),
                [[1], [4], [7], [3, 64]],
            )
        )
    for op, kind in (("ADD", "half"), ("MULTIPLY", "half"), ("ADD", "float")):
        out.append(
            case(
                f"__runCodelet_popops__BinaryOp2D___popops__expr__BinaryOpType__{op}_{kind}",
                "elementwise (binary)",
                "lib/popops/codelets/asm/binaryOps2D.S",
                elementwise.binary_2d_case(op, kind),
                lambda s, k=kind: elementwise.binary_2d_estimate(s, k),
                [[1], [5], [64], [3, 33]],
            )
        )
    out.append(
        case(
            "__runCodelet_popops__NormaliseImage___unsigned_char_half",
            "cast (uint8 to half)",
            "lib/popops/codelets/asm/NormaliseImage.S",
            casts.normalise_image_case,
            casts.normalise_image_estimate,
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
                reductions.reduce_add_case(out_kind, partials_kind),
                lambda s, o=out_kind, p=partials_kind: reductions.reduce_add_estimate(s, o, p),
                [[2, 8], [5, 48], [16, 100], [3, 7]],
                mode=MULTI,
            )
        )
    out.append(
        case(
            "__runCodelet_popops__DynamicSlice2D___half",
            "movement (dynamic slice)",
            "lib/popops/codelets/asm/dynamicSlice.S",
            movement.dynamic_slice_case,
            movement.dynamic_slice_estimate,
            [[1, 4, 2, 8, 1], [2, 5, 3, 6, 3], [3, 4, 4, 13, 2], [1, 8, 1, 100, 7]],
            extra_sources=["lib/popops/codelets/asm/SliceCopyFunction.S"],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__HasNaNOrInf2D___half_true",
            "check (NaN or infinity)",
            "lib/popops/codelets/asm/HasNaN.S",
            reductions.has_nan_case,
            reductions.has_nan_estimate,
            [[-1, 8], [-1, 13, 1, 7], [0, 64, 3], [1, 5, 40], [2, 2, 100], [-1, 300]],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__EncodeOneHot___unsigned_int_half",
            "encode (one-hot)",
            "lib/popops/codelets/asm/EncodeOneHot.S",
            reductions.one_hot_case,
            reductions.one_hot_estimate,
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
            elementwise.variance_case,
            elementwise.variance_estimate,
            [[1], [2], [7], [64], [3, 10, 33]],
        )
    )
    out.append(
        case(
            "__runCodelet_popops__BroadcastVectorInner2D___popops__expr__BinaryOpType__ADD_half",
            "broadcast (vector inner)",
            "lib/popops/codelets/asm/vectorInnerAdd_half.S",
            elementwise.broadcast_inner_case,
            elementwise.broadcast_inner_estimate,
            [[8, 4], [16, 3, 4, 5], [3, 4, 12, 2], [24, 1], [5, 2, 8, 1, 4, 6], [64, 16]],
        )
    )
    for partials, units, ld128 in (
        ("half", 8, False),
        ("float", 8, False),
        ("half", 16, False),
        ("half", 8, True),
        ("half", 16, True),
    ):
        out.append(
            case(
                f"__runCodelet_poplin__ConvPartial1x1Out___half_{partials}_true_{str(ld128).lower()}"
                f"_{units}_4_false",
                "AMP convolution (1x1)",
                "lib/poplin/codelets/asm/"
                + ("conv_partial_1x1_half_half.S" if (partials, units) == ("half", 8)
                   else "conv_partial_1x1_half_float_8_and_half_half_h16.S"),
                conv.conv_1x1_case(partials, units, ld128),
                lambda s, p=partials, u=units, w=ld128: conv.conv_1x1_estimate(s, p, u, ld128=w),
                [[1, 1, 1, 1, 6], [1, 1, 1, 1, 30], [2, 2, 1, 1, 20], [1, 2, 2, 2, 48], [3, 1, 2, 1, 13]],
                mode=SUPERVISOR,
                adjusted=lambda s, p=partials, u=units, w=ld128: conv.conv_1x1_estimate(
                    s, p, u, retention=True, ld128=w
                ),
            )
        )
    out.append(
        case(
            "__runCodelet_popops__Cast1DSingleWorker___half_quarter",
            "cast (half to FP8)",
            "kernels/asm/poplibs_style/Cast1DSingleWorker_half_quarter.S",
            casts.cast_half_quarter_case,
            casts.cast_half_quarter_estimate,
            [[n, fmt, scale] for n, fmt, scale in
             [(0, 1, 0), (1, 1, 0), (4, 0, 0), (5, 1, 4), (7, 0, 4), (8, 1, -4), (13, 1, 4),
              (64, 0, 0), (203, 1, 0), (1000, 0, -4)]],
            local=True,
            # `--check` holds the simulation to the kernel's own bundle count, cycle for cycle.
            # Against PopLibs' estimator, whose constants are its C++ codelet's (19 cycles of
            # prologue), small sizes read 0.44 .. 1.12 (an empty vertex 12 against 27).
            own=casts.cast_half_quarter_bundles,
        )
    )
    out.append(
        case(
            "__runCodelet_popops__Cast1DSingleWorker___quarter_half",
            "cast (FP8 to half)",
            "kernels/asm/poplibs_style/Cast1DSingleWorker_quarter_half.S",
            casts.cast_quarter_half_case,
            casts.cast_quarter_half_estimate,
            [[n, fmt, scale] for n, fmt, scale in
             [(0, 0, 0), (1, 1, 0), (3, 0, 4), (4, 1, -4), (5, 0, 0), (7, 1, 4), (8, 0, 0),
              (12, 1, 0), (13, 0, -4), (64, 1, 0), (1003, 0, 4)]],
            local=True,
            # As its pair: exact against its own bundle count; against PopLibs' C++ constants
            # (19 of prologue, 1 + 2 a remainder bit) this kernel's shorter prologue and longer
            # tail (masks and merges) read 0.39 .. 1.29 at small sizes, 1.01 at 1003.
            own=casts.cast_quarter_half_bundles,
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


def run_case(case, shape, args, work, built):
    # A seed of the case's name and shape, the same in every run (`hash` of a string is salted
    # per process).
    rng = random.Random(zlib.crc32(f"{case.name} {shape_text(shape)}".encode()))
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
        raw = common.read_npy(path)
        width = {"uint8": 1, "float16": 2, "uint16": 2, "float32": 4, "uint32": 4}[dtype]
        got = [int.from_bytes(raw[width * i : width * i + width], "little") for i in range(count)]
        bad += sum(g != w for g, w in zip(got, want))
        guard = common.read_npy(gpath)
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
