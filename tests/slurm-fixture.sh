#!/usr/bin/env bash
# slurm-fixture.sh start|stop DIR: a private single-node Slurm (munged,
# slurmctld, slurmd) whose files all live in DIR, on free loopback ports.
# Clients find it through SLURM_CONF=DIR/slurm.conf. Needs root (as CI).
# The daemons are stopped by `stop`, and in any case once the process that
# ran `start` (the test) has ended, even if it aborted.
set -euo pipefail

action=$1
dir=$2
host=$(hostname)

# free_ports, wait_for, stop_pid
. "$(dirname "${BASH_SOURCE[0]}")/fixture-common.sh"

node_idle () { [ "$(sinfo --noheader --format=%t 2>/dev/null)" = idle ]; }
no_jobs () { [ -z "$(squeue --noheader --format=%i 2>/dev/null)" ]; }

stop_pid_file () {   # kills the daemon named by a pid file and waits for it
  [ -s "$1" ] || return 0
  stop_pid "$(cat "$1")"
}

case $action in
start)
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  chmod 755 "$dir"   # other users' clients reach munged's socket and slurm.conf
  head -c 1024 /dev/urandom >"$dir/munge.key"
  chmod 600 "$dir/munge.key"
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
    --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munged.seed"
  mapfile -t ports < <(free_ports 2)
  cat >"$dir/slurm.conf" <<CONF
ClusterName=tessera
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/linear
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=2
PrivateData=jobs
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" -i
  slurmd -f "$SLURM_CONF" -N "$host"
  # A test that aborts never calls stop: a watchdog does, once it is gone.
  owner=$PPID
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" stop "$3"' \
    watchdog "$owner" "$0" "$dir" </dev/null >/dev/null 2>&1 &
  wait_for 60 node_idle
  ;;
stop)
  export SLURM_CONF=$dir/slurm.conf
  if [ -s "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    wait_for 30 no_jobs || true
  fi
  stop_pid_file "$dir/slurmctld.pid"
  stop_pid_file "$dir/slurmd.pid"
  munged --stop --socket="$dir/munge.sock" >/dev/null 2>&1 || stop_pid_file "$dir/munged.pid"
  ;;
controller-stop)
  stop_pid_file "$dir/slurmctld.pid"
  ;;
controller-start)
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  wait_for 60 node_idle
  ;;
*)
  echo "usage: $0 start|stop|controller-stop|controller-start DIR" >&2
  exit 64
  ;;
esac
