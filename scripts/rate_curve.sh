#!/usr/bin/env bash
# The throughput-latency curve of the fitted setup's shape on shared cores,
# and the highest rate meeting a latency objective, for the threading report
# (docs/report.md, "Latency under load"; reports/ratecurve.go renders them).
#
# Starts weaseldb in the fitted setup's shape (one I/O loop, one release
# thread, WaitIfStageEmpty; the seed config's work per request; a unix
# socket in RUN_DIR), measures its closed-loop capacity, then writes to
# RUN_DIR:
#   rate_curve_server.toml  the config the server read
#   rate_curve_capacity.json  load_tester closed loop (RC_CAPACITY_SECONDS)
#   rate_curve.json  load_tester --rate-steps at RC_FRACTIONS of that capacity,
#                    each step judged against RC_SLO (a row per step)
#   knee.json        load_tester --find-rate --slo RC_SLO, climbing from the
#                    highest step of the curve that met it
#   *.hlog           one HDR interval log per step
# The load tester runs the fitted setup's flags: RC_CONCURRENCY connections over
# one network thread, RC_REQUESTS_PER_CONN requests per connection, 2 connect
# threads. With the defaults it takes about 50-65 s (7 curve steps and 8 to 16
# search steps of 2.5 s, the capacity run, the server's start).
#
# Knobs (environment; defaults in brackets):
#   RUN_DIR (required)  BUILD_DIR [build]  CONFIG [testdata/test_benchmark_config.toml]
#   RC_SLO [p99=1ms]  RC_STEP_SECONDS [2]  RC_WARMUP [0.5]  RC_CAPACITY_SECONDS [2]
#   RC_FRACTIONS [0.02,0.05,0.1,0.25,0.5,0.75,1.0]  of the closed-loop capacity
#   RC_CONCURRENCY [100]  RC_REQUESTS_PER_CONN [500]  RC_CONNECT_THREADS [2]
#   RC_SEARCH_SECONDS [60]  RC_SEARCH_STEPS [16]  RC_PRECISION [0.1]  RC_READY_TIMEOUT [15]
# Needs python3 (the config and the rates). Exits non-zero when a step could
# not run; a search that found no rate meeting RC_SLO is not a failure of this
# script (knee.json says so).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
: "${RUN_DIR:?RUN_DIR must name the run directory}"
BUILD_DIR=${BUILD_DIR:-build}
CONFIG=${CONFIG:-testdata/test_benchmark_config.toml}
RC_SLO=${RC_SLO:-p99=1ms}
RC_STEP_SECONDS=${RC_STEP_SECONDS:-2}
RC_WARMUP=${RC_WARMUP:-0.5}
RC_CAPACITY_SECONDS=${RC_CAPACITY_SECONDS:-2}
RC_FRACTIONS=${RC_FRACTIONS:-0.02,0.05,0.1,0.25,0.5,0.75,1.0}
RC_CONCURRENCY=${RC_CONCURRENCY:-100}
RC_REQUESTS_PER_CONN=${RC_REQUESTS_PER_CONN:-500}
RC_CONNECT_THREADS=${RC_CONNECT_THREADS:-2}
RC_SEARCH_SECONDS=${RC_SEARCH_SECONDS:-60}
RC_SEARCH_STEPS=${RC_SEARCH_STEPS:-16}
RC_PRECISION=${RC_PRECISION:-0.1}
RC_READY_TIMEOUT=${RC_READY_TIMEOUT:-15}

die() { printf 'rate_curve: %s\n' "$*" >&2; exit 1; }
log() { printf '=== rate_curve: %s\n' "$*" >&2; }
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/weaseldb.sh
. "$ROOT/scripts/lib/weaseldb.sh"
need_tool python3
BIN=$(cd "$BUILD_DIR" && pwd) || die "no $BUILD_DIR"
for b in weaseldb load_tester; do
    [[ -x $BIN/$b ]] || die "$BIN/$b missing (make build)"
done
mkdir -p "$RUN_DIR" || die "cannot create $RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
SOCK=$RUN_DIR/rate_curve.sock
SERVER_CONFIG=$RUN_DIR/rate_curve_server.toml

