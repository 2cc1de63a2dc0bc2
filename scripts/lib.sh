# shellcheck shell=bash
# Sourced by scripts/measure: the functions its scenarios share.
#
# Paths: R the repository root (the working directory), D the datasets
# ($DATA, default /tmp/fanout-data), O the outputs ($OUT, default out/),
# L the summary log ($O/summary.log, appended to; every run's whole output
# goes to $O/runs.log, this call's only), CORA_DIR Planetoid Cora's raw files ($CORA, default
# .data/planetoid-cora; empty where absent). BUILDS lists the builds in bin/ that each A/B run takes in
# turn: fanout-base then fanout where bin/fanout-base exists, else fanout; or, where the environment
# gives BUILDS (names in bin/, space-separated), those (several candidates against one base in a call).
set -uo pipefail
export NCCL_NVLS_ENABLE=0

die() { echo "scripts/measure: $*" >&2; exit 2; }
say() { echo "$*" | tee -a "$L"; }

# init checks bin/ and records the machine and the builds.
init() {
  R=$PWD; D=${DATA:-/tmp/fanout-data}; O=${OUT:-$R/out}; L=$O/summary.log
  mkdir -p "$D" "$O" || die "cannot create $D or $O"
  # The summaries read this call's runs only: an earlier call's log moves aside.
  [ -f "$O/runs.log" ] && mv "$O/runs.log" "$O/runs-$(date +%Y%m%d-%H%M%S).log"
  [ -x bin/fanout ] || die "bin/fanout is missing: build it first (CGO_ENABLED=0 go build -o bin/fanout ./cmd/fanout)"
  CORA_DIR=
  if [ -d "${CORA:-.data/planetoid-cora}" ]; then CORA_DIR=$(cd "${CORA:-.data/planetoid-cora}" && pwd); fi
  if [ -n "${BUILDS:-}" ]; then
    read -r -a BUILDS <<<"$BUILDS"
    local b
    for b in "${BUILDS[@]}"; do [ -x "bin/$b" ] || die "BUILDS: bin/$b is missing"; done
  else
    BUILDS=(fanout)
    [ -x bin/fanout-base ] && BUILDS=(fanout-base fanout)
  fi
  say "== $(date -u +%Y-%m-%dT%H:%MZ) $(hostname)"
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/   /' | tee -a "$L"
  local b
  for b in "${BUILDS[@]}"; do say "   bin/$b: $(bin/"$b" version 2>&1 | head -1)"; done
}

# gpus prints the number of GPUs; need_gpus N stops a scenario short of N.
gpus() { nvidia-smi -L 2>/dev/null | grep -c '^GPU'; }
need_gpus() {
  local have; have=$(gpus)
  [ "$have" -ge "$1" ] || { say "   skipped: $1 GPUs needed, $have here"; return 1; }
}

# data NAME [GEN FLAGS...] generates the preset NAME (less a -link suffix,
# which names the variant the flags make) into $D/NAME once; later calls
# reuse it.
data() {
  local name=$1; shift
  [ -d "$D/$name" ] && return 0
  local t0=$SECONDS
  local preset=${name%-link}
  preset=${preset%-community}
  bin/fanout gen "$preset" --out "$D/$name" "$@" >>"$O/runs.log" 2>&1 || die "gen $name failed (see $O/runs.log)"
  say "   gen $name $*: $((SECONDS - t0)) s"
}

# run NAME LIMIT EXE ARGS... runs EXE under a time limit (seconds), appends
# its output to runs.log under "== NAME: ARGS" and the lines matching KEEP
# (a regular expression) to the summary.
run() {
  local name=$1 lim=$2 exe=$3; shift 3
  local t0=$SECONDS cur="$O/cur.log"
  timeout "$lim" "$exe" "$@" >"$cur" 2>&1
  local rc=$?
  { echo "== $name: $*"; cat "$cur"; } >>"$O/runs.log"
  say "== $name (exit $rc, $((SECONDS - t0)) s)"
  grep -aE "${KEEP:-^(\[rank 0\] )?(epoch [0-9]+/|test accuracy)|\"step_(s|ms)\"|error|panic}" "$cur" | cut -c1-300 | sed 's/^/   /' | tee -a "$L"
  rm -f "$cur"
  return 0
}

# ab NAME LIMIT FANOUT-ARGS... runs every build on the same arguments,
# ROUNDS times (default 2), alternating, each as NAME@BUILD.
ab() {
  local name=$1 lim=$2; shift 2
  local _ b
  for _ in $(seq "${ROUNDS:-2}"); do
    # shellcheck disable=SC2086 # FLAGS holds several flags
    for b in "${BUILDS[@]}"; do run "$name@$b" "$lim" "bin/$b" "$@" ${FLAGS:-}; done
  done
}

# steps and epochs summarise runs.log: the bench step times of every
# NAME@BUILD (and the ratio of fanout to fanout-base), or train's steps/s
# from epoch FROM on (default 2).
# mark notes where the next scenario's runs start in runs.log, so that its
# summaries read its runs only.
mark() { MARK=0; [ -f "$O/runs.log" ] && MARK=$(wc -l <"$O/runs.log"); }
steps() { python3 "$R/scripts/runlog.py" steps --skip "${MARK:-0}" "$O/runs.log" | tee -a "$L"; }
epochs() { python3 "$R/scripts/runlog.py" epochs --from "${FROM:-2}" --skip "${MARK:-0}" "$O/runs.log" | tee -a "$L"; }

# suite NAME PKG PATTERN LIMIT [ARGS...] runs bin/NAME.test's tests
# matching PATTERN in the package's folder; its output goes to
# $O/suite-NAME.log, its outcome and counts to the summary.
suite() {
  local n=$1 pkg=$2 pat=$3 lim=$4; shift 4
  [ -x "$R/bin/$n.test" ] || { say "== suite $n: bin/$n.test not built (CGO_ENABLED=0 go test -c -o bin/$n.test ./$pkg), skipped"; return 0; }
  (cd "$R/$pkg" && FANOUT_CORA_DIR=$CORA_DIR timeout "$lim" "$R/bin/$n.test" -test.run "$pat" -test.v \
    -test.timeout "$((lim - 5))s" "$@" >"$O/suite-$n.log" 2>&1; say "== suite $n ($pat): exit $?")
  grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|ns/op' "$O/suite-$n.log" | head -20 | sed 's/^/   /' | tee -a "$L"
  say "   passed $(grep -cE '^ *--- PASS' "$O/suite-$n.log"), skipped $(grep -cE '^ *--- SKIP' "$O/suite-$n.log")"
}

# picks LIST NAME: whether a space-separated LIST (a setting such as SUITES
# or ONLY) names NAME; an empty LIST picks every name.
picks() { [ -z "$1" ] || [[ " $1 " == *" $2 "* ]]; }
