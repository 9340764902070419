#!/usr/bin/env bash
# Installs what Tessera needs to build, test and run on Debian 12.
set -euo pipefail

packages=(
  meson ninja-build pkg-config gcc libc6-dev
  libglib2.0-dev libjson-glib-dev gettext
  valgrind python3 python3-prometheus-client locales cppcheck
  gobject-introspection libgirepository1.0-dev python3-gi gi-docgen
  bindfs e2fsprogs btrfs-progs mount util-linux
  slurmctld slurmd slurm-client munge
  libsoup-3.0-dev etcd-server etcd-client openssl glib-networking
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The translation test runs the command in French.
if ! locale -a 2>/dev/null | grep -qi '^fr_FR\.utf-\?8$'; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo sed -i 's/^# *\(fr_FR.UTF-8 UTF-8\)/\1/' /etc/locale.gen
  grep -q '^fr_FR.UTF-8 UTF-8' /etc/locale.gen || echo 'fr_FR.UTF-8 UTF-8' | $sudo tee -a /etc/locale.gen >/dev/null
  $sudo locale-gen >/dev/null
fi
