# hark summary on hand-made ledgers: two hosts, two shards (striped), a file done
# twice, one done with two models, one done and then failed, a broken file, two
# files missing, a process killed mid-line; its counts, hosts, failures, shards to
# resubmit, and --json.  Nothing is transcribed, so the sanitized run is as quick.
. "$(dirname "$0")/lib.sh"
T=$TMP
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$T/san" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$T/san"
mkdir -p $T/in $T/o/.hark-ledger
for i in 1 2 3 4 5 6; do : >$T/in/x$i.wav; done # shard 1/2: x1 x3 x5, 2/2: x2 x4 x6
# rec LEDGER HOST SHARD RUN T NAME STATUS AUDIO [MODEL] [ERROR]: a ledger line as hark writes it
rec() {
    local err=""; [ -n "${10:-}" ] && err=",\"error\":\"${10}\""
    local who="\"host\":\"$2\",\"shard\":\"$3\",\"balance\":\"position\",\"pid\":$4,\"run\":$4,\"t\":$5"
    if [ "$7" = end ]; then echo "{\"status\":\"end\",\"audio_s\":$8,\"wall_s\":1,$who}"
    else echo "{\"path\":\"$T/in/$6.wav\",\"name\":\"$6\",\"status\":\"$7\"$err,\"size\":0,\"mtime\":0,\"audio_s\":$8,\"wall_s\":1,\"model\":\"${9:-aaaa}\",\"options\":\"oooo\",$who}"; fi
}
L=$T/o/.hark-ledger
{ rec a h1 1/2 1000 1002 x1 done 10; rec a h1 1/2 1000 1004 x3 done 20
  rec a h1 1/2 1000 1006 x5 failed 0 aaaa "$T/in/x5.wav: not a readable audio file"
  rec a h1 1/2 1000 1010 - end 30; } >$L/h1-1of2-1000.jsonl
{ rec a h2 2/2 2000 2005 x2 done 40; rec a h2 2/2 2000 2010 x3 done 20
  printf '{"path":"%s/in/x4.wav","na' $T; } >$L/h2-2of2-2000.jsonl   # killed mid-line, no end
{ rec a h2 1/2 3000 3020 x1 done 10 bbbb; rec a h2 1/2 3000 3030 x2 failed 0 bbbb "$T/in/x2.wav: gone"
  rec a h2 1/2 3000 3040 - end 10; } >$L/h2-1of2-3000.jsonl

"$HARK" summary $T/o $T/in >$T/out 2>$T/err; expect_eq "exit: not complete" $? 1
expect_eq "stderr" "$(cat $T/err)" ""
expect_eq "the report" "$(cat $T/out)" "$T/o: 6 files: 2 done, 2 failed, 2 missing; 0.008 h of audio
host h1: 1 runs, 0 files, 0.000 h of audio in 10.0 s, real-time factor 0.000
host h2: 2 runs, 2 files, 0.008 h of audio in 50.0 s, real-time factor 1.667
failed: $T/in/x2.wav: gone
failed: $T/in/x5.wav: not a readable audio file
done 2 times: x1
done 2 times: x3
conflicting: x1: done with different models or options, or failed too
conflicting: x2: failed after it was done
missing: $T/in/x4.wav (shard 2)
missing: $T/in/x6.wav (shard 2)
lines cut short: 1
shards to resubmit: 2 (of 2)"
"$HARK" summary --json $T/o $T/in >$T/json; expect_eq "--json exit" $? 1
expect_eq "--json" "$(jq -c '[.files, .done, .failed, .missing, .shards, .resubmit, .torn_lines, [.missing_files[].path], [.failures[].path], [.hosts[] | [.host, .runs, .files, .audio_s, .wall_s]]]' $T/json)" \
    "[6,2,2,2,2,[2],1,[\"$T/in/x4.wav\",\"$T/in/x6.wav\"],[\"$T/in/x2.wav\",\"$T/in/x5.wav\"],[[\"h1\",1,0,0,10],[\"h2\",2,2,30,50]]]"

# without the inputs: nothing can be missing, but the killed shard still shows
"$HARK" summary $T/o >$T/out; expect_eq "without inputs: exit" $? 1
expect_eq "without inputs" "$(head -n 1 $T/out) | $(tail -n 1 $T/out)" "$T/o: 4 files: 2 done, 2 failed, 0 missing; 0.008 h of audio | shards to resubmit: 2 (of 2)"
# once shard 2 is resubmitted and finishes (x2 done again, x4 x6 done): complete but for x5
{ rec a h3 2/2 4000 4001 x2 done 40; rec a h3 2/2 4000 4002 x4 done 5; rec a h3 2/2 4000 4003 x6 done 5
  rec a h3 2/2 4000 4004 - end 50; } >$L/h3-2of2-4000.jsonl
"$HARK" summary $T/o $T/in >$T/out
expect_eq "resubmitted: counts" "$(head -n 1 $T/out)" "$T/o: 6 files: 5 done, 1 failed, 0 missing; 0.022 h of audio"
expect_eq "resubmitted: shards" "$(tail -n 1 $T/out)" "shards to resubmit: none (of 2)"
rm $L/h1-1of2-1000.jsonl $L/h2-1of2-3000.jsonl
{ rec a h1 1/2 5000 5001 x1 done 1; rec a h1 1/2 5000 5002 x3 done 1; rec a h1 1/2 5000 5003 x5 done 1
  rec a h1 1/2 5000 5004 - end 3; } >$L/h1-1of2-5000.jsonl
"$HARK" summary $T/o $T/in >$T/out; expect_eq "complete: exit 0" $? 0

"$HARK" summary $T/in >$T/out 2>$T/err
expect_eq "no ledger: exit 2, one line" "$? $(cat $T/err) $(wc -c <$T/out)" "2 hark: $T/in: no ledger ($T/in/.hark-ledger/*.jsonl): not a batch's -o 0"
expect_eq "usage exit" "$("$HARK" summary 2>/dev/null; echo $?)" 2
expect_eq "sanitizer reports" "$(cat $T/san.* 2>/dev/null | head -n 40)" ""
summary summary
