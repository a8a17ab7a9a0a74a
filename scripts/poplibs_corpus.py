#!/usr/bin/env python3
"""Builds the assembly codelets of a PopLibs checkout with `tessera asm build`, as PopLibs does.

Usage: scripts/poplibs_corpus.py POPLIBS_DIR [--tessera target/release/tessera] [--cpp clang]
                                   [--keep DIR] [--json FILE] [-v]

Every `.S` file under POPLIBS_DIR/lib is preprocessed with clang's C preprocessor (PopLibs' own
build uses clang; `--cpp cpp` takes GNU cpp, which inserts spaces into some token pastes) with
`-D__IPU__ -D__IPU_ARCH_VERSION__=21` and the stand-in SDK headers below, then built alone; a file
that needs symbols from other files is built again linked with the files that define them (the
codelets call each other's workers). A file the preprocessor leaves without code counts apart.
The report: files with code, how many build alone and linked, and every failure's first error
line, grouped by its cause (the error code and the words after it).

The closed SDK headers (`poplar/TileConstants.hpp`, `poplar/StackSizeDefs.hpp`,
`poplar/AvailableVTypes.h`, `arch/gc_tile_defines.h`) are replaced by stand-ins written here from
public facts. Their values and the basis of each are in STAND_INS below; the constants the
assembler predefines (`tessera isa` lists them: `TAMP_*`, `TEXCH_*`, `CSR_W_WSR__CTXTID_M1__MASK`,
`TMEM_REGION0_BASE_ADDR`, ...) are not repeated. No PopLibs file is modified or copied.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

# name, value, basis. Indices are the project's CSR table (isa/src/csr.rs); the upper (FP) space is
# numbered 0x100 + n, as the chip numbers it and as PopLibs masks it back with
# `CSR_W_FP_CTL__INDEX & CSR_W_WSR__CTXTID_M1__MASK` (NonLinearity1D_gelu.S).
STAND_INS = [
    ("CTXT_WORKERS", "6", "[C] six worker contexts"),
    ("CSR_W_FP_CTL__INDEX", "0x102", "[I] $FP_CTL, upper space 2"),
    ("CSR_W_FP_CLR__ZAACC__MASK", "1", "[C] ZAACC is one bit"),
    ("CSR_W_REPEAT_COUNT__VALUE__MASK", "0xffff", "[C] rpt counts are 16 bits on ipu21 (csr.rs)"),
    ("CSR_S_FP_ICTL__INDEX", "0x20", "[C] $FP_ICTL"),
    ("CSR_S_FP_ICTL__ESR__SHIFT", "19", "[C] $FP_CTL.ESR (csr.rs field)"),
    ("CSR_S_FP_ICTL__ESR__MASK", "1", "[C] one bit"),
    ("CSR_S_FP_ICTL__NANOO__SHIFT", "20", "[C] $FP_CTL.NANOO (csr.rs field)"),
    ("CSR_S_FP_ICTL__NANOO__MASK", "1", "[C] one bit"),
    ("CSR_S_FP_ICTL__OFLO__SHIFT", "2", "[C] $FP_CTL.OFLO (csr.rs)"),
    ("CSR_S_FP_ICTL__OFLO__MASK", "1", "[C] one bit"),
    ("TMEM_ELEMSIZE", "0x4000", "[A] bytes per memory element (machines/ipu21.ron element_bytes)"),
    ("TMEM_BYTE_MAX_ADDRESS_WIDTH", "21", "[I] tile addresses below 2 MiB"),
    ("TMEM_FULL_ADDRESS_MASK", "0x1fffff", "[I] the same width as a mask"),
    ("TFPU_FP32_TRUE", "0xffffffff", "[C] compare results (PopLibs comments)"),
    ("TFPU_FP32_FALSE", "0", "[C]"),
    ("TFPU_FP16_TRUE", "0xffff", "[C]"),
    ("TFPU_FP16_FALSE", "0", "[C]"),
]

# Functions the codelets call that live outside the `.S` corpus: a C++ codelet helper and the
# SDK's memcpy. Each stand-in returns at once (`br $m10`); a run that calls one computes nothing.
EXTERNAL_STAND_INS = """
    .section .text.tessera_external_stand_ins
    .worker
    .align 8
