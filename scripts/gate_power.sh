#!/usr/bin/env bash
# The regression gate's power on this machine (issue 15), with its defaults:
#   - A/A (build/weaseldb as A and B), AA_RUNS gate runs: false alarms
#     (exit 1), passes, and how many of the A/A intervals hold 1.0;
#   - B slowed by 5, 10, 15 and 25%, SLOW_RUNS gate runs each: the share
#     caught (exit 1), with the slowdown each really measured beside it;
#   - the longest gate run (the bar is 60 s).
# A slowdown is made with [benchmark] ok_resolve_spin_ns, a busy-wait on the
# clock per GET /ok: from A's cost per request c (measured first, or given),
# spin = c * d / (1 - d) for a B at 1 - d of A's req/s. Runs of every kind
# are interleaved, so all see the same machine.
#
# It needs a quiet machine: about an hour with the defaults (60 gate runs of
# 30-60 s). It prints the markdown table docs/gate.md shows, also written to
# $OUT/power_table.md; every gate run's table and JSON stay in $OUT.
#
# Usage: make build && scripts/gate_power.sh
#        AA_RUNS=2 SLOW_RUNS=1 SLOWDOWNS="10 25" \
#          GATE_ARGS="--rounds 6 --max-rounds 6 --duration 300ms --warmup-run 200ms" \
#          scripts/gate_power.sh                       (a 2-minute check of the script)
# Env: AA_RUNS (20), SLOW_RUNS (10), SLOWDOWNS ("5 10 15 25", percent),
#      COST_NS (A's ns per request: skips the calibration run),
#      SPIN_NS_<d> (e.g. SPIN_NS_10=400: this slowdown's knob, as given),
#      BUILD_DIR (build), OUT (build/gate_power), GATE_ARGS (extra flags for
#      every gate run; the defaults are what is being measured).
set -euo pipefail
cd "$(dirname "$0")/.."

AA_RUNS=${AA_RUNS:-20}
SLOW_RUNS=${SLOW_RUNS:-10}
SLOWDOWNS=${SLOWDOWNS:-5 10 15 25}
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-$BUILD_DIR/gate_power}
GATE_ARGS=${GATE_ARGS:-}
GATE="$BUILD_DIR/gate"
SERVER="$BUILD_DIR/weaseldb"
read -r -a extra_args <<<"$GATE_ARGS"

for bin in "$GATE" "$SERVER" "$BUILD_DIR/load_tester"; do
  [ -x "$bin" ] || { echo "gate_power: $bin missing (run make build)" >&2; exit 1; }
done
for n in "$AA_RUNS" "$SLOW_RUNS"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "gate_power: AA_RUNS and SLOW_RUNS must be counts, got '$n'" >&2; exit 1; }
done
for d in $SLOWDOWNS; do
  if ! [[ "$d" =~ ^[0-9]+$ ]] || [ "$d" -lt 1 ] || [ "$d" -gt 99 ]; then
    echo "gate_power: SLOWDOWNS takes whole percents between 1 and 99, got '$d'" >&2
    exit 1
  fi
done
mkdir -p "$OUT"
rm -f "$OUT"/run_*.txt "$OUT"/run_*.json

# slow_config NS: the gate's default config with ok_resolve_spin_ns = NS.
slow_config() {
  local cfg="$OUT/spin_$1.toml"
  "$GATE" --print-default-config | awk -v n="$1" '
    { print } /^ok_resolve_iterations = / { print "ok_resolve_spin_ns = " n }' >"$cfg"
  grep -q "^ok_resolve_spin_ns = $1\$" "$cfg" || { echo "gate_power: could not set ok_resolve_spin_ns" >&2; exit 1; }
  echo "$cfg"
}

# From a gate table: A's median req/s; the ratio, its interval; the rounds.
median_a() { awk '$1 == "A" && $2 ~ /^[0-9]+$/ { gsub(",", "", $3); print $3; exit }' "$1"; }
ratio_fields() { # prints "ratio low high" or nothing
  awk '/^ratio B\// { lo = $6; hi = $7; gsub(/[\[,]/, "", lo); gsub(/\]/, "", hi); print $3, lo, hi; exit }' "$1"
}
rounds_of() { awk '/^rounds [0-9]+ / { print $2; exit }' "$1"; }

# A's cost per request, for the knob.
if [ -z "${COST_NS:-}" ]; then
  echo "calibration: A/A, 6 rounds, for A's cost per request"
  "$GATE" --quiet --a "$SERVER" --b "$SERVER" --rounds 6 --max-rounds 6 "${extra_args[@]}" >"$OUT/calibration.txt" || true
  rps=$(median_a "$OUT/calibration.txt")
  if [ -z "$rps" ] || [ "$rps" = "-" ]; then
    echo "gate_power: calibration run failed:" >&2
    tail -1 "$OUT/calibration.txt" >&2
    exit 1
  fi
  COST_NS=$(awk -v r="$rps" 'BEGIN { printf "%.0f", 1e9 / r }')
  echo "calibration: A median $rps req/s = $COST_NS ns per request"
fi

