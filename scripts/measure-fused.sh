#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding the builds named in VARIANTS (bin/fanout-NAME, the
# first the base) and the test binaries bin/cuda.test, bin/train.test,
# bin/link.test and bin/hybrid.test, and .data/planetoid-cora carried. The
# suites the fused launches touch (CUDA conformance and capture, the
# trainer's CUDA tests with Cora, link and hybrid on the GPU), then the
# replayed step of each build, alternating, on products-sim from 16 to 2048
# seeds (twice at 16, 512 and 1024), papers-sim at 512 and 1024 and the
# other models at 1024 (issue 25, item 5), and ncu's kernels of the last
# build's step at 512 seeds. Summary lines in $OUT/fused.log.
# SUITES=0 leaves the suites out.
tar -xJf bin/pack/bin.tar.xz -C bin
last=$(echo ${VARIANTS:-base new} | awk '{print $NF}')
[ -x bin/fanout ] || cp "bin/fanout-$last" bin/fanout # setup generates the presets with it
. "$(dirname "$0")/lib.sh"; setup fused.log
export FANOUT_CORA_DIR=$R/.data/planetoid-cora
[ "${SUITES:-1}" = 0 ] || {
suite cuda backend/cuda 'TestBeside|TestConformance$|TestCapture|TestMarks' 200
suite train train 'CUDA' 240
suite link train/link 'TestGPU' 90
suite hybrid train/hybrid 'CUDA' 120
}
export KEEP='"step_s"|error'
P=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
Q=(bench --data "$D/papers-sim" --device cuda --mode replay --steps 400 --json)
each() { local n=$1 lim=$2; shift 2; for v in ${VARIANTS:-base new}; do r "$n-$v" "$lim" "bin/fanout-$v" "$@"; done; }
for k in 1 2; do for b in 16 512 1024; do each "products-$b-$k" 60 "${P[@]}" --batch $b; done; done
for b in 256 2048; do each "products-$b" 60 "${P[@]}" --batch $b; done
for b in 512 1024; do each "papers-$b" 90 "${Q[@]}" --batch $b; done
for m in gcn gat gin; do each "$m-1024" 60 "${P[@]}" --batch 1024 --model $m; done
step_times
timeout 120 ncu --csv --metrics gpu__time_duration.sum --cache-control none --clock-control none \
  "bin/fanout-$last" bench --data "$D/products-sim" --device cuda --mode replay --steps 2 --warmup 1 --batch 512 >"$O/ncu-512.csv" 2>/dev/null
python3 scripts/ncu-step.py "$O/ncu-512.csv" | tee -a "$L"
gzip -f "$O/ncu-512.csv" "$O/runs.log"
gzip -f "$O"/{cuda,train,link,hybrid}.log 2>/dev/null