"""


def external_stand_in(work, symbols):
    path = os.path.join(work, "_external_stand_ins.s")
    with open(path, "w") as f:
        f.write(EXTERNAL_STAND_INS)
        for sym in sorted(symbols):
            f.write(f"    .globl {sym}\n    .type {sym}, @function\n{sym}:\n    br $m10\n")
    return path


# The stack-size records the SDK's linker reads: nothing to do on a simulator.
STACK_MACROS = """
.macro DEF_STACK_USAGE size, name
.endm
.macro DEF_STACK_SIZE_OWN size, name
.endm
"""


def write_stand_ins(root):
    os.makedirs(os.path.join(root, "poplar"), exist_ok=True)
    os.makedirs(os.path.join(root, "arch"), exist_ok=True)
    lines = ["// Stand-ins for the SDK's TileConstants.hpp (scripts/poplibs_corpus.py)."]
    for name, value, basis in STAND_INS:
        lines.append(f"#define {name} {value} // {basis}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(root, "poplar", "TileConstants.hpp"), "w") as f:
        f.write(text)
    with open(os.path.join(root, "arch", "gc_tile_defines.h"), "w") as f:
        f.write(text)
    with open(os.path.join(root, "poplar", "StackSizeDefs.hpp"), "w") as f:
        f.write("#ifndef TESSERA_STACK_SIZE_DEFS\n#define TESSERA_STACK_SIZE_DEFS\n")
        f.write(STACK_MACROS)
        f.write("#endif\n")
    # No scaled pointers or delta-N lists: plain 32-bit pointers in vertex state.
    with open(os.path.join(root, "poplar", "AvailableVTypes.h"), "w") as f:
        f.write("// Stand-in: no VECTOR_AVAIL_* types (plain pointers).\n")


def include_dirs(poplibs):
    dirs = {os.path.join(poplibs, "include")}
    for top, _, files in os.walk(os.path.join(poplibs, "lib")):
        if any(f.endswith((".S", ".inc", ".h", ".hpp")) for f in files):
            dirs.add(top)
    return sorted(dirs)


def preprocess(cpp, source, includes, out):
    args = [cpp, "-E", "-P", "-x", "assembler-with-cpp", "-D__IPU__", "-D__IPU_ARCH_VERSION__=21"]
    if os.path.basename(cpp).startswith("cpp"):
        args = ["cpp", "-P", "-x", "assembler-with-cpp", "-D__IPU__", "-D__IPU_ARCH_VERSION__=21"]
    for d in includes:
        args += ["-I", d]
    args += [source, "-o", out]
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def has_code(text):
    return re.search(r"^\s*\{?\s*[a-z][a-z0-9]*\s", text, re.M) is not None and (
        ".text" in text or ".section" in text
    )


def build(tessera, files, out):
    r = subprocess.run(
        [tessera, "asm", "build", *files, "-o", out], capture_output=True, text=True
    )
    return r.returncode == 0, r.stderr


GLOBL = re.compile(r"^\s*\.glob(?:a)?l\s+([^\s,]+)", re.M)
UNDEFINED = re.compile(r"`([^`]+)` is (?:not defined|undefined)|undefined symbol `([^`]+)`")


def cause(stderr):
    """The first error line without its place, numbers blanked: the failure's kind."""
    for line in stderr.splitlines():
        if "error" in line:
            text = re.sub(r"^.*?:\d+:\d+: error(\[[A-Z0-9-]+\])?:\s*", lambda m: (m.group(1) or "") + " ", line)
            text = re.sub(r"^error:\s*", "", text)
            return re.sub(r"\b0x[0-9a-f]+\b|\b\d+\b", "N", text).strip()[:160]
    return stderr.strip().splitlines()[0][:160] if stderr.strip() else "(no message)"


