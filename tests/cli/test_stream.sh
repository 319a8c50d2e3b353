# hark stream: raw 16 kHz PCM transcribed as it comes, whisper.cpp's stream windows:
# each final line is what hark says of that window's audio alone, whether the audio
# comes at once or slowly, raw or as a WAV stream; bad input and options fail in a line.
. "$(dirname "$0")/lib.sh"
if [ ! -f models/hark-en-tiny/config.json ]; then
    skip "no default model"; summary stream; exit
fi
S1=samples/sample01-en-us.wav LONG=samples/long-espeak-en-us.wav
GREEDY=(-q --no-timestamps --beam-size 1)
sox $S1 -t raw "$TMP/s1.raw" && sox $LONG -t raw "$TMP/long.raw"
# what hark says of samples FROM for N (sox's trim, in samples) with options
says() { sox $LONG "$TMP/slice.wav" trim "$1"s "$2"s && "$HARK" "${GREEDY[@]}" "${@:3}" "$TMP/slice.wav"; }

# shorter than a step: one line, the whole clip's transcript
"$HARK" stream <"$TMP/s1.raw" >"$TMP/out" 2>"$TMP/err"
expect_eq "one short clip: exit, stderr" "$? $(cat "$TMP/err")" "0 "
expect_eq "one short clip" "$(cat "$TMP/out")" "$("$HARK" "${GREEDY[@]}" $S1)"
# the same as a WAV stream (arecord's without -t raw), from a FIFO, slowly
sox $S1 -t wav - | "$HARK" stream >"$TMP/wav-out" 2>"$TMP/err"
expect_eq "WAV stream: exit, stderr, text" "$? $(cat "$TMP/err") $(cat "$TMP/wav-out")" "0  $(cat "$TMP/out")"
mkfifo "$TMP/fifo"
{ head -c 30000 "$TMP/s1.raw"; sleep 0.5; tail -c +30001 "$TMP/s1.raw"; } >"$TMP/fifo" &
"$HARK" stream "$TMP/fifo" >"$TMP/slow" 2>"$TMP/err"
expect_eq "slow FIFO: exit, stderr, text" "$? $(cat "$TMP/err") $(cat "$TMP/slow")" "0  $(cat "$TMP/out")"

# the long sample, steps of 2 s in windows of 6 s: a line is final every 2 steps, the
# first of 0-4 s, the k-th (k >= 2) of 4k-4.2 to 4k s (the 0.2 s kept, then 4 s new)
head -c 262400 "$TMP/long.raw" >"$TMP/head.raw" # its first 8.2 s: 3 lines
"$HARK" stream --step 2000 --length 6000 "$TMP/head.raw" >"$TMP/lines" 2>"$TMP/err"
expect_eq "long: exit, stderr, lines" "$? $(cat "$TMP/err") $(wc -l <"$TMP/lines")" "0  3"
expect_eq "long: line 1" "$(sed -n 1p "$TMP/lines")" "$(says 0 64000)"
expect_eq "long: line 2" "$(sed -n 2p "$TMP/lines")" "$(says 60800 67200)"
# --keep-context: a line prompted with the final text before it, as --initial-prompt
"$HARK" stream --step 2000 --length 6000 --keep-context "$TMP/head.raw" >"$TMP/ctx" 2>"$TMP/err"
expect_eq "--keep-context: line 1" "$(sed -n 1p "$TMP/ctx")" "$(sed -n 1p "$TMP/lines")"
expect_eq "--keep-context: line 2" "$(sed -n 2p "$TMP/ctx")" \
    "$(says 60800 67200 --initial-prompt "$(sed -n 1p "$TMP/ctx")")"
# the whole of it (the sanitized run has seen these paths already)
if [ -z "${HARK_SANITIZED:-}" ]; then
    "$HARK" stream --step 2000 --length 6000 "$TMP/long.raw" >"$TMP/lines" 2>"$TMP/err"
    expect_eq "long: line 7" "$(sed -n 7p "$TMP/lines")" "$(says 380800 67200)"
    # 65.07 s: 16 lines of 4 s, the last 1.07 s (and the 0.2 s kept) a line of its own
    expect_eq "long: lines" "$(wc -l <"$TMP/lines")" 17
    expect_eq "long: the last" "$(tail -n 1 "$TMP/lines")" "$(says 1020800 20386)"
