#!/usr/bin/env bash
# Reproduce the threading performance report on this machine: build, then
# measure two setups in interleaved rounds (the seed's: 8 I/O threads, and a
# load tester of 2000 connections in all over 10 network threads and 2
# connect threads; and one fitted to this machine's CPUs by the rule in
# docs/report.md), calibrating the spin work once a round; run the pipeline
# micro-benchmarks and the wait-strategy comparison;
# write reports/threading_performance_report.md with its plots, and its
# HTML twin (reports/threading_performance_report.html, plots inline).
#
# Run from anywhere inside the repository:
#   scripts/reproduce_threading_report.sh              # 120 s of load per setup
#   DURATION=20 ROUNDS=5 scripts/reproduce_threading_report.sh  # what `make report` runs
#
# Every knob is an environment variable (defaults in brackets):
#   DURATION [120]            seconds of measured load per setup, split evenly over the rounds
#   ROUNDS [5]                rounds; each calibrates, then runs both setups (the first alternating)
#   WARMUP [1]                seconds of load before each run's measured window, excluded
#   CONCURRENCY [2000]        the seed's connections, in all (over NETWORK_THREADS)
#   REQUESTS_PER_CONN [500]   requests per connection before it reconnects (both setups)
#   CONNECT_THREADS [2]       load-tester connect threads (both setups): 2 as the seed's
#                             script passes, not the 8 its report lists (docs/report.md)
#   NETWORK_THREADS [10]      the seed's load-tester network threads
#   STATS_INTERVAL [1]        seconds between load-tester stats lines
#   CPU_WORK_ITERATIONS [4000] iterations timed by bench_cpu_work each round
#   CPU_WORK_TARGET [740ns]   cost bench_cpu_work --target calibrates each round
#   IDLE_SECONDS [5]          idle CPU window after each setup's last round (at least 5)
#   READY_TIMEOUT [15]        seconds each server may take to be ready
#   QUICK [auto]              1: bench_pipeline --quick (auto: when DURATION < 60)
#   CONFIG [testdata/test_benchmark_config.toml]  the seed's server config
#   NOFILE [65536]            descriptor limit to ask for (best effort)
#   BUILD_DIR [build]  RUN_DIR [reports/runs/<UTC time>, git-ignored]
#   REPORT_OUT [reports/threading_performance_report.md]
#   SKIP_BUILD [0]            1: use the binaries already in BUILD_DIR
#   BUILT_BY                  with SKIP_BUILD=1: what built them, recorded in the manifest (make report sets it)
#   WAIT_STRATEGIES [1]       0: skip the wait-strategy comparison
#                             (scripts/compare_wait_strategies.sh; its WS_* knobs apply)
#   RATE_CURVE [1]            0: skip the throughput-latency curve (scripts/rate_curve.sh)
#   SUSTAIN [0]               seconds: after the rounds, load each setup once more for this
#                             long without a break, the server sampled every SUSTAIN_WINDOW
#                             s (requests, GC pauses, RSS): the report's "Sustained run"
#   SUSTAIN_WINDOW [10]       seconds per sample of the sustained run
#   STAGE_WAITS [0]           1: the servers record how long a batch waits before each
#                             commit stage (commit.pipeline_stage_waits), for the report's
#                             "Where a request waits in the server"; it costs the server
#                             instructions per request, so the rounds' req/s is lower
#   DEDICATED [0]             1: the dedicated-core throughput is what this run is for: stop
#                             before measuring, with the plan and the CPUs it needs, when
#                             this machine cannot give the fitted setup dedicated cores
#
# On a machine with 7 or more CPUs (physical cores), the dedicated table:
#   DEDICATED=1 scripts/reproduce_threading_report.sh
#
# Exits non-zero if any step failed; the report is still written when the
# setups' step recorded its runs, and it names the failed steps.
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
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-1}
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
NOFILE=${NOFILE:-65536}
BUILD_DIR=${BUILD_DIR:-build}
RUN_DIR=${RUN_DIR:-reports/runs/$(date -u +%Y%m%dT%H%M%SZ)}
REPORT_OUT=${REPORT_OUT:-reports/threading_performance_report.md}
SKIP_BUILD=${SKIP_BUILD:-0}
WAIT_STRATEGIES=${WAIT_STRATEGIES:-1}
RATE_CURVE=${RATE_CURVE:-1}
SUSTAIN=${SUSTAIN:-0}
SUSTAIN_WINDOW=${SUSTAIN_WINDOW:-10}
DEDICATED=${DEDICATED:-0}

