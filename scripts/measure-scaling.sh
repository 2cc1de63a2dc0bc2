#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with bin/fanout
# built here. Per-device batch scaling on products-sim and papers-sim (one
# GPU plain replay against two GPUs at 1024 seeds each, 10 epochs with
# accuracy), papers-sim at the global batch, hybrid on one and two GPUs
# under one per-GPU budget, and two processes as two hosts (network
# transport forced) with the features exchanged. Every line that matters is
# appended to $OUT/scaling.log; each run's whole output to $OUT/runs.log.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; mkdir -p "$D" "$O"
L=$O/scaling.log
nvidia-smi -L | tee -a "$L"
h=(--feature-dtype bfloat16 --bottom-products bfloat16)
r() { local name=$1 lim=$2; shift 2; echo "== $name: fanout $*" | tee -a "$L"; local t0=$SECONDS
  { echo "== $name"; timeout "$lim" bin/fanout "$@"; echo "exit $?"; } >>"$O/runs.log" 2>&1
  tail -n 40 "$O/runs.log" | grep -E 'device\(s\)|partition|"step_s"|test accuracy|^epoch [0-9]+/|features per gather|error|exit [1-9]' | sed 's/^/   /' | cut -c1-330 | tail -${KEEP:-4} | tee -a "$L"
  echo "   (wall $((SECONDS - t0)) s)" | tee -a "$L"; }
for p in products-sim papers-sim; do
  t0=$SECONDS; [ -d "$D/$p" ] || bin/fanout gen $p --out "$D/$p" >/dev/null 2>&1; echo "gen $p: $((SECONDS - t0)) s" | tee -a "$L"
done
P=(--data "$D/products-sim" --device cuda); Q=(--data "$D/papers-sim" --device cuda)
if [ "${ACC:-1}" = 1 ]; then
  KEEP=3 r prod-1gpu-10ep 200 train "${P[@]}" --epochs 10 --eval-every 10
  KEEP=3 r prod-2gpu-10ep 200 train "${P[@]}" --epochs 10 --eval-every 10 --devices 2 --batch 2048 "${h[@]}" --replicate all
fi
r papers-plain 200 bench "${Q[@]}" --mode replay --steps 300 --json
r papers-nccl1 200 bench "${Q[@]}" --devices 1 --batch 1024 "${h[@]}" --epochs 2
r papers-2gpu-whole 240 bench "${Q[@]}" --devices 2 --batch 2048 "${h[@]}" --replicate all --epochs 2
r papers-2gpu-part 240 bench "${Q[@]}" --devices 2 --batch 2048 "${h[@]}" --epochs 2
r papers-2gpu-global 240 bench "${Q[@]}" --devices 2 --batch 1024 "${h[@]}" --replicate all --epochs 2
if [ "${HYB:-1}" = 1 ]; then
  r papers-hybrid-1gpu 200 train "${Q[@]}" --epochs 1 --mode hybrid --gpu-memory 6GiB --eval-every 100
  r papers-hybrid-2gpu 240 train "${Q[@]}" --epochs 1 --mode hybrid --gpu-memory 6GiB --eval-every 100 --devices 2 --batch 2048
  r papers-hybrid-2gpu-global 240 train "${Q[@]}" --epochs 1 --mode hybrid --gpu-memory 6GiB --eval-every 100 --devices 2 --batch 1024
fi
if [ "${PROCS:-1}" = 1 ]; then
  x=(--shard-features hosts --feature-dtype float32 --eval-every 100 --epochs 2)
  KEEP=6 r procs-nvlink 200 launch --nproc 2 -- train "${P[@]}" "${x[@]}" --batch 2048
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 KEEP=6 r procs-network 240 launch --nproc 2 -- train "${P[@]}" "${x[@]}" --batch 2048
  rm -rf /tmp/r-res; KEEP=3 r procs-resume-a 120 launch --nproc 2 -- train --data "$D/products-sim" --device cuda --epochs 1 --out /tmp/r-res --batch 2048
  KEEP=6 r procs-resume-b 120 launch --nproc 2 -- train --data "$D/products-sim" --device cuda --epochs 2 --out /tmp/r-res --resume --batch 2048
fi
