#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout-before, bin/fanout and bin/cuda.test. The
# sampling chain's scans and relabelling publish their tile states and
# draw their last-block tickets without sequentially consistent fences
# (issue 25, item 5): the sampling and scan conformance tests, then
# products-sim's replayed step from 16 to 2048 seeds before and after,
# alternating, twice, then ncu's durations of the 512-seed step after.
# Summary lines in $OUT/fences.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fences.log
suite cuda backend/cuda 'TestConformance$|TestSampleLayer|TestSamplingMatches|TestCaptureSampling|TestScan|TestRelabel' 300
export KEEP='"step_s"|error'
B=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
for k in 1 2; do
  for b in 16 256 512 1024 2048; do ab "b$b-$k" 60 "${B[@]}" --batch $b; done
done
step_times
timeout 120 ncu --csv --metrics gpu__time_duration.sum --cache-control none --clock-control none \
  bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 --batch 512 >"$O/ncu-512.csv" 2>/dev/null
python3 scripts/ncu-step.py "$O/ncu-512.csv" | tee -a "$L"; gzip -f "$O/ncu-512.csv"
gzip -f "$O/runs.log" "$O/cuda.log"
