#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   bin/fanout-base: the same command at the commit to compare with
#   CGO_ENABLED=0 go test -c -o bin/X.test ./P for backend/cuda and train
#   (BENCH_ONLY=1 skips the tests)
# A step change against the base binary: the GPU tests, products-sim
# replay steps (alternating, twice), an ncu breakdown of one replayed step
# of each binary (NCU=0 skips it; NCU_MATCH prints the matching launches),
# and papers-sim (PAPERS=0 skips it).
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
OUT=${OUT:-/tmp/out}
mkdir -p "$D" "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
pick='^(---|ok|FAIL|PASS|panic)|--- (PASS|FAIL|SKIP)|_test.go:[0-9]+: (.*(want|got|relative|worst|mean|launches)|.*differ)'
if [ -z "${BENCH_ONLY:-}" ]; then
  "$R/bin/cuda.test" -test.run "${CUDA_TESTS:-.}" -test.v 2>&1 | grep -E "$pick" | grep -v "^    --- PASS" | tail -${TEST_LINES:-40}
  FANOUT_CORA_DIR="$R/.data/cora" "$R/bin/train.test" -test.run "${TRAIN_TESTS:-CUDA}" -test.v 2>&1 | grep -E "$pick" | tail -${TEST_LINES:-40}
fi
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
cd /tmp
line='import json,sys; d=json.loads(sys.stdin.read()); print("step %.4f ms, epoch %.4f s, floor at peak %.4f ms, busy %.4f, peak %.1f MiB" % (d["step_s"]*1e3, d["epoch_s"], d.get("peak_floor_s",0)*1e3, d["busy"], d.get("peak_bytes",0)/2**20))'
variants=${VARIANTS:-"fanout-base|fanout"}
IFS='|' read -ra vs <<<"$variants"
for round in 1 2; do
  for v in "${vs[@]}"; do
    set -- $v
    exe=$1; shift
    printf '%-32s ' "$v"
    "$R/bin/$exe" bench --data "$D/products-sim" --device cuda --mode replay --steps ${STEPS:-300} --json "$@" 2>/dev/null | python3 -c "$line"
  done
done
if [ "${NCU:-1}" != 0 ]; then
  for v in "${vs[@]}"; do
    set -- $v
    exe=$1; shift
    tag=$(echo "$v" | tr -c 'a-z0-9\n' '_')
    ncu --csv --metrics gpu__time_duration.sum --cache-control none --clock-control none \
      "$R/bin/$exe" bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 "$@" >"$OUT/ncu-$tag.csv" 2>/dev/null
    echo "== ncu $v"
    python3 "$R/scripts/ncu-step.py" "$OUT/ncu-$tag.csv" ${NCU_MATCH:-} | head -${NCU_LINES:-60}
  done
fi
if [ "${PAPERS:-1}" != 0 ]; then
  [ -d "$D/papers-sim" ] || "$R/bin/fanout" gen papers-sim --out "$D/papers-sim" >/dev/null
  for v in "${vs[@]}"; do
    set -- $v
    exe=$1; shift
    printf 'papers-sim %-21s ' "$v"
    "$R/bin/$exe" bench --data "$D/papers-sim" --device cuda --mode replay --steps 300 --json "$@" 2>/dev/null | python3 -c "$line"
  done
fi
