#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here: bin/fanout-before and bin/fanout as in
# measure-fork-two.sh. Why two GPUs' steps did not change: products-sim on
# a group of one, and on two GPUs with the whole graph on each (no list
# read from the peer) and with NCCL's all-reduce, before and after.
# Summary lines in $OUT/fork-two-b.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fork-two-b.log
export KEEP='epoch 5/|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
ab group-one 60 "${P[@]}" --devices 1
ab two-replicate-all 60 "${P[@]}" --devices 2 --replicate all
ab two-nccl 60 "${P[@]}" --devices 2 --nccl-all-reduce
ab two 60 "${P[@]}" --devices 2
ab one 60 "${P[@]}"
gzip -f "$O/runs.log"
