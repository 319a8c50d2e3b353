# The 65 s multi-sentence sample through long-form transcription with default decoding
# (issue 4's proof with the default model): several segments, every one of the 16
# sentences bracketed (a segment starts within 0.5 s of its start and one ends within
# 0.5 s of its end) and no segment misplaced (each starts and ends near a known
# sentence boundary), so a regression in seeking, the timestamp rules or the model
# fails; the model card must record the same.
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
[ -f $MODEL/config.json ] || { skip "no default model"; summary longsample; exit; }
[ -z "${HARK_SANITIZED:-}" ] || { skip "checked in the plain run"; summary longsample; exit; }
"$HARK" -q -f tsv samples/long-espeak-en-us.wav >"$TMP/long.tsv"; expect_eq "long sample" $? 0
segs=$(($(wc -l <"$TMP/long.tsv") - 1))
[ "$segs" -ge 5 ] && ok || bad "only $segs segments for 16 sentences"
scripts/long-brackets samples/long-espeak-en-us.json "$TMP/long.tsv" >"$TMP/brackets" && ok ||
    bad "$(head -n 2 "$TMP/brackets" | tr '\n' ' '): $(tail -n +3 "$TMP/brackets" | tr '\n' ' ')"
grep -q '16 of 16 sentences bracketed, 0 of 16 segments misplaced' $MODEL/README.md && ok ||
    bad "the model card does not record 16 of 16 sentences bracketed, 0 misplaced"
summary longsample
