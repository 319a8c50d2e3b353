# Shared helpers for the CLI tests: counted checks and a closing summary line.
set -u
HARK=${HARK:-build/hark}
# no ffmpeg: errors for what libsndfile cannot read are libsndfile's, whether or not
# this machine has ffmpeg (test_ffmpeg.sh turns it back on)
export HARK_FFMPEG=
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PASS=0 FAIL=0 SKIP=0

ok() { PASS=$((PASS + 1)); }
bad() { FAIL=$((FAIL + 1)); echo "FAIL ${BASH_SOURCE[1]##*/}:${BASH_LINENO[0]}: $*"; }
skip() { SKIP=$((SKIP + 1)); echo "SKIP $*"; }
summary() { echo "# ${1}: $PASS passed, $FAIL failed, $SKIP skipped"; [ "$FAIL" -eq 0 ]; }

# expect_eq WHAT GOT WANT
expect_eq() { if [ "$2" == "$3" ]; then ok; else bad "$1: got [$2] want [$3]"; fi; }

# expect_error "exact stderr line" args... : exit 1, exactly that one line on
# stderr (so a sanitizer report fails it too), nothing on stdout.
expect_error() {
    local want=$1; shift
    "$HARK" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    expect_eq "exit status of hark $*" "$rc" 1
    expect_eq "stderr of hark $*" "$(cat "$TMP/err")" "$want"
    expect_eq "stdout of hark $*" "$(wc -c <"$TMP/out")" 0
}

# le32 N: four little-endian bytes, for crafting headers with printf.
le32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)))"; }

# clip_ms MS OUT: tests/data/clip.wav's first MS milliseconds as a WAV (16 kHz, 16-bit
# mono), so that files differ and an out-of-order or mixed-up result shows.
clip_ms() {
    local d=$(($1 * 32)) c=tests/data/clip.wav
    { head -c 4 $c; le32 $((36 + d)); head -c 40 $c | tail -c +9; le32 $d
      tail -c +45 $c | head -c $d; } >"$2"
}

# The URL that a server started with 2>LOG prints once it listens.
url_of() {
    for _ in $(seq 100); do grep -q 'listening on' "$1" && break; sleep 0.1; done
    grep -o 'http://[^ ]*' "$1"
}

# two_speakers A B OUT: a stereo file of A on the left channel, then after a second's
# pause B on the right (--diarize's case: two parties recorded a channel each)
two_speakers() {
    local plus1a plus1b
    plus1a=$(soxi -D "$1" | awk '{ print $1 + 1 }') plus1b=$(soxi -D "$2" | awk '{ print $1 + 1 }')
    sox "$1" "$TMP/left.wav" pad 0 "$plus1b" && sox "$2" "$TMP/right.wav" pad "$plus1a" 0 &&
        sox -M "$TMP/left.wav" "$TMP/right.wav" "$3"
}
