# Audio libsndfile cannot read (MP4/M4A, WebM, video) decoded through ffmpeg, as
# openai-whisper loads every file: the samples equal libsndfile's where both read
# them, and every failure is one line naming the file, ffmpeg's reason, exit 1.
. "$(dirname "$0")/lib.sh"
unset HARK_FFMPEG # lib.sh turns it off for the other scripts
if ! command -v ffmpeg >/dev/null; then
    skip "ffmpeg is not installed (make deps installs it)"; summary ffmpeg; exit
fi
S1=samples/sample01-en-us.wav S2=samples/sample05-awb.wav
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y "$@"; }

# lossless audio in containers libsndfile cannot open: the same samples, so the same
# log-mel to the bit and the same transcript in every format
ff -i $S1 -c:a alac "$TMP/s1.m4a" && ff -i $S1 -c:a flac "$TMP/s1.mkv"
"$HARK" mel $S1 -o "$TMP/wav.npy" && "$HARK" mel "$TMP/s1.m4a" -o "$TMP/m4a.npy" &&
    "$HARK" mel "$TMP/s1.mkv" -o "$TMP/mkv.npy"
cmp -s "$TMP/wav.npy" "$TMP/m4a.npy" && cmp -s "$TMP/wav.npy" "$TMP/mkv.npy" && ok ||
    bad "the log-mel of the ALAC m4a or the FLAC mkv differs from the WAV's"
"$HARK" -q -o "$TMP/wav" -f txt,srt,tsv $S1 && "$HARK" -q -o "$TMP/m4a" -f txt,srt,tsv "$TMP/s1.m4a"
for f in txt srt tsv; do
    cmp -s "$TMP/wav/sample01-en-us.$f" "$TMP/m4a/s1.$f" && ok || bad "m4a's $f differs from the WAV's"
done
[ -s "$TMP/wav/sample01-en-us.txt" ] && ok || bad "no transcript of $S1"
# stdin: an MP4 keeps its index at the end, which ffmpeg cannot reach in a pipe
cat "$TMP/s1.m4a" | "$HARK" -q - >"$TMP/stdin.txt" 2>"$TMP/err"
expect_eq "m4a on stdin: exit, stderr" "$? $(cat "$TMP/err")" "0 "
cmp -s "$TMP/stdin.txt" "$TMP/wav/sample01-en-us.txt" && ok || bad "m4a on stdin: $(cat "$TMP/stdin.txt")"

# a FIFO is read once, to its end: ffmpeg gets those bytes, not the FIFO again (which
# would wait for another writer for ever)
mkfifo "$TMP/memo.fifo"
cat "$TMP/s1.m4a" >"$TMP/memo.fifo" &
timeout 60 "$HARK" -q "$TMP/memo.fifo" >"$TMP/fifo.txt" 2>"$TMP/err"
expect_eq "m4a through a FIFO: exit, stderr" "$? $(cat "$TMP/err")" "0 "
cmp -s "$TMP/fifo.txt" "$TMP/wav/sample01-en-us.txt" && ok || bad "m4a through a FIFO: $(cat "$TMP/fifo.txt")"

# ffmpeg's rate and channel conversion is openai's: 44.1 kHz stereo Opus in WebM and
# AAC in MP4 (lossy) still say what the WAV says
sox $S1 -r 44100 -c 2 "$TMP/s1-44k.wav"
ff -i "$TMP/s1-44k.wav" -c:a libopus -b:a 64k "$TMP/s1.webm" && ff -i "$TMP/s1-44k.wav" -c:a aac "$TMP/s1.mp4"
for f in webm mp4; do
    "$HARK" -q "$TMP/s1.$f" >"$TMP/$f.txt" 2>"$TMP/err"
    expect_eq "$f: exit, stderr" "$? $(cat "$TMP/err")" "0 "
    cmp -s "$TMP/$f.txt" "$TMP/wav/sample01-en-us.txt" && ok || bad "$f says: $(cat "$TMP/$f.txt")"
done

