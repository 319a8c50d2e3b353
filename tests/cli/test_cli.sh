# The hark command on the small random test model: formats agree, stdin works,
# outputs land whole, mel writes the transcription's log-mel.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random
CLIP=tests/data/clip.wav
# greedy, no timestamps: one segment per 2 s window of the test model
G="--no-timestamps --beam-size 1 --temperature 0"

"$HARK" --version >"$TMP/v"; expect_eq "--version" "$(cat "$TMP/v")" "hark 0.1.0"
"$HARK" --help | grep -q "^usage: hark" && ok || bad "--help prints the usage"
# docs/cli.md is what the option table makes of itself (make docs), and lists every
# option --help lists, no more
"$HARK" --help-markdown | cmp -s - docs/cli.md && ok || bad "docs/cli.md is not hark --help-markdown's: make docs"
help_options() { "$HARK" --help | grep -E '^ {2,6}-' | sed -E 's/^ +//; s/  .*//' | grep -oE -- '-{1,2}[a-z][-a-z0-9]*' | sort -u; }
doc_options() { sed -n '/^## Options/,/^## /p' docs/cli.md | grep '^| `-' | cut -d'|' -f2 | grep -oE -- '-{1,2}[a-z][-a-z0-9]*' | sort -u; }
expect_eq "options of --help not in docs/cli.md, and of docs/cli.md not in --help" "$(diff <(help_options) <(doc_options))" ""
[ "$(help_options | wc -l)" -ge 80 ] && ok || bad "only $(help_options | wc -l) spellings of options in --help"

# every model file gives the same transcript
"$HARK" -m $M/hf-f32 $G $CLIP >"$TMP/a.txt" 2>"$TMP/err"; expect_eq "hf-f32 exit" $? 0
for m in $M/hf-f16 $M/model-f32.bin $M/model-f16.bin; do
    "$HARK" -m $m $G $CLIP >"$TMP/b.txt"
    cmp -s "$TMP/a.txt" "$TMP/b.txt" && ok || bad "$m transcript differs from hf-f32"
done
expect_eq "one line per window" "$(wc -l <"$TMP/a.txt")" 4

# stdin gives the same as the file
"$HARK" -m $M/hf-f32 $G - <$CLIP >"$TMP/c.txt"
cmp -s "$TMP/a.txt" "$TMP/c.txt" && ok || bad "stdin transcript differs"

# -o writes txt and json by default, nothing else, no temporary files left
mkdir "$TMP/outdir"
"$HARK" -q -m $M/hf-f32 $G -o "$TMP/outdir" $CLIP; expect_eq "-o exit" $? 0
expect_eq "files written" "$(ls "$TMP/outdir" | tr '\n' ' ')" "clip.json clip.txt "
cmp -s "$TMP/a.txt" "$TMP/outdir/clip.txt" && ok || bad "written txt differs from stdout"
grep -q '"segments":\[{"id":0,"seek":0,"start":0,"end":2,"text":' "$TMP/outdir/clip.json" && ok || bad "json segments"
grep -q '"language":"en"' "$TMP/outdir/clip.json" && ok || bad "json language"
grep -qE '"tokens":\[\{"id":[0-9]+,"text":"[^"]*","p":0\.[0-9]+\}' "$TMP/outdir/clip.json" && ok || bad "json tokens"

# all formats
"$HARK" -q -m $M/hf-f32 $G -o "$TMP/outdir" -f all $CLIP
expect_eq "all formats" "$(ls "$TMP/outdir" | tr '\n' ' ')" "clip.json clip.srt clip.tsv clip.txt clip.vtt "
expect_eq "srt cue 2 timing" "$(sed -n 6p "$TMP/outdir/clip.srt")" "00:00:02,000 --> 00:00:04,000"
expect_eq "vtt header" "$(head -n 1 "$TMP/outdir/clip.vtt")" "WEBVTT"
expect_eq "vtt last cue timing" "$(grep -- '-->' "$TMP/outdir/clip.vtt" | tail -n 1)" "00:06.000 --> 00:07.320"
expect_eq "tsv header" "$(head -n 1 "$TMP/outdir/clip.tsv")" "$(printf 'start\tend\ttext')"
expect_eq "tsv last times" "$(tail -n 1 "$TMP/outdir/clip.tsv" | cut -f1,2)" "$(printf '6000\t7320')"
# whisper.cpp's csv and lrc, only when named: the tsv's segments, the same times
"$HARK" -q -m $M/hf-f32 $G -o "$TMP/outdir" -f csv,lrc --overwrite $CLIP
expect_eq "csv rows" "$(tail -n +2 "$TMP/outdir/clip.csv" | cut -d, -f1,2 | tr '\n' ' ')" \
    "$(tail -n +2 "$TMP/outdir/clip.tsv" | cut -f1,2 | tr '\t\n' ', ')"
