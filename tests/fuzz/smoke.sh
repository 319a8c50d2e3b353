#!/usr/bin/env bash
# make fuzz-smoke: every libFuzzer target over its committed corpus
# (tests/fuzz/corpus/TARGET/), first each file once (the fixed crashers, crash-*,
# among them), then a seeded run of a fixed number of inputs, bounded in time
# too.  New inputs go to a temporary directory, never into the corpus; a crash,
# leak, timeout or memory blow-up fails it, naming the input written to
# build/fuzz/artifacts/.  Needs `make fuzz`; about 90 s on 2 cores.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
art=$B/fuzz/artifacts
mkdir -p "$art"
export TMPDIR=$tmp # fuzz_model's own files
export LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -timeout: one input's seconds; -rss_limit_mb: the process's memory (and one malloc's)
COMMON=(-rss_limit_mb=2048 -timeout=30 "-artifact_prefix=$art/")
failed=0

# $1 = target, $2 = what ran, $3 = its log: the sanitizer's report and the input's name
report() {
    local file
    file=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$3" | tail -n 1)
    # from the first report to its summary line
    awk '/ERROR: |runtime error:/ { on = 1 } on { print; if (/^SUMMARY:/) exit }' "$3" |
        head -n 40
    echo "FAIL fuzz_$1: $2${file:+: input $file}"
    [ -n "$file" ] && echo "  replay: $B/fuzz/fuzz_$1 $file; once fixed, commit it as" \
        "tests/fuzz/corpus/$1/crash-NAME"
    failed=$((failed + 1))
}

# $1 = target, $2 = inputs to try, $3 = their limit in seconds
smoke() {
    local t=$1 bin=$B/fuzz/fuzz_$1 corpus=tests/fuzz/corpus/$1 log=$tmp/$1.log t0=$SECONDS
    local files=("$corpus"/*)
    if ! "$bin" "${COMMON[@]}" "${files[@]}" >"$log" 2>&1; then
        report "$t" "corpus file $(sed -n 's/^Running: //p' "$log" | tail -n 1)" "$log"
        return
    fi
    echo "ok fuzz_$t: ${#files[@]} corpus files, each once"
    mkdir -p "$tmp/$t-new"
    if ! "$bin" "${COMMON[@]}" -seed=1 -runs="$2" -max_total_time="$3" -print_final_stats=1 \
        "$tmp/$t-new" "$corpus" >"$log" 2>&1; then
        report "$t" "seeded run" "$log"
        return
    fi
    local runs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1)
    echo "ok fuzz_$t: $runs inputs from seed 1 ($cov, $(ls "$tmp/$t-new" | wc -l) new)" \
        "in $((SECONDS - t0)) s"
}

smoke model 2500 75
smoke http 200000 30
[ "$failed" -eq 0 ] || { echo "fuzz-smoke: $failed failed"; exit 1; }
echo "fuzz-smoke: passed"
