# --shard K/N --balance duration, through --dry-run (nothing is transcribed): the
# shards are disjoint and cover the list; files go longest first to the shard with
# the least audio so far (lengths from the headers, sizes where a header cannot
# tell); the same for every order the files are named in; every shard reports the
# same totals.
. "$(dirname "$0")/lib.sh"
T=$TMP
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/san" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/san"
M=tests/data/tiny-random/hf-f32
mkdir -p $T/in/a/b $T/in/c
i=0
for ms in 7000 1000 5000 3000 6000 2000 4000 6500 500 4000; do  # clip.wav is 7.3 s
    i=$((i + 1)); d=$T/in; [ $i -gt 4 ] && d=$T/in/a; [ $i -gt 7 ] && d=$T/in/a/b
    clip_ms $ms $d/f$i.wav
done
head -c 48000 /dev/zero >$T/in/c/z.ogg    # no header: 48000 bytes at 128 kbit/s, 3 s
# plan K N [ARGS]: the files shard K/N would do, one a line
plan() { "$HARK" -m $M --dry-run --balance duration --shard $1/$2 -o $T/o "${@:3}" | sed -n 's/^do \(.*\): to do$/\1/p'; }

# the expected assignment: longest first (then by path), each to the lightest shard
# (the first of equals), from soxi's lengths and z.ogg's estimate
for f in $(find $T/in -name '*.wav'); do echo "$(soxi -D $f) $f"; done >$T/len
echo "3 $T/in/c/z.ogg" >>$T/len
LC_ALL=C sort -k1,1gr -k2,2 $T/len | awk -v n=3 '{ b = 0; for (k = 1; k < n; k++) if (load[k] < load[b]) b = k
    load[b] += int($1 * 1000 + 0.5); print b + 1, $2 } END { for (k = 0; k < n; k++) print "total", k + 1, load[k] / 1000 }' >$T/want
for k in 1 2 3; do
    plan $k 3 -r $T/in | LC_ALL=C sort >$T/got$k
    expect_eq "shard $k/3: longest first to the lightest" "$(cat $T/got$k | tr '\n' ' ')" \
        "$(awk -v k=$k '$1 == k { print $2 }' $T/want | LC_ALL=C sort | tr '\n' ' ')"
done
expect_eq "disjoint and covering" "$(cat $T/got1 $T/got2 $T/got3 | LC_ALL=C sort | uniq -u | wc -l) $(cat $T/got1 $T/got2 $T/got3 | wc -l)" "11 11"
"$HARK" -m $M --dry-run --balance duration --shard 2/3 -o $T/o -r $T/in >$T/p2
expect_eq "the shards' totals" "$(grep '^shard ' $T/p2 | tr '\n' '|')" \
    "$(awk '$1 == "total" { printf "shard %d/3: %s files, %.1f s%s|", $2, 0, $3, $2 == 2 ? " (this one)" : "" }' $T/want |
       sed "s/: 0 files/: FILES files/g" | awk -v a=$(wc -l <$T/got1) -v b=$(wc -l <$T/got2) -v c=$(wc -l <$T/got3) \
       '{ n = split($0, s, "|"); for (i = 1; i < n; i++) { sub("FILES", i == 1 ? a : i == 2 ? b : c, s[i]); printf "%s|", s[i] } }')"
# named one by one, in two other orders: the same shards
files=$(awk '{ print $2 }' $T/len)
for k in 1 2 3; do
    plan $k 3 $(echo "$files" | sort -r) | LC_ALL=C sort >$T/r$k
    plan $k 3 $(echo "$files" | shuf) | LC_ALL=C sort >$T/s$k
    expect_eq "shard $k/3 in any order" "$(md5sum <$T/r$k) $(md5sum <$T/s$k)" "$(md5sum <$T/got$k) $(md5sum <$T/got$k)"
done
# without --balance: striped by position, as before
"$HARK" -m $M --dry-run --shard 1/3 -o $T/o -r $T/in | sed -n 's/^do \(.*\): to do$/\1/p' >$T/striped
expect_eq "striped" "$(cat $T/striped | tr '\n' ' ')" "$(awk '{ print $2 }' $T/len | LC_ALL=C sort | awk 'NR % 3 == 1' | tr '\n' ' ')"
"$HARK" --balance size $T/in >/dev/null 2>$T/err
expect_eq "--balance size: a usage error" "$? $(cat $T/err)" "2 hark: --balance takes duration or position (see hark --help)"
expect_eq "sanitizer reports" "$(cat $T/san.* 2>/dev/null | head -n 40)" ""
summary shard
