#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/pack/bin.tar.xz
# packed here holding bin/fanout-exp: a local build, not committed, whose
# replay driver forks the next step's sampling onto the second stream after
# layer N's forward pass (EXP_FORKAFTER=N; the forward's transposes are
# then not joined at its end, which only timing may rely on) or before the
# loss (EXP_FORKLOSS=1) instead of before the backward pass. Whether an
# earlier fork hides the small steps' sampling (issue 25, item 5). SIZES
# and FORKS choose the runs (the first call: 16 256 512 1024 2048 and
# loss; the second: 16 512 1024 and 1 0). Summary lines in $OUT/fork.log.
tar -xJf bin/pack/bin.tar.xz -C bin; cp bin/fanout-exp bin/fanout
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup fork.log
export KEEP='"step_s"|error'
B=(bench --data "$D/products-sim" --device cuda --mode replay --steps 600 --json)
for k in 1 2; do
  for b in ${SIZES:-16 512 1024}; do
    r "b$b-built-$k" 60 bin/fanout-exp "${B[@]}" --batch $b
    for f in ${FORKS:-1 0}; do
      if [ "$f" = loss ]; then
        EXP_FORKLOSS=1 r "b$b-loss-$k" 60 bin/fanout-exp "${B[@]}" --batch $b
      else
        EXP_FORKAFTER=$f r "b$b-after$f-$k" 60 bin/fanout-exp "${B[@]}" --batch $b
      fi
    done
  done
done
step_times
gzip -f "$O/runs.log"
