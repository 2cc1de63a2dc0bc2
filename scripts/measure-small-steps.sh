#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout-exp4: a local build, not committed, whose
# replay driver forks the next step's sampling onto the second stream at
# the start of a step instead of before its backward pass when
# EXP_FORKSTART is set. products-sim's replayed step at 256, 512, 1024 and
# 2048 seeds: as built, with the sampling in order (--overlap-sampling=false),
# and forked at the step's start; alternating, twice. Whether the small
# steps wait for the next step's sampling (issue 25, item 5).
# Summary lines in $OUT/small-steps.log.
tar -xJf bin/pack/bin.tar.xz -C bin; [ -f bin/fanout ] || cp bin/fanout-exp4 bin/fanout
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup small-steps.log
export KEEP='"step_s"|error'
B=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
for k in 1 2; do
  for b in 256 512 1024 2048; do
    r "b$b-built-$k" 60 bin/fanout-exp4 "${B[@]}" --batch $b
    r "b$b-inorder-$k" 60 bin/fanout-exp4 "${B[@]}" --batch $b --overlap-sampling=false
    EXP_FORKSTART=1 r "b$b-forkstart-$k" 60 bin/fanout-exp4 "${B[@]}" --batch $b
  done
done
step_times
