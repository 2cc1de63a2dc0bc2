#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here holding bin/fanout. Since the next step's
# sampling forks after the bottom layer (10def74), two GPUs with the graph
# partitioned did not gain while one GPU and the whole graph on each did:
# products-sim on two GPUs with replication budgets from none to all, and
# on one GPU, 1024 seeds per device, twice. Summary lines in
# $OUT/replicate.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup replicate.log
export KEEP='epoch [2-5]/|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  r "one-$k" 60 bin/fanout "${P[@]}"
  for f in 0 0.1 0.25 0.5 all; do r "two-$f-$k" 60 bin/fanout "${P[@]}" --devices 2 --replicate $f; done
done
epoch_times
gzip -f "$O/runs.log"
