#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout, multigpu.test, train.test):
# the peer-memory all-reduce's tests and the collectives' benchmark, then
# products-sim (1024 and 2048 seeds per device) and papers-sim on one GPU
# and on two with the gradients summed by NCCL (LL protocol, the fastest
# measured) against the peer kernels, alternating. Summary in $OUT/peer.log.
tar -xJf bin/pack/bin.tar.xz -C bin
. "$(dirname "$0")/lib.sh"; setup peer.log
suite() { # suite NAME PKG LIMIT ARGS...
  local n=$1 p=$2 lim=$3; shift 3
  (cd "$R/$p" && timeout "$lim" "$R/bin/$n.test" "$@" -test.v >"$O/$n.log" 2>&1; echo "== suite $n ($*): exit $?" | tee -a "$L")
  grep -E '^(--- FAIL|FAIL|ok|PASS|panic|Benchmark)|ns/op' "$O/$n.log" | head -20 | tee -a "$L"
}
suite multigpu train/multigpu 150 -test.run 'Peer|GPU' -test.timeout 145s
cp "$O/multigpu.log" "$O/multigpu-tests.log"
suite multigpu train/multigpu 120 -test.run '^$' -test.bench BenchmarkGPUStepCollectives -test.benchtime 3000x
suite train train 40 -test.run TestNormCUDA -test.timeout 35s
P=(--data "$D/products-sim" --device cuda --epochs 5 --eval-every 5); Q=(--data "$D/papers-sim" --device cuda --epochs 3 --eval-every 3)
f=bin/fanout
r prod-1gpu 120 $f train "${P[@]}"
for k in 1 2; do
  NCCL_PROTO=LL r prod-2gpu-nccl-$k 120 $f train "${P[@]}" --devices 2 --nccl-all-reduce
  r prod-2gpu-peer-$k 120 $f train "${P[@]}" --devices 2
done
r prod-1gpu-2048 120 $f train "${P[@]}" --batch 2048
NCCL_PROTO=LL r prod-2gpu-2048-nccl 120 $f train "${P[@]}" --devices 2 --batch 2048 --nccl-all-reduce
r prod-2gpu-2048-peer 120 $f train "${P[@]}" --devices 2 --batch 2048
r papers-1gpu 120 $f train "${Q[@]}"
NCCL_PROTO=LL r papers-2gpu-nccl 150 $f train "${Q[@]}" --devices 2 --replicate all --nccl-all-reduce
r papers-2gpu-peer 150 $f train "${Q[@]}" --devices 2 --replicate all
r prod-2gpu-syncnorm 90 $f train "${P[@]}" --epochs 1 --devices 2 --norm batch --sync-norm
