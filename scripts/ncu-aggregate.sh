#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root after bin/fanout-NAME
# is unpacked (the names in VARIANTS): ncu's duration, registers, register
# limit on blocks and active warps of products-sim's bottom-layer
# aggregation at 512 and 1024 seeds, per build. Summary lines in
# $OUT/aggregate.log.
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup aggregate.log
for v in ${VARIANTS:-base new}; do for b in 512 1024; do
  timeout 120 ncu --csv -k regex:aggregate_cat_table --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active \
    "bin/fanout-$v" bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 --batch $b 2>/dev/null |
    grep '^"' | tail -8 | awk -F'","' -v v="$v" -v b="$b" '{gsub(/"/, "", $NF); print v, b, $5, $(NF-2), $NF}' | tee -a "$L"
done; done
