# Batches on the small random test model: directories walked (with and without
# -r), bad files reported while the rest finish, --shard slices that are
# disjoint and cover the list, resuming after a kill, --overwrite, -j giving
# the same bytes as -j 1 (also with --combine-decode, beams and fallback), stdout
# in input order, and the summary's counts.
# Transcripts are gibberish: runs are compared with each other, never with text.
. "$(dirname "$0")/lib.sh"
M=tests/data/tiny-random/hf-f32
CLIP=tests/data/clip.wav
T=$TMP
# Sanitizer reports go to files checked at the end: stderr is captured below.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/san" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/san"

# progress_paths FILE: the paths of the "[i/n] path: ..." lines, sorted.
progress_paths() { sed -nE 's/^\[[0-9]+\/[0-9]+\] (.*): [0-9.]+ s audio, [0-9.]+ s$/\1/p' "$1" | LC_ALL=C sort; }
# outputs DIR: the files under DIR, relative, sorted, on one line (not the ledgers
# in DIR/.hark-ledger, which test_ledger.sh checks).
outputs() { (cd "$1" && find . -path ./.hark-ledger -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' '); }

mkdir -p $T/in/sub $T/in/.hidden
clip_ms 7320 $T/in/a.wav; clip_ms 3000 $T/in/b.wav; clip_ms 5000 $T/in/c.wav
clip_ms 4500 $T/in/sub/d.wav; clip_ms 2500 $T/in/sub/e.wav; cp $T/in/b.wav $T/in/.hidden/b.wav
head -c 100044 $CLIP >$T/in/bad.wav            # truncated WAV
echo "this is not audio" >$T/in/text.ogg        # an audio extension, no audio
echo "notes" >$T/in/notes.txt                   # not an audio extension: ignored
BAD="$T/in/bad.wav $T/in/text.ogg"
# greedy, no fallback: the batch, not the decoder, is under test (and it is fast)
hk() { "$HARK" -m $M --beam-size 1 --temperature 0 "$@"; }

# one file without -o: the transcript on stdout, nothing on stderr (as ever)
hk $T/in/a.wav >$T/a.ref 2>$T/err; expect_eq "single file exit" $? 0
expect_eq "single file stderr" "$(wc -c <$T/err)" 0

# a directory without -r: its own files only; bad ones named, the rest done
hk -o $T/o1 $T/in >$T/out 2>$T/err; expect_eq "batch with bad files exit" $? 1
expect_eq "top-level outputs" "$(outputs $T/o1)" "a.json a.txt b.json b.txt c.json c.txt "
cmp -s $T/a.ref $T/o1/a.txt && ok || bad "batch a.txt differs from the single-file run"
for f in $BAD; do
    expect_eq "$f reported once" "$(grep -c "^hark: $f: " $T/err)" 1
done
expect_eq "progress lines" "$(progress_paths $T/err | tr '\n' ' ')" "$T/in/a.wav $T/in/b.wav $T/in/c.wav "
expect_eq "summary" "$(grep -c '^hark: 3 done, 0 skipped, 2 failed; ' $T/err)" 1
expect_eq "stderr lines" "$(wc -l <$T/err)" 6
expect_eq "stdout with -o" "$(wc -c <$T/out)" 0

# -r: subdirectories too, mirrored under -o; hidden ones skipped
hk -r -o $T/o2 $T/in 2>$T/err; expect_eq "-r exit" $? 1
expect_eq "-r outputs" "$(outputs $T/o2)" \
    "a.json a.txt b.json b.txt c.json c.txt sub/d.json sub/d.txt sub/e.json sub/e.txt "
expect_eq "-r summary" "$(grep -c '^hark: 5 done, 0 skipped, 2 failed; ' $T/err)" 1
cmp -s $T/o1/b.txt $T/o2/b.txt && ok || bad "b.txt differs between runs"
cmp -s $T/o2/b.txt $T/o2/sub/d.txt && bad "b and d should differ (different lengths)" || ok

