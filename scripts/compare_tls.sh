#!/usr/bin/env bash
# HTTPS side by side: load_tester against wrk (HTTP/1.1) and h2load
# (HTTP/2, 10 connections x 10 streams), all over TLS to nginx
# (1 worker, `return 200`, the anchor of docs/anchors.md, with `listen ssl`
# and a self-signed P-256 certificate made at run time), loopback, one
# client thread, 100 connections kept open, unpipelined and 16 deep,
# alternating the contenders (which goes first alternates by round),
# medians over the rounds. nginx runs on the first allowed CPU and either
# client on the second (taskset; PIN=0 leaves them unpinned). TLS 1.3 with
# TLS_AES_128_GCM_SHA256 for both (nginx's ssl_conf_command), so neither
# pays for a heavier cipher.
#
# Usage: scripts/compare_tls.sh [ROUNDS] [SECONDS]   (defaults 5 and 3)
# Prints req/s and client CPU per request (user+system of the client
# process, from the kernel via /usr/bin/time, divided by the requests it
# reports), each round's load_tester/wrk ratios and their medians.
# Needs: go, wrk, h2load (nghttp2-client), nginx (nginx-light), openssl,
# /usr/bin/time, python3, taskset.
set -euo pipefail

ROUNDS=${1:-5}
SECS=${2:-3}
CONNS=100
DEPTH=16
ROOT=$(cd "$(dirname "$0")/.." && pwd)

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
need_tools go wrk h2load nginx openssl /usr/bin/time python3 taskset

WORK=$(mktemp -d)
NGINX_PID=""
cleanup() {
    stop_nginx_anchor
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

(cd "$ROOT" && go build -trimpath -o "$WORK/load_tester" ./cmd/load_tester)
LT=$WORK/load_tester

pin_server_and_client nginx

PORT=$(free_port)
write_nginx_conf "$WORK" "$PORT"
self_signed_cert "$WORK"
nginx_to_tls "$WORK"
write_pipeline_lua "$WORK/pipeline.lua" 16

start_nginx_anchor "$WORK" "$PORT"
URL="https://127.0.0.1:$PORT/ok"

# run_wrk EXTRA...: prints "req_per_s cpu_s requests"
run_wrk() { wrk_cpu "$URL" "$@"; }
# run_lt EXTRA...: the same for load_tester (plus its errors and client-bound flag)
run_lt() {
    local cpu
    cpu=$(cpu_timed "$WORK/out" "$LT" --url "$URL" --ca "$WORK/cert.pem" \
        --concurrency $CONNS --network-threads 1 --duration "$SECS" --json "$WORK/lt.json" --quiet "$@")
    python3 - "$WORK/lt.json" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["requests_per_sec"], sys.argv[2], r["requests"], "errors", r["errors"], "client_bound", r["client_bound"], r["tls"]["version"], sep=" ")
PY
}

# run_h2load: prints "req_per_s cpu_s requests" (10 connections x 10 streams)
run_h2load() {
    local cpu
    cpu=$(cpu_timed "$WORK/out" h2load -t1 -c10 -m10 -D "$SECS" "$URL")
    awk -v t="$cpu" '
        /^finished in/ {r=$4} /^requests:/ {n=$8}
        END {print r, t, n}' "$WORK/out"
}

declare -A RPS CPU LAST LASTCPU
record() { # name line
    local name=$1; shift
    read -r rps cpu n rest <<<"$*"
    local per
    per=$(per_request "$cpu" "$n")
    RPS[$name]+="$rps "; CPU[$name]+="$per "; LAST[$name]=$rps; LASTCPU[$name]=$per
    printf '  %-16s %10.0f req/s  %6s ns CPU/request  %s\n' "$name" "$rps" "$per" "${rest:-}"
}

echo "nginx 1 worker, TLS, on 127.0.0.1:$PORT; $ROUNDS rounds of ${SECS}s, alternating; $(nproc) CPUs, $PINNED; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A PAIR_RPS PAIR_CPU
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    if [ $((round % 2)) = 1 ]; then
        record wrk "$(run_wrk)"; record load_tester "$(run_lt)"
        record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"; record lt_pipe16 "$(run_lt --pipeline $DEPTH)"
    else
        record load_tester "$(run_lt)"; record wrk "$(run_wrk)"
        record lt_pipe16 "$(run_lt --pipeline $DEPTH)"; record wrk_pipe16 "$(run_wrk -s "$WORK/pipeline.lua")"
    fi
    if [ $((round % 2)) = 1 ]; then
        record h2load "$(run_h2load)"; record lt_h2 "$(run_lt --http2 --concurrency 10 --streams 10)"
    else
        record lt_h2 "$(run_lt --http2 --concurrency 10 --streams 10)"; record h2load "$(run_h2load)"
    fi
    PAIR_RPS[h2]+="$(ratio "${LAST[lt_h2]}" "${LAST[h2load]}") "; PAIR_CPU[h2]+="$(ratio "${LASTCPU[lt_h2]}" "${LASTCPU[h2load]}") "
    PAIR_RPS[1]+="$(ratio "${LAST[load_tester]}" "${LAST[wrk]}") "; PAIR_CPU[1]+="$(ratio "${LASTCPU[load_tester]}" "${LASTCPU[wrk]}") "
    PAIR_RPS[16]+="$(ratio "${LAST[lt_pipe16]}" "${LAST[wrk_pipe16]}") "; PAIR_CPU[16]+="$(ratio "${LASTCPU[lt_pipe16]}" "${LASTCPU[wrk_pipe16]}") "
done

echo
echo "medians over $ROUNDS rounds:"
for name in wrk load_tester wrk_pipe16 lt_pipe16 h2load lt_h2; do
    printf '  %-16s %10.0f req/s  %6.0f ns CPU/request\n' "$name" "$(echo "${RPS[$name]}" | median)" "$(echo "${CPU[$name]}" | median)"
done
echo
for d in 1 16 h2; do
    label="wrk, unpipelined"; [ "$d" = 16 ] && label="wrk, pipeline 16"; [ "$d" = h2 ] && label="h2load, h2 10x10"
    echo "load_tester / $label: req/s per round ${PAIR_RPS[$d]}-> median $(echo "${PAIR_RPS[$d]}" | median) (goal >= 1.0);" \
        "CPU per request per round ${PAIR_CPU[$d]}-> median $(echo "${PAIR_CPU[$d]}" | median) (goal <= 1.0)"
done
