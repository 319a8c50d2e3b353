# hark serve's jobs and its studio page.  The job API with curl (both builds): each
# result is the CLI's file byte for byte, a window's explain is hark explain's trace,
# a job's progress is answered while the server's only worker transcribes it, in
# order, cancelling stops the work (logged 499), the table of jobs is bounded, bad
# requests get their status and message.  Then the page in headless Chromium (tests/browser/, driven
# through the DevTools protocol; the plain build only: under the sanitizers a minute of
# audio takes too long for a page test): upload, progress, transcript, playback,
# downloads, explain, keyboard, axe-core, cancel, an API key.  STUDIO_SHOT=$PWD/docs/studio.png
# makes the docs' screenshot anew.
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
if [ ! -f $MODEL/config.json ] || ! command -v curl >/dev/null || ! command -v jq >/dev/null; then
    skip "no default model, curl or jq"; summary test_studio.sh; exit
fi
S1=samples/sample01-en-us.wav L=samples/long-espeak-en-us.wav
logged() { for _ in $(seq 300); do grep -q "$1" "$2" && return 0; sleep 0.1; done; return 1; }
post() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }
# state ID: the job's state once it is no longer queued or running (3 minutes at most)
state() {
    local s
    for _ in $(seq 1800); do
        s=$(curl -s "$URL/v1/jobs/$1" | jq -r .state)
        [ "$s" != queued ] && [ "$s" != running ] && break
        sleep 0.1
    done
    echo "$s"
}
err() { # WHAT STATUS MESSAGE curl-args...
    local what=$1 status=$2 msg=$3; shift 3
    expect_eq "$what" "$(post "$@"):$(jq -c . "$TMP/body" 2>/dev/null || cat "$TMP/body")" \
        "$status:{\"error\":{\"message\":\"$msg\",\"type\":\"invalid_request_error\"}}"
}
mkdir "$TMP/up" "$TMP/expect"
# one worker (-j 1): a job's status is answered by the connection loop while it works
TMPDIR="$TMP/up" "$HARK" serve --port 0 -j 1 2>"$TMP/log" &
pid=$!
URL=$(url_of "$TMP/log")
[ -n "$URL" ] && ok || { bad "no listening line: $(cat "$TMP/log")"; kill $pid; summary test_studio.sh; exit; }

expect_eq "GET /v1/options" "$(curl -s "$URL/v1/options" | jq -c '[.language, .beam_size, .timestamps, .vad, .formats]')" \
    '["auto",5,true,false,["txt","srt","vtt","tsv","json","csv","lrc"]]'
expect_eq "POST /v1/jobs" "$(post -F file=@$S1 "$URL/v1/jobs"):$(jq -r '.state' "$TMP/body")" "202:queued"
ID=$(jq -r .id "$TMP/body")
expect_eq "an id of 128 bits" "$(echo "$ID" | grep -cE '^[0-9a-f]{32}$')" 1
expect_eq "the job is done" "$(state "$ID")" done
"$HARK" -q -f txt,srt,vtt,tsv,json,csv,lrc -o "$TMP/expect" $S1
for f in txt srt vtt tsv json csv lrc; do
    curl -s "$URL/v1/jobs/$ID/result?format=$f" >"$TMP/got.$f"
    cmp -s "$TMP/got.$f" "$TMP/expect/sample01-en-us.$f" && ok || bad "result $f differs: $(head -c 200 "$TMP/got.$f")"
done
curl -s "$URL/v1/jobs/$ID" >"$TMP/status"
expect_eq "the status's segments" "$(jq -c '[.segments[] | [.start, .end, .text]]' "$TMP/status")" \
    "$(jq -c '[.segments[] | [.start, .end, .text]]' "$TMP/expect/sample01-en-us.json")"
expect_eq "its tokens' probabilities" "$(jq -c '[.segments[].tokens[] | .p * 1000 | round]' "$TMP/status")" \
    "$(jq -c '[.segments[].tokens[] | select(.text | startswith("<|") | not) | .p * 1000 | round]' "$TMP/expect/sample01-en-us.json")"
expect_eq "its windows" "$(jq -c '[.windows_done, .windows_total, .windows, .n_segments]' "$TMP/status")" \
    '[1,1,[{"start":0,"end":3.63}],2]'
