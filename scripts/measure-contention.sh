#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with bin/fanout
# built here: does a GPU's step slow when the other GPU works too? products-
# sim on one GPU alone; two independent one-GPU runs at once (one process
# per GPU, nothing shared); two GPUs in one process (--devices 2); two
# processes joined by NCCL (fanout launch). Summary in $OUT/contention.log.
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup contention.log
P=(--data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
f=bin/fanout
for k in 1 2; do
  r prod-1gpu-$k 120 $f train "${P[@]}"
  echo "== two independent one-GPU runs at once ($k)" | tee -a "$L"
  for g in 0 1; do CUDA_VISIBLE_DEVICES=$g $f train "${P[@]}" >"$O/indep-$g.log" 2>&1 & done; wait
  for g in 0 1; do grep -E '^epoch [2-5]/' "$O/indep-$g.log" | cut -c1-60 | sed "s/^/   gpu $g: /" | tee -a "$L"; done
  r prod-2gpu-$k 120 $f train "${P[@]}" --devices 2
  KEEP='epoch [2-5]/|error' r prod-launch2-$k 120 $f launch --nproc 2 -- train "${P[@]}"
done
