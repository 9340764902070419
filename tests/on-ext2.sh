#!/bin/sh
# on-ext2.sh PROGRAM [ARG…]: runs a test program with TMPDIR on a fresh
# ext2 image (one-second timestamps: 128-byte inodes), loop-mounted for
# the run. Needs root, as CI has; fails without it.
set -eu
# In a mount namespace of its own: killed (a test's timeout, an aborted
# run), it leaves no mount behind, and its loop device goes with it.
if [ -z "${ON_EXT2_PRIVATE:-}" ]; then
  ON_EXT2_PRIVATE=1 exec unshare --mount --propagation private "$0" "$@"
fi
unset ON_EXT2_PRIVATE
dir=$(mktemp -d)
cleanup() { umount "$dir/mnt" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
truncate -s 64M "$dir/img"
mkfs.ext2 -q -I 128 "$dir/img" >/dev/null 2>&1
mkdir "$dir/mnt"
mount -o loop "$dir/img" "$dir/mnt"
chmod 1777 "$dir/mnt"
TMPDIR="$dir/mnt" "$@"
