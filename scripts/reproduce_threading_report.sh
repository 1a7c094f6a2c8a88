#!/usr/bin/env bash
# Reproduce the threading performance report on this machine: build, calibrate
# the spin work, run weaseldb under the seed's load, measure the server's CPU
# under load and when idle, run the pipeline micro-benchmarks, and write
# reports/threading_performance_report.md with its plots.
#
# Run from anywhere inside the repository:
#   scripts/reproduce_threading_report.sh              # 120 s of load
#   DURATION=20 scripts/reproduce_threading_report.sh  # what `make report` runs
#
# Every knob is an environment variable (defaults in brackets):
#   DURATION [120]            seconds of load
#   CONCURRENCY [2000]        connections
#   REQUESTS_PER_CONN [500]   requests per connection before it reconnects
#   CONNECT_THREADS [2]       load-tester connect threads
#   NETWORK_THREADS [10]      load-tester network threads
#   STATS_INTERVAL [1]        seconds between load-tester stats lines
#   CPU_WORK_ITERATIONS [4000] iterations timed by bench_cpu_work
#   CPU_WORK_TARGET [740ns]   cost to calibrate iterations for
#   IDLE_SECONDS [5]          idle CPU window after the load (at least 5)
#   READY_TIMEOUT [15]        seconds to wait for the server to be ready
#   QUICK [auto]              1: bench_pipeline --quick (auto: when DURATION < 60)
#   CONFIG [testdata/test_benchmark_config.toml]
#   TCP_ADDRESS [127.0.0.1]   the config's TCP interface is rebound here (the load uses the unix socket)
#   TCP_PORT [auto: a free loopback port; 0 keeps the config's]
#   NOFILE [65536]            descriptor limit to ask for (best effort)
#   BUILD_DIR [build]  RUN_DIR [reports/runs/<UTC time>, git-ignored]
#   REPORT_OUT [reports/threading_performance_report.md]
#   SKIP_BUILD [0]            1: use the binaries already in BUILD_DIR
#   WAIT_STRATEGIES [1]       0: skip the wait-strategy comparison
#                             (scripts/compare_wait_strategies.sh; its WS_* knobs apply)
#
# Exits non-zero if any step failed; the report is still written when the load
# test produced its result, and it names the failed steps.
set -uo pipefail

