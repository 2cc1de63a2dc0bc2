#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout and the test binaries): the
# multi-GPU suite, the link predictor's group test, the normalisation test,
# two GPUs in one process (with --sync-norm too) and two processes under
# fanout launch. Summary lines in $OUT/groups.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup groups.log
suite multigpu train/multigpu 'GPU|NCCL' 90
suite link train/link 'TestGPUGroupMatchesOneGPU' 45
suite train train 'TestNormCUDA' 30
P=(--data "$D/products-sim" --device cuda --eval-every 10)
r prod-2gpu 60 bin/fanout train "${P[@]}" --epochs 2 --devices 2
r prod-2gpu-syncnorm 60 bin/fanout train "${P[@]}" --epochs 1 --devices 2 --norm batch --sync-norm
KEEP='rank|epoch|error|test acc' r launch-2 60 bin/fanout launch --nproc 2 -- train --device cuda --epochs 2
suite hybrid train/hybrid 'CUDA' 120
KEEP='error|memory|GiB|panic' r hidden-too-big 60 bin/fanout train --device cuda --hidden 100000000
