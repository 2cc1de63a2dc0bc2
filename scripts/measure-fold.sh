#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here: bin/fanout-before (the commit before the
# loss of a group's rank was divided by the global batch inside the loss
# kernel, which scaled it with two more kernels), bin/fanout (after),
# bin/fanout-exp (fanout-before with the EXP_NOFLAG/EXP_NOGRAD switches of
# scripts/measure-stages.sh) and the test binaries cuda.test, train.test,
# multigpu.test. First the checks (the loss's conformance case, CUDA against
# the CPU, the group suites), then products-sim at 1024 seeds per device,
# one GPU and two, before and after, alternating, and two GPUs without any
# collective with the graph partitioned and whole on each device (what the
# peers' neighbour lists cost). Last, issue 27's hybrid link check on two
# GPUs with float32 bottom products (the hybrid mode's) in both runs.
# Summary lines in $OUT/fold.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fold.log
suite cuda backend/cuda 'TestConformance.*/SoftmaxCrossEntropy|TestCompileKernels' 60
suite train train 'TestCUDAMatchesCPULosses|TestReplayBitwiseDeterministicCUDA' 60
suite multigpu train/multigpu 'GPU|NCCL' 150
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  ab "one-$k" 60 "${P[@]}"
  ab "two-$k" 60 "${P[@]}" --devices 2
  EXP_NOFLAG=1 EXP_NOGRAD=1 r "two-nocollective-$k" 60 bin/fanout-exp "${P[@]}" --devices 2
  EXP_NOFLAG=1 EXP_NOGRAD=1 r "two-nocollective-whole-$k" 60 bin/fanout-exp "${P[@]}" --devices 2 --replicate all
done
mkdir -p "$D"; [ -d "$D/tiny-link" ] || bin/fanout gen tiny --link-split 0.85,0.05,0.1 --out "$D/tiny-link" >/dev/null
T=(train --task link --device cuda --epochs 2 --epoch-steps 200 --data "$D/tiny-link" --devices 2 --deterministic --bottom-products float32)
KEEP='epoch [0-9]+:|test ROC|error|panic' r link-whole 60 bin/fanout "${T[@]}"
KEEP='epoch [0-9]+:|test ROC|error|panic' r link-hybrid 60 bin/fanout "${T[@]}" --mode hybrid --cache-rows 4000
