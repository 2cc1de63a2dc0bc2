#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/fanout built
# here: the models of products-sim that add a vertex's own row into its
# neighbours' (GCN, GAT, GIN) against GraphSAGE, 10 epochs, seeds 1-3, with
# batch normalisation, and GIN with its best settings on tiny
# (--jk cat --gin-eps learn): what issue 26's item 4 can hold GIN to.
# Summary lines in $OUT/gin-targets.log.
[ -f bin/fanout ] || tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup gin-targets.log
P=(--data "$D/products-sim" --device cuda --epochs 10 --eval-every 10)
KEEP='epoch 10/|test accuracy|error'
for s in 1 2 3; do
  for m in "--model sage --norm batch" "--model gcn --norm batch" "--model gat --norm batch" "--model gin --norm batch" \
    "--model gin --norm batch --jk cat --gin-eps learn"; do
    # shellcheck disable=SC2086
    KEEP="$KEEP" r "seed$s $m" 150 bin/fanout train "${P[@]}" --seed "$s" $m
  done
done
# A group of one (the data-parallel path without peers: its loss scaled by
# its share on the device) against plain replay, alternating.
for k in 1 2; do
  KEEP='step_ms|step_s|error' r "replay-$k" 120 bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json
  KEEP='epoch|steps/s|speed|error' r "group-of-one-$k" 120 bin/fanout bench --data "$D/products-sim" --device cuda --devices 1 --epochs 5
done