expect_eq "?since=1" "$(curl -s "$URL/v1/jobs/$ID?since=1" | jq -c '[.segments[].id]')" "[1]"
"$HARK" explain $S1 -o "$TMP/ex" >/dev/null
expect_eq "POST .../explain?window=0" "$(post -X POST "$URL/v1/jobs/$ID/explain?window=0")" 200
cmp -s "$TMP/body" "$TMP/ex/trace.json" && ok || bad "the explain is not hark explain's trace.json"
err "explain window 3" 400 "no window 3 to explain: the audio made 1" -X POST "$URL/v1/jobs/$ID/explain?window=3"
err "explain window x" 400 "window is a window number from 0" -X POST "$URL/v1/jobs/$ID/explain?window=x"
err "format docx" 400 "format is one of txt, srt, vtt, tsv, json, csv, lrc" "$URL/v1/jobs/$ID/result?format=docx"
err "no such job" 404 "no job nope: a finished job is kept 10 minutes" "$URL/v1/jobs/nope"
err "no such path" 404 "no such endpoint: POST /inference, POST /v1/audio/transcriptions, POST /v1/audio/translations, GET /health, the job API (docs/serving.md)" \
    "$URL/v1/jobs/$ID/nope"
err "PUT /v1/jobs" 405 "method not allowed: POST /v1/jobs, GET or DELETE /v1/jobs/ID, GET /v1/jobs/ID/result, POST /v1/jobs/ID/explain, GET /v1/options" \
    -X PUT "$URL/v1/jobs"
err "no file" 400 'the body holds no \"file\": send multipart/form-data with the audio as its \"file\" field' \
    -X POST "$URL/v1/jobs"
err "vad=true without a VAD model" 400 "this server has no VAD model: start hark serve with --vad" \
    -F file=@$S1 -F vad=true "$URL/v1/jobs"
expect_eq "DELETE a finished job" "$(curl -s -X DELETE "$URL/v1/jobs/$ID")" "{\"id\":\"$ID\",\"state\":\"deleted\"}"
expect_eq "then it is gone" "$(post "$URL/v1/jobs/$ID")" 404
expect_eq "its upload removed" "$(ls "$TMP/up" | wc -l)" 0
# a job that fails: its state and the message /inference gives
post -F file=@README.md "$URL/v1/jobs" >/dev/null
BAD=$(jq -r .id "$TMP/body")
expect_eq "a failed job" "$(state "$BAD"):$(curl -s "$URL/v1/jobs/$BAD" | jq -r .error)" \
    "failed:README.md: not a readable audio file (Format not recognised.)"
err "its result" 409 "the job has no transcript: it is not done" "$URL/v1/jobs/$BAD/result"
# 16 jobs held at most: the 17th is refused until one is deleted
for i in $(seq 15); do curl -s -F file=@README.md "$URL/v1/jobs" | jq -r .id; done >"$TMP/ids"
err "the 17th job" 429 "too many jobs held: wait for one to finish, or DELETE a finished one" -F file=@README.md "$URL/v1/jobs"
curl -s -X DELETE "$URL/v1/jobs/$BAD" >/dev/null
expect_eq "after a DELETE" "$(post -F file=@README.md "$URL/v1/jobs")" 202
jq -r .id "$TMP/body" >>"$TMP/ids"
for id in $(cat "$TMP/ids"); do state "$id" >/dev/null; curl -s -X DELETE "$URL/v1/jobs/$id" >/dev/null; done
# a long job followed while the only worker transcribes it: its status answered at
# once, its windows and segments coming in order; a job posted meanwhile waits queued
sox $L $L $L "$TMP/long3.wav"
post -F file=@"$TMP/long3.wav" "$URL/v1/jobs" >/dev/null
LONG=$(jq -r .id "$TMP/body")
: >"$TMP/seen"
: >"$TMP/seen.ids"
for _ in $(seq 6000); do
    curl -s "$URL/v1/jobs/$LONG?since=$(wc -l <"$TMP/seen.ids")" >"$TMP/poll"
    jq -r '[.state, .windows_done, .windows_total] | join(" ")' "$TMP/poll" >>"$TMP/seen"
    jq -r '.segments[].id' "$TMP/poll" >>"$TMP/seen.ids"
    [ "$(jq .windows_done "$TMP/poll")" -ge 3 ] && break
    sleep 0.05
done
awk '$1 == "running" && $2 > 0 && $2 < $3 { n++ } END { exit n < 1 }' "$TMP/seen" && ok ||
    bad "no status seen while the job ran: $(tail -n 3 "$TMP/seen")"
awk '$2 < last { exit 1 } { last = $2 }' "$TMP/seen" && ok || bad "windows_done went back: $(tr '\n' , <"$TMP/seen")"
expect_eq "its segments in order, each once" "$(tr '\n' ' ' <"$TMP/seen.ids")" \
    "$(seq 0 $(($(wc -l <"$TMP/seen.ids") - 1)) | tr '\n' ' ')"