log() { printf '=== %s\n' "$*" >&2; }
die() { printf 'reproduce_threading_report: %s\n' "$*" >&2; exit 1; }

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
for knob in DURATION ROUNDS WARMUP CONCURRENCY REQUESTS_PER_CONN CONNECT_THREADS NETWORK_THREADS \
    STATS_INTERVAL CPU_WORK_ITERATIONS IDLE_SECONDS READY_TIMEOUT SUSTAIN SUSTAIN_WINDOW; do
    is_uint "${!knob}" || die "$knob must be a non-negative integer, got '${!knob}'"
done
((ROUNDS >= 1)) || die "ROUNDS must be at least 1"
RUN_SECONDS=$((DURATION / ROUNDS))
((RUN_SECONDS >= 2)) || die "DURATION must give each of the $ROUNDS rounds at least 2 s of load (DURATION ≥ $((2 * ROUNDS)))"
((SUSTAIN == 0 || (SUSTAIN_WINDOW >= 1 && SUSTAIN_WINDOW <= SUSTAIN))) ||
    die "SUSTAIN_WINDOW must be between 1 and SUSTAIN ($SUSTAIN), got $SUSTAIN_WINDOW"
[[ $DEDICATED == 0 || $DEDICATED == 1 ]] || die "DEDICATED must be 0 or 1, got '$DEDICATED'"
((IDLE_SECONDS >= 5)) || die "IDLE_SECONDS must be at least 5 (idle CPU is measured for at least 5 s)"
if [[ $QUICK == auto ]]; then
    if ((DURATION < 60)); then QUICK=1; else QUICK=0; fi
fi

# --- prerequisites -----------------------------------------------------------
# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
missing=()
for tool in timeout date tee; do
    have_tool "$tool" || missing+=("$tool (coreutils)")
done
if [[ $SKIP_BUILD != 1 ]]; then
    have_tool make || missing+=("make (to build the binaries; or SKIP_BUILD=1 with binaries in $BUILD_DIR)")
    have_tool go || missing+=("go 1.26 (https://go.dev/dl; to build the binaries)")
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

