#!/usr/bin/env bash
# Builds with -Werror and runs the whole test suite four ways: plain (the
# stress run printing its figures), under valgrind, under
# AddressSanitizer+UndefinedBehaviorSanitizer, and under ThreadSanitizer;
# then cppcheck.
# Ends with one line "check: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
status=0

count() {
  # meson test's summary: "Ok: N", "Fail: N", "Timeout: N", …
  local log=$1 ok fail timeout
  ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  timeout=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  passed=$((passed + ${ok:-0}))
  failed=$((failed + ${fail:-0} + ${timeout:-0}))
}

run() {
  local name=$1; shift
  local log start=$SECONDS
  log=$(mktemp)
  echo "== $name: $*"
  if ! "$@" 2>&1 | tee "$log"; then status=1; fi
  count "$log"
  rm -f "$log"
  # Where CI's time goes (its budget: 45 minutes on 2 cores).
  echo "== $name: $((SECONDS - start)) s"
}

setup() {
  local dir=$1; shift
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" -Dwerror=true "$@" >/dev/null || return 1
  else
    meson setup "$dir" -Dwerror=true "$@" >/dev/null || return 1
  fi
  ninja -C "$dir" || return 1
}

# The plain build also makes the GIR (warnings fatal) and the API reference
# (gi-docgen --fatal-warnings), so CI checks both.
if setup _build -Dintrospection=enabled -Ddocs=true -Detcd=enabled; then
  run tests meson test -C _build --no-suite stress --print-errorlogs
  # The stress run prints the auditor's figures.
  run stress meson test -C _build --suite stress --verbose
  # Python (bindings) under valgrind or ASan tests the interpreter, not us;
  # the stress driver under valgrind would audit too slowly to mean much
  # (its holders run under ASan below); the ext2 runs go through a shell
  # script (the same programs run under valgrind on the ordinary folder).
  run valgrind meson test -C _build --setup=valgrind --no-suite bindings --no-suite stress --no-suite ext2 --no-suite slurm --no-suite etcd --print-errorlogs
else
  status=1; failed=$((failed + 1))
fi
if setup _build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
  run asan meson test -C _build-asan --setup=asan --no-suite bindings --no-suite slurm --no-suite etcd --print-errorlogs
else
  status=1; failed=$((failed + 1))
fi

# Static analysis (cppcheck): clean, or each report suppressed where it
# stands with the reason.
if [ -f _build/compile_commands.json ]; then
  echo "== analyze: scripts/analyze.sh"
  start=$SECONDS
  if bash scripts/analyze.sh _build; then passed=$((passed + 1)); else status=1; failed=$((failed + 1)); fi
  echo "== analyze: $((SECONDS - start)) s"
fi

# ThreadSanitizer for the threaded core (GLib's own locks annotated by
# tests/tsan-glib.c; what no wrapper reaches is in tests/tsan.supp). As
# the README's table says, the hosts and security suites run plain and
# under ASan; here only the stress run's hosts (they are single-threaded
# command runs, and under TSan they cost minutes CI does not have).
if setup _build-tsan -Db_sanitize=thread -Db_lundef=false -Dintrospection=disabled; then
  run tsan meson test -C _build-tsan --setup=tsan --no-suite bindings --no-suite slurm --no-suite etcd \
    --no-suite namespaces --no-suite security --print-errorlogs
else
  status=1; failed=$((failed + 1))
fi

echo "== all: $SECONDS s"
echo "check: $passed passed, $failed failed"
exit $status
