#!/usr/bin/env bash
# Runs on a machine with two or more GPUs from the repository root, with
# bin/fanout, bin/fanout-base (the commit before) and bin/multigpu.test
# built here. Epochs with and without overflows at 1, 2 and 4 GPUs
# (products-sim, papers-sim), the hybrid mode on one GPU and on two at the
# global batch, one GPU's step at 256-2048 seeds, bench --devices 1 against
# plain replay and train, two probes of the two-GPU step (NCCL's LL
# protocol; sampling in order), and the multi-GPU suite. Summary lines in
# $OUT/win.log.
. "$(dirname "$0")/lib.sh"; setup win.log
P=(--data "$D/products-sim" --device cuda); Q=(--data "$D/papers-sim" --device cuda)
for exe in bin/fanout-base bin/fanout; do
  r prod-1gpu 120 $exe train "${P[@]}" --epochs 5 --eval-every 5
  r prod-2gpu 120 $exe train "${P[@]}" --epochs 5 --eval-every 5 --devices 2
  r papers-1gpu 120 $exe train "${Q[@]}" --epochs 3 --eval-every 3
done
[ "$G" -ge 4 ] && r prod-4gpu 120 bin/fanout train "${P[@]}" --epochs 5 --eval-every 5 --devices 4
NCCL_PROTO=LL r prod-2gpu-LL 120 bin/fanout train "${P[@]}" --epochs 5 --eval-every 5 --devices 2
r prod-2gpu-inorder 120 bin/fanout train "${P[@]}" --epochs 5 --eval-every 5 --devices 2 --overlap-sampling=false
r prod-bench-replay 120 bin/fanout bench "${P[@]}" --mode replay --steps 300 --json
r prod-bench-devices1 120 bin/fanout bench "${P[@]}" --devices 1 --epochs 5
for b in 256 512 1024 2048; do r prod-step-$b 120 bin/fanout bench "${P[@]}" --mode replay --steps 300 --batch $b --json; done
r papers-2gpu 150 bin/fanout train "${Q[@]}" --epochs 3 --eval-every 3 --devices 2
[ "$G" -ge 4 ] && r papers-4gpu 150 bin/fanout train "${Q[@]}" --epochs 3 --eval-every 3 --devices 4
r papers-hybrid-1gpu 150 bin/fanout train "${Q[@]}" --epochs 3 --mode hybrid --gpu-memory 6GiB --eval-every 100
r papers-hybrid-2gpu-global 200 bin/fanout train "${Q[@]}" --epochs 3 --mode hybrid --gpu-memory 6GiB --eval-every 100 --devices 2 --global-batch 1024
KEEP='^(--- |ok|FAIL|PASS|panic)' r multigpu-suite 200 bin/multigpu.test -test.run 'GPU|NCCL' -test.v -test.timeout 190s
