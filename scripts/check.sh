#!/usr/bin/env bash
# Builds with -Werror and runs the whole test suite four ways: plain (the
# stress run printing its figures), under valgrind, under
# AddressSanitizer+UndefinedBehaviorSanitizer, and under ThreadSanitizer;
# then cppcheck and the translation check.
# Ends with one line "check: N passed, M failed".
#
# After the plain build, the stages run as three streams side by side:
# the plain build's tests; the sanitizer builds and their tests; the
# analysis. Most tests wait (for a lease, a poll, a child) rather than
# compute, so one stream alone leaves a 2-core machine mostly idle, and
# CI's budget is 45 minutes. What only computes (the sanitizer builds,
# cppcheck) runs at a lower priority, so the tests beside it keep the CPU
# they ask for. Within a stream the stages run one after the other, and
# the tests keep their own order (within one build tree, multi-process
# tests one at a time). A stage says when it starts; its output is
# printed whole when it ends. Interrupted (SIGINT, SIGTERM: a CI
# timeout), it stops every stream and prints what the unfinished stages
# said so far.
set -uo pipefail
cd "$(dirname "$0")/.."

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start_all=$SECONDS

# Prints its input in one piece, not interleaved with another stream's.
say() {
  { flock 9; cat; } 9>>"$logs/.print"
}

# A stage: marked started, its output in $logs/NAME.log, its exit status
# in $logs/NAME.rc, then the output printed and marked so.
run() {
  local name=$1; shift
  local start=$SECONDS rc=0
  : > "$logs/$name.started"
  echo "== $name: started ($((SECONDS - start_all)) s in): $*" | say
  "$@" > "$logs/$name.log" 2>&1 < /dev/null || rc=$?
  echo "$rc" > "$logs/$name.rc"
  {
    echo "== $name: $*"
    cat "$logs/$name.log"
    # Where CI's time goes (its budget: 45 minutes on 2 cores).
    echo "== $name: $((SECONDS - start)) s"
  } | say
  : > "$logs/$name.printed"
}

# A build tree: configured (again) and built. Returns non-zero (and
# counts one failure) if either fails.
setup() {
  local dir=$1; shift
  local rc=0
  if [ -d "$dir" ]; then
    meson setup --reconfigure "$dir" -Dwerror=true "$@" >/dev/null || rc=$?
  else
    meson setup "$dir" -Dwerror=true "$@" >/dev/null || rc=$?
  fi
  [ "$rc" -eq 0 ] && nice -n "${NICENESS:-0}" ninja -C "$dir" || rc=1
  echo "$rc" > "$logs/setup-$dir.rc"
  return "$rc"
}

# Whether the build tree $1 was set up and built.
built() {
  [ "$(cat "$logs/setup-$1.rc" 2>/dev/null || echo 1)" -eq 0 ]
}

# The same in the second stream: at a lower priority, printed as a stage.
build_niced() {
  NICENESS=10 setup "$@"
}
build() {
  run "build${1#_build}" build_niced "$@"
  built "$1"
}

# Stream 1: the plain build's tree (its tests' folders are its own).
stream_plain() {
  run tests meson test -C _build --no-suite stress --print-errorlogs
  # The stress run prints the auditor's figures.
  run stress meson test -C _build --suite stress --verbose
  # Python (bindings) under valgrind or ASan tests the interpreter, not us;
  # the stress driver under valgrind would audit too slowly to mean much
  # (its holders run under ASan below); the ext2 runs go through a shell
  # script (the same programs run under valgrind on the ordinary folder).
  run valgrind meson test -C _build --setup=valgrind --no-suite layers --no-suite bindings --no-suite stress --no-suite ext2 \
    --no-suite slurm --no-suite etcd --print-errorlogs
}

# Stream 2: the sanitizer builds and their tests.
stream_sanitizers() {
  if build _build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dpause_points=true; then
    run asan meson test -C _build-asan --setup=asan --no-suite layers --no-suite bindings --no-suite slurm --no-suite etcd \
      --print-errorlogs
  fi
  # ThreadSanitizer for the threaded core (GLib's own locks annotated by
  # tests/tsan-glib.c; what no wrapper reaches is in tests/tsan.supp). As
  # the README's table says, the hosts and security suites run plain and
  # under ASan; here only the stress run's hosts (they are single-threaded
  # command runs, and under TSan they cost minutes CI does not have).
  if build _build-tsan -Db_sanitize=thread -Db_lundef=false -Dintrospection=disabled -Dpause_points=true; then
    run tsan meson test -C _build-tsan --setup=tsan --no-suite layers --no-suite bindings --no-suite slurm --no-suite etcd \
      --no-suite namespaces --no-suite security --print-errorlogs
  fi
}

