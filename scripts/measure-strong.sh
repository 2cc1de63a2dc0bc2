#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here holding bin/fanout-NAME for the builds in
# VARIANTS (the first the base): products-sim trained on one GPU at 1024
# seeds, and on two with one global batch of 1024 (--global-batch: 512 per
# device, the strong scaling item 5 of issue 25 is for) and with 1024 per
# device, each build in turn, twice; the mean epoch and step of epochs 2-5
# of train --epochs 5. Summary lines in $OUT/strong.log.
tar -xJf bin/pack/bin.tar.xz -C bin
last=$(echo ${VARIANTS:-base new} | awk '{print $NF}')
[ -x bin/fanout ] || cp "bin/fanout-$last" bin/fanout
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup strong.log
export KEEP='epoch [2-5]/|topology|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
for k in 1 2; do
  for v in ${VARIANTS:-base new}; do
    r "one-$v-$k" 60 "bin/fanout-$v" "${P[@]}" --batch 1024
    r "global-$v-$k" 60 "bin/fanout-$v" "${P[@]}" --devices 2 --global-batch 1024
    r "perdev-$v-$k" 60 "bin/fanout-$v" "${P[@]}" --devices 2 --batch 1024
  done
done
epoch_times
gzip -f "$O/runs.log"
