#!/bin/sh
# on-ext2.sh PROGRAM [ARG…]: runs a test program with TMPDIR on a fresh
# ext2 image (one-second timestamps: 128-byte inodes), loop-mounted for
# the run. Needs root, as CI has; fails without it.
set -eu
dir=$(mktemp -d)
cleanup() { umount "$dir/mnt" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
truncate -s 64M "$dir/img"
mkfs.ext2 -q -I 128 "$dir/img" >/dev/null 2>&1
mkdir "$dir/mnt"
mount -o loop "$dir/img" "$dir/mnt"
chmod 1777 "$dir/mnt"
TMPDIR="$dir/mnt" "$@"
