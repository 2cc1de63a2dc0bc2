#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   bin/fanout-base: the same at the commit to compare with
# The hybrid mode on papers-sim with the tiered store's rows fetched a step
# ahead beside the backward pass (bin/fanout) against fetched in the step
# (bin/fanout-base): a 6 GiB budget, and zero-copy (no cache); then a
# bfloat16 dataset on the GPU against the float32 one held as bfloat16; then
# one bench of products-sim (the floor at the device's peak rates).
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
cd /tmp
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d "$D/papers-sim" ] || "$R/bin/fanout" gen papers-sim --out "$D/papers-sim" >/dev/null 2>&1
ep() { grep -E "^epoch|hit rate|cache|hot ratio|^test" | sed 's/  (train.*//'; }
for round in 1 2; do
  for b in fanout-base fanout; do
    echo "== $b papers-sim hybrid --gpu-memory 6GiB (round $round)"
    "$R/bin/$b" train --data "$D/papers-sim" --device cuda --mode hybrid --gpu-memory 6GiB --hot-ratio 0 --epochs 2 --eval-every 100 2>&1 | ep
  done
done
for b in fanout-base fanout; do
  echo "== $b papers-sim hybrid --cache-rows 0 (zero-copy)"
  "$R/bin/$b" train --data "$D/papers-sim" --device cuda --mode hybrid --cache-rows 0 --hot-ratio 0 --epochs 1 --eval-every 100 2>&1 | ep
done
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
"$R/bin/fanout" gen products-sim --feature-dtype bfloat16 --out "$D/products-bf16" >/dev/null
du -sh "$D/products-sim/feat.npy" "$D/products-bf16/feat.npy"
echo "== bfloat16 dataset"; "$R/bin/fanout" train --data "$D/products-bf16" --device cuda --epochs 2 2>&1 | ep
echo "== float32 dataset held as bfloat16"; "$R/bin/fanout" train --data "$D/products-sim" --device cuda --epochs 2 --feature-dtype bfloat16 2>&1 | ep
"$R/bin/fanout" bench --data "$D/products-sim" --device cuda --mode replay --steps 200 2>&1 | grep -E "epoch|floor|peak"
