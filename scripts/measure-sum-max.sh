#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here: bin/fanout-before (the commit before the
# overflow flag travelled with the gradients' peer sum), bin/fanout (after)
# and multigpu.test. The peer-memory tests and the group suites, then
# products-sim (1024 and 2048 seeds per device) and papers-sim on one GPU
# and two, before and after, alternating; a group with synchronised batch
# normalisation and one in the hybrid mode (which keep the flag's own
# all-reduce). Summary lines in $OUT/summax.log.
tar -xJf bin/pack/bin.tar.xz -C bin
. "$(dirname "$0")/lib.sh"; setup summax.log
suite multigpu train/multigpu 'Peer|GPU|NCCL' 150
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
Q=(train --data "$D/papers-sim" --device cuda --epochs 3 --eval-every 3)
for k in 1 2; do
  ab "prod-one-$k" 60 "${P[@]}"
  ab "prod-two-$k" 60 "${P[@]}" --devices 2
done
r prod-one-2048 60 bin/fanout "${P[@]}" --batch 2048
r prod-two-2048-before 60 bin/fanout-before "${P[@]}" --devices 2 --batch 2048
r prod-two-2048-after 60 bin/fanout "${P[@]}" --devices 2 --batch 2048
r papers-one 90 bin/fanout "${Q[@]}"
r papers-two-before 120 bin/fanout-before "${Q[@]}" --devices 2 --replicate all
r papers-two-after 120 bin/fanout "${Q[@]}" --devices 2 --replicate all
r prod-two-syncnorm 60 bin/fanout "${P[@]}" --epochs 2 --devices 2 --norm batch --sync-norm
KEEP='epoch [0-9]+/|hybrid|error|panic' r prod-two-hybrid 90 bin/fanout "${P[@]}" --epochs 2 --devices 2 --mode hybrid --gpu-memory 2GiB
