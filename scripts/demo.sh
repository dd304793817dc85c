#!/bin/sh
# Set up, build and run TL's main job: compile the quick-start program with
# the default cleanup pipeline and print the result.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null
echo "== tl-opt --pass-pipeline=canonicalize,cse,dce docs/examples/quickstart.tl"
exec "$build/bin/tl-opt" --pass-pipeline=canonicalize,cse,dce \
  "$root/docs/examples/quickstart.tl"
