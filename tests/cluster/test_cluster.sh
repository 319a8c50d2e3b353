# make test-cluster: docs/batch.md's Slurm job array and GNU parallel line, run for
# real.  A one-node Slurm cluster (slurmctld, slurmd, munge) is started here in a
# temporary directory (generated slurm.conf with this machine's CPUs and memory, a
# fresh munge key) and stopped and removed at the end, even on failure.  Over a
# corpus of 40 clips in nested folders (wav, flac, ogg at 8-44.1 kHz), a long file
# and two broken ones: the job array runs to the end; then again with one task
# cancelled (scancel) and another's hark killed (SIGKILL) mid-run, both resubmitted
# as the docs say.  Each time the union of the outputs is byte-identical to one
# process's, nothing partial or temporary is left, each broken file is reported
# once, and hark summary agrees.  Needs root (the daemons run as root).
set -u
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
ROOT=$PWD
export PATH="$ROOT/build:$PATH" OPENBLAS_NUM_THREADS=1
T=$TMP S=$TMP/slurm
export SLURM_CONF=$S/slurm.conf

stop_cluster() {
    local f p
    for f in $S/slurmd.pid $S/slurmctld.pid $S/munge/pid; do
        p=$(cat $f 2>/dev/null) || continue
        kill "$p" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
}
trap 'stop_cluster; rm -rf "$TMP"' EXIT
for c in slurmctld slurmd munged sbatch parallel sox jq; do
    command -v $c >/dev/null || { bad "$c not found: make test-cluster installs it"; summary cluster; exit 1; }
done
[ "$(id -u)" = 0 ] || { skip "not root: the Slurm daemons run as root here"; summary cluster; exit 0; }

# a port pair nobody listens on
free_ports() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 20000))
        (: <>/dev/tcp/127.0.0.1/$p) 2>/dev/null || (: <>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null || { echo $p; return; }
    done
}

write_conf() {
    local node=$1 port=$2 mem
    mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
    cat >$SLURM_CONF <<CONF
ClusterName=harktest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SchedulerParameters=sched_interval=1
KillWait=5
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
}

