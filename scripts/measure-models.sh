#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here (bin/fanout; bin/fanout-before, the commit before GIN's sums
# and the chunked normalisation kernels; cuda.test, train.test): the CUDA
# conformance and normalisation suites, batch normalisation's kernels timed,
# GIN with batch normalisation on products-sim against GraphSAGE (3 seeds,
# 10 epochs) and its step before and after, and PyTorch Geometric's own
# models on Cora with and without batch normalisation
# (scripts/pyg_cora_norm.py, with .data/planetoid-cora carried). Summary
# lines in $OUT/models.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup models.log
suite() { # suite NAME PKG LIMIT ARGS...
  local n=$1 p=$2 lim=$3; shift 3
  (cd "$R/$p" && timeout "$lim" "$R/bin/$n.test" "$@" -test.v >"$O/suite-$n.log" 2>&1; echo "== suite $n ($*): exit $?" | tee -a "$L")
  grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|ns/op' "$O/suite-$n.log" | head -20 | tee -a "$L"
  echo "   passed $(grep -cE '^ *--- PASS' "$O/suite-$n.log"), skipped $(grep -cE '^ *--- SKIP' "$O/suite-$n.log")" | tee -a "$L"
}
suite cuda backend/cuda 200 -test.run 'TestConformance|TestKernelErrors|TestCapture|TestMarks' -test.timeout 195s
cp "$O/suite-cuda.log" "$O/suite-cuda-conformance.log"
suite cuda backend/cuda 60 -test.run '^$' -test.bench BatchNorm -test.benchtime 20x
suite train train 150 -test.run 'CUDA' -test.timeout 145s
P=(--data "$D/products-sim" --device cuda)
for f in fanout-before fanout; do
  KEEP='step_ms|step_s|error' r "gin-bench-$f" 90 bin/$f bench "${P[@]}" --model gin --norm batch --mode replay --steps 300 --json
done
for s in 1 2 3; do
  r "gin-bn-$s" 120 bin/fanout train "${P[@]}" --model gin --norm batch --epochs 10 --eval-every 10 --seed "$s"
  r "sage-$s" 120 bin/fanout train "${P[@]}" --epochs 10 --eval-every 10 --seed "$s"
done
r gin-bn-learn-1 120 bin/fanout train "${P[@]}" --model gin --norm batch --gin-eps learn --epochs 10 --eval-every 10 --seed 1
KEEP='^==|mean|skipped' r pyg-cora-norm 240 python3 scripts/pyg_cora_norm.py .data/planetoid-cora