# again: everything skipped, only the bad files retried
hk -r -o $T/o2 $T/in 2>$T/err; expect_eq "rerun exit" $? 1
expect_eq "rerun summary" "$(grep -c '^hark: 0 done, 5 skipped, 2 failed; ' $T/err)" 1
expect_eq "rerun progress" "$(progress_paths $T/err | wc -l)" 0

# --overwrite redoes them, to the same bytes
cp -r $T/o2 $T/o2.before
hk --overwrite -o $T/o2 $T/in 2>$T/err
expect_eq "--overwrite summary" "$(grep -c '^hark: 3 done, 0 skipped, 2 failed; ' $T/err)" 1
diff -r -x .hark-ledger $T/o2.before $T/o2 >/dev/null && ok || bad "--overwrite changed the outputs"

# resuming: complete sets are skipped, a partial set (txt without json) redone
mkdir -p $T/o3 && cp $T/o2/a.* $T/o2/c.* $T/o2/b.txt $T/o3/
hk -r -o $T/o3 $T/in 2>$T/err
expect_eq "resume did the rest" "$(progress_paths $T/err | tr '\n' ' ')" \
    "$T/in/b.wav $T/in/sub/d.wav $T/in/sub/e.wav "
expect_eq "resume summary" "$(grep -c '^hark: 3 done, 2 skipped, 2 failed; ' $T/err)" 1
diff -r -x .hark-ledger $T/o2 $T/o3 >/dev/null && ok || bad "resumed outputs differ from a full run"

# --combine-decode -j 3: the files' beams and, as the random f16 model's gibberish
# falls back every window, their best-of samples step through the decoder
# together (the shared weight reads): every output the same bytes as -j 1
F16=tests/data/tiny-random/hf-f16
mkdir -p $T/jin
clip_ms 7320 $T/jin/a.wav; clip_ms 2500 $T/jin/b.wav; clip_ms 5000 $T/jin/c.wav
sox $CLIP $CLIP $CLIP $CLIP $CLIP $T/jin/d.wav 2>/dev/null || clip_ms 7000 $T/jin/d.wav
"$HARK" -m $F16 -q -f all -o $T/j1 $T/jin 2>$T/err; expect_eq "combined: -j 1 exit" $? 0
expect_eq "combined: fallback taken" "$(grep -l '"temperature":1' $T/j1/*.json | wc -l)" 4
"$HARK" -m $F16 -q -f all --combine-decode -j 3 -o $T/j3 $T/jin 2>$T/err
expect_eq "combined: -j 3 exit" $? 0
diff -r -x .hark-ledger $T/j1 $T/j3 >/dev/null && ok || bad "--combine-decode -j 3 outputs differ from -j 1"
"$HARK" -m $F16 -q -f all --beam-size 1 -o $T/g1 $T/jin 2>$T/err
"$HARK" -m $F16 -q -f all --beam-size 1 --combine-decode -j 4 -t 2 -o $T/g4 $T/jin 2>$T/err
diff -r -x .hark-ledger $T/g1 $T/g4 >/dev/null && ok || bad "--combine-decode -j 4 -t 2 greedy outputs differ"

# -j 2 writes the same bytes as -j 1; without -o, stdout keeps the input order
hk -r -j 2 -q -o $T/o4 $T/in 2>$T/err; expect_eq "-j 2 exit" $? 1
diff -r -x .hark-ledger $T/o2 $T/o4 >/dev/null && ok || bad "-j 2 outputs differ from -j 1"
expect_eq "-q: the errors only" "$(cut -d: -f1,2 $T/err | LC_ALL=C sort | tr '\n' ' ')" "hark: $T/in/bad.wav hark: $T/in/text.ogg "
# several inputs without -o: txt and json files in the current directory (as
# openai's CLI), nothing on stdout
mkdir $T/cwd
(cd $T/cwd && "$OLDPWD/$HARK" -m "$OLDPWD/$M" --beam-size 1 --temperature 0 -q -j 3 $T/in) >$T/out 2>$T/err
expect_eq "-j 3 into the current directory exit" $? 1
expect_eq "files in the current directory" "$(ls $T/cwd | tr '\n' ' ')" "a.json a.txt b.json b.txt c.json c.txt "
expect_eq "nothing on stdout" "$(wc -c <$T/out)" 0
cmp -s $T/o1/b.txt $T/cwd/b.txt && ok || bad "the current directory's b.txt differs from -o's"

