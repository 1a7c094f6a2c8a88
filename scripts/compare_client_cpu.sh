#!/usr/bin/env bash
# Client CPU per request of load_tester, before and after a change: builds
# the load_tester of a git ref ("before") and of the working tree ("after"),
# and drives nginx (1 worker, `return 200`, the anchor of docs/anchors.md) with
# each, in interleaved rounds (which goes first alternates by round). nginx
# runs on the first allowed CPU and the clients on the second (taskset), so
# placement is not part of the comparison.
#
# HTTP/1.1 (the default): each build unpipelined and 16 deep on 100
# connections; prints each run, each round's after/before ratio of CPU per
# request, and the median ratio per mode.
#
# --http2: nginx listens for h2c, and each round runs, with --concurrency
# 10 --streams 10,
#   before/static    the one static request (its header block encoded once)
#   after/static     the same, with the working tree's build
#   after/rendered   the working tree's build with placeholders in the path
#                    and a header (--path '/ok?s={{seq}}' --header
#                    'X-Id: {{uuid}}'): every request rendered and its
#                    header block encoded
# and prints each run, each round's after/before ratio (static) and
# rendered/static ratio (after), and their medians.
#
# Usage: scripts/compare_client_cpu.sh [--http2] [BEFORE_REF] [ROUNDS] [SECONDS]
#   BEFORE_REF  git ref of the "before" build (default e3c9740, the commit
#               before the accounting of issue 12; with --http2 e0df803,
#               before HTTP/2 rendered requests)
#   ROUNDS      interleaved rounds (default 10; with --http2 6)
#   SECONDS     length of each run (default 4; with --http2 3)
# PIN=0 leaves nginx and the clients to the scheduler.
# CPU per request: user+system CPU of the client process (/usr/bin/time,
# from the kernel's accounting) divided by the responses it reports.
# Needs: go, git, nginx (with the http2 module for --http2: nginx-light has
# it), /usr/bin/time, python3, taskset.
set -euo pipefail

HTTP2=0
if [ "${1:-}" = --http2 ]; then HTTP2=1; shift; fi
case ${1:-} in -*) echo "compare_client_cpu: unknown option $1 (usage: [--http2] [BEFORE_REF] [ROUNDS] [SECONDS])" >&2; exit 2 ;; esac
if [ $HTTP2 = 1 ]; then
    REF=${1:-e0df803}; ROUNDS=${2:-6}; SECS=${3:-3}
else
    REF=${1:-e3c9740}; ROUNDS=${2:-10}; SECS=${3:-4}
fi
CONNS=100
DEPTH=16
ROOT=$(cd "$(dirname "$0")/.." && pwd)

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/build_ref.sh
. "$ROOT/scripts/lib/build_ref.sh"
# shellcheck source=lib/stats.sh
. "$ROOT/scripts/lib/stats.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
# shellcheck source=lib/nginx_anchor.sh
. "$ROOT/scripts/lib/nginx_anchor.sh"
# shellcheck source=lib/cputime.sh
. "$ROOT/scripts/lib/cputime.sh"
need_tools go git nginx /usr/bin/time python3 taskset

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    stop_nginx_anchor
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# The "before" build from the ref's tree, the "after" build from the
# working tree.
build_at_ref "$REF" "$WORK/before-src" -trimpath -o "$WORK/lt_before" ./cmd/load_tester
(cd "$ROOT" && go build -trimpath -o "$WORK/lt_after" ./cmd/load_tester)
echo "before: $(describe_ref "$REF")"
echo "after:  $(describe_tree loadtester cmd/load_tester)"

pin_server_and_client nginx

PORT=$(free_port)
write_nginx_conf "$WORK" "$PORT"
[ $HTTP2 = 0 ] || nginx_to_h2c "$WORK"
start_nginx_anchor "$WORK" "$PORT"

# run BUILD ARGS...: load_tester of BUILD with ARGS on one network thread;
# prints "cpu_ns_per_request req_per_s requests"
run() {
    local bin=$WORK/lt_$1 cpu; shift
    cpu=$(cpu_timed "$WORK/out" "$bin" --port "$PORT" --path /ok \
        --network-threads 1 --duration "$SECS" "$@" \
        --json "$WORK/r.json" --quiet)
    python3 - "$WORK/r.json" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["requests"]
print(f"{float(sys.argv[2]) * 1e9 / n if n else 0:.0f} {r['requests_per_sec']:.0f} {n}")
PY
}

# http1_rounds: each build unpipelined and DEPTH deep, the median
# after/before ratio per mode.
http1_rounds() {
    local round depth build cpu rps n order
    declare -A RATIOS CPU
    echo "nginx 1 worker on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s per build and mode; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
    for round in $(seq "$ROUNDS"); do
        echo "round $round"
        for depth in 1 $DEPTH; do
            order=(before after)
            [ $((round % 2)) = 0 ] && order=(after before)
            for build in "${order[@]}"; do
                read -r cpu rps n < <(run "$build" --concurrency $CONNS --pipeline "$depth")
                CPU[$build]=$cpu
                printf '  %-6s pipeline %-3s %8s ns CPU/request  %9s req/s  %s responses\n' "$build" "$depth" "$cpu" "$rps" "$n"
            done
            RATIOS[$depth]+="$(ratio "${CPU[after]}" "${CPU[before]}" %.9f) "
        done
    done
    echo
    for depth in 1 $DEPTH; do
        label="pipeline $depth"; [ "$depth" = 1 ] && label=unpipelined
        printf 'after/before CPU per request, %-12s: rounds %s (bar <= 1.03)\n' "$label" "$(rounds_line "${RATIOS[$depth]}")"
    done
}

# http2_rounds: before/static, after/static and after/rendered over h2c,
# the median after/before (static) and rendered/static (after) ratios.
http2_rounds() {
    local round run_ build mode cpu rps n order extra updown="" render=""
    declare -A CPU
    echo "nginx 1 worker, h2c on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s per run; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
    for round in $(seq "$ROUNDS"); do
        echo "round $round"
        order=(before/static after/static after/rendered)
        [ $((round % 2)) = 0 ] && order=(after/rendered after/static before/static)
        for run_ in "${order[@]}"; do
            build=${run_%/*} mode=${run_#*/} extra=()
            [ "$mode" = rendered ] && extra=(--path '/ok?s={{seq}}' --header 'X-Id: {{uuid}}')
            read -r cpu rps n < <(run "$build" --http2 --concurrency 10 --streams 10 "${extra[@]}")
            CPU[$run_]=$cpu
            printf '  %-16s %8s ns CPU/request  %9s req/s  %s responses\n' "$run_" "$cpu" "$rps" "$n"
        done
        updown+="$(ratio "${CPU[after/static]}" "${CPU[before/static]}" %.9f) "
        render+="$(ratio "${CPU[after/rendered]}" "${CPU[after/static]}" %.9f) "
    done
    echo
    echo "after/before, static h2c   : rounds $(rounds_line "$updown")"
    echo "rendered/static, after     : rounds $(rounds_line "$render")"
}

if [ $HTTP2 = 1 ]; then http2_rounds; else http1_rounds; fi
