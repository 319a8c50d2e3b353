# hark explain: the shape table's totals against numbers worked out here on their own
# (openai's released sizes, and the exact parameter count of the model files hark
# loads, read from their safetensors headers), its errors, and one window's trace.
. "$(dirname "$0")/lib.sh"
RANDOM_HF=tests/data/tiny-random/hf-f32
DEFAULT=models/hark-en-tiny

# json_number FILE KEY: the number after "KEY": in one-line JSON, or nothing.
json_number() { grep -oE "\"$2\":-?[0-9][0-9.eE+-]*" "$1" | head -n 1 | cut -d: -f2; }

# whisper_params MELS VOCAB C ENC_LAYERS DEC_LAYERS: parameters of a Whisper model,
# module by module as openai's model.py builds it (the encoder's sinusoidal table
# counted too: every checkpoint stores it), T = 1500 frames, n_ctx = 448.
whisper_params() {
    local mels=$1 vocab=$2 c=$3 enc=$4 dec=$5
    local linear=$((c * c + c)) ln=$((2 * c))
    local attn=$((4 * linear - c + ln)) # q, k (no bias), v, out and the LayerNorm before
    local mlp=$((c * 4 * c + 4 * c + 4 * c * c + c + ln))
    local conv=$((mels * c * 3 + c + c * c * 3 + c))
    echo $((conv + 1500 * c + enc * (attn + mlp) + ln + vocab * c + 448 * c + dec * (2 * attn + mlp) + ln))
}

# safetensors_params FILE: the elements of every tensor in a safetensors file's header
safetensors_params() {
    local n
    n=$(od -An -t u8 -N8 "$1" | tr -d ' ')
    tail -c +9 "$1" | head -c "$n" | grep -o '"shape":\[[0-9,]*\]' | tr -dc '0-9,\n' |
        awk -F, '{ p = 1; for (i = 1; i <= NF; i++) p *= $i; s += p } END { printf "%.0f\n", s }'
}

# openai's sizes: name mels vocab width encoder-layers decoder-layers heads
while read -r name mels vocab c enc dec heads; do
    "$HARK" explain --shapes --dims "$name" --json >"$TMP/$name.json" 2>"$TMP/err"
    expect_eq "explain --shapes --dims $name exit" $? 0
    expect_eq "explain --shapes --dims $name stderr" "$(cat "$TMP/err")" ""
    expect_eq "$name parameters" "$(json_number "$TMP/$name.json" total_params)" \
        "$(whisper_params "$mels" "$vocab" "$c" "$enc" "$dec")"
    expect_eq "$name KV-cache bytes a token (f32 K and V)" \
        "$(json_number "$TMP/$name.json" kv_cache_bytes_per_token)" $((2 * dec * c * 4))
    expect_eq "$name cross K/V bytes a window (f16)" \
        "$(json_number "$TMP/$name.json" cross_kv_bytes_per_window)" $((2 * dec * 1500 * c * 2))
    expect_eq "$name encoder scores a layer" \
        "$(json_number "$TMP/$name.json" encoder_score_bytes_per_layer)" $((heads * 1500 * 1500 * 4))
    expect_eq "$name n_head" "$(json_number "$TMP/$name.json" n_audio_head)" "$heads"
done <<'EOF'
tiny 80 51865 384 4 4 6
tiny.en 80 51864 384 4 4 6
base.en 80 51864 512 6 6 8
small 80 51865 768 12 12 12
medium.en 80 51864 1024 24 24 16
large-v3 128 51866 1280 32 32 20
large-v3-turbo 128 51866 1280 32 4 20
EOF
# the well-known totals, as Hugging Face's num_parameters() gives them
expect_eq "tiny is 37,760,640 parameters" "$(json_number "$TMP/tiny.json" total_params)" 37760640
expect_eq "large-v3 is 1,543,490,560 parameters" "$(json_number "$TMP/large-v3.json" total_params)" 1543490560
# an encoder block is 4C^2 of attention and 8C^2 of FFN (and their biases)
share=$(json_number "$TMP/base.en.json" encoder_block_ffn_share)
awk -v s="$share" 'BEGIN { exit !(s > 0.666 && s < 0.667) }' && ok || bad "FFN share $share is not 2/3"

# the model files hark loads: every tensor in the file is counted once (the output
# projection is the token embedding), f32 safetensors, ggml and the default model
for m in $RANDOM_HF $DEFAULT; do
    "$HARK" explain --shapes -m "$m" --json >"$TMP/m.json" 2>"$TMP/err"
    expect_eq "explain --shapes -m $m exit" $? 0
    expect_eq "$m parameters = its safetensors' elements" "$(json_number "$TMP/m.json" total_params)" \
        "$(safetensors_params "$m/model.safetensors")"
