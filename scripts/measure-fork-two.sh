#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here: bin/fanout-before (the next step's
# sampling forked before the backward pass), bin/fanout (forked after the
# bottom layer's forward pass), bin/cuda.test and bin/multigpu.test. The
# second stream's tests and the multi-GPU suite, then products-sim on one
# GPU and two (1024 seeds per device), before and after, alternating, and
# a group with synchronised batch normalisation (which keeps the late
# fork). Summary lines in $OUT/fork-two.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fork-two.log
suite cuda backend/cuda 'TestBeside' 60
suite multigpu train/multigpu 'Peer|GPU|NCCL' 150
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  ab "prod-two-$k" 60 "${P[@]}" --devices 2
  ab "prod-one-$k" 60 "${P[@]}"
done
r prod-two-syncnorm 60 bin/fanout "${P[@]}" --epochs 2 --devices 2 --norm batch --sync-norm
gzip -f "$O/runs.log" "$O/multigpu.log" "$O/cuda.log"
