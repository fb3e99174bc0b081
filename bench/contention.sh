#!/usr/bin/env bash
# Timings on a machine someone else is using (docs/measurement.md, "Busy machines, threads and rounds"):
# PP-OCR cls, rec and det profiled idle and beside chipfit-load (OpenMP parallel work on every core), a
# table of p50, ranking and Σ layers / end to end per target; then the regression gate under that load
# (oneDNN held to SSE4.1 must be `regressed`, two identical runs never), and a p99 limit on 20 runs.
# Not a test: its figures depend on the machine. Run it on an otherwise idle machine.
#
# Usage: bench/contention.sh [OUT_DIR]      (default /tmp/chipfit-contention)
#   BUILD=build/dev  MODELS=.cache/models  TARGETS=cpu:fp32,cpu:bf16,cpu:int8  STEPS="table gate p99"
#   TABLE_MODELS="ppocr_mobile_v2_cls ppocrv4_rec ppocrv4_det"
#   LOAD="--duty 0.5"   (chipfit-load's flags: by default both cores' threads work half of each 20 ms period,
#                        so the load takes about half the machine, as a second profile beside this one does)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/chipfit-contention}
build=${BUILD:-build/dev}
models=${MODELS:-.cache/models}
targets=${TARGETS:-cpu:fp32,cpu:bf16,cpu:int8}
steps=${STEPS:-table gate p99}
load_flags=${LOAD:---duty 0.5}
chipfit=$build/app/chipfit
load=$build/bench/chipfit-load
for bin in "$chipfit" "$load"; do
  [[ -x $bin ]] || { echo "contention: $bin is not built (cmake --build --preset dev)" >&2; exit 2; }
done
mkdir -p "$out"
db=$out/runs.db
rm -f "$db" "$db"-wal "$db"-shm
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "contention: $(nproc) CPUs ($cpu); results in $out"

declare -A shape=([ppocr_mobile_v2_cls]=x=1x3x48x192 [ppocrv4_rec]=x=1x3x48x320 [ppocrv4_det]=x=1x3x640x640)
load_pid=
start_load() {  # the load for at most $1 seconds, in the background
  # shellcheck disable=SC2086
  "$load" --seconds "$1" $load_flags >"$out/load.log" 2>&1 &
  load_pid=$!
  sleep 1
}
stop_load() {
  [[ -n $load_pid ]] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
  load_pid=
}
trap stop_load EXIT

profile() {  # NAME JSON [extra flags…]: one profile of a model into JSON
  local name=$1 json=$2
  shift 2
  "$chipfit" profile "$models/$name.onnx" --shape "${shape[$name]}" --targets "$targets" --db "$db" --json "$json" \
    --quiet "$@"
}

