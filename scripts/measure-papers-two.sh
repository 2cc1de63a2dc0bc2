#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout): papers-sim at 1024 seeds per
# device on one GPU and on two (whole graph on each), 6 epochs each,
# alternating, twice: the two-GPU speed-up over more epochs than one.
# Summary lines in $OUT/papers-two.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=papers-sim; . "$(dirname "$0")/lib.sh"; setup papers-two.log
Q=(train --data "$D/papers-sim" --device cuda --epochs 6 --eval-every 6)
for k in 1 2; do
  r "one-$k" 120 bin/fanout "${Q[@]}"
  r "two-$k" 120 bin/fanout "${Q[@]}" --devices 2 --replicate all
done
