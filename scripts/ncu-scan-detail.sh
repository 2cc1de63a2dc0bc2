#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout. Why the sampling chain's scans take 6-11 µs
# at a few blocks (issue 25, item 5): ncu's launch, occupancy, warp-state
# and source-counter sections of the 512-seed step's count scans, relabel
# flag scans and relabel writes. Output: $OUT/scan-detail.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup scan-detail.log
for k in relabel_flag_scan sample_count_scan relabel_write sample_fill16; do
  timeout 150 ncu --kernel-name "$k" --launch-skip 3 --launch-count 3 --cache-control none --clock-control none \
    --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section SpeedOfLight \
    --section SourceCounters --section MemoryWorkloadAnalysis \
    bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps 3 --warmup 1 --batch 512 >"$O/ncu-$k.txt" 2>&1
  echo "== $k: exit $?" | tee -a "$L"
  grep -E "Duration|Elapsed Cycles|SM Frequency|Grid Size|Registers|Achieved Occupancy|Warp Cycles Per Issued|Stall|stall|No Eligible|Memory Throughput|L2 Hit|One or More" "$O/ncu-$k.txt" | head -60 | tee -a "$L"
done
tar -czf "$O/ncu-detail.tgz" -C "$O" $(cd "$O" && ls ncu-*.txt); rm -f "$O"/ncu-*.txt
