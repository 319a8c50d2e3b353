# --vad (whisper.cpp's): Silero VAD picks the speech, only it is transcribed, and
# every time reported is the file's.  A file of sample01 (3.63 s: two sentences from
# 0.0 and 2.2 s), 20 s of silence, then sample04 (3.42 s, speech from 0.26 s, so at
# 23.89 s) keeps the three sentences at their own times (without --vad the model
# starts the last at 20.00 s and garbles it); silence alone gives an empty
# transcript; bad VAD files and values fail with one line naming them.
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
if [ ! -f $MODEL/config.json ] || ! command -v sox >/dev/null; then
    skip "no default model or no sox"; # a hark with no models/ near it and no --vad-model says so
mkdir -p "$TMP/lone/bin" && cp "$HARK" "$TMP/lone/bin/hark"
(cd "$TMP/lone" && ./bin/hark --vad -m "$OLDPWD/$MODEL" "$OLDPWD/samples/sample01-en-us.wav" >out 2>err)
expect_eq "--vad without a VAD model" "$?:$(cat "$TMP/lone/err")" \
    "1:hark: --vad: no VAD model given and none found in models/: pass --vad-model FILE (a whisper.cpp ggml Silero VAD)"
summary vad; exit
fi
sox samples/sample01-en-us.wav -p pad 0 20 | sox - samples/sample04-kal16.wav "$TMP/gap.wav"
"$HARK" -q -f tsv --vad "$TMP/gap.wav" >"$TMP/vad.tsv"; expect_eq "--vad exit" $? 0
awk -F'\t' 'NR > 1 { s[++n] = $1 / 1000; e[n] = $2 / 1000 }
    END { exit !(n == 3 && s[1] < 0.3 && e[1] > 1.5 && s[2] > 1.9 && s[2] < 2.4 && e[2] < 3.8 &&
                 s[3] > 23.7 && s[3] < 24.0 && e[3] > 26.5 && e[3] < 27.3) }' "$TMP/vad.tsv" &&
    ok || bad "segments not at the file's times: $(cat "$TMP/vad.tsv")"
# the same words as each sample alone
expect_eq "--vad text" "$("$HARK" -q --vad "$TMP/gap.wav" | tr '\n' '|')" \
    "$("$HARK" -q samples/sample01-en-us.wav | tr '\n' '|')$("$HARK" -q samples/sample04-kal16.wav)|"
# srt, the words and -v lines in the file's times too
"$HARK" -q -f srt --vad --word-timestamps "$TMP/gap.wav" >"$TMP/vad.srt"
grep -q '^00:00:23,[0-9]* --> 00:00:2[67],' "$TMP/vad.srt" && ok || bad "srt: $(cat "$TMP/vad.srt")"
"$HARK" -q -f json --vad --word-timestamps "$TMP/gap.wav" >"$TMP/words.json"
grep -o '"start":[0-9.]*' "$TMP/words.json" | cut -d: -f2 | awk '$1 > 4 && $1 < 23.5 { bad = 1 }
    $1 >= 23.5 { late++ } END { exit bad || late < 10 }' && ok ||
    bad "words in the silence, or too few after it: $(cat "$TMP/words.json")"
"$HARK" -v --vad "$TMP/gap.wav" >"$TMP/v.txt" 2>/dev/null
grep -q '^\[00:23\.[0-9]* --> 00:2[67]\.[0-9]*\]  Given' "$TMP/v.txt" && ok || bad "-v: $(cat "$TMP/v.txt")"

