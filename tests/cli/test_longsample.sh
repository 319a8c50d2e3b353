# The 65 s multi-sentence sample: several segments whose timestamps bracket the
# known sentence boundaries within 0.5 s, and hark test passing on samples/.
# Both are the default model's targets, not properties of the engine: until the
# golden set's total WER is at most 15 % (the held-out-voice target) they are
# skipped, saying so.  Meanwhile test_model.sh holds each export to its baseline.
. "$(dirname "$0")/lib.sh"
[ -f models/hark-en-tiny/config.json ] || { skip "no default model"; summary longsample; exit; }
[ -z "${HARK_SANITIZED:-}" ] || { skip "checked in the plain run"; summary longsample; exit; }
"$HARK" test tests/golden -q --beam-size 1 --temperature 0 --max-wer 100 --report "$TMP/g.json" >/dev/null 2>&1
total=$(tr -d ' \t\n' <"$TMP/g.json" | grep -o '"total":{[^}]*' | grep -o '"wer":[0-9.e+-]*' | cut -d: -f2)
if awk -v w="${total:-1}" 'BEGIN { exit !(w > 0.15) }'; then
    skip "the default model is not at its target yet (golden WER ${total:-?} > 0.15): sentence timing and samples/ not checked"
    summary longsample; exit
fi
"$HARK" -q -f tsv samples/long-espeak-en-us.wav >"$TMP/long.tsv"; expect_eq "long sample" $? 0
segs=$(($(wc -l <"$TMP/long.tsv") - 1))
[ "$segs" -ge 5 ] && ok || bad "only $segs segments for 16 sentences"
scripts/long-brackets samples/long-espeak-en-us.json "$TMP/long.tsv" >"$TMP/brackets" && ok ||
    bad "$(head -n 1 "$TMP/brackets"): $(tail -n +2 "$TMP/brackets" | tr '\n' ' ')"
"$HARK" test samples -q --max-wer 15 >"$TMP/table" 2>&1 && ok || bad "hark test samples/: $(tail -n 3 "$TMP/table")"
summary longsample