# Stream 3: static analysis (cppcheck), the shape of core/ and the
# translations: clean, or each report suppressed where it stands with the
# reason. cppcheck takes minutes of CPU (it reads GLib's headers for every
# file), which the tests leave idle.
stream_analysis() {
  run analyze nice -n 19 bash scripts/analyze.sh _build
}

# Counts what the stages' summaries say and prints the last lines; exits
# non-zero on any failure, a stage that did not end among them.
summarize() {
  local passed=0 failed=0 status=0 stage rc ok fail timeout
  local expected=()

  for dir in _build _build-asan _build-tsan; do
    [ -f "$logs/setup-$dir.rc" ] || echo "== build of $dir: did not end"
    built "$dir" || { status=1; failed=$((failed + 1)); }
  done
  built _build && expected+=(tests stress valgrind analyze)
  built _build-asan && expected+=(asan)
  built _build-tsan && expected+=(tsan)
  for stage in "${expected[@]}"; do
    # A stage that never started or ended (its stream was stopped, or
    # died) is a failure.
    if [ ! -f "$logs/$stage.started" ]; then
      echo "== $stage: did not start"
      status=1; failed=$((failed + 1))
      continue
    fi
    if [ ! -f "$logs/$stage.rc" ]; then
      echo "== $stage: did not end"
      status=1; failed=$((failed + 1))
      continue
    fi
    rc=$(cat "$logs/$stage.rc")
    [ "$rc" -eq 0 ] || status=1
    if [ "$stage" = analyze ]; then
      if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
      continue
    fi
    # meson test's summary: "Ok: N", "Fail: N", "Timeout: N", …
    ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$logs/$stage.log" | tail -1)
    fail=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$logs/$stage.log" | tail -1)
    timeout=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$logs/$stage.log" | tail -1)
    passed=$((passed + ${ok:-0}))
    failed=$((failed + ${fail:-0} + ${timeout:-0}))
    # A stage that failed with no failed test in its summary (meson
    # itself, a crash before the summary) counts once.
    if [ "$rc" -ne 0 ] && [ $((${fail:-0} + ${timeout:-0})) -eq 0 ]; then failed=$((failed + 1)); fi
  done
  echo "== all: $((SECONDS - start_all)) s"
  echo "check: $passed passed, $failed failed"
  return $status
}

# What the stages that did not print their output (stopped, or their
# stream died) said so far.
print_unprinted() {
  local log name

  for log in "$logs"/*.log; do
    [ -f "$log" ] || continue
    name=$(basename "$log" .log)
    [ -f "$logs/$name.printed" ] && continue
    echo "== $name: did not end; its output so far:"
    cat "$log"
  done
}

# Whether a process of the group $1 is still there (zombies aside).
group_alive() {
  ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

# Each stream (and the plain build) runs in a process group of its own,
# so that an interruption stops all it started: meson, which ends its
# tests within a second of a SIGTERM, and anything stopped (SIGCONT).
interrupted() {
  local code=$1 groups deadline

  trap - INT TERM
  groups=$(jobs -p)
  for g in $groups; do
    kill -TERM -- "-$g" 2>/dev/null
    kill -CONT -- "-$g" 2>/dev/null
  done
  deadline=$((SECONDS + 15))
  for g in $groups; do
    while group_alive "$g" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.2; done
    kill -KILL -- "-$g" 2>/dev/null
  done
  wait 2>/dev/null
  print_unprinted
  summarize
  exit "$code"
}
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

# Starts "$@" in the background, in a process group of its own.
spawn() {
  set -m
  "$@" < /dev/null &
  set +m
}

# The plain build first, alone (the first stream needs it). It also makes
# the GIR (warnings fatal) and the API reference (gi-docgen
# --fatal-warnings), so CI checks both. Waited for in the background, so
# a signal is handled at once, not after the build. Every tree here is a
# test build: with the pause points the race tests hold processes at.
spawn setup _build -Dintrospection=enabled -Ddocs=true -Detcd=enabled -Dpause_points=true
wait $! && plain=1 || plain=0
pids=()
if [ "$plain" -eq 1 ]; then
  spawn stream_plain
  pids+=($!)
  spawn stream_analysis
  pids+=($!)
fi
spawn stream_sanitizers
pids+=($!)
wait "${pids[@]}"

# A stream that died in a normal run: what its stages said.
print_unprinted
summarize