start_cluster() {
    mkdir -p $S/state $S/spool $S/log $S/munge
    dd if=/dev/urandom of=$S/munge/key bs=1024 count=1 status=none && chmod 400 $S/munge/key
    munged --force --key-file=$S/munge/key --socket=$S/munge/sock --pid-file=$S/munge/pid \
        --log-file=$S/log/munge.log --seed-file=$S/munge/seed || return 1
    write_conf "$(hostname -s)" "$(free_ports)"
    slurmctld -i && slurmd || return 1
    for _ in $(seq 100); do
        [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    return 1
}

# 40 clips of the samples in nested folders, at four rates in three formats; a long
# file (three samples joined); a truncated WAV and a text file named .flac
make_corpus() {
    local c=$1 s n
    mkdir -p $c/en/us $c/en/gb $c/misc/deep/er $c/long $c/broken
    for s in samples/sample*.wav; do
        n=$(basename $s .wav)
        sox -V1 $s -r 16000 $c/en/us/$n.wav trim 0 5 && sox -V1 $s -r 22050 $c/en/gb/$n.flac trim 0 4 &&
            sox -V1 $s -r 44100 $c/misc/$n.ogg trim 0 3 && sox -V1 $s -r 8000 $c/misc/deep/er/$n.wav trim 0.5 4 || return 1
    done
    sox samples/long-espeak-en-us.wav samples/sample09-rms.wav samples/long-espeak-en-us.wav -r 16000 $c/long/joined.flac &&
        head -c 3000 samples/sample01-en-us.wav >$c/broken/cut.wav && echo "not audio" >$c/broken/text.flac
}

# the block of docs/batch.md after the marker line starting with $1
doc_block() { awk -v m="<!-- $1" 'index($0, m) == 1 { f = 1; next } f && /^```/ { if (g) exit; g = 1; next } g' docs/batch.md; }

# wait_jobs ID: until the job (array) has left the queue, at most 4 minutes
wait_jobs() {
    [ -n "$1" ] || return
    for _ in $(seq 1200); do [ -z "$(squeue -h -j $1 2>/dev/null)" ] && return 0; sleep 0.2; done
    bad "job $1 still queued after 4 minutes: $(squeue -j $1)"
}

# submit OUT DIR [SBATCH ARGS]: the docs' job script from DIR (where its logs go),
# with OUT and CORPUS in the environment as the docs say; prints the job id
submit() {
    local out=$1 dir=$2
    shift 2
    mkdir -p $dir && (cd $dir && OUT=$out CORPUS=$CORPUS sbatch --parsable "$@" $T/hark.sbatch)
}

# check LABEL OUT: the union of the outputs equals the one-process run, nothing
# partial, and the summary: all done but the two broken files, nothing to resubmit
check() {
    local label=$1 out=$2
    diff -r -x .hark-ledger $T/ref $out >$T/diff && ok || bad "$label: outputs differ from one process's: $(head -c 600 $T/diff)"
    expect_eq "$label: temporary files" "$(find $out -name '*.tmp.*' | wc -l)" 0
    hark summary $out -r $CORPUS >$T/sum; expect_eq "$label: summary exit" $? 1
    expect_eq "$label: summary counts" "$(head -n 1 $T/sum | sed 's/; .*//')" "$out: 43 files: 41 done, 2 failed, 0 missing"
    expect_eq "$label: summary failures" "$(sed -n 's/^failed: \([^:]*\): .*/\1/p' $T/sum | tr '\n' ' ')" \
        "$CORPUS/broken/cut.wav $CORPUS/broken/text.flac "
    expect_eq "$label: nothing done twice, nothing to resubmit" "$(grep -c '^done .* times\|^conflicting' $T/sum) $(tail -n 1 $T/sum)" \
        "0 shards to resubmit: none (of 4)"
}

t0=$SECONDS
CORPUS=$T/corpus
make_corpus $CORPUS && ok || bad "the corpus could not be made"
expect_eq "corpus: clips, long, broken" "$(find $CORPUS -type f | wc -l)" 43
doc_block hark.sbatch >$T/hark.sbatch
grep -q '^hark .*--shard "$SLURM_ARRAY_TASK_ID/4"' $T/hark.sbatch && ok || bad "no job script in docs/batch.md: $(cat $T/hark.sbatch)"
# the reference: one process, the whole corpus
hark -r -t 1 -q -o $T/ref $CORPUS 2>$T/ref.log; expect_eq "one process: exit (two broken files)" $? 1
echo "# corpus and one-process run: $((SECONDS - t0)) s"

if ! start_cluster; then
    bad "the Slurm cluster did not start: $(tail -n 5 $S/log/*.log 2>&1)"
    summary cluster; exit 1
fi
echo "# cluster up: $((SECONDS - t0)) s"

# 1. the array, to the end
job=$(submit $T/out1 $T/jobs1) && ok || bad "sbatch failed"
wait_jobs $job
expect_eq "run 1: a log per task" "$(ls $T/jobs1 | tr '\n' ' ')" "hark-${job}_1.log hark-${job}_2.log hark-${job}_3.log hark-${job}_4.log "
for f in cut.wav text.flac; do
    expect_eq "run 1: $f reported once" "$(cat $T/jobs1/*.log | grep -c "^hark: $CORPUS/broken/$f: ")" 1
done
check "run 1" $T/out1
echo "# run 1: $((SECONDS - t0)) s"

# 2. task 2's hark killed with SIGKILL after its first file, and task 1 cancelled
# (scancel) while in its one file, the long one (longest first: it makes a shard
# of its own); the shards the summary names resubmitted as the docs say
ledger_of() { ls $T/out2/.hark-ledger/*-$1of4-*.jsonl 2>/dev/null | head -n 1; }
n_done() { local l; l=$(ledger_of $1); if [ -n "$l" ]; then grep -c '"status":"done"' $l; else echo 0; fi; }
job=$(submit $T/out2 $T/jobs2)
for _ in $(seq 600); do [ "$(n_done 2)" -ge 1 ] && break; sleep 0.02; done
pid=$(ledger_of 2 | sed 's/.*-\([0-9]*\)\.jsonl$/\1/')
kill -KILL "$pid" && ok || bad "shard 2's hark (pid $pid) was not running to kill"
for _ in $(seq 600); do [ -n "$(ledger_of 1)" ] && break; sleep 0.02; done
sleep 1 # into the long file
expect_eq "run 2: shard 1 in its file when cancelled" "$(n_done 1)" 0
scancel ${job}_1 && ok || bad "scancel ${job}_1 failed"
wait_jobs $job
for k in 1 2; do
    state[$k]=$(scontrol show job ${job}_$k 2>/dev/null | grep -o 'JobState=[A-Z]*' | head -n 1)
done
expect_eq "run 2: the interrupted tasks' states" "${state[1]} ${state[2]}" "JobState=CANCELLED JobState=FAILED"
hark summary $T/out2 -r $CORPUS >$T/sum2
expect_eq "run 2: shards to resubmit" "$(tail -n 1 $T/sum2)" "shards to resubmit: 1 2 (of 4)"
again=$(tail -n 1 $T/sum2 | sed 's/shards to resubmit: \(.*\) (of 4)/\1/' | tr ' ' ',')
job2=$(submit $T/out2 $T/jobs2 --array=$again) && ok || bad "resubmitting $again failed"
wait_jobs $job2
check "run 2" $T/out2
expect_eq "run 2: resubmitted tasks' logs" "$(ls $T/jobs2 | grep -c "^hark-${job2}_")" 2
echo "# run 2, interrupted and resubmitted: $((SECONDS - t0)) s"

# 3. GNU parallel, the docs' line
doc_block parallel >$T/parallel.sh
grep -q '^parallel .*::: 1 2 3 4$' $T/parallel.sh && ok || bad "no parallel line in docs/batch.md: $(cat $T/parallel.sh)"
OUT=$T/out3 CORPUS=$CORPUS bash $T/parallel.sh >/dev/null 2>$T/par.log
for f in cut.wav text.flac; do
    expect_eq "parallel: $f reported once" "$(grep -c "^hark: $CORPUS/broken/$f: " $T/par.log)" 1
done
check "parallel" $T/out3
echo "# parallel: $((SECONDS - t0)) s"

summary cluster
