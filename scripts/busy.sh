#!/usr/bin/env bash
# Runs a command while the machine is kept busy, as a user's machine or a
# CI runner shared with other jobs is: CPU spinners (two per core, at the
# command's own priority) and a writer that keeps the disk's journal busy
# (1 MiB blocks, fsync'd, in a file of its own). Exits as the command does.
#
#   scripts/busy.sh meson test -C _build --suite hosts
#   BUSY_CPU=6 BUSY_IO=2 scripts/busy.sh meson test -C _build-asan --setup=asan --suite hosts
#
# Tests must pass like this: a test that a loaded machine fails is flaky
# in CI sooner or later (docs/contributing.md).
set -uo pipefail

[ $# -gt 0 ] || { echo "usage: scripts/busy.sh COMMAND [ARG…]" >&2; exit 64; }

cpu=${BUSY_CPU:-$(($(nproc) * 2))}
io=${BUSY_IO:-1}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tessera-busy.XXXXXX")
hogs=()

# Each hog leads a process group of its own (setsid): killed whole, with
# the dd it is running.
stop_hogs() {
  for pid in "${hogs[@]}"; do kill -- "-$pid" 2>/dev/null; done
  wait "${hogs[@]}" 2>/dev/null
  hogs=()
  rm -rf "$scratch"
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for ((i = 0; i < cpu; i++)); do
  setsid bash -c 'while :; do :; done' &
  hogs+=($!)
done
for ((i = 0; i < io; i++)); do
  setsid bash -c 'while :; do dd if=/dev/zero of="$1" bs=1M count=256 conv=fsync status=none; done' busy "$scratch/io$i" &
  hogs+=($!)
done

"$@"
