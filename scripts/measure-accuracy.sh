#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/fanout built
# here (CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout).
# products-sim test accuracy after 10 epochs for seeds 1-3 (SEEDS), with
# the GPU defaults and with cuBLAS's float32 products (MODES: flag sets
# separated by '|', "" for the defaults).
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
cd /tmp
for s in ${SEEDS:-1 2 3}; do
  IFS='|' read -ra modes <<<"${MODES:-|--tf32=false --tf32x3=false}"
  for m in "${modes[@]}"; do
    printf 'seed %s %-30s ' "$s" "${m:-default}"
    "$R/bin/fanout" train --data "$D/products-sim" --device cuda --epochs 10 --seed "$s" $m 2>&1 | grep -E "^test accuracy" | cut -c1-22
  done
done
