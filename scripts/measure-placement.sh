#!/usr/bin/env bash
# Runs on a machine with four GPUs from the repository root, with
# bin/fanout built here. products-sim at 1024 and 2048 seeds per device on
# 1, 2 and 4 GPUs with NCCL's LL protocol, the graph partitioned (default)
# against whole on every device (--replicate all), alternating; 4 GPUs with
# NCCL's default protocol; papers-sim's envelope growth and its scaling
# with the whole graph on every device. Summary lines in $OUT/place.log.
. "$(dirname "$0")/lib.sh"; setup place.log
P=(--data "$D/products-sim" --device cuda --epochs 5 --eval-every 5); Q=(--data "$D/papers-sim" --device cuda --epochs 3 --eval-every 3)
f=bin/fanout
r prod-1gpu 120 $f train "${P[@]}"
r prod-1gpu-2048 120 $f train "${P[@]}" --batch 2048
export NCCL_PROTO=LL
for k in 1 2; do
  r prod-2gpu-part-$k 120 $f train "${P[@]}" --devices 2
  r prod-2gpu-whole-$k 120 $f train "${P[@]}" --devices 2 --replicate all
done
r prod-2gpu-2048-part 120 $f train "${P[@]}" --devices 2 --batch 2048
r prod-2gpu-2048-whole 120 $f train "${P[@]}" --devices 2 --batch 2048 --replicate all
if [ "$G" -ge 4 ]; then
  r prod-4gpu-part 120 $f train "${P[@]}" --devices 4
  r prod-4gpu-whole 120 $f train "${P[@]}" --devices 4 --replicate all
  (unset NCCL_PROTO; r prod-4gpu-whole-defaultproto 120 $f train "${P[@]}" --devices 4 --replicate all)
fi
r papers-1gpu 120 $f train "${Q[@]}"
r papers-2gpu-whole 150 $f train "${Q[@]}" --devices 2 --replicate all
[ "$G" -ge 4 ] && r papers-4gpu-whole 150 $f train "${Q[@]}" --devices 4 --replicate all
