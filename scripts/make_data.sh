#!/bin/sh
# Build the synthesized-speech cache used by scripts/train.py, outside the repo
# (default /work/cache/hark-data, or $HARK_DATA).  Deterministic: shard k of a set
# is the same on every machine; existing shards are skipped, so it resumes.
# Run niced, it uses one core:  nohup nice -n 19 scripts/make_data.sh 120 80 100 > /work/cache/logs/synth.log 2>&1 &
# The third count is shards of WordNet's example sentences (corpus/train-wordnet.txt, the
# training voices), numbered after the extra voices' (0, the default, makes none).
set -e
cd "$(dirname "$0")/.."
P=/usr/bin/python3
D=${HARK_DATA:-/work/cache/hark-data}
N=${1:-120}
X=${2:-80}   # shards of the extra voices (synth.py --voices extra), numbered after the N
W=${3:-0}    # shards of corpus/train-wordnet.txt, numbered after those
$P scripts/synth.py build --split valid --voices train   --out "$D/valid"     --count 1 --per-shard 300
$P scripts/synth.py build --split valid --voices heldout --out "$D/valid-rms" --count 1 --per-shard 200
$P scripts/synth.py build --split train --voices train   --out "$D/train"     --first 0 --count "$N"
$P scripts/synth.py build --split train --voices extra   --out "$D/train"     --first "$N" --count "$X"
[ "$W" -eq 0 ] || $P scripts/synth.py build --split train-wordnet --voices train --out "$D/train" --first $((N + X)) --count "$W"