# Every server is started, supervised and stopped by `report setups` (through
# internal/serverproc), which stops what it started on every exit path but
# SIGKILL, Ctrl-C and SIGTERM included; this script only reports what failed.
on_exit() {
    local rc=$?
    trap - EXIT INT TERM
    if ((rc != 0)) || ((${#FAILED[@]} > 0)); then
        log "FAILED steps: ${FAILED[*]:-(interrupted)}; artifacts in $RUN_DIR"
        ((rc == 0)) && rc=1
    fi
    exit "$rc"
}
trap on_exit EXIT
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
    # tee ignores Ctrl-C and SIGTERM: it must outlive the command, which on
    # an interrupt still stops its servers and says what it kept.
    if [[ -t 1 && -x $BIN/report ]]; then
        # On a terminal the log takes the lines and the terminal shows the
        # latest one rewritten in place, with the time run and, with
        # STEP_ESTIMATE (seconds), about how long is left; the tail of the
        # log is shown if the step fails. (A tool's own progress line cannot
        # reach the terminal through tee.)
        "$@" 2>&1 | (trap '' INT TERM; exec tee "$RUN_DIR/$name.log") |
            (trap '' INT TERM; exec "$BIN/report" progress --total "${STEP_ESTIMATE:-0}")
        rc=${PIPESTATUS[0]}
        ((rc == 0)) || tail -n 5 "$RUN_DIR/$name.log"
    else
        "$@" 2>&1 | (trap '' INT TERM; exec tee "$RUN_DIR/$name.log")
        rc=${PIPESTATUS[0]}
    fi
    record "$name" "$rc" "$t0" "$@"
    return "$rc"
}

if [[ $SKIP_BUILD != 1 ]]; then
    BUILD_COMMAND="make build BUILD_DIR=$BUILD_DIR"
    step build make build BUILD_DIR="$BUILD_DIR" || exit 1
else
    # BUILT_BY: what built them, where a caller knows (make report's build).
    BUILD_COMMAND=${BUILT_BY:-"none (SKIP_BUILD=1: the binaries already in $BUILD_DIR)"}
fi
# The source the binaries were built from, for the manifest (none outside git).
REVISION=$(git rev-parse HEAD 2>/dev/null) || REVISION=""
DESCRIBE=$(git describe --always --dirty 2>/dev/null) || DESCRIBE=""
DIRTY=false
[[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && DIRTY=true
# The server, the load tester, the spin-work timer and the generator are
# needed for any report; a missing bench_pipeline only fails its own step
# (the report then says "not measured").
for bin in weaseldb load_tester bench_cpu_work report; do
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

# DEDICATED=1: a run for the dedicated-core table stops here, before any
# measurement, on a machine that cannot give the fitted setup dedicated
# cores; `report setups` prints the plan and what it needs.
SETUPS_EXTRA=()
if [[ $DEDICATED == 1 ]]; then
    "$BIN/report" setups --config "$CONFIG" --plan --require-dedicated >&2 || {
        FAILED+=(dedicated)
        exit 1
    }
    SETUPS_EXTRA+=(--require-dedicated)
fi
((SUSTAIN > 0)) && SETUPS_EXTRA+=(--sustain "$SUSTAIN" --sustain-window "$SUSTAIN_WINDOW")
[[ ${STAGE_WAITS:-0} == 1 ]] && SETUPS_EXTRA+=(--stage-waits)

# Both setups, ROUNDS rounds of RUN_SECONDS each, calibration once a round:
# setups.json and rounds/ (docs/report.md). A failed run is recorded there and
# makes this step fail; the report is written from what was measured.
# About how long it takes: each round runs both setups, each a warm-up, the
# measured load, the idle check and about 2 s to start and calibrate.
# The sustained run (SUSTAIN > 0) adds each setup's warm-up and SUSTAIN s.
SETUPS_ESTIMATE=$(awk -v r="$ROUNDS" -v w="$WARMUP" -v d="$RUN_SECONDS" -v i="$IDLE_SECONDS" -v s="$SUSTAIN" \
    'BEGIN { printf "%.0f", 2 * r * (w + d + i + 2) + (s > 0 ? 2 * (w + s + 2) : 0) }')
STEP_ESTIMATE=$SETUPS_ESTIMATE step setups "$BIN/report" setups --run "$RUN_DIR" --bin "$BIN" --config "$CONFIG" \
    --rounds "$ROUNDS" --duration "$RUN_SECONDS" --warmup "$WARMUP" --idle "$IDLE_SECONDS" \
    --concurrency "$CONCURRENCY" --requests-per-conn "$REQUESTS_PER_CONN" \
    --connect-threads "$CONNECT_THREADS" --network-threads "$NETWORK_THREADS" \
    --stats-interval "$STATS_INTERVAL" --work-iterations "$CPU_WORK_ITERATIONS" \
    --work-target "$CPU_WORK_TARGET" --ready-timeout "${READY_TIMEOUT}s" "${SETUPS_EXTRA[@]}"

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

# The fitted setup's throughput-latency curve and the highest rate meeting
# a p99 objective (scripts/rate_curve.sh; about a minute): rate_curve.json,
# knee.json.
if [[ $RATE_CURVE != 0 ]]; then
    step rate_curve env RUN_DIR="$RUN_DIR" BUILD_DIR="$BIN" CONFIG="$CONFIG" \
        timeout --kill-after=10 180 scripts/rate_curve.sh
else
    log "rate_curve: skipped (RATE_CURVE=0)"
fi

if [[ ! -s $RUN_DIR/setups.json ]]; then
    log "no setups.json in $RUN_DIR: no report"
    exit 1
fi
MANIFEST_ARGS=(--run "$RUN_DIR" --config "$RUN_DIR/setup_seed.toml" --config-source "$CONFIG"
    --steps "$STEPS" --duration "$RUN_SECONDS" --nofile "$NOFILE_NOW" --started "$STARTED"
    --root "$ROOT" --build-command "$BUILD_COMMAND" --dirty="$DIRTY")
[[ -n $REVISION ]] && MANIFEST_ARGS+=(--revision "$REVISION" --describe "$DESCRIBE")
((QUICK == 1)) && MANIFEST_ARGS+=(--quick)
"$BIN/report" manifest "${MANIFEST_ARGS[@]}" || { FAILED+=(manifest); exit 1; }

mkdir -p "$(dirname "$REPORT_OUT")"
"$BIN/report" --run "$RUN_DIR" --out "$REPORT_OUT" --html || { FAILED+=(report); exit 1; }
log "report: $REPORT_OUT and its HTML twin ${REPORT_OUT%.md}.html (artifacts in $RUN_DIR)"
((${#FAILED[@]} == 0)) || exit 1
