#!/bin/sh
# Set up, build and run the whole TL test suite; ends with "N passed, N failed".
#   scripts/test.sh [--werror] [--sanitize] [--build-dir DIR]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
werror=OFF
sanitize=OFF
while [ $# -gt 0 ]; do
  case "$1" in
    --werror) werror=ON ;;
    --sanitize) sanitize=ON; build="$root/build-asan" ;;
    --build-dir) shift; build="$1" ;;
    *) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
"$root/scripts/setup.sh"
if [ "$sanitize" = ON ]; then cc=clang-22; cxx=clang++-22; else cc=cc; cxx=c++; fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=$cc -DCMAKE_CXX_COMPILER=$cxx \
  -DTL_WERROR=$werror -DTL_SANITIZE=$sanitize >/dev/null
cmake --build "$build"
exec "$root/scripts/lit-summary.sh" "$build"
