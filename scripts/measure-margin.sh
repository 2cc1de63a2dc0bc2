#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/fanout built
# here (CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout).
# The replay envelope's margin: products-sim replay steps, peak memory and
# overflows at each margin (alternating, twice), then whole training runs
# (3 epochs with evaluation) counting the overflows an epoch meets.
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
cd /tmp
margins=${MARGINS:-1.02 1.05 1.10 1.15}
for round in 1 2; do
  for m in $margins; do
    printf 'margin %-5s ' "$m"
    "$R/bin/fanout" bench --data "$D/products-sim" --device cuda --mode replay --steps ${STEPS:-300} --json --envelope-margin "$m" |
      python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); r=d["replay"]; print("step %.4f ms, epoch %.4f s, peak %.1f MiB, envelope %.1f MiB (ideal %.1f), captures %d, overflows %d" % (d["step_s"]*1e3, d["epoch_s"], d.get("peak_bytes",0)/2**20, r["envelope"]["bytes"]/2**20, r["envelope"]["ideal_bytes"]/2**20, r["captures"], r["overflows"]))'
  done
done
for m in ${TRAIN_MARGINS:-1.02 1.05 1.15}; do
  echo "== train, margin $m"
  "$R/bin/fanout" train --data "$D/products-sim" --device cuda --epochs ${EPOCHS:-5} --envelope-margin "$m" 2>&1 | grep -E "replay:|test accuracy|epoch +${EPOCHS:-5}"
done
