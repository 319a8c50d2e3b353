# The default model in models/: it loads, transcribes every sample, and the
# golden set does not regress against its committed baseline report.
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
if [ ! -f $MODEL/config.json ]; then skip "no default model in $MODEL"; summary model; exit; fi

for f in samples/*.wav; do
    "$HARK" -q "$f" >"$TMP/out" 2>"$TMP/err"; rc=$?
    expect_eq "$f transcribes" "$rc $(wc -c <"$TMP/err")" "0 0"
done
# the default model is found without -m, also from another directory
(cd "$TMP" && "$OLDPWD/$HARK" -q "$OLDPWD/samples/sample01-en-us.wav" >/dev/null 2>&1); expect_eq "found from elsewhere" $? 0

# the same output for every thread count, on the real model's shapes (default decoding)
"$HARK" -q -t 1 -f json samples/sample02-en-gb.wav >"$TMP/t1.json"
"$HARK" -q -t 2 -f json samples/sample02-en-gb.wav >"$TMP/t2.json"
cmp -s "$TMP/t1.json" "$TMP/t2.json" && ok || bad "-t 1 and -t 2 differ on the default model"

# golden regression: no file may get worse than the baseline (greedy decoding)
"$HARK" test tests/golden -q --beam-size 1 --temperature 0 --baseline tests/golden/baseline.json \
    --report "$TMP/report.json" >"$TMP/table" 2>"$TMP/err"; rc=$?
expect_eq "golden set against its baseline" "$rc" 0
[ $rc -eq 0 ] || { tail -n 5 "$TMP/table"; head -n 5 "$TMP/err"; }
grep -q '"wer"' "$TMP/report.json" && ok || bad "golden report written"
summary model
