#!/usr/bin/env python3
"""Times `tessera run` against a PyTorch float32 forward of the same model (issue 13).

For each workload and host thread count it runs `tessera run` under `/usr/bin/time -v` with
TESSERA_TIMING=1 and reports the command's wall time, its compile / simulate / references
split (the run's own "host time" line), the cropped cycles and bit-exactness (which must not
depend on the thread count), and the peak resident memory. Then it times the model's forward
in PyTorch (transformers' SiglipVisionModel on the same seeded checkpoint, float32, no grad;
median of 5 after a warm-up) with the same thread counts, when torch and transformers are
installed, and prints the ratios: whole command / PyTorch and simulation alone / PyTorch, and
the 1-vs-2-thread scaling.

Workloads (each measured as users run it: a checkpoint as transformers writes it, the
attention-pooling head included):
  builtin   `tessera run` with no arguments: the built-in SigLIP tower (batch 2); its PyTorch
            twin is `tessera model make --preset small` (the same seeded weights).
  so400m    one So400m/14 layer at 378x378 (729 tokens) with the head, batch 1 (`tessera model
            make --preset so400m-378 --layers 1`). Compile about a minute, the whole command a
            few minutes with 2 threads.
  so400m-27 all 27 So400m/14 layers with the head, batch 1: the whole tower. Tens of minutes
            per thread count; run it alone (`--workloads so400m-27 --threads 2`).
  so400m-no-head  the one-layer workload without the head (`--no-head`), as issue 13 measured.

Per run it reports the wall time, the compile / simulate / references split, CPU time, peak
RSS, the simulator's tile-cycles per second (running tiles x simulated cycles per second of
simulation), the cropped cycles and bit-exactness; then the ratios to the PyTorch forward at
the same thread count: whole command, and simulation + references (issue 33's goal: 20x).

Usage:
  scripts/speed.py [--tessera target/release/tessera] [--workloads builtin,so400m]
                   [--threads 1,2] [--work DIR] [--json FILE] [--no-torch]

Build first: `cargo build --release`. The numbers are only as quiet as the machine: on a
shared host, run it when nothing else is building.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKLOADS = {
    "builtin": {
        "make": ["--preset", "small", "--seed", "1"],
        "run": [],
        "describe": "built-in SigLIP tower (112x112, hidden 256, 2 layers, head), batch 2",
        "batch": 2,
    },
    "so400m": {
        "make": ["--preset", "so400m-378", "--layers", "1"],
        "run": [],
        "describe": "one So400m/14 layer at 378x378 (729 tokens) with the head, batch 1",
        "batch": 1,
    },
    "so400m-27": {
        "make": ["--preset", "so400m-378"],
        "run": [],
        "describe": "27 So400m/14 layers at 378x378 with the head (the whole tower), batch 1",
        "batch": 1,
    },
    "so400m-no-head": {
        "make": ["--preset", "so400m-378", "--layers", "1", "--no-head"],
        "run": ["--no-head"],
        "describe": "one So400m/14 layer at 378x378, no head, batch 1",
        "batch": 1,
    },
}


def run_tessera(tessera, args, threads):
    """One `tessera run`: its figures, wall time and peak RSS."""
    env = dict(os.environ, TESSERA_TIMING="1")
    command = ["/usr/bin/time", "-v", str(tessera), "run", *args, "--threads", str(threads)]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    out, err = done.stdout, done.stderr
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{err[-3000:]}")
    figures = {"wall_s": wall, "exit": done.returncode}
    host = re.search(
        r"host time: compile ([\d.]+) s, simulate ([\d.]+) s, references ([\d.]+) s", out
    )
    if host:
        figures.update(
            compile_s=float(host.group(1)),
            simulate_s=float(host.group(2)),
            references_s=float(host.group(3)),
        )
    speed = re.search(r"\(([\d.]+) M tile-cycles/s", out)
    if speed:
        figures["mtile_cycles_per_s"] = float(speed.group(1))
    cycles = re.search(r"cropped (\d+)", out)
    if cycles:
        figures["cropped_cycles"] = int(cycles.group(1))
    figures["bit_exact"] = "plan's reference (kernel references on the same tile program): yes" in out
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if rss:
        figures["peak_rss_mib"] = int(rss.group(1)) / 1024
    user = re.search(r"User time \(seconds\): ([\d.]+)", err)
    system = re.search(r"System time \(seconds\): ([\d.]+)", err)
    if user and system:
        figures["cpu_s"] = float(user.group(1)) + float(system.group(1))
    return figures


def torch_forward(checkpoint, batch, image_size, thread_counts):
    """Median PyTorch forward seconds per thread count, or None without torch."""
    try:
        import torch
        from transformers import SiglipVisionModel
    except ImportError as error:
        print(f"PyTorch side skipped: {error}", file=sys.stderr)
        return None
    model = SiglipVisionModel.from_pretrained(str(checkpoint), torch_dtype=torch.float32).eval()
    pixels = torch.rand(batch, 3, image_size, image_size) * 2 - 1
    seconds = {}
    with torch.no_grad():
        for threads in thread_counts:
            torch.set_num_threads(threads)
            model(pixel_values=pixels)
            times = []
            for _ in range(5):
                started = time.perf_counter()
                model(pixel_values=pixels)
                times.append(time.perf_counter() - started)
            seconds[threads] = statistics.median(times)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tessera", default=ROOT / "target" / "release" / "tessera")
    parser.add_argument("--workloads", default="builtin,so400m")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--work", default=ROOT / "target" / "speed")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    tessera = Path(args.tessera)
    if not tessera.exists():
        sys.exit(f"{tessera}: build it first (cargo build --release)")
    thread_counts = [int(t) for t in args.threads.split(",")]
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.workloads.split(","):
        workload = WORKLOADS[name]
        checkpoint = work / f"{name}-checkpoint"
        if not (checkpoint / "config.json").exists():
            subprocess.run(
                [str(tessera), "model", "make", *workload["make"], "-o", str(checkpoint)],
                check=True,
                capture_output=True,
            )
        run_args = [] if name == "builtin" else ["--model", str(checkpoint), *workload["run"]]
        entry = {"describe": workload["describe"], "tessera": {}, "torch_s": None}
        for threads in thread_counts:
            print(f"{name}: tessera run, {threads} thread(s) ...", file=sys.stderr, flush=True)
            entry["tessera"][threads] = run_tessera(tessera, run_args, threads)
        if not args.no_torch:
            config = json.loads((checkpoint / "config.json").read_text())
            print(f"{name}: PyTorch forward ...", file=sys.stderr, flush=True)
            entry["torch_s"] = torch_forward(
                checkpoint, workload["batch"], config["image_size"], thread_counts
            )
        results[name] = entry
    report(results, thread_counts)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str) + "\n")


def report(results, thread_counts):
    for name, entry in results.items():
        print(f"\n{name}: {entry['describe']}")
        print(
            f"  {'threads':>7} {'wall s':>8} {'compile':>8} {'simulate':>8} {'refs':>7} "
            f"{'CPU s':>7} {'peak MiB':>8} {'Mtc/s':>6} {'cycles':>9} {'exact':>5} "
            f"{'torch s':>8} {'x cmd':>6} {'x sim+refs':>10}"
        )
        torch_s = entry["torch_s"] or {}
        for threads in thread_counts:
            t = entry["tessera"][threads]
            torch_t = torch_s.get(threads)
            ratio = lambda v, w: f"{v / torch_t:{w}.0f}" if torch_t and v is not None else f"{'-':>{w}}"
            sim_refs = (
                t["simulate_s"] + t["references_s"]
                if "simulate_s" in t and "references_s" in t
                else None
            )
            print(
                f"  {threads:>7} {t['wall_s']:8.2f} {t.get('compile_s', 0):8.2f} "
                f"{t.get('simulate_s', 0):8.2f} {t.get('references_s', 0):7.2f} "
                f"{t.get('cpu_s', 0):7.1f} {t.get('peak_rss_mib', 0):8.0f} "
                f"{t.get('mtile_cycles_per_s', 0):6.0f} "
                f"{t.get('cropped_cycles', 0):9d} {'yes' if t['bit_exact'] else 'NO':>5} "
                f"{torch_t if torch_t else float('nan'):8.3f} {ratio(t['wall_s'], 6)} "
                f"{ratio(sim_refs, 10)}"
            )
        if len(thread_counts) >= 2:
            one, two = (entry["tessera"][t] for t in thread_counts[:2])
            print(
                f"  {thread_counts[0]} -> {thread_counts[1]} threads: whole command "
                f"{one['wall_s'] / two['wall_s']:.2f}x, simulation "
                f"{one.get('simulate_s', 0) / max(two.get('simulate_s', 0), 1e-9):.2f}x, "
                f"references "
                f"{one.get('references_s', 0) / max(two.get('references_s', 0), 1e-9):.2f}x; "
                f"cycles and outputs identical: "
                f"{'yes' if one.get('cropped_cycles') == two.get('cropped_cycles') and one['bit_exact'] and two['bit_exact'] else 'NO'}"
            )


if __name__ == "__main__":
    main()
