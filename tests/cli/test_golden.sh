# hark test on the small random test model: golden manifests and directories,
# thresholds, baselines, JSON and JUnit reports, and broken inputs.  The
# model's transcript is deterministic gibberish, so the goldens are made from
# its own output first, never written down here.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random/hf-f32
CLIP=tests/data/clip.wav
DECODE=(-m $M --beam-size 1 --temperature 0) # greedy: quick under the sanitizers

# golden DIR/NAME [EXTRA WORDS]: writes the manifest line for DIR/NAME to stdout
golden() { printf '%s\t%s%s\n' "$1" "$HYP" "${2:+ $2}"; }
# hark_test ARGS...: runs hark test, keeping stdout, stderr and the exit status
hark_test() { "$HARK" test "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; }
row() { grep -E "^$1 " "$TMP/out" | awk '{print $NF}'; }
has_err() { grep -qF -- "$1" "$TMP/err" && ok || bad "stderr lacks [$1]: $(head -c 400 "$TMP/err")"; }

# The hypothesis, as `hark FILE` prints it, on one line.
"$HARK" "${DECODE[@]}" $CLIP >"$TMP/hyp.txt"; expect_eq "transcribe exit" $? 0
HYP=$(tr '\n' ' ' <"$TMP/hyp.txt")
cp $CLIP "$TMP/a.wav"; cp $CLIP "$TMP/b.wav"; cp $CLIP "$TMP/abs.wav"

# --- a manifest of matching transcripts passes with WER 0 --------------------
{ echo "# golden transcripts"; golden a.wav; echo; golden b.wav; golden "$TMP/abs.wav"; } >"$TMP/m.tsv"
hark_test "$TMP/m.tsv" "${DECODE[@]}"
expect_eq "passing manifest exit" $RC 0
expect_eq "passing manifest stderr" "$(cat "$TMP/err")" ""
expect_eq "rows in sorted order" "$(awk 'NR > 1 {print $1}' "$TMP/out" | tr '\n' ' ')" "$TMP/abs.wav a.wav b.wav TOTAL "
expect_eq "header" "$(head -n 1 "$TMP/out" | tr -s ' ')" "file WER % CER % ref words result"
expect_eq "total row" "$(grep '^TOTAL' "$TMP/out" | awk '{print $2, $3, $NF}')" "0.0 0.0 PASS"
expect_eq "a.wav passes" "$(row a.wav)" PASS
N=$(grep '^a.wav ' "$TMP/out" | awk '{print $4}')
[ "${N:-0}" -gt 0 ] && ok || bad "the test model's transcript has no words to score: [$HYP]"

# --- a directory of x.wav + x.txt pairs ------------------------------------
mkdir "$TMP/dir"
cp $CLIP "$TMP/dir/b.wav"; printf '%s\n' "$HYP" >"$TMP/dir/b.txt"
if sox $CLIP "$TMP/dir/a.flac" 2>/dev/null; then A=a.flac; else A=a.wav; cp $CLIP "$TMP/dir/a.wav"; fi
printf '%s' "$HYP" >"$TMP/dir/a.txt"
cp $CLIP "$TMP/dir/extra.wav"; echo "not audio" >"$TMP/dir/notes.md"
hark_test "$TMP/dir" "${DECODE[@]}"
expect_eq "passing directory exit" $RC 0
expect_eq "directory rows" "$(awk 'NR > 1 {print $1, $NF}' "$TMP/out" | tr '\n' ' ')" "$A PASS b.wav PASS TOTAL PASS "
expect_eq "audio without a transcript" "$(cat "$TMP/err")" "hark: test: $TMP/dir/extra.wav: no extra.txt beside it, skipped"
echo "$HYP zebra" >"$TMP/dir/b.txt"
hark_test "$TMP/dir" "${DECODE[@]}"
expect_eq "altered directory exit" $RC 1
has_err "hark: test: b.wav: WER "
expect_eq "altered directory rows" "$(awk 'NR > 1 && NR < 5 {print $1, $NF}' "$TMP/out" | tr '\n' ' ')" "$A PASS b.wav FAIL TOTAL FAIL "

# --- one altered transcript fails, naming the file ---------------------------
{ golden a.wav; golden b.wav zebra; } >"$TMP/alt.tsv"
hark_test "$TMP/alt.tsv" "${DECODE[@]}"
expect_eq "altered exit" $RC 1
WER_B=$(awk -v n="$N" 'BEGIN {printf "%.1f", 100 / (n + 1)}') # one deletion in N + 1 words
expect_eq "altered stderr" "$(cat "$TMP/err")" "hark: test: b.wav: WER $WER_B% > 0.0%"
expect_eq "altered rows" "$(row a.wav) $(row b.wav) $(row TOTAL)" "PASS FAIL FAIL"
grep -q '^FAIL b.wav: hypothesis ".*" reference ".* zebra"$' "$TMP/out" && ok || bad "failing file's hypothesis and reference"
grep -q '^1 of 2 files failed$' "$TMP/out" && ok || bad "failure count line"

# --- --max-wer and --max-total-wer ------------------------------------------
pct() { awk -v n="$N" -v f="$1" -v d="$2" 'BEGIN {printf "%.4f", f * 100 / (n * d + 1)}'; }
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --max-wer "$(pct 1.01 1)"
expect_eq "--max-wer above the file's WER exit" $RC 0
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --max-wer "$(pct 0.99 1)"
expect_eq "--max-wer below the file's WER exit" $RC 1
has_err "hark: test: b.wav: WER "
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --max-wer 100 --max-total-wer "$(pct 0.99 2)"
expect_eq "--max-total-wer below the total exit" $RC 1
expect_eq "--max-total-wer stderr" "$(grep -c '^hark: test: total WER .*% > .*%$' "$TMP/err")" 1
expect_eq "--max-total-wer rows" "$(row b.wav) $(row TOTAL)" "PASS FAIL"
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --max-wer 100 --max-total-wer "$(pct 1.01 2)%"
expect_eq "--max-total-wer above the total exit" $RC 0

# --- --report and --junit ----------------------------------------------------
mkdir "$TMP/rep"
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --report "$TMP/rep/r.json" --junit "$TMP/rep/j.xml"
expect_eq "reports exit" $RC 1
expect_eq "only the reports are left" "$(ls "$TMP/rep" | tr '\n' ' ')" "j.xml r.json "
tr '\t' ' ' <"$TMP/rep/r.json" >"$TMP/r.txt" # cJSON indents with tabs
for field in '"path": "a.wav"' '"path": "b.wav"' '"reference": ' '"hypothesis": ' '"wer": 0,' \
    '"cer": 0,' "\"ref_words\": $N," '"errors": 1,' '"deletions": 1,' '"pass": false' \
    '"pass": true' '"total": {' '"options": {' '"max_wer": 0,' '"beam_size": 1,' \
    '"word_timestamps": false,' '"hallucination_silence_threshold": null,' \
    "\"reasons\": [\"WER $WER_B% > 0.0%\"]"; do
    grep -qF -- "$field" "$TMP/r.txt" && ok || bad "report lacks $field"
done
expect_eq "junit testcases" "$(grep -c '<testcase ' "$TMP/rep/j.xml")" 2
expect_eq "junit failures" "$(grep -c '<failure ' "$TMP/rep/j.xml")" 1
grep -A1 'name="b.wav"' "$TMP/rep/j.xml" | grep -qF "<failure message=\"WER $WER_B% &gt; 0.0%\">" && ok || bad "junit failure of b.wav"
grep -qF '<testsuite name="hark test ' "$TMP/rep/j.xml" && grep -qF 'tests="2" failures="1"' "$TMP/rep/j.xml" && ok || bad "junit testsuite counts"
if command -v xmllint >/dev/null; then xmllint --noout "$TMP/rep/j.xml" && ok || bad "junit is not well-formed XML"; fi
if command -v jq >/dev/null; then jq -e '.files[1].wer > 0 and .total.pass == false' "$TMP/rep/r.json" >/dev/null && ok || bad "report is not the JSON expected"; fi

# --temperature-increment-on-fallback (openai's): np.arange(T, 1 + 1e-6, X) in
# either order, recorded as the ladder it spells out; T is 0 without --temperature
ladder() { hark_test "$TMP/m.tsv" -m $M --beam-size 1 "$@" --report "$TMP/lad.json"
           tr -d '\t\n' <"$TMP/lad.json" | grep -o '"temperature":\[[^]]*\]'; }
L1=$(ladder --temperature 0.3,0.45,0.6,0.75,0.9)
expect_eq "ladder from 0.3 by 0.15" "$(ladder --temperature 0.3 --temperature-increment-on-fallback 0.15)" "$L1"
expect_eq "the options in either order" "$(ladder --temperature-increment-on-fallback 0.15 --temperature 0.3)" "$L1"
expect_eq "ladder from 0 by 0.3" "$(ladder --temperature-increment-on-fallback 0.3)" "$(ladder --temperature 0,0.3,0.6,0.9)"
[ "$L1" != "$(ladder --temperature 0.3)" ] && ok || bad "the increment changed nothing: $L1"

hark_test "$TMP/m.tsv" "${DECODE[@]}" --report "$TMP/nodir/r.json" --junit "$TMP/j2.xml"
expect_eq "unwritable report exit" $RC 1
expect_eq "unwritable report message" "$(cat "$TMP/err")" "hark: test: $TMP/nodir/r.json: cannot write (No such file or directory)"
[ -s "$TMP/j2.xml" ] && ok || bad "junit not written when the JSON report could not be"

# a reference that is not UTF-8: the reports replace what is not a character as
# Python's errors="replace" does (one U+FFFD per maximal subpart), still valid
printf 'a.wav\tcaf\xe2\x82 x\xc1\x82\n' >"$TMP/bytes.tsv"
hark_test "$TMP/bytes.tsv" "${DECODE[@]}" --report "$TMP/bytes.json" --junit "$TMP/bytes.xml"
expect_eq "non-UTF-8 reference exit" $RC 1
tr '\t' ' ' <"$TMP/bytes.json" |
    grep -qF "$(printf '"reference": "caf\xef\xbf\xbd x\xef\xbf\xbd\xef\xbf\xbd"')" && ok ||
    bad "report's reference: $(grep '"reference"' "$TMP/bytes.json")"
for f in "$TMP/bytes.json" "$TMP/bytes.xml"; do
    iconv -f UTF-8 -t UTF-8 "$f" >/dev/null 2>&1 && ok || bad "$f is not valid UTF-8"
done

# --- --baseline --------------------------------------------------------------
hark_test "$TMP/alt.tsv" "${DECODE[@]}" --baseline "$TMP/rep/r.json"
expect_eq "equal to the baseline exit" $RC 0
expect_eq "equal to the baseline stderr" "$(cat "$TMP/err")" ""
{ golden a.wav; golden b.wav "zebra zebra"; cat "$TMP/m.tsv" | grep abs.wav; } >"$TMP/worse.tsv"
hark_test "$TMP/worse.tsv" "${DECODE[@]}" --baseline "$TMP/rep/r.json"
expect_eq "worse than the baseline exit" $RC 1
WORSE=$(awk -v n="$N" 'BEGIN {printf "%.1f", 200 / (n + 2)}')
expect_eq "worse than the baseline stderr" "$(cat "$TMP/err")" "hark: test: b.wav: WER got worse than the baseline ($WER_B% -> $WORSE%)"
expect_eq "a file new to the baseline" "$(grep -F "$TMP/abs.wav " "$TMP/out" | awk '{print $(NF-1), $NF}')" "PASS (new)"
hark_test "$TMP/m.tsv" "${DECODE[@]}" --baseline "$TMP/rep/r.json"
expect_eq "better than the baseline exit" $RC 0

# --- a file that cannot be transcribed fails; the others are still scored ----
{ golden a.wav; printf 'missing.wav\tsome words\n'; golden b.wav; } >"$TMP/miss.tsv"
hark_test "$TMP/miss.tsv" "${DECODE[@]}"
expect_eq "missing audio exit" $RC 1
has_err "hark: test: missing.wav: $TMP/missing.wav: "
expect_eq "missing audio rows" "$(row a.wav) $(row b.wav) $(row missing.wav) $(row TOTAL)" "PASS PASS FAIL FAIL"

# a voice memo (m4a) with its transcript in a directory: taken, and failed with what to do
mkdir "$TMP/memos" && cp $CLIP "$TMP/memos/b.wav" && printf '%s\n' "$HYP" >"$TMP/memos/b.txt"
{ printf '\x00\x00\x00\x20ftypM4A '; head -c 99 /dev/zero; } >"$TMP/memos/m.m4a"; echo "words" >"$TMP/memos/m.txt"
hark_test "$TMP/memos" "${DECODE[@]}"
expect_eq "m4a case exit, rows" "$RC $(row b.wav) $(row m.m4a)" "1 PASS FAIL"
has_err "$TMP/memos/m.m4a: an MP4/M4A file (AAC or other audio in an MPEG-4 container): hark decodes it with ffmpeg"

# --- broken manifests and baselines: one clear line, nothing transcribed ----
{ golden a.wav; echo "b.wav has no tab"; } >"$TMP/bad.tsv"
expect_error "hark: test: $TMP/bad.tsv:2: expected audio_path<TAB>transcript, found no tab" test "$TMP/bad.tsv" "${DECODE[@]}"
printf '\tno path\n' >"$TMP/bad2.tsv"
expect_error "hark: test: $TMP/bad2.tsv:1: no audio path before the tab" test "$TMP/bad2.tsv" "${DECODE[@]}"
{ golden a.wav; golden b.wav; golden a.wav; } >"$TMP/dup.tsv"
expect_error "hark: test: $TMP/dup.tsv:3: a.wav is listed twice (also on line 1)" test "$TMP/dup.tsv" "${DECODE[@]}"
printf '# nothing\n\n' >"$TMP/empty.tsv"
expect_error "hark: test: $TMP/empty.tsv: no test cases in it" test "$TMP/empty.tsv" "${DECODE[@]}"
expect_error "hark: test: $TMP/none.tsv: No such file or directory" test "$TMP/none.tsv" "${DECODE[@]}"
echo '{"files": [{"path": "a.wav"}]}' >"$TMP/bad.json"
expect_error "hark: test: $TMP/bad.json: not a hark test --report (files with path and wer)" test "$TMP/m.tsv" --baseline "$TMP/bad.json" "${DECODE[@]}"

# --- usage errors exit 2 -----------------------------------------------------
hark_test; expect_eq "no manifest exit" $RC 2
hark_test "$TMP/m.tsv" --max-wer ten; expect_eq "bad --max-wer exit" $RC 2
expect_eq "bad --max-wer message" "$(cat "$TMP/err")" "hark: test: bad value for --max-wer: ten (a percentage such as 10 or 2.5)"
hark_test "$TMP/m.tsv" --frobnicate; expect_eq "unknown option exit" $RC 2
expect_eq "unknown option message" "$(cat "$TMP/err")" "hark: test: unknown option --frobnicate (see hark test --help)"
# underscored spellings, as openai's CLI writes its options, are taken (a bad value shows it)
hark_test "$TMP/m.tsv" --max_total_wer ten; expect_eq "underscored test option" "$RC:$(cat "$TMP/err")" \
    "2:hark: test: bad value for --max-total-wer: ten (a percentage such as 10 or 2.5)"
hark_test "$TMP/m.tsv" --beam_size 100; expect_eq "underscored decoding option" "$RC:$(cat "$TMP/err")" \
    "2:hark: bad value for --beam-size: 100 (see hark --help)"
hark_test "$TMP/m.tsv" "$TMP/alt.tsv"; expect_eq "two manifests exit" $RC 2
hark_test "$TMP/m.tsv" --report; expect_eq "--report without a file exit" $RC 2
hark_test --help; expect_eq "help exit" $RC 0
grep -q '^usage: hark test MANIFEST|DIR' "$TMP/out" && ok || bad "hark test --help"
summary golden
