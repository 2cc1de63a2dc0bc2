# Sourced by the measurement scripts: run from the repository root on the
# device machine, with bin/fanout built here. setup LOG makes the data and
# output folders, generates the presets named in PRESETS (default
# products-sim and papers-sim) and sets L, the summary log; r NAME LIMIT
# EXE ARGS... runs one command under a time limit, appends its whole
# output to $O/runs.log and the lines that matter to $L; suite NAME PKG
# PATTERN LIMIT runs the tests of bin/NAME.test matching PATTERN in PKG,
# its output in $O/NAME.log and its outcome and counts in $L; ab NAME
# LIMIT ARGS... runs bin/fanout-before and then bin/fanout on ARGS.
# step_times prints every run's step time from the bench --json lines in
# $O/runs.log, and ab_steps each NAME-before/NAME-after pair's with their
# ratio (to $L too); epoch_times the mean epoch and step of epochs 2-5 of
# each train run (--epochs 5).
set -uo pipefail
export NCCL_NVLS_ENABLE=0
setup() {
  R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; mkdir -p "$D" "$O"
  L=$O/$1
  nvidia-smi -L | tee -a "$L"; G=$(nvidia-smi -L | wc -l)
  for p in ${PRESETS:-products-sim papers-sim}; do
    local t0=$SECONDS; [ -d "$D/$p" ] || bin/fanout gen "$p" --out "$D/$p" >/dev/null 2>&1
    echo "gen $p: $((SECONDS - t0)) s" | tee -a "$L"
  done
}
r() {
  local name=$1 lim=$2 exe=$3; shift 3; echo "== $name: $exe $*" | tee -a "$L"; local t0=$SECONDS
  timeout "$lim" "$exe" "$@" >"$O/cur.log" 2>&1; echo "   exit $? (wall $((SECONDS - t0)) s)" | tee -a "$L"
  { echo "== $name: $*"; cat "$O/cur.log"; } >>"$O/runs.log"
  grep -E "${KEEP:-^(\[rank 0\] )?(epoch [0-9]+/|test accuracy|replay|hybrid:)|device\(s\)|\"step_s\"|error|panic}" "$O/cur.log" | cut -c1-260 | sed 's/^/   /' | tee -a "$L"
  rm -f "$O/cur.log"
}
suite() {
  (cd "$R/$2" && timeout "$4" "$R/bin/$1.test" -test.run "$3" -test.v -test.timeout "$(( $4 - 5 ))s" >"$O/$1.log" 2>&1; echo "== suite $1 ($3): exit $?" | tee -a "$L")
  grep -E '^(--- FAIL|FAIL|ok|PASS|panic)' "$O/$1.log" | head -20 | tee -a "$L"
  echo "   passed $(grep -cE '^ *--- PASS' "$O/$1.log"), skipped $(grep -cE '^ *--- SKIP' "$O/$1.log")" | tee -a "$L"
}
ab() { local n=$1 lim=$2; shift 2; r "$n-before" "$lim" bin/fanout-before "$@"; r "$n-after" "$lim" bin/fanout "$@"; }
# bench_steps MODE: the bench --json step times in $O/runs.log, every run's
# (MODE each) or each before/after pair's with its ratio (MODE ab).
bench_steps() {
  python3 - "$1" "$O/runs.log" <<'PY' | tee -a "$L"
import json, sys
name, res = None, {}
for line in open(sys.argv[2]):
    if line.startswith("== "):
        name = line.split(":")[0][3:]
    elif line.startswith("{"):
        res[name] = json.loads(line)["step_s"] * 1e3
for n, v in res.items():
    if sys.argv[1] == "each":
        print(f"   {n:22s} {v:.4f} ms")
    elif n.endswith("-after") and n[:-6] + "-before" in res:
        b = res[n[:-6] + "-before"]
        print(f"   {n[:-6]:22s} before {b:.4f} after {v:.4f} ms  {v / b:.3f}x")
PY
}
step_times() { bench_steps each; }
ab_steps() { bench_steps ab; }
epoch_times() {
  python3 - "$O/runs.log" <<'PY' | tee -a "$L"
import re, sys
name, rates = None, {}
for line in open(sys.argv[1]):
    if line.startswith("== "):
        name = line.split(":")[0][3:]
    m = re.search(r"epoch ([2-5])/5 +(\d+) steps +([\d.]+) steps/s", line)
    if m and name:
        rates.setdefault(name, []).append((int(m.group(2)), float(m.group(3))))
for n, v in rates.items():
    steps = sum(s for s, _ in v)
    print(f"   {n:16s} epoch {sum(s / r for s, r in v) / len(v) * 1e3:.2f} ms, step {sum(s / r for s, r in v) / steps * 1e3:.4f} ms")
PY
}
