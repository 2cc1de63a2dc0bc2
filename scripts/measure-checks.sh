#!/usr/bin/env bash
# Runs on a GPU machine (two GPUs for the multi-GPU suite) from the
# repository root, with bin/ built here: bin/fanout and
# bin/{cuda,train,hybrid,multigpu}.test, and .data/cora. Every GPU suite
# (its measured errors logged), NCCL's protocols for the step's gradient
# all-reduce, products-sim's one-GPU step at 256-2048 seeds, and papers-sim
# hybrid on one and two GPUs at the global batch. Logs in $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; mkdir -p "$D" "$O"
L=$O/checks.log
nvidia-smi -L | tee -a "$L"
pick='^(---|ok|FAIL|PASS|panic)|--- (FAIL|SKIP)|test timed out|measured'
for s in cuda:.:180 train:CUDA:240 hybrid:CUDA:90 multigpu:GPU\|NCCL:90; do
  IFS=: read -r b run lim <<<"$s"; t0=$SECONDS
  FANOUT_CORA_DIR="$R/.data/cora" timeout $((lim + 20)) "bin/$b.test" -test.run "$run" -test.v -test.timeout ${lim}s >"$O/$b.log" 2>&1
  echo "$b.test: exit $? in $((SECONDS - t0)) s" | tee -a "$L"; grep -E "$pick" "$O/$b.log" | grep -v '^    --- PASS\|^--- PASS' | tail -${TAIL:-12} | tee -a "$L"
done
for p in Simple LL LL128; do
  NCCL_PROTO=$p timeout 60 bin/multigpu.test -test.run XXX -test.bench 'GPUStepCollectives/grads$' -test.benchtime 2000x 2>&1 | grep -E '^Benchmark' | sed "s/^/NCCL_PROTO=$p /" | tee -a "$L"
done
[ -d "$D/products-sim" ] || bin/fanout gen products-sim --out "$D/products-sim" >/dev/null 2>&1
for b in 256 512 1024 2048; do
  timeout 60 bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 300 --batch $b --json 2>/dev/null |
    python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('products-sim batch $b: step %.4f ms, epoch %.4f s' % (d['step_s']*1e3, d['epoch_s']))" | tee -a "$L"
done
if [ "${HYB:-1}" = 1 ]; then
  [ -d "$D/papers-sim" ] || bin/fanout gen papers-sim --out "$D/papers-sim" >/dev/null 2>&1
  for a in "--devices 2 --global-batch 1024" ""; do
    echo "== hybrid $a" | tee -a "$L"
    timeout 150 bin/fanout train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --gpu-memory 6GiB --hot-ratio 0 --eval-every 100 $a 2>&1 | grep -E 'epoch 1/1|feature cache|test accuracy' | cut -c1-200 | tee -a "$L"
  done
fi
