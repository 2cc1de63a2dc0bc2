#!/usr/bin/env bash
# Runs on a machine with several GPUs from the repository root, with
# bin/fanout (and optionally bin/fanout-base, the commit before a change)
# built here. Per-device-batch scaling on products-sim and papers-sim at
# 1, 2 and 4 GPUs (as many as the machine has), and papers-sim's hybrid
# mode on one GPU and on two at the global batch. Summary lines in
# $OUT/prof.log.
. "$(dirname "$0")/lib.sh"; setup prof.log
P=(--data "$D/products-sim" --device cuda); Q=(--data "$D/papers-sim" --device cuda)
B=bin/fanout-base; [ -x $B ] || B=
for exe in $B bin/fanout; do
  r prod-1gpu 120 $exe train "${P[@]}" --epochs 5 --eval-every 5
  r prod-2gpu 120 $exe train "${P[@]}" --epochs 5 --eval-every 5 --devices 2
done
[ "$G" -ge 4 ] && r prod-4gpu 120 bin/fanout train "${P[@]}" --epochs 5 --eval-every 5 --devices 4
r papers-1gpu 200 bin/fanout train "${Q[@]}" --epochs 3 --eval-every 3
r papers-2gpu 200 bin/fanout train "${Q[@]}" --epochs 3 --eval-every 3 --devices 2
[ "$G" -ge 4 ] && r papers-4gpu 200 bin/fanout train "${Q[@]}" --epochs 3 --eval-every 3 --devices 4
r papers-hybrid-1gpu 200 bin/fanout train "${Q[@]}" --epochs 2 --mode hybrid --gpu-memory 6GiB --eval-every 100
r papers-hybrid-2gpu-global 240 bin/fanout train "${Q[@]}" --epochs 2 --mode hybrid --gpu-memory 6GiB --eval-every 100 --devices 2 --global-batch 1024
