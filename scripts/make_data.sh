#!/bin/sh
# Build the synthesized-speech cache used by scripts/train.py (data/ is gitignored).
# Deterministic: shard k of a set is the same on every machine.  Run niced, one core.
set -e
cd "$(dirname "$0")/.."
P=/usr/bin/python3
N=${1:-120}
$P scripts/synth.py build --split valid --voices train   --out data/cache/valid     --count 1 --per-shard 300
$P scripts/synth.py build --split valid --voices heldout --out data/cache/valid-rms --count 1 --per-shard 200
$P scripts/synth.py build --split train --voices train   --out data/cache/train     --first 0 --count "$N"
