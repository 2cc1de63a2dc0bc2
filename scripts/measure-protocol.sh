#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with bin/fanout
# built here. products-sim on two GPUs, runs alternating between NCCL's
# default protocol choice and NCCL_PROTO=LL (the two-GPU epochs of one
# binary differed by 9% from one process to the next), NCCL's topology and
# tuning lines, scaling at 2048 seeds per device, and the time of an
# envelope growth on papers-sim. Summary lines in $OUT/proto.log.
. "$(dirname "$0")/lib.sh"; setup proto.log
P=(--data "$D/products-sim" --device cuda --epochs 5 --eval-every 5); Q=(--data "$D/papers-sim" --device cuda)
r prod-1gpu 120 bin/fanout train "${P[@]}"
for k in 1 2 3; do
  r prod-2gpu-default-$k 120 bin/fanout train "${P[@]}" --devices 2
  NCCL_PROTO=LL r prod-2gpu-LL-$k 120 bin/fanout train "${P[@]}" --devices 2
done
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,GRAPH KEEP='NCCL INFO (Pattern|Tree|Channel)' r prod-2gpu-debug 120 bin/fanout train "${P[@]}" --epochs 2 --devices 2
r prod-1gpu-2048 120 bin/fanout train "${P[@]}" --batch 2048
r prod-2gpu-2048 120 bin/fanout train "${P[@]}" --devices 2 --batch 2048
r papers-1gpu 120 bin/fanout train "${Q[@]}" --epochs 2 --eval-every 5
