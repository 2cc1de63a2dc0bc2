#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root with bin/fanout: the
# work of products-sim's replayed step at 256, 512, 1024 and 2048 seeds
# under ncu (kernels serialized, caches as the step leaves them): DRAM and
# L2 bytes, instructions and duration summed over one step, for the
# sampling and the rest (issue 25, item 5: how much of a 1024-seed step's
# work a 512-seed step has). Output: $OUT/work.log, $OUT/work-B.csv.gz.
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup work.log
for b in 256 512 1024 2048; do
  timeout 150 ncu --csv --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor.sum \
    bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 --batch $b >"$O/work-$b.csv" 2>/dev/null
  echo "== $b seeds: exit $?" | tee -a "$L"
  python3 scripts/ncu-work.py "$O/work-$b.csv" | tee -a "$L"
  gzip -f "$O/work-$b.csv"
done
