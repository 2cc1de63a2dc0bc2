#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout-before (10def74: every layer's edge weights
# computed on the stream before its aggregation), bin/fanout (the layers
# above the bottom compute theirs on the second stream beside the bottom
# layer's forward pass: nn's prepareBeside) and the test binaries, with
# .data/planetoid-cora carried. The suites, then replayed steps before and
# after, alternating, twice: products-sim from 16 to 2048 seeds, papers-sim
# at 512 and 1024, GCN, GAT and GIN at 512 and 1024 (issue 25, item 5).
# Summary lines in $OUT/prepare.log. Tried and not kept (docs/perf.md).
tar -xJf bin/pack/bin.tar.xz -C bin
. "$(dirname "$0")/lib.sh"; setup prepare.log
export FANOUT_CORA_DIR=$R/.data/planetoid-cora
suite cuda backend/cuda 'TestBeside|TestConformance$|TestCapture|TestMarks' 200
suite train train 'CUDA' 240
suite link train/link 'TestGPU' 90
suite hybrid train/hybrid 'CUDA' 120
tar -czf "$O/suites.tgz" -C "$O" cuda.log train.log link.log hybrid.log && rm -f "$O"/{cuda,train,link,hybrid}.log
export KEEP='"step_s"|error'
P=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
Q=(bench --data "$D/papers-sim" --device cuda --mode replay --steps 400 --json)
for k in 1 2; do
  for b in 16 512 1024 2048; do ab "products-$b-$k" 60 "${P[@]}" --batch $b; done
  ab "papers-1024-$k" 90 "${Q[@]}" --batch 1024
  for m in gcn gat gin; do for b in 512 1024; do ab "$m-$b-$k" 60 "${P[@]}" --batch $b --model $m; done; done
done
ab_steps
gzip -f "$O/runs.log"
