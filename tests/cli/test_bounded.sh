# Input that would take hark down does not: /dev/zero and text on stdin fail at
# once with one line, an endless pipe ends at --max-duration with a message and
# its transcript so far, a FIFO and a pipe of WAV (its length a placeholder) read
# as the file does, and peak memory does not grow with an input's length (with
# --vad too).
. "$(dirname "$0")/lib.sh"
T=$TMP
M=tests/data/tiny-random/hf-f32
CLIP=tests/data/clip.wav
LONG=samples/long-espeak-en-us.wav
SAN=${HARK_SANITIZED:-}
# peak RSS in kB of the command after it: /usr/bin/time's (apt-get install time)
TIME=/usr/bin/time
peak() { "$TIME" -f %M -o "$T/rss" "$@"; local rc=$?; RSS=$(tail -1 "$T/rss"); return $rc; }
[ -x "$TIME" ] || { skip "no /usr/bin/time: peak memory not measured"; peak() { "$@"; local rc=$?; RSS=0; return $rc; }; }

# ---- bad bytes fail at once, in one line, in little memory
start=$(date +%s%N)
peak timeout 20 "$HARK" -m $M /dev/zero >"$T/out" 2>"$T/err"; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
expect_eq "/dev/zero: exit, stderr" "$rc $(cat "$T/err")" \
    "1 hark: /dev/zero: not a readable audio file (no audio format starts with the bytes 00 00 00 00 00 00 00 00)"
[ "$ms" -lt 5000 ] && ok || bad "/dev/zero took $ms ms"
[ -n "$SAN" ] || { [ "$RSS" -lt 100000 ] && ok || bad "/dev/zero: peak RSS $RSS kB"; }
yes | timeout 20 "$HARK" -m $M - >"$T/out" 2>"$T/err"; rc=$?
expect_eq "yes on stdin" "$rc $(cat "$T/err") $(wc -c <"$T/out")" \
    "1 hark: stdin: not a readable audio file (no audio format starts with the bytes 79 0a 79 0a 79 0a 79 0a) 0"
timeout 20 "$HARK" -m $M - </dev/null >"$T/out" 2>"$T/err"
expect_eq "nothing on stdin" "$? $(cat "$T/err")" "1 hark: stdin: empty file"

# ---- an endless pipe ends at --max-duration, in bounded memory
if command -v sox >/dev/null; then
    sox -R -n -t wav - synth 100000 sine 440 2>/dev/null |
        peak timeout 60 "$HARK" -m $M --max-duration 5 - >"$T/out" 2>"$T/err"; rc=$?
    expect_eq "endless tone: exit, stderr" "$rc $(cat "$T/err")" \
        "1 hark: stdin: longer than max_duration (5 s): transcribed its first 5 s"
    [ -n "$SAN" ] || { [ "$RSS" -lt 100000 ] && ok || bad "endless tone: peak RSS $RSS kB"; }
    # endless speech: the transcript so far, the same as that of its first 20 s as a file
    sox -R $LONG "$T/first20.wav" trim 0 20
    "$HARK" -q -f txt,json -o "$T/file" "$T/first20.wav" 2>"$T/err"
    expect_eq "the first 20 s as a file" "$? $(cat "$T/err")" "0 "
    sox -R $LONG -t wav - repeat 1000 2>/dev/null |
        timeout 120 "$HARK" -q --max-duration 20 -f txt,json -o "$T/pipe" - >"$T/out" 2>"$T/err"; rc=$?
    expect_eq "endless speech: exit, stderr" "$rc $(cat "$T/err")" \
        "1 hark: stdin: longer than max_duration (20 s): transcribed its first 20 s"
    for f in txt json; do
        cmp -s "$T/file/first20.$f" "$T/pipe/stdin.$f" 2>/dev/null ||
            cmp -s "$T/file/first20.$f" "$T/pipe/-.$f" && ok ||
            bad "endless speech: $f so far differs from the file's: $(ls "$T/pipe"; head -c 300 "$T/pipe/"*."$f")"
    done
    # a regular file past the limit: the same cut
    "$HARK" -q --max-duration 20 $LONG >"$T/out" 2>"$T/err"; rc=$?
    expect_eq "a file past --max-duration" "$rc $(cat "$T/err")" \
        "1 hark: $LONG: longer than max_duration (20 s): transcribed its first 20 s"
    cmp -s "$T/out" "$T/file/first20.txt" && ok || bad "a file past --max-duration: $(cat "$T/out")"
    "$HARK" --max-duration -1 $CLIP >"$T/out" 2>"$T/err"
    expect_eq "--max-duration -1" "$? $(cat "$T/err")" \
        "2 hark: --max-duration takes seconds (0: no limit) (see hark --help)"