declare -A SPIN CFG
for d in $SLOWDOWNS; do
  var="SPIN_NS_$d"
  SPIN[$d]=${!var:-$(awk -v c="$COST_NS" -v d="$d" 'BEGIN { printf "%.0f", c * d / (100 - d) }')}
  CFG[$d]=$(slow_config "${SPIN[$d]}")
  echo "B $d% slower: ok_resolve_spin_ns = ${SPIN[$d]}"
done

# Interleave: round i runs A/A (while i <= AA_RUNS), then each slowdown
# (while i <= SLOW_RUNS), starting from a different kind each round.
kinds=(aa)
for d in $SLOWDOWNS; do kinds+=("s$d"); done
printf 'kind\trun\texit\tseconds\tratio\tci_low\tci_high\trounds\n' >"$OUT/runs.tsv"
max_runs=$((AA_RUNS > SLOW_RUNS ? AA_RUNS : SLOW_RUNS))
for i in $(seq 1 "$max_runs"); do
  for j in $(seq 0 $((${#kinds[@]} - 1))); do
    kind=${kinds[$(((i + j) % ${#kinds[@]}))]}
    if [ "$kind" = aa ]; then [ "$i" -le "$AA_RUNS" ] || continue; else [ "$i" -le "$SLOW_RUNS" ] || continue; fi
    args=(--quiet --a "$SERVER" --b "$SERVER" --json "$OUT/run_${kind}_$i.json")
    [ "$kind" = aa ] || args+=(--b-config "${CFG[${kind#s}]}")
    t0=$(date +%s.%N)
    set +e
    "$GATE" "${args[@]}" "${extra_args[@]}" >"$OUT/run_${kind}_$i.txt"
    code=$?
    set -e
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    read -r r lo hi <<<"$(ratio_fields "$OUT/run_${kind}_$i.txt")" || true
    n=$(rounds_of "$OUT/run_${kind}_$i.txt")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$i" "$code" "$secs" "${r:--}" "${lo:--}" "${hi:--}" "${n:--}" >>"$OUT/runs.tsv"
    echo "$kind $i: exit $code, ratio ${r:--} [${lo:--}, ${hi:--}], ${n:--} rounds, ${secs}s: $(grep '^verdict:' "$OUT/run_${kind}_$i.txt" | cut -c1-140)"
  done
done

# The table, from runs.tsv.
table() {
  echo "| B | ok_resolve_spin_ns | gate runs | B/A measured: median (range) | regression (exit 1) | pass (exit 0) | could not judge (exit 2) | rounds: median, max | longest run |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for kind in "${kinds[@]}"; do
    if [ "$kind" = aa ]; then label="A/A (same binary)"; knob="–"; else label="${kind#s}% slower"; knob=${SPIN[${kind#s}]}; fi
    awk -F'\t' -v k="$kind" -v label="$label" -v knob="$knob" '
      function median(a, n,   i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      NR > 1 && $1 == k {
        runs++; e[$3]++; if ($4 > longest) longest = $4
        if ($5 != "-") { nr++; r[nr] = $5; if (nr == 1 || $5 < lo) lo = $5; if (nr == 1 || $5 > hi) hi = $5 }
        if ($8 != "-") { nn++; rounds[nn] = $8; if ($8 > maxr) maxr = $8 }
      }
      END {
        if (runs == 0) exit
        m = nr ? sprintf("%.3f (%.3f–%.3f)", median(r, nr), lo, hi) : "–"
        mr = nn ? sprintf("%g, %d", median(rounds, nn), maxr) : "–"
        printf "| %s | %s | %d | %s | %d | %d | %d | %s | %.1f s |\n", label, knob, runs, m, e[1], e[0], e[2], mr, longest
      }' "$OUT/runs.tsv"
  done
}
# An interval holds 1.0 when its low end is at most 1 and its high end at
# least 1 (an open end, -Inf or +Inf, holds everything on its side).
coverage=$(awk -F'\t' 'NR > 1 && $1 == "aa" { n++
    low_ok = ($6 == "-Inf") || ($6 != "-" && $6 + 0 <= 1); high_ok = ($7 == "+Inf") || ($7 != "-" && $7 + 0 >= 1)
    if (low_ok && high_ok) c++ }
  END { if (n) printf "%d of %d A/A intervals hold 1.0 (%.0f%%)", c, n, 100 * c / n }' "$OUT/runs.tsv")
over60=$(awk -F'\t' 'NR > 1 && $4 > 60 { n++ } END { print n + 0 }' "$OUT/runs.tsv")
smallest=$(awk -F'\t' 'NR > 1 && $1 ~ /^s/ { n[$1]++; if ($3 == 1) c[$1]++ }
  END { best = ""; for (k in n) if (c[k] * 20 >= n[k] * 19) { d = substr(k, 2) + 0; if (best == "" || d < best) best = d }
        print (best == "") ? "none of those measured" : best "%" }' "$OUT/runs.tsv")
{
  echo "Gate power ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg);"
  echo "A ${COST_NS} ns per request; gate flags: defaults${GATE_ARGS:+ + $GATE_ARGS}):"
  echo
  table
  echo
  echo "A/A coverage: ${coverage:-no A/A runs}. Gate runs over 60 s: $over60."
  echo "Smallest slowdown caught in at least 19 of 20 of its runs: $smallest."
} | tee "$OUT/power_table.md"
echo "results: $OUT (runs.tsv, run_*.txt, run_*.json)"