# --shard: K/3 holds the files at K-1, K+2, ... of the sorted list; together
# the slices cover it, with no file twice
find $T/in -name '[!.]*' -type f ! -name '*.txt' ! -path '*/.*' | LC_ALL=C sort >$T/list
expect_eq "list length" "$(wc -l <$T/list)" 7
for k in 1 2 3; do
    hk -r -f txt --shard $k/3 -o $T/s$k $T/in >/dev/null 2>$T/err$k
    want=$(awk -v k=$k 'NR % 3 == k % 3' $T/list | grep -v -e bad.wav -e text.ogg |
           sed -e "s|^$T/in/||" -e 's|\.wav$|.txt|' | tr '\n' ' ')
    expect_eq "shard $k/3 outputs" "$(outputs $T/s$k)" "$want"
    want=$(awk -v k=$k 'NR % 3 == k % 3' $T/list | grep -c -e bad.wav -e text.ogg)
    expect_eq "shard $k/3 failures" "$(grep -c '^hark: /' $T/err$k)" "$want"
done
expect_eq "shards cover the list" "$( (outputs $T/s1; outputs $T/s2; outputs $T/s3) | tr ' ' '\n' | sed '/^$/d' | LC_ALL=C sort | tr '\n' ' ')" \
    "a.txt b.txt c.txt sub/d.txt sub/e.txt "