# --diarize: two channels read through ffmpeg are labelled as the WAV's; a mono file,
# which ffmpeg upmixes for the comparison, gets no labels
two_speakers $S1 $S2 "$TMP/lr.wav" && ff -i "$TMP/lr.wav" -c:a alac "$TMP/lr.m4a"
"$HARK" -q --diarize -f tsv -o "$TMP/di-wav" "$TMP/lr.wav" && "$HARK" -q --diarize -f tsv -o "$TMP/di" "$TMP/lr.m4a" "$TMP/s1.m4a"
cmp -s "$TMP/di-wav/lr.tsv" "$TMP/di/lr.tsv" && ok || bad "--diarize m4a: $(diff "$TMP/di-wav/lr.tsv" "$TMP/di/lr.tsv" | head -n 4)"
[[ "$(tail -n +2 "$TMP/di/lr.tsv" | cut -f 3 | tr '\n' ' ')" =~ ^(0\ )+(1\ )+$ ]] && ok || bad "m4a speakers: $(cat "$TMP/di/lr.tsv")"
expect_eq "mono m4a: no speakers" "$(tail -n +2 "$TMP/di/s1.tsv" | cut -f 3 | sort -u)" ""
expect_eq "mono m4a: its segments" "$(tail -n +2 "$TMP/di/s1.tsv" | wc -l)" "$(tail -n +2 "$TMP/wav/sample01-en-us.tsv" | wc -l)"

# a directory walk takes what ffmpeg reads (by extension, any case)
mkdir "$TMP/dir" && cp "$TMP/s1.m4a" "$TMP/dir/a.m4a" && cp "$TMP/s1.mkv" "$TMP/dir/b.MKV" &&
    ff -i $S1 -c:a pcm_s16le "$TMP/dir/c.mov" && ff -i $S1 -c:a pcm_s16le "$TMP/dir/d.avi"
"$HARK" -q -f txt -o "$TMP/walked" "$TMP/dir" 2>"$TMP/err"
expect_eq "directory of m4a, mkv, mov, avi: exit, stderr, outputs" "$? $(cat "$TMP/err") $(ls "$TMP/walked" | tr '\n' ' ')" \
    "0  a.txt b.txt c.txt d.txt "
cat "$TMP/walked/"*.txt | sort -u | cmp -s - <(sort -u "$TMP/wav/sample01-en-us.txt") && ok ||
    bad "walked files say: $(cat "$TMP/walked/"*.txt | head -n 3)"

# hark test: voice memos beside their transcripts pass as their WAVs do
mkdir "$TMP/memos" && cp "$TMP/s1.m4a" "$TMP/memos/memo.m4a" && cp "$TMP/s1.webm" "$TMP/memos/call.webm"
cp samples/sample01-en-us.txt "$TMP/memos/memo.txt" && cp samples/sample01-en-us.txt "$TMP/memos/call.txt"
"$HARK" test "$TMP/memos" >"$TMP/out" 2>"$TMP/err"
expect_eq "hark test on m4a and webm: exit, stderr" "$? $(cat "$TMP/err")" "0 "
expect_eq "hark test rows" "$(awk 'NR > 1 { print $1, $NF }' "$TMP/out" | tr '\n' ' ')" \
    "call.webm PASS memo.m4a PASS TOTAL PASS "

# hark serve: an upload ffmpeg reads is answered as the command line answers it; one
# neither reads gets both reasons
if command -v curl >/dev/null; then
    "$HARK" serve --port 0 2>"$TMP/log" &
    pid=$!
    URL=$(url_of "$TMP/log")
    expect_eq "serve: webm" "$(curl -s -F file=@"$TMP/s1.webm" -F response_format=srt "$URL/inference")" \
        "$("$HARK" -q -f srt "$TMP/s1.webm")"
    expect_eq "serve: not audio" "$(curl -s -F file=@README.md "$URL/inference")" \
        '{"error":{"message":"README.md: not a readable audio file (Format not recognised.); ffmpeg: Invalid data found when processing input","type":"invalid_request_error"}}'
    kill $pid && wait $pid
    expect_eq "serve: exit after SIGTERM" $? 0
fi

