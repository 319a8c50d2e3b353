#!/usr/bin/env bash
# Runs every test binary (plain and under ASan/UBSan) and every CLI test
# script; prints the totals as the last line: "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
passed=0 failed=0 skipped=0 broken=()

tally() { # $1 = name, $2 = log file, $3 = exit status
    local line p f s
    line=$(grep -E '^# .*: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$2" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $1: exited $3 without a summary"; failed=$((failed + 1)); broken+=("$1"); return
    fi
    read -r p f s < <(echo "$line" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then failed=$((failed + 1)); fi
    if [ "$3" -ne 0 ] || [ "$f" -ne 0 ]; then broken+=("$1"); fi
    echo "$line${4:-}"
}

run() { # $1 = label, rest = command
    local label=$1 log; shift
    log=$(mktemp)
    local t0=$SECONDS
    "$@" >"$log" 2>&1
    local rc=$?
    grep -E '^(FAIL|SKIP)' "$log" | head -n 20
    if [ $rc -ne 0 ] && ! grep -qE '^# ' "$log"; then tail -n 30 "$log"; fi
    if grep -q 'Sanitizer' "$log"; then grep -A 12 'Sanitizer' "$log" | head -n 40; rc=1; fi
    tally "$label" "$log" $rc " ($((SECONDS - t0)) s)"
    rm -f "$log"
}

for t in build/tests/test_*; do run "$(basename "$t")" "$t"; done
# the layering of docs/architecture.md, read from the objects' symbols
run "deps.sh" bash tests/deps.sh build
# The sanitized and other-kernel runs take every 4th of the long lists of real-speech
# cases (tests/check.h's check_stride): at 15-20 times the cost a case, all of them
# would take minutes for errors any of them shows.
for t in build/san/tests/test_*; do run "asan+ubsan $(basename "$t")" env HARK_TEST_STRIDE=4 "$t"; done
# the reference comparisons again with the AVX2 and the portable kernels
for k in avx2 portable; do
    for t in test_parity test_ref_tiny test_longform test_decode; do
        run "HARK_KERNELS=$k $t" env HARK_KERNELS=$k HARK_TEST_STRIDE=4 build/tests/$t
    done
done
for t in tests/cli/test_*.sh; do
    run "$(basename "$t")" env HARK=build/hark bash "$t"
    run "asan+ubsan $(basename "$t")" env HARK=build/san/hark HARK_SANITIZED=1 bash "$t"
done

if [ ${#broken[@]} -gt 0 ]; then echo "failing: ${broken[*]}"; fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
