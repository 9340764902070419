# shellcheck shell=bash
# fixture-common.sh: what the daemon fixtures (etcd-fixture.sh,
# slurm-fixture.sh) share. Sourced by them, not run.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

# The fixture's name in its messages: etcd-fixture, slurm-fixture.
fixture_name=$(basename "$0" .sh)

# free_ports N: N free loopback ports, one per line, all different (bound
# together, then let go), from one start of Python.
free_ports () {
  "${TESSERA_TEST_PYTHON:-python3}" -c 'import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print("\n".join(str(s.getsockname()[1]) for s in sockets))' "$1"
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds; fails past SECONDS.
wait_for () {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "$fixture_name: timed out: $*" >&2; return 1; fi
    sleep 0.2
  done
}

# stop_pid PID: asks the daemon PID to end and waits for it; kills it
# past 30 s.
stop_pid () {
  kill "$1" 2>/dev/null || return 0
  wait_for 30 sh -c "! kill -0 $1" || kill -9 "$1" 2>/dev/null || true
}
