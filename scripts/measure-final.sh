#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with bin/fanout
# and bin/multigpu.test built here. The multi-GPU suite and the step's
# collectives timed alone; products-sim and papers-sim on one GPU against
# two at the defaults (1024 seeds per device) and at the global batch,
# per epoch; bench --devices 1 against plain replay; two processes as two
# hosts with the features exchanged, over NVLink and forced onto the
# network transport. Summary lines in $OUT/final.log, whole output in
# $OUT/runs.log.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; mkdir -p "$D" "$O"
L=$O/final.log
nvidia-smi -L | tee -a "$L"
timeout 300 bin/multigpu.test -test.run 'GPU|NCCL' -test.bench 'GPUStepCollectives' -test.benchtime 2000x -test.v -test.timeout 280s >"$O/multigpu.log" 2>&1
echo "multigpu.test: exit $?" | tee -a "$L"; grep -E '^(--- |ok|FAIL|PASS|panic)|Benchmark' "$O/multigpu.log" | tee -a "$L"
for p in products-sim papers-sim; do t0=$SECONDS; [ -d "$D/$p" ] || bin/fanout gen $p --out "$D/$p" >/dev/null 2>&1; echo "gen $p: $((SECONDS - t0)) s" | tee -a "$L"; done
r() { local name=$1 lim=$2; shift 2; echo "== $name: fanout $*" | tee -a "$L"; local t0=$SECONDS
  timeout "$lim" bin/fanout "$@" >"$O/cur.log" 2>&1; echo "   exit $? (wall $((SECONDS - t0)) s)" | tee -a "$L"
  { echo "== $name: $*"; cat "$O/cur.log"; } >>"$O/runs.log"
  grep -E '^(\[rank 0\] )?(batch:|epoch [0-9]+/|test accuracy|features per gather|replay:)|device\(s\)|"step_s"|error' "$O/cur.log" | cut -c1-300 | sed 's/^/   /' | tee -a "$L"; }
P=(--data "$D/products-sim" --device cuda); Q=(--data "$D/papers-sim" --device cuda)
r prod-bench-plain 120 bench "${P[@]}" --mode replay --steps 300 --json
r prod-bench-devices1 120 bench "${P[@]}" --devices 1 --epochs 5
r prod-1gpu 120 train "${P[@]}" --epochs 5 --eval-every 5
r prod-2gpu 120 train "${P[@]}" --epochs 5 --eval-every 5 --devices 2
r prod-2gpu-whole 120 train "${P[@]}" --epochs 5 --eval-every 5 --devices 2 --replicate all
r prod-2gpu-global 120 train "${P[@]}" --epochs 5 --eval-every 5 --devices 2 --global-batch 1024
r papers-1gpu 200 train "${Q[@]}" --epochs 3 --eval-every 3
r papers-2gpu 200 train "${Q[@]}" --epochs 3 --eval-every 3 --devices 2
r papers-2gpu-global 200 train "${Q[@]}" --epochs 3 --eval-every 3 --devices 2 --global-batch 1024
x=(--shard-features hosts --ranks-per-host 1 --eval-every 100 --epochs 3)
r procs-hosts-nvlink 200 launch --nproc 2 -- train "${P[@]}" "${x[@]}"
NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 r procs-hosts-network 300 launch --nproc 2 -- train "${P[@]}" "${x[@]}"
