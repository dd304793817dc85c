#!/bin/sh
# Install what TL needs to build and test on Debian 12, and nothing more.
# Idempotent: when every package is present it installs nothing and exits 0.
# Run as root (CI and fresh machines); as another user it only reports what
# is missing.
set -eu

pkgs="llvm-22-dev llvm-22-tools clang-22 libclang-rt-22-dev libfuzzer-22-dev
      libzstd-dev zlib1g-dev cmake ninja-build python3 python3-venv git"

missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done

if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages:$missing (run this script as root)" >&2
    exit 1
  fi
  echo "setup: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # LLVM 22 comes from bookworm-security/bookworm-updates on these machines;
  # fall back to apt.llvm.org only when Debian has no candidate.
  if ! apt-cache policy llvm-22-dev | grep -q 'Candidate: [0-9]'; then
    echo "setup: llvm-22 not in the configured apt sources; adding apt.llvm.org"
    apt-get install -y -qq --no-install-recommends wget gnupg ca-certificates
    wget -qO- https://apt.llvm.org/llvm-snapshot.gpg.key >/etc/apt/trusted.gpg.d/apt.llvm.org.asc
    echo "deb http://apt.llvm.org/bookworm/ llvm-toolchain-bookworm-22 main" \
      >/etc/apt/sources.list.d/llvm-22.list
    apt-get update -qq
  fi
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
fi

# Python test helpers: numpy, and ml_dtypes as an independent reference for
# the OCP small-float and int4 formats.
if ! python3 -c "import numpy, ml_dtypes" 2>/dev/null; then
  echo "setup: installing numpy and ml_dtypes from PyPI"
  python3 -m pip install --quiet numpy ml_dtypes ||
    python3 -m pip install --quiet --break-system-packages numpy ml_dtypes
fi

v=$(llvm-config-22 --version 2>/dev/null || true)
case "$v" in
  22.*) ;;
  *) echo "setup: llvm-config-22 reports '$v', want 22.x" >&2; exit 1 ;;
esac
