#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   CGO_ENABLED=0 go test -c -o bin/cuda.test ./backend/cuda
# --tf32 (the default) against 3xTF32 (--tf32=false) and cuBLAS float32: the precision
# tests, products-sim replay steps (alternating, twice each), and the
# accuracy of 10 epochs for seeds 1-3.
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$R/bin/cuda.test" -test.run 'TensorGemm|TF32' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|_test.go|--- (PASS|FAIL)'
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
cd /tmp
for round in 1 2; do
  for m in "--tf32=false" "--tf32" "--tf32=false --tf32x3=false"; do
    echo "== bench $m round $round"
    "$R/bin/fanout" bench --data "$D/products-sim" --device cuda --mode replay --steps 100 --json $m |
      python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("step %.4f ms, epoch %.4f s, floor %.4f ms, efficiency %.2f, busy %.4f" % (d["step_s"]*1e3, d["epoch_s"], d["floor_s"]*1e3, d["efficiency"], d["busy"]))'
  done
done
for s in ${SEEDS:-1 2 3}; do
  for m in "--tf32=false" "--tf32"; do
    echo "== train seed $s $m"
    "$R/bin/fanout" train --data "$D/products-sim" --device cuda --epochs 10 --seed "$s" $m 2>&1 | grep "test accuracy"
  done
done
