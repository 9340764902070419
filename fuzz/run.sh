#!/usr/bin/env bash
# Builds the fuzz targets with clang, libFuzzer, ASan and UBSan, and runs
# each for a while; prints one markdown table of the figures.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]      (default 600, all four)
#   FUZZ_JOBS=N  runs N targets at a time (default 1)
#
# Inputs that crash land in _build-fuzz/artifacts/TARGET/. Copy each to
# fuzz/regressions/TARGET/ with the fix: the test suite ('fuzz') replays them.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(lock-file informations locks-json config)
jobs=${FUZZ_JOBS:-1}

need=()
for p in clang libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

build=_build-fuzz
if [ ! -d "$build" ]; then
  CC=clang meson setup "$build" -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dintrospection=disabled -Ddocs=false -Dtests=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$build" >/dev/null

plugin_path=$(meson devenv -C "$build" printenv TESSERA_PLUGIN_PATH)
export TESSERA_PLUGIN_PATH=$plugin_path
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run_one() {
  local t=$1 corpus=$build/corpus/$t artifacts=$build/artifacts/$t log=$build/fuzz-$t.log
  mkdir -p "$corpus" "$artifacts"
  local seeds=(fuzz/corpus/"$t")
  [ -d fuzz/regressions/"$t" ] && seeds+=(fuzz/regressions/"$t")
  # The first folder gathers what the run finds; the seeds stay as they are.
  # Inputs as long as the deepest regression, and the formats' tokens (with
  # runs of openers) in the dictionary, so that depth is explored.
  if "$build/fuzz/fuzz-$t" -max_total_time="$seconds" -print_final_stats=1 -timeout=20 \
       -max_len=262144 -dict=fuzz/json.dict \
       -rss_limit_mb=2048 -artifact_prefix="$artifacts/" "$corpus" "${seeds[@]}" >"$log" 2>&1; then
    echo ok >"$log.status"
  else
    echo "failed ($?)" >"$log.status"
  fi
}

for t in "${targets[@]}"; do
  [ -f "fuzz/fuzz-$t.c" ] || { echo "fuzz/run.sh: no target “$t”" >&2; exit 64; }
  run_one "$t" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
wait

status=0
echo
echo "| target | seconds | runs | runs/s | coverage (edges) | features | corpus | result |"
echo "|---|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  log=$build/fuzz-$t.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=$(cat "$log.status")
  if [ "$result" = ok ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log"; then
    result="no crash, no sanitizer report, no leak"
  else
    result="**$result** — see $log"
    status=1
  fi
  echo "| $t | $seconds | ${runs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $result |"
done
exit $status
