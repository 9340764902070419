#!/usr/bin/env bash
# Static analysis: cppcheck over every file the build compiles (from
# compile_commands.json), the shape of core/, and the translations
# (scripts/check-po.sh). A report that is a false positive is suppressed
# where it stands, with a comment saying why. Fails on any report.
#
#   scripts/analyze.sh [BUILD_DIR]        (default _build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-_build}

if ! command -v cppcheck >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends cppcheck >/dev/null
fi
[ -f "$build/compile_commands.json" ] || { echo "analyze: no $build/compile_commands.json (meson setup $build first)" >&2; exit 64; }

# The shape of the house (no cycle of calls, no plugin named in core, no
# private header of core outside it); also the `layers` suite of meson test.
python3 scripts/check-layers.py .
# Every message extracted whole and translated (po/fr.po).
po_status=0
bash scripts/check-po.sh || po_status=1

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# --library=gtk teaches cppcheck GLib's macros (G_DEFINE_TYPE…).
cppcheck --project="$build/compile_commands.json" --library=gtk \
  --enable=warning,portability,performance --inline-suppr -q -j"$(nproc)" \
  --suppress=missingIncludeSystem --suppress='*:/usr/*' \
  --error-exitcode=1 2>"$out" && status=0 || status=$?
cat "$out"
if [ "$status" -eq 0 ] && [ ! -s "$out" ]; then
  echo "analyze: cppcheck $(cppcheck --version | cut -d' ' -f2): no report"
else
  echo "analyze: cppcheck reported the above"
  exit 1
fi
exit "$po_status"