# killed mid-run (SIGTERM after the first output) and restarted: no temporary
# or partial outputs; the restart does exactly the files not yet done
mkdir $T/k
for i in 1 2 3 4 5 6 7 8; do clip_ms $((2000 + 500 * i)) $T/k/f$i.wav; done
"$HARK" -m $M -j 1 -o $T/ok $T/k >/dev/null 2>$T/err &
pid=$!
for _ in $(seq 600); do ls $T/ok/*.json >/dev/null 2>&1 && break; sleep 0.05; done
kill -TERM $pid 2>/dev/null
wait $pid; rc=$?
[ $rc -eq 143 ] || [ $rc -eq 0 ] && ok || bad "killed batch exit $rc"
expect_eq "temporary files left" "$(find $T/ok -name '*.tmp.*' | wc -l)" 0
done_before=$(ls $T/ok/*.json | wc -l)
expect_eq "complete sets only" "$(ls $T/ok/*.txt | wc -l)" "$done_before"
"$HARK" -m $M -j 1 -o $T/ok $T/k 2>$T/err; expect_eq "restart exit" $? 0
expect_eq "restart did the rest" "$(progress_paths $T/err | wc -l)" $((8 - done_before))
expect_eq "restart summary" "$(grep -c "^hark: $((8 - done_before)) done, $done_before skipped, 0 failed; " $T/err)" 1
expect_eq "all outputs after restart" "$(ls $T/ok | wc -l)" 16
echo "killed batch had done $done_before of 8"

# two inputs with the same output name: the later in path order fails, the
# earlier is written
hk -o $T/o5 $T/in/b.wav $T/in/.hidden/b.wav 2>$T/err; expect_eq "clash exit" $? 1
expect_eq "clash message" "$(grep -c "^hark: $T/in/b.wav: its outputs $T/o5/b.\* would overwrite those of $T/in/.hidden/b.wav$" $T/err)" 1
expect_eq "clash summary" "$(grep -c '^hark: 1 done, 0 skipped, 1 failed; ' $T/err)" 1

# a directory without audio files is an error (without -r: a hint about -r)
mkdir -p $T/empty/deeper && cp $T/in/a.wav $T/empty/deeper/
hk -o $T/o6 $T/empty 2>$T/err; expect_eq "no audio files exit" $? 1
expect_eq "no audio files message" "$(head -n 1 $T/err)" "hark: $T/empty: no audio files (-r walks subdirectories)"
# recordings hark cannot decode are walked too, each failing with what to do
mkdir $T/memos && cp $T/in/a.wav $T/memos/ && { printf '\x00\x00\x00\x20ftypM4A '; head -c 99 /dev/zero; } >$T/memos/m.M4A
hk -o $T/o8 $T/memos 2>$T/err; expect_eq "m4a in a directory: exit" $? 1
expect_eq "m4a in a directory: message" "$(grep -c "^hark: $T/memos/m.M4A: an MP4/M4A file .*: hark decodes it with ffmpeg, which was not found" $T/err) $(ls $T/o8)" "$(printf "1 a.json\na.txt")"

# on a terminal: one progress line redrawn in place, no per-file lines
if command -v script >/dev/null; then
    script -qec "$HARK -m $M --beam-size 1 --temperature 0 -o $T/o7 $T/in" /dev/null </dev/null >$T/tty 2>&1
    grep -q $'\r\[#*\]* 5/5 files, 0:' $T/tty && ok || bad "no progress bar at 5/5: $(cat -A $T/tty | head -c 400)"
    # within a file too: the audio of its windows so far, before the file is done
    grep -q $'\r\[#*\.*\] 0/5 files, 0:0[1-9] audio, ETA [0-9]' $T/tty && ok ||
        bad "no progress within the first file: $(cat -A $T/tty | head -c 400)"
    expect_eq "no per-file lines on a terminal" "$(grep -c '^\[[0-9]' $T/tty)" 0
    grep -q 'hark: 3 done, 0 skipped, 2 failed; ' $T/tty && ok || bad "terminal summary"
else
    skip "script absent: the terminal progress bar is not checked"
fi

# A disk that fills up: each output that cannot be written is one line naming it and
# why, its file fails and the rest go on; what was written is whole (the same bytes as
# on a roomy disk), and no partial file or temporary is left. hark quantize the same.
expect_error "hark: $T/nodir/q.bin: cannot write (No such file or directory)" quantize $M $T/nodir/q.bin q8_0
FULL=$T/full
mkdir $FULL
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=12k tmpfs $FULL 2>/dev/null; then
    hk -r -f json -o $FULL $T/in 2>$T/err; rc=$?
    failed=$(grep -c "^hark: $FULL/.*\.json: cannot write (No space left on device)$" $T/err)
    written=$(cd $FULL && find . -path ./.hark-ledger -prune -o -type f -print | wc -l)
    expect_eq "full disk: exit, every file written or reported" "$rc $((written + failed))" "1 5"
    [ "$failed" -ge 1 ] && ok || bad "12 kB held every output: $(outputs $FULL)"
    for f in $(cd $FULL && find . -name '*.json'); do
        cmp -s $FULL/$f $T/o2/$f && ok || bad "$f differs from the roomy disk's"
    done
    expect_eq "full disk: no temporaries" "$(find $FULL -name '*.tmp.*' | wc -l)" 0
    rm -rf $FULL/* $FULL/.hark-ledger
    expect_error "hark: $FULL/q.bin: cannot write (No space left on device)" quantize $M $FULL/q.bin q8_0
    expect_eq "quantize: nothing left" "$(ls -A $FULL)" ""
    umount $FULL
else
    skip "no tmpfs to fill (needs root): a full disk is not checked"
fi

expect_eq "sanitizer reports" "$(cat $T/san.* 2>/dev/null | head -n 40)" ""
summary batch