# ---- what ffmpeg cannot read: its reason after what the file is, nothing written
echo "this is not audio" >"$TMP/text.wav"
expect_error "hark: $TMP/text.wav: not a readable audio file (Format not recognised.); ffmpeg: Invalid data found when processing input" "$TMP/text.wav"
head -c 3000 "$TMP/s1.mp4" >"$TMP/cut.m4a" # the index is at the end, cut off
expect_error "hark: $TMP/cut.m4a: an MP4/M4A file (AAC or other audio in an MPEG-4 container); ffmpeg: moov atom not found" "$TMP/cut.m4a"
ff -f lavfi -i testsrc=duration=1:size=32x32:rate=5 -c:v mpeg4 "$TMP/video.mp4"
expect_error "hark: $TMP/video.mp4: an MP4/M4A file (AAC or other audio in an MPEG-4 container); ffmpeg: no audio stream" "$TMP/video.mp4"
# text on stdin is known for what it is by its first bytes, before ffmpeg is asked
cat "$TMP/text.wav" | expect_error "hark: stdin: not a readable audio file (no audio format starts with the bytes 74 68 69 73 20 69 73 20)" -
"$HARK" -q -o "$TMP/none" -f all "$TMP/video.mp4" 2>/dev/null
expect_eq "failed m4a: exit, outputs" "$? $(ls "$TMP/none" 2>/dev/null | wc -l)" "1 0"
# playlists and manifests that would have ffmpeg read the files they name (a server's,
# for an upload) are not read
printf '#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n%s\n#EXT-X-ENDLIST\n' "$TMP/s1.m4a" >"$TMP/list.m3u8"
printf 'ffconcat version 1.0\nfile %s\n' "$TMP/s1.m4a" >"$TMP/list.txt"
notread="(a playlist or manifest, which opens the files it names) is not read"
expect_error "hark: $TMP/list.m3u8: not a readable audio file (Format not recognised.); ffmpeg: hls $notread" "$TMP/list.m3u8"
expect_error "hark: $TMP/list.txt: not a readable audio file (Format not recognised.); ffmpeg: concat $notread" "$TMP/list.txt"
# no ffmpeg: a known container says how to get it; anything else keeps libsndfile's reason
mp4="an MP4/M4A file (AAC or other audio in an MPEG-4 container)"
need="hark decodes it with ffmpeg, which was not found (apt-get install ffmpeg)"
HARK_FFMPEG=$TMP/no-such-program expect_error "hark: $TMP/s1.m4a: $mp4: $need" "$TMP/s1.m4a"
HARK_FFMPEG= expect_error "hark: $TMP/s1.m4a: $mp4: $need" "$TMP/s1.m4a"
HARK_FFMPEG= expect_error "hark: $TMP/text.wav: not a readable audio file (Format not recognised.)" "$TMP/text.wav"
# an ffmpeg that fails without a word, is killed, or writes nothing
fake() { printf '#!/bin/sh\n%s\n' "$2" >"$TMP/$1" && chmod +x "$TMP/$1"; }
fake silent 'exit 3'; fake killed 'kill -9 $$'; fake empty 'exit 0'; fake odd 'printf "\001\000\002"; echo oops >&2'
HARK_FFMPEG=$TMP/silent expect_error "hark: $TMP/s1.m4a: $mp4; ffmpeg: exit status 3" "$TMP/s1.m4a"
HARK_FFMPEG=$TMP/killed expect_error "hark: $TMP/s1.m4a: $mp4; ffmpeg: killed by signal 9" "$TMP/s1.m4a"
HARK_FFMPEG=$TMP/empty expect_error "hark: $TMP/s1.m4a: no audio samples" "$TMP/s1.m4a"
# one whole sample and half of another: the half is dropped, the sample transcribed
HARK_FFMPEG=$TMP/odd "$HARK" -q -f json -o "$TMP/odd-out" "$TMP/s1.m4a" 2>"$TMP/err"
expect_eq "three bytes of output: exit, stderr" "$? $(cat "$TMP/err")" "0 "
# ffmpeg gets none of the descriptors hark holds (a server's sockets) beyond its three
fake fds '[ -e /proc/$$/fd/7 ] && echo "fd 7 open" >&2 || echo "fd 7 closed" >&2; exit 1'
HARK_FFMPEG=$TMP/fds expect_error "hark: $TMP/s1.m4a: $mp4; ffmpeg: fd 7 closed" "$TMP/s1.m4a" 7<"$TMP/text.wav"
summary ffmpeg
