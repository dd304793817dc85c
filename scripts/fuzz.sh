#!/bin/sh
# Builds the libFuzzer targets with clang-22 (ASan+UBSan, both stopping at
# their first report) and runs each over its checked-in corpus for a
# bounded number of executions. A target fails on a crash, a timeout or
# any sanitizer report, even one the run survived; the input that caused
# it is saved as fuzz/crash-* (libFuzzer's artifact).
#   scripts/fuzz.sh [RUNS] [TARGET...]     (RUNS defaults to 20000)
#   scripts/fuzz.sh --reseed [TARGET...]
# --reseed rebuilds the checked-in corpora instead: the candidates of
# fuzz/seed.py (the kernel library and the test inputs) and the corpus as
# it is, minimised by libFuzzer's -merge=1 to the inputs that add coverage
# (edges, not hit counts: -use_counters=0),
# named after the candidate they came from; regress-* inputs (ones that
# once failed) are always kept. TL_FUZZ_BUILD names the build directory
# (default build-fuzz).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build="${TL_FUZZ_BUILD:-$root/build-fuzz}"
reseed=0
if [ "${1:-}" = --reseed ]; then
  reseed=1; shift
else
  runs=${1:-20000}
  [ $# -gt 0 ] && shift
fi
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
# The longest input of a target: whole kernels of the library for the
# targets that read tl text (decode_attn.tl is 42 KB without comments).
max_len() {
  case $1 in
    parser|vm) echo 65536 ;;
    *) echo 4096 ;;
  esac
}
# Reports that a recoverable build would print and run on after.
reports='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer|SUMMARY: (Address|Undefined|Leak)Sanitizer'
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

if [ $reseed = 1 ]; then
  for t in $targets; do
    corpus="$root/fuzz/corpus/$t"
    work=$(mktemp -d)
    mkdir -p "$corpus" "$work/new"
    python3 "$root/fuzz/seed.py" "$work/seeds" "$t"
    mkdir -p "$work/seeds/$t"
    for f in "$corpus"/regress-*; do
      [ -e "$f" ] && cp "$f" "$work/new/"
    done
    "$build/bin/${t}_fuzz" -merge=1 -use_counters=0 -max_len="$(max_len "$t")" -timeout=10 \
      -rss_limit_mb=2048 "$work/new" "$corpus" "$work/seeds/$t" \
      >"$work/log" 2>&1 || { tail -20 "$work/log"; exit 1; }
    # -merge names what it adds by content (SHA-1): give each back the
    # name of the candidate or corpus file it came from.
    for f in "$corpus"/* "$work/seeds/$t"/*; do
      [ -e "$f" ] || continue
      h=$(sha1sum <"$f" | cut -c1-40)
      [ -e "$work/new/$h" ] && mv "$work/new/$h" "$work/new/$(basename "$f")"
    done
    find "$corpus" -maxdepth 1 -type f ! -name 'regress-*' -delete
    cp "$work/new"/* "$corpus/"
    echo "fuzz: $t: $(ls "$corpus" | wc -l) inputs, $(du -sk "$corpus" | cut -f1) KB"
    rm -rf "$work"
  done
  exit 0
fi

status=0
for t in $targets; do
  corpus="$root/fuzz/corpus/$t"
  work=$(mktemp -d)
  echo "fuzz: $t ($runs runs)"
  # New inputs go to a scratch directory; the checked-in corpus is read only.
  if ! "$build/bin/${t}_fuzz" -runs="$runs" -max_len="$(max_len "$t")" -timeout=10 \
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
