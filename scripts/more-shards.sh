#!/bin/sh
# More training shards, numbered FIRST to END - 1, for a training set that is replaced as
# it goes (train.py reads the shards present in $HARK_DATA/train when it starts, and new
# ones as they appear), speaking what scripts/shard-split says for each number and NEWEST
# (default train-descriptions).  Deterministic per shard number and NEWEST (shards
# 208-271: train-descriptions; 272-289: train-glosses). Run niced, it uses one core:
#   nohup nice -n 19 scripts/more-shards.sh 272 290 train-glosses > /work/cache/logs/synth.log 2>&1 &
set -e
cd "$(dirname "$0")/.."
P=/usr/bin/python3
D=${HARK_DATA:-/work/cache/hark-data}
k=$1
newest=${3:-train-descriptions}
while [ "$k" -lt "$2" ]; do
    read -r split voices <<EOS
$(scripts/shard-split "$k" "$newest")
EOS
    $P scripts/synth.py build --split $split --voices $voices --out "$D/train" --first "$k" --count 1
    k=$((k + 1))
done
