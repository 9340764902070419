#!/bin/sh
# A visible demo of contention and recovery with the `tessera` command, on
# the built-in default configuration (no configuration file): jobs contend
# for the `cpu` tokens, one holder is killed with SIGKILL, a waiting job
# gets its tokens at once, and `tessera status` shows the pool recover.
# Run it through `meson devenv -C _build sh ../scripts/demo.sh` so that
# the built command and plugins are used.
set -eu

export XDG_STATE_HOME="$(mktemp -d)"      # keep the demo's pool apart
export XDG_CONFIG_HOME="$XDG_STATE_HOME/config" XDG_CONFIG_DIRS="$XDG_STATE_HOME/config"
unset TESSERA_CONFIG
trap 'rm -rf "$XDG_STATE_HOME"' EXIT

t0=$(date +%s%N)
say() { awk -v now="$(date +%s%N)" -v t0="$t0" -v text="$*" 'BEGIN { printf "%7.2fs  %s\n", (now - t0) / 1e9, text }'; }

total=$(tessera status --json cpu | sed -n 's/.*"capacity" : \([0-9]*\).*/\1/p')
each=$(( total > 1 ? total / 2 : 1 ))
say "built-in default: cpu has $total tokens; 4 jobs want $each each, so 2 run at a time"
tessera status cpu

for n in 1 2 3 4; do
  tessera run --need cpu=$each --name job$n -- sh -c "echo \"\$(date +%T)  job$n runs (pid \$\$)\"; sleep 4; echo \"\$(date +%T)  job$n done\"" &
  sleep 0.2
done
sleep 1
say "two jobs hold the tokens, two wait:"
tessera status cpu

victim=$(tessera status --json cpu | sed -n 's/.*"pid" : \([0-9]*\).*/\1/p' | head -n 1)
say "kill -9 $victim (a holder's command, while it holds its tokens)"
kill -9 "$victim"
sleep 0.5
say "a waiting job got the tokens at once:"
tessera status cpu

wait || true
say "all jobs ended:"
tessera status cpu