done
"$HARK" explain --shapes -m tests/data/tiny-random/model-f32.bin --json >"$TMP/ggml.json"
"$HARK" explain --shapes -m $RANDOM_HF --json >"$TMP/hf.json"
expect_eq "a ggml file's table is its safetensors twin's" "$(cat "$TMP/ggml.json")" "$(cat "$TMP/hf.json")"
# the encoder's FLOPs are hark bench's (which adds the cross K/V projection too)
HARK_BENCH_QUICK=1 "$HARK" bench -m $RANDOM_HF --reps 1 --json >"$TMP/bench.json" 2>/dev/null
awk -v a="$(json_number "$TMP/hf.json" window_flops)" -v b="$(json_number "$TMP/bench.json" encoder_gflop)" \
    'BEGIN { exit !(b > 0 && (a / 1e9 - b) ^ 2 < 1e-12) }' && ok || bad "window FLOPs are not hark bench's encoder GFLOP"

# the terminal table: every stage, and the totals
"$HARK" explain --shapes --dims tiny.en >"$TMP/text"
expect_eq "text table exit" $? 0
for want in "encoder block (x4 per window)" "decoder block (x4 per step)" "parameters: 37760256" \
    "(B, n_head, T, T)         (1, 6, 1500, 1500)" "logits          (B, 1, n_vocab)"; do
    grep -qF "$want" "$TMP/text" && ok || bad "the table has no line with [$want]"
done

# usage_error "exact stderr line" args...: exit 2 (a usage error), that line alone
usage_error() {
    local want=$1; shift
    "$HARK" "$@" >"$TMP/out" 2>"$TMP/err"
    expect_eq "exit status of hark $*" $? 2
    expect_eq "stderr of hark $*" "$(cat "$TMP/err")" "$want"
    expect_eq "stdout of hark $*" "$(wc -c <"$TMP/out")" 0
}
usage_error "hark: explain: --dims takes tiny, tiny.en, base, base.en, small, small.en, medium, medium.en, large, large-v2, large-v3 or large-v3-turbo, not huge (see hark explain --help)" \
    explain --shapes --dims huge
usage_error "hark: explain: --dims and -m name two models: give one (see hark explain --help)" \
    explain --shapes --dims tiny -m $RANDOM_HF
usage_error "hark: explain: --shapes takes no audio file: x.wav (see hark explain --help)" \
    explain --shapes x.wav
usage_error "hark: explain: unknown option or missing value: --bogus (see hark explain --help)" \
    explain --bogus
"$HARK" explain --help >"$TMP/help"
expect_eq "explain --help exit" $? 0
grep -q "hark explain --shapes" "$TMP/help" && ok || bad "explain --help shows no usage"

# one window traced: the tokens are plain transcription's, id for id (the explain
# summary's first line against the json writer's), and the files are there
SAMPLE=samples/sample01-en-us.wav
"$HARK" explain "$SAMPLE" -o "$TMP/ex" >"$TMP/sum" 2>"$TMP/err"
expect_eq "explain AUDIO exit" $? 0
expect_eq "explain AUDIO stderr" "$(cat "$TMP/err")" ""
"$HARK" -f json "$SAMPLE" >"$TMP/plain.json"
plain=$(grep -oE '\{"id":[0-9]+,"text"' "$TMP/plain.json" | tr -dc '0-9\n' | tr '\n' ' ')
traced=$(head -n 1 "$TMP/sum" | cut -d: -f2-)
expect_eq "explained tokens = plain transcription's" "$traced" " ${plain% }"
for f in trace.json index.html; do [ -s "$TMP/ex/$f" ] && ok || bad "no $f written"; done
grep -q "logit lens at the last layer vs the logits: max |diff| 0$" "$TMP/sum" && ok ||
    bad "the lens at the last layer is not the logits: $(grep 'logit lens' "$TMP/sum")"
# the alignment heads marked are generation_config.json's
heads_of() { tr -d ' \n' <"$1" | sed -n 's/.*"alignment_heads":\(\[\[[0-9,]*\]\(,\[[0-9,]*\]\)*\]\).*/\1/p'; }
want=$(heads_of $DEFAULT/generation_config.json)
[ -n "$want" ] && ok || bad "no alignment heads in $DEFAULT/generation_config.json"
expect_eq "alignment heads in the trace" "$(heads_of "$TMP/ex/trace.json")" "$want"
if command -v jq >/dev/null; then
    jq -e '.decoder_self | length == 4' "$TMP/ex/trace.json" >/dev/null && ok || bad "trace.json is not the JSON expected"
fi
# a later window, prompted with the text before it: plain transcription's segments
# of that window hold its tokens, all but a last lone timestamp (the start of a
# segment cut off by the window's end, which openai's loop drops and seeks to)
LONG=samples/long-espeak-en-us.wav
if [ -n "${HARK_SANITIZED:-}" ] || ! command -v jq >/dev/null; then
    skip "window 2 of the long sample: sanitized build or no jq"