expect_eq "lrc lines" "$(tail -n +2 "$TMP/outdir/clip.lrc" | cut -c 1-10 | tr '\n' ' ')" \
    "$(tail -n +2 "$TMP/outdir/clip.tsv" | awk '{ printf "[%02d:%05.2f] ", $1 / 60000, $1 % 60000 / 1000 }')"

# timestamps (the default): segments on the 20 ms grid, in order, never overlapping
"$HARK" -q -m $M/hf-f32 -f tsv $CLIP >"$TMP/ts.tsv"; expect_eq "timestamps exit" $? 0
awk -F'\t' 'NR > 1 { if ($1 % 20 || $2 % 20 || $2 <= $1 || $1 < prev) bad = 1; prev = $2; n++ }
            END { exit !(n >= 2 && !bad) }' "$TMP/ts.tsv" && ok || bad "timestamped segments: $(cat "$TMP/ts.tsv")"

# deterministic: two runs and -t 1 / -t 2 are byte-identical (beam search, fallback, sampling)
for t in 1 2; do "$HARK" -q -m $M/model-f16.bin -t $t -f json --word-timestamps $CLIP >"$TMP/t$t.json"; done
"$HARK" -q -m $M/model-f16.bin -t 1 -f json --word-timestamps $CLIP >"$TMP/t1b.json"
cmp -s "$TMP/t1.json" "$TMP/t2.json" && ok || bad "-t 1 and -t 2 differ"
cmp -s "$TMP/t1.json" "$TMP/t1b.json" && ok || bad "two runs differ"
grep -q '"words":\[{"word":' "$TMP/t1.json" && ok || bad "--word-timestamps gives words"
"$HARK" -q -m $M/hf-f32 --temperature 1 --best-of 3 --seed 7 $CLIP >"$TMP/s1.txt"
"$HARK" -q -m $M/hf-f32 --temperature 1 --best-of 3 --seed 7 $CLIP >"$TMP/s2.txt"
cmp -s "$TMP/s1.txt" "$TMP/s2.txt" && ok || bad "seeded sampling differs between runs"

# --highlight-words: srt/vtt cues with the current word underlined, JSON words
"$HARK" -q -m $M/hf-f32 --highlight-words -f srt,json $CLIP >"$TMP/hl" 2>"$TMP/err"; expect_eq "--highlight-words exit" $? 0
grep -qE '^<u>[^<]+</u>' "$TMP/hl" && ok || bad "no underlined word cue: $(head -c 300 "$TMP/hl")"
grep -q '"words":\[{"word":' "$TMP/hl" && ok || bad "--highlight-words implies word timestamps"

# --hallucination-silence-threshold (openai's rule, test_wordseek.c): the random model's
# words are improbable and short, each window's first segment starts within the threshold
# of the window, so every window is dropped and the file says nothing; without it, words
"$HARK" -q -m $M/model-f16.bin -f json --hallucination-silence-threshold 1 $CLIP >"$TMP/hal.json"
expect_eq "hallucination threshold exit" $? 0
grep -q '"segments":\[\]' "$TMP/hal.json" && ok || bad "hallucinations kept: $(head -c 300 "$TMP/hal.json")"
grep -q '"segments":\[{' "$TMP/t1.json" && ok || bad "--word-timestamps alone drops the segments"
for v in 1,x -2 ""; do
    "$HARK" -q -m $M/model-f16.bin --suppress-tokens "$v" $CLIP >/dev/null 2>"$TMP/err"
    expect_eq "suppress tokens '$v': exit" $? 2
    expect_eq "suppress tokens '$v': message" "$(head -n 1 "$TMP/err")" \
        "hark: bad value for --suppress-tokens: $v (see hark --help)"
done
# whisper.cpp's -sns (--suppress-nst): the model's non-speech tokens (-1), hark's default,
# kept beside --suppress-tokens whichever comes first; this model samples some of them
sns() { "$HARK" -q -m $M/model-f32.bin $G -f json "$@" $CLIP | md5sum; }
expect_eq "-sns alone: the default" "$(sns -sns)" "$(sns)"
expect_eq "--suppress-tokens 50 -sns" "$(sns --suppress-tokens 50 -sns)" "$(sns --suppress-tokens 50,-1)"
expect_eq "--suppress-nst --suppress-tokens 50" "$(sns --suppress-nst --suppress-tokens 50)" \
    "$(sns --suppress-tokens 50,-1)"