post -F file=@$S1 "$URL/v1/jobs" >/dev/null
NEXT=$(jq -r .id "$TMP/body")
expect_eq "a job posted meanwhile" "$(curl -s "$URL/v1/jobs/$NEXT" | jq -r .state)" queued
post -F file=@$S1 "$URL/v1/jobs" >/dev/null
DROP=$(jq -r .id "$TMP/body")
expect_eq "DELETE a queued job" "$(curl -s -X DELETE "$URL/v1/jobs/$DROP")" "{\"id\":\"$DROP\",\"state\":\"cancelling\"}"
expect_eq "cancelled as it waits" "$(curl -s "$URL/v1/jobs/$DROP" | jq -c '[.state, .error]')" '["cancelled","cancelled"]'
# cancelled once its first windows are done: stopped at the next, logged as 499
expect_eq "DELETE a running job" "$(curl -s -X DELETE "$URL/v1/jobs/$LONG")" "{\"id\":\"$LONG\",\"state\":\"cancelling\"}"
expect_eq "it is cancelled" "$(state "$LONG")" cancelled
logged "^hark: 127.0.0.1 JOB /v1/jobs/$LONG 499 (" "$TMP/log" && ok || bad "no 499 for the cancelled job: $(tail -n 3 "$TMP/log")"
expect_eq "then the one queued behind it" "$(state "$NEXT")" done
logged "^hark: 127.0.0.1 JOB /v1/jobs/$DROP 499 (" "$TMP/log" && ok || bad "no 499 for the job cancelled as it waited"
curl -s "$URL/v1/jobs/$LONG" >"$TMP/cancelled"
[ "$(jq .windows_done "$TMP/cancelled")" -lt "$(jq .windows_total "$TMP/cancelled")" ] && ok ||
    bad "the cancelled job ran to the end: $(jq -c '[.windows_done, .windows_total]' "$TMP/cancelled")"

# --api-key: the job API needs it as transcription does
"$HARK" serve --port 0 --api-key k-studio 2>"$TMP/logk" &
pidk=$!
KURL=$(url_of "$TMP/logk")
expect_eq "/v1/options without the key" "$(post "$KURL/v1/options")" 401
expect_eq "/v1/jobs/x without the key" "$(post "$KURL/v1/jobs/x")" 401
expect_eq "/v1/jobs/x with it" "$(post -H 'Authorization: Bearer k-studio' "$KURL/v1/jobs/x")" 404
expect_eq "the page without it" "$(post "$KURL/")" 200

# the page in a real browser
NODE_DIR=tests/browser
if [ -n "${HARK_SANITIZED:-}" ]; then
    skip "the page in Chromium: sanitized build (the plain build's run covers the page)"
elif ! command -v chromium >/dev/null || ! command -v node >/dev/null || [ ! -f $NODE_DIR/node_modules/axe-core/axe.min.js ]; then
    skip "the page in Chromium: needs chromium, node and axe-core (make deps: apt-get, npm ci)"
else
    sox samples/sample0[1-8]*.wav samples/sample10-en-us.wav "$TMP/talk.wav" # 61.6 s, 9 voices
    "$HARK" -q -f all -o "$TMP/expect" "$TMP/talk.wav"
    env CHROMIUM="$(command -v chromium)" USER_DIR="$TMP/chrome" URL="$URL" SAMPLE="$TMP/talk.wav" \
        LONG="$TMP/long3.wav" SHORT="$PWD/$S1" EXPECT="$TMP/expect" DOWNLOADS="$TMP/downloads" \
        SHOT="${STUDIO_SHOT:-$TMP/shot.png}" AXE=$NODE_DIR/node_modules/axe-core/axe.min.js \
        KEY_URL="$KURL" KEY=k-studio timeout 300 node $NODE_DIR/studio.mjs >"$TMP/browser" 2>&1
    rc=$?
    while read -r line; do
        case $line in ok\ *) ok ;; FAIL\ *) bad "${line#FAIL }" ;; esac
    done <"$TMP/browser"
    expect_eq "the browser test's exit" "$rc:$(grep -vc '^ok \|^FAIL ' "$TMP/browser")" "0:0"
    [ $rc -ne 0 ] && grep -v '^ok ' "$TMP/browser" | head -n 5
    # three cancelled jobs: the API's two above, and the page's
    for _ in $(seq 300); do [ "$(grep -c ' JOB /v1/jobs/[0-9a-f]* 499 (' "$TMP/log")" -ge 3 ] && break; sleep 0.1; done
    expect_eq "the page's cancel logged as 499" "$(grep -c '^hark: 127.0.0.1 JOB /v1/jobs/[0-9a-f]* 499 (' "$TMP/log")" 3
    [ -s "${STUDIO_SHOT:-$TMP/shot.png}" ] && ok || bad "no screenshot"
fi

kill -TERM $pidk; wait $pidk; expect_eq "--api-key: SIGTERM" $? 0
kill -TERM $pid; wait $pid; expect_eq "SIGTERM: exit" $? 0
expect_eq "no upload left behind" "$(ls "$TMP/up" | wc -l)" 0
grep -q 'Sanitizer' "$TMP/log" "$TMP/logk" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log" "$TMP/logk" | head)" || ok
summary test_studio.sh
