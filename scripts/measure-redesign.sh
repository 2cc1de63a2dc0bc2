#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here (bin/fanout: the commit measured; bin/fanout-before: the
# commit before the change; the test binaries bin/*.test) and .data/cora
# (imported Cora) and .data/planetoid-cora (its raw files). The GPU suites,
# fanout bench on products-sim and papers-sim alternating the two
# binaries, a TensorBoard file read back by TensorBoard's reader,
# normalised and jumping-knowledge models loaded in PyTorch Geometric,
# GIN with batch normalisation on products-sim, and the link step against
# the node step. Summary lines in $OUT/redesign.log.
tar -xJf bin/pack/bin.tar.xz -C bin
PRESETS="products-sim papers-sim" . "$(dirname "$0")/lib.sh"; setup redesign.log
export FANOUT_CORA_DIR=$R/.data/planetoid-cora
suite cuda backend/cuda 'TestConformance|TestKernelErrors|TestCompileKernels|TestCapture|TestMarks' 150
suite train train 'CUDA' 150
suite link train/link 'TestGPU' 90
P=(--data "$D/products-sim" --device cuda); Q=(--data "$D/papers-sim" --device cuda)
for k in 1 2; do
  for exe in bin/fanout-before bin/fanout; do r "prod-bench-$k" 60 $exe bench "${P[@]}" --mode replay --steps 300 --json; done
done
for exe in bin/fanout-before bin/fanout; do r papers-bench 90 $exe bench "${Q[@]}" --mode replay --steps 300 --json; done
r tb 60 bin/fanout train --device cuda --epochs 3 --tensorboard /tmp/tb-run
python3 - <<'PY' 2>&1 | tee -a "$L"
import glob
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
ea = EventAccumulator('/tmp/tb-run', size_guidance={'scalars': 0}); ea.Reload()
for tag in ea.Tags()['scalars']:
    ev = ea.Scalars(tag)
    print('tensorboard', tag, len(ev), [(e.step, round(e.value, 4)) for e in ev[:3]])
PY
C=(--data .data/cora --device cuda --fanouts -1,-1 --batch 140 --epochs 60 --lr 0.01 --weight-decay 5e-4 --dropout 0.5)
for spec in sage:batch:cat gcn:layer:none gin:batch:max gat:layer:last; do
  IFS=: read -r m n j <<<"$spec"; o=/tmp/rt-$m; rm -rf $o
  x=(); [ "$m" = gat ] && x=(--hidden 64 --heads 4)
  KEEP='test accuracy|error' r "rt-$spec" 60 bin/fanout train "${C[@]}" --model $m --norm $n --jk $j "${x[@]}" --out $o
  KEEP='accuracy|error' r "rt-eval-$spec" 60 bin/fanout eval --checkpoint $o/best.ckpt --data .data/cora --full-eval --device cuda
  KEEP='.' r "rt-export-$spec" 30 bin/fanout export --checkpoint $o/best.ckpt $o/m.safetensors
  KEEP='.' r "rt-pyg-$spec" 90 python3 scripts/pyg_roundtrip.py .data/cora $o/m.safetensors
done
for s in 1 2 3; do
  KEEP='^epoch 10/|test accuracy|error|diverg' r "gin-norm-$s" 90 bin/fanout train "${P[@]}" --model gin --norm batch --epochs 10 --eval-every 10 --seed $s
  KEEP='^epoch 10/|test accuracy|error' r "sage-$s" 90 bin/fanout train "${P[@]}" --epochs 10 --eval-every 10 --seed $s
done
KEEP='^epoch 2/|error|diverg|stop' r gin-none 90 bin/fanout train "${P[@]}" --model gin --epochs 3 --eval-every 10
KEEP='link|step|error' r link-bench 90 bin/fanout bench --task link "${P[@]}" --batch 1024 --negatives 1 --mode both
KEEP='step_s|error' r node-bench-both 90 bin/fanout bench "${P[@]}" --mode both --json
