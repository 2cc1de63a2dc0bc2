#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout and bin/fanout-exp: a local build, not
# committed, that with EXP_NOSAMPLE set captures its two steps without the
# next step's sampling (each replays the batch sampled before capture), to
# time the step's own chain alone. products-sim's replayed step from 16 to
# 2048 seeds, alternating, twice: the fixed part of a step (16 seeds is
# about 1% of a 1024-seed step's sampled edges) and whether the sampling
# beside the backward pass lengthens it (issue 25, item 5).
# Summary lines in $OUT/floor.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup floor.log
export KEEP='"step_s"|error'
B=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
for k in 1 2; do
  for b in 16 64 256 512 1024 2048; do
    r "b$b-built-$k" 60 bin/fanout "${B[@]}" --batch $b
    EXP_NOSAMPLE=1 r "b$b-nosample-$k" 60 bin/fanout-exp "${B[@]}" --batch $b
    r "b$b-inorder-$k" 60 bin/fanout "${B[@]}" --batch $b --overlap-sampling=false
  done
done
step_times
