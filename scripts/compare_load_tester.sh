#!/usr/bin/env bash
# Side-by-side comparison of build/load_tester with wrk against nginx
# (1 worker, `return 200`), the anchor of docs/anchors.md: loopback TCP, one client
# thread, 100 connections, unpipelined and 16-deep pipelined, alternating the
# contenders (A B A B ...), medians over the rounds.
#
# Usage: scripts/compare_load_tester.sh [ROUNDS] [SECONDS]   (defaults 3 and 4)
# PIN=1 (the default on 2+ CPUs) runs nginx on the first allowed CPU and either
# client on the second, the same for both, so the scheduler's placement is not
# part of the comparison; PIN=0 leaves them unpinned.
# Needs: wrk, nginx, /usr/bin/time, build/load_tester (make build).
# Prints req/s and client CPU per request (user+system of the client process,
# from the kernel via /usr/bin/time, divided by the requests it reports).
set -euo pipefail

ROUNDS=${1:-3}
SECS=${2:-4}
CONNS=100
DEPTH=16
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LT=${LOAD_TESTER:-$ROOT/build/load_tester}

# shellcheck source=lib/tools.sh
. "$ROOT/scripts/lib/tools.sh"
# shellcheck source=lib/cpus.sh
. "$ROOT/scripts/lib/cpus.sh"
# shellcheck source=lib/proc.sh
. "$ROOT/scripts/lib/proc.sh"
# shellcheck source=lib/nginx_anchor.sh
. "$ROOT/scripts/lib/nginx_anchor.sh"
# shellcheck source=lib/cputime.sh
. "$ROOT/scripts/lib/cputime.sh"
# shellcheck source=lib/wrk.sh
. "$ROOT/scripts/lib/wrk.sh"
# shellcheck source=lib/stats.sh
. "$ROOT/scripts/lib/stats.sh"
need_tools wrk nginx /usr/bin/time python3
[ -x "$LT" ] || { echo "compare_load_tester: $LT not built (make build)" >&2; exit 1; }

pin_server_and_client nginx

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    stop_nginx_anchor
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PORT=$(free_port)
write_nginx_conf "$WORK" "$PORT"
write_pipeline_lua "$WORK/pipeline.lua" 16

start_nginx_anchor "$WORK" "$PORT"
URL="http://127.0.0.1:$PORT/ok"

# run_wrk EXTRA...: prints "req_per_s cpu_s requests"
run_wrk() { wrk_cpu "$URL" "$@"; }
# run_lt EXTRA...: same for load_tester
run_lt() {
    local cpu
    cpu=$(cpu_timed "$WORK/out" "$LT" --port "$PORT" --path /ok --concurrency $CONNS \
        --network-threads 1 --duration "$SECS" --json "$WORK/lt.json" --quiet "$@")
    python3 - "$WORK/lt.json" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["requests_per_sec"], sys.argv[2], r["requests"], r["errors"], r["client_bound"], sep=" ")
PY
}

declare -A RPS CPU LAST
record() { # name line
    local name=$1; shift
    read -r rps cpu n rest <<<"$*"
    RPS[$name]+="$rps "
    LAST[$name]=$rps
    CPU[$name]+="$(per_request "$cpu" "$n") "
    printf '  %-16s %10.0f req/s  %6.0f ns CPU/request  %s\n' "$name" "$rps" "$(per_request "$cpu" "$n" %.6f)" "$rest"
}

echo "nginx 1 worker on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s, alternating; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
PAIRED=""; PAIRED_PIPE=""
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    # Who goes first alternates by round, so neither client always inherits
    # nginx just after the other's 100 connections closed.
    if [ $((round % 2)) = 1 ]; then
        record wrk "$(run_wrk)"
        record load_tester "$(run_lt)"
        record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"
        record lt_pipe16 "$(run_lt --pipeline $DEPTH)"
    else
        record load_tester "$(run_lt)"
        record wrk "$(run_wrk)"
        record lt_pipe16 "$(run_lt --pipeline $DEPTH)"
        record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"
    fi
    PAIRED+="$(ratio "${LAST[load_tester]}" "${LAST[wrk]}" %.6g) "
    PAIRED_PIPE+="$(ratio "${LAST[lt_pipe16]}" "${LAST[wrk_pipe16]}" %.6g) "
done

echo
echo "medians over $ROUNDS rounds:"
for name in wrk load_tester wrk_pipe16 lt_pipe16; do
    printf '  %-16s %10.0f req/s  %6.0f ns CPU/request\n' "$name" "$(echo "${RPS[$name]}" | median)" "$(echo "${CPU[$name]}" | median)"
done
W=$(echo "${RPS[wrk]}" | median); L=$(echo "${RPS[load_tester]}" | median)
WC=$(echo "${CPU[wrk]}" | median); LC=$(echo "${CPU[load_tester]}" | median)
WP=$(echo "${RPS[wrk_pipe16]}" | median); LP=$(echo "${RPS[lt_pipe16]}" | median)
echo
echo "load_tester / wrk, unpipelined:  req/s $(ratio "$L" "$W" %.2f)x (bar >= 1.0), CPU per request $(ratio "$LC" "$WC" %.2f)x (bar <= 1.0)"
echo "load_tester / wrk, pipeline $DEPTH:   req/s $(ratio "$LP" "$WP" %.2f)x (bar >= 1.0)"
# Each round's two runs are neighbours in time: their ratio cancels the drift
# of the machine between rounds, which the ratio of medians does not.
wins() { tr ' ' '\n' | grep -v '^$' | awk '$1 >= 1 {w++} END {printf "%d of %d", w, NR}'; }
echo "per-round ratios, unpipelined: $PAIRED-> median $(echo "$PAIRED" | median | xargs printf '%.3f'), load_tester ahead in $(echo "$PAIRED" | wins) rounds"
echo "per-round ratios, pipeline $DEPTH:  $PAIRED_PIPE-> median $(echo "$PAIRED_PIPE" | median | xargs printf '%.3f'), load_tester ahead in $(echo "$PAIRED_PIPE" | wins) rounds"
