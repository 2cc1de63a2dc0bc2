#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here (bin/fanout and the test binaries cuda.test, train.test,
# link.test, hybrid.test) and .data/planetoid-cora carried: the one-GPU suites on the
# session's last code (the loss kernel's new count, the CUDA tests of
# training, link prediction and the hybrid mode), then GIN on products-sim
# with layer normalisation, which scales each row by its own statistics
# (a sum over a vertex's sampled neighbours grows with their number; batch
# normalisation scales columns), plain and with its best settings, seeds
# 1-3. Summary lines in $OUT/gin-layer.log.
tar -xJf bin/pack/bin.tar.xz -C bin
export FANOUT_CORA_DIR=$PWD/.data/planetoid-cora
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup gin-layer.log
suite cuda backend/cuda 'TestConformance|TestKernelErrors|TestCompileKernels|TestCapture|TestMarks' 200
suite train train 'CUDA' 200
suite link train/link 'TestGPU' 90
suite hybrid train/hybrid 'CUDA' 120
P=(--data "$D/products-sim" --device cuda --epochs 10 --eval-every 10)
KEEP='epoch 10/|test accuracy|error'
for s in 1 2 3; do
  for m in "--model gin --norm layer" "--model gin --norm layer --jk cat --gin-eps learn"; do
    # shellcheck disable=SC2086
    KEEP="$KEEP" r "seed$s $m" 150 bin/fanout train "${P[@]}" --seed "$s" $m
  done
done
