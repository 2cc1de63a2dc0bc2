#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout-before (the next step's sampling forked
# before the backward pass, the forward's transposes joined at its end) and
# bin/fanout (forked once the bottom layer's forward pass is issued, the
# transposes joined at the backward pass's start: backend.JoinBesideTo).
# Replayed steps before and after, alternating, twice: products-sim from 16
# to 2048 seeds, papers-sim at 512 and 1024, GCN, GAT and GIN on
# products-sim at 512 and 1024 (issue 25, item 5). Also run with bin/fanout
# a local build that forks at the forward pass's start (after the
# transposes) and the models once. Summary lines in $OUT/fork-final.log.
tar -xJf bin/pack/bin.tar.xz -C bin
. "$(dirname "$0")/lib.sh"; setup fork-final.log
export KEEP='"step_s"|error'
P=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
Q=(bench --data "$D/papers-sim" --device cuda --mode replay --steps 400 --json)
for k in 1 2; do
  for b in 16 256 512 1024 2048; do ab "products-$b-$k" 60 "${P[@]}" --batch $b; done
  for b in 512 1024; do ab "papers-$b-$k" 90 "${Q[@]}" --batch $b; done
  for m in gcn gat gin; do for b in 512 1024; do ab "$m-$b-$k" 60 "${P[@]}" --batch $b --model $m; done; done
done
ab_steps
gzip -f "$O/runs.log"
