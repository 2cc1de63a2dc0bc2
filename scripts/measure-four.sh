#!/usr/bin/env bash
# Runs on a machine with four GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout): products-sim at 1024 seeds
# per device on one, two and four GPUs of one process (the gradients and
# the overflow flag summed through peer memory), 5 epochs, alternating,
# twice; papers-sim (whole graph on each) on one and four, 6 epochs.
# Summary lines in $OUT/four.log.
tar -xJf bin/pack/bin.tar.xz -C bin
. "$(dirname "$0")/lib.sh"; setup four.log
export KEEP='^(epoch [0-9]+/|test accuracy)|gradients summed|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
Q=(train --data "$D/papers-sim" --device cuda --epochs 6 --eval-every 6)
for k in 1 2; do
  r "prod-1-$k" 60 bin/fanout "${P[@]}"
  for n in 2 4; do r "prod-$n-$k" 60 bin/fanout "${P[@]}" --devices $n; done
done
r papers-1 90 bin/fanout "${Q[@]}"
r papers-4 90 bin/fanout "${Q[@]}" --devices 4 --replicate all
