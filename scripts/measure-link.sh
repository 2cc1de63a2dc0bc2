#!/usr/bin/env bash
# Runs on a one-GPU machine from the repository root, with bin/fanout built
# here and, for the suites, bin/link.test (go test -c ./train/link) and
# bin/fanout-cmd.test (go test -c ./cmd/fanout). Measures link prediction
# on products-sim: the link step (1024 positive edges, 1 negative each)
# against the node-classification step of the same preset, both replayed
# with the same steps, with launches and host syncs per step; a link
# training run of GraphSAGE and one of GCN, each ranking 10,000 validation
# and test edges against 1,000 negatives each (MRR), in 4 epochs of 3,000
# steps (MODELS, EPOCHS, EPOCH_STEPS change them), and GraphSAGE in the
# hybrid mode (a tenth of the feature rows cached); and writes the OGB link
# fixture with PyTorch (scripts/make_ogbl_fixture.py) into
# $OUT/ogbl-fixture, then runs the test that imports and trains it.
# Summary lines in $OUT/link.log, whole outputs in $OUT/runs.log.
# PHASES (default "bench mrr fixture") picks the parts, for machines whose
# commands are limited to 10 minutes: the data stays in $DATA between calls.
phase() { [[ " ${PHASES:-bench mrr fixture} " == *" $1 "* ]]; }
data=products-sim; phase bench || phase mrr || data=tiny # the fixture alone needs no products-sim
PRESETS=$data; . "$(dirname "$0")/lib.sh"; setup link.log
S=${STEPS:-300}
if [ "$data" = products-sim ]; then
  t0=$SECONDS
  [ -d "$D/products-sim-link" ] || bin/fanout gen products-sim --link-split 0.85,0.05,0.1 --out "$D/products-sim-link" 2>&1 | tail -1 | tee -a "$L"
  echo "gen products-sim --link-split 0.85,0.05,0.1: $((SECONDS - t0)) s" | tee -a "$L"
  bin/fanout info "$D/products-sim-link" 2>&1 | grep -E 'links|vertices|edges' | sed 's/^/   /' | tee -a "$L"
fi

# The steps: node classification and link prediction, replayed, $S steps each, twice.
phase bench && for k in 1 2; do
  KEEP='step_ms|step_s|error' r "node-bench-$k" 120 bin/fanout bench --data "$D/products-sim" --device cuda --mode replay --steps "$S" --json
  KEEP='step_ms|error' r "link-bench-$k" 120 bin/fanout bench --task link --data "$D/products-sim-link" --device cuda --mode replay \
    --batch 1024 --negatives 1 --steps "$S" --json
done
phase bench && python3 - "$O/runs.log" <<'PY' 2>&1 | tee -a "$L"
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    ms = r["step_ms"] if "step_ms" in r else r.get("step_s", 0) * 1e3
    task = "link" if "negatives" in r else "node"
    print(f"   {task} {r['mode']}: {ms:.3f} ms/step, {r.get('launches_per_step', 0):.0f} launches, "
          f"{r.get('graph_launches_per_step', 0):.2f} graph launches, {r.get('host_syncs_per_step', 0):.2f} host syncs per step")
PY
phase bench && KEEP='link|error' r link-bench-both 120 bin/fanout bench --task link --data "$D/products-sim-link" --device cuda --mode both \
  --batch 1024 --negatives 1 --steps "$S"

# MRR against 1,000 negatives per held-out edge (ogbl-citation2's protocol),
# GraphSAGE (the preset's model, GraphBolt's for ogbl-citation2) and GCN.
phase mrr && for m in ${MODELS:-sage gcn}; do
  run=/tmp/link-run-$m; rm -rf "$run"
  KEEP='^epoch|^test|split|error|note' r "link-mrr-$m" 420 bin/fanout train --data "$D/products-sim-link" --task link --device cuda --mode replay \
    --model "$m" --epochs "${EPOCHS:-4}" --epoch-steps "${EPOCH_STEPS:-3000}" --eval-negatives 1000 --eval-edges 10000 --out "$run"
  cp "$run/link_summary.json" "$O/link-mrr-$m.json" 2>/dev/null
done
# The hybrid mode: a tenth of the rows cached (the highest degrees), the rest
# read from host memory inside the replayed step.
phase mrr && KEEP='^epoch|^test|hybrid|feature cache|host memory|error' r link-hybrid 300 bin/fanout train --data "$D/products-sim-link" \
  --task link --device cuda --mode hybrid --cache-rows 200000 --epochs 2 --epoch-steps "${EPOCH_STEPS:-3000}" --eval-negatives 1000 --eval-edges 10000

# The OGB link fixture, written by PyTorch, and the test that imports it.
phase fixture || exit 0
KEEP='.' r ogbl-fixture 60 python3 scripts/make_ogbl_fixture.py "$O/ogbl-fixture"
python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | sed 's/^/   /' | tee -a "$L"
suite() { # suite NAME PKG PATTERN LIMIT
  [ -x "$R/bin/$1.test" ] || { echo "== suite $1: bin/$1.test not built, skipped" | tee -a "$L"; return; }
  (cd "$R/$2" && timeout "$4" "$R/bin/$1.test" -test.run "$3" -test.v -test.timeout "$(($4 - 5))s" >"$O/suite-$1.log" 2>&1; echo "== suite $1 ($3): exit $?" | tee -a "$L")
  grep -E '^ *(--- FAIL|--- SKIP|FAIL|ok|PASS|panic)|MRR' "$O/suite-$1.log" | head -20 | tee -a "$L"
  echo "   passed $(grep -cE '^--- PASS' "$O/suite-$1.log"), skipped $(grep -cE '^--- SKIP' "$O/suite-$1.log")" | tee -a "$L"
}
if [ -d "$O/ogbl-fixture" ]; then
  rm -rf cmd/fanout/testdata/ogbl-fixture && mkdir -p cmd/fanout/testdata && cp -r "$O/ogbl-fixture" cmd/fanout/testdata/ogbl-fixture
  suite fanout-cmd cmd/fanout 'TestImportOGBLinkFixture|TestTrainLinkMRR' 120
fi
[ -d .data/planetoid-cora ] && export FANOUT_CORA_DIR=$R/.data/planetoid-cora
suite link train/link 'TestGPU|TestTinyMRR1000|TestDrawNegatives' 150
