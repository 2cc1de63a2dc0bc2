#!/usr/bin/env bash
# Runs on a machine with N GPUs (N=2 by default) from the repository root,
# with bin/pack/bin.tar.xz packed here holding bin/fanout: products-sim on
# one GPU and on N with each --replicate budget in BUDGETS ("default" runs
# without the flag), 1024 seeds per device, twice; the mean epoch and step
# of epochs 2-5 of train --epochs 5. Run three times (docs/perf.md): N=2
# BUDGETS="0 0.1 0.25 0.5 all" and N=4 BUDGETS="0.1 all" with 10def74's code, and
# N=2 BUDGETS="default 0.1 all" with --replicate auto the default.
# Summary lines in $OUT/replicate.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup replicate.log
export KEEP='epoch [2-5]/|topology|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
N=${N:-2}
for k in 1 2; do
  r "one-$k" 60 bin/fanout "${P[@]}"
  for f in ${BUDGETS:-default 0.1 all}; do
    if [ "$f" = default ]; then
      r "n$N-default-$k" 60 bin/fanout "${P[@]}" --devices "$N"
    else
      r "n$N-$f-$k" 60 bin/fanout "${P[@]}" --devices "$N" --replicate "$f"
    fi
  done
done
epoch_times
gzip -f "$O/runs.log"
