#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with bin/ built
# here (bin/fanout, bin/fanout-base: the commit to compare with;
# bin/{train,multigpu,hybrid}.test) and .data/cora (Planetoid Cora).
# CHECKS=0 skips the GPU suites, PROCS=0 the two-process runs, SCALE=0 the
# products-sim runs. Logs go to $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; mkdir -p "$D" "$O"
nvidia-smi -L
pick='^(---|ok|FAIL|PASS|panic)|--- (FAIL|SKIP)|test timed out'
if [ "${CHECKS:-1}" = 1 ]; then
  for s in multigpu:GPU\|NCCL:300 train:CUDA:400 hybrid:CUDA:200; do
    IFS=: read -r b run lim <<<"$s"
    t0=$SECONDS
    FANOUT_CORA_DIR="$R/.data/cora" timeout $((lim + 30)) "bin/$b.test" -test.run "$run" -test.v -test.timeout ${lim}s >"$O/$b.log" 2>&1
    echo "$b.test: exit $? in $((SECONDS - t0)) s"; grep -E "$pick" "$O/$b.log" | grep -v '^    --- PASS' | tail -6
  done
fi
if [ "${PROCS:-1}" = 1 ]; then
  bin/fanout gen tiny --out "$D/tiny" >/dev/null 2>&1
  p() { local name=$1; shift; echo "== $name"; local t0=$SECONDS
    timeout 120 "$@" >"$O/$name.log" 2>&1; echo "   exit $? in $((SECONDS - t0)) s"; grep -E 'test accuracy|error|rank [0-9]: (exit|signal)|exchang|interrupt' "$O/$name.log" | tail -4; }
  x=(--data "$D/tiny" --device cuda --shard-features hosts --feature-dtype float32 --eval-every 100)
  p procs-nvlink bin/fanout launch --nproc 2 -- train "${x[@]}" --epochs 2 --out /tmp/r-nv
  p procs-resume bin/fanout launch --nproc 2 -- train "${x[@]}" --epochs 4 --out /tmp/r-nv --resume
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 p procs-network bin/fanout launch --nproc 2 -- train "${x[@]}" --epochs 2
fi
if [ "${SCALE:-1}" = 1 ]; then
  t0=$SECONDS; [ -d "$D/products-sim" ] || bin/fanout gen products-sim --out "$D/products-sim" >/dev/null 2>&1; echo "gen products-sim: $((SECONDS - t0)) s"
  P=(--data "$D/products-sim" --device cuda)
  h=(--feature-dtype bfloat16 --bottom-products bfloat16)
  b() { local name=$1; shift; echo "== $name: $*"
    timeout 240 "$@" >"$O/$name.log" 2>&1 || echo "   exit $?"; grep -E 'device\(s\)|partition|"step_s"|error' "$O/$name.log" | cut -c1-400; }
  b plain1 bin/fanout bench "${P[@]}" --mode replay --steps 300 --json
  b nccl1-bf16 bin/fanout bench "${P[@]}" --devices 1 --batch 1024 "${h[@]}" --epochs 3
  b nccl2-bf16-whole bin/fanout bench "${P[@]}" --devices 2 --batch 2048 "${h[@]}" --replicate all --epochs 3
  b base2-bf16-whole bin/fanout-base bench "${P[@]}" --devices 2 --batch 2048 "${h[@]}" --replicate all --epochs 3
  b nccl2-bf16-part bin/fanout bench "${P[@]}" --devices 2 --batch 2048 "${h[@]}" --epochs 3
  b nccl2-f32-part bin/fanout bench "${P[@]}" --devices 2 --batch 2048 --epochs 3
  b nccl2-bf16-whole-global bin/fanout bench "${P[@]}" --devices 2 --batch 1024 "${h[@]}" --replicate all --epochs 3
fi
