# Batch ledgers (OUT/.hark-ledger/*.jsonl), on the small random test model: one
# parseable JSON line per file with its facts; resuming skips what was done with
# the same model and options and refuses, in one line, what was done otherwise
# (another model, other options, an input changed since) unless --redo-changed;
# a process killed with SIGKILL mid-run leaves a ledger whose every line parses.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random/hf-f32
T=$TMP
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/san" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/san"
hk() { "$HARK" -m $M --beam-size 1 --temperature 0 "$@"; }
# lines FILTER: the ledgers' lines that jq's FILTER selects, counted; jq failing on
# a line that does not parse fails the check that uses it
lines() { cat $T/o/.hark-ledger/*.jsonl | jq -c "select($1)" | wc -l; }
parses() { cat "$@" | jq -e . >/dev/null 2>&1; }
if ! command -v jq >/dev/null; then skip "jq absent: make deps installs it"; summary ledger; exit; fi

mkdir -p $T/in/sub
clip_ms 3000 $T/in/a.wav; clip_ms 4000 $T/in/b.wav; clip_ms 2500 $T/in/sub/c.wav
echo "this is not audio" >$T/in/bad.wav

hk -r -o $T/o $T/in 2>$T/err; expect_eq "first run exit" $? 1
expect_eq "one ledger" "$(ls $T/o/.hark-ledger | wc -l)" 1
L=$(ls $T/o/.hark-ledger/*.jsonl)
expect_eq "its name: host, shard, pid" "$(basename $L | sed 's/[0-9]*\.jsonl$//')" "$(hostname)-all-"
parses $L && ok || bad "a ledger line does not parse: $(cat $L)"
expect_eq "lines: done, failed, end" "$(lines '.status == "done"') $(lines '.status == "failed"') $(lines '.status == "end"')" "3 1 1"
expect_eq "a done line's facts" "$(jq -r 'select(.name == "sub/c") | [.path, .size, .audio_s, .status, (.model | test("^[0-9a-f]{16}$")), (.options | length), (.wall_s > 0)] | join(" ")' $L)" \
    "$T/in/sub/c.wav $(stat -c %s $T/in/sub/c.wav) 2.5 done true 16 true"
expect_eq "the mtime" "$(jq -r 'select(.name == "a") | .mtime | floor' $L)" "$(stat -c %Y $T/in/a.wav)"
expect_eq "the failure's message" "$(jq -r 'select(.status == "failed") | .error' $L)" "$(grep "^hark: $T/in/bad.wav" $T/err | sed 's/^hark: //')"
expect_eq "the end line's audio" "$(jq -r 'select(.status == "end") | .audio_s' $L)" "9.5"

# again: skipped as done with this model and these options, each said in the ledger
hk -r -o $T/o $T/in 2>$T/err; expect_eq "rerun exit" $? 1
expect_eq "rerun summary" "$(grep -c '^hark: 0 done, 3 skipped, 1 failed; ' $T/err)" 1
expect_eq "skipped lines" "$(lines '.status == "skipped"')" 3
hk -r --dry-run -o $T/o $T/in >$T/plan 2>$T/err; expect_eq "--dry-run exit" $? 0
expect_eq "--dry-run says why" "$(sort $T/plan | tr '\n' '|')" \
    "do $T/in/bad.wav: to do|skip $T/in/a.wav: done with this model and these options|skip $T/in/b.wav: done with this model and these options|skip $T/in/sub/c.wav: done with this model and these options|"
expect_eq "--dry-run stderr and ledgers" "$(wc -c <$T/err) $(ls $T/o/.hark-ledger | wc -l)" "0 2"

# other options: refused, in one line, nothing done; the thread count is no change
cp -r $T/o $T/before
hk -r -o $T/o -t 2 $T/in >/dev/null 2>$T/err; expect_eq "-t 2 changes nothing: exit" $? 1
expect_eq "-t 2 changes nothing" "$(grep -c '^hark: 0 done, 3 skipped, 1 failed; ' $T/err)" 1
expect_error "hark: $T/o: 3 files were done with other options (the first: $T/in/a.wav); --redo-changed redoes them, --overwrite every file" \
    -m $M --beam-size 2 --temperature 0 -r -o $T/o $T/in
expect_error "hark: $T/o: 3 files were done with another model (the first: $T/in/a.wav); --redo-changed redoes them, --overwrite every file" \
    -m tests/data/tiny-random/hf-f16 --beam-size 1 --temperature 0 -r -o $T/o $T/in
diff -r -x .hark-ledger $T/before $T/o >/dev/null && ok || bad "a refused run changed the outputs"
hk -r --beam-size 2 --dry-run -o $T/o $T/in >$T/plan 2>&1
expect_eq "--dry-run: refused" "$(grep -c ': done with other options$' $T/plan) $(grep -c '^refuse ' $T/plan)" "3 3"
# an input changed since
touch -d '2001-01-01' $T/in/b.wav
expect_error "hark: $T/o: 1 file was its input changed since it was done (the first: $T/in/b.wav); --redo-changed redoes it, --overwrite every file" \
    -m $M --beam-size 1 --temperature 0 -r -o $T/o $T/in
# --redo-changed redoes exactly the changed files
hk -r --redo-changed -o $T/o $T/in 2>$T/err
expect_eq "--redo-changed: the changed file" "$(grep -c '^hark: 1 done, 2 skipped, 1 failed; ' $T/err)" 1
hk -r --beam-size 2 --redo-changed -o $T/o $T/in 2>$T/err
expect_eq "--redo-changed: other options" "$(grep -c '^hark: 3 done, 0 skipped, 1 failed; ' $T/err)" 1
expect_eq "done lines with two option digests" "$(jq -r 'select(.status == "done") | .options' $T/o/.hark-ledger/*.jsonl | sort -u | wc -l)" 2
hk -r --beam-size 2 -o $T/o $T/in 2>$T/err
expect_eq "then the new options are at home" "$(grep -c '^hark: 0 done, 3 skipped, 1 failed; ' $T/err)" 1

# SIGKILL mid-run: every line whole and parseable, each done file's outputs there,
# and the restart finishes the rest
mkdir $T/k
n=8; [ -n "${HARK_SANITIZED:-}" ] && n=5
for i in $(seq $n); do clip_ms $((2000 + 500 * i)) $T/k/f$i.wav; done
"$HARK" -m $M -j 1 -o $T/ok $T/k >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do [ "$(cat $T/ok/.hark-ledger/*.jsonl 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.05; done
{ kill -KILL $pid; wait $pid; } 2>/dev/null
parses $T/ok/.hark-ledger/*.jsonl && ok || bad "a killed process's ledger does not parse"
expect_eq "no end line after SIGKILL" "$(cat $T/ok/.hark-ledger/*.jsonl | jq -c 'select(.status == "end")' | wc -l)" 0
for f in $(cat $T/ok/.hark-ledger/*.jsonl | jq -r 'select(.status == "done") | .name'); do
    [ -f $T/ok/$f.txt ] && [ -f $T/ok/$f.json ] && ok || bad "$f is done in the ledger without its outputs"
done
expect_eq "temporary files left" "$(find $T/ok -name '*.tmp.*' | wc -l)" 0
"$HARK" -m $M -j 1 -o $T/ok $T/k 2>$T/err; expect_eq "restart exit" $? 0
expect_eq "all done in the ledgers" "$(cat $T/ok/.hark-ledger/*.jsonl | jq -r 'select(.status == "done") | .name' | sort -u | wc -l)" $n

expect_eq "sanitizer reports" "$(cat $T/san.* 2>/dev/null | head -n 40)" ""
summary ledger
