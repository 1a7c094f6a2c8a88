#!/usr/bin/env bash
# The regression gate's power on this machine, per scenario of a scenarios
# file (issues 15 and 27), with the file's own settings:
#   - A/A: AA_RUNS gate runs of the whole file (build/weaseldb as A and B):
#     per scenario, its false alarms (a "regression" verdict), passes and
#     could-not-judge; and each run's wall time;
#   - each scenario that has a knob slowed by 5% and 10%, SLOW_RUNS gate
#     runs each: the share caught, beside the slowdown the gate's own runs
#     measured (the median and range of their B/A), never the one asked.
#
# The knobs (a B config with one [benchmark] key) slow one route:
#   ok            ok_resolve_spin_ns      busy-wait on the clock per GET /ok
#   ok_pipelined  ok_resolve_iterations   spin iterations per GET /ok: a
#                 16-deep /ok costs ~0.4 us, and SpinFor's own ~85 ns (two
#                 clock reads) would already slow it by ~20%
#   commit        commit_resolve_spin_ns  busy-wait per POST /v1/commit
#   status        status_resolve_spin_ns  busy-wait per GET /v1/status
# ok, commit and status are slowed in the same gate runs (--only
# ok,commit,status: their knobs touch different routes); ok_pipelined in
# runs of its own (its knob and ok's share GET /ok).
#
# The knob is fitted, not modelled: a spin of s ns measured about
# 85 ns + 1.2 s a request, not s. First a short A/A run gives each
# scenario's cost per request c (for the first guesses only); then two
# gate runs per group measure B/A at two knob values k1 and k2 (aimed at
# 4% and 20% slower; a group is fitted again, up to FIT_TRIES times,
# while its fit is implausible); with y = 1/(B/A) - 1, the extra cost as a share of
# A's, the line y = a + b k through the two points gives the knob for a
# slowdown d: k = (d/(1-d) - a) / b. FIT_ROUNDS rounds per point. A fit
# that does not rise, or whose intercept is far from 0, is the machine's
# noise: the group is measured again, and after FIT_TRIES the script stops
# and says so rather than measure on it.
#
# All kinds are interleaved (run i of every kind before run i+1 of any), so
# they see the same machine; DEADLINE (seconds) stops starting new runs,
# and the table states the counts that ran. Every run's table and JSON stay
# in $OUT; the markdown table is $OUT/power_table.md.
#
# Usage: make build && scripts/gate_power.sh
#        AA_RUNS=1 SLOW_RUNS=1 FIT_ROUNDS=3 \
#          GATE_ARGS="--rounds 3 --max-rounds 3 --duration 200ms --warmup 100ms --warmup-run 100ms" \
#          scripts/gate_power.sh                      (a 3-minute check of the script)
# Env: AA_RUNS (10), SLOW_RUNS (12), SLOWDOWNS ("5 10", percent),
#      SCENARIOS (testdata/gate_scenarios.toml), FIT_ROUNDS (10), FIT_TRIES (3),
#      KNOB_<scenario>_<d> (e.g. KNOB_commit_10=900: that knob as given, no fit),
#      DEADLINE (2400 s; 0: none), BUILD_DIR (build), OUT (build/gate_power),
#      GATE_ARGS (extra flags for every gate run; the file's settings are
#      what is measured).
set -euo pipefail
cd "$(dirname "$0")/.."

AA_RUNS=${AA_RUNS:-10}
SLOW_RUNS=${SLOW_RUNS:-12}
SLOWDOWNS=${SLOWDOWNS:-5 10}
SCENARIOS=${SCENARIOS:-testdata/gate_scenarios.toml}
FIT_ROUNDS=${FIT_ROUNDS:-10}
FIT_TRIES=${FIT_TRIES:-3}
DEADLINE=${DEADLINE:-2400}
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-$BUILD_DIR/gate_power}
GATE_ARGS=${GATE_ARGS:-}
GATE="$BUILD_DIR/gate"
SERVER="$BUILD_DIR/weaseldb"
read -r -a extra_args <<<"$GATE_ARGS"