[ "$(sns --suppress-tokens 50)" != "$(sns --suppress-tokens 50,-1)" ] && ok ||
    bad "the non-speech tokens change nothing here: -sns is not tested"
"$HARK" -q -m $M/model-f16.bin --suppress-tokens 5,99999 $CLIP >/dev/null 2>"$TMP/err"
expect_eq "suppress token outside the vocabulary: exit" $? 1
grep -qF "suppress token 99999 is not -1 or in the vocabulary" "$TMP/err" && ok || bad "$(cat "$TMP/err")"
for v in 0 -1 x; do
    "$HARK" -q -m $M/model-f16.bin --hallucination-silence-threshold $v $CLIP >/dev/null 2>"$TMP/err"
    expect_eq "threshold $v: exit" $? 2
    expect_eq "threshold $v: message" "$(head -n 1 "$TMP/err")" \
        "hark: bad value for --hallucination-silence-threshold: $v (see hark --help)"
done
"$HARK" -q -m $M/hf-f32 -f srt $CLIP | grep -q '<u>' && bad "underlines without --highlight-words" || ok

# subtitle layout from the words (openai's --max_words_per_line etc.; the rules are
# checked cue by cue in test_output): a word a cue, word timestamps implied
"$HARK" -q -m $M/hf-f32 --max-words-per-line 1 -f srt,json $CLIP >"$TMP/one" 2>"$TMP/err"
expect_eq "--max-words-per-line exit" $? 0
grep -q '"words":\[{"word":' "$TMP/one" && ok || bad "--max-words-per-line implies word timestamps"
cues=$(awk '/-->/ { getline; print }' "$TMP/one")
[ -n "$cues" ] && ! grep -q ' ' <<<"$cues" && ok || bad "cues of more than one word: $(head -c 300 "$TMP/one")"
expect_eq "one cue a word" "$(grep -c -- '-->' "$TMP/one")" "$(grep -o '"word":' "$TMP/one" | wc -l)"
"$HARK" -m $M/hf-f32 --max-line-width 0 $CLIP >/dev/null 2>"$TMP/err"; expect_eq "--max-line-width 0 exit" $? 2
expect_eq "--max-line-width 0 message" "$(cat "$TMP/err")" "hark: bad value for --max-line-width: 0 (see hark --help)"

# --clip-timestamps: one start runs to the end, so 0 is the whole file, byte for
# byte; from 1 s on, no segment starts before it; a bad list is refused
"$HARK" -q -m $M/hf-f32 -f json $CLIP >"$TMP/whole.json"
"$HARK" -q -m $M/hf-f32 -f json --clip-timestamps 0 $CLIP >"$TMP/clip0.json"
cmp -s "$TMP/whole.json" "$TMP/clip0.json" && ok || bad "--clip-timestamps 0 differs from the whole file"
"$HARK" -q -m $M/hf-f32 -f tsv --clip-timestamps 1 $CLIP >"$TMP/clip1.tsv"
awk 'NR > 1 && $1 < 1000 { bad = 1 } END { exit bad || NR < 2 }' "$TMP/clip1.tsv" && ok ||
    bad "--clip-timestamps 1: $(cat "$TMP/clip1.tsv")"
"$HARK" -m $M/hf-f32 --clip-timestamps 1,x $CLIP >/dev/null 2>"$TMP/err"; expect_eq "bad clip list exit" $? 2
expect_eq "bad clip list message" "$(cat "$TMP/err")" "hark: bad value for --clip-timestamps: 1,x (see hark --help)"

# --temperature-increment-on-fallback: a ladder from one start, of 1 to 16 steps
inc_error() { # MESSAGE ARGS...
    local want=$1; shift
    "$HARK" -m $M/hf-f32 "$@" $CLIP >/dev/null 2>"$TMP/err"; expect_eq "$* exit" $? 2
    expect_eq "$* message" "$(cat "$TMP/err")" "hark: $want (see hark --help)"
}
inc_error "--temperature-increment-on-fallback starts from one --temperature, not a list" \
    --temperature 0,0.5 --temperature-increment-on-fallback 0.2
inc_error "--temperature-increment-on-fallback starts from one --temperature, not a list" \
    --temperature-increment-on-fallback 0.2 --temperature 0,0.5
