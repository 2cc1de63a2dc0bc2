#!/usr/bin/env bash
# Runs on a one-GPU machine (with nvcc) from the repository root: the
# per-kernel floor of a replayed CUDA graph (launch-floor.cu), a chain of
# 1 to 60 dependent kernels, empty or touching 4 Ki to 1 Mi floats
# (issue 25, item 5). Output: $OUT/floor.log.
O=${OUT:-out}; mkdir -p "$O"
nvidia-smi -L | tee -a "$O/floor.log"
nvcc -O2 -arch=sm_90 -o /tmp/launch-floor scripts/launch-floor.cu && /tmp/launch-floor | tee -a "$O/floor.log"
