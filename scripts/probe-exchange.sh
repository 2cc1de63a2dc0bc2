#!/usr/bin/env bash
# Runs on a GPU machine with two GPUs from the repository root, with bin/
# built here (bin/multigpu.test, bin/fanout). Runs each exchanged-features
# test in its own process under a deadline; a hang ends in Go's goroutine
# dump (the test timeout). Logs go to $OUT.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 GOTRACEBACK=all
O=${OUT:-$PWD/out}; mkdir -p "$O"
nvidia-smi topo -m 2>&1 | head -8
for t in ${TESTS:-TestNCCLWorldSize1 TestGPUShardedFeatures TestGPUExchangedFeaturesEager TestGPUExchangedFeaturesInOrder TestGPUExchangedFeatures}; do
  t0=$SECONDS
  NCCL_DEBUG=${NCCL_DEBUG:-WARN} timeout 100 bin/multigpu.test -test.run "^$t\$" -test.v -test.timeout ${DEADLINE:-60s} >"$O/$t.log" 2>&1
  echo "$t: exit $? in $((SECONDS - t0)) s"; grep -E '^\s+gpu_test.go|^(--- |ok|FAIL|panic)' "$O/$t.log" | head -8
done
