# hark serve: whisper.cpp's server endpoint and OpenAI's, answered as the command
# line answers the same file and options; every bad request gets its status and a
# JSON error naming the problem, and the server goes on; uploads leave no temporary
# file; SIGTERM ends it cleanly (exit 0: under the sanitizers, no leak report).
. "$(dirname "$0")/lib.sh"
MODEL=models/hark-en-tiny
if [ ! -f $MODEL/config.json ] || ! command -v curl >/dev/null; then
    skip "no default model or no curl"; summary serve; exit
fi
S1=samples/sample01-en-us.wav
# Whether LOG has a line matching PATTERN within 30 s (a request's line follows its answer).
logged() {
    for _ in $(seq 300); do grep -q "$1" "$2" && return 0; sleep 0.1; done
    return 1
}
mkdir "$TMP/up"
TMPDIR="$TMP/up" "$HARK" serve --port 0 --max-upload-mb 1 2>"$TMP/log" &
pid=$!
URL=$(url_of "$TMP/log")
[ -n "$URL" ] && ok || { bad "no listening line: $(cat "$TMP/log")"; kill $pid; summary serve; exit; }
post() { curl -s -o "$TMP/body" -w '%{http_code}' "$@"; }

expect_eq "GET /health" "$(post "$URL/health"):$(cat "$TMP/body")" '200:{"status":"ok"}'
# GET /: a page whose form posts the file to /inference, as a browser would send it
expect_eq "GET /" "$(post "$URL/")" 200
grep -q '<form action="/inference" method="post" enctype="multipart/form-data">' "$TMP/body" &&
    grep -q '<input type="file" name="file"' "$TMP/body" && grep -q '<select name="response_format">' "$TMP/body" &&
    ok || bad "GET /: $(head -c 300 "$TMP/body")"
# json: the text; verbose_json, srt: the same bytes as hark's own writers
"$HARK" -q -f json $S1 >"$TMP/cli.json"
expect_eq "POST /inference" "$(post -F file=@$S1 "$URL/inference"):$(cat "$TMP/body")" \
    "200:{\"text\":$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -c9-)}"