# The seed's config in the fitted setup's shape: one I/O loop, one release
# thread, WaitIfStageEmpty (never spins on shared cores), only a unix socket.
weaseldb_config "$CONFIG" "{ type = \"unix\", path = \"$SOCK\" }" io_threads=1 \
    pipeline_wait_strategy='"WaitIfStageEmpty"' pipeline_release_threads=1 >"$SERVER_CONFIG" ||
    die "cannot write $SERVER_CONFIG"

SERVER_PID=""
stop_server() {
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null
        wait "$SERVER_PID" 2>/dev/null
        SERVER_PID=""
    fi
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM
rm -f "$SOCK"
"$BIN/weaseldb" --config "$SERVER_CONFIG" >"$RUN_DIR/rate_curve_server.log" 2>&1 &
SERVER_PID=$!
for ((i = 0; i < RC_READY_TIMEOUT * 10; i++)); do
    grep -q 'weaseldb: ready' "$RUN_DIR/rate_curve_server.log" && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited: $(tail -3 "$RUN_DIR/rate_curve_server.log")"
    sleep 0.1
done
grep -q 'weaseldb: ready' "$RUN_DIR/rate_curve_server.log" || die "the server was not ready within ${RC_READY_TIMEOUT}s"

LT=("$BIN/load_tester" --unix-socket "$SOCK" --path /ok --concurrency "$RC_CONCURRENCY"
    --requests-per-conn "$RC_REQUESTS_PER_CONN" --connect-threads "$RC_CONNECT_THREADS" --network-threads 1 --quiet)

log "closed-loop capacity (${RC_CAPACITY_SECONDS}s)"
"${LT[@]}" --warmup "$RC_WARMUP" --duration "$RC_CAPACITY_SECONDS" --json "$RUN_DIR/rate_curve_capacity.json" >"$RUN_DIR/rate_curve_capacity.log" ||
    die "the capacity run failed: $(tail -2 "$RUN_DIR/rate_curve_capacity.log")"
RATES=$(python3 - "$RUN_DIR/rate_curve_capacity.json" "$RC_FRACTIONS" <<'PY'
import json, math, sys
cap = json.load(open(sys.argv[1]))["requests_per_sec"]
def three(x):  # three significant digits, as load_tester rounds its own
    mag = 10 ** (math.floor(math.log10(x)) - 2)
    return int(round(x / mag) * mag)
print(",".join(str(three(cap * float(f))) for f in sys.argv[2].split(",")))
PY
) || die "cannot read the capacity"
log "rate steps $RATES"
"${LT[@]}" --rate-steps "$RATES" --slo "$RC_SLO" --warmup "$RC_WARMUP" --duration "$RC_STEP_SECONDS" \
    --json "$RUN_DIR/rate_curve.json" --hdr-log "$RUN_DIR/rate_curve.hlog" | tee "$RUN_DIR/rate_curve.log" >&2 ||
    die "the rate steps failed"

# The search climbs from the highest step that met the objective (or
# descends from the lowest step when none did), up to the capacity's 1.5x.
read -r START MAX < <(python3 - "$RUN_DIR/rate_curve.json" "$RUN_DIR/rate_curve_capacity.json" <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
cap = json.load(open(sys.argv[2]))["requests_per_sec"]
passed = [s["rate_asked"] for s in steps if s.get("pass")]
start = max(passed) if passed else min(s["rate_asked"] for s in steps)
print(int(start), int(max(cap * 1.5, start)))
PY
) || die "cannot read the curve"
log "find-rate from $START (at most $MAX)"
"${LT[@]}" --find-rate --slo "$RC_SLO" --find-rate-start "$START" --find-rate-max "$MAX" --find-rate-factor 1.5 \
    --find-rate-min "$((START / 8 + 1))" --find-rate-precision "$RC_PRECISION" --find-rate-steps "$RC_SEARCH_STEPS" \
    --find-rate-time "$RC_SEARCH_SECONDS" --warmup "$RC_WARMUP" --duration "$RC_STEP_SECONDS" \
    --json "$RUN_DIR/knee.json" --hdr-log "$RUN_DIR/knee.hlog" | tee "$RUN_DIR/knee.log" >&2
rc=${PIPESTATUS[0]}
((rc == 0 || rc == 1)) || die "the search could not run (exit $rc)"
exit 0
