#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with bin/ built here:
#   CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout
# and Planetoid Cora's raw files in .data/cora. The accuracy tests of the
# products with --tf32 (the default) against --tf32=false (3xTF32 where widths allow,
# cuBLAS float32 otherwise), or of the flag sets in MODES (separated by '|'): Cora GAT (seeds $GAT_SEEDS, default 1-5), GCN
# and GraphSAGE (seeds $SEEDS, default 1-5), and tiny for 10 epochs (seeds
# $TINY_SEEDS, default 1-5).
set -uo pipefail
R=$PWD
D=${DATA:-/tmp/fanout-data}
mkdir -p "$D"
"$R/bin/fanout" import planetoid "$R/.data/cora" --name cora --normalize-features --out "$D/cora" >/dev/null
[ -d "$D/tiny" ] || "$R/bin/fanout" gen tiny --out "$D/tiny" >/dev/null
cd /tmp
acc() { "$R/bin/fanout" train --device cuda "$@" 2>&1 | grep -o "test accuracy [0-9.]*" | tail -1; }
IFS='|' read -ra modes <<<"${MODES:---tf32|--tf32=false}"
for m in "${modes[@]}"; do
  for s in ${GAT_SEEDS:-1 2 3 4 5}; do
    echo "gat $m seed $s: $(acc --data "$D/cora" --model gat --layers 2 --hidden 64 --heads 8 --out-heads 1 \
      --attn-dropout 0.6 --dropout 0.6 --input-dropout 0.6 --fanouts -1,-1 --batch 140 --epochs 200 --lr 0.005 \
      --weight-decay 5e-4 --full-eval --seed $s $m)"
  done
  for s in ${SEEDS:-1 2 3 4 5}; do
    echo "gcn $m seed $s: $(acc --data "$D/cora" --model gcn --layers 2 --hidden 16 --fanouts -1,-1 \
      --batch 140 --epochs 200 --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --seed $s $m)"
    echo "sage $m seed $s: $(acc --data "$D/cora" --model sage --layers 2 --hidden 16 --fanouts 10,10 \
      --batch 140 --epochs 200 --lr 0.01 --weight-decay 5e-4 --dropout 0.5 --input-dropout 0.5 --seed $s $m)"
  done
  for s in ${TINY_SEEDS:-1 2 3 4 5}; do
    echo "tiny $m seed $s: $(acc --data "$D/tiny" --epochs 10 --seed $s $m)"
  done
done
