#!/usr/bin/env bash
# Runs on a machine with four GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here holding bin/fanout: products-sim on one
# GPU and on four, the graph partitioned (the default budget) and whole on
# each GPU, 1024 seeds per device, twice (the speed-up since the earlier
# fork of the next step's sampling, 10def74). Summary lines in
# $OUT/replicate-four.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup replicate-four.log
export KEEP='epoch [2-5]/|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  r "one-$k" 60 bin/fanout "${P[@]}"
  for f in 0.1 all; do r "four-$f-$k" 60 bin/fanout "${P[@]}" --devices 4 --replicate $f; done
done
epoch_times
gzip -f "$O/runs.log"