def arguments(description, poplibs_optional=False):
    """The arguments every script over a PopLibs checkout takes: its folder, the `tessera`
    binary and the preprocessor."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("poplibs", nargs="?" if poplibs_optional else None)
    ap.add_argument("--tessera", default="target/release/tessera")
    ap.add_argument("--cpp", default="clang")
    return ap


def main():
    ap = arguments(__doc__)
    ap.add_argument("--keep", help="write the preprocessed files here")
    ap.add_argument("--json", help="write the per-file results here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()

    work = a.keep or tempfile.mkdtemp(prefix="poplibs-corpus-")
    os.makedirs(work, exist_ok=True)
    stand_ins = os.path.join(work, "_sdk")
    write_stand_ins(stand_ins)
    includes = [stand_ins] + include_dirs(a.poplibs)
    sources = sorted(
        os.path.join(top, f)
        for top, _, files in os.walk(os.path.join(a.poplibs, "lib"))
        for f in files
        if f.endswith(".S")
    )
    pre = {}
    results = {}
    for src in sources:
        rel = os.path.relpath(src, a.poplibs)
        out = os.path.join(work, rel.replace("/", "__") + ".s")
        ok, err = preprocess(a.cpp, src, includes, out)
        if not ok:
            results[rel] = ("preprocess", cause(err))
            continue
        text = open(out).read()
        if not has_code(text):
            results[rel] = ("no code", "")
            continue
        pre[rel] = (out, text)
    exported = {rel: set(GLOBL.findall(text)) for rel, (_, text) in pre.items()}

    def definers(sym, skip):
        """The files that export `sym`, else those that mention it or its stem (a name a macro
        builds, e.g. `convNx1ZeroOutField_\\TYPE`) in an export or a label."""
        found = [r for r, syms in exported.items() if sym in syms and r not in skip]
        if found:
            return found
        stem = sym.rsplit("_", 1)[0] if "_" in sym else sym
        word = re.compile(r"^(?!\s*\.extern).*\b" + re.escape(stem), re.M)
        return [r for r, (_, text) in pre.items() if r not in skip and word.search(text)]

    obj = os.path.join(work, "out.o")
    for rel, (out, _) in pre.items():
        listing = subprocess.run(
            [a.tessera, "asm", "build", out, "-o", obj, "--listing"], capture_output=True, text=True
        )
        ok, err = listing.returncode == 0, listing.stderr
        if ok:
            # Macros and constants only (a header the others include): no instruction listed.
            code = re.search(r"^\s+0x[0-9a-f]+\s+[0-9a-f]{8}\s", listing.stdout, re.M)
            results[rel] = ("alone", "") if code else ("no code", "")
            continue
        needed = {m[0] or m[1] for m in UNDEFINED.findall(err)}
        partners = sorted({d for s in needed for d in definers(s, {rel})})
        if needed and partners:
            files, seen = [out], {rel}
            # Follow the partners' own needs a few levels.
            frontier = partners
            for _ in range(4):
                for p in frontier:
                    if p not in seen:
                        seen.add(p)
                        files.append(pre[p][0])
                ok, err2 = build(a.tessera, files, obj)
                if ok:
                    break
                more = {m[0] or m[1] for m in UNDEFINED.findall(err2)}
                frontier = sorted({d for s in more for d in definers(s, seen)})
                if not frontier:
                    break
            if ok:
                results[rel] = ("linked", "")
                continue
            err = err2
        # Symbols no corpus file defines: link a stand-in that defines them.
        # (Only names a `call` or branch could reach: the SDK's constants are not functions.)
        missing = {m[0] or m[1] for m in UNDEFINED.findall(err)}
        missing = {m for m in missing if not re.match(r"T[A-Z]+_", m)}
        if missing:
            stand_in = external_stand_in(work, missing)
            for files in ([out], [out] + [pre[p][0] for p in partners]):
                ok, _ = build(a.tessera, files + [stand_in], obj)
                if ok:
                    break
            if ok:
                results[rel] = ("stand-in", ", ".join(sorted(missing)))
                continue
        results[rel] = ("fails", cause(err))

    counts = collections.Counter(kind for kind, _ in results.values())
    code = len(results) - counts["no code"] - counts["preprocess"]
    built = counts["alone"] + counts["linked"] + counts["stand-in"]
    print(f"{len(sources)} .S files; {counts['no code']} without code; {counts['preprocess']} fail to preprocess")
    print(f"{code} with code: {counts['alone']} build alone, {counts['linked']} more linked with the files that define their symbols")
    print(f"{counts['stand-in']} more with stand-ins for symbols outside the corpus:")
    for rel, (kind, why) in sorted(results.items()):
        if kind == "stand-in":
            print(f"         {rel}: {why}")
    print(f"built: {built} of {code}")
    causes = collections.defaultdict(list)
    for rel, (kind, why) in results.items():
        if kind in ("fails", "preprocess"):
            causes[why].append(rel)
    for why, files in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(files):3d}  {why}")
        if a.verbose:
            for f in files:
                print(f"         {f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({k: {"result": v[0], "cause": v[1]} for k, v in results.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
