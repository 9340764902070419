#!/usr/bin/env bash
# etcd-fixture.sh start DIR N | stop DIR | kill DIR K | leader DIR
# A private etcd cluster of N members (1 or 3) whose data and logs live in
# DIR, on free loopback ports. DIR/endpoints lists the client URLs, comma
# separated, in member order.
set -euo pipefail

action=$1
dir=$2

free_port () {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for () {   # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "etcd-fixture: timed out: $*" >&2; return 1; fi
    sleep 0.2
  done
}

healthy () { ETCDCTL_API=3 etcdctl --endpoints="$(cat "$dir/endpoints")" --command-timeout=2s endpoint health; }

case $action in
start)
  n=$3
  mkdir -p "$dir"
  cluster=""
  for i in $(seq 1 "$n"); do
    echo "$(free_port)" >"$dir/client-port-$i"
    echo "$(free_port)" >"$dir/peer-port-$i"
    cluster="$cluster${cluster:+,}m$i=http://127.0.0.1:$(cat "$dir/peer-port-$i")"
  done
  endpoints=""
  for i in $(seq 1 "$n"); do
    client=http://127.0.0.1:$(cat "$dir/client-port-$i")
    peer=http://127.0.0.1:$(cat "$dir/peer-port-$i")
    endpoints="$endpoints${endpoints:+,}$client"
    etcd --name "m$i" --data-dir "$dir/data-$i" \
      --listen-client-urls "$client" --advertise-client-urls "$client" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
      --initial-cluster "$cluster" --initial-cluster-state new \
      --initial-cluster-token "tessera-$$" \
      --heartbeat-interval 100 --election-timeout 1000 \
      >"$dir/log-$i" 2>&1 &
    echo $! >"$dir/pid-$i"
  done
  echo "$endpoints" >"$dir/endpoints"
  wait_for 60 healthy
  ;;
stop)
  for pidfile in "$dir"/pid-*; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    wait_for 30 sh -c "! kill -0 $pid" || kill -9 "$pid" 2>/dev/null || true
  done
  ;;
kill)
  kill -9 "$(cat "$dir/pid-$3")"
  ;;
leader)
  # The member number (1…N) of the current leader.
  for i in $(ls "$dir"/pid-* | sed 's/.*pid-//'); do
    status=$(ETCDCTL_API=3 etcdctl --endpoints="http://127.0.0.1:$(cat "$dir/client-port-$i")" \
               --command-timeout=2s endpoint status --write-out=fields 2>/dev/null) || continue
    member=$(echo "$status" | sed -n 's/^"MemberID" : //p')
    leader=$(echo "$status" | sed -n 's/^"Leader" : //p')
    if [ -n "$member" ] && [ "$member" = "$leader" ]; then echo "$i"; exit 0; fi
  done
  exit 1
  ;;
*)
  echo "usage: $0 start DIR N | stop DIR | kill DIR K | leader DIR" >&2
  exit 64
  ;;
esac
