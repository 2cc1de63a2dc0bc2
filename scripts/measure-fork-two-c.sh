#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here: bin/fanout-before, bin/fanout (as in
# measure-fork-two.sh) and bin/fanout-exp: a local build, not committed,
# that with EXP_FORKSTART set forks the next step's sampling right after
# the forward pass's transposes, at the step's start. products-sim on one
# GPU and on two (partitioned lists, the default), twice, alternating.
# Summary lines in $OUT/fork-two-c.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fork-two-c.log
export KEEP='epoch [2-5]/|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  for d in 2 1; do
    r "d$d-before-$k" 60 bin/fanout-before "${P[@]}" --devices $d
    r "d$d-after-$k" 60 bin/fanout "${P[@]}" --devices $d
    EXP_FORKSTART=1 r "d$d-start-$k" 60 bin/fanout-exp "${P[@]}" --devices $d
  done
done
epoch_times
gzip -f "$O/runs.log"