# The knob of each scenario, and the groups slowed together.
declare -A KNOB=([ok]=ok_resolve_spin_ns [ok_pipelined]=ok_resolve_iterations [commit]=commit_resolve_spin_ns [status]=status_resolve_spin_ns)
# A first guess of ns of extra cost per knob unit (the fit replaces it).
declare -A PRIOR=([ok_resolve_spin_ns]=1.2 [ok_resolve_iterations]=0.4 [commit_resolve_spin_ns]=1.2 [status_resolve_spin_ns]=1.2)
GROUPS_=("ok,commit,status" "ok_pipelined")

for bin in "$GATE" "$SERVER" "$BUILD_DIR/load_tester"; do
  [ -x "$bin" ] || { echo "gate_power: $bin missing (run make build)" >&2; exit 1; }
done
# shellcheck source=lib/tools.sh
. "$(dirname "$0")/lib/tools.sh"
need_tool python3
for n in "$AA_RUNS" "$SLOW_RUNS" "$FIT_ROUNDS" "$FIT_TRIES" "$DEADLINE"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "gate_power: AA_RUNS, SLOW_RUNS, FIT_ROUNDS, FIT_TRIES and DEADLINE must be counts, got '$n'" >&2; exit 1; }
done
for d in $SLOWDOWNS; do
  if ! [[ "$d" =~ ^[0-9]+$ ]] || [ "$d" -lt 1 ] || [ "$d" -gt 50 ]; then
    echo "gate_power: SLOWDOWNS takes whole percents between 1 and 50, got '$d'" >&2
    exit 1
  fi
done
mkdir -p "$OUT"
rm -f "$OUT"/run_*.txt "$OUT"/run_*.json "$OUT"/fit_*.json "$OUT"/fit_*.txt "$OUT"/b_*.toml "$OUT"/runs.tsv
began=$(date +%s)

# b_config NAME KEY=VALUE...: the gate's default config with these
# [benchmark] keys set (replaced where it has them, added to its
# [benchmark] table, its last, where not).
b_config() {
  local cfg="$OUT/b_$1.toml"
  shift
  "$GATE" --print-default-config | python3 -c '
import re, sys
text = sys.stdin.read()
if not re.search(r"^\[benchmark\]", text, re.M):
    sys.exit("gate_power: no [benchmark] table in the default config")
for kv in sys.argv[1:]:
    key, value = kv.split("=", 1)
    line = "%s = %s" % (key, value)
    text, n = re.subn(r"^%s\s*=.*$" % re.escape(key), line, text, flags=re.M)
    if n == 0:
        text = text.rstrip("\n") + "\n" + line + "\n"
sys.stdout.write(text)' "$@" >"$cfg"
  echo "$cfg"
}

# field JSON SCENARIO FIELD: a scenario's ratio, median_a or verdict from a gate JSON.
field() {
  python3 - "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r.get("scenarios", []):
    if s["name"] == sys.argv[2]:
        v = {"ratio": s["ratio"]["ratio"], "median_a": s["a"]["median_rps"], "verdict": s["decision"]["verdict"]}[sys.argv[3]]
        print(v)
PY
}

gate_run() { # gate_run NAME ARGS...: one gate run, its table and JSON kept; prints the exit status
  local name=$1
  shift
  set +e
  # The time tier alone: this is its power (the cost tier's is
  # scripts/gate_cost_power.sh), and the knobs here spin on the clock,
  # which costs a different number of instructions every run.
  "$GATE" --quiet --scenarios "$SCENARIOS" --tiers time --a "$SERVER" --b "$SERVER" --json "$OUT/$name.json" "$@" "${extra_args[@]}" >"$OUT/$name.txt"
  local code=$?
  set -e
  echo "$code"
}

