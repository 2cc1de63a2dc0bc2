#!/usr/bin/env bash
# Runs on a machine with two GPUs from the repository root, with
# bin/pack/bin.tar.xz packed here holding bin/fanout-exp: a local build,
# not committed, whose group ranks skip parts of the step when asked, for
# timing only (their models drift apart): EXP_NOFLAG skips the overflow
# flag's all-reduce, EXP_NOGRAD the gradients' sum, EXP_NOJOIN the wait for
# the second stream before the sum, EXP_WINDOW=N sets the replay driver's
# window (steps between two host reads of the flag and, in a group, two
# agreements on stopping), and EXP_STATS prints each rank's launch loops'
# wall and device time. products-sim, 1024 seeds per device, 5 epochs, one
# GPU and two, alternating, twice. PHASE picks the variants (the three
# calls of docs/perf.md's "What a group's step adds"):
#   stages  two, without the flag's all-reduce, without any collective
#   window  the window of 64 steps against none, with the ranks' times
#   join    without the wait for the second stream, and without the flag too
# Summary lines in $OUT/stages-$PHASE.log.
tar -xJf bin/pack/bin.tar.xz -C bin; [ -f bin/fanout ] || cp bin/fanout-exp bin/fanout
PHASE=${PHASE:-stages}
PRESETS=products-sim; . "$(dirname "$0")/lib.sh"; setup "stages-$PHASE.log"
export KEEP='^(\[rank 0\] )?(epoch [0-9]+/)|EXP|error|panic'
P=(train --data "$D/products-sim" --device cuda --epochs 5 --eval-every 5)
f=bin/fanout-exp
case $PHASE in
stages) variants=("" "EXP_NOFLAG=1" "EXP_NOFLAG=1 EXP_NOGRAD=1") ;;
window) variants=("EXP_STATS=1" "EXP_STATS=1 EXP_WINDOW=100000" "EXP_STATS=1 EXP_NOFLAG=1 EXP_NOGRAD=1"
  "EXP_STATS=1 EXP_NOFLAG=1 EXP_NOGRAD=1 EXP_WINDOW=100000") ;;
join) variants=("" "EXP_NOJOIN=1" "EXP_NOJOIN=1 EXP_NOFLAG=1") ;;
esac
for k in 1 2; do
  r "one-$k" 60 $f "${P[@]}"
  [ "$PHASE" = window ] && EXP_WINDOW=100000 r "one-nowindow-$k" 60 $f "${P[@]}"
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086
    ( [ -z "$v" ] || export $v; r "two ${v:-as built}-$k" 60 $f "${P[@]}" --devices 2 )
  done
done