# verbose_json: OpenAI's layout (tokens as ids), the command line's numbers
expect_eq "verbose_json" "$(post -F file=@$S1 -F response_format=verbose_json "$URL/v1/audio/transcriptions")" 200
expect_eq "verbose_json head" "$(grep -o '^{"task":"transcribe","language":"english","duration":3.63,"text":"[^"]*"' "$TMP/body" | cut -d'"' -f14)" \
    "$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -d'"' -f4)"
bounds() { grep -o '"start":[0-9.e-]*,"end":[0-9.e-]*' "$1" | tr '\n' ' '; }
expect_eq "verbose_json bounds" "$(bounds "$TMP/body")" "$(bounds "$TMP/cli.json")"
expect_eq "verbose_json tokens" "$(grep -o '"tokens":\[[0-9,]*\]' "$TMP/body" | tr -dc '0-9,\n' | tr ',\n' '  ')" \
    "$(grep -o '{"id":[0-9]*,"text"' "$TMP/cli.json" | tr -dc '0-9\n' | tr '\n' ' ')"
grep -q '"words"' "$TMP/body" && bad "words without word granularity" || ok
# seek: where each segment's window began, as the command line's json has it (four
# samples, 22 s: three windows of this model's 10 s)
sox $S1 samples/sample02-en-gb.wav samples/sample03-en-gb-scotland.wav samples/sample04-kal16.wav "$TMP/four.wav"
post -F file=@"$TMP/four.wav" -F response_format=verbose_json "$URL/v1/audio/transcriptions" >/dev/null
seeks() { grep -o '"seek":[0-9]*' "$1" | cut -d: -f2 | tr '\n' ' '; }
expect_eq "verbose_json seek" "$(seeks "$TMP/body")" "$("$HARK" -q -f json "$TMP/four.wav" >"$TMP/four.json"; seeks "$TMP/four.json")"
expect_eq "three windows" "$(seeks "$TMP/body" | tr ' ' '\n' | sort -u | grep -c .)" 3
post -F file=@$S1 -F response_format=srt "$URL/v1/audio/transcriptions" >/dev/null
cmp -s "$TMP/body" <("$HARK" -q -f srt $S1) && ok || bad "srt differs: $(cat "$TMP/body")"
post -F file=@$S1 -F response_format=text "$URL/inference" >/dev/null
expect_eq "text" "$(cat "$TMP/body")" "$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -c10- | tr -d '"')"
# the words (asked for beside segments, as OpenAI's SDK sends them) and a prompt
post -F file=@$S1 -F response_format=verbose_json -F 'timestamp_granularities[]=segment' \
    -F 'timestamp_granularities[]=word' -F prompt="Schedules." "$URL/v1/audio/transcriptions" >/dev/null
"$HARK" -q -f json --word-timestamps --initial-prompt "Schedules." $S1 >"$TMP/words.json"
words() { grep -o '"word":"[^"]*","start":[0-9.]*,"end":[0-9.]*' "$1" | tr '\n' '|'; }
expect_eq "words and prompt" "$(words "$TMP/body")" "$(words "$TMP/words.json")"
[ "$(words "$TMP/body" | tr -cd '|' | wc -c)" -ge 10 ] && ok || bad "few words: $(words "$TMP/body")"
expect_eq "temperature 0.4" "$(post -F file=@$S1 -F temperature=0.4 "$URL/inference")" 200

# bad requests: status and message
err() { # WHAT STATUS MESSAGE curl-args...
    local what=$1 status=$2 msg=$3; shift 3
    expect_eq "$what" "$(post "$@"):$(cat "$TMP/body")" \
        "$status:{\"error\":{\"message\":\"$msg\",\"type\":\"invalid_request_error\"}}"
}
err "no file" 400 'the body holds no \"file\": send multipart/form-data with the audio as its \"file\" field' \
    -X POST "$URL/inference"
err "not audio" 400 "README.md: not a readable audio file (Format not recognised.)" \
    -F file=@README.md "$URL/inference"
printf '\0\0\0\040ftypM4A \0\0\0\0' >"$TMP/talk.m4a"
err "an m4a" 400 "talk.m4a: $("$HARK" -q "$TMP/talk.m4a" 2>&1 | sed "s|^hark: $TMP/talk.m4a: ||")" \
    -F file=@"$TMP/talk.m4a" "$URL/inference"
err "format" 400 "response_format is one of json, text, verbose_json, srt, vtt, tsv, csv, lrc" \
    -F file=@$S1 -F response_format=docx "$URL/inference"
err "temperature" 400 "temperature is a number from 0 to 1" -F file=@$S1 -F temperature=2 "$URL/inference"
err "translate=maybe" 400 "translate is true or false" -F file=@$S1 -F translate=maybe "$URL/inference"
err "translations, English-only" 400 "this server's model is English-only: it cannot translate" \
    -F file=@$S1 "$URL/v1/audio/translations"
err "language" 400 'sample01-en-us.wav: unknown language \"klingon\": a Whisper language code (en, de, ...) or its name (English, German, ...)' \
    -F file=@$S1 -F language=klingon "$URL/inference"
expect_eq "language=English" "$(post -F file=@$S1 -F language=English "$URL/inference"):$(cat "$TMP/body")" \
    "200:{\"text\":$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -c9-)}"
err "unknown path" 404 "no such endpoint: POST /inference, POST /v1/audio/transcriptions, POST /v1/audio/translations, GET /health, the job API (docs/serving.md)" "$URL/x"
err "GET /inference" 405 "method not allowed: POST /inference, /v1/audio/transcriptions and /v1/audio/translations, GET /health" \
    "$URL/inference"
# without --cors: no preflight, no Access-Control header
err "OPTIONS without --cors" 405 "method not allowed: POST /inference, /v1/audio/transcriptions and /v1/audio/translations, GET /health" \
    -X OPTIONS "$URL/inference"
expect_eq "no CORS header" "$(curl -s -D - -o /dev/null "$URL/health" | grep -ci '^access-control')" 0
err "over --max-upload-mb 1" 413 "the body is larger than --max-upload-mb allows" \
    -F file=@samples/long-espeak-en-us.wav "$URL/inference"
# a chunked upload (RFC 9112 7.1) is read as one with a Content-Length
expect_eq "chunked" "$(post -H "Transfer-Encoding: chunked" -F file=@$S1 "$URL/inference"):$(cat "$TMP/body")" \
    "200:{\"text\":$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -c9-)}"
err "a 20 kB header" 431 "the request head is over 16 kB" -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" \
    "$URL/health"
exec 3<>"/dev/tcp/127.0.0.1/${URL##*:}"; printf 'hello\r\n\r\n' >&3
expect_eq "a malformed request line" "$(head -n 1 <&3 | tr -d '\r')" "HTTP/1.1 400 Bad Request"; exec 3<&-
exec 3<>"/dev/tcp/127.0.0.1/${URL##*:}"; printf 'GET /health HTTP/1.1\r\n' >&3; exec 3<&- # gone mid-head
exec 3<>"/dev/tcp/127.0.0.1/${URL##*:}"; printf 'GET /\033[31mred HTTP/1.1\r\n\r\n' >&3
expect_eq "an escape in the path" "$(head -n 1 <&3 | tr -d '\r')" "HTTP/1.1 400 Bad Request"; exec 3<&-
# RFC 9112's framing, strictly: each of these heads is refused, naming why, before any body
raw() { # PORT REQUEST: the answer's status line and body
    exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "$2" >&3
    timeout 10 cat <&3 | tr -d '\r' | sed -n '1p;$p' | tr '\n' '|'; exec 3<&-
}
malformed() { # WHAT STATUS MESSAGE REQUEST
    local line="400 Bad Request" type=invalid_request_error
    [ "$2" == 501 ] && line="501 Not Implemented" type=server_error
    expect_eq "$1" "$(raw "${URL##*:}" "$4")" \
        "HTTP/1.1 $line|{\"error\":{\"message\":\"$3\",\"type\":\"$type\"}}"
}
malformed "whitespace before a colon" 400 "whitespace between a header's name and its colon" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n'
malformed "a folded line" 400 "a folded header line (obsolete line folding)" \
    'GET /health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n'
malformed "two Content-Lengths" 400 "more than one Content-Length" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!'
malformed "a repeated Content-Length" 400 "more than one Content-Length" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello'
malformed "a list for Content-Length" 400 "a malformed Content-Length" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nhello'
malformed "Content-Length with Transfer-Encoding" 400 "both Content-Length and Transfer-Encoding" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
malformed "gzip, chunked" 501 "a Transfer-Encoding other than chunked alone" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'
malformed "no Host" 400 "no Host header (HTTP/1.1 needs one)" 'GET /health HTTP/1.1\r\n\r\n'
malformed "two Hosts" 400 "more than one Host" 'GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n'
malformed "bare LF line ends" 400 "a request head whose lines are not ended by CRLF" 'GET /health HTTP/1.1\nHost: x\n\n'
malformed "a bad chunk" 400 "a malformed chunk size" \
    'POST /inference HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'
expect_eq "HTTP/1.0, no Host" "$(raw "${URL##*:}" 'GET /health HTTP/1.0\r\n\r\n')" 'HTTP/1.1 200 OK|{"status":"ok"}'
expect_eq "still serving" "$(post "$URL/health")" 200
logged '^hark: 127.0.0.1 GET /?\[31mred 400 (' "$TMP/log" && ok || bad "the escape logged: $(cat -v "$TMP/log")"
expect_eq "no upload left behind" "$(ls "$TMP/up" | wc -l)" 0

# --max-buffered-mb: the bodies held at once, in all.  A peer's 600 kB body holds most of
# 1 MB (its head read, 100 Continue answered: counted from then on); another body of
# 600 kB, with a Content-Length or chunked, is refused 503 with Retry-After, unread;
# once the first is answered, the same body is taken.  A body stored for its
# transcription is let go then: while a job of 820 kB is transcribed, 300 kB more fit.
mkdir "$TMP/up7"
TMPDIR="$TMP/up7" "$HARK" serve --port 0 --max-upload-mb 1 --max-buffered-mb 1 2>"$TMP/log7" &
pid7=$!
URL7=$(url_of "$TMP/log7")
head -c 600000 /dev/zero >"$TMP/600k"
exec 3<>"/dev/tcp/127.0.0.1/${URL7##*:}"
printf 'POST /inference HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 600000\r\n\r\n' >&3
read -r -t 30 line <&3 && read -r -t 30 _ <&3 # the interim answer and its blank line
expect_eq "the first body, counted" "${line%$'\r'}" "HTTP/1.1 100 Continue"
BUSY='{"error":{"message":"the server is busy: the uploads it holds fill --max-buffered-mb; try again later","type":"server_error"}}'
expect_eq "a second body past --max-buffered-mb" \
    "$(post -D "$TMP/head7" --data-binary @"$TMP/600k" "$URL7/inference"):$(cat "$TMP/body")" "503:$BUSY"
expect_eq "its Retry-After" "$(grep -i '^Retry-After:' "$TMP/head7" | tr -d '\r')" "Retry-After: 5"
expect_eq "a chunked one past it" "$(post -H "Transfer-Encoding: chunked" --data-binary @"$TMP/600k" \
    "$URL7/inference"):$(cat "$TMP/body")" "503:$BUSY"
cat "$TMP/600k" >&3
expect_eq "the first answered" "$(timeout 30 head -n 1 <&3 | tr -d '\r')" "HTTP/1.1 400 Bad Request"
exec 3<&-
NOFILE='the body holds no \"file\": send multipart/form-data with the audio as its \"file\" field'
err "then the second is taken" 400 "$NOFILE" --data-binary @"$TMP/600k" "$URL7/inference"
sox samples/long-espeak-en-us.wav "$TMP/long.ogg"; sox "$TMP/long.ogg" "$TMP/long.ogg" "$TMP/long.ogg" "$TMP/long3.ogg"
expect_eq "a job of $(($(stat -c %s "$TMP/long3.ogg") / 1000)) kB" "$(post -F file=@"$TMP/long3.ogg" "$URL7/v1/jobs")" 202
JOB=$(grep -o '[0-9a-f]\{32\}' "$TMP/body")
for _ in $(seq 300); do grep -q '"state":"queued"' <(curl -s "$URL7/v1/jobs/$JOB") || break; sleep 0.1; done
head -c 300000 /dev/zero >"$TMP/300k"
err "300 kB beside its transcription" 400 "$NOFILE" --data-binary @"$TMP/300k" "$URL7/inference"
curl -s -X DELETE "$URL7/v1/jobs/$JOB" >/dev/null
kill -TERM $pid7; wait $pid7; expect_eq "--max-buffered-mb: SIGTERM" $? 0
# --max-duration: longer audio is refused 413, naming the limit, as /inference and as a job
TMPDIR="$TMP/up7" "$HARK" serve --port 0 --max-duration 2 2>"$TMP/log8" &
pid8=$!
URL8=$(url_of "$TMP/log8")
err "past --max-duration" 413 "sample01-en-us.wav: longer than this server's --max-duration (2 s)" \
    -F file=@$S1 "$URL8/inference"
expect_eq "a job past it" "$(post -F file=@$S1 "$URL8/v1/jobs")" 202
JOB=$(grep -o '[0-9a-f]\{32\}' "$TMP/body")
logged "^hark: 127.0.0.1 JOB /v1/jobs/$JOB 413 (" "$TMP/log8" && ok || bad "the job's 413 not logged: $(tail -n 2 "$TMP/log8")"
curl -s "$URL8/v1/jobs/$JOB" >"$TMP/job8"
expect_eq "its state and error" "$(grep -o '"state":"[a-z]*"' "$TMP/job8"),$(grep -o '"error":"[^"]*"' "$TMP/job8")" \
    "\"state\":\"failed\",\"error\":\"sample01-en-us.wav: longer than this server's --max-duration (2 s)\""
kill -TERM $pid8; wait $pid8; expect_eq "--max-duration: SIGTERM" $? 0
expect_eq "no upload left behind (7, 8)" "$(ls "$TMP/up7" | wc -l)" 0
grep -q 'Sanitizer' "$TMP/log7" "$TMP/log8" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log7" "$TMP/log8" | head)" || ok
"$HARK" serve --max-buffered-mb 100 2>"$TMP/err"; expect_eq "--max-buffered-mb under --max-upload-mb" "$?:$(cat "$TMP/err")" \
    "2:hark: serve: --max-buffered-mb 100 is under --max-upload-mb 256: an upload that large could never be taken"

# -j 2: a peer that connects and sends nothing holds one worker (for its 30 s), the
# other answers meanwhile (curl gives up after 10 s, long before the first is freed)
mkdir "$TMP/up2"
TMPDIR="$TMP/up2" "$HARK" serve --port 0 -j 2 2>"$TMP/log2" &
pid2=$!
URL2=$(url_of "$TMP/log2")
exec 4<>"/dev/tcp/127.0.0.1/${URL2##*:}"
expect_eq "-j 2 beside an idle peer" "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' -F file=@$S1 "$URL2/inference")" 200
exec 4<&-
# a peer that gives up waiting (curl's 0.5 s for 195 s of speech) stops the transcription
# at the next window (should_abort), logged as nginx's 499; the server goes on
L=samples/long-espeak-en-us.wav
sox $L $L $L "$TMP/long3.wav"
curl -s --max-time 0.5 -o /dev/null -F file=@"$TMP/long3.wav" "$URL2/inference"
expect_eq "after a peer gave up" "$(post "$URL2/health")" 200
logged '^hark: 127.0.0.1 POST /inference 499 (' "$TMP/log2" && ok || bad "no 499: $(cat "$TMP/log2")"
# SIGTERM lets the requests begun finish; a second one stops their transcriptions:
# the peer is answered 503, and the server ends (exit 0) with no upload left behind
curl -s -o "$TMP/stopped" -w '%{http_code}' -F file=@"$TMP/long3.wav" "$URL2/inference" >"$TMP/stopped.code" &
curler=$!
for _ in $(seq 300); do [ -n "$(ls "$TMP/up2")" ] && break; sleep 0.1; done # being transcribed
kill -TERM $pid2; sleep 0.3; kill -TERM $pid2 # two signals, not merged into one
wait $pid2; expect_eq "-j 2: SIGTERM twice" $? 0
wait $curler
expect_eq "the request stopped" "$(cat "$TMP/stopped.code"):$(cat "$TMP/stopped")" \
    '503:{"error":{"message":"the server is stopping: send the file again later","type":"server_error"}}'
expect_eq "no upload left by the stop" "$(ls "$TMP/up2" | wc -l)" 0
grep -q 'Sanitizer' "$TMP/log2" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log2" | head)" || ok

# translation (a multilingual model): OpenAI's /v1/audio/translations and whisper.cpp's
# translate field give the command line's --task translate, verbose_json says so
M=tests/data/tiny-random/multi C=tests/data/clip.wav
"$HARK" serve -m $M --port 0 2>"$TMP/log4" &
pid4=$!
URL4=$(url_of "$TMP/log4")
"$HARK" -q -m $M --task translate -f json $C >"$TMP/tr.json"
translated="{\"text\":$(grep -o '^{"text":"[^"]*"' "$TMP/tr.json" | cut -c9-)}"
expect_eq "/v1/audio/translations" "$(post -F file=@$C "$URL4/v1/audio/translations"):$(cat "$TMP/body")" "200:$translated"
expect_eq "translate=true" "$(post -F file=@$C -F translate=true "$URL4/inference"):$(cat "$TMP/body")" "200:$translated"
post -F file=@$C -F translate=false "$URL4/inference" >/dev/null
[ "$(cat "$TMP/body")" != "$translated" ] && ok || bad "translate=false translated"
post -F file=@$C -F response_format=verbose_json "$URL4/v1/audio/translations" >/dev/null
expect_eq "verbose_json task" "$(grep -o '^{"task":"[a-z]*"' "$TMP/body")" '{"task":"translate"'
# whisper.cpp's fields: each answer is the command line's with hark's option for it
# (this random model falls back, so temperature_inc, best_of and logprob_thold show)
like_cli() { # URL FILE FORMAT "CLI-OPTIONS" FORM-FIELDS...
    local url=$1 file=$2 fmt=$3 cli=$4 form=(); shift 4
    for f in "$@"; do form+=(-F "$f"); done
    post -F file=@"$file" -F response_format=$fmt "${form[@]}" "$url/inference" >/dev/null
    cmp -s "$TMP/body" <("$HARK" -q -f $fmt $cli "$file") && ok || bad "$*: $(head -c 200 "$TMP/body")"
}
like_cli $URL4 $C srt "-m $M --temperature 0" temperature_inc=0
like_cli $URL4 $C srt "-m $M --temperature 0.3 --temperature-increment-on-fallback 0.3" temperature=0.3 temperature_inc=0.3
like_cli $URL4 $C srt "-m $M --temperature 0.3 --temperature-increment-on-fallback 0.2" temperature=0.3
"$HARK" -q -m $M -f srt --temperature 0 $C | cmp -s - "$TMP/body" && bad "no fallback at temperature 0.3" || ok
err "temperature_inc=x" 400 "temperature_inc is a number from 0 to 1" -F file=@$C -F temperature_inc=x "$URL4/inference"
err "temperature_inc=0.01" 400 "temperature_inc: more than 16 temperatures from temperature to 1" \
    -F file=@$C -F temperature_inc=0.01 "$URL4/inference"
like_cli $URL4 $C srt "-m $M --best-of 2" best_of=2
like_cli $URL4 $C srt "-m $M --no-timestamps" no_timestamps=true
like_cli $URL4 $C srt "-m $M --clip-timestamps 1,4" offset_t=1000 duration=3000
like_cli $URL4 $C srt "-m $M --clip-timestamps 2.5" offset_t=2500
like_cli $URL4 $C srt "-m $M --max-len 10" max_len=10
like_cli $URL4 $C srt "-m $M --logprob-threshold -5" logprob_thold=-5
"$HARK" -q -m $M -f srt $C | cmp -s - "$TMP/body" && bad "logprob_thold=-5 changed nothing" || ok
# beam_size on the default model, whose greedy and beam answers differ (-1: greedy, as
# whisper.cpp's default); diarize on a stereo file, its speaker in the vtt
S9=samples/sample09-rms.wav
like_cli $URL $S9 srt "--beam-size 1" beam_size=1
like_cli $URL $S9 srt "--beam-size 1" beam_size=-1
like_cli $URL $S9 srt "--beam-size 2" beam_size=2
sox -M $S1 "|sox -n -r 16000 -c 1 -p trim 0 3.63" "$TMP/stereo.wav"
like_cli $URL "$TMP/stereo.wav" vtt "--diarize" diarize=true
grep -q '<v Speaker0>' "$TMP/body" && ok || bad "diarize: no speaker: $(cat "$TMP/body")"
err "beam_size=x" 400 "beam_size is a whole number from -1 to 64" -F file=@$S1 -F beam_size=x "$URL/inference"
err "offset_t=-5" 400 "offset_t is a whole number from 0 to 1000000000" -F file=@$S1 -F offset_t=-5 "$URL/inference"
err "no_timestamps=maybe" 400 "no_timestamps is true or false" -F file=@$S1 -F no_timestamps=maybe "$URL/inference"
kill -TERM $pid4; wait $pid4; expect_eq "translations: SIGTERM" $? 0
grep -q 'Sanitizer' "$TMP/log4" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log4" | head)" || ok

# --api-key / --api-key-file: transcription needs "Authorization: Bearer KEY" with one of
# the keys (401 and OpenAI's invalid_api_key error otherwise, refused before the body is
# stored, and answered whole: a body sent without waiting for 100 Continue is read and
# dropped); /health and the 404s need none
printf '  k-file-1  \n\n\tk-file-2\r\n' >"$TMP/keys"
"$HARK" serve --port 0 --timeout 2 --max-per-peer 2 --api-key k-arg --api-key-file "$TMP/keys" --cors https://app.example \
    2>"$TMP/log3" &
pid3=$!
URL3=$(url_of "$TMP/log3")
want_text="200:{\"text\":$(grep -o '^{"text":"[^"]*"' "$TMP/cli.json" | cut -c9-)}"
for auth in "Bearer k-arg" "Bearer k-file-1" "bearer   k-file-2 "; do
    expect_eq "key [$auth]" "$(post -H "Authorization: $auth" -F file=@$S1 "$URL3/inference"):$(cat "$TMP/body")" "$want_text"
done
denied() { # WHAT MESSAGE curl-args...
    local what=$1 msg=$2; shift 2
    expect_eq "$what" "$(post "$@"):$(cat "$TMP/body")" \
        "401:{\"error\":{\"message\":\"$msg\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}"
}
denied "no key" "no API key: send it as Authorization: Bearer KEY" -F file=@$S1 "$URL3/inference"
denied "a wrong key" "incorrect API key" -H "Authorization: Bearer k-arg2" -F file=@$S1 "$URL3/v1/audio/transcriptions"
denied "a key's prefix" "incorrect API key" -H "Authorization: Bearer k-ar" -F file=@$S1 "$URL3/inference"
denied "another scheme" "incorrect API key" -H "Authorization: Basic k-arg" -F file=@$S1 "$URL3/inference"
head -c 900000 /dev/urandom >"$TMP/big.bin"
denied "a 900 kB body, no 100-continue" "incorrect API key" -H "Expect:" -H "Authorization: Bearer x" \
    -F file=@"$TMP/big.bin" "$URL3/inference"
expect_eq "a 401 says WWW-Authenticate" "$(curl -s -D - -o /dev/null -F file=@$S1 "$URL3/inference" |
    grep -i '^www-authenticate' | tr -d '\r')" "WWW-Authenticate: Bearer"
# the key is checked once the head is in: before the size limit is told, and before any body
expect_eq "over-size, no key: 401 first" "$(raw "${URL3##*:}" 'POST /inference HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n' | cut -d'|' -f1)" \
    "HTTP/1.1 401 Unauthorized"
expect_eq "over-size, a key: 413" "$(raw "${URL3##*:}" 'POST /inference HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k-arg\r\nContent-Length: 999999999999\r\n\r\n' | cut -d'|' -f1)" \
    "HTTP/1.1 413 Content Too Large"
expect_eq "/health without a key" "$(post "$URL3/health")" 200
# --max-per-peer 2: a third connection takes the place of the one still sending its head
# that has been silent the longest, which is answered 503 with Retry-After
exec 5<>"/dev/tcp/127.0.0.1/${URL3##*:}"; printf 'GET /health HTTP/1.1\r\n' >&5
exec 6<>"/dev/tcp/127.0.0.1/${URL3##*:}"; printf 'GET /health HTTP/1.1\r\n' >&6
expect_eq "a third connection" "$(post "$URL3/health")" 200
expect_eq "the oldest gave way" "$(timeout 5 cat <&5 | tr -d '\r' | grep '^HTTP\|^Retry-After\|error' | tr '\n' '|')" \
    'HTTP/1.1 503 Service Unavailable|Retry-After: 5|{"error":{"message":"too many connections: try again later","type":"server_error"}}|'
exec 5<&- 6<&-
# --cors ORIGIN: every answer allows the origin (a 401's too, so that the page can read it),
# and a browser's preflight (no key: browsers send none) is answered 204
headers() { curl -s -D - -o /dev/null "$@" | tr -d '\r' | grep -i '^HTTP/\|^access-control' | tr '\n' '|'; }
expect_eq "--cors: a preflight" "$(headers -X OPTIONS -H 'Origin: https://app.example' \
    -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: authorization' \
    "$URL3/v1/audio/transcriptions")" "HTTP/1.1 204 No Content|Access-Control-Allow-Origin: https://app.example|\
Access-Control-Allow-Methods: GET, POST, OPTIONS|Access-Control-Allow-Headers: authorization, content-type|\
Access-Control-Max-Age: 600|"
expect_eq "--cors: a job's preflight" "$(headers -X OPTIONS -H 'Origin: https://app.example' \
    -H 'Access-Control-Request-Method: DELETE' "$URL3/v1/jobs/0123")" \
    "HTTP/1.1 204 No Content|Access-Control-Allow-Origin: https://app.example|\
Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS|Access-Control-Allow-Headers: authorization, content-type|\
Access-Control-Max-Age: 600|"
expect_eq "--cors: a 401" "$(headers -F file=@$S1 "$URL3/inference")" \
    "HTTP/1.1 401 Unauthorized|Access-Control-Allow-Origin: https://app.example|"
expect_eq "--cors: a transcription" "$(headers -H 'Authorization: Bearer k-arg' -F file=@$S1 "$URL3/inference")" \
    "HTTP/1.1 200 OK|Access-Control-Allow-Origin: https://app.example|"
expect_eq "a 404 without a key" "$(post "$URL3/nope")" 404
expect_eq "no key in the log" "$(grep -c 'k-arg\|k-file' "$TMP/log3")" 0
# --timeout 2: a silent peer, a head sent a line every 0.5 s, a body that stops, and one
# that drips at 300 B/s (its 1 kB/s owed after 2 s) are each answered 408 within 4 s
slow() { # WHAT MESSAGE SENDER: the sender's bytes go to the server as they come
    local what=$1 msg=$2 t0=$SECONDS; shift 2
    exec 3<>"/dev/tcp/127.0.0.1/${URL3##*:}"
    "$@" >&3 2>/dev/null &
    # the reader notes when the status line came: the lingering close may take longer
    local sender=$! answer=$(timeout 12 bash -c 'IFS= read -r l; echo "$SECONDS s"; echo "$l"; cat' <&3 |
        tr -d '\r' | sed -n '1p;2p;$p' | tr '\n' '|')
    exec 3<&-; wait $sender
    expect_eq "$what" "${answer#*|}" \
        "HTTP/1.1 408 Request Timeout|{\"error\":{\"message\":\"$msg\",\"type\":\"invalid_request_error\"}}"
    [ "${answer%% s|*}" -le 4 ] && ok || bad "$what: answered after ${answer%%|*}"
}
drip_head() { printf 'GET /health HTTP/1.1\r\n'; for i in $(seq 12); do sleep 0.5; printf 'X-%d: 1\r\n' $i; done; }
drip_body() { printf 'POST /inference HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k-arg\r\nContent-Length: 100000\r\n\r\n'
              for i in $(seq 40); do head -c 30 /dev/zero; sleep 0.1; done; }
stall_body() { printf 'POST /inference HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k-arg\r\nContent-Length: 100000\r\n\r\n'; head -c 5000 /dev/zero; sleep 5; }
slow "a silent peer" "the request head did not arrive within 2 s" sleep 5
slow "a dripped head" "the request head did not arrive within 2 s" drip_head
slow "a stalled body" "the body came too slowly (under 1 kB/s, or 2 s without a byte)" stall_body
slow "a dripped body" "the body came too slowly (under 1 kB/s, or 2 s without a byte)" drip_body
expect_eq "after the slow peers" "$(post "$URL3/health")" 200
kill -TERM $pid3; wait $pid3; expect_eq "--api-key: SIGTERM" $? 0
grep -q 'Sanitizer' "$TMP/log3" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log3" | head)" || ok
"$HARK" serve --api-key "a key" 2>"$TMP/err"; expect_eq "--api-key with a space" "$?:$(cat "$TMP/err")" \
    "2:hark: serve: --api-key: an API key is 1 to 256 printable characters, no spaces"
printf '\n  \n' >"$TMP/nokeys"
"$HARK" serve --api-key-file "$TMP/nokeys" 2>"$TMP/err"; expect_eq "a key file without keys" "$?:$(cat "$TMP/err")" \
    "1:hark: $TMP/nokeys: no API key in it"
"$HARK" serve --api-key-file "$TMP/absent" 2>"$TMP/err"; expect_eq "no key file" "$?:$(cat "$TMP/err")" \
    "1:hark: $TMP/absent: No such file or directory"

# The connection handling under a storm (loopback, one peer address for all): 200
# connections dripping a head byte a second (opened again as the server closes them)
# and 4 authorised uploads sending just over the minimum rate hold no worker: /health
# answers within 1 s and an upload within its usual time and a second; half-closed
# requests are answered; 100 uploads at once are each answered right or 503; after it
# all the server's memory is as before (10 MB) and no upload is left behind.
# (Under the sanitizers, 4 times slower: the deadlines scaled, 50 drips, 40 uploads, and
# a storm of 32 s, which the checks in it take well under.)
PEERS=${PEERS:-build/tests/peers}
if [ -x "$PEERS" ]; then
    slow=1 drips=200 uploads=100 storm_s=12
    [ -n "${HARK_SANITIZED:-}" ] && slow=4 drips=50 uploads=40 storm_s=32
    mkdir "$TMP/up5"
    TMPDIR="$TMP/up5" "$HARK" serve --port 0 -j 2 --queue 8 --timeout 5 --api-key k5 2>"$TMP/log5" &
    pid5=$!
    URL5=$(url_of "$TMP/log5")
    ms() { echo $(($(date +%s%N) / 1000000)); }
    t0=$(ms); post -H "Authorization: Bearer k5" -F file=@$S1 "$URL5/inference" >/dev/null; usual=$(($(ms) - t0))
    rss() { awk '/^VmRSS/ { print $2 }' /proc/$pid5/status; }
    rss0=$(rss)
    "$PEERS" storm "${URL5##*:}" $drips 4 $storm_s k5 >"$TMP/storm" &
    stormer=$!
    sleep $((3 * slow))
    for i in 1 2 3; do
        expect_eq "/health in the storm ($i)" "$(curl -s --max-time $slow -o "$TMP/body" -w '%{http_code}' "$URL5/health"):$(cat "$TMP/body")" \
            '200:{"status":"ok"}'
    done
    limit=$(((usual + 1000 * slow) / 1000 + 1))
    expect_eq "an upload in the storm (${usual} ms + ${slow} s)" "$(post --max-time $limit -H "Authorization: Bearer k5" \
        -F file=@$S1 "$URL5/inference"):$(cat "$TMP/body")" "$want_text"
    # half-closed: the request whole, then shutdown(SHUT_WR); the answer still comes
    # (an interim 102 may come first: how a half-closed peer is told from a gone one)
    half() { "$PEERS" halfclose "${URL5##*:}" | tr -d '\r' | sed '/^HTTP\/1.1 102 /,/^$/d' | sed -n '1p;$p' | tr '\n' '|'; }
    expect_eq "half-closed GET /health" "$(printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n' | half)" 'HTTP/1.1 200 OK|{"status":"ok"}'
    { printf -- '--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n\r\n'
      cat $S1; printf -- '\r\n--b--\r\n'; } >"$TMP/half.body"
    { printf 'POST /inference HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k5\r\nContent-Length: %d\r\n' \
          "$(stat -c %s "$TMP/half.body")"
      printf 'Content-Type: multipart/form-data; boundary=b\r\n\r\n'; cat "$TMP/half.body"; } >"$TMP/half.req"
    expect_eq "half-closed upload" "$(half <"$TMP/half.req")" "HTTP/1.1 200 OK|${want_text#200:}"
    wait $stormer
    grep -q "^dripping heads opened [0-9]*, slow bodies opened 4$" "$TMP/storm" && ok || bad "the storm: $(cat "$TMP/storm")"
    # 100 uploads at once: each answered with the transcript, or 503 with Retry-After
    # (100 curls: curl's own --parallel sends its uploads a few at a time)
    many=(); for i in $(seq $uploads); do
        curl -s -H "Authorization: Bearer k5" -F file=@$S1 -D "$TMP/p_$i.head" -o "$TMP/p_$i" "$URL5/inference" &
        many+=($!)
    done
    wait "${many[@]}"
    right=0 busy=0
    for i in $(seq $uploads); do
        code=$(head -n 1 "$TMP/p_$i.head" | cut -d' ' -f2)
        if [ "$code:$(cat "$TMP/p_$i")" == "$want_text" ]; then right=$((right + 1))
        elif [ "$code" == 503 ] && grep -q '^Retry-After: 5' "$TMP/p_$i.head"; then busy=$((busy + 1))
        else bad "upload $i of $uploads: $code $(head -c 200 "$TMP/p_$i")"; fi
    done
    expect_eq "$uploads uploads: answered or 503" $((right + busy)) $uploads
    [ $right -ge 2 ] && ok || bad "$uploads uploads: only $right transcribed"
    sleep 1 # the last lingering closes
    rss1=$(rss)
    # (ASan keeps freed memory in its quarantine, 256 MB: there, LeakSanitizer's report at
    # the exit, checked below, stands for this)
    if [ -z "${HARK_SANITIZED:-}" ]; then
        [ $((rss1 - rss0)) -le 10240 ] && ok || bad "RSS after the storm: $rss0 kB before, $rss1 kB after"
    fi
    expect_eq "no upload left by the storm" "$(ls "$TMP/up5" | wc -l)" 0
    kill -TERM $pid5; wait $pid5; expect_eq "the storm: SIGTERM" $? 0
    grep -q 'Sanitizer' "$TMP/log5" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log5" | head)" || ok
else
    skip "no $PEERS (make test-build)"
fi

# a port in use (this server's), a bad host or port
"$HARK" serve --port "${URL##*:}" 2>"$TMP/err"; expect_eq "a port in use" "$?:$(cat "$TMP/err")" \
    "1:hark: serve: cannot listen on 127.0.0.1 port ${URL##*:} (Address already in use)"
"$HARK" serve --host 1.2.3 2>"$TMP/err"; expect_eq "--host 1.2.3" "$?:$(cat "$TMP/err")" \
    "1:hark: serve: --host 1.2.3 is not an IPv4 address"
# IPv6: --host ::1 listens there and says so in brackets (where the machine has ::1)
if grep -q '^0*1 .* lo$' /proc/net/if_inet6 2>/dev/null; then
    "$HARK" serve --host ::1 --port 0 2>"$TMP/log6" &
    pid6=$!
        URL6=$(url_of "$TMP/log6")
    expect_eq "--host ::1" "$(curl -s -g "$URL6/health")" '{"status":"ok"}'
    logged '^hark: ::1 GET /health 200 (' "$TMP/log6" && ok || bad "the IPv6 peer's line: $(cat "$TMP/log6")"
    kill -TERM $pid6; wait $pid6; expect_eq "--host ::1: SIGTERM" $? 0
else
    skip "no IPv6 loopback"
fi
"$HARK" serve --cors "https://a b" 2>"$TMP/err"; expect_eq "--cors with a space" "$?:$(cat "$TMP/err")" \
    "2:hark: serve: --cors: an origin is 1 to 256 printable characters, no spaces (https://app.example, or *)"
"$HARK" serve --port 70000 2>"$TMP/err"; expect_eq "--port 70000" "$?:$(cat "$TMP/err")" \
    "2:hark: bad value for --port: 70000 (see hark --help)"
"$HARK" serve --timeout 0 2>"$TMP/err"; expect_eq "--timeout 0" "$?:$(cat "$TMP/err")" \
    "2:hark: bad value for --timeout: 0 (see hark --help)"
"$HARK" serve --max-duration x 2>"$TMP/err"; expect_eq "--max-duration x" "$?:$(cat "$TMP/err")" \
    "2:hark: --max-duration takes seconds (0: no limit) (see hark --help)"
"$HARK" serve --nope 2>"$TMP/err"; expect_eq "serve --nope" "$?:$(cat "$TMP/err")" \
    "2:hark: serve: unknown option --nope (see hark serve --help)"
"$HARK" serve --convert 2>"$TMP/err"; expect_eq "serve --convert (whisper.cpp's)" "$?:$(cat "$TMP/err")" \
    "2:hark: serve: unknown option --convert: whisper.cpp's --convert has no use here: hark serve decodes what libsndfile cannot read with ffmpeg whenever ffmpeg is installed (see hark serve --help)"
"$HARK" serve --help >"$TMP/help"; expect_eq "serve --help" "$?:$(head -c 17 "$TMP/help")" "0:usage: hark serve"

kill -TERM $pid; wait $pid; expect_eq "SIGTERM: exit" $? 0
grep -q 'Sanitizer' "$TMP/log" && bad "sanitizer: $(grep -A5 Sanitizer "$TMP/log" | head)" || ok
grep -q '^hark: 127.0.0.1 POST /inference 400 (' "$TMP/log" && ok || bad "no request lines: $(cat "$TMP/log")"
summary serve
