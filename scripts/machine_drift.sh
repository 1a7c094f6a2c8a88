#!/usr/bin/env bash
# How steady is this machine over minutes? Runs `report setups` with one
# round, RUNS times back to back (each: calibrate, then the seed's setup and
# the fitted one on fresh servers, DURATION s of load after 1 s of warm-up),
# and prints every run's req/s and the fitted server's CPU per request, then
# each setup's median, coefficient of variation and min–max over the runs.
#
# A report's "another run's median" interval covers what varied within its
# own ~90 s; when this script's spread over several minutes is wider, a
# second report can land outside the first's interval however it is
# computed (docs/report.md, "How steady this machine is").
#
# Usage: scripts/machine_drift.sh     (env: RUNS=10 DURATION=6 BUILD_DIR=build
#        RUN_DIR=reports/runs/drift-<UTC time> CONFIG=testdata/test_benchmark_config.toml)
# Needs jq and awk; builds nothing (run `make build` first).
set -euo pipefail

if (($# > 0)); then
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
    [[ $1 == -h || $1 == --help ]] && exit 0
    exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-10}
DURATION=${DURATION:-6}
BUILD_DIR=${BUILD_DIR:-build}
RUN_DIR=${RUN_DIR:-reports/runs/drift-$(date -u +%Y%m%dT%H%M%SZ)}
CONFIG=${CONFIG:-testdata/test_benchmark_config.toml}

die() { printf 'machine_drift: %s\n' "$*" >&2; exit 1; }
if ! [[ $RUNS =~ ^[0-9]+$ ]] || ((RUNS < 2)); then die "RUNS must be an integer of at least 2, got '$RUNS'"; fi
if ! [[ $DURATION =~ ^[0-9]+$ ]] || ((DURATION < 2)); then die "DURATION must be an integer of at least 2, got '$DURATION'"; fi
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
need_tool jq
for b in report weaseldb load_tester bench_cpu_work; do
    [[ -x $BUILD_DIR/$b ]] || die "no $BUILD_DIR/$b: run 'make build' first"
done
mkdir -p "$RUN_DIR"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

{ # the header and one line per run, into drift.txt too
    printf '%-4s %-8s %12s %12s %22s\n' run time seed_req/s fitted_req/s fitted_server_ns/req
    for i in $(seq 1 "$RUNS"); do
        dir=$RUN_DIR/run$i
        if ! "$BUILD_DIR/report" setups --run "$dir" --bin "$BUILD_DIR" --config "$CONFIG" \
            --rounds 1 --duration "$DURATION" --idle 1 >"$dir.log" 2>&1; then
            die "run $i failed: see $dir.log"
        fi
        seed=$(jq .requests_per_sec "$dir/rounds/seed-r1.load.json")
        fitted=$(jq .requests_per_sec "$dir/rounds/fitted-r1.load.json")
        cores=$(jq .loaded.core_fraction "$dir/rounds/fitted-r1.sample.json")
        awk -v i="$i" -v t="$(date +%T)" -v s="$seed" -v f="$fitted" -v c="$cores" \
            'BEGIN { printf "%-4d %-8s %12.0f %12.0f %22.0f\n", i, t, s, f, c * 1e9 / f }'
    done
} | tee "$RUN_DIR/drift.txt"

# Median, coefficient of variation and min–max of one column of drift.txt.
summarise() {
    local name=$1 col=$2
    awk -v name="$name" -v col="$col" 'NR > 1 { v[++n] = $col; s += $col; ss += $col * $col }
        END {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            mean = s / n; sd = sqrt((ss - n * mean * mean) / (n - 1))
            printf "%-22s median %10.0f   cv %4.1f%%   min %10.0f   max %10.0f   (%d runs)\n", name, med, sd / mean * 100, v[1], v[n], n
        }' "$RUN_DIR/drift.txt"
}
summarise "seed req/s" 3
summarise "fitted req/s" 4
summarise "fitted server ns/req" 5
echo "artifacts: $RUN_DIR"
