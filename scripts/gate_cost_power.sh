#!/usr/bin/env bash
# The cost tier's power on this machine, per scenario of a scenarios file
# (issue 33), with the gate's cost defaults (3 runs a side, up to 5, a 0.5%
# tolerance):
#   - A/A: AA_RUNS cost runs of the whole file (build/weaseldb as A and B):
#     per scenario its false alarms (a "regression"), passes and
#     could-not-judge, the B/A range, and each run's wall time;
#   - B made dearer by +1% and +0.5% instructions per request on one route
#     at a time, SLOW_RUNS runs each: the share caught, beside the extra
#     cost the gate's own runs measured (never the one asked).
#
# The knobs are the *_resolve_iterations of the [benchmark] table: the same
# two-instruction spin loop per request of one route (ok, commit, status),
# so their cost is a fixed instruction count. The extra cost of k
# iterations is fitted from two measured points, not modelled (below).
# ok, commit and status are made dearer in the same runs (their knobs touch
# different routes; ok_pipelined, whose knob is ok's, is then dearer too
# and is not counted there); ok_pipelined in runs of its own.
#
# All kinds are interleaved (run i of every kind before run i+1 of any);
# DEADLINE (seconds) stops starting new runs, and the table states the
# counts that ran. Every run's table and JSON stay in $OUT; the markdown
# table is $OUT/cost_power_table.md.
#
# Usage: make build && scripts/gate_cost_power.sh
#        AA_RUNS=1 SLOW_RUNS=1 SLOWDOWNS=1 scripts/gate_cost_power.sh   (a 6-minute check of the script)
#        AA_RUNS=0 SLOW_RUNS=10 SLOWDOWNS=0.5 OUT=build/gate_cost_power_05 scripts/gate_cost_power.sh
#        KNOBS="1 22 94 48 1" FIRST_RUN=18 ... scripts/gate_cost_power.sh   (more runs with the knobs a fit gave)
# Env: AA_RUNS (20), SLOW_RUNS (20), SLOWDOWNS ("1 0.5", percent), FIT_K (1000),
#      KNOBS (skip the fit: "slowdown ok commit status ok_pipelined" groups, as the fit prints them),
#      FIRST_RUN (1: the number of the first run, to add runs to an OUT that has some),
#      SCENARIOS (testdata/gate_scenarios.toml), DEADLINE (5400 s; 0: none),
#      BUILD_DIR (build), OUT (build/gate_cost_power), GATE_ARGS (extra flags for every run).
set -euo pipefail
cd "$(dirname "$0")/.."

AA_RUNS=${AA_RUNS:-20}
SLOW_RUNS=${SLOW_RUNS:-20}
SLOWDOWNS=${SLOWDOWNS:-1 0.5}
FIT_K=${FIT_K:-1000}
SCENARIOS=${SCENARIOS:-testdata/gate_scenarios.toml}
DEADLINE=${DEADLINE:-5400}
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-$BUILD_DIR/gate_cost_power}
GATE_ARGS=${GATE_ARGS:-}
GATE="$BUILD_DIR/gate"
SERVER="$BUILD_DIR/weaseldb"
read -r -a extra_args <<<"$GATE_ARGS"

for bin in "$GATE" "$SERVER" "$BUILD_DIR/load_tester"; do
  [ -x "$bin" ] || { echo "gate_cost_power: $bin missing (run make build)" >&2; exit 1; }
done
# shellcheck source=lib/tools.sh
. "$(dirname "$0")/lib/tools.sh"
need_tools python3 valgrind callgrind_control
for n in "$AA_RUNS" "$SLOW_RUNS" "$FIT_K" "$DEADLINE"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "gate_cost_power: AA_RUNS, SLOW_RUNS, FIT_K and DEADLINE must be counts, got '$n'" >&2; exit 1; }
done
mkdir -p "$OUT"
started=$(date +%s)

# gate_cost NAME B_CONFIG ONLY: one cost run; its JSON is $OUT/NAME.json.
gate_cost() {
  local name=$1 bcfg=$2 only=$3 t0 t1
  local args=(--scenarios "$SCENARIOS" --a "$SERVER" --b "$SERVER" --tiers cost --quiet --json "$OUT/$name.json")
  [ -n "$bcfg" ] && args+=(--b-config "$bcfg")
  [ -n "$only" ] && args+=(--only "$only")
  t0=$(date +%s.%N)
  "$GATE" "${args[@]}" "${extra_args[@]}" >"$OUT/$name.txt" 2>&1 || true
  t1=$(date +%s.%N)
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['wall_s']=float(sys.argv[2]); json.dump(d, open(sys.argv[1],'w'))" \
    "$OUT/$name.json" "$(python3 -c "print($t1-$t0)")" 2>/dev/null || true
  echo "gate_cost_power: $name: $(tail -1 "$OUT/$name.txt")"
}

# config NAME OK COMMIT STATUS: the gate's default config with the knobs.
config() {
  local path="$OUT/$1.toml"
  { "$GATE" --print-default-config
    echo "commit_resolve_iterations = $3"
    echo "status_resolve_iterations = $4"; } | sed "s/^ok_resolve_iterations = 0$/ok_resolve_iterations = $2/" >"$path"
  echo "$path"
}