else
    skip "the whole long sample: checked in the plain run"
fi
# on a terminal the line is redrawn at each step (\r, erase line), then ends
if command -v script >/dev/null; then
    script -qec "$HARK stream --step 1000 --length 3000 $TMP/s1.raw" /dev/null </dev/null >"$TMP/tty"
    expect_eq "terminal: redraws, lines" "$(grep -o $'\r\033\[2K' "$TMP/tty" | wc -l) $(tr -d '\r' <"$TMP/tty" | grep -c .)" "4 2"
    # stdin a terminal: no audio will come from it
    script -qec "$HARK stream" /dev/null </dev/null >"$TMP/tty"
    expect_eq "stdin a terminal" "$(tr -d '\r' <"$TMP/tty")" \
        "hark: stream: stdin is a terminal: pipe 16 kHz PCM into it, e.g. arecord -q -f S16_LE -c 1 -r 16000 -t raw | hark stream"
else
    skip "no script(1)"
fi

# --vad: an utterance is transcribed once its speech is followed by a second of silence
# (whisper.cpp's stream in VAD mode), its segments timed in the stream: three samples
# with 2 s of silence between them give their sentences, each utterance starting where
# hark vad finds the speech of the whole file start
S2=samples/sample02-en-gb.wav S4=samples/sample04-kal16.wav
sox -n -r 16000 -c 1 "$TMP/gap.wav" trim 0 2 && sox $S1 "$TMP/gap.wav" $S2 "$TMP/gap.wav" $S4 "$TMP/utt.wav"
sox "$TMP/utt.wav" -t raw - | "$HARK" stream --vad --step 3000 >"$TMP/utt" 2>"$TMP/err"
expect_eq "--vad: exit, stderr" "$? $(cat "$TMP/err")" "0 "
"$HARK" vad "$TMP/utt.wav" >"$TMP/spans"
starts() { grep -o '^\[[0-9:.]*' "$1" | tr -d '[' | awk -F: '{ printf "%.2f\n", $1 * 60 + $2 }'; }
# utterance k's first segment: line 1, 3 and 5 (two sentences each in the first two)
expect_eq "--vad: lines" "$(wc -l <"$TMP/utt")" 5
for k in "1 1" "3 3" "5 5"; do
    set -- $k
    t=$(starts "$TMP/utt" | sed -n "${1}p") want=$(sed -n "${2}p" "$TMP/spans" | cut -f 1)
    awk -v a="$t" -v b="$want" 'BEGIN { exit !(a - b < 0.05 && b - a < 0.05) }' && ok ||
        bad "--vad: line $1 starts at $t, the speech at $want"
done
text() { sed 's/^\[[^]]*\]  //' "$1"; }
expect_eq "--vad: the first utterance" "$(text "$TMP/utt" | head -n 2)" "$("$HARK" -q --beam-size 1 $S1)"
expect_eq "--vad: the last" "$(text "$TMP/utt" | tail -n 1)" "$("$HARK" -q --beam-size 1 $S4)"
if [ -z "${HARK_SANITIZED:-}" ]; then
    # continuous speech is cut at --length, between spans; the segments keep their order
    # and lose nothing (147 words said)
    "$HARK" stream --vad "$TMP/long.raw" >"$TMP/long-vad" 2>"$TMP/err"
    expect_eq "--vad long: exit, stderr" "$? $(cat "$TMP/err")" "0 "
    grep -o '[0-9:.]* --> [0-9:.]*' "$TMP/long-vad" | tr -d '>' | awk -F' --' '
        function s(t, p) { split(t, p, ":"); return p[1] * 60 + p[2] }
        { a = s($1); b = s($2); if (a < last - 0.001 || b < a || b > 65.08) bad = bad " " NR; last = b }
        END { exit bad != "" }' && ok || bad "--vad long: times out of order: $(head -n 5 "$TMP/long-vad")"
    [ "$(text "$TMP/long-vad" | wc -w)" -ge 140 ] && ok || bad "--vad long: $(text "$TMP/long-vad" | wc -w) words"
