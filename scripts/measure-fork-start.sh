#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here: bin/fanout-before (the next step's sampling forked before
# the backward pass), bin/fanout (forked after the bottom layer's forward
# pass) and bin/fanout-exp (a local build, not committed: with
# EXP_FORKSTART, forked at the forward pass's start, after its transposes).
# products-sim's replayed step from 16 to 2048 seeds, alternating, twice
# (issue 25, item 5). Summary lines in $OUT/fork-start.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fork-start.log
export KEEP='"step_s"|error'
B=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
for k in 1 2; do
  for b in 16 256 512 1024 2048; do
    r "b$b-before-$k" 60 bin/fanout-before "${B[@]}" --batch $b
    r "b$b-after-$k" 60 bin/fanout "${B[@]}" --batch $b
    EXP_FORKSTART=1 r "b$b-start-$k" 60 bin/fanout-exp "${B[@]}" --batch $b
  done
done
step_times
gzip -f "$O/runs.log"
