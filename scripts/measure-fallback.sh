#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here (bin/fanout): a group whose gradients are
# too large for the peer-memory sum (products-sim at --hidden 1024: about
# 2.4 million floats, over its 1 million), so the sum and the overflow flag
# that travels with it fall back to NCCL, against --nccl-all-reduce
# (--deterministic: equal losses expected); and the link task's hybrid
# group against the whole table (its cache now placed by
# hybrid.Options.PlaceCache). Summary lines in $OUT/fallback.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fallback.log
export KEEP='^(epoch [0-9]+/|epoch [0-9]+:|test |hybrid)|gradients summed|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 2 --eval-every 2 --devices 2 --hidden 1024 --deterministic)
r wide-peer 120 bin/fanout "${P[@]}"
r wide-nccl 120 bin/fanout "${P[@]}" --nccl-all-reduce
[ -d "$D/tiny-link" ] || bin/fanout gen tiny --link-split 0.85,0.05,0.1 --out "$D/tiny-link" >/dev/null
T=(train --task link --device cuda --epochs 2 --epoch-steps 200 --data "$D/tiny-link" --devices 2 --deterministic --bottom-products float32)
r link-whole 60 bin/fanout "${T[@]}"
r link-hybrid 60 bin/fanout "${T[@]}" --mode hybrid --gpu-memory 2GiB --cache-rows 4000
