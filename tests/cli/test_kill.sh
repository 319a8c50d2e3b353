# A batch killed with SIGKILL at random moments leaves nothing behind once it is
# resumed: each resume removes the temporary outputs of the killed writer and
# ends with outputs byte-identical to an uninterrupted run's, and nothing else in
# the output tree.  Resuming keeps a live writer's temporaries, another host's,
# and names that are not hark's outputs.
. "$(dirname "$0")/lib.sh"
T=$TMP
M=tests/data/tiny-random/hf-f32
KILLS=30
[ -n "${HARK_SANITIZED:-}" ] && KILLS=8
mkdir "$T/in"
cp tests/golden/g0[1-6]-*.wav "$T/in/"
args=(-m $M -t 1 -q -f txt,json,srt,vtt,tsv,csv,lrc)
now_ms() { echo $(($(date +%s%N) / 1000000)); }

start=$(now_ms)
"$HARK" "${args[@]}" -o "$T/ref" "$T/in" 2>"$T/err"
expect_eq "uninterrupted run" "$? $(cat "$T/err")" "0 "
span=$(($(now_ms) - start + 100))
expect_eq "uninterrupted outputs" "$(ls "$T/ref" | wc -l)" 42

left=0
for k in $(seq $KILLS); do
    rm -rf "$T/out"
    "$HARK" "${args[@]}" -o "$T/out" "$T/in" 2>/dev/null &
    pid=$!
    ms=$((RANDOM * 32768 % span + RANDOM % span))
    ms=$((ms % span))
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    ls "$T/out" 2>/dev/null | grep -q '\.tmp\.' && left=$((left + 1))
    "$HARK" "${args[@]}" -o "$T/out" "$T/in" 2>"$T/err"; rc=$?
    # the ledgers are one a process (test_ledger.sh checks what a kill leaves in them)
    if [ $rc -ne 0 ] || ! diff -r -x .hark-ledger "$T/ref" "$T/out" >"$T/diff" 2>&1; then
        bad "kill $k after $ms ms: resumed with exit $rc: $(head -c 300 "$T/err") $(head -c 300 "$T/diff")"
    else
        ok
    fi
done
echo "note: $left of $KILLS kills left temporary files for the resume to remove"

# what resuming keeps: a live writer's (this shell's), another host's, not an output's
host=$(uname -n)
sh -c 'exit 0' &
dead=$!
wait $dead
cd "$T/out" || exit 1
touch "g01-train-en-us.txt.tmp.$host.$$" "g01-train-en-us.json.tmp.otherhost.$dead.1" \
      "notes.md.tmp.$host.$dead.1" "g01-train-en-us.srt.tmp.$host.$dead.1" \
      "g01-train-en-us.vtt.tmp.$dead" "g01-train-en-us.tsv.tmp.$host.$$.1"
cd - >/dev/null
"$HARK" "${args[@]}" -o "$T/out" "$T/in" 2>"$T/err"
expect_eq "resume with temporaries of others" "$? $(cat "$T/err")" "0 "
expect_eq "temporaries kept" "$(ls "$T/out" | grep '\.tmp\.' | sort | tr '\n' ' ')" \
    "g01-train-en-us.json.tmp.otherhost.$dead.1 g01-train-en-us.txt.tmp.$host.$$ notes.md.tmp.$host.$dead.1 "
summary test_kill.sh
