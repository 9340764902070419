#!/bin/sh
# Builds Tessera, installs the peers it is compared with (util-linux flock,
# GNU parallel's sem, /usr/bin/time; etcd through bootstrap.sh, which
# run.py starts on free loopback ports for the etcd store's rows and stops
# after), and prints the benchmark table.
#   ./bench/run.sh [--quick|--etcd] [BUILD_DIR]   (default _build-bench: a
#   release build, without the tests' pause points, apart from the test
#   trees; --quick: only the rows of issue 43's targets, fewer rounds, no
#   etcd; --etcd: only the etcd store's rows, beside their floors)
set -eu
cd "$(dirname "$0")/.."
quick=""
case "${1:-}" in --quick|--etcd) quick=$1; shift ;; esac
build=${1:-_build-bench}
./scripts/bootstrap.sh
missing=""
command -v sem >/dev/null || missing="$missing parallel"
[ -x /usr/bin/time ] || missing="$missing time"
command -v curl >/dev/null || missing="$missing curl"   # the etcd rows' floor
if [ -n "$missing" ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
[ -d "$build" ] || meson setup "$build" --buildtype=release >/dev/null
ninja -C "$build" >/dev/null
meson devenv -C "$build" python3 "$PWD/bench/run.py" $quick "$PWD/$build"
