#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout): link prediction in the
# modes issue 27 added for groups, on tiny's link task. Two GPUs of one
# process (the peer-memory sum, and NCCL's for comparison), two processes
# under fanout launch, the hybrid mode on two GPUs against the whole
# table (--deterministic: equal losses expected), and each of the group
# and launched runs stopped after an epoch and continued with --resume
# against the straight run. Summary lines in $OUT/link-gpus.log.
[ -f bin/fanout ] || tar -xJf bin/pack/bin.tar.xz -C bin
mkdir -p "${DATA:-/tmp/fanout-data}"; [ -d "${DATA:-/tmp/fanout-data}/tiny-link" ] || bin/fanout gen tiny --link-split 0.85,0.05,0.1 --out "${DATA:-/tmp/fanout-data}/tiny-link" >/dev/null
PRESETS=' '; . "$(dirname "$0")/lib.sh"; setup link-gpus.log
export KEEP='epoch [0-9]+:|test ROC|link predictor|rank 1\)|gradients summed|error|panic'
T=(train --task link --device cuda --epochs 2 --epoch-steps 200 --data "$D/tiny-link")
T1=(train --task link --device cuda --epochs 1 --epoch-steps 200 --data "$D/tiny-link")
f=bin/fanout
r group-peer 90 $f "${T[@]}" --devices 2
r group-nccl 90 $f "${T[@]}" --devices 2 --nccl-all-reduce
r launch 120 $f launch --nproc 2 -- "${T[@]}"
r group-det 90 $f "${T[@]}" --devices 2 --deterministic
r group-det-hybrid 90 $f "${T[@]}" --devices 2 --deterministic --mode hybrid --cache-rows 4000
r launch-hybrid 120 $f launch --nproc 2 -- "${T[@]}" --mode hybrid --cache-rows 4000
# Resume: a straight run of 2 epochs against one of 1 epoch continued.
X=/tmp/link-runs; rm -rf $X
r group-straight 90 $f "${T[@]}" --devices 2 --deterministic --out $X/gs
r group-first 90 $f "${T1[@]}" --devices 2 --deterministic --out $X/gr
r group-resumed 90 $f "${T[@]}" --devices 2 --deterministic --out $X/gr --resume
r launch-straight 120 $f launch --nproc 2 -- "${T[@]}" --deterministic --out $X/ls
r launch-first 120 $f launch --nproc 2 -- "${T1[@]}" --deterministic --out $X/lr
r launch-resumed 120 $f launch --nproc 2 -- "${T[@]}" --deterministic --out $X/lr --resume