if (($# > 0)); then
    if [[ $1 == -h || $1 == --help ]]; then
        sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
        exit 0
    fi
    echo "reproduce_threading_report: takes no arguments (knobs are environment variables; see --help)" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

DURATION=${DURATION:-120}
CONCURRENCY=${CONCURRENCY:-2000}
REQUESTS_PER_CONN=${REQUESTS_PER_CONN:-500}
CONNECT_THREADS=${CONNECT_THREADS:-2}
NETWORK_THREADS=${NETWORK_THREADS:-10}
STATS_INTERVAL=${STATS_INTERVAL:-1}
CPU_WORK_ITERATIONS=${CPU_WORK_ITERATIONS:-4000}
CPU_WORK_TARGET=${CPU_WORK_TARGET:-740ns}
IDLE_SECONDS=${IDLE_SECONDS:-5}
READY_TIMEOUT=${READY_TIMEOUT:-15}
QUICK=${QUICK:-auto}
CONFIG=${CONFIG:-testdata/test_benchmark_config.toml}
TCP_ADDRESS=${TCP_ADDRESS:-127.0.0.1}
TCP_PORT=${TCP_PORT:-auto}
NOFILE=${NOFILE:-65536}
BUILD_DIR=${BUILD_DIR:-build}
RUN_DIR=${RUN_DIR:-reports/runs/$(date -u +%Y%m%dT%H%M%SZ)}
REPORT_OUT=${REPORT_OUT:-reports/threading_performance_report.md}
SKIP_BUILD=${SKIP_BUILD:-0}
WAIT_STRATEGIES=${WAIT_STRATEGIES:-1}

log() { printf '=== %s\n' "$*" >&2; }
die() { printf 'reproduce_threading_report: %s\n' "$*" >&2; exit 1; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for knob in DURATION CONCURRENCY REQUESTS_PER_CONN CONNECT_THREADS NETWORK_THREADS \
    STATS_INTERVAL CPU_WORK_ITERATIONS IDLE_SECONDS READY_TIMEOUT; do
    is_uint "${!knob}" || die "$knob must be a non-negative integer, got '${!knob}'"
done
((DURATION >= 1)) || die "DURATION must be at least 1 second"
[[ $TCP_PORT == auto ]] || is_uint "$TCP_PORT" || die "TCP_PORT must be auto or a port number, got '$TCP_PORT'"
((IDLE_SECONDS >= 5)) || die "IDLE_SECONDS must be at least 5 (idle CPU is measured for at least 5 s)"
if [[ $QUICK == auto ]]; then
    if ((DURATION < 60)); then QUICK=1; else QUICK=0; fi
fi

# --- prerequisites -----------------------------------------------------------
missing=()
for tool in timeout date tee; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool (coreutils)")
done
if [[ $SKIP_BUILD != 1 ]]; then
    command -v make >/dev/null 2>&1 || missing+=("make (to build the binaries; or SKIP_BUILD=1 with binaries in $BUILD_DIR)")
    command -v go >/dev/null 2>&1 || missing+=("go 1.26 (https://go.dev/dl; to build the binaries)")
fi
[[ -r /proc/self/stat ]] || missing+=("/proc (Linux procfs, for the server's CPU time)")
[[ -f $CONFIG ]] || missing+=("config $CONFIG (run from a checkout of the repository)")
if ((${#missing[@]} > 0)); then
    printf 'reproduce_threading_report: missing prerequisites:\n' >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
fi

mkdir -p "$RUN_DIR" || die "cannot create run directory $RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
BIN=$(mkdir -p "$BUILD_DIR" && cd "$BUILD_DIR" && pwd)
STEPS="$RUN_DIR/steps.tsv"
: >"$STEPS"
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
FAILED=()
SERVER_PID=""
SAMPLER_PID=""
SERVER_EXIT=-1

# --- cleanup on every exit path ----------------------------------------------
stop_pid() { # stop_pid PID SECONDS: SIGTERM, then SIGKILL after SECONDS
    local pid=$1 secs=$2 i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < secs * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [[ -n $SAMPLER_PID ]] && stop_pid "$SAMPLER_PID" 2
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        log "stopping the server (pid $SERVER_PID)"
        stop_pid "$SERVER_PID" 10
        wait "$SERVER_PID" 2>/dev/null
    fi
    rm -f "$RUN_DIR/weaseldb.sock"
    if ((rc != 0)) || ((${#FAILED[@]} > 0)); then
        if [[ -s $RUN_DIR/server.log ]]; then
            log "server log (last 40 lines of $RUN_DIR/server.log)"
            tail -n 40 "$RUN_DIR/server.log" >&2
        fi
        log "FAILED steps: ${FAILED[*]:-(interrupted)}; artifacts in $RUN_DIR"
        ((rc == 0)) && rc=1
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; FAILED+=(interrupted); exit 130' INT TERM

# --- steps ---------------------------------------------------------------------
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# record NAME EXIT_CODE START_TIME COMMAND...: one line of the manifest's steps.
record() {
    local name=$1 rc=$2 t0=$3
    shift 3
    local cmd
    printf -v cmd '%q ' "$@"
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(elapsed "$t0")" "${cmd% }" >>"$STEPS"
    ((rc == 0)) || FAILED+=("$name")
}

# step NAME COMMAND...: run a command, log its output to RUN_DIR/NAME.log, record it.
step() {
    local name=$1
    shift
    if [[ $1 == */* && ! -x $1 ]]; then
        log "$name: $1 is missing (make build builds it from cmd/$(basename "$1"))"
        record "$name" 127 "$(now)" "$@"
        return 127
    fi
    log "$name: $*"
    local t0 rc
    t0=$(now)
    "$@" 2>&1 | tee "$RUN_DIR/$name.log"
    rc=${PIPESTATUS[0]}
    record "$name" "$rc" "$t0" "$@"
    return "$rc"
}

if [[ $SKIP_BUILD != 1 ]]; then
    step build make build BUILD_DIR="$BUILD_DIR" || exit 1
fi
# The server, the load tester and the generator are needed for any report; a
# missing benchmark binary only fails its own step (the report then says
# "not measured").
for bin in weaseldb load_tester report; do
    [[ -x $BIN/$bin ]] || missing+=("$BIN/$bin (built by make build from cmd/$bin)")
done
if ((${#missing[@]} > 0)); then
    printf 'reproduce_threading_report: missing binaries:\n' >&2
    printf '  - %s\n' "${missing[@]}" >&2
    FAILED+=(binaries)
    exit 1
fi

# Many connections need many descriptors. Best effort: the hard limit may be
# lower (containers), then take what it allows.
ulimit -n "$NOFILE" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null ||
    log "warning: could not raise the descriptor limit (continuing)"
NOFILE_NOW=$(ulimit -n)
log "descriptor limit: $NOFILE_NOW"

step cpu_work "$BIN/bench_cpu_work" "$CPU_WORK_ITERATIONS" --json "$RUN_DIR/cpu_work.json"
step cpu_work_target "$BIN/bench_cpu_work" --target "$CPU_WORK_TARGET" --json "$RUN_DIR/cpu_work_target.json"

# The server runs in RUN_DIR, so the config's relative unix socket path
# (weaseldb.sock) lands there. Its TCP interface is rebound to TCP_ADDRESS
# (loopback by default) on TCP_PORT (a free port by default, so runs at the
# same time do not collide): this run only uses the unix socket.
SERVER_CONFIG="$RUN_DIR/server_config.toml"
step server_config "$BIN/report" config --in "$CONFIG" --out "$SERVER_CONFIG" \
    --tcp-address "$TCP_ADDRESS" --tcp-port "$TCP_PORT" || exit 1

log "server: $BIN/weaseldb --config $SERVER_CONFIG (in $RUN_DIR)"
SERVER_T0=$(now)
(cd "$RUN_DIR" && exec "$BIN/weaseldb" --config "$SERVER_CONFIG") >"$RUN_DIR/server.log" 2>&1 &
SERVER_PID=$!

ready=0
for ((i = 0; i < READY_TIMEOUT * 10; i++)); do
    if grep -q 'weaseldb: ready' "$RUN_DIR/server.log" 2>/dev/null || [[ -S $RUN_DIR/weaseldb.sock ]]; then
        ready=1
        break
    fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if ((ready == 0)); then
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        log "server not ready after ${READY_TIMEOUT}s"
    else
        wait "$SERVER_PID"
        log "server exited with status $? before it was ready"
    fi
    record server_start 1 "$SERVER_T0" "$BIN/weaseldb" --config "$SERVER_CONFIG"
    exit 1
fi
log "server ready (pid $SERVER_PID) after $(elapsed "$SERVER_T0") s"

# Server CPU under load: the window skips the first seconds (connections
# opening) and the last one (connections closing).
if ((DURATION >= 10)); then LOAD_DELAY=2; else LOAD_DELAY=1; fi
LOAD_WINDOW=$((DURATION - LOAD_DELAY - 1))
((LOAD_WINDOW >= 1)) || LOAD_WINDOW=1
SAMPLER_T0=$(now)
"$BIN/report" cpu-sample --pid "$SERVER_PID" --phase loaded --delay "$LOAD_DELAY" \
    --seconds "$LOAD_WINDOW" --json "$RUN_DIR/server_cpu_loaded.json" >"$RUN_DIR/cpu_loaded.log" 2>&1 &
SAMPLER_PID=$!

(cd "$RUN_DIR" && step load timeout --signal=INT --kill-after=10 $((DURATION + 60)) \
    "$BIN/load_tester" --unix-socket weaseldb.sock \
    --concurrency "$CONCURRENCY" --requests-per-conn "$REQUESTS_PER_CONN" \
    --connect-threads "$CONNECT_THREADS" --network-threads "$NETWORK_THREADS" \
    --duration "$DURATION" --stats-interval "$STATS_INTERVAL" \
    --json "$RUN_DIR/load.json" --hdr-log "$RUN_DIR/load.hlog")
LOAD_RC=$?
((LOAD_RC == 0)) || FAILED+=(load)

wait "$SAMPLER_PID"
rc=$?
SAMPLER_PID=""
cat "$RUN_DIR/cpu_loaded.log" >&2
record cpu_loaded "$rc" "$SAMPLER_T0" "$BIN/report" cpu-sample --pid "$SERVER_PID" --phase loaded \
    --delay "$LOAD_DELAY" --seconds "$LOAD_WINDOW" --json "$RUN_DIR/server_cpu_loaded.json"

step cpu_idle "$BIN/report" cpu-sample --pid "$SERVER_PID" --phase idle --delay 1 \
    --seconds "$IDLE_SECONDS" --json "$RUN_DIR/server_cpu_idle.json"

# Stop the server and check that it shuts down cleanly (exit 0 on SIGTERM).
kill -TERM "$SERVER_PID" 2>/dev/null
for ((i = 0; i < 100; i++)); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$SERVER_PID" 2>/dev/null; then
    log "server still running 10 s after SIGTERM: killing it"
    kill -KILL "$SERVER_PID" 2>/dev/null
fi
wait "$SERVER_PID"
SERVER_EXIT=$?
SERVER_PID=""
log "server exited with status $SERVER_EXIT"
# The server's step: its whole life, with the exit status SIGTERM gave.
record server "$SERVER_EXIT" "$SERVER_T0" "$BIN/weaseldb" --config "$SERVER_CONFIG"

PIPELINE_ARGS=(--json "$RUN_DIR/bench_pipeline.json")
((QUICK == 1)) && PIPELINE_ARGS=(--quick "${PIPELINE_ARGS[@]}")
if [[ -x $BIN/bench_pipeline ]]; then
    step bench_pipeline timeout --kill-after=10 300 "$BIN/bench_pipeline" "${PIPELINE_ARGS[@]}"
else
    step bench_pipeline "$BIN/bench_pipeline" "${PIPELINE_ARGS[@]}"
fi

# Each wait strategy on shared cores, and on dedicated cores where this machine
# has enough CPUs (about 40 s with the defaults): wait_strategies.json.
if [[ $WAIT_STRATEGIES != 0 ]]; then
    step wait_strategies env SKIP_BUILD=1 BUILD_DIR="$BIN" RUN_DIR="$RUN_DIR" \
        timeout --kill-after=10 300 scripts/compare_wait_strategies.sh
else
    log "wait_strategies: skipped (WAIT_STRATEGIES=0)"
fi

# The server may set its own GOMAXPROCS; it says so in its log.
SERVER_PROCS=$(sed -n 's/^weaseldb: GOMAXPROCS=\([0-9]*\).*/\1/p' "$RUN_DIR/server.log" | head -n 1)
MANIFEST_ARGS=(--run "$RUN_DIR" --config "$SERVER_CONFIG" --config-source "$CONFIG"
    --server-gomaxprocs "$SERVER_PROCS"
    --steps "$STEPS" --duration "$DURATION" --server-exit "$SERVER_EXIT"
    --nofile "$NOFILE_NOW" --started "$STARTED")
((QUICK == 1)) && MANIFEST_ARGS+=(--quick)
"$BIN/report" manifest "${MANIFEST_ARGS[@]}" || { FAILED+=(manifest); exit 1; }

if [[ ! -s $RUN_DIR/load.json ]]; then
    log "no load result ($RUN_DIR/load.json): no report"
    exit 1
fi
mkdir -p "$(dirname "$REPORT_OUT")"
"$BIN/report" --run "$RUN_DIR" --out "$REPORT_OUT" || { FAILED+=(report); exit 1; }
log "report: $REPORT_OUT (artifacts in $RUN_DIR)"
((${#FAILED[@]} == 0)) || exit 1
