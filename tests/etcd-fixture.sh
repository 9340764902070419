#!/usr/bin/env bash
# etcd-fixture.sh start DIR N [tls] | stop DIR | kill DIR K | freeze DIR K | thaw DIR K | leader DIR
# A private etcd cluster of N members (1 or 3) whose data and logs live in
# DIR, on free loopback ports. DIR/endpoints lists the client URLs, comma
# separated, in member order. With "tls", clients speak https and must
# show a certificate: openssl makes a CA (DIR/ca.pem), the members'
# certificate for 127.0.0.1 and a client's (DIR/client.pem, its key
# DIR/client-key.pem), and another CA that signed nothing (DIR/other-ca.pem). The members are stopped by `stop`, and in
# any case once the process that ran `start` (the test) has ended, even if
# it aborted.
#
# The members' data (their write-ahead log, synced at every write) goes on
# a tmpfs (/dev/shm) when there is one: on a busy disk one sync can take
# seconds, more than a test's lease survives. ETCD_FIXTURE_DATA=FOLDER puts
# it in FOLDER instead (the benchmark: a disk, as a real cluster has).
set -euo pipefail

action=$1
dir=$2

# free_ports, wait_for, stop_pid
. "$(dirname "${BASH_SOURCE[0]}")/fixture-common.sh"

healthy () {
  local tls=()
  if [ -e "$dir/ca.pem" ]; then
    tls=(--cacert "$dir/ca.pem" --cert "$dir/client.pem" --key "$dir/client-key.pem")
  fi
  ETCDCTL_API=3 etcdctl --endpoints="$(cat "$dir/endpoints")" --command-timeout=2s "${tls[@]}" endpoint health
}

# make_certificates DIR: a CA, a server certificate for 127.0.0.1 and a
# client certificate signed by it, and an unrelated CA.
make_certificates () {
  local d=$1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=tessera test CA" \
    -keyout "$d/ca-key.pem" -out "$d/ca.pem" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=another CA" \
    -keyout "$d/other-ca-key.pem" -out "$d/other-ca.pem" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$d/server.ext"
  printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
  for who in server client; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=tessera test $who" \
      -keyout "$d/$who-key.pem" -out "$d/$who.csr" 2>/dev/null
    openssl x509 -req -in "$d/$who.csr" -CA "$d/ca.pem" -CAkey "$d/ca-key.pem" -CAcreateserial \
      -days 2 -extfile "$d/$who.ext" -out "$d/$who.pem" 2>/dev/null
  done
}

case $action in
start)
  n=$3
  mode=${4:-}
  scheme=http
  tls=()
  mkdir -p "$dir"
  if [ "$mode" = tls ]; then
    make_certificates "$dir"
    scheme=https
    tls=(--cert-file "$dir/server.pem" --key-file "$dir/server-key.pem"
         --trusted-ca-file "$dir/ca.pem" --client-cert-auth)
  fi
  mapfile -t ports < <(free_ports $((2 * n)))
  [ ${#ports[@]} -eq $((2 * n)) ] || { echo "etcd-fixture: no free ports" >&2; exit 1; }
  # Each member reserves a 64 MB write-ahead log at once: /dev/shm only
  # with room for them (a container's is often 64 MB in all).
  data_parent=${ETCD_FIXTURE_DATA:-}
  if [ -z "$data_parent" ] && [ -d /dev/shm ] && [ -w /dev/shm ] &&
     [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -ge $((n * 80 * 1024)) ]; then
    data_parent=/dev/shm
  fi
  data=$dir
  if [ -n "$data_parent" ]; then
    data=$(mktemp -d "$data_parent/tessera-etcd.XXXXXX")
  fi
  echo "$data" >"$dir/data-root"
  cluster=""
  for i in $(seq 1 "$n"); do
    echo "${ports[$((2 * i - 2))]}" >"$dir/client-port-$i"
    echo "${ports[$((2 * i - 1))]}" >"$dir/peer-port-$i"
    cluster="$cluster${cluster:+,}m$i=http://127.0.0.1:$(cat "$dir/peer-port-$i")"
  done
  endpoints=""
  for i in $(seq 1 "$n"); do
    client=$scheme://127.0.0.1:$(cat "$dir/client-port-$i")
    peer=http://127.0.0.1:$(cat "$dir/peer-port-$i")
    endpoints="$endpoints${endpoints:+,}$client"
    etcd --name "m$i" --data-dir "$data/data-$i" \
      --listen-client-urls "$client" --advertise-client-urls "$client" \
      --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
      --initial-cluster "$cluster" --initial-cluster-state new \
      --initial-cluster-token "tessera-$$" \
      --heartbeat-interval 100 --election-timeout 1000 "${tls[@]}" \
      >"$dir/log-$i" 2>&1 &
    echo $! >"$dir/pid-$i"
  done
  echo "$endpoints" >"$dir/endpoints"
  # A test that aborts never calls stop: a watchdog does, once it is gone.
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3"' \
    watchdog "$PPID" "$0" "$dir" </dev/null >/dev/null 2>&1 &
  wait_for 60 healthy
  ;;
stop)
  for pidfile in "$dir"/pid-*; do
    [ -e "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -CONT "$pid" 2>/dev/null || true
    stop_pid "$pid"
  done
  # The data folder made elsewhere (a tmpfs) goes with the members.
  if [ -e "$dir/data-root" ]; then
    data=$(cat "$dir/data-root")
    case $data in
      */tessera-etcd.*) [ "$data" != "$dir" ] && rm -rf "$data" ;;
    esac
  fi
  ;;
kill)
  # Already gone (it crashed, say under load) is as good: it is not there.
  kill -9 "$(cat "$dir/pid-$3")" 2>/dev/null || echo "etcd-fixture: member $3 had already stopped" >&2
  ;;
freeze)
  kill -STOP "$(cat "$dir/pid-$3")"
  ;;
thaw)
  kill -CONT "$(cat "$dir/pid-$3")"
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
  echo "usage: $0 start DIR N [tls] | stop DIR | kill DIR K | freeze DIR K | thaw DIR K | leader DIR" >&2
  exit 64
  ;;
esac