table() {  # NAME: idle, then loaded (chipfit's thread choice, then --threads 2 as before it); a row per target
  local name=$1
  profile "$name" "$out/$name.idle.json"
  start_load 900
  profile "$name" "$out/$name.loaded.json"
  profile "$name" "$out/$name.loaded-t2.json" --threads "$(nproc)"
  stop_load
  python3 - "$out/$name.idle.json" "$out/$name.loaded.json" "$name" "$out/$name.loaded-t2.json" <<'EOF'
import json, sys
idle, loaded, every_core = (json.load(open(p)) for p in sys.argv[1:3] + sys.argv[4:5])
def rows(run):
    out = {}
    for t in run["targets"]:
        if t["status"] != "ok": continue
        l = t["latency_ms"]; a = t.get("time_attribution") or {}
        rounds = t.get("rounds") or []
        clean = sum(1 for r in rounds if r.get("clean"))
        out[t["target"]] = dict(p50=l["p50"], p99=l["p99"], sum=a.get("attributed_ms", 0),
                                unexpl=a.get("explanation") or "",
                                rounds=f"{clean}/{len(rounds)}", unreliable=t.get("unreliable", False))
    return out
i, b, e = rows(idle), rows(loaded), rows(every_core)
rank = lambda r: [k for k, _ in sorted(r.items(), key=lambda kv: kv[1]["p50"])]
print(f"\n{sys.argv[3]}  threads idle: {idle['settings'].get('threads_reason')}; "
      f"loaded: {loaded['settings'].get('threads_reason')} "
      f"(others on {loaded['settings'].get('other_cpus_before') or 0:.2f} CPUs before the run)")
print(f"{'target':<10} {'idle p50':>9} {'loaded p50':>10} {'ratio':>6} {'Σ/e2e idle':>10} {'Σ/e2e loaded':>12} "
      f"{'rounds':>7} {'all cores p50/p99':>18}  note")
ok = True
for t in i:
    if t not in b: continue
    r = b[t]["p50"] / i[t]["p50"]
    si = i[t]["sum"] / i[t]["p50"]; sb = b[t]["sum"] / b[t]["p50"]
    ok &= r <= 2 and not b[t]["unreliable"] and (0.8 <= sb <= 1.2 or b[t]["unexpl"] != "")
    allc = f"{e[t]['p50']:.2f}/{e[t]['p99']:.1f}" if t in e else "-"
    print(f"{t:<10} {i[t]['p50']:>9.3f} {b[t]['p50']:>10.3f} {r:>5.2f}x {si:>10.2f} {sb:>12.2f} {b[t]['rounds']:>7} "
          f"{allc:>18}  {'unreliable ' if b[t]['unreliable'] else ''}{b[t]['unexpl'][:200]}")
same = rank(i) == rank(b)
print(f"ranking idle {rank(i)}, loaded {rank(b)}: {'same' if same else 'DIFFERENT'}; "
      f"{'all within 2x' if ok else 'NOT all within 2x'}")
EOF
}

gate() {  # oneDNN held to SSE4.1 under load must be regressed; two identical runs never
  local name=ppocr_mobile_v2_cls targets=cpu:fp32
  start_load 900
  profile "$name" "$out/gate.a.json"
  ONEDNN_MAX_CPU_ISA=SSE41 profile "$name" "$out/gate.sse41.json"
  profile "$name" "$out/gate.b.json"
  local a sse b
  a=$(python3 -c "import json;print(json.load(open('$out/gate.a.json'))['run_id'])")
  sse=$(python3 -c "import json;print(json.load(open('$out/gate.sse41.json'))['run_id'])")
  b=$(python3 -c "import json;print(json.load(open('$out/gate.b.json'))['run_id'])")
  echo
  echo "gate: SSE4.1 (run $sse) against run $a, under load:"
  ONEDNN_MAX_CPU_ISA=SSE41 "$chipfit" diff "$a" "$sse" --db "$db" --force --confirm 2
  echo "  exit $? (1 expected: regressed)"
  echo "gate: identical runs $a and $b, under load:"
  "$chipfit" diff "$a" "$b" --db "$db" --confirm 2
  echo "  exit $? (0 expected: unchanged, or inconclusive)"
  stop_load
}

p99() {  # a p99 limit with 20 runs asked: more runs are taken
  start_load 300
  echo
  echo "p99: --iterations 20 --max-latency-ms 20 (p99):"
  "$chipfit" profile "$models/ppocr_mobile_v2_cls.onnx" --shape x=1x3x48x192 --targets cpu:fp32 --db "$db" \
    --json "$out/p99.json" --iterations 20 --max-latency-ms 20 2>&1 >/dev/null |
    grep -i "iterations" || true
  python3 -c "import json;t=json.load(open('$out/p99.json'))['targets'][0];print('  runs behind the p99:', t['latency_ms']['iterations'])"
  stop_load
}

for step in $steps; do
  case $step in
    table) for m in ${TABLE_MODELS:-ppocr_mobile_v2_cls ppocrv4_rec ppocrv4_det}; do table "$m"; done ;;
    gate) gate ;;
    p99) p99 ;;
    *) echo "contention: unknown step '$step' (table, gate, p99)" >&2; exit 2 ;;
  esac
done
