#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
#   bin/fanout-base: the same command at the commit to compare with
#   CGO_ENABLED=0 go test -c -o bin/X.test ./P for backend/cuda, train,
#   train/hybrid and train/multigpu (BENCH_ONLY=1 skips the tests)
# The GPU tests, then products-sim replay steps: the base binary, the
# next step's sampling beside the step (the default) and in order
# (--overlap-sampling=false), each with 3xTF32 (--tf32=false) and TF32 (--tf32),
# alternating, twice.
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
if [ -z "${BENCH_ONLY:-}" ]; then
  pick='^(---|ok|FAIL|PASS|panic)|--- (PASS|FAIL|SKIP)|_test.go:[0-9]+: (.*(want|got|relative|worst|mean)|.*differ)'
  "$R/bin/cuda.test" -test.run 'Beside|Capture|^TestConformance$' -test.v 2>&1 | grep -E "$pick" | grep -v "^    --- PASS" | tail -20
  FANOUT_CORA_DIR="$R/.data/cora" "$R/bin/train.test" -test.run 'CUDA' -test.v 2>&1 | grep -E "$pick" | tail -30
  "$R/bin/hybrid.test" -test.run 'CUDA' -test.v 2>&1 | grep -E "$pick" | tail -10
  "$R/bin/multigpu.test" -test.run 'GPU|NCCL' -test.v 2>&1 | grep -E "$pick" | tail -10
fi
[ -d "$D/products-sim" ] || "$R/bin/fanout" gen products-sim --out "$D/products-sim" >/dev/null
cd /tmp
for round in 1 2; do
  for b in "fanout-base" "fanout" "fanout --overlap-sampling=false"; do
    for m in "--tf32=false" "--tf32"; do
      set -- $b
      exe=$1; shift
      printf '%-45s ' "$b $m"
      "$R/bin/$exe" bench --data "$D/products-sim" --device cuda --mode replay --steps 200 --json "$@" $m |
        python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("step %.4f ms, epoch %.4f s, floor %.4f ms, busy %.4f, peak %.1f MiB" % (d["step_s"]*1e3, d["epoch_s"], d["floor_s"]*1e3, d["busy"], d.get("peak_bytes",0)/2**20))'
    done
  done
done
