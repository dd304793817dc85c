#!/bin/sh
# Runs the lit suite of a build directory and ends with "N passed, N failed"
# (unsupported tests are counted as skipped). Exit status 1 when any failed.
set -u
build="$1"
out=$(mktemp)
lit-22 -v "$build/test" 2>&1 | tee "$out"
passed=$(grep -c '^PASS: ' "$out")
xfail=$(grep -c '^XFAIL: ' "$out")
failed=$(grep -c '^\(FAIL\|XPASS\|UNRESOLVED\|TIMEOUT\): ' "$out")
skipped=$(grep -c '^UNSUPPORTED: ' "$out")
total=$(grep -c '^[A-Z]*: ' "$out")
rm -f "$out"
[ "$total" -gt 0 ] || failed=$((failed + 1))
echo "$skipped skipped (unsupported here)"
echo "$((passed + xfail)) passed, $failed failed"
[ "$failed" -eq 0 ]