# 1. Costs per request, for the first guesses.
slow_scenarios=$(IFS=,; echo "${GROUPS_[*]}")
echo "calibration: A/A of $slow_scenarios, 3 rounds"
gate_run fit_calibration --only "$slow_scenarios" --rounds 3 --max-rounds 3 --noise-ok >/dev/null
declare -A COST
for s in ${slow_scenarios//,/ }; do
  a=$(field "$OUT/fit_calibration.json" "$s" median_a)
  if [ -z "$a" ] || [ "$(python3 -c "print(int(float('$a') > 0))")" != 1 ]; then
    echo "gate_power: calibration measured nothing for $s:" >&2
    tail -1 "$OUT/fit_calibration.txt" >&2
    exit 1
  fi
  COST[$s]=$(python3 -c "print(round(1e9 / float('$a')))")
  echo "  $s: A ${a%.*} req/s = ${COST[$s]} ns per request"
done

# 2. The fit: two points per group, each scenario's knob aimed at 4% and 20%.
declare -A K1 K2 Y1 Y2 FIT_A FIT_B
given() { # given GROUP: every knob of the group is set by hand for every slowdown
  local s d var
  for s in ${1//,/ }; do for d in $SLOWDOWNS; do var="KNOB_${s}_$d"; [ -n "${!var:-}" ] || return 1; done; done
}
smallest=$(python3 -c "print(min(d / (100 - d) for d in [$(echo "$SLOWDOWNS" | tr ' ' ',')]))")
# fit_group GROUP TRY: measure the two points of every scenario of the
# group and fit its line; fails when a fit is implausible: a plausible
# line rises, and meets every slowdown asked for at a positive knob from
# an intercept near 0 (a knob's fixed cost is a few % of a request at
# most). Anything else is the machine's noise, and a power table on knobs
# fitted to noise would measure nothing useful.
fit_group() {
  local g=$1 try=$2 p s k r y target cfg name ok=0
  for p in 1 2; do
    target=$([ "$p" = 1 ] && echo 0.04 || echo 0.20)
    kvs=()
    for s in ${g//,/ }; do
      k=$(python3 -c "print(max(1, round(${COST[$s]} * $target / ${PRIOR[${KNOB[$s]}]})))")
      if [ "$p" = 1 ]; then K1[$s]=$k; else K2[$s]=$k; fi
      kvs+=("${KNOB[$s]}=$k")
    done
    name="fit_${g//,/_}_${try}_$p"
    cfg=$(b_config "$name" "${kvs[@]}")
    gate_run "$name" --only "$g" --b-config "$cfg" --rounds "$FIT_ROUNDS" --max-rounds "$FIT_ROUNDS" --noise-ok >/dev/null
    for s in ${g//,/ }; do
      r=$(field "$OUT/$name.json" "$s" ratio)
      if [ -z "$r" ] || [ "$(python3 -c "print(int(float('$r') > 0))")" != 1 ]; then
        echo "gate_power: fit point $p of $s measured nothing: $(tail -1 "$OUT/$name.txt")" >&2
        return 1
      fi
      y=$(python3 -c "print(1 / float('$r') - 1)")
      if [ "$p" = 1 ]; then Y1[$s]=$y; else Y2[$s]=$y; fi
    done
  done
  for s in ${g//,/ }; do
    read -r "FIT_A[$s]" "FIT_B[$s]" < <(python3 -c "
k1, k2, y1, y2 = ${K1[$s]}, ${K2[$s]}, ${Y1[$s]}, ${Y2[$s]}
b = (y2 - y1) / (k2 - k1)
print(y1 - b * k1, b)")
    echo "fit $s (try $try, load average $(cut -d' ' -f1 /proc/loadavg)): ${KNOB[$s]} ${K1[$s]} -> B/A $(python3 -c "print('%.3f' % (1 / (1 + ${Y1[$s]})))"), ${K2[$s]} -> $(python3 -c "print('%.3f' % (1 / (1 + ${Y2[$s]})))"): extra cost = $(python3 -c "print('%.4f + %.3g k' % (${FIT_A[$s]}, ${FIT_B[$s]}))") of A's"
    if [ "$(python3 -c "print(int(${FIT_B[$s]} > 0 and -0.03 <= ${FIT_A[$s]} < $smallest))")" != 1 ]; then
      echo "  implausible (the machine's noise): no slope, or an intercept outside [-0.03, $smallest)"
      ok=1
    fi
  done
  return $ok
}
for g in "${GROUPS_[@]}"; do
  if given "$g"; then
    echo "fit $g: every knob given (KNOB_*), no fit"
    continue
  fi
  try=1
  until fit_group "$g" "$try"; do
    if [ "$try" -ge "$FIT_TRIES" ]; then
      echo "gate_power: no plausible fit for $g in $FIT_TRIES tries: the machine is too noisy to fit on;" >&2
      echo "  rerun when it is quiet, or set KNOB_<scenario>_<d> by hand" >&2
      exit 1
    fi
    try=$((try + 1))
  done
done

# 3. The knob for each slowdown, from the fit (or as given).
declare -A SET CFG
for d in $SLOWDOWNS; do
  for g in "${GROUPS_[@]}"; do
    kvs=()
    for s in ${g//,/ }; do
      var="KNOB_${s}_$d"
      SET[$s,$d]=${!var:-$(python3 -c "print(max(1, round(($d / (100 - $d) - ${FIT_A[$s]}) / ${FIT_B[$s]})))")}
      kvs+=("${KNOB[$s]}=${SET[$s,$d]}")
      echo "B $d% slower on $s: ${KNOB[$s]} = ${SET[$s,$d]}"
    done
    CFG[$g,$d]=$(b_config "${g//,/_}_$d" "${kvs[@]}")
  done
done

# 4. Interleave: run i of A/A (while i <= AA_RUNS) and of each group and
# slowdown (while i <= SLOW_RUNS), starting from a different kind each time.
kinds=(aa)
for d in $SLOWDOWNS; do for gi in "${!GROUPS_[@]}"; do kinds+=("g${gi}_$d"); done; done
printf 'kind\trun\texit\tseconds\tscenario\tverdict\tratio\tci_low\tci_high\trounds\tload1\n' >"$OUT/runs.tsv"
max_runs=$((AA_RUNS > SLOW_RUNS ? AA_RUNS : SLOW_RUNS))
stopped_early=""
for i in $(seq 1 "$max_runs"); do
  for j in $(seq 0 $((${#kinds[@]} - 1))); do
    kind=${kinds[$(((i + j) % ${#kinds[@]}))]}
    if [ "$kind" = aa ]; then [ "$i" -le "$AA_RUNS" ] || continue; else [ "$i" -le "$SLOW_RUNS" ] || continue; fi
    if [ "$DEADLINE" -gt 0 ] && [ $(($(date +%s) - began)) -ge "$DEADLINE" ]; then
      stopped_early="stopped at the ${DEADLINE}s deadline before run $i of $kind"
      break 2
    fi
    args=()
    if [ "$kind" != aa ]; then
      gi=${kind#g}
      gi=${gi%%_*}
      args=(--only "${GROUPS_[$gi]}" --b-config "${CFG[${GROUPS_[$gi]},${kind##*_}]}")
    fi
    t0=$(date +%s.%N)
    code=$(gate_run "run_${kind}_$i" "${args[@]}")
    secs=$(python3 -c "import time; print('%.1f' % (time.time() - $t0))")
    load1=$(cut -d' ' -f1 /proc/loadavg)
    python3 - "$OUT/run_${kind}_$i.json" "$kind" "$i" "$code" "$secs" "$load1" >>"$OUT/runs.tsv" <<'PY'
import json, sys
path, kind, i, code, secs, load1 = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    r = {"scenarios": []}
for s in r["scenarios"]:
    ci = s["ratio"]
    print("\t".join([kind, i, code, secs, s["name"], s["decision"]["verdict"].replace(" ", "_"),
                     "%.4f" % ci["ratio"], "%.4f" % ci["ci_low"], "%.4f" % ci["ci_high"], str(s["rounds"]), load1]))
if not r["scenarios"]:
    print("\t".join([kind, i, code, secs, "-", "none", "0", "0", "0", "0", load1]))
PY
    echo "$kind $i: exit $code, ${secs}s, load $load1: $(grep '^verdict:' "$OUT/run_${kind}_$i.txt" | cut -c1-150)"
  done
done

# 5. The table, from runs.tsv.
knobs_desc=""
for d in $SLOWDOWNS; do
  for s in ${slow_scenarios//,/ }; do knobs_desc+="$s,$d,${KNOB[$s]},${SET[$s,$d]};"; done
done
fits=""
for s in ${slow_scenarios//,/ }; do
  [ -n "${FIT_B[$s]:-}" ] && fits+="$s,${KNOB[$s]},${K1[$s]},${Y1[$s]},${K2[$s]},${Y2[$s]},${FIT_A[$s]},${FIT_B[$s]};"
done
{
  echo "Gate power per scenario ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "$SCENARIOS with its own settings${GATE_ARGS:+ + $GATE_ARGS}; $(( ($(date +%s) - began) / 60 )) minutes${stopped_early:+; $stopped_early}):"
  echo
  python3 - "$OUT/runs.tsv" "$SLOWDOWNS" "$knobs_desc" "$fits" "${GROUPS_[*]}" "$SCENARIOS" <<'PY'
import re, statistics, sys
from collections import defaultdict
tsv, slowdowns, knobs, fits, groups, scenarios_file = sys.argv[1:]
# The file's order (its name = "..." lines under [[scenario]]).
file_order = re.findall(r'^\s*name\s*=\s*"([^"]+)"', open(scenarios_file).read(), re.M)
slowdowns = slowdowns.split()
rows = [l.rstrip("\n").split("\t") for l in open(tsv)][1:]
knob = {}
for item in filter(None, knobs.split(";")):
    s, d, key, v = item.split(",")
    knob[s, d], knob[s] = v, key
group_of = {}
for gi, g in enumerate(groups.split()):
    for s in g.split(","):
        group_of[s] = gi
cells = defaultdict(list)  # (scenario, kind) -> rows
wall = defaultdict(list)   # kind -> (run, seconds)
order = []
loads = defaultdict(list)  # kind -> load average at the end of each run
for kind, run, code, secs, name, verdict, ratio, lo, hi, rounds, load1 in sorted(rows, key=lambda r: r[0] != "aa"):
    if name != "-" and name not in order:
        order.append(name)
    if (run, secs) not in wall[kind]:
        wall[kind].append((run, secs))
        loads[kind].append(float(load1))
    if name != "-":
        cells[name, kind].append((verdict, float(ratio), int(rounds)))

order.sort(key=lambda s: file_order.index(s) if s in file_order else len(file_order))

def measured(rs):
    ratios = [r for _, r, _ in rs if r > 0]
    if not ratios:
        return "–"
    return "%.3f (%.3f–%.3f)" % (statistics.median(ratios), min(ratios), max(ratios))

def count(rs, v):
    return sum(1 for x in rs if x[0] == v)

head = "| scenario | A/A: false alarms | A/A: pass, could not judge | A/A B/A: median (range) |"
sep = "|---|---|---|---|"
for d in slowdowns:
    head += f" {d}% slower: knob | {d}% slower: B/A measured | {d}% slower: caught |"
    sep += "---|---|---|"
print(head)
print(sep)
for s in order:
    aa = cells[s, "aa"]
    line = f"| `{s}` | {count(aa, 'regression')} of {len(aa)} | {count(aa, 'pass')}, {count(aa, 'could_not_judge')} | {measured(aa)} |"
    for d in slowdowns:
        if s not in group_of:
            line += " no knob | – | not measured |"
            continue
        rs = cells[s, f"g{group_of[s]}_{d}"]
        line += f" `{knob[s]}` = {knob[s, d]} | {measured(rs)} | **{count(rs, 'regression')} of {len(rs)}** |"
    print(line)
print()
print("| gate runs | count | wall time: median, max | load average (1 min) at their ends: median, max |")
print("|---|---|---|---|")
names = {"aa": "A/A, every scenario (the CI run)"}
for gi, g in enumerate(groups.split()):
    for d in slowdowns:
        names[f"g{gi}_{d}"] = f"B {d}% slower, --only {g}"
for kind, runs in wall.items():
    secs = [float(x) for _, x in runs]
    print(f"| {names.get(kind, kind)} | {len(secs)} | {statistics.median(secs):.1f} s, {max(secs):.1f} s | "
          f"{statistics.median(loads[kind]):.1f}, {max(loads[kind]):.1f} |")
print()
print("Knob fits (two gate runs each; y = 1/(B/A) - 1, the extra cost as a share of A's):" if fits else "Knobs given by hand (KNOB_*), no fit.")
for item in filter(None, fits.split(";")):
    s, key, k1, y1, k2, y2, a, b = item.split(",")
    print(f"- `{s}`: {key} {k1} -> B/A {1 / (1 + float(y1)):.3f}, {k2} -> {1 / (1 + float(y2)):.3f}; y = {float(a):.4f} + {float(b):.3g} k")
PY
} | tee "$OUT/power_table.md"
echo "results: $OUT (runs.tsv, run_*.txt, run_*.json, fit_*.json)"
