#!/bin/sh
# Builds the libFuzzer targets with clang-22 (ASan+UBSan, both stopping at
# their first report) and runs each over its checked-in corpus for a
# bounded number of executions. A target fails on a crash, a timeout or
# any sanitizer report, even one the run survived; the input that caused
# it is saved as fuzz/crash-* (libFuzzer's artifact).
#   scripts/fuzz.sh [RUNS] [TARGET...]     (RUNS defaults to 20000)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
runs=${1:-20000}
[ $# -gt 0 ] && shift
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DTL_FUZZ=ON >/dev/null
cmake --build "$build"
targets="$*"
if [ -z "$targets" ]; then
  for f in "$root"/fuzz/*_fuzz.c; do
    [ -e "$f" ] || continue
    t=$(basename "$f" _fuzz.c); targets="$targets $t"
  done
fi
# Reports that a recoverable build would print and run on after.
reports='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer|SUMMARY: (Address|Undefined|Leak)Sanitizer'
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in $targets; do
  corpus="$root/fuzz/corpus/$t"
  work=$(mktemp -d)
  echo "fuzz: $t ($runs runs)"
  # New inputs go to a scratch directory; the checked-in corpus is read only.
  if ! "$build/bin/${t}_fuzz" -runs="$runs" -max_len=4096 -timeout=10 \
       -rss_limit_mb=2048 -print_final_stats=0 "$work" "$corpus" \
       -artifact_prefix="$root/fuzz/" 2>"$work.log" ||
     grep -Eq "$reports" "$work.log"; then
    tail -40 "$work.log"; echo "fuzz: $t FAILED"; status=1
  else
    echo "fuzz: $t ok"
  fi
  rm -rf "$work" "$work.log"
done
exit $status
