# The 65 s multi-sentence sample through long-form transcription with default decoding.
# Always: several segments, none misplaced (each starts and ends within 0.5 s of a known
# sentence boundary), and at least as many of the 16 sentences bracketed as the default
# model's card records (so a regression in seeking, timestamp rules or the model fails).
# The targets, all 16 bracketed and hark test passing on samples/, are the default model's
# to meet, not the engine's: until the golden set's total WER is at most 15 % (the
# held-out-voice target) they are skipped, saying so.
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
[ -f $MODEL/config.json ] || { skip "no default model"; summary longsample; exit; }
[ -z "${HARK_SANITIZED:-}" ] || { skip "checked in the plain run"; summary longsample; exit; }
"$HARK" -q -f tsv samples/long-espeak-en-us.wav >"$TMP/long.tsv"; expect_eq "long sample" $? 0
segs=$(($(wc -l <"$TMP/long.tsv") - 1))
[ "$segs" -ge 5 ] && ok || bad "only $segs segments for 16 sentences"
scripts/long-brackets samples/long-espeak-en-us.json "$TMP/long.tsv" >"$TMP/brackets"; all=$?
got=$(sed -n '1s/ of .*//p' "$TMP/brackets")
card=$(grep -o '[0-9]* of 16 sentences bracketed' $MODEL/README.md | cut -d' ' -f1)
[ -n "$card" ] && [ "${got:-0}" -ge "$card" ] && ok ||
    bad "$got sentences bracketed, the model card records ${card:-nothing}: $(tail -n +3 "$TMP/brackets" | tr '\n' ' ')"
expect_eq "misplaced segments" "$(sed -n '2s/ of .*//p' "$TMP/brackets")" 0

"$HARK" test tests/golden -q --beam-size 1 --temperature 0 --max-wer 100 --report "$TMP/g.json" >/dev/null 2>&1
total=$(tr -d ' \t\n' <"$TMP/g.json" | grep -o '"total":{[^}]*' | grep -o '"wer":[0-9.e+-]*' | cut -d: -f2)
if awk -v w="${total:-1}" 'BEGIN { exit !(w > 0.15) }'; then
    skip "the default model is not at its target yet (golden WER ${total:-?} > 0.15): all 16 sentences and samples/ not checked"
    summary longsample; exit
fi
[ $all -eq 0 ] && ok || bad "$(head -n 2 "$TMP/brackets" | tr '\n' ' '): $(tail -n +3 "$TMP/brackets" | tr '\n' ' ')"
"$HARK" test samples -q --max-wer 15 >"$TMP/table" 2>&1 && ok || bad "hark test samples/: $(tail -n 3 "$TMP/table")"
summary longsample