else
    skip "--vad on the whole long sample: checked in the plain run"
fi
# whisper.cpp's --step 0 is --vad, looking for the end of speech every second
"$HARK" stream --step 0 "$TMP/utt.wav" >"$TMP/step0" 2>"$TMP/err"
expect_eq "--step 0: exit, stderr" "$? $(cat "$TMP/err")" "0 "
"$HARK" stream --vad --step 1000 "$TMP/utt.wav" | cmp -s - "$TMP/step0" && ok || bad "--step 0 is not --vad --step 1000"
"$HARK" stream --vad "$TMP/utt.wav" | cmp -s - "$TMP/step0" && ok || bad "--vad's step is not 1000"
cmp -s "$TMP/step0" "$TMP/utt" && bad "--step 3000 and 1000 cut alike here: the two checks above prove nothing" || ok
# silence alone: nothing said
sox -n -r 16000 -c 1 -b 16 -t raw - trim 0 25 | "$HARK" stream --vad >"$TMP/out" 2>"$TMP/err"
expect_eq "--vad silence: exit, stderr, stdout" "$? $(cat "$TMP/err") $(wc -c <"$TMP/out")" "0  0"

# bad input and options: one line, exit 1 (2 for usage), nothing on stdout
expect_error "hark: stdin: no audio samples" stream </dev/null
expect_error "hark: $TMP/none.raw: No such file or directory" stream "$TMP/none.raw"
sox $S1 -r 44100 -c 2 -t wav - 2>/dev/null >"$TMP/cd.wav"
expect_error "hark: stdin: a WAV stream of 44100 Hz, 2 channel(s), 16-bit: hark stream reads 16000 Hz, 1 channel, 16-bit PCM" stream <"$TMP/cd.wav"
head -c 20 "$TMP/cd.wav" | expect_error "hark: stdin: a WAV stream without a data chunk in its first 20 bytes" stream
# hostile WAV headers: a chunk claiming 4 GB, a fmt chunk cut short, an odd byte count
{ printf 'RIFF'; le32 100; printf 'WAVELIST'; le32 4294967295; head -c 40 /dev/zero; } >"$TMP/huge-chunk.wav"
expect_error "hark: stdin: a WAV stream without a data chunk in its first 60 bytes" stream <"$TMP/huge-chunk.wav"
{ printf 'RIFF'; le32 100; printf 'WAVEfmt '; le32 16; printf '\x01\x00'; head -c 30 /dev/urandom; } >"$TMP/cut-fmt.wav"
"$HARK" stream <"$TMP/cut-fmt.wav" >/dev/null 2>"$TMP/err"; rc=$?
[[ $rc == 1 && $(wc -l <"$TMP/err") == 1 && "$(cat "$TMP/err")" == "hark: stdin: a WAV stream "* ]] && ok ||
    bad "a cut fmt chunk: $rc $(cat "$TMP/err")"
head -c 3 /dev/zero | "$HARK" stream >"$TMP/out" 2>"$TMP/err"
expect_eq "one sample and a half: exit, stderr, stdout" "$? $(cat "$TMP/err") $(wc -c <"$TMP/out")" "0  0"
usage() { # WANT ARGS...
    local want=$1; shift
    "$HARK" stream "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
    expect_eq "hark stream $*" "$? $(cat "$TMP/err") $(wc -c <"$TMP/out")" "2 $want 0"
}
usage "hark: bad value for --step: 50 (milliseconds, 100 to 3600000, or 0 for --vad)" --step 50
usage "hark: bad value for --keep: x (milliseconds, 0 to 3600000)" --keep x
usage "hark: stream: --step 5000 is longer than --length 3000" --step 5000 --length 3000
usage "hark: stream: one input at most (a.raw, then b.raw)" a.raw b.raw
usage "hark: stream: unknown option --bogus (see hark stream --help)" --bogus
usage "hark: stream: unknown option -kc: whisper.cpp's -kc is hark stream's --keep-context (see hark stream --help)" -kc
"$HARK" stream --help | grep -q '^usage: hark stream' && ok || bad "hark stream --help"
summary stream
