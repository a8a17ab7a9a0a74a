#!/usr/bin/env bash
# A fuzzing campaign: runs every target (or the ones named) for MINUTES each, JOBS at a time
# (default 2, this machine's cores), keeping fuzz/corpus/ between runs, and prints a table of
# executions, coverage and crashes per target. Exits 1 if any target crashed (its inputs are in
# artifacts/<target>/; keep each in regressions/<target>/ with a regression test), 2 on a usage
# or build error.
#
#   fuzz/campaign.sh 10                 # every target, 10 minutes each
#   fuzz/campaign.sh 3 decode asm       # two targets, 3 minutes each
#   JOBS=1 fuzz/campaign.sh 1 npy
#   SANITIZER=none fuzz/campaign.sh 10  # without AddressSanitizer (plan_lower: ~120 exec/s
#                                       # against ~36); every crate forbids unsafe code
#
# Needs cargo-fuzz and a nightly toolchain (`cargo install cargo-fuzz`; fuzz/README.md).
# Logs and the table are in fuzz/campaign/ (not committed).
set -uo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: fuzz/campaign.sh MINUTES [TARGET...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
minutes=$1
shift
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -ge 1 ] || usage
jobs=${JOBS:-2}
toolchain=${FUZZ_TOOLCHAIN:-nightly}
sanitizer=${SANITIZER:-address}
cargo_fuzz=(cargo "+$toolchain" fuzz)

all_targets=$("${cargo_fuzz[@]}" list) || { echo "campaign: cargo fuzz list failed" >&2; exit 2; }
if [ $# -gt 0 ]; then
  targets=("$@")
  for t in "${targets[@]}"; do
    grep -qx "$t" <<<"$all_targets" || { echo "campaign: no target '$t' (have: $(echo $all_targets))" >&2; exit 2; }
  done
else
  read -r -a targets <<<"$(echo $all_targets)"
fi

./seed.sh >/dev/null
"${cargo_fuzz[@]}" build -a -s "$sanitizer" >/dev/null 2>campaign-build.log || {
  cat campaign-build.log >&2
  echo "campaign: build failed" >&2
  exit 2
}
rm -f campaign-build.log

out=campaign
rm -rf "$out"
mkdir -p "$out"
stamp="$out/.start"
touch "$stamp"

run_target() {
  local target=$1
  mkdir -p "corpus/$target" "artifacts/$target"
  cargo "+$toolchain" fuzz run -a -s "$sanitizer" "$target" "corpus/$target" -- \
    -max_total_time=$((minutes * 60)) -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
    >"$out/$target.log" 2>&1
  echo $? >"$out/$target.rc"
}
export -f run_target
export minutes out toolchain sanitizer
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_target "$1"' _ {}

# The table: libFuzzer's final statistics and its last coverage line, and the crash files
# written during this campaign.
failed=0
table="$out/table.md"
{
  echo "| target | executions | exec/s | coverage (edges) | features | corpus | crashes | result |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|"
  for target in "${targets[@]}"; do
    log="$out/$target.log"
    rc=$(cat "$out/$target.rc" 2>/dev/null || echo 99)
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
    rate=$(( ${execs:-0} / (minutes * 60) ))
    last=$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*$')
    ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*$')
    corp=$(grep -o 'corp: [0-9]*' <<<"$last" | grep -o '[0-9]*$')
    crashes=$(find "artifacts/$target" -type f -newer "$stamp" | wc -l)
    if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]; then
      result=clean
    else
      result="**failed** (exit $rc; see fuzz/$log)"
      failed=1
    fi
    echo "| \`$target\` | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $crashes | $result |"
  done
} >"$table"
cat "$table"
total=$(grep -ho 'stat::number_of_executed_units: [0-9]*' "$out"/*.log | awk '{s += $2} END {print s + 0}')
echo "campaign: ${#targets[@]} targets, $minutes min each, $jobs at a time, sanitizer $sanitizer: ${total:-0} executions in all"
exit $failed
