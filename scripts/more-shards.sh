#!/bin/sh
# More training shards, numbered FIRST to END - 1, for a training set that is replaced as
# it goes (train.py reads the shards present in $HARK_DATA/train when it starts, and new
# ones as they appear). Half of them speak corpus/train-descriptions.txt (the newest text),
# the rest cycle through corpus/train.txt and train-wordnet.txt in the training voices and
# train.txt in the extra voices (synth.py --voices extra).  Deterministic per shard number.
# Run niced, it uses one core:
#   nohup nice -n 19 scripts/more-shards.sh 208 232 > /work/cache/logs/synth.log 2>&1 &
set -e
cd "$(dirname "$0")/.."
P=/usr/bin/python3
D=${HARK_DATA:-/work/cache/hark-data}
k=$1
while [ "$k" -lt "$2" ]; do
    case $((k % 6)) in
        0|2|4) split=train-descriptions voices=train ;;
        1) split=train voices=train ;;
        3) split=train-wordnet voices=train ;;
        5) split=train voices=extra ;;
    esac
    $P scripts/synth.py build --split $split --voices $voices --out "$D/train" --first "$k" --count 1
    k=$((k + 1))
done
