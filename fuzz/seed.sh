#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seed inputs: files from the repository (assembly kernels,
# machine descriptions) and the generated seeds in fuzz/seeds/ (regenerate them with
# `cargo +nightly run --example make_seeds` from fuzz/). Safe to re-run: it only adds files.
set -euo pipefail
cd "$(dirname "$0")"
repo=..
corpus=corpus
mkdir -p "$corpus"/{asm,decode,object_image,npy,machine,config_json,safetensors,tile_sim,compile_graph,plan_lower}

# asm: every kernel and example, and the files as pairs joined by NUL (multi-file input).
for f in "$repo"/kernels/asm/*.S "$repo"/kernels/asm/examples/*.S; do
  cp "$f" "$corpus/asm/$(basename "$f")"
done
printf '%s\0%s' "$(cat "$repo/kernels/asm/gemm_f16.S")" "$(cat "$repo/kernels/asm/gemm_amp_body.S")" \
  > "$corpus/asm/gemm_f16+amp_body.S"

# machine: the built-in descriptions.
cp "$repo"/machines/*.ron "$corpus/machine/"

# generated seeds
if [ -d seeds ]; then
  for dir in seeds/*/; do
    target=$(basename "$dir")
    mkdir -p "$corpus/$target"
    cp "$dir"* "$corpus/$target/"
  done
fi

# plan_lower reads its bytes as compile_graph does.
cp seeds/compile_graph/* "$corpus/plan_lower/"

# regression inputs are seeds too
if [ -d regressions ]; then
  for dir in regressions/*/; do
    target=$(basename "$dir")
    mkdir -p "$corpus/$target"
    cp "$dir"* "$corpus/$target/" 2>/dev/null || true
  done
fi
echo "corpus ready: $(find "$corpus" -type f | wc -l) files"