# The fit: every knob at FIT_K and at FIT_K/10. A knob above 0 costs a
# fixed call besides its iterations (about 30 instructions here), so the
# extra cost is a line e(k) = a + b k, fitted through the two points; the
# knob for an extra share d of a scenario's cost c is (d c - a) / b, at
# least 1 (where even 1 iteration costs more, the table's measured B/A
# says so).
k2=$((FIT_K / 10))
if [ -n "${KNOBS:-}" ]; then
  read -r -a knobs <<<"$KNOBS"
else
gate_cost fit "$(config fit "$FIT_K" "$FIT_K" "$FIT_K")" ""
gate_cost fit2 "$(config fit2 "$k2" "$k2" "$k2")" ""
read -r -a knobs < <(python3 - "$OUT/fit.json" "$OUT/fit2.json" "$FIT_K" "$k2" "$SLOWDOWNS" <<'EOF2'
import json, sys
k1, k2 = float(sys.argv[3]), float(sys.argv[4])
def extra(path):
    d = json.load(open(path))
    out = {}
    for s in d["scenarios"]:
        c = s.get("cost") or {}
        a, b = c.get("a", {}).get("instructions_per_request", 0), c.get("b", {}).get("instructions_per_request", 0)
        if a <= 0 or b <= a:
            sys.exit(f"gate_cost_power: the fit in {path} of {s['name']} measured A {a}, B {b}: no slope to fit ({c.get('reason')})")
        out[s["name"]] = (a, b - a)
    return out
e1, e2 = extra(sys.argv[1]), extra(sys.argv[2])
out = []
for d in sys.argv[5].split():
    share = float(d) / 100
    def knob(n):
        base = e1[n][0]
        slope = (e1[n][1] - e2[n][1]) / (k1 - k2)
        intercept = e1[n][1] - slope * k1
        return max(1, round((share * base - intercept) / slope))
    out += [d, str(knob("ok")), str(knob("commit")), str(knob("status")), str(knob("ok_pipelined"))]
print(" ".join(out))
EOF2
)
fi
echo "gate_cost_power: knobs (slowdown ok commit status ok_pipelined): ${knobs[*]}"

kinds=()
for ((i = 0; i < ${#knobs[@]}; i += 5)); do
  d=${knobs[i]}
  config "dear$d" "${knobs[i + 1]}" "${knobs[i + 2]}" "${knobs[i + 3]}" >/dev/null
  config "dearpipe$d" "${knobs[i + 4]}" 0 0 >/dev/null
  kinds+=("$d")
done

FIRST_RUN=${FIRST_RUN:-1}
runs=$((AA_RUNS > SLOW_RUNS ? AA_RUNS : SLOW_RUNS))
for ((run = FIRST_RUN; run <= runs; run++)); do
  if [ "$DEADLINE" -gt 0 ] && [ $(($(date +%s) - started)) -gt "$DEADLINE" ]; then
    echo "gate_cost_power: DEADLINE ${DEADLINE}s reached before run $run"
    break
  fi
  [ "$run" -le "$AA_RUNS" ] && gate_cost "aa-$run" "" ""
  if [ "$run" -le "$SLOW_RUNS" ]; then
    for d in "${kinds[@]}"; do
      gate_cost "dear$d-$run" "$OUT/dear$d.toml" "ok,commit,status"
      gate_cost "dearpipe$d-$run" "$OUT/dearpipe$d.toml" "ok_pipelined"
    done
  fi
done

python3 - "$OUT" "${kinds[@]}" <<'EOF' | tee "$OUT/cost_power_table.md"
import glob, json, os, statistics, sys
out, kinds = sys.argv[1], sys.argv[2:]
def load(pattern):
    docs = []
    for p in sorted(glob.glob(os.path.join(out, pattern))):
        try:
            docs.append(json.load(open(p)))
        except (OSError, ValueError):
            pass
    return docs
def cells(docs, name):
    got = [s["cost"] for d in docs for s in d.get("scenarios", []) if s["name"] == name and s.get("cost")]
    ratios = [c["ratio"] for c in got if c.get("ratio")]
    count = lambda v: sum(1 for c in got if c["verdict"] == v)
    rng = f"{min(ratios):.4f}-{max(ratios):.4f}" if ratios else "-"
    med = f"{statistics.median(ratios):.4f}" if ratios else "-"
    return len(got), count("regression"), count("pass"), count("could_not_judge"), med, rng
names = ["ok", "ok_pipelined", "commit", "status"]
aa = load("aa-*.json")
print("| scenario | A/A runs | false alarms | passes | could not judge | A/A B/A median | A/A B/A range |" +
      "".join(f" +{d}%: caught | +{d}%: measured B/A (median, range) |" for d in kinds))
print("|---|---:|---:|---:|---:|---:|---|" + "---:|---|" * len(kinds))
for n in names:
    runs, reg, ok, cnj, med, rng = cells(aa, n)
    row = f"| `{n}` | {runs} | {reg} | {ok} | {cnj} | {med} | {rng} |"
    for d in kinds:
        docs = load(f"dearpipe{d}-*.json" if n == "ok_pipelined" else f"dear{d}-*.json")
        druns, dreg, _, _, dmed, drng = cells(docs, n)
        row += f" {dreg} of {druns} | {dmed}, {drng} |"
    print(row)
walls = [d.get("wall_s", d.get("elapsed_s", 0)) for d in aa]
if walls:
    print(f"\nA whole cost run of the file (4 scenarios, A/A): median {statistics.median(walls):.1f} s, max {max(walls):.1f} s over {len(walls)} runs.")
EOF
