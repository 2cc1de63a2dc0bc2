#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout. Each kernel of products-sim's replayed step
# at 256, 512, 1024 and 2048 seeds under ncu (durations, serialized), to see
# which kernels keep a floor as the batch shrinks (issue 25, item 5).
# Output: $OUT/ncu.log and $OUT/ncu-B.csv.gz.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup ncu.log
for b in 256 512 1024 2048; do
  timeout 120 ncu --csv --metrics gpu__time_duration.sum,launch__grid_size --cache-control none --clock-control none \
    bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 --batch $b >"$O/ncu-$b.csv" 2>"$O/ncu-$b.err"
  echo "ncu $b: exit $?" | tee -a "$L"
  python3 scripts/ncu-step.py "$O/ncu-$b.csv" | tail -40 | tee -a "$L"
  gzip -f "$O/ncu-$b.csv"; rm -f "$O/ncu-$b.err"
done
