#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   for p in train/hybrid train/multigpu train backend/cuda; do CGO_ENABLED=0 go test -c -o bin/$(basename $p).test ./$p; done
# Checks the GPU paths against the CPU, then measures the hybrid mode and the
# NCCL group of one GPU against replay, each pair in this one call.
# Results go to $OUT (or ./out).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD
O=${OUT:-$R/out}
mkdir -p "$O"
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
cd /tmp
[ "${CHECKS:-1}" = 1 ] && {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$R/bin/hybrid.test" -test.run 'CUDA' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|hybrid_test|gpu_test'
  "$R/bin/multigpu.test" -test.run 'NCCL' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|gpu_test'
  "$R/bin/cuda.test" -test.run 'Conformance' 2>&1 | tail -2
} 2>&1 | tee "$O/checks.log"

t() { # name, then fanout arguments
  local name=$1; shift
  echo "== $name: fanout $*"
  local t0=$SECONDS
  "$R/bin/fanout" "$@" 2>&1 | grep -vE '^\s*$'
  echo "   (wall $((SECONDS - t0)) s)"
}
if [ "${PRODUCTS:-1}" = 1 ]; then
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
{
  t replay          train --data "$D/products-sim" --device cuda --epochs 3 --eval-every 100
  t nccl-devices-1  train --data "$D/products-sim" --device cuda --epochs 3 --eval-every 100 --devices 1
  t hybrid-all      train --data "$D/products-sim" --device cuda --epochs 3 --eval-every 100 --mode hybrid
} 2>&1 | tee "$O/products.log"
fi
if [ "${PAPERS:-1}" = 1 ]; then
  [ -d "$D/papers-sim" ] || t gen-papers gen papers-sim --out "$D/papers-sim" | tail -2
  {
    t replay        train --data "$D/papers-sim" --device cuda --epochs 1
    t hybrid-quarter train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --gpu-memory "${QUARTER_BUDGET:-6GiB}" --cache-rows 4194304
    t zero-copy     train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --cache-rows 0
  } 2>&1 | tee "$O/papers.log"
fi