else
    "$HARK" explain "$LONG" --window 2 -o "$TMP/w2" >"$TMP/w2.txt"
    expect_eq "explain --window 2 exit" $? 0
    seek=$(jq '.window.seek' "$TMP/w2/trace.json")
    "$HARK" -f json "$LONG" | jq -r "[.segments[] | select(.seek == $seek) | .tokens[].id] | map(tostring) | join(\" \")" >"$TMP/w2.plain"
    traced=$(head -n 1 "$TMP/w2.txt" | cut -d: -f2-) kept=" $(cat "$TMP/w2.plain")"
    expect_eq "window 2's segments = its traced tokens" "${traced:0:${#kept}}" "$kept"
    rest=$(jq '[.tokens[] | select(.kind != "start")] | length' "$TMP/w2/trace.json")
    expect_eq "window 2's tokens past its segments: at most one timestamp" \
        "$(jq "[.tokens[] | select(.kind != \"start\")] | .[$(echo $kept | wc -w):] | map(select(.kind != \"timestamp\")) | length" "$TMP/w2/trace.json")" 0
    [ "$rest" -le $(($(echo $kept | wc -w) + 1)) ] && ok || bad "window 2: $rest tokens traced for $(echo $kept | wc -w) kept"
    jq -e '.window.n_start > 4 and .tokens[0].text == "<|startofprev|>"' "$TMP/w2/trace.json" >/dev/null && ok ||
        bad "window 2 does not start with the previous text"
fi

# --occlusion: a span of 0.2 s (10 frames of 20 ms) each, over the window's audio;
# the alignment heads' attention follows the evidence (rank correlation > 0; on
# sample01 0.32 and 0.30, where layer 0's heads are near 0)
"$HARK" explain "$SAMPLE" -o "$TMP/occ" --occlusion >"$TMP/occ.txt" 2>"$TMP/err"
expect_eq "explain --occlusion exit" $? 0
frames=$((($(soxi -s "$SAMPLE") / 160 + 1) / 2))
expect_eq "occlusion spans" "$(json_number "$TMP/occ/trace.json" spans)" $(((frames + 9) / 10))
expect_eq "one line of heads a decoder layer" "$(grep -c '^  layer [0-9]:' "$TMP/occ.txt")" 4
starred=$(grep '^  layer' "$TMP/occ.txt" | grep -oE '[+-][0-9.]+\*' | tr -d '*+' | tr '\n' ' ')
expect_eq "alignment heads starred" "$(echo $starred | wc -w)" 2
for r in $starred; do awk -v r="$r" 'BEGIN { exit !(r > 0 && r <= 1) }' && ok || bad "alignment head rho $r"; done
usage_error "hark: explain: --window takes a window number from 0, not -1 (see hark explain --help)" \
    explain "$SAMPLE" --window -1
expect_error "hark: explain: $SAMPLE: no window 3 to explain: the audio made 1" explain "$SAMPLE" --window 3 -o "$TMP/ex3"

# the page in a real browser: it draws (data-drawn="ok", no error box), the console
# stays silent, and the screenshot shows the heatmaps' blues
if ! command -v chromium >/dev/null; then
    skip "chromium not installed: the page is not opened (apt-get install chromium)"
else
    browse() { timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --enable-logging=stderr --v=0 --user-data-dir="$TMP/chrome" "$@" "file://$TMP/ex/index.html"; }
    browse --dump-dom >"$TMP/dom" 2>"$TMP/console"
    grep -q 'data-drawn="ok"' "$TMP/dom" && ok || bad "the page did not finish drawing"
    grep -q 'id="js-error"' "$TMP/dom" && bad "the page shows an error: $(grep -o 'error: [^<]*' "$TMP/dom")" || ok
    grep -q ':CONSOLE' "$TMP/console" && bad "console: $(grep ':CONSOLE' "$TMP/console" | head -n 3)" || ok
    browse --window-size=1200,1000 --screenshot="$TMP/shot.png" >/dev/null 2>&1
    if ! command -v pngtopnm >/dev/null; then
        skip "netpbm not installed: the screenshot's pixels are not checked"
    else
        # pixels of the heatmaps' blue (blue well above red), and how many shades of it
        pngtopnm "$TMP/shot.png" | pnmtoplainpnm | awk 'NR > 3 { for (i = 1; i <= NF; i++) v[n++] = $i }
            END { for (i = 0; i + 2 < n; i += 3) if (v[i + 2] - v[i] > 60) { blue++; shade[v[i] "," v[i + 1]] = 1 }
                  for (s in shade) shades++; print blue + 0, shades + 0 }' >"$TMP/px"
        read -r blue shades <"$TMP/px"
        [ "$blue" -gt 5000 ] && [ "$shades" -gt 20 ] && ok ||
            bad "the screenshot shows no heatmap: $blue blue pixels in $shades shades"
    fi
fi

summary test_explain.sh