# hark vad: the spans themselves, in seconds (with several files, each line names its
# file); the minimum speech duration leaves the last (3.2 s) alone
"$HARK" vad "$TMP/gap.wav" >"$TMP/spans"; expect_eq "hark vad exit" $? 0
expect_eq "hark vad" "$(cat "$TMP/spans")" "$(printf '0.03\t1.76\n2.15\t3.65\n23.87\t27.07')"
expect_eq "hark vad -vspd 2000" "$("$HARK" vad -vspd 2000 "$TMP/gap.wav")" "$(printf '23.87\t27.07')"
"$HARK" vad "$TMP/gap.wav" "$TMP/none.wav" samples/sample04-kal16.wav >"$TMP/spans" 2>"$TMP/err"
expect_eq "hark vad with a missing file" "$?:$(cat "$TMP/err")" "1:hark: $TMP/none.wav: No such file or directory"
expect_eq "hark vad of two files" "$(cut -f1 "$TMP/spans" | uniq -c | awk '{ print $1 }' | tr '\n' ' ')" "3 1 "
"$HARK" vad -m x "$TMP/gap.wav" >/dev/null 2>"$TMP/err"
expect_eq "hark vad -m" "$?:$(cat "$TMP/err")" \
    "2:hark: vad: unknown option -m (see hark vad --help)"
expect_eq "hark vad --help" "$("$HARK" vad --help | head -n 1; echo "rc=${PIPESTATUS[0]}")" \
    "$(printf 'usage: hark vad FILE... [VAD options]\nrc=0')"

# silence alone: no speech, no segments, an empty transcript, exit 0
sox -n -r 16000 -c 1 -b 16 "$TMP/silence.wav" trim 0 10
"$HARK" -q -f json --vad "$TMP/silence.wav" >"$TMP/s.json"; expect_eq "silence exit" $? 0
grep -q '"segments":\[\]' "$TMP/s.json" && grep -q '"text":""' "$TMP/s.json" && ok ||
    bad "silence: $(cat "$TMP/s.json")"
# a VAD model of one's own (--vad-model implies --vad), and the settings
"$HARK" -q -f tsv -vm models/silero-vad/ggml-silero-v6.bin "$TMP/gap.wav" >"$TMP/vm.tsv"
cmp -s "$TMP/vm.tsv" "$TMP/vad.tsv" && ok || bad "-vm differs from --vad"
# with a minimum of 60 s all the speech is too short: nothing transcribed
"$HARK" -q --vad -vspd 60000 "$TMP/gap.wav" >"$TMP/t.txt"
expect_eq "-vspd 60000" "$?:$(cat "$TMP/t.txt")" "0:"

# errors: one line naming the file or the value
expect_error "hark: $TMP/none.bin: No such file or directory" --vad-model "$TMP/none.bin" "$TMP/gap.wav"
head -c 500 models/silero-vad/ggml-silero-v6.bin >"$TMP/cut.bin"
expect_error "hark: $TMP/cut.bin: truncated in _model.encoder.0.reparam_conv.weight" \
    --vad-model "$TMP/cut.bin" "$TMP/gap.wav"
expect_error "hark: tests/data/tiny-random/model-f32.bin: not a Silero VAD model (its ggml header names no \"silero-16k\")" \
    --vad-model tests/data/tiny-random/model-f32.bin "$TMP/gap.wav"
"$HARK" --vad --vad-threshold 1.5 "$TMP/gap.wav" >/dev/null 2>"$TMP/err"
expect_eq "--vad-threshold 1.5" "$?:$(cat "$TMP/err")" \
    "2:hark: bad value for --vad-threshold: 1.5 (see hark --help)"
"$HARK" --vad --clip-timestamps 1,2 "$TMP/gap.wav" >/dev/null 2>"$TMP/err"
expect_eq "--vad with --clip-timestamps" "$?:$(cat "$TMP/err")" \
    "1:hark: $TMP/gap.wav: bad parameters: clip timestamps and VAD cannot be combined (VAD chooses what is transcribed)"
# a hark with no models/ near it and no --vad-model says so
mkdir -p "$TMP/lone/bin" && cp "$HARK" "$TMP/lone/bin/hark"
(cd "$TMP/lone" && ./bin/hark --vad -m "$OLDPWD/$MODEL" "$OLDPWD/samples/sample01-en-us.wav" >out 2>err)
expect_eq "--vad without a VAD model" "$?:$(cat "$TMP/lone/err")" \
    "1:hark: --vad: no VAD model given and none found in models/: pass --vad-model FILE (a whisper.cpp ggml Silero VAD)"
summary vad