inc_error "bad value for --temperature-increment-on-fallback: 0" --temperature-increment-on-fallback 0
inc_error "--temperature-increment-on-fallback: 0 to 1 in steps of 0.05 is not 1 to 16 temperatures" \
    --temperature-increment-on-fallback 0.05
inc_error "--temperature-increment-on-fallback: 1.5 to 1 in steps of 0.2 is not 1 to 16 temperatures" \
    --temperature 1.5 --temperature-increment-on-fallback 0.2

# Started by the dynamic loader (as valgrind and other tools start programs), hark
# must not run /proc/self/exe again to choose OpenBLAS's kernels and threads: that
# file is the loader (or the tool), not hark.  OpenBLAS's thread variables unset,
# so that the re-run is wanted wherever there are two cores or more.
LOADER=$(readelf -l "$HARK" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
if [ -x "$LOADER" ]; then
    "$HARK" -q -m $M/model-f16.bin $CLIP >"$TMP/direct.txt"
    env -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u OMP_NUM_THREADS \
        "$LOADER" "$HARK" -q -m $M/model-f16.bin $CLIP >"$TMP/loaded.txt" 2>"$TMP/err"
    expect_eq "run by the loader: exit" $? 0
    expect_eq "run by the loader: stderr" "$(head -c 300 "$TMP/err")" ""
    cmp -s "$TMP/direct.txt" "$TMP/loaded.txt" && ok || bad "run by the loader: another transcript"
else
    skip "no dynamic loader named in $HARK"
fi

# One file to stdout as txt is printed segment by segment as windows finish
# (test_longform checks the calls): the bytes the txt writer puts in a file
"$HARK" -q -m $M/hf-f32 $CLIP >"$TMP/streamed.txt"
"$HARK" -q -m $M/hf-f32 -o "$TMP/txtdir" -f txt $CLIP
cmp -s "$TMP/streamed.txt" "$TMP/txtdir/clip.txt" && ok || bad "streamed txt differs from the txt file"
[ "$(wc -l <"$TMP/streamed.txt")" -gt 1 ] && ok || bad "one segment: nothing to stream"

# --verbose with -o: the same files as without it, and openai's verbose lines on
# stdout, one per segment of the json, each after its file's path (two files); no
# progress bar on a terminal (lines instead); without -o, -f has nowhere to go
cp $CLIP "$TMP/clip2.wav"
"$HARK" -v -m $M/hf-f32 -o "$TMP/vdir" $CLIP "$TMP/clip2.wav" >"$TMP/vout" 2>/dev/null
expect_eq "--verbose files" "$(cat "$TMP/vdir/clip.txt" "$TMP/vdir/clip2.txt")" \
    "$(cat "$TMP/txtdir/clip.txt" "$TMP/txtdir/clip.txt")"
nseg=$(grep -o '"seek"' "$TMP/vdir/clip.json" | wc -l)
expect_eq "--verbose lines of each file" \
    "$(grep -c "^$CLIP: \[[0-9][0-9]:[0-9][0-9]\.[0-9]\{3\} --> [0-9][0-9]:[0-9][0-9]\.[0-9]\{3\}\] " "$TMP/vout") $(grep -c "^$TMP/clip2.wav: \[" "$TMP/vout")" \
    "$nseg $nseg"
expect_eq "--verbose has nothing else" "$(wc -l <"$TMP/vout")" $((2 * nseg))
if command -v script >/dev/null; then
    script -qec "$HARK -v -m $M/hf-f32 -o $TMP/vdir2 $CLIP $TMP/clip2.wav" /dev/null </dev/null >"$TMP/vtty" 2>&1
    expect_eq "--verbose: no bar on a terminal" "$(grep -c $'\r\[' "$TMP/vtty") $(grep -c ' --> ' "$TMP/vtty")" \
        "0 $((2 * nseg))"
else
    skip "script absent: --verbose on a terminal is not checked"
fi
"$HARK" -v -f srt -m $M/hf-f32 $CLIP >/dev/null 2>"$TMP/err"; expect_eq "--verbose -f exit" $? 2
expect_eq "--verbose -f message" "$(cat "$TMP/err")" \
    "hark: --verbose prints the segments to stdout: give -o with -f (see hark --help)"
# --print-colors (whisper.cpp's -pc): the streamed txt and the -v lines, each
# character in one of the palette's ten colours; without the colours, the same bytes;
# refused where nothing is printed as text
esc=$'\033'
"$HARK" -q -m $M/hf-f32 --print-colors $CLIP >"$TMP/colored.txt"
sed "s/$esc\[[0-9;]*m//g" "$TMP/colored.txt" | cmp -s - "$TMP/streamed.txt" && ok || bad "colours stripped: not the txt"
expect_eq "only the palette's colours" "$(grep -o "$esc\[[0-9;]*m" "$TMP/colored.txt" | sort -u |
    grep -cvE "^$esc\[(0|38;5;(196|202|208|214|220|226|190|154|118|82))m$")" 0
[ "$(grep -o "$esc\[38;5" "$TMP/colored.txt" | wc -l)" -ge "$(wc -w <"$TMP/streamed.txt")" ] && ok ||
    bad "fewer colours than words: $(cat -v "$TMP/colored.txt" | head -n 2)"
"$HARK" -q -m $M/hf-f32 -v -pc -o "$TMP/cdir" $CLIP >"$TMP/colored.v"
sed "s/$esc\[[0-9;]*m//g" "$TMP/colored.v" | cmp -s - <("$HARK" -q -m $M/hf-f32 -v $CLIP) && ok ||
    bad "-v colours stripped: not the -v lines"
grep -q "\]  $esc\[38;5;" "$TMP/colored.v" && ok || bad "-v: no colour after the times: $(cat -v "$TMP/colored.v" | head -n 1)"
for args in "-o $TMP/cdir2" "-f json" "$CLIP"; do
    "$HARK" -q -m $M/hf-f32 --print-colors $args $CLIP >/dev/null 2>"$TMP/err"
    expect_eq "--print-colors $args" "$? $(cat "$TMP/err")" "2 hark: --print-colors colours the text printed on stdout: one file as txt, or -v lines (see hark --help)"
done

# openai-whisper's underscored names are taken as hark's spelling of them (a command
# written for openai's CLI runs); an unknown option: exit 2 and one line, names hark
# lacks (or only begins) among them
"$HARK" -q -m $M/hf-f32 --output_format json --word_timestamps True --temperature 0 \
    --temperature_increment_on_fallback 0.5 --output_dir "$TMP/underscored" $CLIP
expect_eq "openai's underscored names" "$?:$(ls "$TMP/underscored")" "0:clip.json"
"$HARK" -q -m $M/hf-f32 -f json --word-timestamps --temperature 0 --temperature-increment-on-fallback 0.5 \
    $CLIP | cmp -s - "$TMP/underscored/clip.json" && ok || bad "underscored names: not the dashed ones' json"
unknown() {
    "$HARK" -m $M/hf-f32 "$1" $CLIP >/dev/null 2>"$TMP/err"; expect_eq "$1 exit" $? 2
    expect_eq "$1 message" "$(cat "$TMP/err")" "hark: unknown option $1 (see hark --help)"
}
unknown --frobnicate
unknown --max_line
unknown --word__timestamps
# whisper.cpp's options are answered with hark's way of doing the same, every one in
# the table of them that hark --help-markdown writes (none shadowed by an option hark
# takes)
whispercpp() {
    "$HARK" -m $M/hf-f32 "$1" $CLIP >/dev/null 2>"$TMP/err"; expect_eq "$1 exit" $? 2
    expect_eq "$1 message" "$(cat "$TMP/err")" "hark: unknown option $1: whisper.cpp's $1 $2 (see hark --help)"
}
whispercpp -otxt "is hark's -f txt"
whispercpp --output-json-full "is hark's -f json (every token with its probability)"
whispercpp -nf "is hark's --temperature 0"
whispercpp -ojf "is hark's -f json (every token with its probability)"
whispercpp -ng "has no use here: hark runs on the CPU"
whispercpp -dtw "is hark's --word-timestamps (DTW on the model's alignment heads)"
whispercpp --grammar "has no equivalent: hark has no grammar-constrained decoding (--suppress-regex and --initial-prompt steer it)"
n=0
for opt in $("$HARK" --help-markdown | sed -n "/^## whisper.cpp's options/,\$p" | grep '^| `-' | cut -d'|' -f2 | grep -o -- '-[-a-z]*'); do
    "$HARK" -m $M/hf-f32 "$opt" $CLIP >/dev/null 2>"$TMP/err"
    [[ $? == 2 && "$(cat "$TMP/err")" == "hark: unknown option $opt: whisper.cpp's $opt "* ]] && n=$((n + 1)) ||
        bad "$opt: $(cat "$TMP/err")"
done
[ $n -ge 79 ] && ok || bad "only $n of whisper.cpp's options answered"
# whisper.cpp's -ot OFFSET -d DURATION (ms, either first) are the clip --clip-timestamps
# makes in seconds; not beside it
like_clip() { # CLIP -ot/-d-ARGS...
    local clip=$1; shift
    "$HARK" -q -m $M/hf-f32 -f srt "$@" $CLIP | cmp -s - <("$HARK" -q -m $M/hf-f32 -f srt --clip-timestamps $clip $CLIP) &&
        ok || bad "$*: not --clip-timestamps $clip"
}
like_clip 1,4 -ot 1000 -d 3000
like_clip 1,4 --duration 3000 --offset-t 1000
like_clip 2.5 -ot 2500
"$HARK" -q -m $M/hf-f32 -f srt -ot 2500 $CLIP | cmp -s - <("$HARK" -q -m $M/hf-f32 -f srt $CLIP) && bad "-ot changed nothing" || ok
for args in "-ot 1000 --clip-timestamps 1" "--clip-timestamps 1 -d 5"; do
    "$HARK" -q -m $M/hf-f32 $args $CLIP >/dev/null 2>"$TMP/err"
    expect_eq "$args" "$?:$(cat "$TMP/err")" "2:hark: -ot and -d make a clip: give them or --clip-timestamps (see hark --help)"
done
# whisper.cpp's -of BASE (--output-file): one input's outputs are BASE.<format>, the same
# bytes as -o writes; refused with several inputs or beside -o
"$HARK" -q -m $M/hf-f32 -of "$TMP/of/sub/out" -f srt,txt $CLIP; expect_eq "-of exit" $? 0
"$HARK" -q -m $M/hf-f32 -o "$TMP/of-dir" -f srt,txt $CLIP
expect_eq "-of files" "$(ls "$TMP/of/sub")" "$(printf 'out.srt\nout.txt')"
cmp -s "$TMP/of/sub/out.srt" "$TMP/of-dir/clip.srt" && cmp -s "$TMP/of/sub/out.txt" "$TMP/of-dir/clip.txt" &&
    ok || bad "-of: not -o's bytes"
"$HARK" -q -m $M/hf-f32 --output-file "$TMP/of2" $CLIP; expect_eq "--output-file: -o's formats" "$(cd "$TMP" && ls of2.*)" "$(printf 'of2.json\nof2.txt')"
for args in "$CLIP $CLIP" "-o $TMP/x $CLIP"; do
    "$HARK" -q -m $M/hf-f32 -of "$TMP/of3" $args >/dev/null 2>"$TMP/err"
    expect_eq "-of with $args" "$?:$(cat "$TMP/err")" \
        "2:hark: --output-file names the outputs of one input file (without -o) (see hark --help)"
done
# whisper.cpp's -f names the audio; hark's takes formats
"$HARK" -m $M/hf-f32 -f $CLIP >/dev/null 2>"$TMP/err"; expect_eq "-f FILE exit" $? 2
expect_eq "-f FILE message" "$(cat "$TMP/err")" \
    "hark: -f takes output formats; the audio file goes without it (whisper.cpp's -f FILE is hark's FILE) (see hark --help)"

# English-only models refuse to translate or detect a language
expect_error "hark: $M/hf-f32: an English-only model cannot translate" -m $M/hf-f32 --task translate $CLIP

# multilingual: detection printed with probabilities; a language that is not there
"$HARK" -m $M/multi --detect-language $CLIP >"$TMP/lang"
expect_eq "--detect-language" "$(cat "$TMP/lang")" "$CLIP: en 0.4965 zh 0.3187 de 0.1848"
expect_error "hark: $M/hf-f32: an English-only model has no language to detect" -m $M/hf-f32 --detect-language $CLIP
expect_error "hark: $M/multi: the model has no language \"fr\"" -m $M/multi -l fr $CLIP
"$HARK" -q -m $M/multi -l de --task translate -f json $CLIP | grep -q '"language":"de"' && ok || bad "-l de"
# --model-dir DIR (openai's --model_dir): -m NAME is DIR/NAME, else whisper.cpp's
# DIR/ggml-NAME.bin or DIR/NAME.bin; where openai-whisper keeps NAME.pt (there, or in
# ~/.cache/whisper), the error says how to convert it
mkdir -p "$TMP/md" "$TMP/home/.cache/whisper" "$TMP/xdg/whisper"
ln -s "$PWD/$M/model-f32.bin" "$TMP/md/ggml-tiny.en.bin"
"$HARK" -q -m $M/model-f32.bin -f json $CLIP >"$TMP/direct.json"
"$HARK" -q -m tiny.en --model-dir "$TMP/md" -f json $CLIP | cmp -s - "$TMP/direct.json" && ok ||
    bad "--model-dir: ggml-tiny.en.bin not found"
"$HARK" -q -m tiny.en --model_dir "$TMP/md" -f json $CLIP | cmp -s - "$TMP/direct.json" && ok || bad "--model_dir"
"$HARK" -q -m hf-f32 --model-dir $M -f json $CLIP | cmp -s - <("$HARK" -q -m $M/hf-f32 -f json $CLIP) && ok ||
    bad "--model-dir: a directory NAME"
touch "$TMP/md/base.en.pt" "$TMP/home/.cache/whisper/small.en.pt" "$TMP/xdg/whisper/medium.pt"
expect_error "hark: base.en: no such model here, but $TMP/md/base.en.pt is openai-whisper's checkpoint of it: scripts/convert/openai-pt-to-ggml converts it (see README.md, Models)" \
    -m base.en --model-dir "$TMP/md" $CLIP
XDG_CACHE_HOME= HOME="$TMP/home" expect_error "hark: small.en: no such model here, but $TMP/home/.cache/whisper/small.en.pt is openai-whisper's checkpoint of it: scripts/convert/openai-pt-to-ggml converts it (see README.md, Models)" \
    -m small.en $CLIP
XDG_CACHE_HOME="$TMP/xdg" expect_error "hark: medium: no such model here, but $TMP/xdg/whisper/medium.pt is openai-whisper's checkpoint of it: scripts/convert/openai-pt-to-ggml converts it (see README.md, Models)" \
    -m medium $CLIP
# -v: openai's "Detected language: English" before the first segment of a detected
# language, none when -l names it
expect_eq "-v: the detected language" "$("$HARK" -q -m $M/multi -v $CLIP | head -n 1)" "Detected language: English"
expect_eq "-v -l de: none" "$("$HARK" -q -m $M/multi -l de -v $CLIP | grep -c '^Detected language')" 0
# openai's names and aliases, any case, mean their code; an unknown one is a usage error;
# an English-only model given another language says so and transcribes English
"$HARK" -q -m $M/multi -l German -f json $CLIP >"$TMP/german.json"
"$HARK" -q -m $M/multi -l de -f json $CLIP >"$TMP/de.json"
grep -q '"language":"de"' "$TMP/german.json" && cmp -s "$TMP/german.json" "$TMP/de.json" && ok ||
    bad "-l German is not -l de: $(head -c 200 "$TMP/german.json")"
expect_error "hark: $M/multi: the model has no language \"Castilian\"" -m $M/multi -l Castilian $CLIP
"$HARK" -m $M/multi -l Klingon $CLIP >/dev/null 2>"$TMP/err"
expect_eq "-l Klingon" "$?:$(cat "$TMP/err")" "2:hark: -l Klingon: not a Whisper language: give a \
code (en, de, ...), its name (English, German, ...) or auto"
"$HARK" -q -m $M/hf-f32 -l fr -f json $CLIP >"$TMP/fr.json" 2>"$TMP/err"
expect_eq "English-only -l fr" "$?:$(cat "$TMP/err")" \
    "0:hark: warning: $M/hf-f32 is an English-only model: it transcribes English, not fr"
"$HARK" -q -m $M/hf-f32 -f json $CLIP | cmp -s - "$TMP/fr.json" && ok || bad "English-only -l fr differs"
"$HARK" -q -m $M/hf-f32 -l English $CLIP >/dev/null 2>"$TMP/err"; expect_eq "-l English: no warning" "$(cat "$TMP/err")" ""

# hark mel: [80, frames] float32, frames = (samples + 30 s) / 160
"$HARK" mel $CLIP -o "$TMP/m.npy"; expect_eq "mel exit" $? 0
expect_eq "mel file size" "$(wc -c <"$TMP/m.npy")" $((128 + 80 * ((117120 + 480000) / 160) * 4))
head -c 80 "$TMP/m.npy" | grep -q "'shape': (80, 3732)" && ok || bad "mel npy shape"

# a stdout that cannot be written (a full disk) is an error, whatever was printed there
for args in "$CLIP" "-f json $CLIP" "-v $CLIP" "--version" "test --help"; do
    "$HARK" -m $M/hf-f32 $args >/dev/full 2>"$TMP/err"
    expect_eq "stdout on /dev/full: $args" "$? $(cat "$TMP/err")" "1 hark: stdout: cannot write (No space left on device)"
done

# openai's switches with True or False after them (its str2bool); --fp16 changes nothing
j() { "$HARK" -q -m $M/hf-f32 -f json "$@" $CLIP; }
expect_eq "--word-timestamps True / False" "$(j --word-timestamps True | grep -c '"words"') $(j --word-timestamps False | grep -c '"words"')" "1 0"
expect_eq "--word-timestamps True is the flag" "$(j --word-timestamps True | md5sum)" "$(j --word-timestamps | md5sum)"
"$HARK" -q -m $M/hf-f32 --highlight-words True -f srt $CLIP | grep -q '<u>' && ok || bad "--highlight-words True: no underlines"
expect_eq "--fp16 False" "$(j --fp16 False | md5sum)" "$(j | md5sum)"
expect_eq "--device cpu" "$(j --device cpu | md5sum)" "$(j | md5sum)"
"$HARK" -m $M/hf-f32 --device cuda $CLIP >/dev/null 2>"$TMP/err"
expect_eq "--device cuda" "$? $(cat "$TMP/err")" "2 hark: --device cuda: hark runs on the CPU; give --device cpu or leave it out (see hark --help)"
expect_eq "--verbose True" "$("$HARK" -m $M/hf-f32 --verbose True $CLIP)" "$("$HARK" -m $M/hf-f32 -v $CLIP)"
expect_eq "--verbose False" "$("$HARK" -m $M/hf-f32 --verbose False $CLIP 2>/dev/null)" "$("$HARK" -m $M/hf-f32 $CLIP 2>/dev/null)"
# openai's model names are downloads hark does not make
(cd "$TMP" && "$OLDPWD/$HARK" -m tiny.en "$OLDPWD/$CLIP" >/dev/null 2>"$TMP/err"); rc=$?
expect_eq "-m tiny.en" "$rc $(cat "$TMP/err")" "1 hark: tiny.en: no such model here (openai-whisper downloads its models by name; hark reads a Hugging Face Whisper directory or a whisper.cpp .bin: see README.md, Models)"

# usage errors exit 2
"$HARK" -m $M/hf-f32 --suppress-regex '(' $CLIP >/dev/null 2>"$TMP/err"
expect_eq "--suppress-regex (" "$? $(cat "$TMP/err")" \
    "2 hark: bad value for --suppress-regex: ( (Unmatched ( or \\() (see hark --help)"
"$HARK" >/dev/null 2>&1; expect_eq "no input exit" $? 2
"$HARK" -f doc $CLIP >/dev/null 2>"$TMP/err"; expect_eq "bad format exit" $? 2
expect_eq "bad format message" "$(cat "$TMP/err")" \
    "hark: unknown format in -f (txt,json,srt,vtt,tsv,csv,lrc,all) (see hark --help)"

# no model anywhere: a clear message
(cd "$TMP" && HARK_MODEL= "$OLDPWD/$HARK" "$OLDPWD/$CLIP" >/dev/null 2>"$TMP/err"); rc=$?
if [ -d models ] && ls models/*/config.json >/dev/null 2>&1; then skip "a default model exists"; else
expect_eq "no model exit" $rc 1
expect_eq "no model message" "$(cat "$TMP/err")" "hark: no model given and none found in models/: pass -m MODEL (a Hugging Face Whisper directory or a whisper.cpp .bin)"
fi
# --precision: a bad name says what it takes; on the default model bf16 and int8 give
# f32's text for sample01 (docs/perf-log.md lists the files where they do not)
"$HARK" -m $M/hf-f32 --precision fp8 $CLIP >"$TMP/out" 2>"$TMP/err"
expect_eq "--precision fp8 exit" $? 2
expect_eq "--precision fp8 message" "$(cat "$TMP/err")" "hark: --precision takes auto, f32, bf16 or int8, not fp8 (see hark --help)"
if ls models/hark-en-tiny/config.json >/dev/null 2>&1; then
    S=samples/sample01-en-us.wav
    "$HARK" -m models/hark-en-tiny $G --precision f32 $S >"$TMP/f32.txt"
    for p in bf16 int8 auto; do
        "$HARK" -m models/hark-en-tiny $G --precision $p $S >"$TMP/p.txt"
        cmp -s "$TMP/f32.txt" "$TMP/p.txt" && ok || bad "--precision $p: sample01's text differs from f32's"
    done
fi
summary cli
