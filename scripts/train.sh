#!/bin/sh
# Start or resume hark's model training in the background (one thread, niced).
# Checkpoint: models/train-ckpt/{model.fp16.pt,state.json,train.log} (commit these);
# fp32 weights + AdamW state and a mirror of the checkpoint: /work/cache/hark-train ($HARK_WORK).
# Data: /work/cache/hark-data ($HARK_DATA), built by scripts/make_data.sh.
# Extra arguments go to scripts/train.py (model shape is taken from state.json on resume).
cd "$(dirname "$0")/.."
L=/work/cache/logs
mkdir -p $L
D=${HARK_DATA:-/work/cache/hark-data}
[ -d "$D/train" ] || { echo "no $D: run: nohup nice -n 19 scripts/make_data.sh 120 80 > $L/synth.log 2>&1 &"; exit 1; }
OMP_WAIT_POLICY=PASSIVE nohup nice -n 10 /usr/bin/python3 scripts/train.py "$@" >> $L/train.out 2>&1 &
echo $! > $L/train.pid
echo "training pid $(cat $L/train.pid); log: models/train-ckpt/train.log (stdout: $L/train.out)"