else
    skip "sox absent: no endless pipe"
fi

# ---- a FIFO, and a pipe of WAV whose header's length is a placeholder, read as the file
"$HARK" -m $M $CLIP >"$T/file.txt"
mkfifo "$T/fifo"
cat $CLIP >"$T/fifo" &
timeout 60 "$HARK" -m $M "$T/fifo" >"$T/fifo.txt" 2>"$T/err"
expect_eq "a FIFO" "$? $(cat "$T/err")" "0 "
cmp -s "$T/file.txt" "$T/fifo.txt" && ok || bad "a FIFO's transcript differs"
wait
if command -v sox >/dev/null; then
    sox -R $CLIP -t wav - 2>/dev/null | timeout 60 "$HARK" -m $M - >"$T/pipe.txt" 2>"$T/err"
    expect_eq "WAV from sox's pipe" "$? $(cat "$T/err")" "0 "
    cmp -s "$T/file.txt" "$T/pipe.txt" && ok || bad "WAV from sox's pipe: transcript differs"
fi

# ---- memory does not grow with the length: 20 minutes within 16 MB of 1 minute
if [ -n "$SAN" ]; then
    skip "peak memory under ASan: measured in the plain run"
elif command -v sox >/dev/null && [ -x "$TIME" ]; then
    sox -R -n -r 16000 -b 16 "$T/1m.wav" synth 60 sine 440 tremolo 3 80
    sox -R -n -r 16000 -b 16 "$T/20m.wav" synth 1200 sine 440 tremolo 3 80
    peak "$HARK" -m $M -t 1 -f json -o "$T/json" "$T/1m.wav" 2>"$T/err"; short=$RSS
    peak "$HARK" -m $M -t 1 -f json -o "$T/json" "$T/20m.wav" 2>>"$T/err"; long=$RSS
    expect_eq "1 and 20 minutes transcribed" "$(ls "$T/json")" "1m.json
20m.json"
    [ $((long - short)) -lt 16000 ] && ok || bad "peak RSS: 1 min $short kB, 20 min $long kB"
    # and with VAD, which reads its probabilities and joins the speech a block at a time
    peak "$HARK" -m $M -t 1 --vad "$T/1m.wav" >/dev/null 2>>"$T/err"; short_vad=$RSS
    peak "$HARK" -m $M -t 1 --vad "$T/20m.wav" >/dev/null 2>>"$T/err"; long_vad=$RSS
    [ $((long_vad - short_vad)) -lt 16000 ] && ok || bad "peak RSS with --vad: 1 min $short_vad kB, 20 min $long_vad kB"
    # and from a pipe, spooled to a temporary file
    cat "$T/20m.wav" | peak "$HARK" -m $M -t 1 - >/dev/null 2>"$T/err"; piped=$RSS
    [ $((piped - short)) -lt 16000 ] && ok || bad "peak RSS: 1 min $short kB, 20 min piped $piped kB"
else
    skip "sox or /usr/bin/time absent: peak memory not compared"
fi
# ---- threads beyond the cores available: a warning, once, and the run goes on
if command -v taskset >/dev/null; then
    taskset -c 0 "$HARK" -m $M -t 2 $CLIP >"$T/t.txt" 2>"$T/err"
    expect_eq "-t 2 on one core" "$? $(cat "$T/err")" \
        "0 hark: warning: -t 2 is more threads than the 1 core available (slower, not faster)"
    cmp -s "$T/t.txt" "$T/file.txt" && ok || bad "-t 2 on one core: transcript differs"
    mkdir "$T/j"
    taskset -c 0,1 "$HARK" -m $M -q -j 2 -t 2 -o "$T/j" $CLIP samples/sample01-en-us.wav 2>"$T/err"
    expect_eq "-j 2 -t 2 on two cores" "$? $(cat "$T/err")" \
        "0 hark: warning: -j 2 with -t 2 is 4 threads, more than the 2 cores available (slower, not faster)"
    taskset -c 0,1 "$HARK" -m $M -q -j 2 -t 1 --overwrite -o "$T/j" $CLIP samples/sample01-en-us.wav 2>"$T/err"
    expect_eq "-j 2 -t 1 on two cores" "$? $(cat "$T/err")" "0 "
    taskset -c 0 "$HARK" -m $M $CLIP >/dev/null 2>"$T/err"
    expect_eq "no -t on one core" "$? $(cat "$T/err")" "0 "
else
    skip "no taskset: the warning for threads beyond the cores not checked"
fi
summary test_bounded.sh
