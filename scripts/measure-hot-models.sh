#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   for p in train/hybrid train backend/cuda; do CGO_ENABLED=0 go test -c -o bin/$(basename $p).test ./$p; done
# PART=checks: the GPU tests of the hot vertices and GAT against the CPU.
# PART=products: products-sim replay epochs of SAGE, GAT and GIN (bench), and
#   the accuracy of 10 epochs, 3 seeds, replay against hybrid with 10% hot
#   vertices at staleness 1 (HOTROWS: inputs, outputs or both; BENCH= skips
#   the benches).
# PART=inputs: hot rows as inputs against outputs, and --hot-ratio auto, on
#   products-sim (10 epochs, seed 1) and papers-sim under a 6 GiB budget.
# PART=papers: papers-sim replay against hybrid under a budget that caches a
#   quarter of the feature rows, without and with hot vertices, and zero-copy.
# Results go to $OUT (or ./out).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
R=$PWD
O=${OUT:-$R/out}
D=${DATA:-/tmp/fanout-data}
mkdir -p "$O" "$D"
cd /tmp
t() { # name, then fanout arguments
  local name=$1; shift
  echo "== $name: fanout $*"
  local t0=$SECONDS
  "$R/bin/fanout" "$@" 2>&1 | grep -vE '^\s*$' | grep -vE "${DROP:-^epoch [0-9]+/[0-9]+ +[0-9]+ steps}" | tail -${TAILN:-6}
  echo "   (wall $((SECONDS - t0)) s)"
}
case "${PART:-checks}" in
checks)
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  "$R/bin/hybrid.test" -test.run 'CUDA' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|_test.go'
  "$R/bin/cuda.test" -test.run 'Conformance' -test.v 2>&1 | grep -E '(MaskGraph|ReplaceRows|AddRows)|^(ok|FAIL|PASS)' | grep -v '=== RUN'
  "$R/bin/train.test" -test.run "${TRAIN_TESTS:-CUDAMatchesCPULosses}" -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|_test.go'
  ;;
products)
  [ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
  if [ -n "${BENCH-1}" ]; then
    for m in "sage" "gat --heads 4" "gin"; do
      "$R/bin/fanout" bench --data "$D/products-sim" --device cuda --mode replay --json --model $m
    done
  fi
  for s in ${SEEDS:-1 2 3}; do
    t "replay seed $s" train --data "$D/products-sim" --device cuda --epochs 10 --seed "$s"
    for rows in ${HOTROWS:-inputs}; do
      t "hot 0.1 $rows seed $s" train --data "$D/products-sim" --device cuda --epochs 10 --seed "$s" --mode hybrid \
        --hot-ratio 0.1 --staleness 1 --super-batch "${SUPER:-32}" --hot-rows "$rows"
    done
  done
  ;;
papers)
  [ -d "$D/papers-sim" ] || "$R/bin/fanout" gen papers-sim --out "$D/papers-sim" >/dev/null
  B=${QUARTER_BUDGET:-6GiB}
  t replay train --data "$D/papers-sim" --device cuda --epochs 1
  t tiers train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --gpu-memory "$B" --cache-rows 4194304
  for h in ${HOT:-0.05}; do
    t "tiers+hot $h" train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --gpu-memory "$B" \
      --hot-ratio "$h" --super-batch "${SUPER:-128}"
  done
  t zero-copy train --data "$D/papers-sim" --device cuda --epochs 1 --mode hybrid --cache-rows 0
  ;;
inputs)
  # Hot rows as aggregated inputs (the default) against outputs, and the
  # start-up measurement that picks --hot-ratio (auto, the default).
  [ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
  P="--data $D/products-sim --device cuda --epochs 10 --seed 1"
  t "replay" train $P
  TAILN=12 t "hybrid, --hot-ratio auto" train $P --mode hybrid
  t "hot 0.1 outputs" train $P --mode hybrid --hot-ratio 0.1 --hot-rows outputs
  t "hot 0.1 inputs, super-batch 128" train $P --mode hybrid --hot-ratio 0.1 --super-batch 128
  [ -d "$D/papers-sim" ] || "$R/bin/fanout" gen papers-sim --out "$D/papers-sim" >/dev/null
  Q="--data $D/papers-sim --device cuda --epochs 1"
  t "papers replay" train $Q
  TAILN=12 t "papers hybrid 6GiB, --hot-ratio auto" train $Q --mode hybrid --gpu-memory 6GiB --super-batch 128
  t "papers hybrid 6GiB, hot 0.05 inputs" train $Q --mode hybrid --gpu-memory 6GiB --hot-ratio 0.05 --super-batch 128
  ;;
esac
