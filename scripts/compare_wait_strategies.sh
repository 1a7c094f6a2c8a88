#!/usr/bin/env bash
# Compare the commit pipeline's three wait strategies on shared cores and, where
# this machine has enough CPUs, on dedicated cores: bench_pipeline's
# wait_strategy family and its latency family (hand-off latency, dedicated
# cores from 2 CPUs), and weaseldb under load_tester per strategy, closed-loop
# and then open-loop at fractions of its own closed-loop req/s. Prints a
# table and writes RUN_DIR/wait_strategies.json (rendered by the threading
# report). Dedicated runs the machine has too few CPUs for are listed as
# skipped with the count they need; nothing is estimated. See
# docs/wait_strategies.md.
#
#   scripts/compare_wait_strategies.sh                 # about 40 s on 2 cores
#   WS_CORES=shared WS_DURATION=10 scripts/compare_wait_strategies.sh
#
# Knobs (environment, defaults in brackets):
#   WS_DURATION [5]          seconds of measured load per server run
#   WS_WARMUP [1]            seconds of load before it, excluded
#   WS_IDLE [3]              seconds of idle CPU measured after the load
#   WS_IDLE_CONNS [100]      keep-alive connections held open while idle
#   WS_CONCURRENCY [100]     load_tester connections
#   WS_LOAD_THREADS [1]      load_tester network threads (a dedicated CPU each)
#   WS_IO_THREADS [1]        server io_threads
#   WS_RELEASE_THREADS [1]   server pipeline_release_threads
#   WS_OK_ITERATIONS [0]     server ok_resolve_iterations
#   WS_STRATEGIES [WaitIfStageEmpty,WaitIfUpstreamIdle,Never]
#   WS_CORES [shared,dedicated]
#   WS_RATE_FRACTIONS [0.25,0.5,0.75]  open-loop steps per server run, fractions of its req/s; none: skip
#   WS_RATE_STEP [2]         seconds of measured load per open-loop step
#   WS_LATENCY [1]           0: skip bench_pipeline's latency family
#   WS_LATENCY_SAMPLES [0]   its --latency-samples (0: bench_pipeline's default)
#   BUILD_DIR [build]  RUN_DIR [reports/runs/ws-<UTC time>, git-ignored]
#   SKIP_BUILD [0]           1: use the binaries already in BUILD_DIR
#   WS_PLAN_CPUS []          a CPU list (e.g. 0-15): print the plan for that set and run nothing
set -uo pipefail

if (($# > 0)); then
    if [[ $1 == -h || $1 == --help ]]; then
        sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
        exit 0
    fi
    echo "compare_wait_strategies: takes no arguments (knobs are environment variables; see --help)" >&2
    exit 2
fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
BUILD_DIR=${BUILD_DIR:-build}
RUN_DIR=${RUN_DIR:-reports/runs/ws-$(date -u +%Y%m%dT%H%M%SZ)}
SKIP_BUILD=${SKIP_BUILD:-0}

if [[ $SKIP_BUILD != 1 ]]; then
    make build BUILD_DIR="$BUILD_DIR" >&2 || { echo "compare_wait_strategies: make build failed" >&2; exit 1; }
fi
BIN=$(cd "$BUILD_DIR" 2>/dev/null && pwd) || { echo "compare_wait_strategies: no $BUILD_DIR (make build)" >&2; exit 1; }
for bin in report weaseldb load_tester bench_pipeline; do
    [[ -x $BIN/$bin ]] || { echo "compare_wait_strategies: $BIN/$bin missing (make build builds it from cmd/$bin)" >&2; exit 1; }
done

ARGS=(--bin "$BIN"
    --duration "${WS_DURATION:-5}" --warmup "${WS_WARMUP:-1}" --idle "${WS_IDLE:-3}"
    --idle-conns "${WS_IDLE_CONNS:-100}" --concurrency "${WS_CONCURRENCY:-100}"
    --load-threads "${WS_LOAD_THREADS:-1}" --io-threads "${WS_IO_THREADS:-1}"
    --release-threads "${WS_RELEASE_THREADS:-1}" --ok-iterations "${WS_OK_ITERATIONS:-0}"
    --strategies "${WS_STRATEGIES:-WaitIfStageEmpty,WaitIfUpstreamIdle,Never}"
    --cores "${WS_CORES:-shared,dedicated}"
    --rate-fractions "${WS_RATE_FRACTIONS:-0.25,0.5,0.75}" --rate-step-duration "${WS_RATE_STEP:-2}"
    --latency="$([[ ${WS_LATENCY:-1} == 0 ]] && echo false || echo true)" --latency-samples "${WS_LATENCY_SAMPLES:-0}")
if [[ -n ${WS_PLAN_CPUS:-} ]]; then
    exec "$BIN/report" wait-strategies "${ARGS[@]}" --allowed-cpus "$WS_PLAN_CPUS"
fi
mkdir -p "$RUN_DIR" || exit 1
"$BIN/report" wait-strategies "${ARGS[@]}" --run "$RUN_DIR" || exit 1
echo "wait_strategies: $RUN_DIR/wait_strategies.json" >&2
