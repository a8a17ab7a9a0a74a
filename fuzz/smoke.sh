#!/usr/bin/env bash
# The fuzz targets' smoke run for CI, on the stable toolchain: builds every target (libFuzzer's
# driver, without coverage instrumentation, which needs nightly) and runs each once on every
# seed in seeds/<target>/, every saved crash in regressions/<target>/, and the repository's
# own inputs (kernels for `asm`, machine files for `machine`). A target that panics on any of
# them fails the run. Real fuzzing is `cargo +nightly fuzz run` (README.md).
set -euo pipefail
cd "$(dirname "$0")"
cargo build --locked --bins
# The binaries are where cargo put them (CARGO_TARGET_DIR when set, else fuzz/target).
bin_dir=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c "import json,sys; print(json.load(sys.stdin)['target_directory'])")/debug
targets=$(cargo metadata --no-deps --format-version 1 --locked | python3 -c "import json,sys; print(' '.join(t['name'] for p in json.load(sys.stdin)['packages'] for t in p['targets'] if 'bin' in t['kind']))")
for target in $targets; do
  inputs=()
  for dir in "seeds/$target" "regressions/$target"; do
    [ -d "$dir" ] && inputs+=("$dir"/*)
  done
  case "$target" in
    asm) inputs+=(../kernels/asm/*.S ../kernels/asm/examples/*.S) ;;
    machine) inputs+=(../machines/*.ron) ;;
    plan_lower) inputs+=(seeds/compile_graph/*) ;; # the same bytes make the same graphs
  esac
  if [ ${#inputs[@]} -eq 0 ]; then
    echo "smoke: $target has no inputs" >&2
    exit 1
  fi
  log=$(mktemp)
  if ! "$bin_dir/$target" "${inputs[@]}" >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "smoke: $target failed" >&2
    exit 1
  fi
  echo "smoke: $target ran ${#inputs[@]} inputs"
  rm -f "$log"
done
